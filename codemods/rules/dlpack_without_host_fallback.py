"""JAX004: reads of a JAX array's memory that a platform of the target refuses."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, NamedTuple

from jax_codemod.analysis import api, platforms
from jax_codemod.analysis import values as v
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.expected_errors import ERROR_BASES
from jax_codemod.analysis.guards import callers_catch, caught
from jax_codemod.analysis.scopes import walk
from jax_codemod.rule import Finding, FixSafety, Rule
from jax_codemod.rules._shared import ABSENT, OURS, helper_state, insert_helper

if TYPE_CHECKING:
    import libcst as cst

# Consumer -> how it reads a JAX array's memory (``analysis.platforms``: DLPack, after asking
# ``__dlpack_device__`` or not, or the buffer protocol).
READERS: dict[str, str] = api.table("reads")
HELPER = platforms.EXPORTABLE_HELPER
HELPER_MODULE_OPTION = "helper-module"


class Read(NamedTuple):
    """A read of an array's memory: the call, the array (or tree, for ``leaves``), how it is read,
    the reader's qualified name, and how the source spells it (for messages)."""

    call: ast.Call
    array: ast.AST
    reads: str
    consumer: str
    spelled: str
    leaves: bool = False
    position: int = 0  # which argument is the array (cffi's ffi.from_buffer("float[]", x): 1)


_WORDS = (b"dlpack", b"memoryview", b"frombuffer", b"from_buffer", b"bytes", b"torch")


class DlpackWithoutHostFallback(Rule):
    """## What it does
    Finds reads of a JAX array's memory that a platform of the target refuses: DLPack
    exports (`torch.from_dlpack(x)`, `torch.utils.dlpack.from_dlpack(x)`, `np.from_dlpack(x)`,
    `cupy.from_dlpack(x)`, `x.__dlpack__()`) and the buffer protocol (`memoryview(x)`,
    `np.frombuffer(x)`, `torch.frombuffer(x)`), where the target platforms
    (`target-platforms`: from the project's requirements, `jax[tpu]` or `libtpu` for a TPU)
    include a TPU or a plugin backend. It hands the consumer `ensure_exportable(x)` instead:
    the array itself where JAX exports its memory (zero-copy on a CPU or GPU), a copy on
    JAX's CPU device where it does not. A project whose target is CPU and GPU only (the
    default) gets no finding.

    ## Why is this bad?
    A TPU's memory has no DLPack export and no buffer protocol. On a TPU,
    `torch.from_dlpack(x)` raises `BufferError: __dlpack__ device only supported for CPU
    and GPU, got platform: tpu`; `np.from_dlpack(x)` and `x.__dlpack__()` raise
    `JaxRuntimeError: INVALID_ARGUMENT: Device TPU_0(...) cannot be used as a DLPack
    device.` (a `RuntimeError`, which `except BufferError` does not catch); `memoryview(x)`
    raises `BufferError: INVALID_ARGUMENT: Python buffer protocol is only defined for CPU
    buffers.` A plugin backend's `__dlpack_device__` raises `BufferError: __dlpack__ device
    only supported for CPU, GPU and TPU pinned host, got platform: ...`, and its exports fail
    as a TPU's do.

    ## Example
    ```python
    import jax.numpy as jnp
    import numpy as np
    import torch

    x = jnp.arange(6.0)
    t = torch.from_dlpack(x)
    host = np.from_dlpack(x)
    ```

    ## Use instead
    ```python
    import jax.numpy as jnp
    import numpy as np
    import torch


    def ensure_exportable(x):
        \"\"\"``x`` where JAX exports its memory (CPU and GPU arrays); elsewhere a copy on JAX's CPU
        device (added by codemod).
        ...
        \"\"\"
        dlpack_device = getattr(x, "__dlpack_device__", None)
        if dlpack_device is None:
            return x
        try:
            dlpack_device()
        except BufferError:
            import jax

            return jax.device_put(x, jax.devices("cpu")[0])
        return x


    x = jnp.arange(6.0)
    t = torch.from_dlpack(ensure_exportable(x))
    host = np.from_dlpack(ensure_exportable(x))
    ```

    ## Fix safety
    Safe. Where JAX exports the array's memory (a CPU or GPU array on one device) the helper
    returns the array itself: the export is the zero-copy one it was, sharing memory with the
    JAX array. Elsewhere the old code raised; there the consumer gets the same values and dtype
    (`bfloat16` included) from a copy on JAX's CPU device, which no longer shares memory with
    the TPU array. The helper asks `__dlpack_device__`, the one question JAX answers with
    `BufferError` on every platform without an export, and catches nothing else. The copy needs
    JAX's CPU backend, which a TPU host has unless `JAX_PLATFORMS` leaves it out. Only
    arguments known to be JAX arrays are touched; reads already inside a `try` whose handlers
    catch what each target platform raises there (or in a helper whose every call,
    project-wide, sits in such a `try`), `np.from_dlpack(x, device=...)`, and tests
    that run only on DLPack platforms (`@jtu.run_on_devices("cpu")`) are left alone. With
    `helper-module` set, the helper is imported from that module instead of defined in each
    file. A module that binds `ensure_exportable` to something else gets the finding without
    a fix.
    """

    CODE = "JAX004"
    RAISES = ("BufferError", "JaxRuntimeError")
    NAME = "dlpack-without-host-fallback"
    DEFAULT_ENABLED = True
    FIX_SAFETY = FixSafety.SAFE
    TRIGGERS = _WORDS
    REQUIRES = (b"jax",)

    @property
    def targets(self) -> frozenset[str]:
        return platforms.target(self.options)

    def prefilter(self, source: bytes) -> bool:
        # Nothing to find unless a platform of the target refuses exports: a CPU/GPU project pays
        # for this test alone.
        return (
            platforms.refuses_exports(self.targets)
            and b"jax" in source
            and any(word in source for word in _WORDS)
        )

    def check(self, ctx: FileContext) -> list[Finding]:
        targets = self.targets
        if not platforms.refuses_exports(targets):
            return []
        state = helper_state(ctx, HELPER, platforms.EXPORTABLE_SOURCE)
        findings = []
        for read in _reads(ctx):
            if _is_helper_call(read.array) or not _may_be_a_jax_array(ctx, read):
                continue
            refused = platforms.refusals(targets, read.reads)
            if not refused or _guarded(ctx, read.call, refused) or _runs_only_on_dlpack_platforms(ctx, read.call):
                continue
            findings.append(self._finding(ctx, read, refused, state))
        return findings

    def _finding(self, ctx, read: Read, refused, state: str) -> Finding:
        first = refused[0]
        where = " and ".join(dict.fromkeys(_platform_name(r.platform) for r in refused))
        what = "a JAX array"
        if ctx.analysis.value_of(read.array).kind == v.UNKNOWN and not read.consumer.endswith(".to_dlpack"):
            what = f"`{ctx.source_of(read.array)}`, if it is a JAX array,"
        message = f"{read.spelled} of {what} raises on {where}: {first.error}: {first.message}"
        raises = tuple(dict.fromkeys(r.error for r in refused))
        data = ("leaves",) if read.leaves else ("argument", read.position)
        if state not in (ABSENT, OURS) and not self.options.get(HELPER_MODULE_OPTION):
            return self.finding(
                ctx, read.call, f"{message}; `{HELPER}` is already taken in this module, so copy the array to "
                "JAX's CPU device by hand where the platform has no export", FixSafety.NONE, raises=raises,
            )
        return self.finding(
            ctx, read.call, f"{message}; hand it `{HELPER}(...)`: the array itself on CPU and GPU, a copy on "
            "JAX's CPU device elsewhere", FixSafety.SAFE, raises=raises, data=data,
        )

    def rewrite(self, original, updated, finding: Finding, fixer):
        import libcst as cst

        if _module_binds_helper(fixer.ctx.tree) is None:
            module = self.options.get(HELPER_MODULE_OPTION)
            if module:
                fixer.add_import(module, HELPER)
            else:
                fixer.state[HELPER] = True

        def wrap(expression):
            return cst.Call(func=cst.Name(HELPER), args=[cst.Arg(expression.with_changes(lpar=[], rpar=[]))])

        func = updated.func
        if finding.data and finding.data[0] == "leaves":  # tree_map(reader, tree(leaves mapped first))
            tree = updated.args[1]
            mapped = cst.Call(func=func, args=[cst.Arg(cst.Name(HELPER), comma=cst.Comma(
                whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(tree.value)])
            return updated.with_changes(args=[updated.args[0], tree.with_changes(value=mapped)])
        if isinstance(func, cst.Attribute) and func.attr.value == "__dlpack__":
            return updated.with_changes(func=func.with_changes(value=wrap(func.value)))
        position = finding.data[1] if finding.data else 0
        args = list(updated.args)
        args[position] = args[position].with_changes(value=wrap(args[position].value))
        return updated.with_changes(args=args)

    def finalize(self, module: cst.Module, fixer) -> cst.Module:
        if not fixer.state.get(HELPER):
            return module
        return insert_helper(module, HELPER, platforms.EXPORTABLE_SOURCE)


def _platform_name(platform: str) -> str:
    return platform.upper() if platform == platforms.TPU else f"the `{platform}` backend"


def _reads(ctx: FileContext):
    """(call, the array it reads, how, the reader's name, how the source spells it) for each read of an array's
    memory in the file: a consumer called with it, or its ``__dlpack__()`` without ``dl_device``."""
    analysis = ctx.analysis
    calls, aliases = _calls(ctx.tree)
    for node in calls:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "__dlpack__":
            if not node.args and not any(k.arg in ("dl_device", None) for k in node.keywords):
                yield Read(node, func.value, platforms.DLPACK, "__dlpack__", f"`{ctx.source_of(func)}()`")
            continue
        builtin_map = isinstance(func, ast.Name) and func.id == "map" and func.id not in aliases
        if len(node.args) == 2 and not node.keywords and (builtin_map or analysis.qualname(func) in api.TREE_MAPS):
            consumer = analysis.qualname(node.args[0])
            if consumer in READERS:  # jax.tree.map(torch.from_dlpack, tree): every leaf is read
                spelled = f"`{ctx.source_of(node.args[0])}` over the leaves"
                yield Read(node, node.args[1], READERS[consumer], consumer, spelled, leaves=True)
            continue
        if isinstance(func, ast.Attribute) and func.attr in _BUFFER_METHODS and len(node.args) <= 2:
            # ctypes' `(c_float * 4).from_buffer_copy(x)`, cffi's `ffi.from_buffer("float[]", x)`:
            # known by the method, whatever the receiver; the buffer is the last argument.
            position = len(node.args) - 1
            yield Read(node, node.args[position], platforms.BUFFER, func.attr, f"`{ctx.source_of(func)}`",
                       position=position)
            continue
        if isinstance(func, ast.Name) and func.id not in aliases:
            if func.id not in _BUILTIN_READERS:
                continue  # a builtin, a def or class, or an import of something else
            consumer = func.id
        else:
            consumer = analysis.qualname(func)
        reads = READERS.get(consumer)
        if reads is None or any(k.arg in ("device", None) for k in node.keywords):
            continue  # np.from_dlpack(x, device="cpu") copies to the host on every platform
        if consumer.endswith(".to_dlpack") and (len(node.args) != 1 or node.keywords):
            continue  # a call JAX005 cannot rewrite (take_ownership=...): its own report stands
        if _makes_capsule(ctx, node.args[0]):
            continue  # from_dlpack(to_dlpack(x)): the read is the inner call's, reported there
        yield Read(node, node.args[0], reads, consumer, f"`{ctx.source_of(func)}`")


_BUFFER_METHODS = frozenset({"from_buffer", "from_buffer_copy"})
_BUILTIN_READERS = frozenset({"memoryview", "bytes", "bytearray"})
_READER_ATTRIBUTES = _BUFFER_METHODS | frozenset(
    {"from_dlpack", "frombuffer", "to_dlpack", "as_tensor", "asarray", "tensor", "map", "tree_map"}
)


def _calls(tree: ast.Module) -> tuple[list[ast.Call], frozenset[str]]:
    """The calls that may read an array (``f(x, ...)``, ``m.from_dlpack(x)``, ``x.__dlpack__()``),
    in ``ast.walk`` order, and the names a bare ``f`` may be a reader by.

    Resolving the callee of every bare call of a large module is most of this rule's cost. A
    name can resolve to a reader only through a binding that imports one or is not an import,
    ``def`` or ``class`` at all (an assignment, a parameter, a loop target...); the builtin
    ``memoryview`` is the one reader by a name never bound.
    """
    calls: list[ast.Call] = []
    aliases: set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "__dlpack__" or node.args and not isinstance(node.args[0], ast.Starred) and (
                isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and func.attr in _READER_ATTRIBUTES)
            ):
                calls.append(node)
        elif isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                aliases.add(node.id)
        elif isinstance(node, ast.arg):
            aliases.add(node.arg)
        elif isinstance(node, ast.alias):
            if any(word in node.name for word in _READER_ATTRIBUTES):
                aliases.add((node.asname or node.name).split(".", 1)[0])
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
            if node.name:
                aliases.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            aliases.add(node.rest)
    return calls, frozenset(aliases)


def _may_be_a_jax_array(ctx: FileContext, read: Read) -> bool:
    """Whether the read may be of a JAX array: one the analysis knows (a tree map's leaves), what
    ``to_dlpack`` is given (it takes nothing else), or, for a DLPack export, a value of unknown
    origin (a parameter): on a TPU target such an export is the common way real code fails, and
    the helper returns an array that exports (torch's, NumPy's) unchanged. The buffer protocol
    of an unknown value is too common (bytes, mmap) to report."""
    analysis = ctx.analysis
    if read.leaves:
        each = analysis.iterated if _is_builtin_map(read.call) else analysis.leaves
        kind = each(read.array).kind
    else:
        kind = analysis.value_of(read.array).kind
    if kind == v.ARRAY or read.consumer.endswith(".to_dlpack"):
        return True
    # torch.tensor(...) of an unknown value is most often a conversion of a list: only a known
    # JAX array is a read there. JAX's own from_dlpack of a JAX array reads it too (measured:
    # `jnp.from_dlpack(x)` of a TPU array raises), and the helper leaves a torch tensor alone.
    return kind == v.UNKNOWN and "dlpack" in read.consumer


_CAPSULE_MAKERS = api.names(makes_capsules=True)


def _makes_capsule(ctx: FileContext, expr: ast.AST) -> bool:
    """``to_dlpack(x)`` or ``x.__dlpack__()``: a capsule, whose own read is reported where it is made."""
    if not isinstance(expr, ast.Call):
        return False
    if isinstance(expr.func, ast.Attribute) and expr.func.attr == "__dlpack__":
        return True
    return ctx.analysis.qualname(expr.func) in _CAPSULE_MAKERS


def _is_builtin_map(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == "map"


def _is_helper_call(expr: ast.AST) -> bool:
    """``ensure_exportable(x)``, or ``tree_map(ensure_exportable, tree)``: a read fixed already."""
    if not isinstance(expr, ast.Call):
        return False
    if isinstance(expr.func, ast.Name) and expr.func.id == HELPER:
        return True
    return len(expr.args) == 2 and isinstance(expr.args[0], ast.Name) and expr.args[0].id == HELPER


def _guarded(ctx: FileContext, call: ast.Call, refused) -> bool:
    """Whether a ``try`` around ``call`` (or around every call of its helper) catches what every
    refusing platform raises there."""
    return all(caught(ctx, call, errors) or callers_catch(ctx, call, errors)
               for errors in (frozenset({r.error, *ERROR_BASES.get(r.error, ())}) for r in refused))


def _module_binds_helper(tree: ast.Module):
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef) and statement.name == HELPER:
            return statement
        if isinstance(statement, ast.ImportFrom) and any((a.asname or a.name) == HELPER for a in statement.names):
            return statement
    return None


# Backends whose arrays export over DLPack (JAX's test utilities' platform names).
_DLPACK_PLATFORMS = frozenset({"cpu", "gpu", "cuda", "rocm"})
_RUN_ON_DEVICES = frozenset({"jax._src.test_util.run_on_devices", "jax.test_util.run_on_devices"})
_DEVICE_MATCHES = frozenset({"jax._src.test_util.test_device_matches", "jax.test_util.test_device_matches"})


def _runs_only_on_dlpack_platforms(ctx: FileContext, call: ast.Call) -> bool:
    """A test that runs only where DLPack works (issue 31, JAX's own test suite):
    ``@jtu.run_on_devices("cpu")`` on it or its class, or a ``setUp`` / the test itself that
    starts with ``if not jtu.test_device_matches(["cpu", "gpu"]): self.skipTest(...)``."""
    for ancestor in ctx.ancestors(call):
        if not isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if any(_platforms(ctx, d, _RUN_ON_DEVICES) for d in ancestor.decorator_list):
            return True
        if isinstance(ancestor, ast.ClassDef):
            bodies = [s.body for s in ancestor.body if isinstance(s, ast.FunctionDef) and s.name in ("setUp", "setUpClass")]
        else:
            bodies = [[s for s in ancestor.body if s.end_lineno < call.lineno]]
        if any(_skips_elsewhere(ctx, statement) for body in bodies for statement in body):
            return True
    return False


def _platforms(ctx: FileContext, node: ast.AST, functions: frozenset[str]) -> bool:
    """``node`` is a call of one of ``functions`` naming only DLPack platforms."""
    if not (isinstance(node, ast.Call) and node.args and ctx.qualname(node.func) in functions):
        return False
    names = node.args[0].elts if isinstance(node.args[0], (ast.List, ast.Tuple)) else node.args
    return all(isinstance(n, ast.Constant) and n.value in _DLPACK_PLATFORMS for n in names)


def _skips_elsewhere(ctx: FileContext, statement: ast.stmt) -> bool:
    """``if not jtu.test_device_matches([...]): self.skipTest(...)`` (or ``raise``)."""
    if not (isinstance(statement, ast.If) and isinstance(statement.test, ast.UnaryOp)):
        return False
    if not isinstance(statement.test.op, ast.Not) or not _platforms(ctx, statement.test.operand, _DEVICE_MATCHES):
        return False
    last = statement.body[-1]
    skips = isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and isinstance(last.value.func, ast.Attribute)
    return isinstance(last, ast.Raise) or (skips and last.value.func.attr == "skipTest")
