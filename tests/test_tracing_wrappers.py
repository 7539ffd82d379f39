"""Decorators that hand a trace the function they decorate (issue 54): `jax.jit(step)` of a
function under `functools.wraps` wrappers that call it with all their arguments, or under a
registry's decorator that returns it, traces the function as written."""

from __future__ import annotations

import ast
import textwrap

import pytest
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.tracing import tracing_for

WRAPPERS = """
import functools
import jax

def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper

def register(fn):
    REGISTRY.append(fn)
    return fn

def first_only(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(args[0])
    return wrapper

def replaced(fn):
    def other(*args, **kwargs):
        return None
    return other
"""


def _traced(source: str) -> set[str]:
    text = textwrap.dedent(WRAPPERS) + textwrap.dedent(source)
    ctx = FileContext("w.py", text, ast.parse(text))
    return {traced.node.name for traced in tracing_for(ctx).traced_functions()}


@pytest.mark.parametrize("decorators", ["@logged", "@logged\n@logged", "@register\n@logged"])
def test_a_function_under_wrappers_that_pass_everything_is_traced(decorators):
    assert "step" in _traced(f"{decorators}\ndef step(x):\n    return x\n\nfast = jax.jit(step)\n")


@pytest.mark.parametrize("decorators", ["@first_only", "@replaced", "@logged\n@replaced", "@unknown"])
def test_other_decorators_still_hide_it(decorators):
    assert "step" not in _traced(f"{decorators}\ndef step(x):\n    return x\n\nfast = jax.jit(step)\n")


def test_the_partial_reading_does_not_prove_such_a_file_clean():
    """JAX001 reads a file in parts first; there the wrappers' defs are stubs (`class logged:
    pass`), taken for wrappers that pass everything, so the reading never calls clean what the
    whole file reports."""
    from pathlib import Path

    from jax_codemod.engine.pipeline import check_source
    from jax_codemod.rules.traced_concrete_access import TracedConcreteAccess

    path = Path(__file__).parent / "snapshots" / "traced_concrete_access" / "report_stacked_wraps_jitted_by_call.py"
    _ctx, findings = check_source(path.read_bytes(), str(path), (TracedConcreteAccess(),))
    assert [(f.code, f.line) for f in findings] == [("JAX001", 33)]
