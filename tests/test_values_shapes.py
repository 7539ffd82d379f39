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


STATE = "state = {'w': jax.device_put(jnp.ones(8), sharded)}\n"


@pytest.mark.parametrize(
    "read",
    [
        "copy.deepcopy(state)['w']",
        "copy.copy(state)['w']",
        "copy.deepcopy(state['w'])",
        "jax.tree_util.tree_leaves_with_path(state)[0][1]",
        "jax.tree.leaves_with_path(state)[0][1]",
        "jax.tree_util.tree_flatten_with_path(state)[0][0][1]",
    ],
)
def test_copies_and_path_pairs_keep_the_leaves_placement(read):
    found = value("import copy\n" + STATE + f"probe({read})\n")
    assert (found.kind, found.placement) == (ARRAY, MULTI)


def test_a_path_pair_unpacked_in_a_loop():
    found = value(STATE + "for path, leaf in jax.tree_util.tree_leaves_with_path(state):\n    probe(leaf)\n")
    assert (found.kind, found.placement) == (ARRAY, MULTI)
    assert value(STATE + "for path, leaf in jax.tree_util.tree_leaves_with_path(state):\n    probe(path)\n").kind != ARRAY


INHERITED = """
class Base:
    def __init__(self):
        self.batch = jax.device_put(jnp.ones(8), sharded)

    def shard(self, x):
        return jax.device_put(x, sharded)

class Child(Base):
    pass

class Override(Base):
    def __init__(self, batch):
        self.batch = batch

    def shard(self, x):
        return x
"""


@pytest.mark.parametrize("read", ["Child().shard(jnp.ones(8))", "Child().batch"])
def test_a_method_or_field_inherited_from_a_base_class(read):
    found = value(INHERITED + f"probe({read})\n")
    assert (found.kind, found.placement) == (ARRAY, MULTI)


@pytest.mark.parametrize("read", ["Override(jnp.ones(8)).shard(jnp.ones(8))", "Override(jnp.ones(8)).batch"])
def test_what_a_class_binds_itself_hides_its_bases(read):
    assert value(INHERITED + f"probe({read})\n").placement != MULTI


REGISTRY = """
HANDLERS = {{}}

def register(name):
    def record(function):
        HANDLERS[name] = function
        {ret}

    return record

@register("torch")
def to_torch(x):
    probe(x)

to_torch(jax.device_put(jnp.ones(8), sharded))
"""


def test_a_registry_decorator_that_hands_the_function_back_is_followed():
    found = value(REGISTRY.format(ret="return function"))
    assert (found.kind, found.placement) == (ARRAY, MULTI)


@pytest.mark.parametrize("ret", ["return lambda *a: function(*a)", "function = staticmethod(function)\n        return function"])
def test_a_decorator_that_returns_something_else_still_hides_it(ret):
    assert value(REGISTRY.format(ret=ret)).placement != MULTI


DISPATCH = """
@functools.singledispatch
def convert(value):
    return value

@convert.register(jax.Array)
def _(value):
    probe(value)

convert(jax.device_put(jnp.ones(8), sharded))
convert([1.0])
"""


def test_a_singledispatch_overload_for_jax_arrays_gets_the_calls_arrays():
    found = value(DISPATCH)
    assert (found.kind, found.placement) == (ARRAY, MULTI)
    by_annotation = DISPATCH.replace("@convert.register(jax.Array)\ndef _(value):", "@convert.register\ndef _(value: jax.Array):")
    assert value(by_annotation).placement == MULTI


def test_another_registrys_register_is_no_dispatch():
    source = DISPATCH.replace("@functools.singledispatch\n", "")
    assert value(source).placement == PLACEMENT_UNKNOWN


PROTOCOL = """
from typing import Protocol

class Exporter(Protocol):
    def export(self, value): ...

class TorchExporter:
    def export(self, value):
        probe(value)

def run(exporter: {annotation}, value):
    return exporter.export(value)

run(TorchExporter(), jax.device_put(jnp.ones(8), sharded))
"""


@pytest.mark.parametrize("annotation", ["Exporter", "TorchExporter"])
def test_a_protocol_annotation_hides_no_concrete_class(annotation):
    found = value(PROTOCOL.format(annotation=annotation))
    assert (found.kind, found.placement) == (ARRAY, MULTI)


SCAN = """
def constrain(x):
    return jax.lax.with_sharding_constraint(x, sharded)

def body(carry, x):
    return {carry}, None

@jax.jit
def run(init, xs):
    final, _ = jax.lax.scan(body, init, xs)
    return final

probe(run(jnp.zeros(8), jnp.ones((3, 8))))
"""


@pytest.mark.parametrize("carry", ["constrain(carry + x)", "jax.lax.with_sharding_constraint(carry + x, sharded)"])
def test_a_scan_carry_constrained_in_its_body_or_a_helper(carry):
    found = value(SCAN.format(carry=carry))
    assert (found.kind, found.placement) == (ARRAY, MULTI)


def test_a_scan_carry_left_alone_is_not_multi_device():
    assert value(SCAN.format(carry="carry + x")).placement != MULTI
