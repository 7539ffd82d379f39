"""codemod: find and rewrite broken JAX interop code (DLPack, raw buffer pointers)."""

from __future__ import annotations

from codemods.removed_dlpack_api import RemovedDlpackApi
from codemods.rule import Finding, FixSafety, Rule
from codemods.sharded_dlpack_export import ShardedDlpackExport
from codemods.unguarded_dlpack_export import UnguardedDlpackExport

__version__ = "0.1.0"

# The registry, in the order fixes are applied. Codes are unique and never reused.
RULES: tuple[type[Rule], ...] = (ShardedDlpackExport, RemovedDlpackApi, UnguardedDlpackExport)


def rule_by_code(code: str) -> type[Rule] | None:
    return next((rule for rule in RULES if rule.CODE == code.upper()), None)


__all__ = ["RULES", "Finding", "FixSafety", "Rule", "rule_by_code", "__version__"]
