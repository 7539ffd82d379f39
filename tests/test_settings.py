"""Settings as ruff resolves them: the closest config per file, every value shown and validated.

Also the output options that must compose (``--statistics`` with every format and with a dry run's
patch), and the per-file results that must say what the run will really do (NUL bytes, a fix
refused for size, ``# noqa: JAX``, JAX004 after JAX002's fix with ``helper-module``).
"""

from __future__ import annotations

import json
import os

import pytest
from jax_codemod.cli.main import EXIT_ATTENTION, EXIT_OK, EXIT_USAGE
from jax_codemod.engine import pipeline
from test_cli import BROKEN, REPO, invoke
from test_ux import write

NESTED = {
    "pyproject.toml": "[tool.codemod]\n",
    "sub/pyproject.toml": '[tool.codemod]\nignore = ["JAX005"]\n',
    "sub/x.py": BROKEN,
    "top.py": BROKEN,
}


def findings(out: str) -> list[str]:
    return sorted(line.split(":")[0].replace("\\", "/") for line in out.splitlines() if "JAX0" in line)


# The closest config governs each file ------------------------------------------------------------


def test_nested_config_governs_its_files_however_they_are_named(tmp_path):
    write(tmp_path, NESTED)
    walked = invoke(["run", "--check", "."], cwd=tmp_path)
    named = invoke(["run", "--check", "sub/x.py"], cwd=tmp_path)
    assert findings(walked[1]) == ["top.py"], walked
    assert named[0] == EXIT_OK and findings(named[1]) == [], named
    # And the fix run leaves sub/x.py as the named run would.
    assert invoke(["run", "."], cwd=tmp_path)[0] == EXIT_OK
    assert (tmp_path / "sub/x.py").read_bytes() == BROKEN
    assert (tmp_path / "top.py").read_bytes() != BROKEN


def test_nested_config_excludes_apply_to_the_walk(tmp_path):
    write(tmp_path, {**NESTED, "sub/pyproject.toml": '[tool.codemod]\nextend-exclude = ["gen/"]\n',
                     "sub/gen/g.py": BROKEN})
    code, out, err = invoke(["run", "--show-files", "."], cwd=tmp_path)
    assert code == EXIT_OK, err
    assert sorted(out.split()) == ["sub/x.py", "top.py"]
    assert invoke(["run", "--check", "--force-exclude", "sub/gen/g.py"], cwd=tmp_path)[0] == EXIT_OK


def test_nested_config_per_file_ignores_are_relative_to_it(tmp_path):
    write(tmp_path, {**NESTED, "sub/pyproject.toml": '[tool.codemod.per-file-ignores]\n"x.py" = ["JAX005"]\n'})
    assert findings(invoke(["run", "--check", "."], cwd=tmp_path)[1]) == ["top.py"]


def test_config_flag_governs_every_file(tmp_path):
    write(tmp_path, NESTED)
    out = invoke(["run", "--check", "--config", "pyproject.toml", "."], cwd=tmp_path)[1]
    assert findings(out) == ["sub/x.py", "top.py"]


def test_show_settings_uses_the_closest_config_and_shows_target_and_cache(tmp_path, monkeypatch):
    monkeypatch.delenv("CODEMOD_CACHE_DIR", raising=False)
    write(tmp_path, {**NESTED, "sub/pyproject.toml": '[tool.codemod]\ntarget-jax-version = "0.7"\n'})
    code, out, err = invoke(["run", "--show-settings", "."], cwd=tmp_path)
    assert code == EXIT_OK, err
    assert "Settings for: sub/x.py" in out
    assert f"Config: {tmp_path / 'sub' / 'pyproject.toml'}" in out
    assert f"Target JAX: 0.7.0 (from {tmp_path / 'sub' / 'pyproject.toml'} [tool.codemod] target-jax-version)" in out
    # The cache is the root's (one per run), beside the config that governs the root.
    assert f"Cache directory: {tmp_path / '.codemod_cache'} (beside the config)" in out
    out = invoke(["run", "--show-settings", "--target-jax-version", "0.6", "--cache-dir", "c", "top.py"],
                 cwd=tmp_path)[1]
    assert "Target JAX: 0.6.0 (from --target-jax-version)" in out
    assert f"Cache directory: {tmp_path / 'c'} (--cache-dir)" in out
    assert "Cache directory: none (--no-cache)" in invoke(["run", "--show-settings", "--no-cache", "top.py"],
                                                          cwd=tmp_path)[1]


@pytest.mark.parametrize("value", ["99.0", "0.13", "1.0"])
def test_target_newer_than_every_known_release_is_a_usage_error(tmp_path, value):
    write(tmp_path, {"a.py": BROKEN})
    code, _, err = invoke(["run", "--check", "--target-jax-version", value, "a.py"], cwd=tmp_path)
    assert code == EXIT_USAGE and f"target-jax-version '{value}' is newer than every JAX release" in err
    write(tmp_path, {"pyproject.toml": f'[tool.codemod]\ntarget-jax-version = "{value}"\n'})
    code, _, err = invoke(["run", "--check", "a.py"], cwd=tmp_path)
    assert code == EXIT_USAGE and "pyproject.toml" in err and len(err.strip().splitlines()) == 1


def test_a_patch_release_of_the_newest_known_minor_is_accepted(tmp_path):
    from jax_codemod.analysis import jax_versions

    write(tmp_path, {"a.py": BROKEN})
    newest = jax_versions.NEWEST_KNOWN
    patch = f"{newest[0]}.{newest[1]}.{newest[2] + 1}"
    assert invoke(["run", "--check", "--target-jax-version", patch, "a.py"], cwd=tmp_path)[0] == EXIT_ATTENTION


# Configuration errors of every kind: exit 2, one line naming the file ---------------------------


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"[tool.codemod]\nselect = " + b"[" * 3000 + b"]" * 3000 + b"\n", "nested too deeply"),
        (b'[tool.codemod]\nselect = ["\xff"]\n', "not UTF-8"),
        (b"tool = 1  # not [tool.codemod]\n", "[tool] must be a table"),
        (b'[tool.codemod]\nselect = [\n', "invalid TOML"),
        (b"[tool.codemod]\n#" + b"x" * (2**20) + b"\n", "over the 1 MiB limit"),
        (b"[tool.codemod]\nselect = 1\n", "select must be a list of strings"),
    ],
    ids=["depth", "encoding", "tool-not-table", "syntax", "size", "type"],
)
def test_config_errors_are_one_line_and_exit_2(tmp_path, content, says):
    write(tmp_path, {"pyproject.toml": content, "a.py": b"x = 1\n"})
    code, _, err = invoke(["run", "--check", "a.py"], cwd=tmp_path)
    assert code == EXIT_USAGE, err
    assert len(err.strip().splitlines()) == 1, err[:500]
    assert "pyproject.toml" in err and says in err and "Traceback" not in err


# Output options that compose --------------------------------------------------------------------


def test_statistics_with_json_adds_rows_to_the_document(tmp_path):
    write(tmp_path, {"a.py": BROKEN, "b.py": BROKEN})
    code, out, _ = invoke(["run", "--check", "--statistics", "--format", "json", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    document = json.loads(out)
    assert document["statistics"] == [{"code": "JAX005", "name": "removed-dlpack-api", "count": 2, "fixed": 2}]
    assert len(document["findings"]) == 2
    assert "statistics" not in json.loads(invoke(["run", "--check", "--format", "json", "."], cwd=tmp_path)[1])


def test_statistics_never_replaces_the_patch_of_a_dry_run(tmp_path):
    write(tmp_path, {"a.py": BROKEN})
    plain = invoke(["run", "--dry-run", "a.py"], cwd=tmp_path)
    code, out, err = invoke(["run", "--dry-run", "--statistics", "a.py"], cwd=tmp_path)
    assert code == EXIT_ATTENTION and out == plain[1] and out.startswith("--- a/a.py")
    assert "    1        1  JAX005  removed-dlpack-api" in err


@pytest.mark.parametrize("output_format", ["github", "sarif"])
def test_statistics_with_github_and_sarif_keeps_the_document_on_stdout(tmp_path, output_format):
    write(tmp_path, {"a.py": BROKEN})
    plain = invoke(["run", "--check", "--format", output_format, "a.py"], cwd=tmp_path)[1]
    out, err = invoke(["run", "--check", "--statistics", "--format", output_format, "a.py"], cwd=tmp_path)[1:]
    assert out == plain and "JAX005  removed-dlpack-api" in err


# Per-file results that say what the run does ------------------------------------------------------


@pytest.mark.parametrize("where", [b"c = 1  # a\x00b\n", b'c = "a\x00b"\n', b"\x00\n"])
def test_a_nul_byte_is_reported_as_such_not_as_newer_syntax(tmp_path, where):
    write(tmp_path, {"n.py": b"import jax.dlpack\n" + where + b"d = jax.dlpack.to_dlpack(x)\n"})
    code, _, err = invoke(["run", "--check", "n.py"], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    assert "n.py:2: cannot parse: source contains a NUL byte" in err
    assert "Python 3.1" not in err


def test_a_file_whose_fix_is_refused_loses_the_fixable_mark(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "MAX_FIX_BYTES", 10)  # BROKEN is over it: the fix is refused
    write(tmp_path, {"a.py": BROKEN})
    code, out, err = invoke(["run", "--check", "a.py"], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    (line,) = [line for line in out.splitlines() if "JAX005" in line]
    assert "[*]" not in line
    assert "fix not applied" in err and "fixable" not in err
    document = json.loads(invoke(["run", "--check", "--format", "json", "a.py"], cwd=tmp_path)[1])
    assert [f["fix"] for f in document["findings"]] == ["none"]
    assert (tmp_path / "a.py").read_bytes() == BROKEN


@pytest.mark.parametrize(
    ("comment", "suppressed"),
    [("# noqa: JAX", True), ("# noqa: E501, JAX", True), ("# noqa: jax is fine here", False),
     ("# noqa: JAXX", False), ("# noqa: JAX005", True)],
)
def test_noqa_with_the_tool_prefix(tmp_path, comment, suppressed):
    write(tmp_path, {"s.py": f"import jax.dlpack\nc = jax.dlpack.to_dlpack(x)  {comment}\n"})
    code, out, _ = invoke(["run", "--check", "s.py"], cwd=tmp_path)
    assert (code == EXIT_OK) is suppressed, out


def test_helper_module_and_jax004_compose(tmp_path):
    source = (REPO / "tests/snapshots/sharded_dlpack_export/rewrite_helper_module.py").read_bytes()
    fixed = {}
    for helper in ("", 'helper-module = "interop_helpers"\n'):
        write(tmp_path, {"pyproject.toml": f'[tool.codemod]\ntarget-platforms = ["cpu", "tpu"]\n{helper}',
                         "a.py": source})
        document = json.loads(invoke(["run", "--dry-run", "--format", "json", "a.py"], cwd=tmp_path)[1])
        jax004 = [f for f in document["findings"] if f["code"] == "JAX004"]
        assert jax004 and all(f["applied"] and "resolved_by" not in f for f in jax004), (helper, jax004)
        fixed[bool(helper)] = document["diffs"][0]["diff"]
    # One helper module gives both rules' helpers; the gathered array is then made exportable.
    assert "from interop_helpers import ensure_exportable, ensure_single_device" in fixed[True] or (
        "from interop_helpers import ensure_single_device" in fixed[True]
        and "from interop_helpers import ensure_exportable" in fixed[True]
    )
    assert "def ensure_exportable" not in fixed[True] and "def ensure_exportable" in fixed[False]
    assert fixed[True].count("torch.from_dlpack(ensure_exportable(ensure_single_device(") == 2


def test_readme_documents_statistics_with_json():
    reference = (REPO / "docs" / "reference.md").read_text()
    assert '"statistics"' in reference


# The project configures itself --------------------------------------------------------------------


def test_the_project_root_has_nothing_to_rewrite_and_its_examples_still_do(tmp_path):
    from test_ux import codemod

    code, out, err = codemod("run", "--check", "--no-progress", ".", cwd=REPO,
                             env={**os.environ, "CODEMOD_CACHE_DIR": str(tmp_path)})
    assert code == EXIT_OK, out + err
    assert err.strip().splitlines()[-1].endswith("0 would change, 0 failed; no findings")
    # The README's first command names examples/: a named folder is walked although excluded.
    code, out, err = codemod("run", "--dry-run", "--no-progress", "examples/", cwd=REPO,
                             env={**os.environ, "CODEMOD_CACHE_DIR": str(tmp_path)})
    assert code == EXIT_ATTENTION and out.count("--- a/examples/") >= 4, err


def test_files_of_one_folder_share_their_group_asked_once(tmp_path, monkeypatch):
    """A walk hands over files folder by folder: the config and the declared jax range are
    looked up once per folder, and a nested folder's own declaration still gives its own group."""
    from jax_codemod.engine import resolve
    from jax_codemod.engine.config import TARGET_ENV_VAR

    monkeypatch.delenv(TARGET_ENV_VAR, raising=False)  # the suite pins its target: here the projects declare theirs
    write(tmp_path, {".git/HEAD": "", "pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax>=0.4.30"]\n[tool.codemod]\n',
                     "a.py": "", "b.py": "", "sub/requirements.txt": "jax<0.7\n", "sub/c.py": "", "sub/d.py": ""})
    asked = []
    real = resolve.declared_target
    monkeypatch.setattr(resolve, "declared_target", lambda path, *rest: asked.append(path) or real(path, *rest))
    resolver = resolve.Resolver(resolve.Options())
    top = [resolver.group_for(str(tmp_path / name)) for name in ("a.py", "b.py")]
    sub = [resolver.group_for(str(tmp_path / "sub" / name)) for name in ("c.py", "d.py")]
    assert top[0] is top[1] and sub[0] is sub[1] and top[0] is not sub[0]
    assert [os.path.basename(path) for path in asked] == ["a.py", "c.py"]
    assert (str(top[0].declared.target), str(sub[0].declared.target)) == (">=0.4.30", ">=0.4.30,<0.7.0")
