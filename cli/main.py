"""The ``codemod`` command: gathers paths, renders results, picks the exit code.

Exit codes (stable; scripts and CI bots depend on them):
  0  nothing left to do
  1  changes would be made (--dry-run / --check), findings remain that were not
     fixed, or a file could not be read, parsed or written
  2  usage or configuration error
  130  interrupted (Ctrl-C)
"""

from __future__ import annotations

import os
import sys
import time

import click
import jax_codemod
from jax_codemod.cli import output
from jax_codemod.engine import project
from jax_codemod.engine.config import (
    Config,
    ConfigError,
    find_pyproject,
    load_config,
    parse_codes,
)
from jax_codemod.engine.discovery import (
    DEFAULT_EXCLUDE,
    MAX_IGNORE_FILE_BYTES,
    discover,
    linked_folder,
    trusted_folders,
)
from jax_codemod.engine.pipeline import (
    MAX_ANALYSIS_MIB,
    MAX_ANALYSIS_SECONDS,
    FileError,
    FileResult,
    Settings,
    process_source,
)
from jax_codemod.engine.resolve import (
    Group,
    Options,
    Resolver,
    check_per_config,
    declared_target,
    ignored_here,
    prepare,
    resolve,
    settings_for,
)
from jax_codemod.engine.runner import WriteError, check_files, write_report, write_results

EXIT_OK, EXIT_ATTENTION, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130
EXIT_CODES_HELP = """\b
Exit codes:
  0  nothing left to do
  1  changes would be made (--dry-run/--check), findings remain unfixed,
     or a file could not be read, parsed or written
  2  usage or configuration error"""
FILE_SELECTION_HELP = (
    "Files: the *.py and *.ipynb files under each PATH (include/extend-include in [tool.codemod]), less those "
    "excluded by git (.gitignore files, "
    ".git/info/exclude, core.excludesFile; ignore files are read only when regular files of at most "
    f"{MAX_IGNORE_FILE_BYTES // 2**20} MiB), by any folder holding a pyvenv.cfg, and by the exclude patterns: "
    "gitignore-style, relative to the folder of the pyproject.toml that declares them (--exclude: the "
    "working directory). Default exclude (replaced by `exclude` in [tool.codemod], extended by "
    "`extend-exclude` and --exclude): " + ", ".join(DEFAULT_EXCLUDE) + ". A PATH named on the command line "
    "is checked even if excluded, unless --force-exclude. Under --config (trusted settings for untrusted code) the "
    "tree's .gitignore files and pyvenv.cfg markers hide nothing (respect-gitignore = true in that config reads "
    "the former) and the tree's requirements set neither the target JAX nor the target platforms."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP)
# Messages given, and paths as plain strings with a metavar, not click.Path: click fetches each
# default text through gettext, whose catalogue lookup (a few stat calls) costs ~0.5 ms a time.
@click.version_option(jax_codemod.__version__, prog_name="codemod", message="%(prog)s, version %(version)s",
                      help="Show the version and exit.")
def cli() -> None:
    """Find and rewrite broken JAX interop code (DLPack, raw buffer pointers)."""


@cli.command("run", epilog=FILE_SELECTION_HELP + "\n\n" + EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, metavar="[PATHS]...")
@click.option("--dry-run", "--diff", "dry_run", is_flag=True,
              help="Write nothing; print a unified diff of every change (--diff is the same, as in ruff).")
@click.option("--check", is_flag=True, help="Write nothing; report findings (for CI).")
@click.option("--select", help="Rules to run: comma-separated codes, prefixes, or ALL.")
@click.option("--extend-select", help="Rules to run in addition to the selected ones (e.g. opt-in rules).")
@click.option("--ignore", help="Rules not to run: comma-separated codes, prefixes, or ALL.")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None, help="Also apply fixes marked unsafe.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel processes (default: CPU count).")
@click.option("--exclude", multiple=True,
              help="Gitignore-style pattern of paths to skip, relative to the working directory (repeatable); "
              "adds to the configured excludes.")
@click.option("--extend-exclude", multiple=True, help="The same as --exclude (ruff's spelling; repeatable).")
@click.option("--force-exclude/--no-force-exclude", default=None,
              help="Apply the excludes to paths named on the command line too (the pre-commit hook does).")
# Read by _after_double_dash before click parses anything; click only has to accept it.
@click.option("--pre-commit", is_flag=True, expose_value=False,
              help="The pre-commit hook's entry: after '--', the arguments before the first one that names an "
              "existing file are options (pre-commit's args:), the rest are paths.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "github", "sarif"]),
    default="text",
    show_default=True,
    help="Output format: json and sarif put one document on stdout; github prints workflow-command "
    "annotations.",
)
@click.option("--report", "report_file", metavar="FILE",
              help="Also write a JSON report of every change and finding, per root, to this file (checked "
              "before anything is written; never written through a symlink).")
@click.option("--shard", "shard_spec", metavar="I/N",
              help="Process only shard I of N (1-based), a stable partition of the files for CI matrices.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--cache-dir", metavar="DIRECTORY",
              help="Cache directory (default: $CODEMOD_CACHE_DIR, else .codemod_cache beside the pyproject.toml "
              "in use, else in the working directory).")
@click.option("--no-progress", is_flag=True, help="Never show a progress bar.")
@click.option("--config", metavar="FILE", help="pyproject.toml to read instead of the nearest.")
@click.option("--stdin-filename", help="Name to report for source read from stdin ('-').")
@click.option("--exit-zero", is_flag=True,
              help="Exit 0 even when findings remain, changes would be made or files failed (2 stays 2).")
@click.option("--exit-non-zero-on-fix", is_flag=True,
              help="Exit 1 when this run fixed files, even if nothing is left to do.")
@click.option("--statistics", is_flag=True,
              help="Print a table of findings per rule instead of one line per finding (json: a \"statistics\" "
              "array; a dry run's patch, github and sarif keep stdout and the table goes to stderr).")
@click.option("--add-noqa", is_flag=True, expose_value=False, callback=lambda ctx, _param, value: ctx.meta.update(
              add_noqa=value), help="Add a '# noqa: CODE' comment to the line of every finding (to baseline a "
              "tree before --check), fix nothing, and exit.")
@click.option("--show-fixes", is_flag=True,
              help="Also list the findings fixed (with --dry-run/--check: that the patch would fix, on stderr).")
@click.option("--show-files", is_flag=True, help="List the files that would be checked, and exit.")
@click.option("--show-settings", is_flag=True,
              help="Print the effective settings for the first file (rules, options, excludes, config), and exit.")
@click.option("--target-jax-version", metavar="VERSION|SPEC",
              help="JAX version or range (e.g. 0.7, '>=0.4.30') the findings and fixes must be right for "
                   "(default: the project's own jax requirement, else the installed jax, else the newest known).")
@click.option("--target-platforms", metavar="NAMES",
              help="Platforms the findings and fixes must be right for, comma-separated: cpu, gpu, tpu or a plugin "
                   "backend such as metal (default: those the project's requirements declare, e.g. jax[tpu], plus "
                   "cpu; with none declared, cpu,gpu).")
@click.option("--analysis-budget-seconds", type=click.IntRange(min=0), metavar="SECONDS",
              help=f"CPU seconds the analysis of one file may take before it is reported as not checked "
              f"(default {MAX_ANALYSIS_SECONDS}; 0: no limit).")
@click.option("--analysis-budget-mib", type=click.IntRange(min=0), metavar="MIB",
              help=f"Memory (MiB) the analysis of one file may add before it is reported as not checked "
              f"(default {MAX_ANALYSIS_MIB}; 0: no limit; Linux).")
def run_command(paths, dry_run, check, select, extend_select, ignore, unsafe_fixes, jobs, exclude,
                extend_exclude, force_exclude, output_format, report_file, shard_spec, no_cache, cache_dir,
                no_progress, config, stdin_filename, exit_zero, exit_non_zero_on_fix, statistics, show_fixes,
                show_files, show_settings, target_jax_version, analysis_budget_seconds=None,
                analysis_budget_mib=None, target_platforms=None) -> int:
    """Rewrite the Python files under PATH... in place (default: the current directory).

    A PATH of '-' reads source from stdin and writes the result to stdout.
    """
    if dry_run and check:
        raise click.UsageError("--dry-run and --check are exclusive")
    if exit_zero and exit_non_zero_on_fix:
        raise click.UsageError("--exit-zero and --exit-non-zero-on-fix are exclusive")
    if show_files and show_settings:
        raise click.UsageError("--show-files and --show-settings are exclusive")
    mode = "dry-run" if dry_run else "check" if check else "fix"
    add_noqa = click.get_current_context().meta.get("add_noqa", False)
    if add_noqa and (dry_run or check or exit_non_zero_on_fix):
        raise click.UsageError("--add-noqa writes comments and fixes nothing: not with --dry-run, --check or "
                               "--exit-non-zero-on-fix")
    if add_noqa:
        mode = "check"  # find everything, fix nothing: the comments are the only edit
    options = Options(
        select=parse_codes(select),
        extend_select=parse_codes(extend_select) or [],
        ignore=parse_codes(ignore) or [],
        exclude=(*exclude, *extend_exclude),
        unsafe_fixes=unsafe_fixes,
        config=config,
        force_exclude=force_exclude,
        target_jax_version=target_jax_version,
        target_platforms=target_platforms,
        analysis_seconds=analysis_budget_seconds,
        analysis_mib=analysis_budget_mib,
    )
    shard = None
    if shard_spec is not None:
        from jax_codemod.engine.shard import Shard

        try:
            shard = Shard.parse(shard_spec)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--shard") from error
    paths = list(paths) or ["."]
    # A file with no project marker above it has the folder named that holds it as its root,
    # not the working directory's whole tree (stdin's file name names no folder).
    project.name_paths(path for path in paths if path != "-")
    if "-" in paths:
        if len(paths) > 1:
            raise click.UsageError("'-' (stdin) cannot be combined with other paths")
        if shard or report_file:
            raise click.UsageError("--shard and --report need paths, not '-' (stdin)")
        return _run_stdin(options, mode, output_format, stdin_filename or "<stdin>", exit_zero, exit_non_zero_on_fix)
    # (stdin to stdout writes nothing; any run over paths may write: fixes, the cache, --report.)
    from jax_codemod.engine import posix

    try:
        posix.require()
    except posix.Unsupported as error:
        raise click.UsageError(str(error)) from None
    if cache_dir and os.path.exists(cache_dir) and not os.path.isdir(cache_dir):
        raise click.BadParameter(f"{cache_dir!r} is not a directory", param_hint="--cache-dir")
    if report_file and not (show_files or show_settings):
        _check_report_destination(report_file, [os.getcwd(), *paths])
    report = output.Report(mode=mode)
    quiet = no_progress or output_format != "text"
    seen: set[str] = set()
    # Where a named symlink may lead: the working directory, the folders named, the projects.
    allowed = [os.getcwd(), *trusted_folders(paths)]
    warnings: list[tuple[str, str]] = []
    groups = resolve(paths, options)
    resolver = Resolver(options, groups)
    allowed += [os.path.dirname(os.path.abspath(g.config_path)) for g in groups if g.config_path]
    for group in groups:
        roots = [_discover_root(path, group, allowed, shard, seen, warnings)
                 for path in group.roots]
        # A file under a folder with a config of its own is governed by that one (and its excludes).
        roots = [(root, resolver.split(root_files, group)[0]) for root, root_files in roots]
        if show_files or show_settings:
            report.results.extend(FileResult(path) for _root, files in roots for path in files)
            report.errors.extend(error for root, _files in roots for error in root.discovery_errors)
            continue
        files = [path for _root, root_files in roots for path in root_files]
        cache = None if no_cache else _LazyCache(cache_dir, group.config_path)
        results = iter(check_per_config(
            files, resolver.split(files, group)[1], lambda batch, settings, cache=cache: _check_with_progress(
                batch, settings, jobs, quiet, cache and cache.bound(settings))))
        for root, root_files in roots:
            root.results = [next(results) for _path in root_files]
            report.roots.append(root)
            report.results.extend(root.results)
            report.errors.extend(root.discovery_errors)
    # The project's settings files that could not be read (a link out of the tree, too big, too deep).
    warnings[:0] = dict.fromkeys(w for g in resolver.groups.values() for w in g.warnings)
    for path, reason in warnings:
        click.echo(output.warning_line(path, reason), err=True)
    if show_files or show_settings:
        for error in report.errors:
            click.echo(output.error_line(error), err=True)
        if show_files:
            for result in report.results:
                click.echo(output.shown_path(result.path))
        else:
            _show_settings(report, groups, resolver, cache_dir, no_cache)
        return EXIT_ATTENTION if report.errors else EXIT_OK
    report.errors.extend(r.error for r in report.results if r.error is not None)
    if add_noqa:
        from jax_codemod.cli.add_noqa import add_noqa as baseline

        return EXIT_OK if baseline(report) or exit_zero else EXIT_ATTENTION
    if mode == "fix":
        report.errors.extend(write_results(report.changed))
    _render(report, output_format, statistics=statistics, show_fixes=show_fixes)
    if report_file:
        _write_report(report_file, output.render_report(report, str(shard) if shard else None), [os.getcwd(), *paths])
    return _exit_code(report, exit_zero=exit_zero, exit_non_zero_on_fix=exit_non_zero_on_fix)


class _LazyCache:
    """The result cache, opened (its module imported, its fingerprint computed) only when a file
    passes a rule's prefilter: a run over clean files never pays for it."""

    def __init__(self, directory: str | None, config_path: str | None, settings: Settings | None = None) -> None:
        self.directory = directory
        self.config_path = config_path
        self.settings = settings
        self._cache = None

    def bound(self, settings: Settings) -> _LazyCache:
        return _LazyCache(self.directory, self.config_path, settings)

    def _opened(self, settings: Settings | None = None):
        if self._cache is None:
            from jax_codemod.engine.cache import Cache, default_directory

            self._cache = Cache.open(self.directory or default_directory(self.config_path), self.settings or settings)
        return self._cache

    def process(self, source: bytes, path: str, settings: Settings, active=None):
        return self._opened(settings).process(source, path, settings, active)

    # The project gate's answers (``Cache.gate``): the cache opens for a file the gate asks about.
    def gate(self, path: str, source: bytes, rules, active):
        return self._opened().gate(path, source, rules, active)

    def forget_gates(self) -> None:
        opened = sys.modules.get("jax_codemod.engine.cache")
        if opened is not None:  # what an earlier run in this process kept
            opened.forget_gates()

    def new_gates(self) -> list:
        return self._cache.new_gates() if self._cache is not None else []

    def add_gates(self, found: list) -> None:
        if found:
            self._opened().add_gates(found)

    def save_gates(self) -> None:
        if self._cache is not None:
            self._cache.save_gates()


def _discover_root(path, group, allowed, shard, seen, warnings) -> tuple[output.Root, list[str]]:
    """One root and its files to check: its shard only, and a file under two roots in the first only."""
    found = discover([path], group.excludes, force_exclude=group.force_exclude, allowed=allowed, include=group.include,
                     respect_gitignore=group.respect_gitignore, venv_markers=group.venv_markers)
    warnings.extend(found.warnings)
    files = []
    for file, real in zip(found.files, found.real_paths, strict=True):
        if real not in seen:
            seen.add(real)
            files.append(file)
    if not found.files and not found.errors and os.path.isdir(path):
        warnings.append((path, "no Python files found under it"))
    if shard is not None:
        files = shard.select(files, path)
    return output.Root(path=path, discovery_errors=[FileError(p, reason) for p, reason in found.errors]), files


def _check_report_destination(path: str, trees: list[str]) -> None:
    """Fail before anything is written, not after: the folder must exist and take a new file."""
    def refuse(reason: str):
        raise click.BadParameter(f"{path!r}: {reason}", param_hint="--report")

    if os.path.islink(path):
        refuse("is a symbolic link; codemod does not write through one")
    linked = linked_folder(path, trees)
    if linked is not None:
        refuse(f"the folder {linked} on its way is a symbolic link inside the tree; codemod does not write through one")
    if os.path.isdir(path):
        refuse("is a directory")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        refuse(f"the folder {directory} does not exist")
    if not os.access(directory, os.W_OK | os.X_OK):
        refuse(f"cannot create files in {directory}")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        refuse("is not writable")


def _write_report(path: str, text: str, trees: list[str]) -> None:
    """Written to a new file beside it and renamed over it: never through a link, never half-written."""
    try:
        write_report(path, text + "\n", trees)
    except WriteError as error:
        raise click.FileError(path, hint=str(error)) from error


def _run_stdin(options: Options, mode: str, output_format: str, filename: str, exit_zero: bool = False,
               exit_non_zero_on_fix: bool = False) -> int:
    source = sys.stdin.buffer.read()
    start = os.path.dirname(os.path.abspath(filename)) if filename != "<stdin>" else "."
    config_path = options.config or find_pyproject(start)
    config = load_config(config_path) if config_path else Config()
    declared = declared_target(filename if filename != "<stdin>" else ".", options, config)
    group = prepare(Group([filename], config_path, config, options, declared), options)
    for path, reason in group.warnings:
        click.echo(output.warning_line(path, reason), err=True)
    ignored = ignored_here(group, filename) if filename != "<stdin>" else frozenset()
    settings = settings_for(group, ignored)
    result = process_source(source, filename, settings)
    report = output.Report(results=[result], mode=mode)
    if result.error is not None:
        report.errors.append(result.error)
    if mode == "fix" and output_format == "text":
        sys.stdout.buffer.write(result.fixed if result.changed and result.error is None else source)
        sys.stdout.flush()
        for finding in report.remaining:
            click.echo(output.finding_line(finding, mode), err=True)
        for error in report.errors:
            click.echo(output.error_line(error), err=True)
    else:
        _render(report, output_format)
    return _exit_code(report, exit_zero=exit_zero, exit_non_zero_on_fix=exit_non_zero_on_fix)


def _show_settings(report: output.Report, groups: list[Group], resolver: Resolver, cache_dir: str | None,
                   no_cache: bool) -> None:
    if not report.results:
        raise click.UsageError("--show-settings: no Python file found under the paths given")
    path = report.results[0].path
    # The cache is the root's; the settings are those of the config nearest the file.
    root_group = next(g for g in groups if any(_under(path, root) for root in g.roots))
    group = resolver.group_for(path)
    ignored = ignored_here(group, path)
    settings = settings_for(group, ignored)
    config = group.config
    # The config and its patterns come from the checked tree (a pull request's pyproject.toml):
    # every value is escaped like a file name.
    escape = output.escape
    config_shown = escape(os.path.abspath(group.config_path)) if group.config_path else "none (defaults)"
    options = {k: v for k, v in config.rule_options.items() if k not in ("target-jax-version", "target-platforms")}
    if no_cache:
        cache = "none (--no-cache)"
    else:
        from jax_codemod.engine.cache import ENV_VAR, default_directory

        where = ("--cache-dir" if cache_dir else f"${ENV_VAR}" if os.environ.get(ENV_VAR)
                 else "beside the config" if root_group.config_path else "the working directory")
        cache = f"{os.path.abspath(cache_dir or default_directory(root_group.config_path))} ({where})"
    lines = [
        f"Settings for: {output.shown_path(path)}",
        f"Config: {config_shown}",
        "Rules: " + (", ".join(f"{r.CODE} {r.NAME}" for r in settings.rules) or "none"),
        "Turned off here by per-file-ignores: " + (", ".join(escape(code) for code in sorted(ignored)) or "none"),
        f"Unsafe fixes: {str(settings.unsafe_fixes).lower()}",
        f"Target JAX: {escape(str(group.target))} (from {escape(str(group.target_source))})",
        f"Target platforms: {escape(str(group.platforms))} (from {escape(str(group.platforms_source))})",
        "Rule options: "
        + (", ".join(f"{escape(k)} = {escape(repr(v))}" for k, v in sorted(options.items())) or "none"),
        f"Include (file names a walk takes): {', '.join(escape(p) for p in root_group.include)}",
        f"Force exclude: {str(group.force_exclude).lower()}",
        "Git ignore files in the tree: " + ("honoured" if root_group.respect_gitignore else
                                            "not read (a trusted --config; respect-gitignore = true reads them)"),
        "pyvenv.cfg marks a virtualenv: " + ("yes" if root_group.venv_markers else "no (a trusted --config)"),
        f"Cache directory: {escape(cache)}",
        "Excludes (gitignore-style):",
    ]
    for patterns in group.excludes:
        if patterns.patterns:
            lines.append(f"  {escape(str(patterns.source))} (relative to {escape(str(patterns.base))}): "
                         + ", ".join(escape(p) for p in patterns.patterns))
    lines.append("Per-file ignores:" + ("" if group.per_file else " none"))
    for patterns, codes in group.per_file:
        lines.append(f"  {escape(patterns.patterns[0])} (relative to {escape(str(patterns.base))}): "
                     + ", ".join(escape(code) for code in codes))
    click.echo("\n".join(lines))


def _under(path: str, root: str) -> bool:
    path, root = os.path.abspath(path), os.path.abspath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _check_with_progress(files, settings, jobs, quiet, cache=None):
    if quiet or not progress_wanted(sys.stderr, os.environ) or len(files) <= 1:
        return check_files(files, settings, jobs, cache=cache)
    started = time.monotonic()
    done = 0

    def rate(_item) -> str:
        elapsed = time.monotonic() - started
        return f"{done / elapsed:,.0f} files/s" if done and elapsed > 0 else ""

    def advance(result) -> None:
        nonlocal done
        done += 1
        bar.update(1, result)

    with click.progressbar(length=len(files), label="Checking", file=sys.stderr, show_eta=True,
                           show_pos=True, item_show_func=rate,
                           update_min_steps=max(1, len(files) // 500)) as bar:
        return check_files(files, settings, jobs, on_result=advance, cache=cache)


def progress_wanted(stream, environ) -> bool:
    """A bar only for a person at a terminal: never in CI logs, pipes or dumb terminals."""
    return stream.isatty() and not environ.get("CI") and environ.get("TERM") != "dumb"


def _render(report: output.Report, output_format: str, statistics: bool = False, show_fixes: bool = False) -> None:
    # --statistics composes with every format: json gets a "statistics" array; the other
    # documents (and a dry run's patch) keep stdout, and the table goes to stderr.
    table = output.render_statistics(report) if statistics and output_format != "json" else ""
    if output_format == "json":
        click.echo(output.render_json(report, with_statistics=statistics))
    elif output_format == "sarif":
        from jax_codemod.cli.sarif import render_sarif

        click.echo(render_sarif(report))
    elif output_format == "github":
        click.echo(output.render_github(report), nl=False)
    else:
        if report.mode == "dry-run":
            for _path, diff in output.text_diffs(report):
                # As bytes: a file's non-UTF-8 bytes must reach the patch unchanged.
                click.echo(diff.encode("utf-8", "surrogateescape"), nl=False)
            if not statistics:
                shown = report.findings if show_fixes else report.unfixed
                for finding in shown:
                    click.echo(output.finding_line(finding, report.mode), err=True)
        elif statistics:
            if table:
                click.echo(table)
            table = ""
        else:
            shown = report.findings if show_fixes else report.remaining
            for finding in shown:
                click.echo(output.finding_line(finding, report.mode))
        for error in report.errors:
            click.echo(output.error_line(error), err=True)
    # One line per repository in a bulk run; files named one by one (pre-commit) get none.
    folders = [root for root in report.roots if os.path.isdir(root.path)]
    if len(folders) > 1:
        for root in folders:
            click.echo(output.root_summary_line(report, root), err=True)
    if table:
        click.echo(table, err=True)
    hint = output.fix_hint(report)
    if hint:
        click.echo(hint, err=True)
    # The summary stays the last line on stderr: scripts read it there.
    click.echo(output.render_summary(report), err=True)


def _exit_code(report: output.Report, exit_zero: bool = False, exit_non_zero_on_fix: bool = False) -> int:
    if exit_zero:
        return EXIT_OK
    if report.errors:
        return EXIT_ATTENTION
    if report.mode != "fix" and report.changed:
        return EXIT_ATTENTION
    if exit_non_zero_on_fix and report.mode == "fix" and report.changed:
        return EXIT_ATTENTION
    return EXIT_ATTENTION if report.unfixed else EXIT_OK


def _rule_named(name: str):
    """A rule by code (JAX005, any case) or by name (removed-dlpack-api)."""
    wanted = name.strip().lower()
    return next((r for r in jax_codemod.RULES if wanted in (r.CODE.lower(), r.NAME.lower())), None)


@cli.command("server")
def server_command() -> int:
    """Run the language server on stdin/stdout (editor integration; the `server` extra)."""
    from jax_codemod.cli.server import ServerUnavailable, serve

    try:
        return serve()
    except ServerUnavailable as error:
        raise click.UsageError(str(error)) from None


@cli.command("list")
def list_command() -> int:
    """List the rules: code, name, default, fix safety, what it does."""
    from jax_codemod import docs

    width = max(len(rule.NAME) for rule in jax_codemod.RULES)
    for rule in jax_codemod.RULES:
        default = "on" if rule.DEFAULT_ENABLED else "opt-in"
        fix = f"fix: {rule.FIX_SAFETY.value}"
        click.echo(f"{rule.CODE}  {rule.NAME:<{width}}  {default:<6}  {fix:<11}  {docs.summary(rule)}")
    return EXIT_OK


@cli.command("explain")
@click.argument("rule")
def explain_command(rule: str) -> int:
    """Show a rule's documentation; RULE is a code (JAX005) or a name (removed-dlpack-api)."""
    from jax_codemod import docs

    found = _rule_named(rule)
    if found is None:
        known = ", ".join(f"{r.CODE} ({r.NAME})" for r in jax_codemod.RULES)
        raise click.UsageError(f"unknown rule {rule!r} (known: {known})")
    click.echo(docs.explain(found))
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code instead of exiting."""
    _restore_interrupt_handler()
    try:
        # click's own main() would turn Ctrl-C into Abort after printing a blank line; this is
        # the rest of what it does, so that an interrupt is one line and exit 130 here.
        args = _after_double_dash(list(sys.argv[1:] if argv is None else argv))
        with cli.make_context("codemod", args) as ctx:
            result = cli.invoke(ctx)
    except KeyboardInterrupt:
        return interrupted()
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.ClickException as error:
        # A message may quote an argument or a config value (a file name pre-commit passed).
        error.message = output.escape(error.message)
        error.show()
        return EXIT_USAGE
    except click.Abort:
        # click turns a Ctrl-C at one of its prompts into Abort: an interrupt all the same.
        return interrupted()
    except ConfigError as error:
        click.echo(f"error: {output.escape(str(error))}", err=True)
        return EXIT_USAGE
    return result if isinstance(result, int) else EXIT_OK


def _after_double_dash(args: list[str]) -> list[str]:
    """Everything after ``--`` is a path, as click parses it; so is a ``-`` there: the file of
    that name (pre-commit passes file names after the hook's ``--``), never stdin.

    Under ``--pre-commit`` (the hook's entry) pre-commit's ``args:`` come after the ``--`` too,
    before the file names: see ``_hook_options``. Otherwise an option given there by mistake is a
    usage error that says so, not a missing file among the others.
    """
    if "--" not in args:
        return args
    cut = args.index("--") + 1
    head, tail = args[:cut], args[cut:]
    if "--pre-commit" in head:
        options, tail = _hook_options(tail)
        head = [*head[:-1], *options, "--"]
    for arg in tail:
        if arg.startswith("-") and arg != "-" and not os.path.lexists(arg):
            raise click.UsageError(
                f"{arg!r} is not a file; after '--' every argument is a path. Options go before '--' "
                "(the pre-commit hook's args: are read as options; see docs/ci.md)"
            )
    return [*head, *(os.path.join(".", arg) if arg == "-" else arg for arg in tail)]


def _hook_options(tail: list[str]) -> tuple[list[str], list[str]]:
    """pre-commit's ``args:`` and the staged files, as the hook receives them after its ``--``.

    pre-commit appends the file names after the args, and names only files that exist in the
    repository. So the arguments before the first one that names an existing path are the args
    (an option that takes a value takes the next argument, whatever it names); that argument and
    every one after it is a path, never an option: a committed file named ``--ignore=ALL`` exists,
    so it ends the options and is checked, as without ``--pre-commit``.
    """
    takes_value = {opt for param in run_command.params if isinstance(param, click.Option) and not param.is_flag
                   for opt in param.opts}
    index = 0
    while index < len(tail) and not os.path.lexists(tail[index]):
        index += 2 if tail[index] in takes_value else 1
    index = min(index, len(tail))
    return tail[:index], tail[index:]


def _restore_interrupt_handler() -> None:
    """From here a Ctrl-C is a KeyboardInterrupt again (cli/__init__ handled start-up), one the
    engine remembers even if something swallows it (``engine.interrupts``)."""
    import signal

    from jax_codemod import cli as package
    from jax_codemod.engine import interrupts

    try:
        if signal.getsignal(signal.SIGINT) is package._interrupted_while_starting:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:
        pass
    interrupts.install()


def interrupted() -> int:
    """Ctrl-C: one line, exit 130 (128 + SIGINT, as shells report it). Every write is atomic
    and removes its temporary when interrupted, so nothing is left half done."""
    try:
        sys.stderr.write("codemod: interrupted\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return EXIT_INTERRUPTED


def entry() -> None:
    try:
        code = main()
    except KeyboardInterrupt:  # a second Ctrl-C while the first was being handled
        code = EXIT_INTERRUPTED
    if code == EXIT_INTERRUPTED:
        # Once a KeyboardInterrupt has passed through the interpreter's own evaluation loop, CPython
        # re-sends itself SIGINT at exit, so the shell would see "killed by SIGINT" instead of 130.
        # After an interrupt nothing is left to finalise (every write is atomic): flush and leave.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    # Nothing is left to finalise either when the run is done (every write is atomic and
    # complete, no atexit hook of ours is pending): leaving without tearing the interpreter
    # down saves freeing every object the run made (~0.1 s after 20,000 files). Only when
    # both streams flush cleanly; otherwise Python's own exit reports the failure as before.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    if _may_skip_teardown():
        os._exit(code)
    sys.exit(code)


def _may_skip_teardown() -> bool:
    """Not under a tracer or profiler (coverage, cProfile write their data at exit), nor when
    CODEMOD_FULL_EXIT is set."""
    return sys.gettrace() is None and sys.getprofile() is None and not os.environ.get("CODEMOD_FULL_EXIT")
