"""JAX008: DLPack imports of host data that land on a TPU host's CPU device."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jax_codemod.analysis import api, platforms
from jax_codemod.analysis import values as v
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.scopes import walk
from jax_codemod.rule import Finding, FixSafety, Rule
from jax_codemod.rules._shared import ABSENT, OURS, helper_state, insert_helper

if TYPE_CHECKING:
    import libcst as cst

# JAX's own DLPack importers (public spellings; the resolver canonicalises the rest).
IMPORTERS = frozenset(name for name in api.public_names(takes_arrays=True, single_device=True))
HELPER = "on_default_device"
HELPER_MODULE_OPTION = "helper-module"
HELPER_SOURCE = f'''
def {HELPER}(x):
    """``x`` on JAX's default device when a DLPack import left it on a device of another backend
    (added by codemod).

    On a TPU host, JAX imports host data (a torch CPU tensor) to its CPU device, committed there:
    arithmetic with TPU arrays then runs on the CPU, and ``jax.jit`` with a committed TPU argument
    raises. An array already on a device of the default backend is returned unchanged.
    """
    import jax

    defaults = jax.devices()
    if set(x.devices()) & set(defaults):
        return x
    return jax.device_put(x, defaults[0])
'''


class DlpackImportOnHost(Rule):
    """## What it does
    Finds DLPack imports into JAX of data that is not a JAX array (`jax.dlpack.from_dlpack(t)`,
    `jnp.from_dlpack(t)` of a torch tensor, a NumPy array, a capsule) where the target platforms
    (`target-platforms`) include a TPU, and places the result on JAX's default device:
    `on_default_device(jax.dlpack.from_dlpack(t))`, a helper defined once per module (or imported
    from `helper-module`). A project whose target has no TPU gets no finding.

    ## Why is this bad?
    On a TPU host, JAX imports host data to its CPU device, and commits it there (measured on a
    TPU v5e with JAX 0.10.2). Eager arithmetic with TPU arrays then runs on the CPU, silently;
    `jax.jit` given that array and a committed TPU array raises `ValueError: Received
    incompatible devices for jitted computation`.

    ## Example
    ```python
    import jax
    import torch

    t = torch.arange(3.0)
    x = jax.dlpack.from_dlpack(t)
    ```

    ## Use instead
    ```python
    import jax
    import torch


    def on_default_device(x):
        import jax

        defaults = jax.devices()
        if set(x.devices()) & set(defaults):
            return x
        return jax.device_put(x, defaults[0])


    t = torch.arange(3.0)
    x = on_default_device(jax.dlpack.from_dlpack(t))
    ```

    ## Fix safety
    Safe. Where the import lands on a device of the default backend (a CPU-only machine, a GPU
    tensor imported on its GPU) the helper returns it unchanged. On a TPU host it copies the
    imported array to the first TPU device: the result no longer shares memory with the torch
    tensor (a TPU cannot), and it is committed to that device, as the arrays it meets there
    are or may be. `jax.device_put` and `x.devices()` exist on every supported JAX, where
    `from_dlpack`'s own `device=` does not. Imports that name `device=` are left alone.
    """

    CODE = "JAX008"
    NAME = "dlpack-import-on-host"
    DEFAULT_ENABLED = True
    FIX_SAFETY = FixSafety.SAFE
    TRIGGERS = (b"from_dlpack",)
    REQUIRES = (b"jax",)

    def prefilter(self, source: bytes) -> bool:
        # Only a TPU target has imports that land on the host: other projects pay this test alone.
        return platforms.imports_land_on_host(platforms.target(self.options)) and b"from_dlpack" in source \
            and b"jax" in source

    def check(self, ctx: FileContext) -> list[Finding]:
        if not platforms.imports_land_on_host(platforms.target(self.options)):
            return []
        state = helper_state(ctx, HELPER, HELPER_SOURCE)
        findings = []
        for node in walk(ctx.tree):
            if not (isinstance(node, ast.Call) and node.args and not isinstance(node.args[0], ast.Starred)):
                continue
            if not (isinstance(node.func, ast.Attribute) and node.func.attr == "from_dlpack") and not (
                isinstance(node.func, ast.Name) and "from_dlpack" in node.func.id
            ):
                continue
            if ctx.analysis.qualname(node.func) not in IMPORTERS or any(k.arg in ("device", None) for k in node.keywords):
                continue
            if ctx.analysis.value_of(node.args[0]).kind == v.ARRAY or _placed(ctx, node):
                continue  # a JAX array stays where it is; an import placed already
            findings.append(self._finding(ctx, node, state))
        return findings

    def _finding(self, ctx: FileContext, call: ast.Call, state: str) -> Finding:
        message = (
            f"`{ctx.source_of(call.func)}` of host data gives an array committed to the CPU device on a TPU "
            "host: arithmetic with TPU arrays then runs on the CPU, and `jax.jit` with a committed TPU "
            "argument raises ValueError: Received incompatible devices for jitted computation"
        )
        if state not in (ABSENT, OURS) and not self.options.get(HELPER_MODULE_OPTION):
            return self.finding(ctx, call, f"{message}; `{HELPER}` is already taken in this module, so "
                                "`jax.device_put` the result on `jax.devices()[0]` by hand", FixSafety.NONE,
                                raises=("ValueError",))
        return self.finding(ctx, call, f"{message}; place it with `{HELPER}(...)`", FixSafety.SAFE,
                            raises=("ValueError",))

    def rewrite(self, original, updated, finding: Finding, fixer):
        import libcst as cst

        if not _binds_helper(fixer.ctx.tree):
            module = self.options.get(HELPER_MODULE_OPTION)
            if module:
                fixer.add_import(module, HELPER)
            else:
                fixer.state[HELPER] = True
        inner = updated.with_changes(lpar=[], rpar=[])
        return cst.Call(func=cst.Name(HELPER), args=[cst.Arg(inner)], lpar=updated.lpar, rpar=updated.rpar)

    def finalize(self, module: cst.Module, fixer) -> cst.Module:
        if not fixer.state.get(HELPER):
            return module
        return insert_helper(module, HELPER, HELPER_SOURCE)


def _placed(ctx: FileContext, call: ast.Call) -> bool:
    """The import is the argument of the helper or of ``jax.device_put`` already."""
    parent = ctx.parent(call)
    if not isinstance(parent, ast.Call) or call not in parent.args:
        return False
    if isinstance(parent.func, ast.Name) and parent.func.id == HELPER:
        return True
    return ctx.analysis.qualname(parent.func) == "jax.device_put"


def _binds_helper(tree: ast.Module) -> bool:
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef) and statement.name == HELPER:
            return True
        if isinstance(statement, ast.ImportFrom) and any((a.asname or a.name) == HELPER for a in statement.names):
            return True
    return False
