"""Hostile names, messages and source lines in the output (issue 30, items 5 to 8).

What GitHub's runner takes for a command: a line that starts with `::` once its leading
whitespace is trimmed (.NET's ``TrimStart``: U+00A0, U+3000 and the other Unicode spaces too),
and the legacy ``##[command]data`` anywhere in a line. What a reviewer can be misled by: bidi
and zero-width characters (Unicode category Cf), raw in a name. And what GNU patch reads as
another file: an unquoted name with a space and no TAB after it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax_codemod.cli.main import EXIT_ATTENTION
from jax_codemod.cli.output import escape
from jax_codemod.engine.pipeline import quote_path, unified_diff
from jax_codemod.engine.resolve import Options
from jax_codemod.integrations.all_repos import render_markdown, summarise
from test_bulk import git, make_repo
from test_cli import BROKEN, FIXED, REPO, REPORT_ONLY, invoke

# Every character a printed line must never carry raw: controls (C0, DEL, C1), format
# characters (Cf: bidi controls, zero-width characters, the BOM, soft hyphen...), line and
# paragraph separators, lone surrogates.
FORBIDDEN_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs"}
FORMAT_CHARACTERS = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
CONTROLS = [chr(c) for c in [*range(1, 0x20), *range(0x7F, 0xA0)]]
SPACES = [" ", "\u00a0", "\u1680", *map(chr, range(0x2000, 0x200B)), "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"]
# .NET's char.IsWhiteSpace, which the runner's TrimStart uses, is a subset of Python's isspace.
RUNNER_COMMAND = re.compile(r"^\s*::")
# --format github's own annotations: the properties hold no `:` (it is %3A there).
ANNOTATION = re.compile(r"::(error|warning|notice) [^:]*::")


def assert_no_command(text: str, *, diff_headers: bool = False) -> None:
    """No line of ``text`` is a workflow command but an annotation of codemod's own, and no
    forbidden character is raw in it."""
    assert "##[" not in text, text
    for line in text.split("\n"):
        assert ANNOTATION.match(line) or not RUNNER_COMMAND.match(line), line
        if diff_headers and line.startswith(("--- ", "+++ ")):
            line = line.removesuffix("\t")  # git's own TAB after a name with a space
        raw = {char for char in line if unicodedata.category(char) in FORBIDDEN_CATEGORIES}
        assert not raw, (line, raw)


def diff_headers(patch: str) -> str:
    return "\n".join(line for line in patch.split("\n") if line.startswith(("--- ", "+++ ")))


# 5. Argument injection: after `--`, every argument is a path -------------------------------------


def test_arguments_after_double_dash_are_paths_even_dash(tmp_path):
    for name in ("--ignore=ALL", "-"):
        (tmp_path / name).write_bytes(BROKEN)
    code, out, _ = invoke(["run", "--check", "--no-cache", "--", "--ignore=ALL", "-"], stdin=b"", cwd=tmp_path)
    assert code == EXIT_ATTENTION
    assert [line.split(":")[0] for line in out.splitlines()] == ["--ignore=ALL", "-"]
    assert (tmp_path / "-").read_bytes() == BROKEN  # --check: nothing written, stdout not a source
    # An option after `--` (pre-commit's `args:` land there) is a usage error that says why.
    code, _, err = invoke(["run", "--check", "--", "--unsafe-fixes", "--ignore=ALL"], cwd=tmp_path)
    assert code == 2 and "'--unsafe-fixes' is not a file; after '--' every argument is a path" in err
    # Without `--`, `-` is still stdin.
    code, out, err = invoke(["run", "--check", "--no-cache", "-"], stdin=BROKEN, cwd=tmp_path)
    assert code == EXIT_ATTENTION and out.startswith("<stdin>:4:23: JAX005"), err


# 6. Commands in the CI log ------------------------------------------------------------------------

COMMANDS = ["\u00a0::add-mask::a", "\u3000::error::b", " \t::warning::c", "x ##[add-mask]d", "##[error]e"]


def test_escape_guards_both_command_forms_and_every_unsafe_character():
    assert escape("::error::x") == "\\x3a:error::x"
    assert escape("  ::error::x") == "  \\x3a:error::x"
    assert escape("\u00a0::error::x") == "\\xa0::error::x"  # the space itself is no longer a space
    assert escape("a ##[add-mask]b") == "a \\x23#[add-mask]b"
    assert escape("###[x") == "#\\x23#[x"
    assert escape("a\u202eb\u200bc\u2066d\ufeff") == "a\\u202eb\\u200bc\\u2066d\\ufeff"
    assert escape("\x1b[2J\x85\x9b\x7f") == "\\x1b[2J\\x85\\x9b\\x7f"
    assert escape("caf\udce9") == "caf\\xe9"  # a name's undecodable byte
    assert escape("x[::2], a::b, café ☃ 😀") == "x[::2], a::b, café ☃ 😀"  # readable text stays as it is
    for text in [*COMMANDS, *FORMAT_CHARACTERS, *CONTROLS, *SPACES]:
        assert_no_command(escape(text))


def _hostile_tree(root: Path, hostile: str) -> list[str]:
    """Files whose names, messages and source lines carry ``hostile``; the paths to check."""
    name = hostile.replace("/", "_").replace("\0", "_")
    in_source = re.sub("[\0\r\n]", "_", hostile)
    (root / f"{name}.py").write_bytes(BROKEN)
    (root / f"ref{name}.py").write_bytes(REPORT_ONLY)
    # JAX004's message quotes the expression, comment and all.
    (root / "m.py").write_bytes(
        b"import numpy as np\nimport jax.numpy as jnp\n\ndef f():\n    x = jnp.ones(3)\n"
        b"    return (np  # " + in_source.encode() + b"\n  ).from_dlpack(x)\n"
    )
    # A syntax error's source line is printed under it.
    (root / "bad.py").write_bytes(b"import jax.dlpack\nx = jax.dlpack.to_dlpack(y))  # " + in_source.encode() + b"\n")
    (root / f"empty{name}").mkdir()  # a root without Python files: a warning on stderr
    pattern = "".join(c if c.isalnum() else f"\\U{ord(c):08X}" for c in f"zz{in_source}/")
    (root / "pyproject.toml").write_text(f'[tool.codemod]\nextend-exclude = ["{pattern}"]\n')
    return [".", f"empty{name}"]


def _outputs(root: Path, paths: list[str]) -> list[tuple[list[str], str, bool]]:
    """(arguments, stdout + stderr, is a patch) for every format and listing."""
    base = ["run", "--no-cache", "--extend-select", "JAX004"]
    runs = [
        (["--check"], False),
        (["--check", "--format", "github"], False),
        (["--format", "github", "--dry-run"], False),
        (["--check", "--format", "json"], False),
        (["--check", "--format", "sarif"], False),
        (["--check", "--statistics"], False),
        (["--dry-run"], True),
        (["--show-files"], False),
        (["--show-settings"], False),
    ]
    found = []
    for flags, patch in runs:
        _code, out, err = invoke([*base, *flags, "--", *paths], cwd=root)
        found.append(([*flags], (diff_headers(out) + "\n" + err) if patch else out + err, patch))
    return found


@pytest.mark.parametrize("hostile", COMMANDS)
def test_no_format_prints_a_workflow_command_from_a_name_message_or_source_line(tmp_path, hostile):
    paths = _hostile_tree(tmp_path, hostile)
    for flags, text, patch in _outputs(tmp_path, paths):
        assert_no_command(text, diff_headers=patch), flags
    # And the reports still say what they must: the names are there, escaped.
    _code, out, err = invoke(["run", "--no-cache", "--check", "--extend-select", "JAX004", "--", *paths], cwd=tmp_path)
    assert re.search(r":4:\d+: JAX005", out) and "bad.py:2" in err and "no Python files found" in err


def test_json_and_sarif_still_carry_the_exact_names(tmp_path):
    name = "a ##[add-mask]b\u202e.py"
    (tmp_path / name).write_bytes(BROKEN)
    for fmt in ("json", "sarif"):
        code, out, _ = invoke(["run", "--no-cache", "--check", "--format", fmt, "."], cwd=tmp_path)
        assert code == EXIT_ATTENTION and "##[" not in out and "\u202e" not in out
        document = json.loads(out)
        if fmt == "json":
            assert document["findings"][0]["path"] == name
        else:
            uri = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            assert uri == "a%20%23%23%5Badd-mask%5Db%E2%80%AE.py"


def test_config_and_usage_errors_are_escaped(tmp_path):
    (tmp_path / "a.py").write_bytes(BROKEN)
    _code, out, err = invoke(["run", "--select", "X##[add-mask]y\u202e", "."], cwd=tmp_path)
    assert "X" in err
    assert_no_command(out + err)
    (tmp_path / "pyproject.toml").write_text('[tool.codemod]\nselect = ["\\u3000::error::z"]\n')
    code, out, err = invoke(["run", "."], cwd=tmp_path)
    assert code == 2 and "error" in err
    assert_no_command(out + err)


def test_all_repos_summary_is_escaped():
    records = [{"repository": "org\u202e/x ##[add-mask]y", "status": "failed", "files_changed": 0, "fixed": {},
                "findings_left": [], "reason": "codemod could not process every file: \u00a0::error::z\nq"}]
    markdown = render_markdown(summarise(records, Options()))
    assert_no_command(markdown)
    assert "x \\x23#[add-mask]y" in markdown and "\\nq" in markdown


# 7. Trojan Source names ---------------------------------------------------------------------------

TROJAN = "adm\u202eyp.nimda\u2066\u200b.py"  # reads "admin.py" backwards past the override


def test_bidi_and_zero_width_characters_in_names_are_shown_escaped(tmp_path):
    (tmp_path / TROJAN).write_bytes(BROKEN)
    shown = "adm\\u202eyp.nimda\\u2066\\u200b.py"
    code, out, _ = invoke(["run", "--no-cache", "--check", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION and out.startswith(f"{shown}:4:23: JAX005")
    _, out, _ = invoke(["run", "--no-cache", "--check", "--format", "github", "."], cwd=tmp_path)
    assert f"file={shown}," in out
    _, out, _ = invoke(["run", "--no-cache", "--show-files", "."], cwd=tmp_path)
    assert out == f"{shown}\n"
    for text in (out,):
        assert_no_command(text)


def test_diff_headers_quote_non_ascii_names_as_git_does(tmp_path):
    """``git diff`` (core.quotePath, its default) writes every non-ASCII byte in octal."""
    repo = make_repo(tmp_path / "repo", {TROJAN: b"x = 1\n", "café.py": b"x = 1\n"})
    for name in (TROJAN, "café.py"):
        (repo / name).write_bytes(b"x = 2\n")
    theirs = [line for line in git("diff", cwd=repo).split("\n") if line.startswith(("--- ", "+++ "))]
    ours = []
    for name in sorted((TROJAN, "café.py")):
        ours += diff_headers(unified_diff(b"x = 1\n", b"x = 2\n", name)).split("\n")
    assert sorted(ours) == sorted(theirs)
    assert quote_path(f"a/{TROJAN}") == b'"a/adm\\342\\200\\256yp.nimda\\342\\201\\246\\342\\200\\213.py"'


# 8. Diff headers GNU patch and git apply both read ------------------------------------------------

AWKWARD_NAMES = [
    "conf .py",
    "two  spaces.py",
    "tab\there.py",
    'quo"te.py',
    "back\\slash.py",
    "new\nline.py",
    "café ☃.py",
    "sp ace\u202e.py",
    " lead.py",
]


def test_diff_headers_are_git_s_headers(tmp_path):
    names = [n for n in AWKWARD_NAMES]
    repo = make_repo(tmp_path / "repo", {name: b"x = 1\n" for name in names})
    for name in names:
        (repo / name).write_bytes(b"x = 2\n")
    theirs = [line for line in git("diff", cwd=repo).split("\n") if line.startswith(("--- ", "+++ "))]
    ours = [line for name in names for line in diff_headers(unified_diff(b"x = 1\n", b"x = 2\n", name)).split("\n")]
    assert sorted(ours) == sorted(theirs)
    assert "--- a/conf .py\t" in ours


def test_patch_p1_and_git_apply_patch_the_named_files_only(tmp_path):
    # And a name git would print raw but the runner would read as a command: quoted, `#` as \043.
    files = {name: BROKEN for name in [*AWKWARD_NAMES, "log ##[add-mask]x.py"]}
    files.update({"conf": b"keep = 1\n", "two": b"keep = 2\n", "sp": b"keep = 3\n"})
    repo = make_repo(tmp_path / "repo", files)
    patch = subprocess.run(
        [sys.executable, "-m", "jax_codemod.cli", "run", "--dry-run", "--no-cache", "."],
        cwd=repo, capture_output=True, check=False, env=dict(os.environ, PYTHONPATH=str(REPO)),
    ).stdout
    tools = [["git", "apply", "-"], ["patch", "-p1", "--batch", "--no-backup-if-mismatch", "--forward"]]
    for tool in tools:
        git("checkout", "-q", ".", cwd=repo)
        done = subprocess.run(tool, input=patch, cwd=repo, check=False, capture_output=True)
        assert done.returncode == 0, (tool[0], done.stdout, done.stderr)
        for name, content in files.items():
            assert (repo / name).read_bytes() == (FIXED if content == BROKEN else content), (tool[0], name)
        assert not [p.name for p in repo.iterdir() if p.suffix in (".rej", ".orig")]
    assert b"--- a/conf .py\t\n+++ b/conf .py\t\n" in patch
    assert b'--- "a/log \\043#[add-mask]x.py"\t\n' in patch


def test_every_control_format_and_space_character_in_names_is_escaped_in_every_format(tmp_path):
    unsafe = [c for c in [*CONTROLS, *FORMAT_CHARACTERS, *SPACES[1:]] if c not in "/"]
    chunks = [unsafe[i:i + 40] for i in range(0, len(unsafe), 40)]  # names of at most 255 bytes
    for number, chunk in enumerate(chunks):
        (tmp_path / f"{number}{''.join(chunk)}.py").write_bytes(BROKEN)
    for flags, text, patch in _outputs(tmp_path, ["."]):
        assert_no_command(text, diff_headers=patch), flags
        if patch:
            assert "\\342\\200\\256" in text  # U+202E's UTF-8 bytes, quoted as git quotes them
        elif "--statistics" not in flags and "--show-settings" not in flags:
            assert "\\u202e" in text, flags  # shown, escaped (JSON's own escape in json and sarif)


# The fuzz: names and source lines with every control and format character ------------------------

HOSTILE_CHARS = st.sampled_from([*CONTROLS, *FORMAT_CHARACTERS, *SPACES, ":", "#", "[", "]", "a", "\\", '"'])
HOSTILE_TEXT = st.lists(HOSTILE_CHARS, min_size=1, max_size=12).map("".join).map(lambda t: t + "::x ##[add-mask]y")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(hostile=HOSTILE_TEXT)
def test_fuzz_no_output_carries_a_command_or_a_raw_unsafe_character(tmp_path_factory, hostile):
    root = tmp_path_factory.mktemp("fuzz")
    paths = _hostile_tree(root, hostile)
    for flags, text, patch in _outputs(root, paths):
        assert_no_command(text, diff_headers=patch), flags
