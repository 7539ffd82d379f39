"""The value analysis's layout (issue 54): ``values.Analysis`` is composed from one module per
question, no class of the analysis is over 800 lines, no two of those modules answer the same
question under one name, and every name the tool reads from ``values`` is still there."""

from __future__ import annotations

import ast
from pathlib import Path

from jax_codemod.analysis import values

ROOT = Path(__file__).resolve().parent.parent
ANALYSIS = ROOT / "codemods" / "analysis"


def test_no_class_of_the_analysis_is_over_800_lines():
    # One class per question, each readable in one sitting: `values.Analysis` was 2,373 lines
    # and 139 members, and each new shape became another method of it.
    long = []
    for path in sorted(ANALYSIS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 800:
                long.append(f"{path.name}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)")
    assert not long, long


def test_no_two_parts_of_the_analysis_define_one_name():
    # A method defined in two mixins would be answered by whichever comes first in the MRO,
    # silently: each name has one home.
    homes: dict[str, list[str]] = {}
    for part in values.Analysis.__mro__[:-1]:
        for name, member in vars(part).items():
            if name.startswith("__") and name.endswith("__") and not callable(member):
                continue  # each class's own __doc__, __module__, __dict__
            homes.setdefault(name, []).append(part.__name__)
    assert len(homes) > 130  # the scan sees the members
    assert {name: parts for name, parts in homes.items() if len(parts) > 1} == {}


def _names_read_from_values() -> set[str]:
    """What the tool's modules import from ``values`` or read as ``values.X`` / ``v.X``."""
    found = set()
    for path in [*sorted((ROOT / "codemods").rglob("*.py")), *sorted((ROOT / "cli").rglob("*.py"))]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "jax_codemod.analysis.values":
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module == "jax_codemod.analysis":
                aliases.update(alias.asname or alias.name for alias in node.names if alias.name == "values")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                found.add(node.attr)
    return found


def test_every_name_read_from_values_is_there():
    read = _names_read_from_values()
    assert {"Analysis", "Value", "MULTI", "CAPSULE_PRODUCERS", "DL_DEVICE_TYPES"} <= read  # the scan sees them
    assert sorted(name for name in read if not hasattr(values, name)) == []


def test_the_evaluation_budget_is_read_where_tests_set_it():
    # tests/test_value_depth.py sets values.MAX_ROUNDS: the evaluation that reads it lives in
    # values.py, not in a module that imported its own copy.
    assert values.Analysis._from_top.__module__ == values.__name__
    assert "MAX_ROUNDS" in values.Analysis._from_top.__code__.co_names
