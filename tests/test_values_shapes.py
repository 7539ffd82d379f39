"""The value analysis on the shapes of issue 54 that got no finding, one test each (the rules'
cases are snapshots and projects; these pin the analysis's answer on its own)."""

from __future__ import annotations

import pytest
from jax_codemod.analysis.values import ARRAY, MULTI, PLACEMENT_UNKNOWN, SINGLE
from test_analysis_values import value

STEP = """
@jax.jit
def step(w, batch):
    logits = batch * w
    return w, {{"logits": logits, "parts": [logits, logits]}}

placed = {batch}
w, metrics = step(1.0, placed)
"""


@pytest.mark.parametrize("read", ['metrics["logits"]', 'metrics["parts"][0]', "w"])
def test_a_jit_output_inside_a_tuple_or_dict_is_placed_like_the_arguments(read):
    """Every array a jit of a sharded batch returns lies on the batch's devices (checked with
    JAX 0.10.2: even the returned replicated scalar has a sharding over 4 devices)."""
    found = value(STEP.format(batch="jax.device_put(jnp.ones(8), sharded)") + f"probe({read})\n")
    assert (found.kind, found.placement) == (ARRAY, MULTI)


def test_a_jit_output_inside_a_dict_is_no_tracer_out_there():
    found = value(STEP.format(batch="jnp.ones(8)") + 'probe(metrics["logits"])\n')
    assert (found.kind, found.placement) == (ARRAY, SINGLE)


def test_a_jit_output_of_unknown_arguments_stays_unknown():
    found = value(
        "@jax.jit\ndef step(w, batch):\n    return w, {'logits': batch * w}\n\n"
        "def run(placed: jax.Array):\n    w, metrics = step(1.0, placed)\n    probe(metrics['logits'])\n"
    )
    assert (found.kind, found.placement) == (ARRAY, PLACEMENT_UNKNOWN)
