"""JAX005: the capsule-based DLPack API that JAX removed."""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from jax_codemod.analysis import jax_versions
from jax_codemod.analysis.api import TREE_MAPS
from jax_codemod.analysis.capsules import (
    ARRAY_CONSUMERS,
    CUPY,
    JAX,
    JAX_CONSUMERS,
    JAX_PRIVATE,
    JAX_TO_DLPACK,
    PROTOCOL_PRODUCERS,
    TENSORFLOW,
    TORCH,
    Flow,
    Producer,
    capsules,
    reports_unknown_origin,
)
from jax_codemod.analysis.context import FileContext, split_lines
from jax_codemod.analysis.names import canonical
from jax_codemod.analysis.version_gates import OLD, Gates
from jax_codemod.rule import Finding, FixSafety, Rule

# Keyword arguments of the old to_dlpack that __dlpack__ accepts with the same meaning.
DUNDER_KEYWORDS = frozenset({"stream", "max_version", "dl_device", "copy"})
OLD_API = JAX_TO_DLPACK

# How the anchored node is rewritten; carried in Finding.data.
SOURCE = "source"  # producer(x) -> x (or x.detach().contiguous()): the array itself
DUNDER_CALL = "dunder"  # to_dlpack(x, **kw) -> x.__dlpack__(**kw): still a capsule
INLINE = "inline"  # drop `capsule = producer(x)`, hand x to its one consumer
CONSUMER = "consumer"  # consumer(producer(x), copy=False) -> consumer(x): the array, copies allowed
DROP_IMPORT = "drop-import"  # from jax.dlpack import to_dlpack -> (removed)
DROP_ALIAS = "drop-alias"  # to_dl = jax.dlpack.to_dlpack -> (removed)
EXPORT_EACH = "export-each"  # jax.tree.map(jax.dlpack.to_dlpack, t) -> jax.tree.map(lambda a: a.__dlpack__(), t)
_EXPORT_EACH = "lambda a: a.__dlpack__()"
# A backend's from_dlpack: torch turns a sibling backend's capsule into a tensor before JAX takes it.
CONVERT_CAPSULES = "convert-capsules"
_CONVERT_STATE = "removed-dlpack-api:convert"
_SIMPLE = (ast.Return, ast.Assign, ast.AnnAssign, ast.Expr)
# What the array becomes for the consumer: as is, or a contiguous torch tensor without
# autograd (jax.dlpack.from_dlpack ignores torch strides on JAX 0.6.1-0.7.1).
AS_IS = ""
TORCH_FOR_JAX = "torch-for-jax"
TORCH_FOR_JAX_CALLS = ("detach", "contiguous")  # what a torch tensor gets before JAX takes it, in order

_STATE = "removed-dlpack-api:inline"
# How messages name the libraries whose producers export protocol arrays.
_LIBRARY_NAMES = {"cupy": "CuPy", "warp": "Warp"}


class RemovedDlpackApi(Rule):
    """## What it does
    Migrates the capsule-based DLPack API that JAX removed: `jax.dlpack.to_dlpack(x)`
    (deprecated in JAX 0.6, removed in 0.7; also through aliases, `from jax.dlpack
    import to_dlpack`, `from jax.dlpack import *` or `importlib.import_module("jax.dlpack")`),
    and DLPack capsules
    -- from `torch.utils.dlpack.to_dlpack(t)`, `t.__dlpack__()`, CuPy's `toDlpack()` or
    JAX's private `jax._src.dlpack.to_dlpack` -- handed to `jax.dlpack.from_dlpack`,
    `jnp.from_dlpack` or `jax._src.dlpack.from_dlpack`, which take the array itself.
    Each capsule is followed from the call that makes it to the calls that consume it,
    through variables (which definition of a name reaches each read: `x = to_dlpack(x);
    x = from_dlpack(x)` rebinds one name tensor -> capsule -> array), containers and
    comprehensions. Values of unknown origin fed to JAX's consumers are reported, where
    `report-unknown-origin = true`, unless the file shows they are arrays. (`jax._src.dlpack.to_dlpack` itself still exists -- it
    is what `x.__dlpack__()` calls -- and is left alone where its capsule goes to another
    library, unless it passes the long-gone `take_ownership`.)

    ## Why is this bad?
    On current JAX `jax.dlpack.to_dlpack` raises `AttributeError` (and
    `from jax.dlpack import to_dlpack` raises `ImportError`), while
    `jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))` raises `TypeError` since
    JAX 0.7.2: the consumer now asks the producer for the capsule itself, through the
    `__dlpack__` / `__dlpack_device__` protocol. Only what the target JAX
    (`target-jax-version`) has removed is reported.

    ## Example
    ```python
    t = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
    capsule = torch.utils.dlpack.to_dlpack(weights)
    w = jax.dlpack.from_dlpack(capsule)
    caps = [jax.dlpack.to_dlpack(a) for a in arrays]
    tensors = [torch.utils.dlpack.from_dlpack(c) for c in caps]
    CACHE["x"] = jax.dlpack.to_dlpack(x)

    def convert_to_jax(x):
        x = torch.utils.dlpack.to_dlpack(x)
        x = jax.dlpack.from_dlpack(x)
        return x

    def torch_to_jax(x):  # reported: is `x` a tensor or a capsule?
        return jax.dlpack.from_dlpack(x)
    ```

    ## Use instead
    ```python
    t = torch.utils.dlpack.from_dlpack(x)
    w = jax.dlpack.from_dlpack(weights.detach().contiguous())
    caps = [a for a in arrays]
    tensors = [torch.utils.dlpack.from_dlpack(c) for c in caps]
    CACHE["x"] = x.__dlpack__()

    def convert_to_jax(x):
        x = jax.dlpack.from_dlpack(x.detach().contiguous())
        return x

    def torch_to_jax(x: torch.Tensor):  # the annotation says it is a tensor
        return jax.dlpack.from_dlpack(x)
    ```

    ## Fix safety
    Safe. A capsule whose every use is one array-protocol consumer in the same function
    (`torch.from_dlpack`, `torch.utils.dlpack.from_dlpack`, `np.from_dlpack`,
    `cupy.from_dlpack`, `jax.dlpack.from_dlpack`, `jnp.from_dlpack`) becomes the array
    itself, and a variable that only carried it is dropped -- also when the capsule
    rebinds the array's own name, as long as every later read sees the next binding
    (the return after `if ...: x = to_dlpack(x); x = from_dlpack(x)` does). A capsule
    that escapes (returned, stored, passed on, read twice, or fed to a consumer that takes
    only capsules) comes from `x.__dlpack__()` instead, with the same `stream`,
    `max_version`, `dl_device` and `copy` arguments, and the message says so.
    The function handed to a map over one tree or iterable (`jax.tree.map(jax.dlpack.to_dlpack,
    tree)`, `map(to_dlpack, xs)`) becomes `lambda a: a.__dlpack__()`: the same capsules.
    `take_ownership=False` (the default) is dropped, and so is a JAX consumer's `copy=False`
    where the capsule is its argument: JAX 0.7.2+ will not alias a CPU buffer that is not
    64-byte aligned and raises with it, where the capsule was copied (a capsule in a variable
    keeps it, and that fix is unsafe). A call that runs only where the new API failed (a
    fallback handler, an old-version branch) is left alone, unless the module-level import it
    calls through would fail first: it then becomes `x.__dlpack__()` (the same capsule on
    every supported JAX) and the import goes. A torch tensor handed to JAX becomes
    `t.detach().contiguous()` (less the calls it already ends with: `t.contiguous()`
    becomes `t.contiguous().detach()`): `detach()` accepts tensors that require grad as the capsule
    path did, and `contiguous()` keeps the values right on JAX 0.6.1-0.7.1, whose
    `from_dlpack` ignores torch strides (it is a no-op, still zero-copy, for a contiguous
    tensor). For `jax.dlpack.from_dlpack(v.__dlpack__())` with `v` of unknown library,
    passing `v` is an unsafe fix for that reason; CuPy's `a.toDlpack()` shows `a` is an
    array, and passing it is safe. With `report-unknown-origin = true`, where the file shows
    nothing else of `v` (an unannotated parameter whose only use is the export), passing it
    would leave a call that report asks about, so `--check` would never pass: reported
    instead, with the manual fix (pass it, annotate its type).

    Reported without a fix, with the manual fix in the message: `take_ownership=True` or
    a non-constant `take_ownership` (buffer donation no longer exists: pass the array and
    stop using it), `src_device` (move the array with `jax.device_put` first), TensorFlow
    capsules (`tf.experimental.dlpack.to_dlpack`) fed to JAX (many TensorFlow releases'
    tensors have no `__dlpack__`: pass the tensor where they do, else copy through the host), other
    arguments with no array-protocol equivalent, references that are not calls
    (`EXPORTERS = {"jax": jax.dlpack.to_dlpack}`), and capsules that reach a JAX consumer while
    some other read still sees them (also returned or stored, or a branch, `continue` or
    handler that skips the rebinding): passing the tensor would change what those reads get.

    A backend class's pair (the shape of tensor-network and multi-backend libraries):
    a `to_dlpack(self, a)` method returning `jax.dlpack.to_dlpack(a)` whose sibling
    `from_dlpack(self, a)` hands its parameter to `jax.dlpack.from_dlpack` returns `a`
    itself, and the sibling then takes arrays (`jax.dlpack.from_dlpack` accepts any object
    with `__dlpack__`). Unsafe: a caller that gave `from_dlpack` a capsule made by another
    library (torch's `to_dlpack`) must pass the tensor instead; the message says so. A
    `to_dlpack` method with no such sibling gets `a.__dlpack__()` (its capsule may go to
    another library), as does one whose family holds a backend whose `from_dlpack` takes only
    capsules (TensorFlow's: the array would break the hand-over to it, as PhiML's maintainers
    saw). Where a sibling backend class (of a module linked to this one by imports,
    wherever it lies) has a `to_dlpack` that returns another library's capsule (torch's, however
    the file imports it), a dispatcher can
    hand that capsule to this `from_dlpack`, whatever its parameter is called: as maintainers
    fixed it (tensorcircuit-ng), the method takes arrays and turns such a capsule into a torch
    tensor first (`if type(a).__name__ == "PyCapsule": a = torch's from_dlpack(a)`; unsafe:
    that path needs torch where the capsule arrives; torch takes any library's capsule, so a
    family with a torch sibling gets it whatever its other siblings make). Where no sibling
    makes torch's, another library's capsule (TensorFlow's, `x.__dlpack__()` of an unknown one)
    is reported, naming the sibling, with that advice.

    A value fed to a JAX consumer that the file does not show the making of -- a
    parameter, an element of `*args`, an attribute, an item, what an unknown function
    returns -- is classified by evidence. A capsule (a caller in the file passes one, or
    a name or annotation says so) is reported as such. An array is left alone, whatever
    its name says: a known constructor or annotation (`torch.Tensor`, `np.ndarray`,
    `jax.Array`, `cupy.ndarray`, jaxtyping), a tensor method's result (`t.contiguous()`,
    so `a_dlpack = t.contiguous().detach()` as this rule's fix leaves it), an element of a
    display or comprehension of such values that nothing changes in place, what an array
    library's own function returns (`tf.identity(t)`) or pydlpack's `asdlpack(x)` (an
    object with `__dlpack__`), a conditional whose two branches are arrays, a name that
    says array (`x_np`, `t_torch`), a guard (`hasattr(x, "__dlpack__")`,
    `torch.is_tensor(x)`, `isinstance`), or the same value used as only
    an array can be (`x.shape`, `x.device`, `x[0]`, `x + 1`: a capsule has none of them).
    Anything else, with the rule option `report-unknown-origin = true` (off by default: such
    a call is most often given an array, and a migrated file must check clean), gets a report
    naming the value and where it comes from: "cannot tell whether `x` is a DLPack capsule" -- if callers pass `to_dlpack(...)` results, they
    must pass the tensor itself. A function named `from_dlpack` that forwards its
    parameter is a consumer of its own (as `jnp.from_dlpack` is) and is not reported.

    Calls that only run on old JAX (behind `jax.__version__` / `jax.__version_info__`
    comparisons, `hasattr(jax.dlpack, "to_dlpack")`, `getattr(jax.dlpack, "to_dlpack",
    None)`, a `try` that catches `ImportError`, or one that tries the array protocol first
    and falls back to `to_dlpack` in its handler) are version gates, not bugs, and are
    left alone -- unless the gate's other branch, the one that runs on current JAX, uses
    the removed API too.
    """

    CODE = "JAX005"
    RAISES = ("AttributeError",)
    NAME = "removed-dlpack-api"
    DEFAULT_ENABLED = True
    FIX_SAFETY = FixSafety.SAFE
    TRIGGERS = (b"to_dlpack", b"toDlpack", b"from_dlpack")
    # Every finding is a call of (or reference to) a JAX function, and only an import that
    # spells `jax` brings one into a file; a JAX consumer fed a capsule needs no `to_dlpack`.
    REQUIRES = (b"jax",)

    def check(self, ctx: FileContext) -> list[Finding]:
        return _Check(self, ctx).run()

    def rewrite(self, original, updated, finding: Finding, fixer):
        action = finding.data[0]
        if action == SOURCE:
            return _source_expression(updated, finding.data[1], finding.data[2])
        if action == CONSUMER:
            import libcst as cst

            first = updated.args[0]
            kept = [first.with_changes(value=_source_expression(first.value, finding.data[1], finding.data[2]))]
            kept += [a for a in updated.args[1:] if not _is_copy_false(a, cst)]
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(args=kept)
        if action == DUNDER_CALL:
            import libcst as cst

            receiver = updated.args[0].value
            keep = [a for a in updated.args[1:] if not _is_false_take_ownership(a, cst)]
            return _method_call(receiver, "__dlpack__", keep, updated)
        if action == INLINE:
            fixer.state.setdefault(_STATE, {})[id(updated)] = (updated, finding.data[1], finding.data[2])
            return updated
        if action == CONVERT_CAPSULES:
            fixer.state.setdefault(_CONVERT_STATE, {})[finding.data[1]] = finding.data[2:]
            return updated
        if action == EXPORT_EACH:
            import libcst as cst

            return _parenthesized_like(cst.parse_expression(_EXPORT_EACH), updated)
        if action in (DROP_IMPORT, DROP_ALIAS):
            import libcst as cst

            if action == DROP_ALIAS:
                return cst.RemovalSentinel.REMOVE
            return _drop_import_alias(updated, finding.data[1])
        raise ValueError(f"unknown action {action!r}")

    def finalize(self, module, fixer):
        conversions = fixer.state.get(_CONVERT_STATE)
        if conversions:
            from libcst.metadata import MetadataWrapper

            module = MetadataWrapper(module, unsafe_skip_copy=True).visit(_converter()(conversions))
        pending = fixer.state.get(_STATE)
        if not pending:
            return module
        return module.visit(_inline_transformer()(pending))


class _Check:
    """One file's findings: each capsule flow, then JAX consumers, references, imports."""

    def __init__(self, rule: RemovedDlpackApi, ctx: FileContext) -> None:
        self.rule = rule
        self.ctx = ctx
        self.analysis = capsules(ctx)
        # A version gate is judged on the releases of the target where `to_dlpack` is gone.
        gone = jax_versions.target(rule.options).since("dlpack.to_dlpack.removed")
        self.gates = Gates(ctx, self.analysis.qualname, OLD_API, gone)
        self.findings: list[Finding] = []
        self.explained: set[int] = set()  # consumer calls a producer's flow already covers
        self.fixed_calls: set[int] = set()  # producer calls (of the old API) that get a fix
        self._deleted_names: dict[ast.AST, set[str]] = {}  # scope -> names a `del` unbinds in it

    def run(self) -> list[Finding]:
        # Only what some release of the target range has removed is broken: before 0.7 `to_dlpack`
        # works, and before 0.7.2 `jax.dlpack.from_dlpack` still takes a capsule (see
        # analysis/jax_versions.py). The fixes (`__dlpack__`, the array protocol) run on 0.4.30 too.
        target = jax_versions.target(self.rule.options)
        to_dlpack_gone = target.has_anywhere("dlpack.to_dlpack.removed")
        capsules_refused = target.has_anywhere("dlpack.from_dlpack_capsule.removed")
        for producer in self.analysis.producers:
            if to_dlpack_gone if producer.kind == JAX else capsules_refused:
                self.producer(producer)
        if capsules_refused:
            for consumer, name in self.analysis.consumers:
                if name in JAX_CONSUMERS and id(consumer) not in self.explained and consumer.args:
                    self.outside_capsule(consumer, name)
        if to_dlpack_gone:
            self.references_and_aliases()
            self.imports()
        return self.findings

    # Helpers ----------------------------------------------------------------------

    def add(self, node, message, fix, anchor=None, node_type="Call", data=()):
        finding = self.rule.finding(
            self.ctx, node, message, fix, node_type=node_type, data=data, raises=(self._raises(node),)
        )
        if anchor is not None:
            finding = replace(finding, span=self.ctx.span(anchor))
        self.findings.append(finding)
        return finding

    def _reads_import(self, load: ast.Name, statement: ast.ImportFrom) -> bool:
        return any(definition.node is statement for definition in self.ctx.analysis.scopes.may_reach(load))

    def _raises(self, node: ast.AST) -> str:
        """What the flagged code raises on JAX 0.7+: the import ImportError, the removed
        function's lookup AttributeError, a JAX consumer handed a capsule TypeError."""
        if isinstance(node, ast.ImportFrom):
            return "ImportError"
        if isinstance(node, ast.Call) and self.ctx.qualname(node.func) in JAX_CONSUMERS:
            return "TypeError"
        name = node.func if isinstance(node, ast.Call) else node
        if isinstance(name, ast.Name) and name.id not in self.analysis.names_bound_from(name.id):
            return "NameError"  # bound by `from jax.dlpack import *` alone, which binds it no more
        return "AttributeError"

    def mark_fixed(self, call: ast.Call, finding: Finding) -> None:
        # a suppressed finding is dropped by the engine, so its call stays as it was
        if not self.ctx.is_suppressed(self.rule.CODE, finding.line):
            self.fixed_calls.add(id(call))

    def gated(self, node: ast.AST) -> bool:
        if self.gates.side(node) in (OLD, "both"):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            # through `from jax.dlpack import to_dlpack` in a try whose fallback defines it
            for statement, guard in self.gates.guarded_imports.items():
                if any((a.asname or a.name) == node.func.id for a in statement.names):
                    return self.gates.fallback_binds(guard, node.func.id) == "callable"
        return False

    def spelled(self, producer: Producer) -> str:
        if producer.qualname == "jax._src.dlpack.to_dlpack":
            return ("`jax._src.dlpack.to_dlpack` is JAX's private twin of `jax.dlpack.to_dlpack`, "
                    "removed from the public API in JAX 0.7")
        return "`jax.dlpack.to_dlpack` was removed in JAX 0.7"

    # Producers --------------------------------------------------------------------

    def producer(self, producer: Producer) -> None:
        flow = self.analysis.flow(producer)
        if producer.kind == JAX:
            self.jax_producer(producer, flow)
        else:
            self.foreign_producer(producer, flow)

    def jax_producer(self, producer: Producer, flow: Flow) -> None:
        call = producer.call
        if self.gated(call):
            for use in flow.consumers:
                self.explained.add(id(use.consumer))
            return
        message = self.spelled(producer)
        problem = _argument_problem(call, self.ctx)
        for use in flow.consumers:
            self.explained.add(id(use.consumer))
        if problem:
            self.add(call, f"{message}; {problem}", FixSafety.NONE)
            return
        keywords = [k for k in call.keywords if k.arg != "take_ownership"]
        source = ast.unparse(producer.source)
        only = flow.consumers[0] if len(flow.uses) == 1 and flow.consumers else None
        array_consumer = only is not None and only.consumer_name in ARRAY_CONSUMERS and not keywords
        if flow.via == "direct" and array_consumer:
            self.fix_source(call, f"{message}; pass the array to `{_short(only.consumer_name)}` directly")
            return
        if flow.via == "variable" and array_consumer:
            self.fix_variable(producer, flow, only, f"{message}; the capsule in `{flow.variable}` only feeds "
                              f"`{_short(only.consumer_name)}` (line {only.node.lineno})", AS_IS)
            return
        if flow.via == "container" and flow.uses and not flow.escapes and not keywords and all(
            use.consumer_name in ARRAY_CONSUMERS for use in flow.uses
        ):
            self.fix_source(call, f"{message}; every capsule in `{flow.variable}` goes to an array-protocol "
                            f"consumer, so `{flow.variable}` now holds the arrays themselves")
            return
        if self.round_trip(producer, flow, message, keywords):
            return
        # The capsule escapes (or goes to a consumer that takes only capsules): keep a capsule.
        reason = _escape_words(flow)
        if keywords and only is not None and only.consumer_name in ARRAY_CONSUMERS:
            # The consumer takes the array too: what keeps a capsule is the export's own
            # arguments, which belong to `__dlpack__`, not to the consumer.
            named = ", ".join(f"`{k.arg}=`" for k in keywords if k.arg)
            reason = f"made with {named or '`**kwargs`'}, which `__dlpack__` takes"
        arguments = ", ".join(ast.unparse(k) for k in keywords)
        finding = self.add(call, f"{message}; the capsule is {reason}, so it stays a capsule: "
                           f"`{source}.__dlpack__({arguments})`", FixSafety.SAFE, data=(DUNDER_CALL,))
        self.mark_fixed(call, finding)
        for use in flow.consumers:
            if use.consumer_name in JAX_CONSUMERS:
                self.escaped_into_jax(use, source, reason, source)

    def round_trip(self, producer: Producer, flow: Flow, message: str, keywords) -> bool:
        """A backend's ``to_dlpack`` method returning the capsule that its sibling ``from_dlpack``
        hands to a JAX consumer (``analysis.capsules.paired_method``): a capsule kept would
        break the round trip from JAX 0.7.2 on, so ``to_dlpack`` returns the array itself, which
        every DLPack consumer of the array protocol takes, the sibling's included."""
        escape = flow.escapes[0] if flow.via == "escape" and len(flow.uses) == 1 and flow.escapes else None
        function = self.ctx.enclosing_function(producer.call)
        if escape is None or escape.escape != "returned" or keywords or function is None:
            return False
        sibling = self.analysis.paired_method(function)
        if sibling is None or not function.name.startswith("to_"):
            return False
        given = self.analysis.pair_parameter(sibling)
        fed = [
            (consumer, name) for consumer, name in self.analysis.consumers
            if name in JAX_CONSUMERS and given is not None and self.ctx.enclosing_function(consumer) is sibling
            and consumer.args and isinstance(consumer.args[0], ast.Name) and consumer.args[0].id == given.arg
        ]
        if not fed or isinstance(producer.source, ast.Starred) or producer.source is None:
            return False
        # A sibling backend that takes only capsules (TensorFlow's from_dlpack) is handed what
        # this method returns too: the array would break it, so the capsule stays (below).
        if self.analysis.family_takes_only_capsules(function) is not None:
            return False
        if self.analysis.family_capsule(sibling) is None:  # else other backends' capsules reach it too
            for consumer, _name in fed:
                self.explained.add(id(consumer))
        self.fix_source(producer.call, f"{message}; its sibling `{sibling.name}` (line {sibling.lineno}) hands "
                        f"what `{function.name}` returns to `{_short(fed[0][1])}`, which takes no "
                        "capsule since JAX 0.7.2: return the array itself, which it and every array-protocol "
                        "consumer take (unsafe: a caller that needs a capsule must call `__dlpack__()` itself)",
                        AS_IS, FixSafety.UNSAFE)
        return True

    def foreign_producer(self, producer: Producer, flow: Flow) -> None:
        """A torch/CuPy/`__dlpack__` capsule: broken only where it reaches a JAX consumer."""
        jax_uses = [use for use in flow.consumers if use.consumer_name in JAX_CONSUMERS]
        if not jax_uses:
            return
        for use in jax_uses:
            self.explained.add(id(use.consumer))
        jax_uses = [use for use in jax_uses if not self.gated(use.consumer)]
        if not jax_uses:
            return
        consumer = jax_uses[0]
        message = f"`{_short(consumer.consumer_name)}` no longer accepts a DLPack capsule"
        if producer.kind == TENSORFLOW:
            # TensorFlow's tensors have no `__dlpack__` in many releases (tensorflow#61769), so
            # passing the tensor is no fix there: which way to go is the user's call.
            source = ast.unparse(producer.source) if producer.source is not None else "the tensor"
            for use in jax_uses:
                self.add(use.consumer, f"{message}; this one is a TensorFlow capsule of `{source}`: pass the "
                         "tensor itself where your TensorFlow's tensors implement `__dlpack__`, else copy "
                         f"through the host (`jnp.asarray({source}.numpy())`)", FixSafety.NONE)
            return
        if producer.source is None:
            for use in jax_uses:
                self.add(use.consumer, f"{message}; this one comes from a call whose arguments cannot be turned "
                         "into the array: pass the array itself", FixSafety.NONE)
            return
        wrap, safety, what = self.conversion(producer)
        source = ast.unparse(producer.source)
        shown = source + "".join(f".{m}()" for m in _missing_for_jax(producer.source)) if wrap == TORCH_FOR_JAX else source
        single = len(flow.uses) == 1 and flow.uses[0] is consumer
        if flow.via == "direct":
            if wrap == AS_IS and self.questioned_after_fix(producer.call, source, consumer):
                typed = f" (`{source}: cupy.ndarray`)" if producer.kind == CUPY else ""
                self.add(consumer.consumer, f"{message}; pass {what} itself: `{shown}` (not done automatically: "
                         f"the file does not show what `{source}` is, so this rule could not tell the changed call "
                         f"from one given a capsule: check the callers, pass it, and annotate its type{typed})",
                         FixSafety.NONE)
                return
            if _copy_false(consumer.consumer):
                # JAX 0.7.2+ will not alias a CPU buffer that is not 64-byte aligned (ValueError
                # with copy=False); the capsule path copied it (0.4.30 gives the values).
                finding = self.add(consumer.consumer, f"{message}; pass {what} itself: `{shown}`, and drop "
                                   "`copy=False`: from JAX 0.7.2 a buffer it cannot alias (a CPU tensor not "
                                   "64-byte aligned) raises ValueError with it, where the capsule was copied"
                                   f"{_why(wrap, safety)}", safety, anchor=consumer.consumer,
                                   data=(CONSUMER, wrap, _kind(producer.call)))
                self.mark_fixed(producer.call, finding)
                return
            self.fix_source(producer.call, f"{message}; pass {what} itself: `{shown}`{_why(wrap, safety)}",
                            wrap, safety, at=consumer.consumer)
            return
        if flow.via == "variable" and single:
            if _copy_false(consumer.consumer):
                safety = FixSafety.UNSAFE
                message += (" (unsafe: `copy=False` stays, and from JAX 0.7.2 a buffer it cannot alias, a CPU "
                            "tensor not 64-byte aligned, then raises ValueError: drop it where a copy is fine)")
            self.fix_variable(producer, flow, consumer, f"{message}; `{flow.variable}` holds a capsule made "
                              f"from {what} `{source}`", wrap,
                              safety, at=consumer.consumer)
            return
        if flow.via == "container" and not flow.escapes and all(
            use.consumer_name in ARRAY_CONSUMERS for use in flow.uses
        ) and all(use.consumer_name in JAX_CONSUMERS for use in flow.uses):
            self.fix_source(producer.call, f"{message}; the capsules in `{flow.variable}` only feed JAX, so "
                            f"it now holds {what} itself: `{shown}`{_why(wrap, safety)}", wrap, safety,
                            at=consumer.consumer)
            return
        reason = _escape_words(flow)
        for use in jax_uses:
            self.escaped_into_jax(use, source, reason, shown)

    def questioned_after_fix(self, call: ast.Call, source: str, use) -> bool:
        """Whether passing ``source`` in place of ``call`` would leave a call this rule asks
        about ("cannot tell whether ... is a capsule"): the value's library is unknown and only
        the export showed it to be an array (`a.toDlpack()` of a parameter `a`). Such a fix
        would leave `--check` failing at its own site forever (issue 31), so it is not made.
        Judged exactly: the consumer is checked again in the text as the fix would leave it."""
        if not reports_unknown_origin(self.rule.options):
            return False  # that report is off (issue 54, decision 2): the fix leaves nothing to ask
        consumer = use.consumer
        exported = call.func.value if isinstance(call.func, ast.Attribute) else None
        if exported is None or self.analysis.values.value_of(exported).kind != "unknown":
            return False  # a known array or tensor: never questioned
        lines = split_lines(self.ctx.text)  # numbered as ast numbers them (not str.splitlines)
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line.encode("utf-8")))
        data = self.ctx.text.encode("utf-8")
        begin = starts[call.lineno - 1] + call.col_offset
        end = starts[call.end_lineno - 1] + call.end_col_offset
        text = (data[:begin] + source.encode("utf-8") + data[end:]).decode("utf-8")
        try:
            tree = ast.parse(text)
            after = FileContext(self.ctx.path, text, tree)
            self.ctx.borrow_project(after)
        except (SyntaxError, ValueError):
            return False
        moved = next((node for node in ast.walk(tree) if isinstance(node, ast.Call)
                      and (node.lineno, node.col_offset) == (consumer.lineno, consumer.col_offset)), None)
        if moved is None:
            return False
        again = _Check(self.rule, after)
        again.outside_capsule(moved, use.consumer_name)
        return bool(again.findings)

    def escaped_into_jax(self, use, source, reason, shown) -> None:
        # One wording before and after any fix (the producer's own, or one that moves lines),
        # so a re-check matches it: no line numbers, and the exported value, not the call.
        self.add(use.consumer, f"`{_short(use.consumer_name)}` no longer accepts a DLPack capsule; it gets a "
                 f"capsule of `{source}` that is also {reason}: pass `{shown}` here "
                 "instead, and give the other users their own `__dlpack__()`", FixSafety.NONE)

    def conversion(self, producer: Producer) -> tuple[str, FixSafety, str]:
        """How the exported value must be passed to a JAX consumer, and how safe that is."""
        if producer.kind == TORCH:
            return TORCH_FOR_JAX, FixSafety.SAFE, "the tensor"
        if PROTOCOL_PRODUCERS.get(producer.qualname or ""):
            # The producer's own fact (api.py's `protocol_array`): what it exports has the protocol.
            library = (producer.qualname or "").split(".", 1)[0]
            return AS_IS, FixSafety.SAFE, f"the {_LIBRARY_NAMES.get(library, library)} array"
        if producer.kind == JAX_PRIVATE:
            return AS_IS, FixSafety.SAFE, "the array"
        library = self.analysis.library(producer.source)
        if library == "torch":
            return TORCH_FOR_JAX, FixSafety.SAFE, "the tensor"
        if library in ("numpy", "jax", "cupy"):
            return AS_IS, FixSafety.SAFE, "the array"
        return AS_IS, FixSafety.UNSAFE, "the array"

    # Fixes ------------------------------------------------------------------------

    def fix_source(self, call, message, wrap=AS_IS, safety=FixSafety.SAFE, at=None):
        finding = self.add(at if at is not None else call, message, safety, anchor=call,
                           data=(SOURCE, wrap, _kind(call)))
        self.mark_fixed(call, finding)

    def fix_variable(self, producer, flow, use, message, wrap, safety=FixSafety.SAFE, at=None):
        """Drop the variable and pass the array to its one consumer, or make it hold the array."""
        noun = "tensor" if wrap == TORCH_FOR_JAX else "array"
        statement = flow.holder
        source = producer.source
        where = at if at is not None else producer.call
        if self.can_inline(statement, source, use):
            finding = self.add(where, f"{message}: pass the {noun} itself and drop `{flow.variable}`{_why(wrap, safety)}",
                     safety, anchor=statement, node_type="Assign",
                     data=(INLINE, flow.variable, (ast.unparse(source), wrap)))
        else:
            finding = self.add(where, f"{message}: `{flow.variable}` now holds the {noun} itself"
                               f"{_why(wrap, safety)}", safety, anchor=producer.call,
                               data=(SOURCE, wrap, _kind(producer.call)))
        self.mark_fixed(producer.call, finding)

    def can_inline(self, statement: ast.Assign, source: ast.AST, use) -> bool:
        """Moving ``source`` from the assignment to its use must not change what it means."""
        base = source
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(base, ast.Name):
            return False
        line = self.ctx.lines[statement.end_lineno - 1] if statement.end_lineno <= len(self.ctx.lines) else ""
        if "#" in line[statement.end_col_offset:] or ";" in line or statement.lineno != statement.end_lineno:
            return False  # a trailing comment or a shared line would be lost or mangled
        if self._deleted(statement, statement.targets[0].id):
            return False  # `del capsule` after it: the name stays bound, to the array
        block = _block_after(self.ctx, statement)
        use_statement = next((s for s in block if any(n is use.node for n in ast.walk(s))), None)
        if use_statement is None:
            return False
        between = block[:block.index(use_statement)]
        if isinstance(source, ast.Attribute) and between:
            return False  # an attribute may change under any statement
        if any(_binds_name(s, base.id) for s in between):
            return False
        if _is_compound(use_statement) and _binds_name(use_statement, base.id):
            return False
        # the finalize step hands the array to the first read after the assignment: this one
        return self.analysis.sole(statement, use.node)

    def _deleted(self, statement: ast.Assign, name: str) -> bool:
        """Whether a `del` of ``name`` is in the scope of ``statement`` (dropping the assignment
        would leave it unbound there: UnboundLocalError)."""
        scope = self.analysis.scopes.scope_of(statement)
        deleted = self._deleted_names.get(scope)
        if deleted is None:  # one walk per scope, not one per capsule assigned in it
            deleted = self._deleted_names[scope] = {
                node.id for node in ast.walk(scope) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Del)
            }
        return name in deleted

    # Capsules that arrive from outside ------------------------------------------------

    def outside_capsule(self, consumer: ast.Call, name: str) -> None:
        argument = consumer.args[0]
        if isinstance(argument, ast.Starred) or self.gated(consumer):
            return
        origin = self.analysis.origin(argument)
        short = _short(name)
        message = f"`{short}` no longer accepts a DLPack capsule (deprecated since JAX 0.4.32, a TypeError from 0.7.2)"
        shown = ast.unparse(argument)
        behind = self.analysis._parameter_behind(argument) if isinstance(argument, ast.Name) else None
        family = self.analysis.family_capsule(behind[0]) if behind is not None else None
        if family is not None:
            # A backend's from_dlpack, which its sibling backends' capsules reach (issue 34).
            head = f"{message}; `{shown}` is what the backends hand `{behind[0].name}`, and {family.text}"
            conversion = self.capsule_conversion(consumer, behind, family)
            if conversion is not None:
                # As maintainers fixed it (tensorcircuit-ng): take arrays, and turn another
                # library's capsule into that library's tensor before JAX takes it.
                self.add(consumer, f"{head}: such a capsule now becomes a torch tensor first (torch takes any "
                         "library's capsule, JAX 0.7.2+ none), and arrays pass as they are (unsafe: a capsule "
                         "then needs torch where it arrives; better still, have every backend's to_dlpack "
                         "return the tensor or array itself)", FixSafety.UNSAFE, data=conversion)
                return
            self.add(consumer, f"{head}: have every backend's to_dlpack return the tensor or array itself (torch "
                     "and JAX take it), or convert that capsule with its own library first", FixSafety.NONE)
            return
        if origin.kind == "capsule" and origin.flow is not None:
            producer = origin.flow.producer
            made = f"a capsule of `{ast.unparse(producer.source)}`" if producer.source is not None else "a capsule"
            self.add(consumer, f"{message}; `{shown}` holds {made}, which is used elsewhere too: pass the array "
                     "it was made from", FixSafety.NONE)
        elif origin.kind == "parameter" and origin.evidence:
            function = getattr(origin.function, "name", "lambda")
            star = "*" if origin.parameter is getattr(origin.function.args, "vararg", None) else ""
            self.add(consumer, f"{message}; `{shown}` comes from the parameter `{star}{origin.parameter.arg}` "
                     f"of `{function}`, and {origin.evidence}: have callers pass the array or tensor itself "
                     "(`t.detach().contiguous()` for torch) instead of its capsule", FixSafety.NONE)
        elif origin.kind == "stored":
            made = f" made by {origin.evidence}" if origin.evidence else ""
            self.add(consumer, f"{message}; `{shown}` holds a DLPack capsule{made}, kept where no automatic "
                     "fix can follow it: pass the array or tensor it was exported from "
                     "(`t.detach().contiguous()` for torch)", FixSafety.NONE)
        elif origin.kind == "unknown" and origin.evidence and isinstance(argument, ast.Call):
            # Made right here, by a function of a library this rule has no facts for: whether what
            # it exports has `__dlpack__` is that library's to say (api.py's `protocol_array`).
            exported = _exported_by(argument)
            what = f"`{ast.unparse(exported)}`" if exported is not None else "the array or tensor it exports"
            self.add(consumer, f"{message}; `{shown}` looks like one ({origin.evidence}), made right here by "
                     f"`{ast.unparse(argument.func)}`, a function this rule knows nothing of: pass {what} itself "
                     "where it has `__dlpack__` (`t.detach().contiguous()` for torch), else convert the capsule "
                     "with its own library first", FixSafety.NONE)
        elif origin.kind == "unknown" and origin.evidence:
            self.add(consumer, f"{message}; `{shown}` looks like one ({origin.evidence}), and this file does "
                     "not show where it is made: pass the array or tensor it was exported from "
                     "(`t.detach().contiguous()` for torch)", FixSafety.NONE)
        elif origin.kind != "array" and reports_unknown_origin(self.rule.options) and not self.forwarding_wrapper(
            consumer, origin
        ) and self.analysis.array_evidence(argument) is None:
            # Neither a capsule nor an array as far as the file shows: say what would break.
            self.add(consumer, f"cannot tell whether `{shown}` ({self.analysis.where_from(argument)}) is a DLPack "
                     f"capsule: `{short}` takes only objects with `__dlpack__` since JAX 0.7.2 (a capsule raises "
                     "TypeError); if it gets `to_dlpack(...)` results, pass the tensor or array itself "
                     "(`t.detach().contiguous()` for torch)", FixSafety.NONE)

    def capsule_conversion(self, consumer: ast.Call, behind, family) -> tuple | None:
        """How a backend's ``from_dlpack`` method converts its siblings' capsules before
        ``consumer`` (its JAX consumer, handed the parameter itself) takes them: the data of a
        ``CONVERT_CAPSULES`` fix, or None where no safe spelling exists (a capsule of a library
        other than torch's: TensorFlow's tensors lack `__dlpack__` in many releases; the
        consumer in a compound statement's header; the parameter rebound first)."""
        function, parameter = behind
        argument = consumer.args[0]
        statement = self.ctx.enclosing_statement(consumer)
        if family.kind != TORCH or not isinstance(argument, ast.Name) or argument.id != parameter.arg:
            return None
        if self.ctx.enclosing_function(consumer) is not function or not isinstance(statement, _SIMPLE):
            return None
        if any(
            isinstance(node, ast.Name) and node.id == parameter.arg and not isinstance(node.ctx, ast.Load)
            for node in ast.walk(function)
        ):
            return None
        alias, counter = "torch_dlpack", 2
        while re.search(rf"\b{alias}\b", self.ctx.source_of(function)):
            alias, counter = f"torch_dlpack{counter}", counter + 1
        return (CONVERT_CAPSULES, statement.lineno, parameter.arg, alias)

    def forwarding_wrapper(self, consumer: ast.Call, origin) -> bool:
        """``def from_dlpack(x, ...): return jax.dlpack.from_dlpack(x, ...)``: a consumer of its
        own (jnp.from_dlpack is one), with the same contract; what its callers pass is theirs."""
        function = origin.function
        return (
            origin.kind == "parameter"
            and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
            and function.name.lstrip("_") == "from_dlpack"
            and isinstance(consumer.args[0], ast.Name)
            and consumer.args[0].id == origin.parameter.arg
        )

    # References, aliases and imports ---------------------------------------------------

    def references_and_aliases(self) -> None:
        callees = {id(p.call.func) for p in self.analysis.producers}
        # Only a name bound from code that spells `to_dlpack` (an import or an assignment) can
        # hold it, and only an attribute named so can be it: resolving every name of a large
        # module through the value analysis cost seconds.
        aliasable = self.analysis.names_bound_from("to_dlpack")
        if any(node.module == "jax.dlpack" and not node.level and any(a.name == "*" for a in node.names)
               for node in self.analysis.import_froms):
            aliasable = aliasable | {"to_dlpack"}  # `from jax.dlpack import *` bound it, where it existed
        candidates = [*self.analysis.attribute_loads("to_dlpack"),
                      *(n for name in sorted(aliasable) for n in self.analysis.name_loads(name))]
        for node in candidates:
            if id(node) in callees or isinstance(self.ctx.parent(node), ast.Attribute):
                continue
            qualified = self.analysis.qualname(node)
            if qualified not in OLD_API or self.gated(node):
                continue
            if isinstance(node, ast.Name) and node.id in self.gates.optional_names:
                continue
            parent = self.ctx.parent(node)
            if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in (
                "hasattr", "getattr"
            ):
                continue
            single_target = isinstance(parent, ast.Assign) and len(parent.targets) == 1
            if single_target and isinstance(parent.targets[0], ast.Name) and self.alias(parent, node):
                continue
            mapper = self.mapped_over(node, parent)
            if mapper is not None:
                # `jax.tree.map(jax.dlpack.to_dlpack, tree)`: the map calls it with one leaf
                # (element) at a time, which `__dlpack__()` exports to the same capsule.
                self.add(node, f"`{qualified}` was removed in JAX 0.7; `{mapper}` calls it on one value at a "
                         f"time: `{_EXPORT_EACH}` makes the same capsules on every supported JAX (a consumer "
                         "that takes arrays, `torch.from_dlpack` or `jax.dlpack.from_dlpack`, can take the "
                         "values themselves: map it over them instead)", FixSafety.SAFE,
                         node_type=type(node).__name__, data=(EXPORT_EACH,))
                continue
            self.add(node, f"`{qualified}` was removed in JAX 0.7; no automatic fix: this reference is not a call, "
                     "and what calls it with which arguments is not shown here. Pass arrays to the consumer's "
                     "`from_dlpack` directly, or call `x.__dlpack__()` where a capsule is needed", FixSafety.NONE,
                     node_type=type(node).__name__)

    def mapped_over(self, node: ast.AST, parent: ast.AST) -> str | None:
        """The map (`jax.tree.map`, `jax.tree_util.tree_map`, builtin `map`) that ``node`` is the
        function of, over one tree or iterable, so that each call gets one positional value;
        None otherwise (several trees give it several arguments: `take_ownership` once)."""
        if not (isinstance(parent, ast.Call) and parent.args and parent.args[0] is node and len(parent.args) == 2):
            return None
        if any(isinstance(a, ast.Starred) for a in parent.args) or any(
            k.arg != "is_leaf" for k in parent.keywords
        ):
            return None
        func = parent.func
        if isinstance(func, ast.Name) and func.id == "map" and not self.ctx.is_bound("map"):
            return "map"
        qualified = canonical(self.analysis.qualname(func))
        return ast.unparse(func) if qualified in TREE_MAPS else None

    def alias(self, statement: ast.Assign, value: ast.AST) -> bool:
        """``to_dl = jax.dlpack.to_dlpack``: removable once every call through it is fixed."""
        name = statement.targets[0].id
        calls = [p.call for p in self.analysis.producers
                 if isinstance(p.call.func, ast.Name) and p.call.func.id == name]
        loads = self.analysis.name_loads(name)
        if not calls or len(loads) != len(calls) or not all(id(c) in self.fixed_calls for c in calls):
            return False
        self.add(value, f"`{ast.unparse(value)}` was removed in JAX 0.7; every call through `{name}` is "
                 "migrated, so the alias goes", FixSafety.SAFE, anchor=statement, node_type="Assign",
                 data=(DROP_ALIAS,))
        return True

    def imports(self) -> None:
        """`from jax.dlpack import to_dlpack` fails at import time on current JAX."""
        for node in self.analysis.import_froms:
            if node.level:
                continue
            if node.module not in ("jax.dlpack", "jax._src.dlpack") or node in self.gates.guarded_imports:
                continue
            if self.gates.side(node) in (OLD, "both"):
                continue
            for alias in node.names:
                if alias.name != "to_dlpack" or node.module != "jax.dlpack":
                    continue
                local = alias.asname or alias.name
                # Only the reads this import may be what they read: a function's own
                # `from torch.utils.dlpack import to_dlpack` is another library's name.
                loads = [load for load in self.analysis.name_loads(local) if self._reads_import(load, node)]
                read = {id(load) for load in loads}
                producers = [p for p in self.analysis.producers
                             if isinstance(p.call.func, ast.Name) and id(p.call.func) in read]
                calls = [p.call for p in producers]
                for producer in producers:
                    self.gated_call(producer)
                removable = len(loads) == len(calls) and all(id(c) in self.fixed_calls for c in calls)
                self.add(node, "`jax.dlpack.to_dlpack` no longer exists: this import raises ImportError on "
                         "JAX 0.7+", FixSafety.SAFE if removable else FixSafety.NONE, node_type="ImportFrom",
                         data=(DROP_IMPORT, alias.name))


    def gated_call(self, producer: Producer) -> None:
        """A call through this import that runs only where the new API failed (a fallback
        handler, an old-version branch) works there, but the import fails first on JAX 0.7+:
        `x.__dlpack__()` makes the same capsule on every supported JAX, so the import can go."""
        call = producer.call
        if id(call) in self.fixed_calls or not self.gated(call) or producer.source is None:
            return
        if call.keywords or len(call.args) != 1 or _argument_problem(call, self.ctx):
            return
        finding = self.add(call, f"{self.spelled(producer)}; this call runs only where the first way failed, "
                           f"but the import above fails first on JAX 0.7+: `{ast.unparse(producer.source)}.__dlpack__()` "
                           "makes the same capsule on every supported JAX", FixSafety.SAFE, data=(DUNDER_CALL,))
        self.mark_fixed(call, finding)


# Check-time helpers ---------------------------------------------------------------------


def _short(qualified: str | None) -> str:
    return {"jax.numpy.from_dlpack": "jnp.from_dlpack", "numpy.from_dlpack": "np.from_dlpack"}.get(
        qualified or "", qualified or "the consumer"
    )


def _exported_by(call: ast.Call) -> ast.AST | None:
    """What a capsule-making call exports, as far as its shape says: its one positional argument
    (`lib.to_dlpack(t)`), or the receiver of a method called with nothing (`t.toDLPack()`)."""
    if len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    if not call.args and not call.keywords and isinstance(call.func, ast.Attribute):
        return call.func.value
    return None


def _kind(call: ast.Call) -> str:
    """Where the exported value sits in the producer call: first argument or receiver."""
    if isinstance(call.func, ast.Attribute) and call.func.attr in ("__dlpack__", "toDlpack"):
        return "receiver"
    return "argument"


def _why(wrap: str, safety: FixSafety) -> str:
    if wrap == TORCH_FOR_JAX:
        return " (`contiguous()`: JAX 0.6.1-0.7.1 ignores torch strides)"
    if safety is FixSafety.UNSAFE:
        return (" -- unsafe: if it is a non-contiguous torch tensor, JAX 0.6.1-0.7.1 reads it with the wrong "
                "strides; pass `.detach().contiguous()` for torch")
    return ""


def _escape_words(flow: Flow) -> str:
    reasons = [use.escape for use in flow.escapes if use.escape]
    if not reasons:
        names = sorted({_short(u.consumer_name) for u in flow.consumers})
        return f"handed to `{names[0]}`, which takes only capsules" if names else "not consumed here"
    return reasons[0]


def _argument_problem(call: ast.Call, ctx: FileContext) -> str | None:
    """Why this ``to_dlpack`` call cannot be rewritten, with the manual fix; None if it can."""
    source = ast.unparse(call.args[0]) if call.args and not isinstance(call.args[0], ast.Starred) else "x"
    ownership = None
    if len(call.args) == 2 and not isinstance(call.args[1], ast.Starred):
        ownership = call.args[1]  # the old signature: to_dlpack(x, take_ownership=False, ...)
    elif len(call.args) != 1 or isinstance(call.args[0], ast.Starred):
        return "its arguments have no array-protocol equivalent, so no automatic fix"
    for keyword in call.keywords:
        if keyword.arg is None:
            return "`**kwargs` may hold arguments `__dlpack__` does not take, so no automatic fix"
        if keyword.arg == "take_ownership":
            ownership = keyword.value
        elif keyword.arg == "src_device":
            device = ast.unparse(keyword.value)
            return (f"`src_device` has no array-protocol equivalent: move the array first and pass "
                    f"`jax.device_put({source}, {device})` (or its `__dlpack__()` where a capsule is needed)")
        elif keyword.arg not in DUNDER_KEYWORDS:
            return f"`{keyword.arg}` has no `__dlpack__` equivalent, so no automatic fix"
    if ownership is None or (isinstance(ownership, ast.Constant) and ownership.value is False):
        return None
    if isinstance(ownership, ast.Constant) and ownership.value is True:
        return (f"`take_ownership=True` donated the buffer, which the array protocol never does: pass `{source}` "
                f"itself (or `{source}.__dlpack__()` where a capsule is needed) and stop using `{source}` "
                f"afterwards (`del {source}`) if the point was to free it")
    return (f"`take_ownership={ast.unparse(ownership)}` is decided at run time, and buffer donation no longer "
            f"exists: drop the argument and pass `{source}` itself (or `{source}.__dlpack__()`), then stop "
            f"using `{source}` where it was donated")


def _block_after(ctx: FileContext, statement: ast.stmt) -> list[ast.stmt]:
    parent = ctx.parent(statement)
    for name in ("body", "orelse", "finalbody"):
        children = getattr(parent, name, None)
        if isinstance(children, list) and any(c is statement for c in children):
            position = next(i for i, c in enumerate(children) if c is statement)
            return children[position + 1:]
    return []


def _binds_name(statement: ast.AST, name: str) -> bool:
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            (a.asname or a.name.split(".")[0]) == name for a in node.names
        ):
            return True
    return False


def _is_compound(statement: ast.AST) -> bool:
    return any(isinstance(getattr(statement, n, None), list) for n in ("body", "orelse", "handlers"))


# libcst helpers: imported only when a fix is made ------------------------------------------


def _missing_for_jax(tensor) -> list[str]:
    """The calls a torch tensor expression still needs before JAX takes it: `detach()` and
    `contiguous()`, less those it already ends with (`t.contiguous()` needs only `detach()`;
    a detached view keeps its strides). Takes an ``ast`` or a libcst expression."""
    trailing = set()
    node = tensor
    while True:
        func = getattr(node, "func", None)
        attr = getattr(func, "attr", None)
        name = attr if isinstance(attr, str) else getattr(attr, "value", None)
        if name not in TORCH_FOR_JAX_CALLS or getattr(node, "args", None) or getattr(node, "keywords", None):
            break
        trailing.add(name)
        node = func.value
    return [m for m in TORCH_FOR_JAX_CALLS if m not in trailing]


def _torch_for_jax(value, original_call):
    for position, method in enumerate(missing := _missing_for_jax(value)):
        value = _method_call(value, method, [], original_call if position == len(missing) - 1 else None)
    return value if missing else _parenthesized_like(value, original_call)


def _source_expression(call, wrap: str, kind: str):
    value = call.func.value if kind == "receiver" else call.args[0].value
    if wrap == TORCH_FOR_JAX:
        return _torch_for_jax(value, call)
    return _parenthesized_like(value, call)


def _copy_false(call: ast.Call) -> bool:
    return any(k.arg == "copy" and isinstance(k.value, ast.Constant) and k.value.value is False for k in call.keywords)


def _is_copy_false(arg, cst) -> bool:
    return (arg.keyword is not None and arg.keyword.value == "copy" and isinstance(arg.value, cst.Name)
            and arg.value.value == "False")


def _is_false_take_ownership(arg, cst) -> bool:
    keyword = arg.keyword.value if arg.keyword is not None else None
    return keyword == "take_ownership" or (keyword is None and isinstance(arg.value, cst.Name)
                                           and arg.value.value == "False")


def _needs_parentheses(expression) -> bool:
    import libcst as cst

    atoms = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.List, cst.Tuple)
    return not isinstance(expression, atoms) and not expression.lpar


def _method_call(receiver, method: str, args, original_call):
    import libcst as cst

    if _needs_parentheses(receiver):
        receiver = receiver.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    if args:
        args = [*args[:-1], args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    return cst.Call(
        func=cst.Attribute(value=receiver, attr=cst.Name(method)),
        args=args,
        lpar=original_call.lpar if original_call is not None else (),
        rpar=original_call.rpar if original_call is not None else (),
    )


def _parenthesized_like(expression, original):
    if original.lpar and not expression.lpar:
        return expression.with_changes(lpar=original.lpar, rpar=original.rpar)
    return expression


def _drop_import_alias(statement, name: str):
    import libcst as cst

    kept = [alias for alias in statement.names if alias.evaluated_name != name]
    if not kept:
        return cst.RemovalSentinel.REMOVE
    kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(names=kept)


def _inline_transformer():
    """Drops each marked capsule assignment and hands its array to the next read of the name."""
    import libcst as cst

    class ReplaceFirstArgument(cst.CSTTransformer):
        def __init__(self, name: str, replacement) -> None:
            super().__init__()
            self.name = name
            self.replacement = replacement
            self.done = False

        def on_visit(self, node) -> bool:
            return not self.done

        def leave_Arg(self, original_node, updated_node):
            value = updated_node.value
            if not self.done and updated_node.keyword is None and isinstance(value, cst.Name) and (
                value.value == self.name
            ):
                self.done = True
                return updated_node.with_changes(value=self.replacement)
            return updated_node

    class Inline(cst.CSTTransformer):
        def __init__(self, pending: dict) -> None:
            super().__init__()
            self.pending = pending

        def leave_IndentedBlock(self, original_node, updated_node):
            return updated_node.with_changes(body=self._body(original_node.body, updated_node.body))

        def leave_Module(self, original_node, updated_node):
            return updated_node.with_changes(body=self._body(original_node.body, updated_node.body))

        def _body(self, originals, updated):
            body = list(updated)
            for position, statement in enumerate(originals):
                if not isinstance(statement, cst.SimpleStatementLine):
                    continue
                marked = [s for s in statement.body if id(s) in self.pending and self.pending[id(s)][0] is s]
                if not marked:
                    continue
                _, name, (source, wrap) = self.pending[id(marked[0])]
                replacement = cst.parse_expression(source)
                if wrap == TORCH_FOR_JAX:
                    for method in _missing_for_jax(replacement):
                        replacement = _method_call(replacement, method, [], None)
                replacer = ReplaceFirstArgument(name, replacement)
                for later in range(position + 1, len(body)):
                    if body[later] is not None:
                        body[later] = body[later].visit(replacer)
                    if replacer.done:
                        break
                if not replacer.done:
                    continue  # nothing to hand the array to: leave the assignment as it was
                following = position + 1
                if following < len(body) and body[following] is not None and statement.leading_lines:
                    body[following] = body[following].with_changes(
                        leading_lines=[*statement.leading_lines, *body[following].leading_lines]
                    )
                body[position] = None
            return [s for s in body if s is not None]

    return Inline


def _converter():
    """Puts, before each planned statement (by its first line), the conversion of a capsule its
    parameter may hold: ``if type(a).__name__ == "PyCapsule": a = torch's from_dlpack(a)``."""
    import libcst as cst
    from libcst.metadata import PositionProvider

    class Convert(cst.CSTTransformer):
        METADATA_DEPENDENCIES = (PositionProvider,)

        def __init__(self, plans: dict) -> None:
            super().__init__()
            self.plans = plans

        def leave_IndentedBlock(self, original_node, updated_node):
            body = []
            for original, statement in zip(original_node.body, updated_node.body):
                plan = self.plans.get(self.get_metadata(PositionProvider, original).start.line)
                if plan is not None and isinstance(original, cst.SimpleStatementLine):
                    name, alias = plan
                    check = cst.parse_statement(
                        f'if type({name}).__name__ == "PyCapsule":\n'
                        "    # Another backend's DLPack capsule, which JAX 0.7.2+ refuses: torch, which takes\n"
                        "    # any library's, makes it a tensor first (contiguous: JAX 0.6.1-0.7.1 ignores strides).\n"
                        f"    import torch.utils.dlpack as {alias}\n\n"
                        f"    {name} = {alias}.from_dlpack({name}).contiguous()\n"
                    )
                    body.append(check.with_changes(leading_lines=statement.leading_lines))
                    statement = statement.with_changes(leading_lines=[])
                body.append(statement)
            return updated_node.with_changes(body=body)

    return Convert
