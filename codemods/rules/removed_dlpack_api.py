"""JAX005: the capsule-based DLPack API that JAX removed."""

from __future__ import annotations

import ast

import libcst as cst
from jax_codemod.analysis import jax_versions
from jax_codemod.analysis.context import FileContext
from jax_codemod.rule import Finding, FixSafety, Rule

TO_DLPACK = "jax.dlpack.to_dlpack"
JAX_FROM_DLPACK = "jax.dlpack.from_dlpack"

# Consumers that take any object with __dlpack__/__dlpack_device__ (the array protocol).
ARRAY_PROTOCOL_CONSUMERS = frozenset(
    {
        "torch.from_dlpack",
        "torch.utils.dlpack.from_dlpack",
        "numpy.from_dlpack",
        "cupy.from_dlpack",
        "jax.numpy.from_dlpack",
        "jax.dlpack.from_dlpack",
    }
)
# Keyword arguments of the old to_dlpack that __dlpack__ accepts with the same meaning.
DUNDER_KEYWORDS = frozenset({"stream", "max_version", "dl_device", "copy"})
# Producers of capsules from torch tensors: the tensor itself speaks the array protocol.
TORCH_CAPSULE_PRODUCERS = frozenset({"torch.utils.dlpack.to_dlpack", "torch.to_dlpack"})

# How the anchored node is rewritten; carried in Finding.data.
UNWRAP = "unwrap"  # to_dlpack(x) -> x, inside an array-protocol consumer
DUNDER = "dunder"  # to_dlpack(x, **kw) -> x.__dlpack__(**kw)
DETACH = "detach"  # torch to_dlpack(t) -> t.detach(), inside jax.dlpack.from_dlpack
METHOD_RECEIVER = "receiver"  # cupy_array.toDlpack() -> cupy_array
DROP_IMPORT = "drop-import"  # from jax.dlpack import to_dlpack -> (removed)


class RemovedDlpackApi(Rule):
    """## What it does
    Finds uses of the capsule-based DLPack API that JAX removed:
    `jax.dlpack.to_dlpack(x)` (deprecated in JAX 0.6, removed in 0.7), and
    `jax.dlpack.from_dlpack(capsule)`, which no longer accepts a DLPack capsule.
    Each is reported only when the target JAX (`target-jax-version`) has removed
    it: `to_dlpack` from 0.7.0, capsules passed to `from_dlpack` from 0.7.2.

    ## Why is this bad?
    On current JAX, `jax.dlpack.to_dlpack` raises `AttributeError` (and
    `from jax.dlpack import to_dlpack` raises `ImportError`), while
    `jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))` raises `TypeError`:
    the consumer now asks the producer for the capsule itself, through the
    `__dlpack__` / `__dlpack_device__` protocol.

    ## Example
    ```python
    import jax.dlpack
    import torch.utils.dlpack

    t = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
    y = jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    capsule = jax.dlpack.to_dlpack(x)
    ```

    ## Use instead
    ```python
    import jax.dlpack
    import torch.utils.dlpack

    t = torch.utils.dlpack.from_dlpack(x)
    y = jax.dlpack.from_dlpack(t.detach())
    capsule = x.__dlpack__()
    ```

    ## Fix safety
    Safe. Inside an array-protocol consumer (`torch.from_dlpack`,
    `torch.utils.dlpack.from_dlpack`, `np.from_dlpack`, `cupy.from_dlpack`,
    `jax.dlpack.from_dlpack`) the array is passed directly; anywhere else the capsule
    comes from `x.__dlpack__()` with the same `stream`, `max_version`, `dl_device` and
    `copy` arguments. A torch tensor handed to `jax.dlpack.from_dlpack` is passed as
    `t.detach()`, which shares memory and, like the old capsule path, also accepts
    tensors that require grad. Calls with arguments that have no array-protocol
    equivalent (`take_ownership`, `src_device`, positional options, `*args`), references
    that are not calls, and capsules stored in variables are reported without a fix.
    """

    CODE = "JAX005"
    NAME = "removed-dlpack-api"
    DEFAULT_ENABLED = True
    FIX_SAFETY = FixSafety.SAFE
    TRIGGERS = (b"to_dlpack", b"toDlpack")

    def check(self, ctx: FileContext) -> list[Finding]:
        findings: list[Finding] = []
        fixed_references: set[ast.AST] = set()
        references: list[ast.AST] = []
        for node in ast.walk(ctx.tree):
            if isinstance(node, ast.Call):
                found = self._check_call(ctx, node)
                if found is not None:
                    findings.append(found)
                    if found.fix is FixSafety.SAFE and not ctx.is_suppressed(self.CODE, found.line):
                        fixed_references.add(node.func)
            elif (
                self._removed("dlpack.to_dlpack.removed")
                and isinstance(node, (ast.Name, ast.Attribute))
                and isinstance(node.ctx, ast.Load)
                and ctx.qualname(node) == TO_DLPACK
            ):
                references.append(node)
        for reference in references:
            parent = ctx.parent(reference)
            if isinstance(parent, ast.Call) and parent.func is reference:
                continue
            findings.append(
                self.finding(
                    ctx,
                    reference,
                    f"`{TO_DLPACK}` was removed in JAX 0.7; pass arrays to the consumer's "
                    "`from_dlpack` directly, or call `x.__dlpack__()` for a capsule",
                    FixSafety.NONE,
                    node_type=type(reference).__name__,
                )
            )
        findings.extend(self._check_imports(ctx, references, fixed_references))
        return findings

    def _removed(self, change: str) -> bool:
        """Whether the target JAX (``target-jax-version``) has removed this API: before, it works."""
        return jax_versions.has(change, jax_versions.target(self.options))

    def _check_call(self, ctx: FileContext, call: ast.Call) -> Finding | None:
        qualified = ctx.qualname(call.func)
        if qualified == TO_DLPACK:
            return self._check_to_dlpack(ctx, call) if self._removed("dlpack.to_dlpack.removed") else None
        if qualified == JAX_FROM_DLPACK and call.args and self._removed("dlpack.from_dlpack_capsule.removed"):
            return self._check_capsule_argument(ctx, call.args[0])
        return None

    def _check_to_dlpack(self, ctx: FileContext, call: ast.Call) -> Finding:
        message = f"`{TO_DLPACK}` was removed in JAX 0.7"
        reason = _unsupported_arguments(call)
        if reason:
            return self.finding(ctx, call, f"{message}; {reason}, so no automatic fix", FixSafety.NONE)
        consumer = ctx.parent(call)
        if (
            not call.keywords
            and isinstance(consumer, ast.Call)
            and consumer.args
            and consumer.args[0] is call
            and ctx.qualname(consumer.func) in ARRAY_PROTOCOL_CONSUMERS
        ):
            advice = "pass the array to the consumer directly"
            return self.finding(ctx, call, f"{message}; {advice}", FixSafety.SAFE, data=(UNWRAP,))
        return self.finding(ctx, call, f"{message}; use `x.__dlpack__()`", FixSafety.SAFE, data=(DUNDER,))

    def _check_capsule_argument(self, ctx: FileContext, argument: ast.AST) -> Finding | None:
        message = f"`{JAX_FROM_DLPACK}` no longer accepts a DLPack capsule"
        if isinstance(argument, ast.Call):
            producer = ctx.qualname(argument.func)
            if producer in TORCH_CAPSULE_PRODUCERS and _single_plain_argument(argument):
                return self.finding(
                    ctx, argument, f"{message}; pass the tensor itself", FixSafety.SAFE, data=(DETACH,)
                )
            if producer is None and _is_cupy_to_dlpack(argument):
                return self.finding(
                    ctx, argument, f"{message}; pass the CuPy array itself", FixSafety.SAFE, data=(METHOD_RECEIVER,)
                )
            if producer != TO_DLPACK and (producer or "").endswith(".to_dlpack"):
                return self.finding(
                    ctx, argument, f"{message}; pass the producer's array itself", FixSafety.NONE
                )
        elif isinstance(argument, ast.Name) and _assigned_from_capsule_producer(ctx, argument):
            return self.finding(
                ctx,
                argument,
                f"{message}; `{argument.id}` holds a capsule: pass the tensor it came from",
                FixSafety.NONE,
                node_type="Name",
            )
        return None

    def _check_imports(self, ctx, references, fixed_references) -> list[Finding]:
        """`from jax.dlpack import to_dlpack` fails at import time on current JAX."""
        findings = []
        if not self._removed("dlpack.to_dlpack.removed"):
            return findings
        for node in ast.walk(ctx.tree):
            if not (isinstance(node, ast.ImportFrom) and node.module == "jax.dlpack" and not node.level):
                continue
            for alias in node.names:
                if alias.name != "to_dlpack":
                    continue
                local = alias.asname or alias.name
                uses = [r for r in references if isinstance(r, ast.Name) and r.id == local]
                removable = all(use in fixed_references for use in uses)
                findings.append(
                    self.finding(
                        ctx,
                        node,
                        f"`{TO_DLPACK}` no longer exists: this import raises ImportError on JAX 0.7+",
                        FixSafety.SAFE if removable else FixSafety.NONE,
                        node_type="ImportFrom",
                        data=(DROP_IMPORT,),
                    )
                )
        return findings

    def rewrite(self, original, updated, finding: Finding, fixer):
        action = finding.data[0]
        if action == UNWRAP:
            return _parenthesized_like(updated.args[0].value, updated)
        if action == DUNDER:
            receiver = updated.args[0].value
            return _method_call(receiver, "__dlpack__", list(updated.args[1:]), updated)
        if action == DETACH:
            return _method_call(updated.args[0].value, "detach", [], updated)
        if action == METHOD_RECEIVER:
            return _parenthesized_like(updated.func.value, updated)
        if action == DROP_IMPORT:
            return _drop_import_alias(updated, "to_dlpack")
        raise ValueError(f"unknown action {action!r}")


def _unsupported_arguments(call: ast.Call) -> str | None:
    if len(call.args) != 1 or isinstance(call.args[0], ast.Starred):
        return "its arguments have no array-protocol equivalent"
    for keyword in call.keywords:
        if keyword.arg is None:
            return "`**kwargs` may hold arguments `__dlpack__` does not take"
        if keyword.arg == "take_ownership":
            return "`take_ownership` (buffer donation) has no array-protocol equivalent"
        if keyword.arg not in DUNDER_KEYWORDS:
            return f"`{keyword.arg}` has no `__dlpack__` equivalent"
    return None


def _single_plain_argument(call: ast.Call) -> bool:
    return len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred)


def _is_cupy_to_dlpack(call: ast.Call) -> bool:
    # A method on a CuPy array: no import names it, but the spelling is CuPy's alone.
    return (
        isinstance(call.func, ast.Attribute)
        and call.func.attr == "toDlpack"
        and not call.args
        and not call.keywords
    )


def _assigned_from_capsule_producer(ctx: FileContext, name: ast.Name) -> bool:
    scope = ctx.enclosing_function(name) or ctx.tree
    for node in ast.walk(scope):
        assigns_name = isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name.id for target in node.targets
        )
        if assigns_name and isinstance(node.value, ast.Call):
            producer = ctx.qualname(node.value.func)
            if producer in TORCH_CAPSULE_PRODUCERS or producer == TO_DLPACK or _is_cupy_to_dlpack(node.value):
                return True
    return False


def _needs_parentheses(expression: cst.BaseExpression) -> bool:
    atoms = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.List, cst.Tuple)
    return not isinstance(expression, atoms) and not expression.lpar


def _method_call(receiver, method: str, args, original_call: cst.Call) -> cst.Call:
    if _needs_parentheses(receiver):
        receiver = receiver.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    if args:
        args = [*args[:-1], args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    return cst.Call(
        func=cst.Attribute(value=receiver, attr=cst.Name(method)),
        args=args,
        lpar=original_call.lpar,
        rpar=original_call.rpar,
    )


def _parenthesized_like(expression: cst.BaseExpression, original: cst.BaseExpression) -> cst.BaseExpression:
    if original.lpar and not expression.lpar:
        return expression.with_changes(lpar=original.lpar, rpar=original.rpar)
    return expression


def _drop_import_alias(statement: cst.ImportFrom, name: str):
    kept = [alias for alias in statement.names if alias.evaluated_name != name]
    if not kept:
        return cst.RemovalSentinel.REMOVE
    kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(names=kept)
