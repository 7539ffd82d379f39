"""JAX003: ``__dlpack__(dl_device=...)`` naming a DLPack device type JAX cannot export to."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jax_codemod.analysis import jax_versions
from jax_codemod.analysis import values as v
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.guards import callers_catch, caught
from jax_codemod.analysis.values import DL_DEVICE_TYPES
from jax_codemod.rule import Finding, FixSafety, Rule
from jax_codemod.rules._shared import (
    TAKEN,
    helper_state,
    insert_helper,
    is_guarded,
    try_except_buffer_error,
    whole_statement,
    with_value,
)

if TYPE_CHECKING:
    import libcst as cst
_NAMES = {value: name for name, value in DL_DEVICE_TYPES.items()}

# Which types JAX exports to depends on the target release (jax_versions.exportable_device_types:
# the keys of _DL_DEVICE_TO_PLATFORM in jax/_src/dlpack.py). Any other type makes to_dlpack
# raise (KeyError before 0.5.1, BufferError after), except 0: to_dlpack tests
# `if dl_device_type:`, so a zero type is ignored rather than rejected.
_IGNORED_DEVICE_TYPE = 0
# Handlers that catch each release's unmapped-type error (KeyError is a LookupError).
_CAUGHT_AS = {"BufferError": frozenset({"BufferError"}), "KeyError": frozenset({"KeyError", "LookupError"})}
# A fallback catches what every supported release raises, so the fixed code runs on all of them.
FALLBACK_ERRORS = "(" + ", ".join(jax_versions.DL_DEVICE_FALLBACK_ERRORS) + ")"

STATIC = "static"  # drop dl_device: the call can never succeed
STATEMENT = "statement"  # try the requested device, else the native one, around a statement
HELPER = "helper"  # the same, inside an expression, through the module's helper

HELPER_NAME = "_dlpack_or_native_device"
HELPER_SOURCE = f'''
def {HELPER_NAME}(array, dl_device, **kwargs):
    """DLPack capsule on ``dl_device``, or on the array's own device if JAX cannot export there
    (on the host where the array's own device has no export either: a TPU)."""
    try:
        return array.__dlpack__(dl_device=dl_device, **kwargs)
    except {FALLBACK_ERRORS}:
        pass
    try:
        array.__dlpack_device__()
    except BufferError:  # the array's own device exports nothing: a host copy (kDLCPU)
        return array.__dlpack__(dl_device=(1, 0), **kwargs)
    return array.__dlpack__(**kwargs)
'''
_FALLBACK_COMMENT = "# JAX cannot export to that device type: use the array's own device"


class UnsupportedDlDevice(Rule):
    """## What it does
    Finds `x.__dlpack__(dl_device=(TYPE, id))` calls whose DLPack device type JAX
    does not map to a backend (OpenCL, Vulkan, Metal, VPI, ExtDev, WebGPU, Hexagon, ...),
    whether the type is spelled with `torch.utils.dlpack.DLDeviceType`, another
    library's `DLDeviceType` enum, a bare int, or a module-level constant. When the
    type is statically unsupported the `dl_device` argument is dropped, so JAX exports
    from the array's own device. When the type is only known at run time, the export
    falls back to the array's own device when the export fails (an unsafe fix). Which
    types JAX exports to depends on the release: the rule follows `target-jax-version`.

    ## Why is this bad?
    JAX exports only to the device types in its `_DL_DEVICE_TO_PLATFORM` table (CPU,
    CUDA and ROCm; CUDA host from 0.10.2; ROCm host, oneAPI and TPU host from 0.11);
    any other type raises `KeyError` (before 0.5.1) or `BufferError: The device
    specification passed to to_dlpack contains an unsupported device type`, so such a
    call can never succeed.

    ## Example
    ```python
    from torch.utils.dlpack import DLDeviceType

    capsule = x.__dlpack__(dl_device=(DLDeviceType.kDLOpenCL, 0), stream=None)
    ```

    ## Use instead
    ```python
    from torch.utils.dlpack import DLDeviceType

    capsule = x.__dlpack__(stream=None)
    ```

    ## Fix safety
    Dropping a statically unsupported `dl_device` is safe: on the target JAX the
    original call always raises, and the other keyword arguments are kept. When the device
    type is a run-time value, the fix is unsafe: it wraps the export in
    `try`/`except (BufferError, KeyError, RuntimeError)` (what the supported JAX
    releases raise for a device they cannot export to, or whose backend is absent)
    and retries without `dl_device`, so the capsule may live
    on another device than the one requested, which the consumer must accept. An
    error that `dl_device` did not cause (a sharded array) is raised again by
    the retry, so it still surfaces. A whole statement is wrapped in
    place; an export inside a larger expression goes through one helper per module.
    Supported device types, `dl_device=None`, `dl_device=x.__dlpack_device__()` (any
    array's own device: the consumer asking for its own, as the protocol intends) and
    exports already inside a `try` whose handler catches what the target JAX raises (or in
    a helper whose every call, project-wide, sits in one) are left alone, as are files that do not import JAX and receivers known to be arrays of
    another library. A handler that catches only BufferError while the target JAX
    (before 0.5.1) raises KeyError is reported, not rewritten: the fallback is the user's.
    """

    CODE = "JAX003"
    RAISES = ("BufferError",)
    NAME = "unsupported-dl-device"
    DEFAULT_ENABLED = True
    FIX_SAFETY = FixSafety.SAFE
    TRIGGERS = (b"dl_device",)
    # check() reports only in a file that imports jax: one that never names it cannot.
    REQUIRES = (b"jax",)

    def check(self, ctx: FileContext) -> list[Finding]:
        if not _imports_jax(ctx.analysis.nodes):
            return []
        findings: list[Finding] = []
        analysis = ctx.analysis
        # A finding where any release in the target range raises: a type exported only from a
        # later release than the range's oldest gets the fallback, not the static drop, which
        # would change what the newer releases do.
        target = jax_versions.target(self.options)
        exported_from = jax_versions.exportable_from(target)
        everywhere = frozenset(t for t, first in exported_from.items() if first == target.oldest)
        errors = jax_versions.unsupported_device_errors(target)
        helper = None
        for node in analysis.nodes:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr != "__dlpack__":
                continue
            keyword = next((k for k in node.keywords if k.arg == "dl_device"), None)
            if keyword is None or analysis.value_of(node.func.value).is_other_array:
                continue
            device_type = _device_type(analysis, keyword.value, node.func.value, everywhere)
            if device_type is _SUPPORTED:
                continue
            uncaught = [error for error in errors if not caught(ctx, node, _CAUGHT_AS[error])
                        and not callers_catch(ctx, node, _CAUGHT_AS[error])]
            if device_type is not _UNKNOWN and device_type not in exported_from:
                findings.append(self._static_finding(ctx, node, device_type, target, errors))
            elif not uncaught:
                continue
            elif is_guarded(ctx, node):
                findings.append(self._guard_finding(ctx, node, target, uncaught[0], errors[uncaught[0]]))
            else:
                if helper is None:
                    helper = helper_state(ctx, HELPER_NAME, HELPER_SOURCE)
                message = None
                if device_type is not _UNKNOWN:
                    message = _partial_message(device_type, exported_from[device_type], target, errors)
                findings.append(self._runtime_finding(ctx, node, helper, message))
        return findings

    def _guard_finding(self, ctx: FileContext, call: ast.Call, target, error: str, first) -> Finding:
        # The handler is the user's own fallback: widening it is their call, not a mechanical fix.
        where = (f"JAX {jax_versions.render(first)}" if target.is_single
                 else f"JAX {jax_versions.render(first)} (in the target range, {target})")
        message = (
            f"the `try` around this export catches BufferError, but {where} raises "
            f"{error} for a device type it does not export to (BufferError only from 0.5.1), so the "
            f"handler never runs: catch `(BufferError, {error})` there"
        )
        return self.finding(ctx, call, message, FixSafety.NONE)

    def _static_finding(self, ctx: FileContext, call: ast.Call, device_type: int, target, errors) -> Finding:
        name = _NAMES.get(device_type, "not a DLPack device type")
        where = (f"JAX {target} does not export to" if target.is_single
                 else f"no JAX release in the target range ({target}) exports to")
        message = (
            f"`dl_device` asks for DLPack device type {device_type} ({name}), which {where}: "
            f"this call always raises {_errors_words(errors)}; drop "
            "`dl_device` to export from the array's own device, or request kDLCPU/kDLCUDA"
        )
        if any(keyword.arg is None for keyword in call.keywords) or call.args:
            return self.finding(
                ctx,
                call,
                f"{message} (fix by hand: the call has other arguments this rule cannot keep apart)",
                FixSafety.NONE,
            )
        return self.finding(ctx, call, message, FixSafety.SAFE, data=(STATIC,))

    def _runtime_finding(self, ctx: FileContext, call: ast.Call, helper: str, message: str | None = None) -> Finding:
        message = message or (
            "`dl_device` is only known at run time, and JAX raises BufferError (KeyError before 0.5.1) "
            "for device types it does not export to (OpenCL, Vulkan, Metal, ...); fall back to the "
            "array's own device when the export fails"
        )
        if call.args:
            return self.finding(ctx, call, f"{message} (by hand: positional arguments)", FixSafety.NONE)
        statement = whole_statement(ctx, call)
        if statement is not None:
            return self.finding(
                ctx, statement, message, FixSafety.UNSAFE, node_type="SimpleStatementLine", data=(STATEMENT,)
            )
        if helper == TAKEN or any(keyword.arg is None for keyword in call.keywords):
            return self.finding(
                ctx,
                call,
                f"{message} (by hand: the call cannot be routed through `{HELPER_NAME}`)",
                FixSafety.NONE,
            )
        return self.finding(ctx, call, message, FixSafety.UNSAFE, data=(HELPER,))

    def rewrite(self, original, updated, finding: Finding, fixer):
        import libcst as cst

        shape = finding.data[0]
        if shape == STATIC:
            return _without_dl_device(updated)
        if shape == STATEMENT:
            statement = updated.body[0]
            fallback = with_value(statement, _without_dl_device(statement.value))
            guarded = try_except_buffer_error(updated, fallback, _FALLBACK_COMMENT)
            handler = guarded.handlers[0].with_changes(type=cst.parse_expression(FALLBACK_ERRORS))
            return guarded.with_changes(handlers=[handler])
        fixer.state[HELPER_NAME] = True
        dl_device = next(arg for arg in updated.args if arg.keyword and arg.keyword.value == "dl_device")
        others = [arg for arg in updated.args if arg is not dl_device]
        args = [cst.Arg(value=updated.func.value), cst.Arg(value=dl_device.value), *others]
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        args[:-1] = [
            arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for arg in args[:-1]
        ]
        return cst.Call(func=cst.Name(HELPER_NAME), args=args, lpar=updated.lpar, rpar=updated.rpar)

    def finalize(self, module: cst.Module, fixer) -> cst.Module:
        if not fixer.state.get(HELPER_NAME):
            return module
        return insert_helper(module, HELPER_NAME, HELPER_SOURCE)


def _errors_words(errors: dict) -> str:
    """``KeyError (BufferError from 0.5.1)``: what the releases of a range raise, oldest first."""
    (first, *later) = errors
    return first + "".join(f" ({error} from {jax_versions.render(errors[error])})" for error in later)


def _partial_message(device_type: int, first, target, errors: dict) -> str:
    name = _NAMES.get(device_type, "not a DLPack device type")
    older = {error: since for error, since in errors.items() if since < first}
    return (
        f"`dl_device` asks for DLPack device type {device_type} ({name}), which JAX exports to only from "
        f"{jax_versions.render(first)}: on the older releases the target range ({target}) allows, this call "
        f"raises {_errors_words(older)}; fall back to the array's own device when the export fails"
    )


def _without_dl_device(call: cst.Call) -> cst.Call:
    args = list(call.args)
    index = next(i for i, arg in enumerate(args) if arg.keyword and arg.keyword.value == "dl_device")
    dropped = args.pop(index)
    if args and index == len(args):
        # The new last argument ends the call the way the dropped one did (trailing comma, newline).
        args[-1] = args[-1].with_changes(
            comma=dropped.comma, whitespace_after_arg=dropped.whitespace_after_arg
        )
    return call.with_changes(args=args)


def _imports_jax(nodes: list[ast.AST]) -> bool:
    for node in nodes:
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            modules = [node.module]
        else:
            continue
        if any(module.split(".")[0] == "jax" for module in modules):
            return True
    return False


# What dl_device asks for -------------------------------------------------------------

_SUPPORTED = object()  # JAX exports there (or ignores the type)
_UNKNOWN = object()  # not statically known


def _device_type(analysis: v.Analysis, dl_device: ast.AST, receiver: ast.AST, exportable: frozenset[int]):
    """The int device type ``dl_device`` statically asks for, _SUPPORTED or _UNKNOWN."""
    if isinstance(dl_device, ast.Constant) and dl_device.value is None:
        return _SUPPORTED
    value = analysis.value_of(dl_device)
    if value.kind == v.DLPACK_DEVICE:
        # Some array's own `__dlpack_device__()`: the exporter's, another JAX array's, or the
        # consumer's asking for its own device, the protocol's intended use (a device JAX cannot
        # reach raises BufferError, which the consumer is there to handle).
        return _SUPPORTED
    if value.kind == v.CONSTANT and value.constant is None and value.why == "":
        return _UNKNOWN if not isinstance(dl_device, ast.Constant) else _SUPPORTED
    if value.kind != v.CONTAINER:
        return _UNKNOWN
    if len(value.items) != 2 or any(key is None for key, _ in value.items):
        return _SUPPORTED  # not a device spec this rule understands: not its business
    device_type = value.element(0)
    if device_type.kind not in (v.CONSTANT, v.DEVICE_TYPE):
        return _UNKNOWN
    number = device_type.constant
    if not isinstance(number, int) or isinstance(number, bool):
        return _UNKNOWN
    if number in exportable or number == _IGNORED_DEVICE_TYPE:
        return _SUPPORTED
    return number
