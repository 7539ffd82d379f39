"""An all-repos autofixer: one branch, commit and pull request per repository of an organisation.

``pip install '.[all-repos]'`` (from a checkout of codemod), clone the organisation with ``all-repos-clone``, then::

    codemod-all-repos -C all-repos.json --dry-run      # what would change, nothing pushed
    codemod-all-repos -C all-repos.json --summary-json summary.json --summary-markdown summary.md

``find_repos`` greps the clones (all-repos' ``git grep``) for the selected rules' trigger strings: a
repository without any is clean by the rules' own contract (``TRIGGERS`` in ``rule.py``). Each
repository found is cloned again by all-repos into a temporary folder, and codemod's engine runs
there in-process with the settings ``codemod run .`` would use (``engine/resolve.py``: the
repository's own ``[tool.codemod]`` honoured). A repository whose run has errors (a file that does
not parse, cannot be read or written) is skipped with its reason and nothing of it is committed.
The commit message, which all-repos' pull-request pushes use as the pull request's title and body,
is generated from the run: rules fixed with counts, findings left for a person with file:line and
the rule's advice, and the codemod version and command that reproduce the change.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shlex
import sys
from collections import Counter
from collections.abc import Sequence

import jax_codemod
from jax_codemod.cli.output import escape
from jax_codemod.engine.config import ConfigError, check_target_platforms, parse_codes, select_rules
from jax_codemod.engine.discovery import discover
from jax_codemod.engine.pipeline import FileError, FileResult
from jax_codemod.engine.resolve import Options, Resolver, check_per_config, resolve
from jax_codemod.engine.runner import check_files, write_results
from jax_codemod.registry import MANIFEST

BRANCH_NAME = "codemod"  # all-repos makes it all-repos_autofix_codemod
SUBJECT = "codemod: fix broken JAX interop code"


class RepoRun:
    """What codemod's engine did to one repository (a checkout at ``root``); never prints."""

    def __init__(self, root: str, results: list[FileResult], errors: list[FileError], rules) -> None:
        self.root = root
        self.results = results
        self.errors = errors
        self.rules = {rule.CODE: rule.NAME for rule in rules}

    @property
    def changed(self) -> list[FileResult]:
        return [r for r in self.results if r.changed and r.error is None]

    @property
    def fixed(self):
        return [f for r in self.changed for f in r.findings if f.applied]

    @property
    def remaining(self):
        """Findings left for a person once the fixes are written."""
        return [f for r in self.results for f in r.findings if not (f.applied and r in self.changed)]


def run_codemod(root: str, options: Options, *, write: bool, jobs: int | None = None) -> RepoRun:
    """``codemod run [options] root`` in-process, without the cache: the same files, settings and
    output bytes. With ``write``, the fixes are written, but only when nothing failed: a run with
    errors writes nothing. A ConfigError if the repository's config is invalid."""
    (group,) = resolve([root], options)
    allowed = [os.getcwd(), root]
    if group.config_path:
        allowed.append(os.path.dirname(os.path.abspath(group.config_path)))
    found = discover([root], group.excludes, force_exclude=group.force_exclude, allowed=allowed,
                     include=group.include)
    files, per_config = Resolver(options, [group]).split(found.files, group)
    results = check_per_config(files, per_config, lambda files, settings: check_files(files, settings, jobs))
    errors = [FileError(path, reason) for path, reason in found.errors]
    errors += [r.error for r in results if r.error is not None]
    run = RepoRun(root, results, errors, group.settings.rules)
    if write and not errors and run.changed:
        run.errors.extend(write_results(run.changed))
    return run


# The commit message / pull request body --------------------------------------------------------


def _advice(code: str) -> str:
    """The rule's advice for a person: its "Use instead" section (``codemod explain`` shows it too)."""
    from jax_codemod import docs
    from jax_codemod.rules import RULES

    rule = next((r for r in RULES if r.CODE == code), None)
    return docs.sections(rule).get("Use instead", "") if rule is not None else ""


def reproduce_command(options: Options) -> str:
    """The ``codemod run`` command that makes the same change in a checkout of the repository."""
    args = ["codemod", "run"]
    if options.select is not None:
        args += ["--select", ",".join(options.select)]
    if options.unsafe_fixes:
        args.append("--unsafe-fixes")
    if options.target_jax_version is not None:
        args += ["--target-jax-version", options.target_jax_version]
    if options.target_platforms is not None:
        args += ["--target-platforms", options.target_platforms]
    return shlex.join([*args, "."])


def install_spec() -> str | None:
    """What ``pip install`` takes to get this very codemod, from how it was installed (PEP 610's
    ``direct_url.json``): a VCS URL at its commit, an archive URL, or, installed from an index
    (no direct URL), the release there. None for a local build (a checkout or a wheel file),
    which no reader of the commit can install; credentials in a URL are never repeated."""
    from importlib import metadata

    try:
        dist = metadata.distribution("jax-codemod")
        raw = dist.read_text("direct_url.json")
    except (metadata.PackageNotFoundError, OSError):
        return None
    if raw is None:
        return f"jax-codemod=={dist.version}"
    try:
        info = json.loads(raw)
        url = re.sub(r"//[^/@]*@", "//", str(info["url"]))
    except (ValueError, KeyError, TypeError):
        return None
    if not url.startswith(("https://", "http://", "ssh://", "git://")):
        return None
    vcs = info.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs"):
        revision = vcs.get("commit_id") or vcs.get("requested_revision")
        return f"jax-codemod @ {vcs['vcs']}+{url}" + (f"@{revision}" if revision else "")
    return f"jax-codemod @ {url}"


def commit_message(run: RepoRun, options: Options, install: str | None = None) -> str:
    """Subject line, then a markdown body (the pull request's description)."""
    version = jax_codemod.__version__
    fixed = Counter(f.code for f in run.fixed)
    codes = ", ".join(f"{code} ×{count}" for code, count in sorted(fixed.items()))
    lines = [f"{SUBJECT} ({codes})" if codes else SUBJECT, ""]
    lines.append(f"codemod {version} fixed {sum(fixed.values())} finding(s) in {len(run.changed)} file(s):")
    lines += ["", "| Rule | Fixed |", "| --- | ---: |"]
    lines += [f"| {code} {run.rules.get(code, '')} | {count} |" for code, count in sorted(fixed.items())]
    remaining = sorted(run.remaining, key=lambda f: (f.path, f.line, f.column, f.code))
    lines.append("")
    if remaining:
        lines += [f"Findings left for a human ({len(remaining)}), not changed by this commit:", ""]
        for finding in remaining:
            where = f"{escape(_relative(finding.path, run.root))}:{finding.line}:{finding.column}"
            # The name and the message (which quotes the repository's code) are the repository's
            # text: code spans, in which no link, emphasis or @-mention renders.
            lines.append(f"- {code_span(where)} {finding.code} {finding.name}: {code_span(escape(finding.message))}")
        lines.append("")
        for code in sorted({f.code for f in remaining}):
            advice = _advice(code)
            if advice:
                name = next(f.name for f in remaining if f.code == code)
                summary = f"{code} {name}: what to write instead (<code>codemod explain {code}</code>)"
                lines += [f"<details><summary>{summary}</summary>", "", advice, "", "</details>", ""]
    else:
        lines += ["No findings are left.", ""]
    lines += ["To reproduce in a checkout of this repository:", ""]
    if install:
        lines.append(f"    pip install {shlex.quote(install)}")
    else:
        lines += [f"    # codemod {version}, installed here from a local build: install the same version", ""]
    lines.append(f"    {reproduce_command(options)}")
    return "\n".join(lines)


def code_span(text: str) -> str:
    """``text`` as one CommonMark code span, whatever it holds: fenced by a run of backticks
    longer than any inside it, with a space inside each fence where the text starts or ends with
    a backtick (or with spaces on both ends, which CommonMark would strip); a line break is a
    space, as a span's own are. A backtick in a name or quoted code ended a one-backtick span, and
    what followed rendered: links, bold, @-mentions (issue 53, hole 18)."""
    text = text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    if not text:
        return ""
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " " and text.strip()) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _relative(path: str, root: str) -> str:
    relative = os.path.relpath(path, root)
    return path if relative.startswith("..") else relative.replace(os.sep, "/")


# all-repos -------------------------------------------------------------------------------------


def trigger_strings(options: Options) -> list[str]:
    """The trigger strings of every rule a repository could run: the --select'ed rules, or all rules
    when there is no --select (a repository's own config may turn on an opt-in rule); plus any
    --extend-select'ed."""
    selected = select_rules(MANIFEST, options.select or ["ALL"], options.extend_select, [])
    found = {trigger.decode("utf-8", "surrogateescape") for info in selected for trigger in info.TRIGGERS}
    return sorted(found)


def find_repos(config, *, options: Options) -> set[str]:
    from all_repos.grep import repos_matching

    patterns = [arg for trigger in trigger_strings(options) for arg in ("-e", trigger)]
    return repos_matching(config, ("-F", *patterns, "--", "*.py", "*.ipynb"))


def _name(repo: str, config) -> str:
    relative = os.path.relpath(os.path.abspath(repo), config.output_dir)
    return repo if relative.startswith("..") else relative


def fix_repo(repo: str, *, options: Options, config, author: str | None, autofix_settings, engine_jobs,
             install: str | None = None) -> dict:
    """One repository, as all-repos' own ``autofix_lib`` does it (a fresh clone, a branch off
    origin/HEAD, one commit, the config's push), with a message made from the run."""
    from all_repos import autofix_lib

    record = {"repository": _name(repo, config), "status": "failed", "reason": "did not start",
              "files_changed": 0, "fixed": {}, "findings_left": [], "branch": None}
    try:
        with autofix_lib.repo_context(repo, use_color=autofix_settings.color):
            try:
                _fix_in_clone(record, options, config, author, autofix_settings, engine_jobs, install)
            except Exception as error:
                record.update(status="failed", reason=f"{type(error).__name__}: {error}")
                raise  # repo_context prints the traceback; the next repository goes on
    except RuntimeError as error:  # repo_context could not even clone it ("generator didn't yield")
        if record["status"] != "failed" or record["reason"] == "did not start":
            record.update(status="failed", reason=f"could not clone: {error}")
    return record


def untouched_record(repo: str, config) -> dict:
    """A repository in which all-repos' grep found no trigger string of the rules that can run."""
    return {"repository": _name(repo, config), "status": "clean",
            "reason": "no trigger string of the rules run in its *.py files (not cloned)",
            "files_changed": 0, "fixed": {}, "findings_left": [], "branch": None}


def _fix_in_clone(record, options, config, author, autofix_settings, engine_jobs, install=None) -> None:
    from all_repos import autofix_lib

    branch = f"all-repos_autofix_{BRANCH_NAME}"
    autofix_lib.run("git", "checkout", "--quiet", "origin/HEAD", "-b", branch)
    try:
        run = run_codemod(".", options, write=False, jobs=engine_jobs)
    except ConfigError as error:
        record.update(status="failed", reason=f"configuration error: {error}")
        print(f"***Skipped: {escape(record['reason'])}", flush=True)
        return
    record["findings_left"] = [
        {"path": _relative(f.path, "."), "line": f.line, "column": f.column, "code": f.code, "message": f.message}
        for f in run.remaining
    ]
    if run.errors:
        reasons = "; ".join(str(error) for error in run.errors)
        record.update(status="failed", reason=f"codemod could not process every file: {reasons}")
        print(f"***Skipped, nothing committed: {escape(record['reason'])}", flush=True)
        return
    if not run.changed:
        record.update(status="findings left" if run.remaining else "clean", reason=None)
        return
    write_errors = write_results(run.changed)
    if write_errors:
        autofix_lib.run("git", "checkout", "--quiet", "--", ".")
        reasons = "; ".join(str(error) for error in write_errors)
        record.update(status="failed", reason=f"could not write: {reasons}")
        print(f"***Skipped, nothing committed: {escape(record['reason'])}", flush=True)
        return
    record.update(files_changed=len(run.changed), fixed=dict(sorted(Counter(f.code for f in run.fixed).items())))
    autofix_lib.run("git", "--no-pager", "diff", "origin/HEAD")  # as all-repos' own autofixers show it
    if autofix_settings.interactive and not autofix_lib._interactive_check(use_color=autofix_settings.color):
        record.update(status="declined", reason="declined interactively")
        return
    message = commit_message(run, options, install) + "\n\nCommitted via https://github.com/asottile/all-repos"
    # verbatim: git's default clean-up would squeeze the blank lines of the advice's code.
    command = ["git", "commit", "--quiet", "-a", "--cleanup=verbatim", "-m", message]
    if author:
        command += ["--author", author]
    autofix_lib.run(*command)
    record.update(status="changed", reason=None, branch=branch)
    if autofix_settings.dry_run:
        record["status"] = "would change"
        return
    config.push(config.push_settings, branch)


# The organisation summary ----------------------------------------------------------------------


def summarise(records: Sequence[dict], options: Options) -> dict:
    """Per organisation (the repository name up to its last '/'): scanned, changed, with findings
    left, failed; and every repository's row."""
    organisations: dict[str, dict] = {}
    for record in sorted(records, key=lambda r: r["repository"]):
        org = record["repository"].rpartition("/")[0] or "(none)"
        counts = organisations.setdefault(org, {"scanned": 0, "changed": 0, "findings_left": 0, "failed": 0})
        counts["scanned"] += 1
        counts["changed"] += record["status"] in ("changed", "would change")
        counts["findings_left"] += bool(record["findings_left"]) and record["status"] != "failed"
        counts["failed"] += record["status"] == "failed"
    return {
        "codemod_version": jax_codemod.__version__,
        "command": reproduce_command(options),
        "organisations": organisations,
        "repositories": sorted(records, key=lambda r: r["repository"]),
    }


def render_markdown(summary: dict) -> str:
    lines = [f"# codemod {summary['codemod_version']}: `{summary['command']}`", "",
             "| Organisation | Scanned | Changed | With findings left | Failed |", "| --- | ---: | ---: | ---: | ---: |"]
    # Printed to the log as well as written: every repository name and reason escaped as a file name.
    for org, c in summary["organisations"].items():
        lines.append(f"| {escape(org)} | {c['scanned']} | {c['changed']} | {c['findings_left']} | {c['failed']} |")
    lines += ["", "| Repository | Status | Files changed | Fixed | Findings left | Reason |",
              "| --- | --- | ---: | --- | ---: | --- |"]
    for r in summary["repositories"]:
        fixed = ", ".join(f"{code} ×{n}" for code, n in r["fixed"].items())
        # A reason names the repository's files and quotes their errors: a code span (a table's
        # `|` escaped even there, as GitHub's tables read it).
        reason = code_span(escape(r["reason"] or "")).replace("|", "\\|")
        lines.append(f"| {escape(r['repository'])} | {r['status']} | {r['files_changed']} | {fixed} | "
                     f"{len(r['findings_left'])} | {reason} |")
    return "\n".join(lines) + "\n"


# Command line ----------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    from all_repos import autofix_lib

    parser = argparse.ArgumentParser(
        prog="codemod-all-repos",
        description="Run codemod over every repository all-repos has cloned: one branch, commit and "
        "pull request (the config's push) per repository that codemod changes.",
    )
    autofix_lib.add_fixer_args(parser)
    parser.add_argument("--select", help="Rules to run: comma-separated codes, prefixes, or ALL "
                        "(default: each repository's configuration, as codemod run).")
    parser.add_argument("--extend-select", help="Rules to run in addition to the selected ones.")
    parser.add_argument("--unsafe-fixes", action="store_true", default=None, help="Also apply fixes marked unsafe.")
    parser.add_argument("--target-jax-version", metavar="VERSION|SPEC",
                        help="JAX version or range the findings and fixes must be right for (default: each "
                             "repository's own jax requirement, as codemod run).")
    parser.add_argument("--target-platforms", metavar="PLATFORMS",
                        help="Platforms the fixes must be right on, comma-separated: cpu, gpu, tpu or a plugin "
                             "backend (default: each repository's configuration or declared requirements, as "
                             "codemod run; cpu,gpu when nothing is declared).")
    parser.add_argument("--install-spec", metavar="SPEC",
                        help="What the commit message tells a reader to pip install (default: how this codemod was "
                        "installed: a git URL at its commit, or the release from an index; nothing for a local build).")
    parser.add_argument("--summary-json", metavar="FILE", help="Write the organisation summary as JSON here.")
    parser.add_argument("--summary-markdown", metavar="FILE", help="Write the summary as markdown tables here.")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Exit 0 when every repository was processed, 1 when one failed, 2 on a usage error."""
    try:
        import all_repos  # noqa: F401
    except ImportError:
        print("codemod-all-repos needs all-repos: pip install 'jax-codemod[all-repos]' (from a checkout: pip install '.[all-repos]')", file=sys.stderr)
        return 2
    from all_repos import autofix_lib, mapper

    args = parser().parse_args(argv)
    options = Options(select=parse_codes(args.select), extend_select=parse_codes(args.extend_select) or [],
                      unsafe_fixes=args.unsafe_fixes, target_jax_version=args.target_jax_version,
                      target_platforms=args.target_platforms)
    try:
        trigger_strings(options)  # a bad --select fails here, before any repository is touched
        if options.target_platforms is not None:
            check_target_platforms(options.target_platforms)  # likewise a bad --target-platforms
    except ConfigError as error:
        print(f"error: {escape(str(error))}", file=sys.stderr)
        return 2
    repos, config, commit, autofix_settings = autofix_lib.from_cli(
        args, find_repos=functools.partial(find_repos, options=options), msg=SUBJECT, branch_name=BRANCH_NAME)
    repos_found = set(repos)
    repos = sorted(repos)[: autofix_settings.limit]
    # Every repository the summary covers: those grep found no trigger in are clean by the rules'
    # contract, listed (and counted as scanned) without being cloned again.
    untouched = [] if args.repos is not None else sorted(
        {os.path.join(config.output_dir, name) for name in config.get_cloned_repos()} - repos_found)
    engine_jobs = 1 if autofix_settings.jobs > 1 else None
    func = functools.partial(fix_repo, options=options, config=config, author=commit.author,
                             autofix_settings=autofix_settings, engine_jobs=engine_jobs,
                             install=args.install_spec or install_spec())
    with mapper.process_mapper(autofix_settings.jobs) as do_map:
        records = list(do_map(func, repos))
    records += [untouched_record(repo, config) for repo in untouched]
    summary = summarise(records, options)
    markdown = render_markdown(summary)
    if args.summary_json:
        with open(args.summary_json, "w", encoding="utf-8") as handle:
            json.dump(summary, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
    if args.summary_markdown:
        with open(args.summary_markdown, "w", encoding="utf-8") as handle:
            handle.write(markdown)
    print(markdown, end="", flush=True)
    return 1 if any(r["status"] == "failed" for r in records) else 0


def entry() -> None:
    raise SystemExit(main())


if __name__ == "__main__":
    entry()
