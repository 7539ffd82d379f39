"""The architecture, enforced: rules import the analysis, the rule contract and the fixer; the
analysis imports none of them, nor the engine, nor the CLI; and no module of the tool imports
itself back through others, deferred (function-level) imports included. Imports under
``if TYPE_CHECKING:`` never run and are left out."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"jax_codemod": ROOT / "codemods", "jax_codemod.cli": ROOT / "cli"}


def _modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


MODULES = _modules()


class _Imports(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        self.found: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        ):
            for statement in node.orelse:
                self.visit(statement)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.update(alias.name for alias in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        # The tool spells every import absolutely; a relative one would escape this graph.
        assert not node.level, f"{self.module}: a relative import"
        for alias in node.names:
            name = f"{node.module}.{alias.name}"
            self.found.add(name if name in MODULES else node.module or "")


def _graph() -> dict[str, set[str]]:
    graph = {}
    for module, path in MODULES.items():
        visitor = _Imports(module)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        graph[module] = {name for name in visitor.found if name in MODULES and name != module}
    return graph


GRAPH = _graph()


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for start, children in graph.items():
        if start in index:
            continue
        work = [(start, iter(sorted(children)))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_circle_deferred_imports_included():
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


ANALYSIS = [m for m in MODULES if m.startswith("jax_codemod.analysis")]
# What the analysis may use besides itself: the lazy importer, and the package's own root.
ANALYSIS_MAY_IMPORT = {"jax_codemod", "jax_codemod._lazy"}


@pytest.mark.parametrize("module", ANALYSIS)
def test_the_analysis_imports_no_rule_engine_contract_or_cli(module):
    outside = {name for name in GRAPH[module]
               if not name.startswith("jax_codemod.analysis") and name not in ANALYSIS_MAY_IMPORT}
    assert outside == set(), f"{module} imports {sorted(outside)}"


@pytest.mark.parametrize("module", [m for m in MODULES if m.startswith("jax_codemod.rules")])
def test_rules_import_only_the_analysis_the_contract_the_fixer_and_rules(module):
    allowed = ("jax_codemod.analysis", "jax_codemod.rules", "jax_codemod.rule", "jax_codemod.engine.fixer",
               "jax_codemod._lazy")
    outside = {name for name in GRAPH[module] if not name.startswith(allowed) and name != "jax_codemod"}
    assert outside == set(), f"{module} imports {sorted(outside)}"


def test_the_engine_never_imports_a_rule_module():
    engine = [m for m in MODULES if m.startswith("jax_codemod.engine")]
    offenders = {m: sorted(n for n in GRAPH[m] if n.startswith("jax_codemod.rules.")) for m in engine}
    assert {m: n for m, n in offenders.items() if n} == {}


def test_no_function_of_the_analysis_is_over_80_lines():
    # The analysis is read by every rule's author: a function that does not fit on a screen
    # hides which question it answers (issue 29).
    long = []
    for path in sorted((ROOT / "codemods" / "analysis").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > 80:
                    long.append(f"{path.name}:{node.lineno} {node.name} ({length} lines)")
    assert not long, long


def test_jax001_is_a_rule_like_the_others():
    # Its docs, member table, check and messages; the text scans, the hoist rewrite, the
    # tracing answer and the partial reading live in modules of their own.
    lines = (ROOT / "codemods" / "rules" / "traced_concrete_access.py").read_text(encoding="utf-8").count("\n")
    assert lines < 600, lines


def test_contributing_names_every_module_of_the_analysis():
    # "Adding a rule" tells a new engineer where each question goes: a module it does not name
    # is one they will not find.
    guide = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    missing = [
        path.name
        for path in sorted((ROOT / "codemods" / "analysis").glob("*.py"))
        if path.name != "__init__.py" and path.name not in guide
    ]
    assert not missing, missing
