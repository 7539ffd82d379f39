"""codemod: find and rewrite broken JAX interop code (DLPack, raw buffer pointers)."""

from __future__ import annotations

from codemods.dlpack_without_host_fallback import DlpackWithoutHostFallback
from codemods.removed_dlpack_api import RemovedDlpackApi
from codemods.rule import Finding, FixSafety, Rule
from codemods.sharded_dlpack_export import ShardedDlpackExport
from codemods.traced_concrete_access import TracedConcreteAccess
from codemods.unguarded_dlpack_export import UnguardedDlpackExport
from codemods.unsupported_dl_device import UnsupportedDlDevice

__version__ = "0.1.0"

# The registry, in the order fixes are applied. Codes are unique and never reused.
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


__all__ = ["RULES", "Finding", "FixSafety", "Rule", "__version__", "rule_by_code"]
