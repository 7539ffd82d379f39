"""Hostile input, round two (issue 30): what an untrusted tree can do to the files, the globs and
the writes of a run. Each test is one of the attacks an adversarial pull request author tried."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
from jax_codemod.engine import wildmatch
from jax_codemod.engine.discovery import discover

BROKEN = "import jax\n\ndef f(x):\n    return jax.dlpack.to_dlpack(x)\n"


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)


# -- globs: git's wildmatch semantics, never a backtracking regex ----------------------------------

def test_a_backtracking_glob_in_an_ignore_file_answers_at_once(tmp_path):
    # `*a*a*...*b` against a name of forty `a`s: exponential for a regex, linear here. The run is in
    # a child process so that, where matching backtracks, the test fails by its timeout, not by hanging.
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*a" * 30 + "*b\n")
    (tmp_path / ("a" * 40 + ".py")).write_text(BROKEN)
    script = f"from jax_codemod.engine.discovery import discover; print(len(discover([{str(tmp_path)!r}]).files))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.strip() == "1", done.stderr


def test_a_backtracking_glob_in_the_config_answers_at_once(tmp_path):
    pattern = "*a" * 30 + "*b"
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.codemod]\nextend-exclude = ["{pattern}"]\n[tool.codemod.per-file-ignores]\n"{pattern}" = ["JAX005"]\n'
    )
    (tmp_path / ("a" * 40 + ".py")).write_text(BROKEN)
    done = subprocess.run([sys.executable, "-m", "jax_codemod.cli", "run", "--check", "."], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "JAX005" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("seed", range(4))
def test_ignore_patterns_match_what_git_check_ignore_says(tmp_path, seed):
    """Random gitignore patterns and paths, judged by git itself."""
    rng = random.Random(seed)
    atoms = ["a", "b", "*", "?", "/", "[ab]", "[!a]", "/@/", "\\*", "[a-c]", "c", ".", " "]
    names = ["a", "b", "c", "ab", "ba", "a.b", "aa", "abc", "*", "c.a"]
    for trial in range(25):
        patterns = []
        for _ in range(rng.randint(1, 3)):
            text = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 6)))
            text = text.replace("//", "/").replace("**", "*").replace("/@/", "/**/").replace("@", "")
            if rng.random() < 0.15:
                text = "**/" + text.lstrip("/")
            elif rng.random() < 0.15:
                text = text.rstrip("/") + "/**"
            patterns.append(("!" if rng.random() < 0.2 else "") + text)
        tree = tmp_path / str(trial)
        tree.mkdir()
        _git("init", "-q", cwd=tree)
        (tree / ".gitignore").write_text("\n".join(patterns) + "\n")
        paths = {}
        for _ in range(10):
            relative = "/".join(rng.choice(names) for _ in range(rng.randint(1, 4)))
            full = tree / relative
            try:
                if rng.random() < 0.3:
                    full.mkdir(parents=True, exist_ok=True)
                else:
                    full.parent.mkdir(parents=True, exist_ok=True)
                    full.touch()
            except OSError:  # a name already taken by the other kind
                continue
        for relative in {"/".join(p.relative_to(tree).parts) for p in tree.rglob("*") if ".git" not in p.parts}:
            paths[relative] = (tree / relative).is_dir()
        said = subprocess.run(["git", "check-ignore", "--stdin", "-z"], cwd=tree, input="\0".join(paths) + "\0",
                              capture_output=True, text=True, check=False).stdout
        ignored_by_git = {name for name in said.split("\0") if name}
        spec = wildmatch.GitIgnore.from_lines(patterns)
        for relative, is_dir in paths.items():
            assert (spec.check(relative, is_dir) is True) == (relative in ignored_by_git), (patterns, relative, is_dir)


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "expected"),
    [
        ("build/", "build", True, True),
        ("build/", "build", False, None),
        ("build/", "src/build/x.py", False, True),  # a folder pattern excludes what is inside
        ("/top.py", "top.py", False, True),
        ("/top.py", "sub/top.py", False, None),  # anchored
        ("top.py", "sub/top.py", False, True),  # a name at any depth
        ("a/**/b.py", "a/b.py", False, True),
        ("a/**/b.py", "a/x/y/b.py", False, True),
        ("a/**", "a", True, None),  # everything inside, not the folder itself
        ("a/**", "a/x.py", False, True),
        ("**/gen", "x/y/gen", True, True),
        ("*.py[co]", "m.pyc", False, True),
        ("[[:digit:]]*.py", "0x.py", False, True),
        ("\\#x.py", "#x.py", False, True),
        ("x.py\\ ", "x.py ", False, True),  # an escaped trailing space is kept
        ("x.py   ", "x.py", False, True),  # an unescaped one is trimmed
        ("[unterminated", "[unterminated", False, None),  # git aborts the pattern: it matches nothing
    ],
)
def test_gitignore_semantics(pattern, path, is_dir, expected):
    assert wildmatch.GitIgnore.from_lines([pattern]).check(path, is_dir) is expected


def test_a_negation_reincludes_but_not_inside_an_excluded_folder():
    spec = wildmatch.GitIgnore.from_lines(["*.py", "!keep.py", "gen/"])
    assert spec.check("keep.py", False) is False
    assert spec.check("gen/keep.py", False) is True


def test_an_ignore_file_with_too_many_patterns_is_not_read_and_says_so(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("".join(f"p{i}*.py\n" for i in range(wildmatch.MAX_PATTERNS + 1)))
    (tmp_path / "p1x.py").write_text(BROKEN)
    found = discover([str(tmp_path)])
    assert [os.path.basename(f) for f in found.files] == ["p1x.py"]
    assert any("more than 10000 patterns" in reason for _, reason in found.warnings)


def test_a_config_with_too_many_patterns_is_a_config_error(tmp_path):
    patterns = ", ".join(f'"p{i}*"' for i in range(wildmatch.MAX_PATTERNS + 1))
    (tmp_path / "pyproject.toml").write_text(f"[tool.codemod]\nextend-exclude = [{patterns}]\n")
    (tmp_path / "x.py").write_text(BROKEN)
    done = subprocess.run([sys.executable, "-m", "jax_codemod.cli", "run", "--check", "."], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "more than 10000 patterns" in done.stderr and "Traceback" not in done.stderr


# -- writes: never through a link, never a file that was not read ---------------------------------

def _checked(tree):
    from jax_codemod.engine.resolve import Options, resolve
    from jax_codemod.engine.runner import check_files

    [group] = resolve([str(tree)], Options())
    files = discover([str(tree)]).files
    return check_files(files, group.settings, jobs=1)


def test_a_file_swapped_for_a_link_after_the_read_is_not_written_through(tmp_path):
    tree, outside = tmp_path / "pr", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    (tree / "x.py").write_text(BROKEN)
    victim = outside / "victim.py"
    victim.write_text(BROKEN)  # the same bytes: the content check alone cannot tell them apart
    [result] = _checked(tree)
    assert result.changed
    (tree / "x.py").unlink()
    (tree / "x.py").symlink_to(victim)
    from jax_codemod.engine.runner import write_results

    [error] = write_results([result])
    assert "not written" in error.message
    assert victim.read_text() == BROKEN and (tree / "x.py").is_symlink()


def test_a_folder_swapped_for_a_link_after_the_read_is_not_written_through(tmp_path):
    tree, outside = tmp_path / "pr", tmp_path / "outside"
    (tree / "pkg").mkdir(parents=True)
    outside.mkdir()
    (tree / "pkg" / "x.py").write_text(BROKEN)
    (outside / "x.py").write_text(BROKEN)
    [result] = _checked(tree)
    os.rename(tree / "pkg", tmp_path / "moved")
    (tree / "pkg").symlink_to(outside, target_is_directory=True)
    from jax_codemod.engine.runner import write_results

    [error] = write_results([result])
    assert "not written" in error.message
    assert (outside / "x.py").read_text() == BROKEN


def test_a_file_the_user_links_inside_the_tree_is_still_fixed(tmp_path, monkeypatch):
    # A link inside the root to a file inside it is the project's own layout, not an attack.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real.py").write_text(BROKEN)
    (tmp_path / "alias.py").symlink_to("real.py")
    from jax_codemod.engine.runner import write_results

    results = _checked(tmp_path)
    assert [r.path for r in results if r.changed]
    assert write_results(results) == []
    assert "to_dlpack" not in (tmp_path / "real.py").read_text()
    assert (tmp_path / "alias.py").is_symlink()


def test_a_committed_file_named_like_a_temporary_is_never_deleted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(BROKEN)
    notes = tmp_path / ".notes.codemod-tmp"
    notes.write_text("my notes\n")
    lookalike = tmp_path / f".a.py.{'0' * 32}.codemod-tmp"  # the shape, without this user's tag
    lookalike.write_text("more notes\n")
    old = os.stat(notes).st_mtime - 3600
    for path in (notes, lookalike):
        os.utime(path, (old, old))
    done = subprocess.run([sys.executable, "-m", "jax_codemod.cli", "run", "."], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert "to_dlpack" not in (tmp_path / "a.py").read_text(), done.stdout + done.stderr
    assert notes.read_text() == "my notes\n" and lookalike.read_text() == "more notes\n"


def test_a_report_through_a_linked_folder_in_the_tree_is_refused(tmp_path, monkeypatch):
    tree, outside = tmp_path / "pr", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    (tree / "x.py").write_text(BROKEN)
    (tree / "out").symlink_to(outside, target_is_directory=True)
    monkeypatch.chdir(tree)
    done = subprocess.run([sys.executable, "-m", "jax_codemod.cli", "run", "--check", "--report", "out/r.json", "."],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "symbolic link" in done.stderr and list(outside.iterdir()) == []


def test_a_root_that_is_a_link_out_of_the_tree_is_refused(tmp_path, monkeypatch):
    tree, outside = tmp_path / "pr", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    (tree / ".git").mkdir()
    (outside / "victim.py").write_text(BROKEN)
    (tree / "src").symlink_to(outside, target_is_directory=True)
    monkeypatch.chdir(tree)
    done = subprocess.run([sys.executable, "-m", "jax_codemod.cli", "run", "src"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert (outside / "victim.py").read_text() == BROKEN
    assert done.returncode == 1 and "refused" in done.stdout + done.stderr, done.stdout + done.stderr
