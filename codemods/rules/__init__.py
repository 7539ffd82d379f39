"""The rule registry: every rule, in the order fixes are applied. Codes are unique and never reused."""

from __future__ import annotations

from jax_codemod.rule import Rule
from jax_codemod.rules.dlpack_without_host_fallback import DlpackWithoutHostFallback
from jax_codemod.rules.removed_dlpack_api import RemovedDlpackApi
from jax_codemod.rules.sharded_dlpack_export import ShardedDlpackExport
from jax_codemod.rules.traced_concrete_access import TracedConcreteAccess
from jax_codemod.rules.unguarded_dlpack_export import UnguardedDlpackExport
from jax_codemod.rules.unsupported_dl_device import UnsupportedDlDevice

RULES: tuple[type[Rule], ...] = (
    TracedConcreteAccess,
    ShardedDlpackExport,
    UnsupportedDlDevice,
    DlpackWithoutHostFallback,
    RemovedDlpackApi,
    UnguardedDlpackExport,
)


def rule_by_code(code: str) -> type[Rule] | None:
    return next((rule for rule in RULES if rule.CODE == code.upper()), None)


__all__ = ["RULES", "rule_by_code"]
