"""JAX007 proves a file clean from the blocks that spell a version, without parsing it whole
(``version_gates.may_compare_as_strings``), and reads the file whole whenever it is unsure: its
findings are always those of the whole-file check."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.version_gates import may_compare_as_strings
from jax_codemod.cli.main import main
from jax_codemod.engine import project
from jax_codemod.engine.pipeline import check_source
from jax_codemod.rules.string_compared_jax_version import StringComparedJaxVersion

RULE = StringComparedJaxVersion()

# Enough other code that the blocks spelling a version are a small share of the text.
FILLER = "".join(
    f"\n\ndef helper_{i}(x, y):\n    if x > y:\n        return [x, y, {{'k': (x, {i})}}]\n    return None\n"
    for i in range(40)
)


def never_parsed(text: str, path: str = "case.py") -> FileContext:
    """A context whose whole tree must not be built: reading ``ctx.tree`` fails the test."""

    def parse():
        raise AssertionError("the whole file was parsed")

    return FileContext(path, text, parse=parse)


def lazy(text: str, path: str = "case.py") -> FileContext:
    return FileContext(path, text, parse=lambda: ast.parse(text))


def whole(text: str, path: str = "case.py") -> list:
    """The findings of the whole-file check (the tree given, as when another rule parsed it)."""
    return RULE.check(FileContext(path, text, tree=ast.parse(text)))


def source(body: str) -> str:
    return textwrap.dedent(body).lstrip("\n") + FILLER


# Proven clean without the whole tree -------------------------------------------------------

CLEAN = {
    "print": """
        import jax
        print(jax.__version__)
    """,
    "parsed_as_version": """
        import jax
        from packaging import version
        NEW = version.parse(jax.__version__) >= version.parse("0.7")
    """,
    "equality_of_the_whole_string": """
        import jax
        EXACT = jax.__version__ == "0.4.30"
    """,
    "bound_name_never_ordered": """
        from jax import __version__ as jax_version
        import numpy as np

        MESSAGE = f"jax {jax_version}, numpy {np.__version__}"
    """,
    "in_a_method": """
        import jax

        class Report:
            '''A class cut into its members: only the one spelling a version is parsed.'''

            def first(self):
                return 1

            def versions(self):
                return {"jax": jax.__version__}

            def last(self):
                return [self.first(), (2, 3)]
    """,
    "brackets_in_strings_and_comments": """
        import jax
        PATTERN = "(#["  # an unclosed (
        DOC = '''
        [ not a bracket of code: {
        '''
        print(jax.__version__, ")")
    """,
    "in_a_comment_and_a_string": """
        import jax
        # jax.__version__ >= "0.7" was wrong: compare jax.__version_info__
        DOC = 'jax.__version__ >= "0.7"'
    """,
}


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_a_clean_file_is_proven_clean_without_the_whole_tree(name):
    text = source(CLEAN[name])
    ctx = never_parsed(text)
    assert RULE.check(ctx) == []
    assert not ctx.has_tree
    assert whole(text) == []  # what the whole-file check says too


def test_crlf_line_ends_are_read_as_lf():
    text = source(CLEAN["in_a_method"]).replace("\n", "\r\n")
    ctx = never_parsed(text)
    assert RULE.check(ctx) == [] and not ctx.has_tree


def test_the_engine_does_not_parse_a_clean_file_for_jax007(monkeypatch):
    from jax_codemod.engine import pipeline

    parsed = []
    real = pipeline._parse
    monkeypatch.setattr(pipeline, "_parse", lambda *args: parsed.append(args[2]) or real(*args))
    text = source(CLEAN["in_a_method"])
    assert check_source(text.encode(), "case.py", [RULE])[1] == []
    assert parsed == []


# Every finding still found, as the whole-file check finds it --------------------------------

FOUND = {
    "top_level": """
        import jax
        NEW = jax.__version__ >= "0.7"
    """,
    "in_a_method": """
        import jax

        class Backend:
            def first(self):
                return 1

            def export(self, x):
                if jax.__version__ < "0.7":
                    return x
                return None
    """,
    "in_a_class_header": """
        import jax

        class Backend(dict if jax.__version__ < "0.7" else object):
            def first(self):
                return 1
    """,
    "in_a_decorator": """
        import jax
        import pytest

        class Test:
            @pytest.mark.skipif(jax.__version__[:3] == "0.4", reason="old")
            def test_it(self):
                pass
    """,
    "name_imported_in_a_function": """
        def setup():
            from jax import __version__ as current
            return current

        def check():
            return current >= "0.4.30"
    """,
    "names_bound_in_a_chain": """
        import jax

        VERSION = jax.__version__

        ALIAS = VERSION

        def gate():
            return ALIAS.split(".")[1] > "6"
    """,
    "imported_as": """
        import jax.version.__version__ as spelled

        def gate():
            return "0.4" < spelled
    """,
    "in_an_fstring": """
        import jax
        MESSAGE = f"new: {jax.__version__ >= '0.7'}"
    """,
    "spread_over_lines": """
        import jax
        NEW = (
            jax.__version__
            >= "0.7"
        )
    """,
    "in_a_nested_class": """
        import jax

        class Outer:
            class Inner:
                NEW = jax.__version__ > "0.7"
    """,
    "semicolons": """
        import jax; NEW = jax.__version__ >= "0.7"; OLD = not NEW
    """,
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_every_finding_is_the_whole_file_checks(name):
    text = source(FOUND[name])
    expected = whole(text)
    assert expected, "the case must have a finding"
    ctx = lazy(text)
    assert may_compare_as_strings(ctx) is True
    assert RULE.check(ctx) == expected
    crlf = text.replace("\n", "\r\n")
    assert RULE.check(lazy(crlf)) == whole(crlf)


def test_a_star_import_of_a_project_module_binds_its_version_name(tmp_path):
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "consts.py").write_text("from jax import __version__ as JAX_VERSION\n")
    (root / "pkg" / "main.py").write_text(
        "import jax\nfrom pkg.consts import *\n\nprint(jax.__version__)\n\nOLD = JAX_VERSION < '0.7'\n" + FILLER
    )
    project.forget_roots()
    with CliRunner().isolation() as (out, err, _):
        code = main(["run", "--dry-run", "--no-cache", "--no-progress", "--format", "json", "--select", "JAX007", str(root)])
        document = json.loads(out.getvalue().decode())
    assert code in (0, 1), err.getvalue().decode()
    assert [(Path(f["path"]).name, f["line"]) for f in document["findings"]] == [("main.py", 6)]


# Where the text cannot be read with certainty: the whole file -------------------------------

UNSURE = {
    # A line at column 0 inside brackets reads as a statement of its own; its middle part
    # (`jax.__version__`) parses alone.
    "cut_inside_brackets": """
        import jax
        NEW = (
        jax.__version__
        >= "0.7"
        )
    """,
}


@pytest.mark.parametrize("name", sorted(UNSURE))
def test_an_unsure_reading_reads_the_file_whole(name):
    text = source(UNSURE[name])
    ctx = lazy(text)
    assert may_compare_as_strings(ctx) is True
    assert RULE.check(ctx) == whole(text) != []
    assert ctx.has_tree


def test_a_reading_of_most_of_the_text_is_none():
    # Parsing the one block that spells a version would cost what the whole parse does.
    text = "import jax\n\ndef main():\n    flag = jax.__version__\n"
    text += "".join(f"    step_{i} = flag and {i}\n" for i in range(400))
    ctx = lazy(text)
    assert may_compare_as_strings(ctx) is True
    assert RULE.check(ctx) == [] and ctx.has_tree


def test_a_star_import_it_cannot_read_reads_the_file_whole():
    # The module of a star import on another line than its `import *`: what it binds is unknown.
    text = source("""
        import jax
        from \\
            pkg.consts import *
        print(jax.__version__)
    """)
    ctx = lazy(text)
    assert may_compare_as_strings(ctx) is True
    assert RULE.check(ctx) == [] and ctx.has_tree


def test_a_star_import_read_from_its_line_binds_nothing_without_a_project():
    text = source("""
        import jax
        from pkg.consts import *
        from numpy import*
        print(jax.__version__, "from x import *")
    """)
    ctx = never_parsed(text)
    assert RULE.check(ctx) == [] and not ctx.has_tree


def test_a_lone_carriage_return_reads_the_file_whole():
    text = source(CLEAN["print"]).replace("\n", "\r", 1)
    ctx = lazy(text)
    assert may_compare_as_strings(ctx) is True
    assert RULE.check(ctx) == []
    assert ctx.has_tree


def test_a_bracket_count_it_cannot_place_reads_the_file_whole():
    # A string continued by a backslash: the count cannot tell where it ends.
    text = source("""
        import jax
        TEXT = "a \\
            b"
        print(jax.__version__)
    """)
    ctx = lazy(text)
    assert may_compare_as_strings(ctx) is True
    assert RULE.check(ctx) == [] and ctx.has_tree


def test_a_name_folded_to_ascii_reads_the_file_whole():
    # `ｖ` is `v` to Python: the text spells no `__version__` where the tree has one.
    text = source("""
        import jax
        NEW = jax.__\uff56ersion__ >= "0.7"
    """)
    ctx = lazy(text)
    assert may_compare_as_strings(ctx) is True
    assert RULE.check(ctx) == whole(text)
    assert ctx.has_tree


def test_a_name_spelled_in_two_ways_reads_the_file_whole():
    # `é` composed and `e` with a combining accent are one name to Python.
    text = source("""
        import jax
        v\u00e9 = jax.__version__
        NEW = ve\u0301 >= "0.7"
    """)
    ctx = lazy(text)
    assert may_compare_as_strings(ctx) is True
    assert RULE.check(ctx) == whole(text)
    assert ctx.has_tree


def test_a_block_that_does_not_parse_raises_the_files_error():
    text = source("""
        import jax
        NEW = jax.__version__ >= "0.7" +
    """)
    with pytest.raises(SyntaxError) as error:
        check_source(text.encode(), "case.py", [RULE])
    assert error.value.lineno == 2


def test_a_syntax_error_in_a_block_that_spells_no_version_is_not_read():
    # As JAX001's partial reading (docs/reference.md: codemod is not a linter for the rest of
    # the tree): the blocks read show the file clean.
    text = source("""
        import jax
        print(jax.__version__)

        def broken(:
            pass
    """)
    ctx = never_parsed(text)
    assert RULE.check(ctx) == [] and not ctx.has_tree


def test_a_class_is_read_in_its_members():
    # Only the method that spells a version is parsed: the broken one is never read (a test
    # class of thousands of lines costs what one method does).
    text = source("""
        import jax

        class TestVersions:
            def test_report(self):
                print(jax.__version__)

            def test_broken(self):
                return 1 +
    """)
    ctx = never_parsed(text)
    assert RULE.check(ctx) == [] and not ctx.has_tree
