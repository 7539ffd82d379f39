"""``codemod run --add-noqa``: write each finding's ``# noqa: CODE`` (``engine/noqa.py``) and say
what was added and what was left for a person."""

from __future__ import annotations

import click
from jax_codemod.cli import output
from jax_codemod.engine.noqa import annotate
from jax_codemod.engine.results import FileError
from jax_codemod.engine.runner import WriteError, write_atomic


def add_noqa(report: output.Report) -> bool:
    """``--add-noqa``: each finding's line gets a ``# noqa: CODE`` (engine/noqa.py), written as a
    fix is (atomic, only over the bytes that were read). True when every finding got one and no
    file failed."""
    added = files = left = 0
    for error in report.errors:
        click.echo(output.error_line(error), err=True)
    for result in report.results:
        if result.error is not None or not result.findings or result.source is None:
            continue
        done = annotate(result.path, result.source, result.findings)
        for line, reason in done.refused:
            left += 1
            click.echo(f"warning: {output.shown_path(result.path)}:{line}: no noqa added: {output.escape(reason)}",
                       err=True)
        if done.fixed is None:
            continue
        try:
            write_atomic(result.path, result.source, done.fixed, result.identity)
        except WriteError as error:
            failure = FileError(result.path, str(error))
            report.errors.append(failure)
            click.echo(output.error_line(failure), err=True)
            continue
        added += done.added
        files += 1
    click.echo(f"Added {added} noqa comment{'s' * (added != 1)} to {files} file{'s' * (files != 1)}"
               + (f"; {left} finding{'s' * (left != 1)} left without one" if left else ""), err=True)
    return not (left or report.errors)
