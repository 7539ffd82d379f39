"""codemod: find and rewrite broken JAX interop code (DLPack, raw buffer pointers).

The package is laid out by stage, so the folder says where a line belongs:

- ``engine/``: discovery, configuration, the per-file pipeline, the runner, the cache, the fixer;
- ``analysis/``: what a file's code means (names, scopes, values), computed once per file;
- ``rules/``: one module per rule, each a query over the analysis plus a libcst rewrite;
- ``cli/`` (``cli/`` in the repository): the thin click front end.

``rule.py`` is the contract between them. Importing the package imports no rule: the
registry (``RULES``) loads on first use.
"""

from __future__ import annotations

__version__ = "0.3.0"  # the only place the version is written; pyproject.toml reads it

_LAZY = {
    "RULES": "jax_codemod.rules",
    "rule_by_code": "jax_codemod.rules",
    "Finding": "jax_codemod.rule",
    "FixSafety": "jax_codemod.rule",
    "Rule": "jax_codemod.rule",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = ["RULES", "Finding", "FixSafety", "Rule", "__version__", "rule_by_code"]
