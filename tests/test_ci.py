"""The CI side: patches that git applies, GitHub annotations, SARIF, the pre-commit hook."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import click
import jax_codemod
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_codemod.cli.main import EXIT_ATTENTION, EXIT_OK
from jax_codemod.cli.sarif import lines, replacements
from jax_codemod.engine.pipeline import FileResult
from test_bulk import git, make_repo
from test_cli import BROKEN, CLEAN, FIXED, REPO, REPORT_ONLY, invoke

MULTI = (
    b"import jax.dlpack\nimport torch\nfrom jax.dlpack import to_dlpack\n\n"
    b"a = torch.from_dlpack(jax.dlpack.to_dlpack(x))\n"
    b"keep = 1\n\n\n"
    b"b = torch.from_dlpack(to_dlpack(y))\n"
)
# Files whose patches broke git apply in the past, or easily could.
AWKWARD = {
    "plain.py": BROKEN,
    "pkg/sub/multi.py": MULTI,
    "crlf.py": BROKEN.replace(b"\n", b"\r\n"),
    "cr_only.py": BROKEN.replace(b"\n", b"\r"),
    "formfeed.py": b"# section\x0cone\n" + BROKEN + b"z = 1\x0c\n",
    "no_newline.py": BROKEN.rstrip(b"\n"),
    "latin1.py": b"# -*- coding: latin-1 -*-\n" + BROKEN.rstrip(b"\n") + b"  # caf\xe9\n",
    "utf8.py": "# café ☃\n".encode() + BROKEN + "s = 'é'\n".encode(),
    "clean.py": CLEAN,
    "ref.py": REPORT_ONLY,
}


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(root).parts
    }


# --dry-run is a patch git applies ------------------------------------------------------------


def test_dry_run_patch_applied_to_a_clean_checkout_equals_the_in_place_result(tmp_path):
    original = make_repo(tmp_path / "original", AWKWARD)
    in_place = tmp_path / "in-place"
    git("clone", "-q", str(original), str(in_place), cwd=tmp_path)
    code, out, _ = invoke(["run", "--no-cache", "."], cwd=in_place)
    assert code == EXIT_ATTENTION and out.startswith("ref.py:3:14: JAX005")  # no automatic fix

    patch = subprocess.run(
        [sys.executable, "-m", "jax_codemod.cli", "run", "--dry-run", "--no-cache", "."],
        check=False,
        cwd=original,
        capture_output=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert patch.returncode == EXIT_ATTENTION, patch.stderr
    assert patch.stdout.count(b"\n--- a/") + patch.stdout.startswith(b"--- a/") == 8
    subprocess.run(["git", "apply", "--index", "-"], input=patch.stdout, cwd=original, check=True)
    assert tree_bytes(original) == tree_bytes(in_place)
    assert tree_bytes(original) != AWKWARD  # something did change
    assert (original / "plain.py").read_bytes() == FIXED


# --format github -------------------------------------------------------------------------------

ANNOTATION = re.compile(r"^::(?P<level>error|warning|notice) (?P<props>[^:]*)::(?P<message>.*)$")


def unescape(text: str) -> str:
    for escaped, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, char)
    return text


def parse_annotations(out: str) -> list[dict]:
    annotations = []
    for line in out.splitlines():
        match = ANNOTATION.match(line)
        assert match, line
        props = dict(item.split("=", 1) for item in match["props"].split(","))
        annotations.append(
            {
                "level": match["level"],
                **{key: unescape(value) for key, value in props.items()},
                "message": unescape(match["message"]),
            }
        )
    return annotations


def test_github_annotations_one_per_finding(tmp_path):
    (tmp_path / "broken.py").write_bytes(BROKEN)
    (tmp_path / "odd, name: 100%.py").write_bytes(REPORT_ONLY)
    (tmp_path / "bad.py").write_bytes(b"x = jax.dlpack.to_dlpack(\n")
    code, out, err = invoke(["run", "--check", "--format", "github", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    assert "files scanned" in err and "files scanned" not in out
    annotations = parse_annotations(out)
    by_file = {a["file"]: a for a in annotations}
    assert set(by_file) == {"broken.py", "odd, name: 100%.py", "bad.py"}
    broken = by_file["broken.py"]
    assert (broken["level"], broken["line"], broken["col"], broken["title"]) == ("error", "4", "23", "JAX005")
    assert (broken["endLine"], broken["endColumn"]) == ("4", "45")  # the to_dlpack(x) call
    assert broken["message"].startswith("JAX005 ") and broken["message"].endswith("[*]")
    assert by_file["odd, name: 100%.py"]["line"] == "3"
    assert by_file["bad.py"]["title"] == "codemod" and "cannot parse" in by_file["bad.py"]["message"]


def test_github_fix_mode_marks_fixed_findings_as_notices(tmp_path):
    (tmp_path / "broken.py").write_bytes(BROKEN)
    (tmp_path / "ref.py").write_bytes(REPORT_ONLY)
    code, out, _ = invoke(["run", "--format", "github", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    levels = {a["file"]: a["level"] for a in parse_annotations(out)}
    assert levels == {"broken.py": "notice", "ref.py": "error"}
    assert (tmp_path / "broken.py").read_bytes() == FIXED


def test_github_dry_run_prints_annotations_not_the_patch(tmp_path):
    (tmp_path / "broken.py").write_bytes(BROKEN)
    code, out, _ = invoke(["run", "--dry-run", "--format", "github", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    assert [a["file"] for a in parse_annotations(out)] == ["broken.py"]
    assert (tmp_path / "broken.py").read_bytes() == BROKEN


def test_github_clean_tree_prints_nothing_and_exits_zero(tmp_path):
    (tmp_path / "clean.py").write_bytes(CLEAN)
    assert invoke(["run", "--check", "--format", "github", tmp_path])[:2] == (EXIT_OK, "")


# --format sarif ----------------------------------------------------------------------------------

# The parts of the SARIF 2.1.0 schema (https://json.schemastore.org/sarif-2.1.0.json) that the
# output uses, with the same required properties, types, enums and bounds. Objects are closed
# where the official schema lists their properties, so a misspelt key fails here too.
LEVEL = {"enum": ["none", "note", "warning", "error"]}
MESSAGE = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "markdown": {"type": "string"}, "id": {"type": "string"}},
    "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
}
MULTIFORMAT = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "markdown": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}
ARTIFACT_LOCATION = {
    "type": "object",
    "properties": {"uri": {"type": "string", "format": "uri-reference"}, "uriBaseId": {"type": "string"}},
    "additionalProperties": False,
}
REGION = {
    "type": "object",
    "properties": {
        "startLine": {"type": "integer", "minimum": 1},
        "startColumn": {"type": "integer", "minimum": 1},
        "endLine": {"type": "integer", "minimum": 1},
        "endColumn": {"type": "integer", "minimum": 1},
        "charOffset": {"type": "integer", "minimum": -1},
        "charLength": {"type": "integer", "minimum": 0},
    },
    "additionalProperties": False,
}
PHYSICAL_LOCATION = {
    "type": "object",
    "properties": {"artifactLocation": ARTIFACT_LOCATION, "region": REGION},
    "anyOf": [{"required": ["artifactLocation"]}, {"required": ["address"]}],
    "additionalProperties": False,
}
LOCATION = {
    "type": "object",
    "properties": {"physicalLocation": PHYSICAL_LOCATION},
    "additionalProperties": False,
}
REPLACEMENT = {
    "type": "object",
    "properties": {
        "deletedRegion": REGION,
        "insertedContent": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
    },
    "required": ["deletedRegion"],
    "additionalProperties": False,
}
FIX = {
    "type": "object",
    "properties": {
        "description": MESSAGE,
        "artifactChanges": {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {
                "type": "object",
                "properties": {
                    "artifactLocation": ARTIFACT_LOCATION,
                    "replacements": {"type": "array", "minItems": 1, "items": REPLACEMENT},
                },
                "required": ["artifactLocation", "replacements"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["artifactChanges"],
    "additionalProperties": False,
}
RESULT = {
    "type": "object",
    "properties": {
        "ruleId": {"type": "string"},
        "ruleIndex": {"type": "integer", "minimum": -1},
        "level": LEVEL,
        "message": MESSAGE,
        "locations": {"type": "array", "items": LOCATION},
        "fixes": {"type": "array", "uniqueItems": True, "items": FIX},
        "properties": {"type": "object"},
    },
    "required": ["message"],
    "additionalProperties": False,
}
RULE = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "shortDescription": MULTIFORMAT,
        "fullDescription": MULTIFORMAT,
        "help": MULTIFORMAT,
        "defaultConfiguration": {
            "type": "object",
            "properties": {"enabled": {"type": "boolean"}, "level": LEVEL},
            "additionalProperties": False,
        },
        "properties": {"type": "object"},
    },
    "required": ["id"],
    "additionalProperties": False,
}
SARIF_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"enum": ["2.1.0"]},
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "tool": {
                        "type": "object",
                        "properties": {
                            "driver": {
                                "type": "object",
                                "properties": {
                                    "name": {"type": "string"},
                                    "version": {"type": "string"},
                                    "semanticVersion": {"type": "string"},
                                    "rules": {"type": "array", "uniqueItems": True, "items": RULE},
                                },
                                "required": ["name"],
                                "additionalProperties": False,
                            }
                        },
                        "required": ["driver"],
                        "additionalProperties": False,
                    },
                    "originalUriBaseIds": {"type": "object", "additionalProperties": ARTIFACT_LOCATION},
                    "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
                    "invocations": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "executionSuccessful": {"type": "boolean"},
                                "toolExecutionNotifications": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "level": LEVEL,
                                            "message": MESSAGE,
                                            "locations": {"type": "array", "items": LOCATION},
                                        },
                                        "required": ["message"],
                                        "additionalProperties": False,
                                    },
                                },
                            },
                            "required": ["executionSuccessful"],
                            "additionalProperties": False,
                        },
                    },
                    "results": {"type": "array", "items": RESULT},
                },
                "required": ["tool"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["version", "runs"],
    "additionalProperties": False,
}


def sarif_run(cwd: Path, *flags) -> tuple[int, dict]:
    code, out, _ = invoke(["run", "--format", "sarif", "--no-cache", *flags, "."], cwd=cwd)
    document = json.loads(out)
    jsonschema.validate(document, SARIF_SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return code, document


def apply_by_offsets(text: str, replacements_: list[dict]) -> str:
    for replacement in sorted(replacements_, key=lambda r: r["deletedRegion"]["charOffset"], reverse=True):
        region = replacement["deletedRegion"]
        inserted = replacement.get("insertedContent", {}).get("text", "")
        text = text[: region["charOffset"]] + inserted + text[region["charOffset"] + region["charLength"] :]
    return text


def offset_of(text: str, line: int, column: int) -> int:
    """The character offset of a 1-based SARIF line and column."""
    return sum(len(piece) for piece in lines(text)[: line - 1]) + column - 1


def apply_by_lines(text: str, replacements_: list[dict]) -> str:
    ordered = sorted(replacements_, key=lambda r: (r["deletedRegion"]["startLine"]), reverse=True)
    for replacement in ordered:
        region = replacement["deletedRegion"]
        start = offset_of(text, region["startLine"], region["startColumn"])
        end = offset_of(text, region["endLine"], region["endColumn"])
        text = text[:start] + replacement.get("insertedContent", {}).get("text", "") + text[end:]
    return text


def test_sarif_shape_rules_locations_and_fixes(tmp_path):
    for name in ("plain.py", "pkg/sub/multi.py", "ref.py", "clean.py", "formfeed.py", "utf8.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(AWKWARD[name])
    (tmp_path / "bad.py").write_bytes(b"x = jax.dlpack.to_dlpack(\n")
    code, document = sarif_run(tmp_path, "--dry-run")
    assert code == EXIT_ATTENTION
    (run,) = document["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [rule.CODE for rule in jax_codemod.RULES]
    base = urllib.parse.urlparse(run["originalUriBaseIds"]["%SRCROOT%"]["uri"])
    assert Path(urllib.parse.unquote(base.path)) == tmp_path.resolve()

    fixed_files = {}
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        (location,) = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        path = tmp_path / urllib.parse.unquote(artifact["uri"])
        text = path.read_bytes().decode("utf-8")
        region = location["physicalLocation"]["region"]
        flagged = text[offset_of(text, region["startLine"], region["startColumn"]) :]
        assert flagged.startswith(("jax.dlpack.to_dlpack", "to_dlpack", "from jax.dlpack import to_dlpack"))
        if not result["properties"]["applied"]:
            assert "fixes" not in result and path.name == "ref.py"
            continue
        (fix,) = result["fixes"]
        (change,) = fix["artifactChanges"]
        assert change["artifactLocation"] == artifact
        fixed_files[path] = change["replacements"]
    assert {p.name for p in fixed_files} == {"plain.py", "multi.py", "formfeed.py", "utf8.py"}

    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert "cannot parse" in notification["message"]["text"]
    assert run["invocations"][0]["executionSuccessful"] is False

    # The fixes, applied by offsets or by lines and columns, give exactly what the run writes.
    expected = {path: path.read_bytes().decode("utf-8") for path in fixed_files}
    invoke(["run", "--no-cache", "."], cwd=tmp_path)
    for path, replacements_ in fixed_files.items():
        after = path.read_bytes().decode("utf-8")
        assert apply_by_offsets(expected[path], replacements_) == after
        assert apply_by_lines(expected[path], replacements_) == after


def test_sarif_fix_mode_reports_fixed_findings_as_notes_without_fixes(tmp_path):
    (tmp_path / "broken.py").write_bytes(BROKEN)
    code, document = sarif_run(tmp_path)
    assert code == EXIT_OK
    (result,) = document["runs"][0]["results"]
    assert (result["level"], result["properties"]["applied"]) == ("note", True)
    assert "fixes" not in result


def test_sarif_paths_outside_the_working_directory_are_absolute_uris(tmp_path):
    inside = tmp_path / "work"
    inside.mkdir()
    (tmp_path / "ref.py").write_bytes(REPORT_ONLY)
    _, out, _ = invoke(["run", "--format", "sarif", "--check", tmp_path / "ref.py"], cwd=inside)
    (result,) = json.loads(out)["runs"][0]["results"]
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": (tmp_path / "ref.py").as_uri()}


TEXT_LINES = st.lists(st.sampled_from(["a", "b", "é", "\x0c", ""]).map(lambda s: s), max_size=6).map("".join)
ENDINGS = st.sampled_from(["\n", "\r\n", "\r", ""])
SOURCES = st.lists(st.tuples(TEXT_LINES, ENDINGS), max_size=8).map(lambda ls: "".join(t + e for t, e in ls))


@settings(max_examples=150, deadline=None)
@given(before=SOURCES, after=SOURCES)
def test_sarif_replacements_rebuild_any_edit(before, after):
    result = FileResult(path="f.py", source=before.encode(), fixed=after.encode())
    found = replacements(result)
    assert apply_by_offsets(before, found) == after
    assert apply_by_lines(before, found) == after
    jsonschema.validate(found, {"type": "array", "items": REPLACEMENT})


# The pre-commit hook ----------------------------------------------------------------------------

HOOK_SOURCES = (".pre-commit-hooks.yaml", "pyproject.toml", "README.md", "cli", "codemods")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """This working tree as a hook repository pre-commit can clone (uncommitted edits included)."""
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in HOOK_SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, repo / name)
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "hook", cwd=repo)
    return repo, git("rev-parse", "HEAD", cwd=repo).strip(), tmp_path_factory.mktemp("pre-commit-home")


def pre_commit(project: Path, home: Path, *args):
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    env.pop("CODEMOD_CACHE_DIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", *args], check=False, cwd=project, capture_output=True, text=True, env=env
    )
    return done.returncode, done.stdout + done.stderr


@pytest.fixture
def project(tmp_path, hook_repo):
    repo, rev, _home = hook_repo
    project = make_repo(tmp_path / "project", {"README.txt": b"hello\n"})
    config = f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n      - id: codemod\n"
    (project / ".pre-commit-config.yaml").write_text(config)
    git("add", ".pre-commit-config.yaml", cwd=project)
    return project


def test_pre_commit_hook_fixes_a_staged_file(project, hook_repo):
    _repo, _rev, home = hook_repo
    (project / "broken.py").write_bytes(BROKEN)
    (project / "clean.py").write_bytes(CLEAN)
    git("add", "broken.py", "clean.py", cwd=project)
    code, out = pre_commit(project, home, "run")
    assert code == 1, out  # pre-commit fails a hook that modified files, so the fix gets reviewed
    assert "codemod" in out and "files were modified by this hook" in out
    assert (project / "broken.py").read_bytes() == FIXED
    assert (project / "clean.py").read_bytes() == CLEAN
    assert (project / ".codemod_cache" / ".gitignore").exists()
    assert "codemod_cache" not in git("status", "--porcelain", cwd=project)

    git("add", "broken.py", cwd=project)
    code, out = pre_commit(project, home, "run")
    assert code == 0, out


def test_pre_commit_hook_fixes_a_staged_notebook(project, hook_repo):
    _repo, _rev, home = hook_repo
    notebook = REPO / "tests" / "snapshots" / "notebooks" / "rewrite_with_outputs.ipynb"
    shutil.copy2(notebook, project / "nb.ipynb")
    git("add", "nb.ipynb", cwd=project)
    code, out = pre_commit(project, home, "run")
    assert code == 1 and "files were modified by this hook" in out, out
    fixed = (project / "nb.ipynb").read_bytes()
    assert fixed != notebook.read_bytes() and b"np.from_dlpack(x)" in fixed


def test_pre_commit_hook_without_staged_python_files_is_skipped(project, hook_repo):
    _repo, _rev, home = hook_repo
    (project / "notes.txt").write_text("jax.dlpack.to_dlpack\n")
    git("add", "notes.txt", cwd=project)
    code, out = pre_commit(project, home, "run")
    assert code == 0, out
    assert "(no files to check)Skipped" in out


def test_pre_commit_hook_fails_on_a_finding_it_cannot_fix(project, hook_repo):
    _repo, _rev, home = hook_repo
    (project / "ref.py").write_bytes(REPORT_ONLY)
    git("add", "ref.py", cwd=project)
    code, out = pre_commit(project, home, "run")
    assert code == 1, out
    assert "ref.py:3:14: JAX005" in out
    assert (project / "ref.py").read_bytes() == REPORT_ONLY


def test_pre_commit_hook_leaves_excluded_files_alone(project, hook_repo):
    """pre-commit names every staged file; the hook's --force-exclude keeps the project's excludes."""
    _repo, _rev, home = hook_repo
    (project / "pyproject.toml").write_text('[tool.codemod]\nextend-exclude = ["vendor/"]\n')
    (project / "vendor").mkdir()
    (project / "vendor" / "lib.py").write_bytes(BROKEN)
    (project / "mine.py").write_bytes(BROKEN)
    git("add", "-A", cwd=project)
    code, out = pre_commit(project, home, "run")
    assert code == 1, out
    assert (project / "vendor" / "lib.py").read_bytes() == BROKEN
    assert (project / "mine.py").read_bytes() == FIXED


def test_pre_commit_hook_file_names_are_never_options(project, hook_repo):
    """pre-commit appends the staged names after the entry; the entry's trailing ``--`` makes
    an executable Python file named like an option (identify types it by its shebang) a file."""
    _repo, _rev, home = hook_repo
    script = b"#!/usr/bin/env python3\n" + BROKEN
    for name in ("--ignore=ALL", "--cache-dir=..", "-"):
        (project / name).write_bytes(script)
        (project / name).chmod(0o755)
    git("add", "--", "--ignore=ALL", "--cache-dir=..", "-", cwd=project)
    code, out = pre_commit(project, home, "run")
    assert code == 1, out
    fixed = b"#!/usr/bin/env python3\n" + FIXED
    for name in ("--ignore=ALL", "--cache-dir=..", "-"):
        assert (project / name).read_bytes() == fixed, (name, out)
    assert not (project.parent / "CACHEDIR.TAG").exists() and not (project.parent / ".gitignore").exists()


# The documented CI configuration stays in step with the command line ----------------------------

WORKFLOWS = sorted((REPO / "examples" / "ci").glob("*.yml"))
COMMAND = re.compile(r"codemod run[^\n|<>;&#`\"']*")


def documented_commands() -> list[tuple[str, str]]:
    sources = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *WORKFLOWS]
    found = []
    for source in sources:
        for command in COMMAND.findall(source.read_text()):
            found.append((source.name, re.sub(r"\$\{\{[^}]*\}\}", "1", command).strip()))
    return found


def test_every_documented_codemod_command_parses():
    import shlex

    from jax_codemod.cli.main import run_command

    commands = documented_commands()
    assert len(commands) > 15
    flags = set()
    for source, command in commands:
        args = shlex.split(command)[2:]
        flags.update(arg.split("=")[0] for arg in args if arg.startswith("--"))
        try:
            run_command.make_context("run", list(args))
        except click.UsageError as error:
            pytest.fail(f"{source}: {command!r}: {error}")
    assert {"--format", "--shard", "--report", "--check", "--dry-run"} <= flags


def test_autofix_workflow_annotates_fixes_and_pushes_or_posts_a_patch():
    import yaml

    workflow = yaml.safe_load((REPO / "examples" / "ci" / "codemod-autofix.yml").read_text())
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the key `on` as true
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    scripts = "\n".join(step.get("run", "") for step in steps)
    assert "--check --format github" in scripts
    # Every run reads the base branch's settings, never the pull request's (README "Security model").
    runs = re.findall(r"codemod run[^\n]*", scripts)
    assert len(runs) == 3 and all("--config .codemod-trusted.toml" in run for run in runs), runs
    assert "--format sarif" in scripts and "--report" in scripts
    assert "git push" in scripts and "GITHUB_STEP_SUMMARY" in scripts
    # The push runs in a job of its own (the only one with a writable token; tests/test_security.py).
    pushes = [job for job in workflow["jobs"].values() if "git push" in str(job["steps"])]
    posts = [step for step in steps if "GITHUB_STEP_SUMMARY" in step.get("run", "")]
    assert "== github.repository" in pushes[0]["if"] and "!= github.repository" in posts[0]["if"]


def test_sharded_workflow_matrix_matches_its_shard_count():
    import yaml

    workflow = yaml.safe_load((REPO / "examples" / "ci" / "codemod-sharded.yml").read_text())
    shards = workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    (command,) = [s["run"] for s in workflow["jobs"]["shard"]["steps"] if "--shard" in s.get("run", "")]
    assert f"--shard ${{{{ matrix.shard }}}}/{len(shards)}" in command
    assert shards == list(range(1, len(shards) + 1))


def test_pre_commit_hook_definition():
    import yaml

    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["entry"], hook["language"]) == ("codemod", "codemod run --force-exclude --pre-commit --", "python")
    assert hook["types_or"] == ["python", "jupyter"]  # notebooks too, as ruff's hook
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'codemod = "jax_codemod.cli.main:entry"' in pyproject  # the console script the entry names
