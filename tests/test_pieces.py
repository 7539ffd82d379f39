"""``analysis.pieces.parse`` gives what ``ast.parse`` gives, on real files and on the cuts that
must make it fall back to a whole parse; and it parses large files at a lower peak."""

from __future__ import annotations

import ast
import importlib.util
import tracemalloc
from pathlib import Path

import pytest

from jax_codemod.analysis import pieces


def _dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def _installed(*packages: str) -> list[Path]:
    files: list[Path] = []
    for package in packages:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.origin:
            files += sorted(Path(spec.origin).parent.rglob("*.py"))
    return files


def _outcome(parse, source, name):
    try:
        return _dump(parse(source, name))
    except SyntaxError as error:  # the same error, where the file does not parse
        return (type(error), error.msg, error.lineno, error.offset)


def _same(source: bytes | str, name: str = "<test>") -> None:
    assert _outcome(pieces.parse, source, name) == _outcome(lambda s, n: ast.parse(s, filename=n), source, name)


def test_large_installed_files_parse_as_whole():
    # jax's and numpy's largest modules: several pieces each, classes split at their members.
    large = [path for path in _installed("jax", "numpy") if path.stat().st_size > 2 * pieces.PIECE]
    assert len(large) >= 5
    for number, path in enumerate(sorted(large, key=lambda path: path.stat().st_size)[-8:]):
        source = path.read_bytes()
        _same(source.decode() if number % 2 else source, str(path))


def test_every_cut_point_of_real_files_with_small_pieces(monkeypatch):
    # Pieces of 200 bytes cut real modules at thousands of places: inside strings, brackets,
    # decorators, `else:` and class bodies. Each either parses as the file does or falls back.
    monkeypatch.setattr(pieces, "PIECE", 200)
    files = [path for path in _installed("jax") if 3_000 < path.stat().st_size < 25_000][:80]
    assert len(files) >= 40
    split = 0
    for path in files:
        source = path.read_bytes()
        try:
            expected = _dump(ast.parse(source))
        except SyntaxError:
            continue
        body = None
        try:
            body = pieces._pieces(source, str(path))
        except (SyntaxError, pieces._NotAClass):
            pass
        if body is not None:
            split += 1
            assert _dump(ast.Module(body=body, type_ignores=[])) == expected, path
        assert _dump(pieces.parse(source, str(path))) == expected, path
    assert split >= 0.8 * len(files)  # they are really parsed in pieces, not fallen back


def _class_module(members: int) -> str:
    methods = "".join(
        f"    @decorate({i})\n    def method_{i}(self, x):\n        '''Doc\nclass Fake:\n    def fake(self): ...'''\n"
        f"        if x:\n            return [x,\n{i}]\n        else:\n            return None\n\n"
        for i in range(members)
    )
    return f"import os\n\n\nclass Big(Base, metaclass=Meta):\n    '''A class.'''\n\n{methods}    # trailing\n\nx = 1\n"


def test_a_class_bigger_than_two_pieces_is_split_at_its_members(monkeypatch):
    monkeypatch.setattr(pieces, "PIECE", 300)
    source = _class_module(40).encode()
    body = pieces._pieces(source, "<big>")
    assert _dump(ast.Module(body=body, type_ignores=[])) == _dump(ast.parse(source))
    cls = body[1]
    assert isinstance(cls, ast.ClassDef) and len(cls.body) == 41
    assert (cls.end_lineno, cls.end_col_offset) == (cls.body[-1].end_lineno, cls.body[-1].end_col_offset)


@pytest.mark.parametrize(
    "source",
    [
        # a cut inside a triple-quoted string whose lines look like statements
        'x = """\n' + "def f():\n    pass\n" * 40 + '"""\ny = 1\n',
        # inside brackets
        "x = [\n" + "a,\n" * 200 + "]\n",
        # between a decorator spread over lines and its function
        ("@decorate(\n" + "    1,\n" * 100 + ")\ndef f():\n    pass\n") * 3,
        # an `else:` at column 0
        "if x:\n" + "    y = 1\n" * 100 + "else:\n" + "    y = 2\n" * 100,
        # a backslash continuation whose next line is at column 0
        "x = 1 + \\\n" + "y\n" + "z = 2\n" * 100,
    ],
)
def test_cuts_that_are_not_statement_starts_fall_back(monkeypatch, source):
    monkeypatch.setattr(pieces, "PIECE", 64)
    _same(source)
    _same(source.encode())


def test_errors_are_the_whole_parse_errors(monkeypatch):
    monkeypatch.setattr(pieces, "PIECE", 64)
    source = "x = 1\n" * 100 + "def f(:\n    pass\n" + "y = 2\n" * 100
    with pytest.raises(SyntaxError) as whole:
        ast.parse(source)
    with pytest.raises(SyntaxError) as split:
        pieces.parse(source, "<unknown>")
    assert (split.value.msg, split.value.lineno, split.value.offset) == (whole.value.msg, whole.value.lineno, whole.value.offset)


def test_encodings_and_line_ends(monkeypatch):
    monkeypatch.setattr(pieces, "PIECE", 64)
    body = "def f():\n    return 'é'\n\n" * 60
    _same(("# -*- coding: latin-1 -*-\n" + body).encode("latin-1"))  # parsed whole
    _same(("# coding: utf-8\n" + body).encode())
    _same("# coding: latin-1\n" + body)  # a text ignores its declaration
    _same(body.replace("\n", "\r\n").encode())
    _same(b"\xef\xbb\xbf" + body.encode())
    _same("\ufeff" + body)  # a text may not hold one: the same error


def test_the_peak_is_lower():
    large = max(_installed("jax"), key=lambda path: path.stat().st_size)
    source = large.read_bytes()
    assert len(source) > 4 * pieces.PIECE

    def peak(parse) -> int:
        tracemalloc.start()
        try:
            parse(source)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    assert peak(pieces.parse) < 0.8 * peak(ast.parse)
