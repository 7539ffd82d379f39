"""A module imported on first attribute access.

libcst takes ~0.5 s to import, more than everything else a run does on a clean file; only a
file that gets a fix needs it. Rule modules write ``cst = lazy_module("libcst")`` (under
``TYPE_CHECKING`` they import the real one) and use ``cst.Name`` etc. as before: the import
happens the first time a rewrite touches ``cst``.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class _LazyModule:
    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str):
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name!r} ({state})>"


def lazy_module(name: str) -> ModuleType:
    """A stand-in for ``import name`` that imports it when an attribute is first read."""
    return _LazyModule(name)  # type: ignore[return-value]
