"""Silent depth (issue 54): a variable reassigned a hundred times in a row, or through a hundred
branches, keeps its placement; past the analysis's budget the file is reported as not fully
checked, never as clean.

The value analysis evaluates on demand, by recursion, cut at ``MAX_DEPTH`` evaluations; a cut
used to answer "unknown", and about twenty `x = x * 2` lost a sharded array's placement, so its
export went unreported without a word.
"""

from __future__ import annotations

import ast
import json
import textwrap

import pytest
from jax_codemod.analysis import values
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.values import MULTI, analysis_for
from jax_codemod.engine.pipeline import Settings, check_source, process_source
from jax_codemod.rules import RULES
from test_cli import invoke

ALL = Settings(rules=tuple(rule() for rule in RULES))
HEADER = """\
import jax
import jax.numpy as jnp
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4,), ("x",))
sharded = NamedSharding(mesh, P("x"))
"""


def _chain(n: int, branches: bool, indent: str = "") -> str:
    step = "if flag{i}:\n{indent}    x = x * 2\n" if branches else "x = x * 2\n"
    lines = f"{indent}x = jax.device_put(jnp.ones(8), sharded)\n"
    lines += "".join(indent + step.format(i=i, indent=indent) for i in range(n))
    return lines


def _probe(source: str):
    text = HEADER + textwrap.dedent(source)
    ctx = FileContext("probe.py", text, ast.parse(text))
    calls = [n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "probe"]
    return analysis_for(ctx), max(calls, key=lambda c: c.lineno).args[0]


@pytest.mark.parametrize("branches", [False, True], ids=["in-a-row", "through-branches"])
@pytest.mark.parametrize("n", [20, 100, 300])
def test_a_long_chain_keeps_its_placement(n, branches):
    analysis, expr = _probe(_chain(n, branches) + "probe(x)\n")
    found = analysis.value_of(expr)
    assert (found.kind, found.placement) == (values.ARRAY, MULTI)
    assert "device_put" in found.why
    assert analysis.unfinished == []


def test_a_chain_inside_a_function_that_returns_it():
    """The cut unwinds through ``returns_of``, which holds a placeholder while it computes: the
    placeholder goes with it, or the second asking would read "unknown" from it."""
    source = "def prepare(flag0=True, flag1=False):\n" + _chain(100, False, "    ") + "    return x\n"
    analysis, expr = _probe(source + "probe(prepare())\n")
    assert analysis.value_of(expr).placement == MULTI


def test_a_chain_assigned_to_a_field_of_a_record():
    """The same through ``_class_attribute``'s placeholder: `self.x = x` after 100 steps."""
    body = textwrap.indent(_chain(100, False) + "self.batch = x\n", "        ")
    source = f"class Loader:\n    def __init__(self):\n{body}\nprobe(Loader().batch)\n"
    analysis, expr = _probe(source)
    assert analysis.value_of(expr).placement == MULTI


@pytest.mark.parametrize("branches", [False, True], ids=["in-a-row", "through-branches"])
def test_the_export_after_a_hundred_steps_is_found(branches):
    source = HEADER + _chain(100, branches) + "t = torch.from_dlpack(x)\n"
    _ctx, findings = check_source(source.encode(), "chain.py", ALL.rules)
    line = source.count("\n")
    assert [(f.code, f.line) for f in findings if f.code == "JAX002"] == [("JAX002", line)]


def test_past_the_budget_the_file_is_not_fully_checked(monkeypatch):
    """One round of re-asking (instead of hundreds) cannot reach the 100th step: the question is
    given up, noted with its function, and the file reported, its findings left unfixed."""
    monkeypatch.setattr(values, "MAX_ROUNDS", 1)
    source = HEADER + "def convert(flag0=True):\n" + _chain(100, False, "    ") + "    return torch.from_dlpack(x)\n"
    result = process_source(source.encode(), "deep.py", ALL)
    assert result.error is not None
    assert result.error.message.startswith("not fully checked: the value analysis gave up in `convert`")
    assert result.error.line is not None and result.error.line > HEADER.count("\n")
    assert result.fixed is None


def test_past_the_budget_check_fails(tmp_path, monkeypatch):
    """--check must not call the file clean: exit 1, the error in the JSON report."""
    monkeypatch.setattr(values, "MAX_ROUNDS", 1)
    (tmp_path / "deep.py").write_text(HEADER + _chain(100, False) + "t = torch.from_dlpack(x)\n")
    code, out, _err = invoke(["run", "--check", "--no-cache", "--format", "json", tmp_path / "deep.py"])
    assert code == 1
    assert [e["message"][:40] for e in json.loads(out)["errors"]] == ["not fully checked: the value analysis ga"]


def test_a_short_chain_is_not_cut():
    """Within the depth nothing is asked twice and nothing is given up."""
    analysis, expr = _probe(_chain(5, True) + "probe(x)\n")
    assert analysis.value_of(expr).placement == MULTI
    assert analysis.unfinished == []
