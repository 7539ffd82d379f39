"""The ``codemod`` command: gathers paths, renders results, picks the exit code.

Exit codes (stable; scripts and CI bots depend on them):
  0  nothing left to do
  1  changes would be made (--dry-run / --check), findings remain that were not
     fixed, or a file could not be read, parsed or written
  2  usage or configuration error
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

import click
import jax_codemod
from jax_codemod import docs
from jax_codemod.cli import output
from jax_codemod.cli.sarif import render_sarif
from jax_codemod.engine.cache import Cache, default_directory
from jax_codemod.engine.config import (
    Config,
    ConfigError,
    find_pyproject,
    load_config,
    parse_codes,
    resolve_target_jax_version,
    select_rules,
)
from jax_codemod.engine.discovery import discover
from jax_codemod.engine.pipeline import FileError, Settings, process_source
from jax_codemod.engine.runner import check_files, write_results
from jax_codemod.engine.shard import Shard

EXIT_OK, EXIT_ATTENTION, EXIT_USAGE = 0, 1, 2
EXIT_CODES_HELP = """\b
Exit codes:
  0  nothing left to do
  1  changes would be made (--dry-run/--check), findings remain unfixed,
     or a file could not be read, parsed or written
  2  usage or configuration error"""


@dataclass
class Options:
    select: list[str] | None
    extend_select: list[str]
    ignore: list[str]
    exclude: tuple[str, ...]
    unsafe_fixes: bool | None
    config: str | None
    target_jax_version: str | None = None


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP)
@click.version_option(jax_codemod.__version__, prog_name="codemod")
def cli() -> None:
    """Find and rewrite broken JAX interop code (DLPack, raw buffer pointers)."""


@cli.command("run", epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--dry-run", is_flag=True, help="Write nothing; print a unified diff of every change.")
@click.option("--check", is_flag=True, help="Write nothing; report findings (for CI).")
@click.option("--select", help="Rules to run: comma-separated codes, prefixes, or ALL.")
@click.option("--extend-select", help="Rules to run in addition to the selected ones (e.g. opt-in rules).")
@click.option("--ignore", help="Rules not to run: comma-separated codes, prefixes, or ALL.")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None, help="Also apply fixes marked unsafe.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel processes (default: CPU count).")
@click.option("--exclude", multiple=True, help="Glob of paths to skip (repeatable).")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "github", "sarif"]),
    default="text",
    show_default=True,
    help="Output format: json and sarif put one document on stdout; github prints workflow-command "
    "annotations.",
)
@click.option("--report", "report_file", type=click.Path(dir_okay=False, writable=True),
              help="Also write a JSON report of every change and finding, per root, to this file.")
@click.option("--shard", "shard_spec", metavar="I/N",
              help="Process only shard I of N (1-based), a stable partition of the files for CI matrices.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False),
              help="Cache directory (default: $CODEMOD_CACHE_DIR, else .codemod_cache beside the pyproject.toml "
              "in use, else in the working directory).")
@click.option("--no-progress", is_flag=True, help="Never show a progress bar.")
@click.option("--config", type=click.Path(dir_okay=False), help="pyproject.toml to read instead of the nearest.")
@click.option("--stdin-filename", help="Name to report for source read from stdin ('-').")
@click.option("--target-jax-version", metavar="X.Y[.Z]",
              help="JAX version the fixes must be right for (default: the installed jax, else the newest known).")
def run_command(paths, dry_run, check, select, extend_select, ignore, unsafe_fixes, jobs, exclude,
                output_format, report_file, shard_spec, no_cache, cache_dir, no_progress, config,
                stdin_filename, target_jax_version) -> int:
    """Rewrite the Python files under PATH... in place (default: the current directory).

    A PATH of '-' reads source from stdin and writes the result to stdout.
    """
    if dry_run and check:
        raise click.UsageError("--dry-run and --check are exclusive")
    mode = "dry-run" if dry_run else "check" if check else "fix"
    options = Options(
        select=parse_codes(select),
        extend_select=parse_codes(extend_select) or [],
        ignore=parse_codes(ignore) or [],
        exclude=tuple(exclude),
        unsafe_fixes=unsafe_fixes,
        config=config,
        target_jax_version=target_jax_version,
    )
    try:
        shard = Shard.parse(shard_spec) if shard_spec is not None else None
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--shard") from error
    paths = list(paths) or ["."]
    if "-" in paths:
        if len(paths) > 1:
            raise click.UsageError("'-' (stdin) cannot be combined with other paths")
        if shard or report_file:
            raise click.UsageError("--shard and --report need paths, not '-' (stdin)")
        return _run_stdin(options, mode, output_format, stdin_filename or "<stdin>")
    report = output.Report(mode=mode)
    quiet = no_progress or output_format != "text"
    seen: set[str] = set()
    for root_paths, config_path, config_data in _group_by_config(paths, options):
        settings, excludes = _settings(config_data, options)
        cache = None if no_cache else Cache.open(cache_dir or default_directory(config_path), settings)
        roots = [_discover_root(root_path, excludes, shard, seen) for root_path in root_paths]
        files = [path for _root, root_files in roots for path in root_files]
        results = iter(_check_with_progress(files, settings, jobs, quiet, cache))
        for root, root_files in roots:
            root.results = [next(results) for _path in root_files]
            report.roots.append(root)
            report.results.extend(root.results)
            report.errors.extend(root.discovery_errors)
    report.errors.extend(r.error for r in report.results if r.error is not None)
    if mode == "fix":
        report.errors.extend(write_results(report.changed))
    _render(report, output_format)
    if report_file:
        _write_report(report_file, output.render_report(report, str(shard) if shard else None))
    return _exit_code(report)


def _discover_root(path: str, excludes, shard: Shard | None, seen: set[str]) -> tuple[output.Root, list[str]]:
    """One root and its files to check: its shard only, and a file under two roots in the first only."""
    found = discover([path], excludes)
    files = []
    for file in found.files:
        real = os.path.realpath(file)
        if real not in seen:
            seen.add(real)
            files.append(file)
    if shard is not None:
        files = shard.select(files, path)
    return output.Root(path=path, discovery_errors=[FileError(p, reason) for p, reason in found.errors]), files


def _write_report(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as error:
        raise click.FileError(path, hint=error.strerror or str(error)) from error


def _run_stdin(options: Options, mode: str, output_format: str, filename: str) -> int:
    source = sys.stdin.buffer.read()
    config_data = _config_for(os.path.dirname(os.path.abspath(filename)) if filename != "<stdin>" else ".", options)
    settings, _ = _settings(config_data, options)
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
    return _exit_code(report)


def _config_for(start: str, options: Options) -> Config:
    path = options.config or find_pyproject(start)
    return load_config(path) if path else Config()


def _group_by_config(paths: list[str], options: Options):
    """(roots, config path, config) grouped by the pyproject.toml that governs them, in the order given."""
    groups: dict[str | None, list[str]] = {}
    configs: dict[str | None, Config] = {}
    for path in paths:
        config_path = options.config or find_pyproject(path)
        if config_path not in configs:
            configs[config_path] = load_config(config_path) if config_path else Config()
        groups.setdefault(config_path, []).append(path)
    return [(roots, key, configs[key]) for key, roots in groups.items()]


def _settings(config: Config, options: Options) -> tuple[Settings, tuple[str, ...]]:
    select = options.select if options.select is not None else config.select
    chosen = select_rules(
        jax_codemod.RULES,
        select,
        [*config.extend_select, *options.extend_select],
        [*config.ignore, *options.ignore],
    )
    unsafe = options.unsafe_fixes if options.unsafe_fixes is not None else config.unsafe_fixes
    # Always resolved here, so the cache fingerprint (rule options) changes with the installed jax.
    rule_options = {**config.rule_options,
                    "target-jax-version": resolve_target_jax_version(options.target_jax_version, config)}
    rules = tuple(rule(rule_options) for rule in chosen)
    return Settings(rules=rules, unsafe_fixes=unsafe), (*config.exclude, *options.exclude)


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


def _render(report: output.Report, output_format: str) -> None:
    if output_format == "json":
        click.echo(output.render_json(report))
    elif output_format == "sarif":
        click.echo(render_sarif(report))
    elif output_format == "github":
        click.echo(output.render_github(report), nl=False)
    else:
        if report.mode == "dry-run":
            for _path, diff in output.diffs(report):
                # As bytes: a file's non-UTF-8 bytes must reach the patch unchanged.
                click.echo(diff.encode("utf-8", "surrogateescape"), nl=False)
            for finding in report.unfixed:
                click.echo(output.finding_line(finding, report.mode), err=True)
        else:
            for finding in report.remaining:
                click.echo(output.finding_line(finding, report.mode))
        for error in report.errors:
            click.echo(output.error_line(error), err=True)
    # One line per repository in a bulk run; files named one by one (pre-commit) get none.
    folders = [root for root in report.roots if os.path.isdir(root.path)]
    if len(folders) > 1:
        for root in folders:
            click.echo(output.root_summary_line(report, root), err=True)
    click.echo(output.render_summary(report), err=True)


def _exit_code(report: output.Report) -> int:
    if report.errors:
        return EXIT_ATTENTION
    if report.mode != "fix" and report.changed:
        return EXIT_ATTENTION
    return EXIT_ATTENTION if report.unfixed else EXIT_OK


@cli.command("list")
def list_command() -> int:
    """List the rules: code, name, default, fix safety."""
    width = max(len(rule.NAME) for rule in jax_codemod.RULES)
    for rule in jax_codemod.RULES:
        default = "on" if rule.DEFAULT_ENABLED else "opt-in"
        click.echo(f"{rule.CODE}  {rule.NAME:<{width}}  {default:<6}  fix: {rule.FIX_SAFETY.value}")
    return EXIT_OK


@cli.command("explain")
@click.argument("code")
def explain_command(code: str) -> int:
    """Show a rule's documentation."""
    rule = jax_codemod.rule_by_code(code)
    if rule is None:
        known = ", ".join(r.CODE for r in jax_codemod.RULES)
        raise click.UsageError(f"unknown rule {code!r} (known: {known})")
    click.echo(docs.explain(rule))
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code instead of exiting."""
    try:
        result = cli.main(args=argv, prog_name="codemod", standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.ClickException as error:
        error.show()
        return EXIT_USAGE
    except click.Abort:
        click.echo("Aborted.", err=True)
        return EXIT_USAGE
    except ConfigError as error:
        click.echo(f"error: {error}", err=True)
        return EXIT_USAGE
    return result if isinstance(result, int) else EXIT_OK


def entry() -> None:
    sys.exit(main())
