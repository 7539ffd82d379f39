"""``codemod run --add-noqa``: baseline a tree's findings with ``# noqa: CODE`` comments, as ruff's
``--add-noqa``; every other byte stays, and the next ``--check`` is clean."""

from __future__ import annotations

import json
import shutil

import pytest
from jax_codemod.engine.noqa import annotate
from test_cli import BROKEN, REPO, invoke

LINES = (
    b"import jax\n"
    b"import torch\n"
    b"t = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))  # noqa: E501\n"
    b"u = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))  # a comment\n"
    b"v = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))\n"
)
EXPECTED = (
    b"import jax\n"
    b"import torch\n"
    b"t = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))  # noqa: E501, JAX005\n"
    b"u = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))  # a comment  # noqa: JAX005\n"
    b"v = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))  # noqa: JAX005\n"
)


def run(tmp_path, *args):
    return invoke(["run", "--no-cache", "--no-progress", *args], cwd=tmp_path)


def test_add_noqa_baselines_and_the_next_check_is_clean(tmp_path):
    (tmp_path / "a.py").write_bytes(LINES)
    code, _out, err = run(tmp_path, "--add-noqa", ".")
    assert code == 0, err
    assert "Added 3 noqa comments to 1 file" in err
    assert (tmp_path / "a.py").read_bytes() == EXPECTED
    code, out, err = run(tmp_path, "--check", ".")
    assert code == 0 and "JAX005" not in out, out + err
    # Again: nothing left to add, nothing changes.
    code, _out, err = run(tmp_path, "--add-noqa", ".")
    assert code == 0 and "Added 0 noqa comments to 0 files" in err
    assert (tmp_path / "a.py").read_bytes() == EXPECTED


@pytest.mark.parametrize(("ending", "head"), [
    (b"\r\n", b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'\n"),
    (b"\r", b"name = '\xc3\xa9t\xc3\xa9'\n"),
])
def test_line_endings_and_encodings_are_kept_byte_for_byte(tmp_path, ending, head):
    source = head + BROKEN
    source = source.replace(b"\n", ending)
    (tmp_path / "a.py").write_bytes(source)
    code, _out, err = run(tmp_path, "--add-noqa", ".")
    assert code == 0, err
    expected = source.replace(b"to_dlpack(x))" + ending, b"to_dlpack(x))  # noqa: JAX005" + ending)
    assert (tmp_path / "a.py").read_bytes() == expected != source


def test_a_line_that_cannot_take_a_comment_is_left_and_said(tmp_path):
    source = b'import jax\nw = f(jax.dlpack.to_dlpack(x), """\ntext""")\nv = jax.dlpack.to_dlpack(x) + \\\n  1\n'
    (tmp_path / "a.py").write_bytes(source)
    code, _out, err = run(tmp_path, "--add-noqa", ".")
    assert code == 1, err
    assert "a.py:2: no noqa added: the line ends inside a string" in err
    assert "a.py:4: no noqa added: the line ends inside a string or continues with a backslash" in err
    assert (tmp_path / "a.py").read_bytes() == source
    assert run(tmp_path, "--add-noqa", "--exit-zero", ".")[0] == 0


def test_annotate_refuses_what_would_change_the_code():
    # The finding's line says 1, but a comment there would end inside the string: refused, not written.
    class Finding:
        code, line, cell = "JAX005", 1, None

    done = annotate("a.py", b"x = '''\n'''\n", [Finding()])
    assert done.fixed is None and done.refused and done.added == 0


def test_a_notebook_gets_its_comment_in_the_cell(tmp_path):
    shutil.copy2(REPO / "tests" / "snapshots" / "notebooks" / "rewrite_with_outputs.ipynb", tmp_path / "nb.ipynb")
    before = json.loads((tmp_path / "nb.ipynb").read_text())
    code, out, err = run(tmp_path, "--check", "nb.ipynb")
    assert code == 1 and "nb.ipynb:cell" in out
    code, _out, err = run(tmp_path, "--add-noqa", "nb.ipynb")
    assert code == 0, err
    after = json.loads((tmp_path / "nb.ipynb").read_text())
    sources = ["".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
               for cell in after["cells"]]
    assert any("# noqa: JAX" in source for source in sources)
    # Only sources changed: outputs and metadata stay.
    assert [c.get("outputs") for c in after["cells"]] == [c.get("outputs") for c in before["cells"]]
    assert after["metadata"] == before["metadata"]
    code, out, err = run(tmp_path, "--check", "nb.ipynb")
    assert code == 0, out + err


def test_add_noqa_is_its_own_mode(tmp_path):
    (tmp_path / "a.py").write_bytes(BROKEN)
    for other in ("--check", "--dry-run", "--exit-non-zero-on-fix"):
        code, _out, err = run(tmp_path, "--add-noqa", other, ".")
        assert code == 2 and "--add-noqa" in err, other
    assert (tmp_path / "a.py").read_bytes() == BROKEN
