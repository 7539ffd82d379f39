"""The value analysis on its own: one test per kind and per flow, independent of the rules.

Each program marks the expression under test as the argument of ``probe(...)`` (the last
such call is the one asked about).
"""

from __future__ import annotations

import ast
import textwrap

import pytest
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.values import (
    ARRAY,
    CALLABLE,
    CAPSULE,
    CONTAINER,
    DEVICE_TYPE,
    MODULE,
    MULTI,
    NOT_ADDRESSABLE,
    NUMPY,
    PLACEMENT_UNKNOWN,
    SHARDING,
    SINGLE,
    TORCH,
    TRACER,
    TRANSFORM,
    UNKNOWN,
    analysis_for,
)

HEADER = """\
import functools
import importlib
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding

mesh = jax.make_mesh((4,), ("x",))
sharded = NamedSharding(mesh, P("x"))
"""


def _probe(source: str, header: bool = True):
    text = (HEADER if header else "") + textwrap.dedent(source)
    ctx = FileContext("probe.py", text, ast.parse(text))
    calls = [
        n
        for n in ast.walk(ctx.tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "probe"
    ]
    assert calls, "the program has no probe(...)"
    last = max(calls, key=lambda c: (c.lineno, c.col_offset))
    return analysis_for(ctx), last.args[0]


def value(source: str, header: bool = True):
    analysis, expr = _probe(source, header)
    return analysis.value_of(expr)


def test_computed_once_per_context():
    text = "import jax\nx = jax.numpy.ones(3)\n"
    ctx = FileContext("a.py", text, ast.parse(text))
    assert analysis_for(ctx) is analysis_for(ctx) is ctx.analysis


# Kinds -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "kind", "placement"),
    [
        ("probe(jax.device_put(jnp.ones(8), sharded))", ARRAY, MULTI),
        ("probe(jnp.arange(8.0))", ARRAY, SINGLE),
        ("def f(x: jax.Array):\n    probe(x)", ARRAY, PLACEMENT_UNKNOWN),
        ("probe(jax.make_array_from_process_local_data(sharded, np.ones(4)))", ARRAY, NOT_ADDRESSABLE),
        ("probe(torch.zeros(3))", TORCH, PLACEMENT_UNKNOWN),
        ("probe(np.asarray(jnp.ones(3)))", NUMPY, PLACEMENT_UNKNOWN),
        ("probe(jax.device_get(jnp.ones(3)))", NUMPY, PLACEMENT_UNKNOWN),
    ],
)
def test_array_kinds_and_placement(source, kind, placement):
    found = value(source)
    assert (found.kind, found.placement) == (kind, placement)
    assert kind == TORCH or kind == NUMPY or found.why


def test_tracer_inside_a_jitted_function_but_not_its_static_argument():
    source = """
    @partial(jax.jit, static_argnames=("n",))
    def step(x, n):
        y = x * 2
        probe(y)
    """
    assert value(source).kind == TRACER
    assert value(source.replace("probe(y)", "probe(n)")).kind != TRACER


def test_tracer_of_a_function_jitted_by_a_call():
    assert value("def step(x):\n    probe(x)\nfast = jax.jit(step)\n").kind == TRACER


@pytest.mark.parametrize(
    ("source", "producer"),
    [
        ("probe(jnp.ones(3).__dlpack__())", "jax"),
        ("probe(jax.dlpack.to_dlpack(jnp.ones(3)))", "jax"),
        ("probe(torch.utils.dlpack.to_dlpack(torch.ones(3)))", "torch"),
        ("probe(torch.ones(3).__dlpack__())", "torch"),
        ("def f(x):\n    probe(x.toDlpack())", "cupy"),
        ("def f(x):\n    probe(x.__dlpack__())", "parameter"),
        ("import jax._src.dlpack as private\nprobe(private.to_dlpack(jnp.ones(3)))", "jax"),
    ],
)
def test_capsule_producer(source, producer):
    found = value(source)
    assert (found.kind, found.producer) == (CAPSULE, producer)


def test_dlpack_device_type_constant_through_an_alias():
    found = value("from torch.utils.dlpack import DLDeviceType\nKIND = DLDeviceType.kDLOpenCL\nprobe(KIND)")
    assert (found.kind, found.constant) == (DEVICE_TYPE, 4)


def test_sharding_kinds():
    assert value("probe(sharded)").placement == MULTI
    assert value("probe(SingleDeviceSharding(jax.devices()[0]))").placement == SINGLE
    base = value("from jax.sharding import Sharding\ndef f(s: Sharding):\n    probe(s)")
    assert (base.kind, base.placement) == (SHARDING, PLACEMENT_UNKNOWN)


# Callables and transforms -----------------------------------------------------------


def test_transform_of_alias_of_partial_jit():
    analysis, expr = _probe("fast = partial(jax.jit, static_argnames=('n',))\nprobe(fast)")
    transform = analysis.transform_of(expr)
    assert transform.name == "jax.jit"
    assert [k.arg for k in transform.options] == ["static_argnames"]
    assert analysis.value_of(expr).kind == TRANSFORM


def test_transform_of_a_decorated_function_keeps_options_and_function():
    analysis, expr = _probe(
        "fast = partial(jax.jit, out_shardings=sharded)\n@fast\ndef step(x):\n    return x\nprobe(step)"
    )
    transform = analysis.transform_of(expr)
    assert analysis.value_of(expr).kind == CALLABLE
    assert transform.function.name == "step" and transform.option("out_shardings") is not None


def test_decorator_factory_returning_partial_jit():
    source = """
    def jit_with(**options):
        return functools.partial(jax.jit, **options)

    @jit_with(donate_argnums=0)
    def step(x):
        return x

    probe(step)
    """
    analysis, expr = _probe(source)
    assert analysis.transform_of(expr).name == "jax.jit"


def test_private_and_renamed_transform_spellings():
    analysis, expr = _probe("from jax.experimental.shard_map import shard_map\nprobe(shard_map)")
    assert analysis.transform_of(expr).name == "jax.shard_map"


def test_function_transforms_lists_decorators_and_calls():
    text = HEADER + "def step(x):\n    return x\nfast = jax.jit(step, donate_argnums=0)\n"
    ctx = FileContext("a.py", text, ast.parse(text))
    function = next(n for n in ctx.tree.body if isinstance(n, ast.FunctionDef))
    [transform] = analysis_for(ctx).function_transforms(function)
    assert transform.name == "jax.jit" and transform.option("donate_argnums").value == 0


# Placement facts ---------------------------------------------------------------------


def test_jit_out_shardings_places_the_result():
    assert value("f = jax.jit(lambda x: x, out_shardings=sharded)\nprobe(f(jnp.ones(8)))").placement == MULTI


def test_jit_out_shardings_single_device_from_a_config_dict():
    source = """
    SHARDINGS = {"host": SingleDeviceSharding(jax.devices()[0])}
    f = jax.jit(lambda x: x, out_shardings=SHARDINGS["host"])
    probe(f(jax.device_put(jnp.ones(8), sharded)))
    """
    assert value(source).placement == SINGLE


def test_dict_of_jitted_functions():
    source = """
    steps = {"train": jax.jit(lambda x: x * 2, out_shardings=sharded)}
    probe(steps["train"](jnp.ones(8)))
    """
    assert value(source).placement == MULTI


def test_jitted_method_with_out_shardings():
    source = """
    class Trainer:
        @partial(jax.jit, static_argnums=0, out_shardings=sharded)
        def step(self, x):
            return x + 1

        def export(self, x):
            probe(self.step(x))
    """
    assert value(source).placement == MULTI


def test_with_sharding_constraint_inside_jit_places_the_result():
    source = """
    @jax.jit
    def step(x):
        return jax.lax.with_sharding_constraint(x * 2, sharded)

    probe(step(jnp.ones(8)))
    """
    assert value(source).placement == MULTI


def test_device_put_with_another_arrays_sharding():
    source = """
    a = jax.device_put(jnp.ones(8), sharded)
    probe(jax.device_put(np.ones(8), a.sharding))
    """
    assert value(source).placement == MULTI


def test_device_put_to_one_device_is_single():
    assert value("probe(jax.device_put(jnp.ones(8), jax.devices()[0]))").placement == SINGLE


@pytest.mark.parametrize(
    "source",
    [
        "probe(jax.pmap(lambda x: x)(jnp.ones((4, 2))))",
        "probe(jax.shard_map(lambda x: x, mesh=mesh, in_specs=P('x'), out_specs=P('x'))(jnp.ones(8)))",
        "probe(jax.make_array_from_callback((8,), sharded, lambda i: np.ones(8)[i]))",
        "probe(jax.device_put_replicated(jnp.ones(2), jax.devices()))",
    ],
)
def test_multi_device_producers(source):
    assert value(source).placement == MULTI


def test_explicit_sharding_mode_places_creation_on_the_mesh():
    assert value("with jax.set_mesh(mesh):\n    probe(jnp.zeros(8))").placement == MULTI
    assert value("probe(jnp.zeros(8, out_sharding=P('x')))").placement == MULTI
    assert value("with jax.set_mesh(mesh):\n    probe(jax.device_put(np.ones(8)))").placement == SINGLE
    assert value("probe(jnp.zeros(8))").placement == SINGLE


def test_shape_functions_are_no_arrays():
    # Decision 5 of issue 29's api.py: what JAX001 knew answers from shapes, values knows too.
    assert value("probe(jnp.broadcast_shapes((2, 1), (1, 3)))").kind != ARRAY
    assert value("probe(jax.lax.broadcast_shapes((2, 1), (1, 3)))").kind != ARRAY
    assert value("probe(jnp.add(jnp.ones(2), 1))").kind == ARRAY


def test_iota_is_creation():
    # Decision 4 of issue 29's api.py: lax.iota is placed as creation is, and says so.
    placed = value("with jax.set_mesh(mesh):\n    probe(jax.lax.iota(jnp.int32, 8))")
    assert (placed.placement, placed.why) == (MULTI, "`jax.lax.iota` under `jax.set_mesh`")
    assert value("probe(jax.lax.iota(jnp.int32, 8))").placement == SINGLE


# Flows -------------------------------------------------------------------------------


def test_reaching_definitions_not_every_assignment():
    source = """
    x = jax.device_put(jnp.ones(8), sharded)
    x = jnp.ones(8)
    probe(x)
    """
    assert value(source).placement == SINGLE
    later = "x = jnp.ones(8)\nprobe(x)\nx = jax.device_put(x, sharded)\n"
    assert value(later).placement == SINGLE


def test_branches_join_to_the_weaker_claim_unless_one_places_on_several_devices():
    source = """
    def f(flag):
        x = jax.device_put(jnp.ones(8), sharded)
        if flag:
            x = jnp.ones(8)
        probe(x)
    """
    # Along the path that skips the branch the array spans several devices: an export
    # raises there, whatever the other path holds.
    found = value(source)
    assert (found.placement, found.why) == (MULTI, "`jax.device_put` with a multi-device sharding on one path")
    unknown = source.replace("jnp.ones(8), sharded", "jnp.ones(8), device")
    assert value(unknown).placement == SINGLE  # unknown, or one device: the weaker claim
    # Beside something that is not an array (None, a host array, an unknown value) too.
    for other in ("None", "np.ones(8)", "load()"):
        assert value(source.replace("jnp.ones(8)\n", f"{other}\n")).placement == MULTI
    # A test of the value itself picks the path (a defensive gather): no evidence then.
    checked = source.replace("if flag:", "if len(x.sharding.device_set) > 1:")
    assert value(checked).placement == SINGLE
    picked = "x = jax.device_put(jnp.ones(8), sharded)\ny = x if len(x.devices()) == 1 else jnp.ones(8)\nprobe(y)"
    assert value(picked).placement == SINGLE
    assert value(picked.replace("len(x.devices()) == 1", "flag")).placement == MULTI
    # Not beside a tracer (JAX001's), a container or a function.
    for other in ("[jnp.ones(8)]", "{'x': jnp.ones(8)}"):
        assert value(source.replace("jnp.ones(8)\n", f"{other}\n")).kind == UNKNOWN


def test_tuple_unpacking():
    assert (
        value(
            "a, (b, c) = jnp.ones(1), (torch.ones(1), jax.device_put(jnp.ones(8), sharded))\nprobe(c)"
        ).placement
        == MULTI
    )
    assert value("a, (b, c) = jnp.ones(1), (torch.ones(1), jnp.ones(8))\nprobe(b)").kind == TORCH


def test_for_over_list_dict_items_and_values():
    base = "params = {'w': jax.device_put(jnp.ones(8), sharded), 'b': jax.device_put(jnp.ones(8), sharded)}\n"
    assert value(base + "for name, p in params.items():\n    probe(p)").placement == MULTI
    assert value(base + "for p in params.values():\n    probe(p)").placement == MULTI
    assert value(base + "for p in [params['w'], params['b']]:\n    probe(p)").placement == MULTI
    assert value(base + "for p in params:\n    probe(p)").kind == UNKNOWN


def test_literals_comprehensions_and_subscripts():
    base = "xs = [jax.device_put(jnp.ones(8), sharded) for _ in range(3)]\n"
    assert value(base + "probe(xs[0])").placement == MULTI
    assert value(base + "ys = {i: x for i, x in enumerate(xs)}\nprobe([y for y in xs][1])").placement == MULTI
    assert value("state = {'a': torch.ones(1), 'b': jnp.ones(1)}\nprobe(state['a'])").kind == TORCH


def test_dataclass_and_namedtuple_fields():
    source = """
    @dataclass
    class State:
        params: object
        step: int = 0

    class Batch(NamedTuple):
        images: object
        labels: object

    state = State(jax.device_put(jnp.ones(8), sharded))
    batch = Batch(torch.ones(2), labels=jnp.ones(2))
    probe(state.params)
    """
    assert value(source).placement == MULTI
    assert value(source.replace("probe(state.params)", "probe(batch.images)")).kind == TORCH
    assert value(source.replace("probe(state.params)", "probe(batch.labels)")).placement == SINGLE


def test_fields_of_a_parameter_annotated_with_a_record_class():
    source = """
    @dataclass
    class Rollout:
        obs: jax.Array
        images: torch.Tensor
        steps: int

    def export(rollout: Rollout, quoted: "Rollout"):
        probe(rollout.obs)
    """
    found = value(source)
    assert (found.kind, found.placement) == (ARRAY, PLACEMENT_UNKNOWN)
    assert found.why == "`Rollout.obs: jax.Array`"
    assert value(source.replace("probe(rollout.obs)", "probe(rollout.images)")).kind == TORCH
    assert value(source.replace("probe(rollout.obs)", "probe(rollout.steps)")).kind == UNKNOWN
    # A string annotation is parsed apart from the tree: no scope resolves its name.
    assert value(source.replace("probe(rollout.obs)", "probe(quoted.obs)")).kind == UNKNOWN


def test_a_return_annotation_answers_what_the_body_does_not_show():
    source = """
    def policy(obs) -> jax.Array:
        return obs * 2

    async def fetch() -> jax.Array:
        return await something()

    def frames() -> jax.Array:
        yield jnp.ones(3)

    def known() -> jax.Array:
        return torch.ones(3)

    probe(policy(o))
    """
    found = value(source)
    assert (found.kind, found.placement) == (ARRAY, PLACEMENT_UNKNOWN)
    assert found.why == "`policy()`, annotated `-> jax.Array`"
    assert value(source.replace("probe(policy(o))", "probe(fetch())")).kind == UNKNOWN
    # A generator function's call is a generator (of what it yields), whatever the annotation.
    assert value(source.replace("probe(policy(o))", "probe(frames())")).kind == CONTAINER
    assert value(source.replace("probe(policy(o))", "probe(known())")).kind == TORCH


def test_self_attribute_set_in_a_method():
    source = """
    class Model:
        def __init__(self):
            self.params = jax.device_put(jnp.ones(8), sharded)

        def export(self):
            probe(self.params)
    """
    assert value(source).placement == MULTI


def test_constructor_argument_stored_on_self():
    source = """
    class Holder:
        def __init__(self, weights):
            self.weights = weights

    holder = Holder(torch.ones(3))
    probe(holder.weights)
    """
    assert value(source).kind == TORCH


def test_return_values_of_functions_and_methods():
    source = """
    def shard(x):
        return jax.device_put(x, sharded)

    class Loader:
        def batch(self):
            return torch.ones(3)

    probe(shard(jnp.ones(8)))
    """
    assert value(source).placement == MULTI
    assert value(source.replace("probe(shard(jnp.ones(8)))", "probe(Loader().batch())")).kind == TORCH


@pytest.mark.parametrize(
    "annotation",
    [
        "jax.Array",
        "jnp.ndarray",
        "'jax.Array'",
        "jax.Array | None",
        "Float[Array, 'b n']",
        "Float[jax.Array, '...']",
    ],
)
def test_annotated_parameters(annotation):
    source = f"from jaxtyping import Array, Float\ndef f(x: {annotation}):\n    probe(x)"
    assert value(source).kind == ARRAY


def test_annotations_of_other_libraries():
    assert value("def f(x: torch.Tensor):\n    probe(x)").kind == TORCH
    assert value("def f(x: np.ndarray):\n    probe(x)").kind == NUMPY


def test_isinstance_narrowing_and_early_exit():
    assert value("def f(x):\n    if isinstance(x, jax.Array):\n        probe(x)").kind == ARRAY
    assert (
        value("def f(x):\n    if not isinstance(x, jax.Array):\n        return x\n    probe(x)").kind == ARRAY
    )
    assert value("def f(x):\n    if isinstance(x, torch.Tensor):\n        probe(x)").kind == TORCH


def test_match_case_narrowing():
    source = "def f(x):\n    match x:\n        case jax.Array():\n            probe(x)\n        case _:\n            pass"
    assert value(source).kind == ARRAY
    assert value(source.replace("jax.Array()", "torch.Tensor()")).kind == TORCH


def test_tree_map_passes_leaves_to_the_function():
    base = "tree = {'w': jax.device_put(jnp.ones(8), sharded)}\n"
    assert value(base + "jax.tree.map(lambda leaf: probe(leaf), tree)").placement == MULTI
    assert (
        value(
            base + "def to_torch(leaf):\n    return probe(leaf)\njax.tree_util.tree_map(to_torch, tree)"
        ).placement
        == MULTI
    )
    assert value(base + "for leaf in jax.tree.leaves(tree):\n    probe(leaf)").placement == MULTI
    analysis, expr = _probe(base + "probe(tree)")
    assert analysis.leaves(expr).placement == MULTI


def test_import_module_bindings():
    analysis, expr = _probe("dl = importlib.import_module('jax.dlpack')\nprobe(dl.to_dlpack)")
    assert analysis.qualname(expr) == "jax.dlpack.to_dlpack"
    assert value("def f():\n    t = importlib.import_module('torch')\n    probe(t)").kind == MODULE
    assert value("def f():\n    t = importlib.import_module('torch')\n    probe(t.ones(3))").kind == TORCH


def test_private_spellings():
    analysis, expr = _probe("from jax._src.dlpack import to_dlpack\nprobe(to_dlpack)")
    assert analysis.qualname(expr) == "jax.dlpack.to_dlpack"


def test_a_local_binding_shadows_an_import():
    analysis, expr = _probe("def f(torch):\n    probe(torch.from_dlpack)")
    assert analysis.qualname(expr) is None


def test_closures_see_the_enclosing_definitions():
    source = """
    def outer():
        x = jax.device_put(jnp.ones(8), sharded)
        def inner():
            probe(x)
    """
    assert value(source).placement == MULTI


def test_loop_carried_definition_reaches_an_earlier_use():
    source = """
    def f(xs):
        y = jax.device_put(jnp.ones(8), sharded)
        for _ in xs:
            probe(y)
            y = torch.ones(8)
    """
    # The first pass reads the sharded array; later ones a tensor.
    assert value(source).placement == MULTI
    assert value(source.replace("sharded)", "device)")).kind == UNKNOWN


def test_decorator_factory_forwards_its_keywords_into_the_transform():
    source = """
    def jit_with(**options):
        return partial(jax.jit, **options)

    @jit_with(out_shardings=sharded)
    def scale(x, factor=2.0):
        return x * factor

    probe(scale(jnp.ones(8)))
    """
    assert value(source).placement == MULTI


def test_container_annotations_hold_their_element_kind():
    analysis, expr = _probe("def f(params: dict[str, jax.Array]):\n    probe(params)")
    assert analysis.leaves(expr).kind == ARRAY
    assert (
        value("from typing import Sequence\ndef f(xs: Sequence[torch.Tensor]):\n    probe(xs[0])").kind
        == TORCH
    )


def test_each_name_of_one_import_statement_is_its_own_module():
    analysis, expr = _probe("from jax import dlpack as jdl, numpy as jnp2\nprobe(jnp2.ones(3))")
    assert analysis.value_of(expr).kind == ARRAY
    assert (
        value(
            "from jax import dlpack as jdl, numpy as jnp2\ndef f():\n    probe(jdl.to_dlpack(jnp2.ones(3)))"
        ).kind
        == CAPSULE
    )


def test_augmented_assignment_keeps_the_array():
    assert value("x = jax.device_put(jnp.ones(8), sharded)\nx += 1\nprobe(x)").placement == MULTI


def test_cupy_arrays_and_dlpack_devices():
    from jax_codemod.analysis.values import CUPY, DLPACK_DEVICE

    assert value("import cupy\nprobe(cupy.asarray([1, 2]))").kind == CUPY
    analysis, expr = _probe("x = jnp.ones(3)\nprobe(x.__dlpack_device__())")
    found = analysis.value_of(expr)
    assert found.kind == DLPACK_DEVICE and analysis.value_of(found.node).kind == ARRAY


def test_arguments_of_the_files_own_calls_reach_a_helpers_parameter():
    source = """
    def to_torch(x):
        probe(x)
        return torch.from_dlpack(x)

    a = to_torch(jax.device_put(jnp.ones(8), sharded))
    b = to_torch(jax.device_put(jnp.zeros(8), sharded))
    """
    assert value(source).placement == MULTI
    # One call passes a sharded array: the helper's export raises for it.
    mixed = source.replace("jax.device_put(jnp.zeros(8), sharded)", "jnp.zeros(8)")
    assert value(mixed).placement == MULTI
    # ...unless that call is a test's that expects the error: it says nothing of what the
    # helper is given where it works.
    mixed = "\n    import pytest" + mixed
    expected = mixed.replace(
        "a = to_torch(jax.device_put(jnp.ones(8), sharded))",
        "with pytest.raises(BufferError):\n        to_torch(jax.device_put(jnp.ones(8), sharded))",
    )
    assert value(expected).placement == SINGLE
    handwritten = mixed.replace(
        "a = to_torch(jax.device_put(jnp.ones(8), sharded))",
        "try:\n        to_torch(jax.device_put(jnp.ones(8), sharded))\n    except BufferError:\n        pass\n"
        "    else:\n        raise AssertionError('exported')",
    )
    assert value(handwritten).placement == SINGLE
    only = "import pytest\ndef to_torch(x):\n    probe(x)\nwith pytest.raises(BufferError):\n    to_torch(jax.device_put(jnp.ones(8), sharded))\n"
    assert value(only).placement == MULTI  # every call expects it: they are all there is
    passed_on = source + "callbacks = [to_torch]\n"
    assert value(passed_on).kind == UNKNOWN


def test_arguments_of_method_calls_on_self():
    source = """
    class Bridge:
        def export(self, x):
            return torch.from_dlpack(probe(x))

        def run(self):
            return self.export(jax.device_put(jnp.ones(8), sharded))
    """
    assert value(source).placement == MULTI


def test_ahead_of_time_compiled_jit_keeps_its_out_shardings():
    source = "f = jax.jit(lambda x: x, out_shardings=sharded)\ncompiled = f.lower(jnp.ones(8)).compile()\nprobe(compiled(jnp.ones(8)))"
    assert value(source).placement == MULTI


def test_shardings_of_a_multi_process_job_are_not_fully_addressable():
    source = "jax.distributed.initialize()\nprobe(jax.device_put(np.ones(8), NamedSharding(mesh, P('x'))))"
    assert value(source).placement == NOT_ADDRESSABLE
    local = "jax.distributed.initialize()\nlocal_mesh = jax.sharding.Mesh(jax.local_devices(), ('x',))\n"
    assert value(local + "probe(NamedSharding(local_mesh, P('x')))").placement == MULTI


def test_a_one_device_mesh_places_on_one_device():
    source = (
        "one = jax.make_mesh((1,), ('x',))\nprobe(jax.device_put(np.ones(8), NamedSharding(one, P('x'))))"
    )
    assert value(source).placement == SINGLE


def test_a_mesh_over_one_listed_device_places_on_one_device():
    for devices in ("jax.devices()[:1]", "[jax.devices()[0]]", "np.array(jax.devices()[1:2])"):
        source = f"one = jax.sharding.Mesh({devices}, ('x',))\nprobe(jax.device_put(np.ones(8), NamedSharding(one, P('x'))))"
        assert value(source).placement == SINGLE, devices
    every = "mesh = jax.sharding.Mesh(jax.devices()[:2], ('x',))\nprobe(jax.device_put(np.ones(8), NamedSharding(mesh, P('x'))))"
    assert value(every).placement == MULTI


def _index_sources():
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    paths = [*sorted((repo / "codemods").rglob("*.py")), *sorted((repo / "tests" / "snapshots").rglob("*.py"))]
    tricky = textwrap.dedent(
        """\
        import jax

        @decorate(step)
        @jax.jit
        def step(x):
            return helper(step, x)

        class Box:
            def step(self, y):
                return self.step(y); f = step
            call = lambda: step(
                step)
        if step: step(1)
        else:
            [step(v) for v in step]
        """
    )
    yield "tricky.py", tricky
    # A test module: one class of many methods, decorated over several lines, several
    # statements on a line, names on few lines and on most.
    methods = "".join(
        f"    @parameterized(\n        x=[{i}])\n    @jax.jit\n    def test_{i}(self, f=f):\n"
        f"        def f(x): return x + {i}; g = jax.jit(f)\n"
        + ("        self.assertEqual(f(1), g(1)); h = f\n" if i % 3 else "        y = (\n          f(2))\n")
        + (f"        class Inner{i}:\n            def f(self): return step(self)\n" if i % 7 == 0 else "")
        for i in range(120)
    )
    yield "module_test.py", f"import jax\nclass FooTest(jtu.JaxTestCase):\n{methods}    def step(self): pass\n"
    for path in paths:
        yield path.name, path.read_text(encoding="utf-8")


def test_call_index_by_name_is_the_full_index_restricted_to_it():
    """The per-name look-up (statements that hold the name) gives the full index's lists."""
    from jax_codemod.analysis.values import _uses_near, spelled_as_parsed

    compared = 0
    for name, text in _index_sources():
        tree = ast.parse(text)
        full = analysis_for(FileContext(name, text, tree))._index()
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        for identifier in sorted(names):
            if not spelled_as_parsed(text):
                continue
            near = _uses_near(tree, text, identifier)
            for kind in ("first", "func", "method", "load"):
                assert near[kind] == full[kind].get(identifier, []), (name, identifier, kind)
            compared += 1
    assert compared > 1000


def test_identifiers_spelled_other_than_parsed_are_noticed():
    from jax_codemod.analysis.values import spelled_as_parsed

    assert spelled_as_parsed("x = 1  # café, naïve → done…\n")
    assert not spelled_as_parsed("ｆｏｏ = 1\n")  # names foo
    assert not spelled_as_parsed("\ufb01le = 1\n")  # the ligature: names file
    assert not spelled_as_parsed("x = 1\ry = 2\n")


def _real_sources():
    """The repository's own code and snapshots, the installed jax's sources (a sample of its
    biggest files: short names such as ``f`` and ``x`` on most lines) and the edge cases."""
    from pathlib import Path

    yield from _index_sources()
    import importlib.util

    jax_root = Path(importlib.util.find_spec("jax").origin).resolve().parent
    biggest = sorted(jax_root.rglob("*.py"), key=lambda p: p.stat().st_size, reverse=True)[:4]
    for path in biggest:
        yield path.name, path.read_text(encoding="utf-8")
    yield "edges.py", textwrap.dedent(
        """\
        f = af = f_ = _f = f2 = 1
        y = f"{f}{af!r:>{f_}}" + 'f' + x.f + (f)[f] + 1if f else 2
        g = [0 for f in range(3)] + [f.f for f in z]; é = éf = fé = 0
        def f(f=f, *f2, **_f): return f(f)(f.f(f))
        x = f \\
            (f)
        class C(f, metaclass=f): f: f = f
        """
    )


def _name_token_lines(text: str) -> dict[str, set[int]]:
    """The plain reading: each NAME token of the text and the lines it stands on."""
    import io
    import keyword
    import tokenize

    found: dict[str, set[int]] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.NAME and not keyword.iskeyword(token.string):  # ``1if``
            found.setdefault(token.string, set()).add(token.start[0])
    return found


def test_whole_word_lines_hold_every_token_of_the_name():
    """``name_lines`` (a regex with look-arounds) misses no line where the tokenizer sees the
    name, and adds only lines where the name touches a non-ASCII character."""
    from jax_codemod.analysis.values import name_lines, spelled_as_parsed

    compared = 0
    for source_name, text in _real_sources():
        if not spelled_as_parsed(text):
            continue
        text_lines = text.split("\n")
        for name, token_lines in _name_token_lines(text).items():
            lines = name_lines(text, name)
            assert lines == sorted(set(lines)), (source_name, name)
            assert token_lines <= set(lines), (source_name, name, sorted(token_lines - set(lines))[:5])
            for extra in set(lines) - token_lines:
                # A line where the word stands but the tokenizer sees no such name: inside a
                # string or comment, or next to a non-ASCII character. Never a part of a longer
                # ASCII word.
                line = text_lines[extra - 1]
                assert any(
                    (at == 0 or not (line[at - 1].isascii() and (line[at - 1].isalnum() or line[at - 1] == "_")))
                    and (at + len(name) == len(line) or not (line[at + len(name)].isascii() and (line[at + len(name)].isalnum() or line[at + len(name)] == "_")))
                    for at in range(len(line))
                    if line.startswith(name, at)
                ), (source_name, name, extra)
            compared += 1
    assert compared > 5000


def test_uses_of_a_name_are_the_full_index_whichever_way_they_are_looked_up():
    """``Analysis._uses`` (the per-name walk, or the index for names on most lines or once the
    file's nodes are walked) gives the full index's lists, for every identifier."""
    compared = 0
    for source_name, text in _real_sources():
        tree = ast.parse(text)
        full = analysis_for(FileContext(source_name, text, tree))._index()
        names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})
        fresh = analysis_for(FileContext(source_name, text, tree))
        walked = analysis_for(FileContext(source_name, text, tree))
        _ = walked.nodes  # the shared node list, walked before the look-ups
        for identifier in names[:40]:
            for analysis in (fresh, walked):
                uses = analysis._uses(identifier)
                for kind in ("first", "func", "method", "load"):
                    assert uses[kind] == full[kind].get(identifier, []), (source_name, identifier, kind)
            compared += 1
    assert compared > 1000


def _plain_multi_process(analysis) -> bool:
    """The reading ``multi_process`` replaced: every call of the file, one by one."""
    return "initialize" in analysis.ctx.text and any(
        isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", None)) == "initialize"
        and analysis.qualname(node.func) == "jax.distributed.initialize"
        for node in ast.walk(analysis.ctx.tree)
    )


def test_multi_process_is_the_plain_reading():
    cases = [
        "import jax\njax.distributed.initialize()\n",
        "import jax\ninitialize()\n",
        "from jax.distributed import initialize\ninitialize(coordinator_address='a')\n",
        "from jax.distributed import initialize as start\nstart()\n",
        "from jax import distributed\nobj.initialize()\ndistributed.initialize()\n",
        "from jax.distributed import initialize\nobj.initialize()\ninitialize()\n",
        "from jax.distributed import initialize\ninitialize.x()\nf(initialize)\n",
        "import jax\n# jax.distributed.initialize()\ns = 'jax.distributed.initialize()'\n",
        "import jax\ndef main():\n    if rank:\n        jax.distributed.initialize(**kw)\n",
        "import jax\njax.distributed.initialize_later()\nreinitialize()\n",
        "import jax\nd = jax.distributed\nd.initialize()\n",
        "import torch\ntorch.distributed.initialize()\n",
    ]
    seen = {True: 0, False: 0}
    for source_name, text in [*(("case.py", c) for c in cases), *_real_sources()]:
        tree = ast.parse(text)
        plain = _plain_multi_process(analysis_for(FileContext(source_name, text, tree)))
        assert analysis_for(FileContext(source_name, text, tree)).multi_process == plain, (source_name, text[:200])
        seen[plain] += 1
    assert seen[True] >= 4 and seen[False] >= 20


def test_self_assignments_are_the_plain_walk_of_each_method():
    """``_self_assignments`` lists, per attribute, the values the method's own statements
    assign to ``self.<attr>``, in ``scope_nodes`` order, as the walk per attribute did."""
    from jax_codemod.analysis.scopes import scope_nodes

    compared = 0
    extra = textwrap.dedent(
        """\
        class A:
            def __init__(self, x, y: int = 0):
                self.a = self.b = x
                self.a: int = y
                self.c: int
                other.a = 1
                (self.d, self.e) = x
                def inner(this):
                    self.a = 3
                for self.f in x: pass
                self.a += 1
                [self.g for self.g in x]
            def m(me):
                me.a = 5
                if me: me.a = 6
                else: me.h = 7
        """
    )
    for source_name, text in [("extra.py", extra), *_real_sources()]:
        tree = ast.parse(text)
        analysis = analysis_for(FileContext(source_name, text, tree))
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for method in cls.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                positional = [*method.args.posonlyargs, *method.args.args]
                if not positional:
                    continue
                this = positional[0].arg
                indexed = analysis._self_assignments(method, this)
                attrs = {n.attr for n in ast.walk(method) if isinstance(n, ast.Attribute)}
                for attr in attrs:
                    plain = []
                    for node in scope_nodes(method):
                        targets = (
                            node.targets
                            if isinstance(node, ast.Assign)
                            else [node.target]
                            if isinstance(node, ast.AnnAssign) and node.value is not None
                            else []
                        )
                        for target in targets:
                            if (
                                isinstance(target, ast.Attribute)
                                and target.attr == attr
                                and isinstance(target.value, ast.Name)
                                and target.value.id == this
                            ):
                                plain.append(node.value)
                    assert indexed.get(attr, []) == plain, (source_name, cls.name, method.name, attr)
                    compared += bool(plain)
    assert compared > 100


def test_class_attributes_skip_only_methods_that_never_spell_the_attribute():
    """``_class_attribute`` skips the methods whose lines lack the attribute's name; the same
    values as reading every method (what it does when the text is not spelled as parsed)."""
    compared = 0
    for source_name, text in _real_sources():
        tree = ast.parse(text)
        fast = analysis_for(FileContext(source_name, text, tree))
        if not fast._spelled_as_parsed:
            continue
        slow = analysis_for(FileContext(source_name, text, tree))
        slow.__dict__["_spelled_as_parsed"] = False
        for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)][:60]:
            attrs = sorted(
                {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
                | {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
            )[:12]
            for attr in attrs:
                for instance in (True, False):
                    expected = slow._class_attribute(cls, attr, instance)
                    found = fast._class_attribute(cls, attr, instance)
                    assert found == expected and found.node is expected.node, (source_name, cls.name, attr)
                    compared += expected.kind != UNKNOWN
    assert compared > 100


# Flows of issue 34: aliases of device_put, trees, generators, records' own methods ---------


def test_a_partial_of_device_put_places_by_what_it_binds():
    put = "put = functools.partial(jax.device_put, device=sharded)\n"
    assert value(put + "probe(put(np.ones(8)))").placement == MULTI
    assert value(put + "probe(put(np.ones(8), device=jax.devices()[0]))").placement == SINGLE  # the call wins
    assert value("put = partial(jax.device_put)\nprobe(put(np.ones(8), sharded))").placement == MULTI
    one = "put = partial(jax.device_put, device=SingleDeviceSharding(jax.devices()[0]))\n"
    assert value(one + "probe(put(jnp.ones(8)))").placement == SINGLE
    # `src=` is where the data comes from: it places nothing.
    assert value("put = partial(jax.device_put, src=sharded)\nprobe(put(np.ones(8)))").placement == SINGLE
    # Options spread from a dict: which argument is the target is unknown.
    found = value("put = partial(jax.device_put, **options)\nprobe(put(np.ones(8)))")
    assert (found.kind, found.placement) == (ARRAY, PLACEMENT_UNKNOWN)


def test_device_put_of_a_tree_places_each_leaf_by_its_sharding():
    single = "SingleDeviceSharding(jax.devices()[0])"
    tree = f"b = jax.device_put({{'x': np.ones(8), 'y': np.ones(8)}}, {{'x': sharded, 'y': {single}}})\n"
    assert value(tree + "probe(b['x'])").placement == MULTI
    assert value(tree + "probe(b['y'])").placement == SINGLE
    assert value(tree + "for k, v in b.items():\n    probe(v)").placement == MULTI  # one leaf spans several
    pair = f"a, c = jax.device_put((np.ones(8), np.ones(8)), (sharded, {single}))\n"
    assert value(pair + "probe(a)").placement == MULTI
    assert value(pair + "probe(c)").placement == SINGLE
    one = "b = jax.device_put({'x': np.ones(8)}, sharded)\n"
    assert value(one + "for v in b.values():\n    probe(v)").placement == MULTI
    # Without a target each leaf stays where it is: a list of sharded arrays is no host data.
    kept = "xs = jax.device_put([jax.device_put(jnp.ones(8), sharded)])\n"
    assert value(kept + "probe(xs[0])").placement == MULTI
    assert value("probe(jax.device_put([1.0, 2.0]))").placement == SINGLE


def test_generators_give_what_they_yield():
    source = """
    def batches():
        for i in range(3):
            yield jax.device_put(jnp.ones(8), sharded)

    def more():
        yield from batches()

    async def stream():
        yield jax.device_put(jnp.ones(8), sharded)

    def host():
        yield np.ones(8)

    for b in batches():
        probe(b)
    """
    source = textwrap.dedent(source)
    found = value(source)
    assert found.placement == MULTI
    assert found.why == "`batches()`, which yields `jax.device_put` with a multi-device sharding"
    assert value(source.replace("for b in batches():", "for b in more():")).placement == MULTI
    assert value(source + "probe(next(batches()))").placement == MULTI
    assert value(source + "probe(next(iter(more())))").placement == MULTI
    assert value(source + "async def f():\n    async for s in stream():\n        probe(s)").placement == MULTI
    assert value(source + "probe(next(host()))").kind == NUMPY
    assert value(source + "probe(next(batches(), None))").placement == MULTI  # or the default
    assert value(source + "probe(next(host(), None))").kind == UNKNOWN
    assert value(source + "probe(next(iter({'a': jnp.ones(2)})))").kind == UNKNOWN  # a key
    shadowed = "def next(it):\n    return it\n"
    assert value(source + shadowed + "probe(next(batches()))").kind != ARRAY


def test_a_pmap_result_keeps_the_tree_its_function_returns():
    source = """
    f = jax.pmap(lambda x: {"a": x, "b": (x, x * 2)})
    out = f(jnp.ones((4, 2)))
    for k, v in out.items():
        probe(v)
    """
    assert value(source).kind == UNKNOWN  # "b" is a tuple, "a" an array: no one kind
    assert value(source.replace("probe(v)", "probe(out['b'][1])")).placement == MULTI
    assert value(source.replace("for k, v in out.items():", "for v in out['b']:")).placement == MULTI
    assert value("probe(jax.pmap(lambda x: x)(jnp.ones((4, 2))))").placement == MULTI
    # Tuples alone stay one array, and a function returning them keeps its name in the reason.
    pair = "pm = jax.pmap(lambda x: (x, x))\ndef forward(a):\n    return pm(a)\nprobe(forward(jnp.ones((4, 2)))[0])"
    assert value(pair).why == "`forward()`, which returns a `jax.pmap` function"


def test_self_of_a_record_method_is_the_instances_the_file_reads_it_on():
    source = """
    class Batch(NamedTuple):
        x: jax.Array

        def to_torch(self):
            return probe(self.x)

    Batch(x=jax.device_put(jnp.ones(8), sharded)).to_torch()
    """
    source = textwrap.dedent(source)
    assert value(source).placement == MULTI
    # Every instance counts: one on several devices is one on which the method raises.
    assert value(source + "Batch(jnp.ones(8)).to_torch()\n").placement == MULTI
    single = source.replace("jax.device_put(jnp.ones(8), sharded)", "jnp.zeros(8)")
    assert value(single + "Batch(jnp.ones(8)).to_torch()\n").placement == SINGLE
    # A receiver the file does not know might be any instance: the annotation is all there is.
    uncalled = source.replace("Batch(x=jax.device_put(jnp.ones(8), sharded)).to_torch()", "")
    unknown = value(uncalled + "def f(b):\n    return b.to_torch()\n")
    assert (unknown.kind, unknown.placement) == (ARRAY, PLACEMENT_UNKNOWN)
    annotated = value(uncalled + "def f(b: Batch):\n    return b.to_torch()\n")
    assert (annotated.kind, annotated.placement) == (ARRAY, PLACEMENT_UNKNOWN)
    # Beside the sharded instance the file shows, the method still raises for that one.
    assert value(source + "def f(b: Batch):\n    return b.to_torch()\n").placement == MULTI
    # Another class's method of that name says nothing of `self`.
    other = "class Other:\n    def to_torch(self):\n        return 1\nOther().to_torch()\n"
    assert value(source + other).placement == MULTI
    # A subclass's instances could be `self` too.
    derived = value(single + "class Sub(Batch):\n    pass\n")
    assert derived.placement == PLACEMENT_UNKNOWN


def test_a_parameter_annotated_with_a_record_is_the_instances_passed():
    source = """
    @dataclass
    class State:
        arr: jax.Array

    def export(s: State):
        return probe(s.arr)

    export(State(jax.device_put(jnp.ones(8), sharded)))
    """
    source = textwrap.dedent(source)
    assert value(source).placement == MULTI
    assert value(source + "export(State(jnp.ones(8)))\n").placement == MULTI  # one call raises
    single = source.replace("jax.device_put(jnp.ones(8), sharded)", "jnp.zeros(8)")
    assert value(single + "export(State(jnp.ones(8)))\n").placement == SINGLE
    # An instance built from `*args` shows no field: the annotation answers for it.
    starred = source.replace("export(State(jax.device_put(jnp.ones(8), sharded)))", "export(State(*parts))")
    assert value(starred).placement == PLACEMENT_UNKNOWN
    # Passed or stored elsewhere, the function has callers the file does not show.
    assert value(source + "handlers = [export]\n").placement == PLACEMENT_UNKNOWN
    # A method's callers on receivers the file does not know are not seen.
    method = source.replace("def export(s: State):", "class Exporter:\n    def export(self, s: State):")
    method = method.replace("    return probe(s.arr)", "        return probe(s.arr)")
    method = method.replace("\nexport(State(", "\nExporter().export(State(")
    assert value(method).placement == PLACEMENT_UNKNOWN


@pytest.mark.parametrize(
    ("update", "placement"),
    [
        ("state.replace(params=jax.device_put(jnp.ones(8), sharded))", MULTI),
        ("state.replace(step=2)", SINGLE),  # the field it leaves alone keeps its value
        ("state.replace(**changes)", PLACEMENT_UNKNOWN),  # what a mapping changes is unknown
    ],
)
def test_a_flax_struct_updated_by_replace_holds_what_the_update_puts(update, placement):
    # `flax.struct.dataclass` (and chex's) records copy themselves with `.replace(...)`; a class
    # that defines its own `replace` is read as any method is.
    found = value(f"""
        import flax.struct

        @flax.struct.dataclass
        class State:
            params: jax.Array
            step: int = 0

        changes = {{}}
        state = State(jnp.zeros(8))
        probe({update}.params)
    """)
    assert found.placement == placement


def test_a_list_or_dict_holds_what_its_scope_writes_into_it():
    put = "jax.device_put(jnp.ones(8), sharded)"
    assert value(f"out = []\nfor i in range(3):\n    out.append({put})\nprobe(out[0])").placement == MULTI
    assert value(f"out = []\nout.insert(0, {put})\nfor o in out:\n    probe(o)").placement == MULTI
    assert value(f"out = []\nout.extend([{put}])\nprobe(out[1])").placement == MULTI
    assert value(f"d = {{}}\nd['x'] = {put}\nprobe(d['x'])").placement == MULTI
    assert value(f"d = {{'x': None}}\nd['x'] = {put}\nprobe(d['x'])").placement == MULTI  # a placeholder
    assert value(f"d = {{}}\nd.update(x={put})\nprobe(d['x'])").placement == MULTI
    assert value(f"d = {{}}\nd.setdefault('x', {put})\nprobe(d['x'])").placement == MULTI
    # A later write of the key with a single-device array: the weaker claim (the last decides).
    assert value(f"d = {{'x': {put}}}\nd['x'] = jnp.ones(8)\nprobe(d['x'])").placement == SINGLE
    # Another key, another binding of the name, another scope: not this list's.
    assert value(f"d = {{'y': jnp.ones(8)}}\nd['x'] = {put}\nprobe(d['y'])").placement == SINGLE
    assert value(f"out = []\nout.append({put})\nout = [jnp.ones(8)]\nprobe(out[0])").placement == SINGLE
    other = f"out = [jnp.ones(8)]\ndef f():\n    out = []\n    out.append({put})\nprobe(out[0])"
    assert value(other).placement == SINGLE
    # An append of the list to itself is no loop.
    assert value("out = []\nout.append(out)\nprobe(out[0])").kind == CONTAINER


def test_a_function_that_returns_a_sharded_array_on_one_path_returns_one():
    source = """
    import math

    def shard_put(x, mesh):
        if math.prod(mesh.axis_sizes) == 1:
            return jax.device_put(x, jax.devices()[0])
        return jax.device_put(x, NamedSharding(mesh, P("x")))

    probe(shard_put(jnp.ones(8), mesh))
    """
    found = value(source)
    assert (found.placement, found.why) == (
        MULTI, "`shard_put()`, which returns `jax.device_put` with a multi-device sharding on one path"
    )
    # A return picked by a test of what it returns (ensure_single_device's own shape): the
    # weaker claim.
    gathered = """
    def gathered(x):
        if len(x.sharding.device_set) <= 1:
            return x
        return jax.device_put(x, jax.devices()[0])

    probe(gathered(jax.device_put(jnp.ones(8), sharded)))
    """
    assert value(gathered).placement != MULTI
