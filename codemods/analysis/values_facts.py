"""The facts the value analysis (``values.Analysis``) reads that more than one of its questions
shares: views of ``api``'s table (producers, transforms, array modules, pytree helpers), the
DLPack device types, the spellings of types an annotation names, and small readers of a call's
syntax (an argument by position or keyword, a literal list of ints)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jax_codemod.analysis import api
from jax_codemod.analysis.scopes import scope_nodes
from jax_codemod.analysis.values_lattice import FUNCTION, LIBRARY, MULTI, PLACEMENT_UNKNOWN, SINGLE, Value

if TYPE_CHECKING:
    from jax_codemod.analysis.values import Analysis


# How a list or dict bound to a name is written into (``Analysis._with_writes``), as spelled
# after the name.
_WRITE_SPELLINGS = (".append(", ".insert(", ".extend(", "[", ".update(", ".setdefault(")

# DLDeviceType members of the DLPack standard (dlpack.h).
DL_DEVICE_TYPES = {
    "kDLCPU": 1,
    "kDLCUDA": 2,
    "kDLCUDAHost": 3,
    "kDLOpenCL": 4,
    "kDLVulkan": 7,
    "kDLMetal": 8,
    "kDLVPI": 9,
    "kDLROCM": 10,
    "kDLROCMHost": 11,
    "kDLExtDev": 12,
    "kDLCUDAManaged": 13,
    "kDLOneAPI": 14,
    "kDLWebGPU": 15,
    "kDLHexagon": 16,
    "kDLMAIA": 17,
}

# JAX's transforms applied as ``T(f, ...)`` or ``@T``/``@T(...)`` whose call returns the function.
WRAPPING_TRANSFORMS = frozenset(
    record.name for record in api.records(library="jax", public=None) if record.transform in ("jit", "wraps")
)
# Transforms: a function passed through them runs on tracers (the wrapping ones, and those that
# call the function at once).
TRACING_TRANSFORMS = api.public_names(library="jax", transform=True)
SHARDING_TYPES = {
    "jax.sharding.NamedSharding": MULTI,
    "jax.sharding.PositionalSharding": MULTI,
    "jax.sharding.PmapSharding": MULTI,
    "jax.sharding.GSPMDSharding": MULTI,
    "jax.sharding.SingleDeviceSharding": SINGLE,
    "jax.sharding.Sharding": PLACEMENT_UNKNOWN,
    # jax._src.sharding_impls' factory of a SingleDeviceSharding (JAX's own tests use it)
    "jax.sharding.make_single_device_sharding": SINGLE,
}
# What makes a device mesh (one of one device is no multi-device placement).
_MESH_MAKERS = frozenset({"jax.make_mesh", "jax.sharding.Mesh", "jax.experimental.mesh_utils.create_device_mesh"})


def _constant_strs(node: ast.AST | None) -> list[str] | None:
    if node is None:
        return []
    elements = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    found = []
    for element in elements:
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            return None
        found.append(element.value)
    return found


def _returns_its_argument(decorator: Value, owner: Analysis | None) -> bool:
    """Whether ``decorator`` (a decorator's value) is a function of the project that returns the
    function it is given unchanged, as a registry's decorator does (`def deco(fn):
    REGISTRY[name] = fn; return fn`, what `@register("torch")` returns): every `return` of it
    returns its one parameter, and it yields nothing. Issue 54: such a decorator hid the
    function, so the calls of it were not followed into it."""
    function = decorator.node
    if decorator.kind != FUNCTION or owner is None or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    positional = [*function.args.posonlyargs, *function.args.args]
    if isinstance(function, ast.AsyncFunctionDef) or function.decorator_list or len(positional) != 1:
        return False
    returns, name = [], positional[0].arg
    for node in scope_nodes(function):
        if isinstance(node, (ast.Yield, ast.YieldFrom)) or (
            isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
        ):
            return False  # a generator, or the parameter rebound (`fn = wraps(fn)(inner)`)
        if isinstance(node, ast.Return):
            returns.append(node)
    return bool(returns) and all(isinstance(r.value, ast.Name) and r.value.id == name for r in returns)


def _inspects(test: ast.expr, names: set[str]) -> bool:
    """Whether ``test`` looks into the value of one of ``names``: reads an attribute of it or
    passes it to a call (`len(x.sharding.device_set) > 1`, `is_sharded(x)`), not only `x is
    None` or `not x`."""
    for node in ast.walk(test):
        if node.__class__ is ast.Attribute and node.value.__class__ is ast.Name and node.value.id in names:
            return True
        if node.__class__ is ast.Call and any(
            a.__class__ is ast.Name and a.id in names for a in [*node.args, *(k.value for k in node.keywords)]
        ):
            return True
    return False


def _names_read(expr: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(expr) if node.__class__ is ast.Name}


def _is_partial_put(value: Value) -> bool:
    """Whether ``value`` is ``functools.partial(jax.device_put, ...)`` (``_partial_call``)."""
    return value.kind == LIBRARY and value.qualname == "jax.device_put" and isinstance(value.node, ast.Call)


def _argument(call: ast.Call, position: int | None, keyword: str) -> ast.AST | None:
    for k in call.keywords:
        if k.arg == keyword:
            return k.value
    if (
        position is not None
        and len(call.args) > position
        and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1])
    ):
        return call.args[position]
    return None


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_is_literal(e) for e in node.elts)
    return False
