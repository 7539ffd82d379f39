"""The parsed trees of a project's modules are kept across the checked files of a run (issue 55).

Each file of a model package reads the same base classes and mixins; when those modules together
were larger than the trees kept, each was dropped before the next file asked for it, and every
checked file parsed them all again (EasyDeL: 1,862 parses of 300 modules). A tree is kept by its
module's text, so a module whose text changed between two questions is parsed anew, never answered
from the tree of its old text.
"""

from __future__ import annotations

import ast
import hashlib

import pytest
from jax_codemod.analysis import project as project_analysis
from jax_codemod.analysis.project import Root, View, forget_trees

MIXINS = 4
# Each mixin's module: larger than a quarter of the 512 K characters once kept, together larger
# than all of them, and under the size above which a module is read as a library's.
MIXIN_CHARS = 180_000


def _mixin(index: int, value: int) -> str:
    methods = "".join(f"    def method_{n}(self, x):\n        return x + {n}\n\n" for n in range(MIXIN_CHARS // 44))
    return f"class Mixin{index}:\n    SCALE = {value}\n\n{methods}"


def _model(name: str) -> str:
    imports = "".join(f"from pkg.mixin{i} import Mixin{i}\n" for i in range(MIXINS))
    bases = ", ".join(f"Mixin{i}" for i in range(MIXINS))
    return f"{imports}\n\nclass {name}({bases}):\n    pass\n"


@pytest.fixture
def texts() -> dict[str, str]:
    found = {f"pkg/mixin{i}.py": _mixin(i, 1) for i in range(MIXINS)}
    found["pkg/__init__.py"] = ""
    found.update({f"pkg/model_{n}.py": _model(f"Model{n}") for n in range(3)})
    assert sum(len(t) for p, t in found.items() if "mixin" in p) > 2**19
    assert all(len(t) <= project_analysis.MAX_PARSED_CHARS for t in found.values())
    return found


@pytest.fixture
def parsed(monkeypatch) -> list[str]:
    found: list[str] = []
    original = project_analysis._parse
    monkeypatch.setattr(project_analysis, "_parse", lambda text, path: found.append(path) or original(text, path))
    forget_trees()
    yield found
    forget_trees()


def _root(texts: dict[str, str]) -> Root:
    def read(path: str) -> tuple[str | None, str]:
        text = texts.get(path)
        return text, hashlib.blake2b((text or "").encode()).hexdigest()

    return Root(lambda: sorted(texts), read)


def _scale(view: View, index: int) -> int:
    """``Mixin<index>.SCALE`` as the module's tree read by ``view`` holds it."""
    ctx = view.context(f"pkg/mixin{index}.py")
    assert ctx is not None
    cls = ctx.tree.body[0]
    assert isinstance(cls, ast.ClassDef) and isinstance(cls.body[0], ast.Assign)
    return cls.body[0].value.value


def test_the_modules_every_file_reads_are_parsed_once_a_run(texts, parsed):
    """Three model files read the same four mixins (~720 K characters): each mixin is parsed for
    the first file only (before, the 512 K kept dropped each one before the next file asked)."""
    root = _root(texts)
    for n in range(3):
        view = View(root, f"pkg/model_{n}.py")
        assert [_scale(view, i) for i in range(MIXINS)] == [1] * MIXINS
        view.release()
    assert sorted(parsed) == [f"pkg/mixin{i}.py" for i in range(MIXINS)]


def test_a_module_whose_text_changed_is_parsed_again(texts, parsed):
    """Between two files' questions (an editor's checks in one process, or a fix written in a
    run) a mixin's text changes: the next file reads the new text's tree, never the one kept
    for the old text; the mixins that did not change are not parsed again."""
    root = _root(texts)
    view = View(root, "pkg/model_0.py")
    assert [_scale(view, i) for i in range(MIXINS)] == [1] * MIXINS
    view.release()
    texts["pkg/mixin2.py"] = _mixin(2, 7)
    for reader in (View(root, "pkg/model_1.py"), View(_root(texts), "pkg/model_2.py")):
        assert [_scale(reader, i) for i in range(MIXINS)] == [1, 1, 7, 1]
        reader.release()
    assert sorted(parsed) == sorted([f"pkg/mixin{i}.py" for i in range(MIXINS)] + ["pkg/mixin2.py"])


def test_what_is_read_for_values_does_not_follow_what_is_kept(monkeypatch, texts, parsed):
    """The largest module read for its values is its own limit: a smaller budget for the trees
    kept still parses a module of that size (each time it is asked), a larger one still reads a
    module above the limit as a library's (no tree)."""
    monkeypatch.setattr(project_analysis, "TREE_CACHE_CHARS", 1000)
    root = _root(texts)
    for n in range(2):
        view = View(root, f"pkg/model_{n}.py")
        assert _scale(view, 0) == 1
        view.release()
    assert parsed == ["pkg/mixin0.py", "pkg/mixin0.py"]
    monkeypatch.setattr(project_analysis, "TREE_CACHE_CHARS", 2**24)
    texts["pkg/big.py"] = "X = 1\n" * (project_analysis.MAX_PARSED_CHARS // 6 + 1)
    view = View(_root(texts), "pkg/model_0.py")
    assert view.context("pkg/big.py") is None
    view.release()
    assert "pkg/big.py" not in parsed
