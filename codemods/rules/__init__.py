"""The rule registry: every rule, in the order fixes are applied. Codes are unique and never reused.

``RULES`` is built on first use: importing one rule module (``jax_codemod.rules.X``, which the
engine does for the first file holding that rule's trigger) imports this package first, and
must not import every other rule and analysis with it (~50 ms of start-up, most of it for
rules the run never asks).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jax_codemod.rule import Rule

# (module, class), in registry order.
_ORDER = (
    ("traced_concrete_access", "TracedConcreteAccess"),
    ("sharded_dlpack_export", "ShardedDlpackExport"),
    ("unsupported_dl_device", "UnsupportedDlDevice"),
    ("dlpack_without_host_fallback", "DlpackWithoutHostFallback"),
    ("removed_dlpack_api", "RemovedDlpackApi"),
    ("unguarded_dlpack_export", "UnguardedDlpackExport"),
    ("string_compared_jax_version", "StringComparedJaxVersion"),
    ("dlpack_import_on_host", "DlpackImportOnHost"),
)
_rules: tuple[type[Rule], ...] | None = None


def _all_rules() -> tuple[type[Rule], ...]:
    global _rules
    if _rules is None:
        _rules = tuple(getattr(importlib.import_module(f"{__name__}.{module}"), cls) for module, cls in _ORDER)
    return _rules


def __getattr__(name: str):
    if name == "RULES":
        return _all_rules()
    for module, cls in _ORDER:  # `from jax_codemod.rules import RemovedDlpackApi`, as before
        if name == cls:
            return getattr(importlib.import_module(f"{__name__}.{module}"), cls)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def rule_by_code(code: str) -> type[Rule] | None:
    return next((rule for rule in _all_rules() if rule.CODE == code.upper()), None)


__all__ = ["RULES", "rule_by_code"]
