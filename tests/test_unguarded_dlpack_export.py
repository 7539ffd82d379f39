"""JAX006 beyond the snapshots: its division of labour with JAX002, and zero findings
where no JAX array is exported (installed torch and numpy, and jax itself)."""

from __future__ import annotations

import textwrap

import pytest
from jax_codemod.engine.pipeline import Settings, check_source, process_source
from jax_codemod.rules.sharded_dlpack_export import ShardedDlpackExport
from jax_codemod.rules.unguarded_dlpack_export import UnguardedDlpackExport

BOUNDARIES = """
import jax
import jax.numpy as jnp
import torch

def annotated(value: jax.Array):
    return torch.from_dlpack(value)

def computed(value):
    return torch.from_dlpack(jnp.exp(value))

def sharded(value):
    return torch.from_dlpack(jax.pmap(jnp.exp)(value))

def created():
    return torch.from_dlpack(jnp.ones(3)), torch.from_dlpack(jax.random.normal(jax.random.key(0), (3,)))

def tensor(value: torch.Tensor):
    return torch.from_dlpack(value)
"""


def findings(source: str, *rules):
    _, found = check_source(textwrap.dedent(source).encode(), "case.py", rules)
    return [(f.code, f.line) for f in found]


def test_jax006_and_jax002_split_the_exports_without_overlap():
    found = findings(BOUNDARIES, ShardedDlpackExport({}), UnguardedDlpackExport({}))
    assert sorted(found) == [("JAX002", 13), ("JAX006", 7), ("JAX006", 10)]


def test_jax006_fix_is_unsafe_and_needs_opt_in():
    rule = UnguardedDlpackExport({})
    safe_only = process_source(textwrap.dedent(BOUNDARIES).encode(), "case.py", Settings((rule,), False))
    assert not safe_only.changed
    assert {f.fix.value for f in safe_only.findings} == {"unsafe"}
    opted_in = process_source(textwrap.dedent(BOUNDARIES).encode(), "case.py", Settings((rule,), True))
    assert opted_in.fixed.count(b"ensure_single_device(") == 3  # the definition and two exports


def test_jax006_is_off_by_default():
    assert UnguardedDlpackExport.DEFAULT_ENABLED is False


@pytest.mark.parametrize("rule", [ShardedDlpackExport, UnguardedDlpackExport], ids=lambda r: r.CODE)
def test_documented_example_is_found_and_its_fix_is_not(rule):
    doc = rule.__doc__
    for section in (
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "## Use instead",
        "## Fix safety",
    ):
        assert section in doc
    example, use_instead = (
        textwrap.dedent(block.split("```", 1)[0]) for block in doc.split("```python\n")[1:3]
    )
    assert findings(example, rule({})), "the example shows no anti-pattern"
    assert findings(use_instead, rule({})) == []
