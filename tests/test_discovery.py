"""Which files a run looks at."""

from __future__ import annotations

import os
from pathlib import Path

from jax_codemod.engine.discovery import discover


def touch(path: Path, text: str = "x = 1\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def names(root: Path, found) -> list[str]:
    return sorted(os.path.relpath(p, root) for p in found.files)


def test_python_files_recursively_in_stable_order(tmp_path):
    for name in ["b.py", "a.py", "pkg/c.py", "pkg/sub/d.py", "notes.txt", "stub.pyi"]:
        touch(tmp_path / name)
    found = discover([str(tmp_path)])
    assert names(tmp_path, found) == ["a.py", "b.py", "pkg/c.py", "pkg/sub/d.py"]
    assert found.files == discover([str(tmp_path)]).files


def test_gitignore_is_honoured_with_negation_and_nesting(tmp_path):
    (tmp_path / ".git").mkdir()
    touch(tmp_path / ".gitignore", "generated/\n*_pb2.py\n!keep_pb2.py\n")
    touch(tmp_path / "pkg/.gitignore", "local.py\n")
    for name in ["a.py", "x_pb2.py", "keep_pb2.py", "generated/g.py", "pkg/local.py", "pkg/ok.py"]:
        touch(tmp_path / name)
    assert names(tmp_path, discover([str(tmp_path)])) == ["a.py", "keep_pb2.py", "pkg/ok.py"]


def test_gitignore_above_the_root_applies_inside_the_repository(tmp_path):
    (tmp_path / ".git").mkdir()
    touch(tmp_path / ".gitignore", "vendored/\n")
    touch(tmp_path / "src/vendored/v.py")
    touch(tmp_path / "src/m.py")
    assert names(tmp_path, discover([str(tmp_path / "src")])) == ["src/m.py"]


def test_a_named_root_inside_an_ignored_folder_is_walked(tmp_path):
    (tmp_path / ".git").mkdir()
    touch(tmp_path / ".gitignore", ".venv/\n")
    package = tmp_path / ".venv/lib/site-packages/pkg"
    touch(package / "mod.py")
    touch(package / "sub/inner.py")
    assert names(package, discover([str(package)])) == ["mod.py", "sub/inner.py"]
    assert names(tmp_path, discover([str(tmp_path)])) == []  # walked from above, it stays ignored


def test_hidden_virtualenv_and_build_folders_are_skipped(tmp_path):
    touch(tmp_path / "keep.py")
    for name in [".tox/t.py", ".venv/lib/v.py", "build/b.py", "node_modules/n.py", "__pycache__/c.py"]:
        touch(tmp_path / name)
    touch(tmp_path / "myenv/pyvenv.cfg", "home = /usr\n")
    touch(tmp_path / "myenv/lib/site.py")
    assert names(tmp_path, discover([str(tmp_path)])) == ["keep.py"]


def test_explicit_file_is_always_included(tmp_path):
    script = touch(tmp_path / "build/tool")
    assert discover([str(script)]).files == [str(script)]


def test_exclude_globs(tmp_path):
    touch(tmp_path / "a.py")
    touch(tmp_path / "third_party/t.py")
    touch(tmp_path / "pkg/test_x.py")
    found = discover([str(tmp_path)], exclude=["third_party", "test_*.py"])
    assert names(tmp_path, found) == ["a.py"]


def test_symlinks_out_of_root_and_loops_are_not_followed(tmp_path):
    outside = tmp_path / "outside"
    touch(outside / "secret.py")
    root = tmp_path / "root"
    touch(root / "a.py")
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "out.py").symlink_to(outside / "secret.py")
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "inner").mkdir()
    (root / "inner" / "alias.py").symlink_to(root / "a.py")
    found = discover([str(root)])
    assert names(root, found) == ["a.py"]


def test_missing_root_is_an_error_not_an_exception(tmp_path):
    found = discover([str(tmp_path / "missing"), str(tmp_path)])
    assert found.errors == [(str(tmp_path / "missing"), "no such file or directory")]


def test_same_file_twice_is_checked_once(tmp_path):
    path = touch(tmp_path / "a.py")
    assert discover([str(path), str(tmp_path)]).files == [str(path)]


def test_exclude_patterns_are_gitignore_style_relative_to_their_base(tmp_path):
    from jax_codemod.engine.discovery import Patterns

    for name in ["gen_a.py", "gen_keep.py", "b.py", "sub/build/x.py", "sub/gen_b.py", "third_party/t.py",
                 "sub/third_party/s.py"]:
        touch(tmp_path / name)
    patterns = Patterns.at(tmp_path, ["gen_*.py", "!gen_keep.py", "build/", "/third_party"])
    # From a working directory elsewhere: the patterns' base decides, not the paths as typed.
    found = discover([str(tmp_path / "sub"), str(tmp_path)], [patterns])
    assert names(tmp_path, found) == ["b.py", "gen_keep.py", "sub/third_party/s.py"]
