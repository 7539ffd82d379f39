"""The reusable action (action.yml): its composite steps run here, in order, against a fixture
repository, as a runner runs them (bash -eo pipefail, GITHUB_ENV/PATH/OUTPUT files, `if:`
conditions and ${{ }} values evaluated from the event). The `uses:` steps are stood in for:
the base-branch checkout by `git show`, the uploads by recording what they would upload.

The install step is real: codemod is pip-installed from this checkout into a virtualenv, as
`uses: OWNER/codemod@TAG` does from the action's own checkout.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_all_repos import GIT_ENV, git
from test_cli import BROKEN, FIXED, REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text())
STEPS = ACTION["runs"]["steps"]
INSTALL = next(step for step in STEPS if step.get("name") == "Install codemod")


class Null(str):
    """A missing value: '' (as null in GitHub's comparisons), and so is any property of it."""

    def __getattr__(self, name):
        return Null()

    def __getitem__(self, name):
        return Null()


class Context(dict):
    """A GitHub expression context: attribute access, missing keys are '' (as null in GitHub)."""

    def __getattr__(self, name):
        value = self.get(name, Null())
        return Context(value) if isinstance(value, dict) else value

    def __getitem__(self, name):
        value = self.get(name, Null())
        return Context(value) if isinstance(value, dict) else value


def evaluate(expression: str, context: dict):
    """The few operators action.yml uses: ==, !=, &&, ||, !, parentheses, 'strings', dotted names."""
    python = re.sub(r"\.([A-Za-z_][\w]*-[\w-]*)", r"['\1']", expression.strip())
    python = python.replace("&&", " and ").replace("||", " or ")
    python = re.sub(r"!(?!=)", " not ", python)
    assert re.fullmatch(r"[\w\s.'\[\]()=!\-/]*", python), expression
    return eval(python, {"__builtins__": {}}, {key: Context(value) for key, value in context.items()})  # the test's own expressions, from action.yml


def substitute(text: str, context: dict) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(evaluate(m.group(1), context)), str(text))


def read_pairs(path: Path) -> dict:
    pairs = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if "=" in line:
                key, _, value = line.partition("=")
                pairs[key] = value
    return pairs


class Runner:
    """One job: the workspace, RUNNER_TEMP, and what the steps left for the next ones."""

    def __init__(self, workspace: Path, temp: Path, inputs: dict, github: dict, installed=None) -> None:
        defaults = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
        self.workspace, self.temp = workspace, temp
        self.context = {"inputs": {**defaults, **inputs}, "github": {"action_path": str(REPO), **github},
                        "runner": {"temp": str(temp)}, "steps": {}}
        self.env: dict[str, str] = {}
        self.path: list[str] = []
        if installed:
            self.env.update(installed[0])
            self.path += installed[1]
        self.log: list[tuple[str, subprocess.CompletedProcess | str]] = []
        self.uploads: dict[str, str] = {}
        self.summary = temp / "summary.md"

    def run(self, skip=()) -> int:
        """Run the steps until one fails; its exit code, or 0."""
        for step in STEPS:
            if step.get("name") in skip:
                continue
            if "if" in step and not evaluate(step["if"], self.context):
                self.log.append((step["name"], "skipped"))
                continue
            code = self.uses(step) if "uses" in step else self.shell(step)
            if code:
                return code
        return 0

    def shell(self, step: dict) -> int:
        assert "${{" not in step["run"], step["name"]  # values reach scripts through env: only
        assert step["shell"] == "bash"
        files = {name: self.temp / f"{name.lower()}-{len(self.log)}" for name in ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT")}
        env = dict(os.environ, **GIT_ENV, **self.env, RUNNER_TEMP=str(self.temp), GITHUB_STEP_SUMMARY=str(self.summary),
                   **{name: str(path) for name, path in files.items()},
                   **{key: substitute(value, self.context) for key, value in step.get("env", {}).items()})
        env["PATH"] = os.pathsep.join([*reversed(self.path), env["PATH"]])
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              cwd=self.workspace, env=env, capture_output=True, text=True, check=False)
        self.log.append((step["name"], done))
        self.env.update(read_pairs(files["GITHUB_ENV"]))
        if files["GITHUB_PATH"].exists():
            self.path += files["GITHUB_PATH"].read_text().split()
        if "id" in step:
            self.context["steps"][step["id"]] = {"outputs": read_pairs(files["GITHUB_OUTPUT"])}
        return done.returncode

    def uses(self, step: dict) -> int:
        action = step["uses"].split("@")[0]
        inputs = {key: substitute(value, self.context) for key, value in step.get("with", {}).items()}
        self.log.append((step["name"], f"uses {action}"))
        if action == "actions/checkout":
            # The base branch's pyproject.toml alone (sparse), into `path`.
            target = self.workspace / inputs["path"]
            target.mkdir()
            shown = subprocess.run(["git", "show", f"{inputs['ref']}:pyproject.toml"], cwd=self.workspace,
                                   capture_output=True, check=False)
            if shown.returncode == 0:
                (target / "pyproject.toml").write_bytes(shown.stdout)
        elif action == "github/codeql-action/upload-sarif":
            self.uploads["sarif"] = Path(inputs["sarif_file"]).read_text()
        elif action == "actions/upload-artifact":
            self.uploads["artifact"] = inputs["path"]
        elif action == "actions/setup-python":
            self.uploads["python"] = inputs["python-version"]  # the runner's python3 stands in
        elif action == "actions/cache":
            self.uploads["cache"] = inputs
        else:
            raise AssertionError(f"unknown action {action}")
        return 0

    def output(self, name: str) -> str:
        return "".join(done.stdout + done.stderr for step, done in self.log if step == name)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The install step, once: codemod from this checkout (GITHUB_ACTION_PATH) in a virtualenv."""
    temp = tmp_path_factory.mktemp("runner")
    runner = Runner(temp, temp, {}, {"event_name": "pull_request"})
    code = runner.shell(INSTALL)
    assert code == 0, runner.output("Install codemod")
    assert "codemod, version" in runner.output("Install codemod")
    assert Path(runner.path[0], "codemod").exists()
    return runner.env, runner.path


@pytest.fixture
def pull_request(tmp_path):
    """origin (bare), a base commit whose settings keep JAX005 on, and a pull request branch that
    adds a broken file and a pyproject.toml turning every rule off."""
    work = tmp_path / "work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    (work / "pyproject.toml").write_text("[tool.codemod]\n")
    (work / "old.py").write_bytes(b"x = 1\n")
    git("add", "-A", cwd=work)
    git("commit", "-qm", "base", cwd=work)
    base = git("rev-parse", "HEAD", cwd=work).strip()
    git("checkout", "-qb", "feature", cwd=work)
    (work / "pyproject.toml").write_text('[tool.codemod]\nignore = ["ALL"]\n')
    (work / "new.py").write_bytes(BROKEN)
    git("add", "-A", cwd=work)
    git("commit", "-qm", "feature", cwd=work)
    origin = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(work), str(origin), cwd=tmp_path)
    workspace = tmp_path / "workspace"
    git("clone", "-q", "-b", "feature", str(origin), str(workspace), cwd=tmp_path)
    temp = tmp_path / "temp"
    temp.mkdir()
    github = {"event_name": "pull_request", "repository": "org/repo", "ref_name": "feature",
              "event": {"pull_request": {"base": {"sha": base}, "head": {"ref": "feature",
                                                                         "repo": {"full_name": "org/repo"}}}}}
    return workspace, temp, origin, github


def test_check_reads_the_base_branch_settings_not_the_pull_requests(pull_request, installed):
    workspace, temp, _origin, github = pull_request
    runner = Runner(workspace, temp, {"mode": "check"}, github, installed)
    assert runner.run(skip={"Install codemod"}) == 1
    annotations = runner.output("Annotate findings")
    assert "::error file=new.py,line=4,col=23" in annotations and "JAX005" in annotations
    sarif = json.loads(runner.uploads["sarif"])
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["JAX005"]
    assert "codemod: exit 1" in runner.output("Fail while anything is left")
    # Nothing left behind in the checkout: no trusted copy, no base checkout, no change.
    assert git("status", "--porcelain", "--ignored", cwd=workspace) == ""


def test_check_with_the_projects_own_settings_honours_them(pull_request, installed):
    workspace, temp, _origin, github = pull_request
    runner = Runner(workspace, temp, {"mode": "check", "config": "project", "sarif": "false"}, github, installed)
    assert runner.run(skip={"Install codemod"}) == 0  # the pull request's ignore = ["ALL"]
    assert "sarif" not in runner.uploads


def test_fix_and_push_commits_the_fix_to_the_pull_requests_branch(pull_request, installed):
    workspace, temp, origin, github = pull_request
    runner = Runner(workspace, temp, {"mode": "fix-and-push"}, github, installed)
    assert runner.run(skip={"Install codemod"}) == 0, runner.log
    assert git("show", "feature:new.py", cwd=origin).encode() == FIXED
    # (The author is github-actions[bot] on a runner; here GIT_AUTHOR_NAME of the test overrides it.)
    assert git("log", "-1", "--format=%s", "feature", cwd=origin) == "codemod: apply automatic fixes\n"
    # Only the fix: the pull request's own pyproject.toml is as it was, nothing else added.
    assert git("diff", "--name-only", "feature~1", "feature", cwd=origin).split() == ["new.py"]
    assert runner.uploads["artifact"].endswith("codemod-fixes")


def test_a_forks_pull_request_gets_the_patch_and_nothing_is_pushed(pull_request, installed):
    workspace, temp, origin, github = pull_request
    github["event"]["pull_request"]["head"]["repo"]["full_name"] = "someone/fork"
    before = git("rev-parse", "feature", cwd=origin)
    runner = Runner(workspace, temp, {"mode": "fix-and-push"}, github, installed)
    assert runner.run(skip={"Install codemod"}) == 1  # the fork's branch is still broken
    assert git("rev-parse", "feature", cwd=origin) == before
    assert ("Push the fixes", "skipped") in runner.log and "sarif" not in runner.uploads
    summary = runner.summary.read_text()
    assert "### codemod can fix this" in summary and "-t = torch.from_dlpack(jax.dlpack.to_dlpack(x))" in summary
    patch = Path(runner.uploads["artifact"], "codemod.patch")
    subprocess.run(["git", "apply", "--check", str(patch)], cwd=workspace, check=True)  # applies to the branch


def test_suggest_as_patch_pushes_nothing(pull_request, installed):
    workspace, temp, origin, github = pull_request
    before = git("rev-parse", "feature", cwd=origin)
    runner = Runner(workspace, temp, {"mode": "suggest-as-patch", "args": "--select JAX005"}, github, installed)
    assert runner.run(skip={"Install codemod"}) == 1
    assert git("rev-parse", "feature", cwd=origin) == before
    assert (workspace / "new.py").read_bytes() == BROKEN
    assert "```diff" in runner.summary.read_text()


@pytest.mark.parametrize(("inputs", "event", "says"), [
    ({"mode": "push-everything"}, "pull_request", "mode must be"),
    ({}, "pull_request_target", "pull_request_target is not supported"),
    ({"config": "no/such.toml"}, "pull_request", "config: no such file"),
])
def test_bad_inputs_and_pull_request_target_are_refused(pull_request, inputs, event, says):
    workspace, temp, _origin, github = pull_request
    runner = Runner(workspace, temp, inputs, {**github, "event_name": event})
    assert runner.run() == 2
    assert says in runner.output("Check the inputs")


def test_the_action_installs_from_its_own_checkout():
    assert '"${VERSION:-$ACTION_PATH}"' in INSTALL["run"] and INSTALL["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert ACTION["runs"]["using"] == "composite"
    assert set(ACTION["inputs"]) >= {"version", "src", "args", "mode"}


def test_no_install_names_a_release_on_an_index():
    """Every documented install is of something that exists: the action's checkout, a checkout
    (`pip install .`), a git URL at a tag, or a wheel; never `jax-codemod==X` from an index."""
    texts = {path.name: path.read_text() for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
                                                      REPO / "action.yml", *sorted((REPO / "examples" / "ci").glob("*.yml"))]}
    for name, text in texts.items():
        assert "jax-codemod==" not in text, name
        for spec in re.findall(r"CODEMOD_SPEC: (\S+)", text):
            # No release is tagged yet: a git URL is pinned at a commit the reader fills in
            # (tests/test_release.py checks every ref a snippet names exists).
            assert spec.startswith("git+") and spec.endswith("@<commit>"), (name, spec)
    assert "rev: <commit>" in texts["README.md"] and "codemod@<commit>" in texts["README.md"]



def test_the_distributions_build_and_pass_twine_check(tmp_path):
    """The local-wheel route: `python -m build` makes an sdist and a wheel that twine accepts, and
    the wheel carries every module (notebooks included) and both commands."""
    pytest.importorskip("build", reason="the test extra's build is not installed")
    pytest.importorskip("twine", reason="the test extra's twine is not installed")
    import zipfile

    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path), str(REPO)],
                   check=True, capture_output=True)
    version = __import__("jax_codemod").__version__
    wheel, sdist = tmp_path / f"jax_codemod-{version}-py3-none-any.whl", tmp_path / f"jax_codemod-{version}.tar.gz"
    checked = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    names = zipfile.ZipFile(wheel).namelist()
    assert "jax_codemod/engine/notebook.py" in names and "jax_codemod/cli/main.py" in names
    entry_points = zipfile.ZipFile(wheel).read(f"jax_codemod-{version}.dist-info/entry_points.txt").decode()
    assert "codemod = jax_codemod.cli.main:entry" in entry_points


# Hardening (issue 56; issue 53 hole 13) -----------------------------------------------------------

PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def uses_of(path: Path) -> list[str]:
    document = yaml.safe_load(path.read_text())
    steps = (document["runs"]["steps"] if "runs" in document
             else [step for job in document["jobs"].values() for step in job["steps"]])
    return [step["uses"] for step in steps if "uses" in step]


@pytest.mark.parametrize("path", [REPO / "action.yml", *sorted((REPO / "examples" / "ci").glob("*.yml"))],
                         ids=lambda path: path.name)
def test_every_third_party_action_is_pinned_by_commit(path):
    """A tag can be moved to other code; a commit cannot. The comment names the release."""
    found = uses_of(path)
    assert found
    for uses in found:
        assert PINNED.match(uses), (path.name, uses)
    for line in path.read_text().splitlines():
        if re.search(r"uses: [\w-]+/[\w./-]+@[0-9a-f]{40}", line) and "OWNER/codemod" not in line:
            assert re.search(r"# v\d+\.\d+\.\d+$", line), line


def test_python_is_set_up_and_the_cache_is_restored(pull_request, installed):
    workspace, temp, _origin, github = pull_request
    runner = Runner(workspace, temp, {"mode": "check"}, github, installed)
    assert runner.run(skip={"Install codemod"}) == 1
    assert runner.uploads["python"] == "3.12"
    cache = runner.uploads["cache"]
    assert f"{temp}/codemod-cache" in cache["path"] and "~/.cache/codemod" in cache["path"]
    assert cache["key"].startswith("codemod-") and cache["restore-keys"]
    # The cache step comes after the install (which points CODEMOD_CACHE_DIR there), before any run.
    names = [step["name"] for step in STEPS]
    assert names.index("Install codemod") < names.index("Restore the result cache") < names.index("Annotate findings")
    runner = Runner(workspace, temp, {"mode": "check", "cache": "false", "python-version": ""}, github, installed)
    runner.run(skip={"Install codemod"})
    assert "cache" not in runner.uploads and "python" not in runner.uploads


@pytest.mark.parametrize(("private", "sarif", "uploaded"), [
    (False, "auto", True), (True, "auto", False), (True, "true", True), (False, "false", False),
])
def test_sarif_goes_only_where_it_can_be_uploaded(pull_request, installed, private, sarif, uploaded):
    workspace, temp, _origin, github = pull_request
    github["event"]["repository"] = {"private": private}
    runner = Runner(workspace, temp, {"mode": "check", "sarif": sarif}, github, installed)
    assert runner.run(skip={"Install codemod"}) == 1
    assert ("sarif" in runner.uploads) is uploaded
    # Where it is tried and refused (code scanning off), the job goes on: annotations stay.
    upload = next(step for step in STEPS if step.get("name") == "Upload SARIF")
    assert upload["continue-on-error"] is True


@pytest.mark.parametrize("planted", [".codemod-trusted.toml", ".codemod-base"])
def test_a_link_in_the_pull_request_is_refused_not_written_through(pull_request, installed, tmp_path, planted):
    """Issue 53, hole 13: a pull request that commits `.codemod-trusted.toml -> /dev/null` made the
    `cp` write the base's settings into /dev/null, and the run fell back to the defaults. Now the
    run stops (exit 2) before anything is copied: the check fails, it is never quieted."""
    workspace, temp, _origin, github = pull_request
    target = tmp_path / "elsewhere"
    target.write_text("untouched\n")
    os.symlink(target if planted == ".codemod-base" else "/dev/null", workspace / planted)
    runner = Runner(workspace, temp, {"mode": "check"}, github, installed)
    assert runner.run(skip={"Install codemod"}) == 2
    assert f"{planted} is a link or not a regular file in the checkout: refused" in runner.output("Check the inputs")
    assert target.read_text() == "untouched\n"
    assert "sarif" not in runner.uploads


def test_a_config_input_that_is_a_link_or_a_folder_is_refused(pull_request, installed):
    workspace, temp, _origin, github = pull_request
    os.symlink("/dev/zero", workspace / "linked.toml")
    (workspace / "folder.toml").mkdir()
    for config in ("linked.toml", "folder.toml"):
        runner = Runner(workspace, temp, {"mode": "check", "config": config}, github, installed)
        assert runner.run(skip={"Install codemod"}) == 2, config
        assert "refused" in runner.output("Check the inputs")


def test_the_base_settings_file_must_be_regular_too(pull_request, installed):
    """The base branch's pyproject.toml is copied only when it is a regular file (the Settings step
    checks it after the base checkout; a link there is refused as in the pull request's tree)."""
    workspace, temp, _origin, github = pull_request
    settings = next(step for step in STEPS if step.get("name") == "Settings")
    (workspace / ".codemod-base").mkdir()
    os.symlink("/etc/hostname", workspace / ".codemod-base" / "pyproject.toml")
    runner = Runner(workspace, temp, {"mode": "check"}, github, installed)
    assert runner.shell(settings) == 2
    assert "pyproject.toml is a link or not a regular file: refused" in runner.output("Settings")
    assert not (workspace / ".codemod-trusted.toml").exists()


def workflow_step(name: str) -> dict:
    workflow = yaml.safe_load((REPO / "examples" / "ci" / "codemod-autofix.yml").read_text())
    return next(step for job in workflow["jobs"].values() for step in job["steps"] if step.get("name") == name)


def run_script(step: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd,
                          capture_output=True, text=True, check=False)


def test_the_autofix_workflow_refuses_links_for_what_it_copies(tmp_path):
    trusted = workflow_step("Trusted settings")
    (tmp_path / ".codemod-base").mkdir()
    (tmp_path / ".codemod-base" / "pyproject.toml").write_text('[tool.codemod]\nextend-select = ["JAX004"]\n')
    os.symlink("/dev/null", tmp_path / ".codemod-trusted.toml")
    done = run_script(trusted, tmp_path)
    assert done.returncode == 1 and ".codemod-trusted.toml is a link or not a regular file: refused" in done.stdout
    # A regular file of the pull request's (or none) is replaced by the base's settings.
    os.unlink(tmp_path / ".codemod-trusted.toml")
    (tmp_path / ".codemod-trusted.toml").write_text("[tool.codemod]\nignore = ['ALL']\n")
    assert run_script(trusted, tmp_path).returncode == 0
    assert "JAX004" in (tmp_path / ".codemod-trusted.toml").read_text() and not (tmp_path / ".codemod-base").exists()
    # The base's own file through a link: refused too.
    (tmp_path / ".codemod-base").mkdir()
    os.symlink("/etc/hostname", tmp_path / ".codemod-base" / "pyproject.toml")
    assert run_script(trusted, tmp_path).returncode == 1


def test_the_autofix_workflow_refuses_a_planted_base_folder(tmp_path):
    guard = workflow_step("Refuse a planted .codemod-base")
    assert run_script(guard, tmp_path).returncode == 0
    os.symlink(tmp_path / "elsewhere", tmp_path / ".codemod-base")  # dangling, still refused
    done = run_script(guard, tmp_path)
    assert done.returncode == 1 and "refused" in done.stdout
