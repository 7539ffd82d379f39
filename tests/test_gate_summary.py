"""The project gate's root-wide "no module holds it" answer (issue 55).

The gate asks each file of a tree whether its imports lead to text a rule wants (export words,
placement words). In a root where no module holds such text (a repository with no JAX) every
answer is "no": after ``GATE_QUESTIONS_BEFORE_SUMMARY`` questions of one kind the root's texts
are read once and the rest are answered without a search. The answers are the search's, and a
check's questions (whose cached results depend on what a search read) never take the shortcut.
"""

from __future__ import annotations

import pytest
from jax_codemod.analysis import project as analysis_project
from jax_codemod.analysis.module_text import Reach
from jax_codemod.analysis.project import GATE_QUESTIONS_BEFORE_SUMMARY, Root

FILES = {
    "pkg/__init__.py": "from pkg.interop import to_host\nfrom pkg.data import load\n",
    "pkg/interop.py": "def to_host(x):\n    return x.tolist()\n",
    "pkg/data.py": "def load(path):\n    return open(path).read()\n",
}
IMPORTER = "from pkg import to_host, load\n\nto_host(load('x'))\n"


def root_of(files: dict[str, str]) -> Root:
    return Root(lambda: list(files), lambda path: (files.get(path), f"digest-{path}"))


@pytest.fixture
def searches(monkeypatch) -> list[str]:
    found: list[str] = []
    original = Reach.from_file

    def counted(self, key, *args, **kwargs):
        found.append(key)
        return original(self, key, *args, **kwargs)

    monkeypatch.setattr(Reach, "from_file", counted)
    return found


def holds_dlpack(text: str) -> bool:
    return "dlpack" in text


def test_a_root_without_the_text_answers_no_without_searching(searches):
    root = root_of({**FILES, **{f"tool{n}.py": IMPORTER for n in range(40)}})
    answers = [root.reaches("exports", holds_dlpack, f"tool{n}.py", IMPORTER, gate=True) for n in range(40)]
    assert answers == [False] * 40
    # Searched until the root had been asked enough, then answered from its texts.
    assert len(searches) == GATE_QUESTIONS_BEFORE_SUMMARY - 1
    # A file whose own text holds it (stdin's text is not the file's on disk) is searched:
    # the answer stays the search's.
    before = len(searches)
    assert root.reaches("exports", holds_dlpack, "tool0.py", "import dlpack\n" + IMPORTER, gate=True) is False
    assert len(searches) == before + 1
    # A check's question searches, whatever the gate learnt.
    before = len(searches)
    assert root.reaches("exports", holds_dlpack, "tool1.py", IMPORTER) is False
    assert len(searches) == before + 1


def test_where_a_module_holds_the_text_every_question_is_searched(searches):
    files = {**FILES, "pkg/interop.py": "import torch\n\ndef to_host(x):\n    return torch.from_dlpack(x)\n"}
    files.update({f"tool{n}.py": IMPORTER for n in range(40)})
    files["plain.py"] = "import os\n"
    root = root_of(files)
    for n in range(40):
        assert root.reaches("exports", holds_dlpack, f"tool{n}.py", IMPORTER, gate=True) is True
    assert root.reaches("exports", holds_dlpack, "plain.py", "import os\n", gate=True) is False
    assert len(searches) == 41


def test_the_gate_and_a_check_answer_alike_on_every_root(searches):
    """Each file of roots with and without the text, asked as the gate (summary from the first
    question) and as a check: the same answers."""
    with_text = {**FILES, "pkg/data.py": "def load(path):\n    return from_dlpack(path)\n"}
    for files in (FILES, with_text):
        importers = {"a.py": IMPORTER, "b.py": "import pkg.data\n\npkg.data.load(1)\n", "c.py": "import os\n"}
        checked = root_of({**files, **importers})
        gated = root_of({**files, **importers})
        gated._gate_asked = {"exports": GATE_QUESTIONS_BEFORE_SUMMARY}
        for path, text in importers.items():
            assert gated.reaches("exports", holds_dlpack, path, text, gate=True) == checked.reaches(
                "exports", holds_dlpack, path, text
            ), path


def test_the_summary_reads_each_module_once_a_run(monkeypatch):
    reads: list[str] = []
    files = {**FILES, **{f"tool{n}.py": IMPORTER for n in range(40)}}
    root = Root(lambda: list(files), lambda path: reads.append(path) or (files[path], "d"))
    monkeypatch.setattr(analysis_project, "GATE_QUESTIONS_BEFORE_SUMMARY", 1)
    for n in range(40):
        root.reaches("exports", holds_dlpack, f"tool{n}.py", IMPORTER, gate=True)
    assert sorted(reads) == sorted(files)
