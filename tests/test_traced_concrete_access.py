"""JAX001 beyond the snapshot cases: spellings, static arguments, real-world precision."""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

import pytest
from jax_codemod.engine.pipeline import Settings, check_source, process_source
from jax_codemod.rule import FixSafety
from jax_codemod.rules.traced_concrete_access import TracedConcreteAccess

RULE = TracedConcreteAccess()

BODY = """
{imports}


{decorator}
def step(x, n):
    record(x.unsafe_buffer_pointer())
    return x * n
"""


def findings(source: str):
    _, found = check_source(textwrap.dedent(source).encode(), "case.py", [RULE])
    return [f for f in found if f.code == "JAX001"]


def fixed(source: str, unsafe: bool = False) -> str:
    result = process_source(
        textwrap.dedent(source).encode(), "case.py", Settings((RULE,), unsafe_fixes=unsafe)
    )
    assert result.error is None, result.error
    return result.fixed.decode() if result.fixed is not None else textwrap.dedent(source)


@pytest.mark.parametrize(
    ("imports", "decorator"),
    [
        ("import jax", "@jax.jit"),
        ("import jax as jx", "@jx.jit"),
        ("from jax import jit", "@jit"),
        ("from jax import jit as compiled", "@compiled"),
        ("import jax", "@jax.jit(static_argnames='n')"),
        ("import functools\nimport jax", "@functools.partial(jax.jit, static_argnums=1)"),
        (
            "import functools as ft\nfrom jax import jit",
            "@ft.partial(jit, static_argnames=('n',), donate_argnums=())",
        ),
        ("from functools import partial\nimport jax", "@partial(jax.jit, static_argnums=(-1,))"),
    ],
)
def test_every_jit_spelling_is_split(imports, decorator):
    source = BODY.format(imports=imports, decorator=decorator)
    [finding] = findings(source)
    assert finding.fix is FixSafety.SAFE
    assert (finding.line, finding.column) == (source.count("\n", 0, source.index("record(")) + 1, 12)
    after = fixed(source)
    # `@jax.jit(...)` needs JAX 0.8.1: the traced copy gets the spelling every JAX accepts.
    kept = decorator.replace("@jax.jit(", "@functools.partial(jax.jit, ")
    assert f"{kept}\ndef _step_traced(x, n):\n    return x * n\n" in after
    assert "def step(x, n):\n    record(x.unsafe_buffer_pointer())\n    return _step_traced(x, n)\n" in after


@pytest.mark.parametrize(
    ("imports", "decorator"),
    [
        ("from numba import jit", "@jit"),
        ("import numba", "@numba.jit(nopython=True)"),
        ("from mylib import jit", "@jit"),
        ("import jax\n\n\ndef jit(f):\n    return f", "@jit"),
        ("import jax\nfrom mylib import grad", "@grad"),
        ("import jax", "@jax.numpy.vectorize"),
        ("import jax\nfrom mylib import tools", "@tools.jit"),
    ],
)
def test_lookalike_decorators_are_not_transforms(imports, decorator):
    assert findings(BODY.format(imports=imports, decorator=decorator)) == []


@pytest.mark.parametrize(
    "decorator",
    [
        "@partial(jax.jit, static_argnums=0)",
        "@partial(jax.jit, static_argnums=(-2,))",
        "@partial(jax.jit, static_argnames='x')",
        "@partial(jax.vmap, in_axes=(None, 0))",
        "@partial(jax.grad, argnums=1)",
        "@partial(jax.pmap, static_broadcasted_argnums=(0,))",
        "@partial(jax.jit, static_argnums=STATIC)",  # unknown statics: no guess
    ],
)
def test_static_and_unmapped_arguments_are_concrete(decorator):
    source = f"from functools import partial\nimport jax\n\n\n{decorator}\ndef f(x, y):\n    record(x.unsafe_buffer_pointer())\n    return y\n"
    assert findings(source) == []


def test_static_varargs_are_not_guessed():
    source = """
    import jax

    @jax.jit(static_argnums=(1,))
    def f(x, *args):
        record(args[0].unsafe_buffer_pointer())
        return x
    """
    assert findings(source) == []


def test_wrapper_keeps_signature_and_docstring():
    source = '''
    import functools
    import jax

    SEEN = []


    @functools.partial(jax.jit, static_argnames=("mode",))
    def reduce(x: jax.Array, /, y=None, *rest: jax.Array, mode: str = "sum", **extra) -> jax.Array:
        """Reduce x."""
        SEEN.append(x.unsafe_buffer_pointer())
        return x
    '''
    before, after = {}, {}
    exec(textwrap.dedent(source), before)  # noqa: S102 -- running the code under test is the point
    exec(fixed(source), after)  # noqa: S102 -- running the code under test is the point
    assert inspect.signature(after["reduce"]) == inspect.signature(before["reduce"])
    assert after["reduce"].__doc__ == before["reduce"].__doc__ == "Reduce x."
    assert inspect.signature(after["_reduce_traced"]) == inspect.signature(before["reduce"])


def test_suppressed_access_blocks_the_split():
    source = """
    import jax

    @jax.jit
    def f(x):
        record(x.unsafe_buffer_pointer())  # codemod: ignore[JAX001]
        record(x.on_device_size_in_bytes())
        return x
    """
    [finding] = findings(source)
    assert finding.fix is FixSafety.NONE and "suppressed" in finding.message
    assert fixed(source) == textwrap.dedent(source)


def test_jit_called_inside_another_trace_is_reported_not_split():
    """`inner` runs inside `outer`'s trace: a wrapper in front of it would run there too.
    `outer` is split; `inner` is reported, before and after, and the fix converges."""
    source = """
    import jax

    @jax.jit
    def outer(x):
        record(x.unsafe_buffer_pointer())

        @jax.jit
        def inner(y):
            record(y.unsafe_buffer_pointer())
            return y

        return inner(x)
    """
    [reported, split] = sorted(findings(source), key=lambda f: f.fix.value)
    assert split.line == 6 and split.fix is FixSafety.SAFE
    assert reported.line == 10 and reported.fix is FixSafety.NONE
    assert "called from inside the traced `outer`" in reported.message
    after = fixed(source)
    assert "def _outer_traced(x):" in after and "_inner_traced" not in after
    [left] = findings(after)
    assert left.fix is FixSafety.NONE and "y.unsafe_buffer_pointer()" in left.message
    assert fixed(after) == after


def test_fresh_name_avoids_existing_names():
    source = """
    import jax

    _step_traced = None

    @jax.jit
    def step(x):
        record(x.unsafe_buffer_pointer())
        return x
    """
    assert "def _step_traced2(x):" in fixed(source)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("global COUNT\n    COUNT = x.unsafe_buffer_pointer()\n    return x", "global"),
        ("ptr = x.unsafe_buffer_pointer()\n    return x + ptr", "result"),
        ("y = x * 2\n    record(x.unsafe_buffer_pointer(), y)\n    return y", "computed inside the trace"),
        (
            "try:\n        record(x.unsafe_buffer_pointer())\n    finally:\n        pass\n    return x",
            "compound",
        ),
        ("record(x.unsafe_buffer_pointer())", "nothing would be left"),
        ("SINK['p'] = x.unsafe_buffer_pointer()\n    return x + SINK['p']", "reads back what it stores"),
    ],
)
def test_unsafe_to_hoist_shapes_are_reported_with_advice(body, reason):
    source = f"import jax\n\n\n@jax.jit\ndef f(x):\n    {body}\n"
    [finding] = findings(source)
    assert finding.fix is FixSafety.NONE
    assert reason in finding.message
    assert "outside the jitted function" in finding.message
    assert fixed(source, unsafe=True) == source


def test_rebound_parameter_is_an_intermediate():
    source = "import jax\n\n\n@jax.jit\ndef f(x):\n    x = x + 1\n    record(x.unsafe_buffer_pointer())\n    return x\n"
    [finding] = findings(source)
    assert finding.fix is FixSafety.NONE
    assert "computed inside `jax.jit`" in finding.message and "after" in finding.message


def test_installed_jax_has_no_findings():
    """Thousands of real files use these APIs correctly: zero findings."""
    import jax

    root = Path(jax.__file__).parent
    scanned, false_positives = 0, []
    for path in sorted(root.rglob("*.py")):
        source = path.read_bytes()
        try:
            ctx, found = check_source(source, str(path), [RULE])
        except SyntaxError:
            continue
        scanned += ctx is not None
        false_positives += [f"{f.path}:{f.line}: {f.message}" for f in found]
    assert scanned > 100, "the prefilter let too few jax files through for this test to mean anything"
    assert false_positives == []


FORWARDING = [
    (
        "@jax.jit",
        "x, y=None, *, k=None",
        "x + (0 if y is None else y) + (0 if k is None else k)",
        ["f(a)", "f(a, b)", "f(a, k=b)", "f(x=a, y=b)", "f(a, None, k=b)"],
    ),
    (
        "@jax.jit",
        "x, /, *args, **kwargs",
        "x + sum(args) + sum(kwargs.values())",
        ["f(a)", "f(a, b, b)", "f(a, b, z=a)", "f(a, **{'w': b})"],
    ),
    (
        "@partial(jax.jit, static_argnames='n')",
        "x, n=2",
        "x**n",
        ["f(a)", "f(a, 3)", "f(a, n=3)", "f(x=a, n=1)"],
    ),
    (
        "@partial(jax.jit, static_argnums=(1, 2))",
        "x, axis, keep=False",
        "jnp.sum(x, axis=axis, keepdims=keep)",
        ["f(m, 0)", "f(m, 1, True)", "f(m, axis=0, keep=True)"],
    ),
]


@pytest.mark.parametrize(("decorator", "signature", "result", "calls"), FORWARDING, ids=lambda v: str(v)[:20])
def test_split_function_matches_the_eager_original(decorator, signature, result, calls):
    """The original run eagerly (jax.disable_jit) is the oracle for values and side effects."""
    import jax

    source = (
        "from functools import partial\nimport jax\nimport jax.numpy as jnp\n\nSEEN = []\n\n\n"
        f"{decorator}\ndef f({signature}):\n    SEEN.append(x.unsafe_buffer_pointer())\n    return {result}\n"
    )
    after = fixed(source)
    assert "_f_traced" in after
    data = {"a": jax.numpy.arange(3.0), "b": jax.numpy.ones(3), "m": jax.numpy.ones((2, 3))}
    for call in calls:
        original, split = {}, {}
        exec(source, original)  # noqa: S102 -- running the code under test is the point
        exec(after, split)  # noqa: S102 -- running the code under test is the point
        with jax.disable_jit():
            expected = eval(call, original, dict(data))
        got = eval(call, split, dict(data))
        assert jax.numpy.array_equal(got, expected), call
        assert split["SEEN"] == original["SEEN"] and split["SEEN"][0] > 0, call


def test_static_locals_are_repeated_in_the_wrapper_and_traced_ones_are_not():
    static = """
    from functools import partial
    import jax

    @partial(jax.jit, static_argnums=1)
    def f(x, n):
        k = n * 2
        record(x.unsafe_buffer_pointer(), k)
        return x * k
    """
    after = fixed(static)
    assert after.count("k = n * 2") == 2
    assert "record(x.unsafe_buffer_pointer(), k)\n    return _f_traced(x, n)" in after
    traced = static.replace("static_argnums=1", "static_argnums=()")
    [finding] = findings(traced)
    assert finding.fix is FixSafety.NONE and "reads `k`" in finding.message


# The member table against the installed JAX ------------------------------------------

# Positional arguments for the members that need some, on a (1, 1) float32 array (a shape
# every array method accepts: `item()` needs one element, `mT`/`diagonal` two dimensions).
MEMBER_ARGUMENTS = {
    "addressable_data": (0,),
    "argpartition": (0,),
    "astype": ("int32",),
    "choose": ([0],),
    "compress": ([True],),
    "dot": "self",
    "repeat": (2,),
    "reshape": (-1,),
    "searchsorted": (0.5,),
    "swapaxes": (0, 1),
    "take": (0,),
    "to_device": "device",
}
# Protocol methods that hand out the buffer (DLPack, NumPy, pickle): reached through
# consumers, and callable directly.
PROTOCOL_MEMBERS = ("__array__", "__dlpack__", "__dlpack_device__", "__reduce__", "__array_interface__")


def _exercise(array, name: str, jax):
    """Read ``array.name`` and call it when it is a method; the exception it raises, or None."""
    arguments = MEMBER_ARGUMENTS.get(name, ())
    if arguments == "self":
        arguments = (array,)
    elif arguments == "device":
        arguments = (jax.devices()[0],)
    try:
        value = getattr(array, name)
        if callable(value) and not isinstance(value, jax.Array):
            value(*arguments)
    except Exception as error:  # noqa: BLE001 - the outcome under test, whatever it is
        return error
    return None


def _family(error, jax) -> str | None:
    """The table's name for what a tracer raised: a concretization-family error of
    jax.errors, or the AttributeError JAX raises for concrete-only attributes."""
    for name in ("TracerArrayConversionError", "TracerBoolConversionError", "TracerIntegerConversionError"):
        if isinstance(error, getattr(jax.errors, name, ())):
            return name
    if isinstance(error, jax.errors.ConcretizationTypeError):
        return "ConcretizationTypeError"
    if isinstance(error, AttributeError):
        return "AttributeError"
    return None


@pytest.mark.target_unpinned
def test_member_table_matches_installed_jax():
    """Every public member of jax.core.Tracer and of the concrete jax.Array type, and the
    buffer protocol methods, called on a real tracer inside jax.jit and on a concrete array:
    the members that raise a concretization-family error (or JAX's AttributeError for
    concrete-only attributes) on the tracer and work on the array are exactly the rule's
    table for this JAX version, with the error the table says."""
    import importlib.metadata

    import jax
    import jax.numpy as jnp
    from jax._src.core import Tracer
    from jax_codemod.rules import traced_concrete_access as rule

    version = tuple(int(p) for p in importlib.metadata.version("jax").split(".")[:3])
    concrete_type = type(jnp.ones((1, 1), jnp.float32))
    names = sorted(
        {n for n in dir(Tracer) if not n.startswith("_")}
        | {n for n in dir(concrete_type) if not n.startswith("_")}
        | set(PROTOCOL_MEMBERS)
        | {m.name for m in rule.TRACER_MEMBERS}
    )
    on_tracer: dict[str, BaseException | None] = {}

    def probe(x):
        for name in names:
            on_tracer[name] = _exercise(x, name, jax)
        return x

    jax.jit(probe)(jnp.ones((1, 1), jnp.float32))
    missing_arguments, concrete_only = [], {}
    for name in names:
        on_array = _exercise(jnp.ones((1, 1), jnp.float32), name, jax)  # fresh: delete() deletes
        if isinstance(on_array, TypeError) and "required positional argument" in str(on_array):
            missing_arguments.append(name)
        family = _family(on_tracer[name], jax)
        if on_array is None and family is not None:
            concrete_only[name] = family
    assert missing_arguments == [], "add arguments for these members to MEMBER_ARGUMENTS"
    table = rule.members_for(version)
    assert concrete_only == {name: member.error for name, member in table.items()}
    for name, member in table.items():
        value = getattr(jnp.ones((1, 1), jnp.float32), name)
        assert callable(value) is (member.positional is not None), name
        if member.positional is not None:
            fewest, most = member.positional
            given = len(MEMBER_ARGUMENTS.get(name, ()))
            assert fewest <= given and (most is None or given <= most), name


_DIFFERENTIATION_RUNS = {
    "jax.grad": lambda jax, f, x: jax.grad(f)(x),
    "jax.value_and_grad": lambda jax, f, x: jax.value_and_grad(f)(x),
    "jax.jacfwd": lambda jax, f, x: jax.jacfwd(f)(x),
    "jax.jacrev": lambda jax, f, x: jax.jacrev(f)(x),
    "jax.hessian": lambda jax, f, x: jax.hessian(f)(x),
    "jax.jvp": lambda jax, f, x: jax.jvp(f, (x,), (x,)),
    "jax.vjp": lambda jax, f, x: jax.vjp(f, x),
    "jax.linearize": lambda jax, f, x: jax.linearize(f, x),
}


@pytest.mark.parametrize("transform", sorted(_DIFFERENTIATION_RUNS))
def test_differentiation_table_matches_installed_jax(transform):
    """Each concrete-only member of the table, used inside a function only ``transform``
    traces: it works exactly when the table marks it ``differentiable`` (a JVP tracer's primal
    is concrete), and otherwise raises the table's error; under jit of that transform it
    always raises. Every jax transform of DIFFERENTIATION is run here."""
    import importlib.metadata

    import jax
    import jax.numpy as jnp
    from jax_codemod.rules import traced_concrete_access as rule

    assert {name for name in rule.DIFFERENTIATION if name.startswith("jax.")} == set(_DIFFERENTIATION_RUNS)
    version = tuple(int(p) for p in importlib.metadata.version("jax").split(".")[:3])
    run = _DIFFERENTIATION_RUNS[transform]
    for name, member in rule.members_for(version).items():
        outcome = {}

        def f(x, name=name, outcome=outcome):
            outcome["error"] = _exercise(x, name, jax)
            return (x * 2.0).sum()

        run(jax, f, jnp.ones((1, 1), jnp.float32))
        works = outcome["error"] is None
        assert works is member.differentiable, (name, outcome["error"])
        if not works:
            assert _family(outcome["error"], jax) == member.error, name
        jitted = {}
        jax.jit(lambda x: run(jax, lambda y: f(y, outcome=jitted), x))(jnp.ones((1, 1), jnp.float32))
        assert jitted["error"] is not None, f"{name} works under jax.jit({transform})"


@pytest.mark.parametrize("transform", ["jax.vmap", "jax.jit", "jax.checkpoint"])
def test_every_member_fails_under_the_other_transforms(transform):
    """Where the rule reports every member (no ``differentiable`` exception): each raises."""
    import importlib.metadata

    import jax
    import jax.numpy as jnp
    from jax_codemod.rules import traced_concrete_access as rule

    assert transform not in rule.DIFFERENTIATION
    version = tuple(int(p) for p in importlib.metadata.version("jax").split(".")[:3])
    apply = {"jax.vmap": jax.vmap, "jax.jit": jax.jit, "jax.checkpoint": jax.checkpoint}[transform]
    for name, member in rule.members_for(version).items():
        outcome = {}

        def f(x, name=name, outcome=outcome):
            outcome["error"] = _exercise(x, name, jax)
            return x * 2.0

        apply(f)(jnp.ones((1, 1), jnp.float32))
        assert _family(outcome["error"], jax) == member.error, (name, outcome["error"])


@pytest.mark.parametrize("transform", ["jax.jit", "jax.vmap", "jax.pmap", "jax.checkpoint", "jax.grad"])
def test_disable_jit_runs_only_jit_eagerly(transform):
    """Under `jax.disable_jit()` every member of the table works in a jitted function and
    raises its error under the other transforms, on the installed JAX: what the rule assumes
    (analysis/expected_errors.py EAGER_UNDER_DISABLE_JIT)."""
    import importlib.metadata

    import jax
    import jax.numpy as jnp
    from jax_codemod.analysis.expected_errors import DISABLE_JIT, EAGER_UNDER_DISABLE_JIT
    from jax_codemod.rules import traced_concrete_access as rule

    assert f"{jax.disable_jit.__module__}.disable_jit" in DISABLE_JIT  # the spelling a private import has
    version = tuple(int(p) for p in importlib.metadata.version("jax").split(".")[:3])
    apply = {"jax.jit": jax.jit, "jax.vmap": jax.vmap, "jax.pmap": jax.pmap, "jax.checkpoint": jax.checkpoint,
             "jax.grad": jax.grad}[transform]
    for name, member in rule.members_for(version).items():
        outcome = {}

        def f(x, name=name, outcome=outcome):
            result = (x * 2.0).sum()  # before the access: eagerly, `delete()` really deletes x
            outcome["error"] = _exercise(x, name, jax)
            return result

        with jax.disable_jit():
            apply(f)(jnp.ones((1, 1), jnp.float32))
        if transform in EAGER_UNDER_DISABLE_JIT:
            assert outcome["error"] is None, (name, outcome["error"])
        elif not (transform == "jax.grad" and member.differentiable):
            assert _family(outcome["error"], jax) == member.error, (name, outcome["error"])


def test_a_local_jitted_function_run_only_under_disable_jit_is_no_finding():
    source = """
    import jax
    import jax.numpy as jnp

    def test_eager():
        @jax.jit
        def f(x):
            return x.item()

        def g(x):
            return x.tolist()

        h = jax.jit(g)

        def v(x):
            return x.item()

        with jax.disable_jit():
            f(jnp.ones(()))
            h(jnp.ones(3))
            jax.jit(g)(jnp.ones(3))
            jax.vmap(v)(jnp.ones(3))

    def test_traced_too():
        @jax.jit
        def f(x):
            return x.item()

        with jax.disable_jit():
            f(jnp.ones(()))
        f(jnp.ones(()))
    """
    # vmap still traces under disable_jit; a call outside the block traces f
    assert sorted(f.line for f in findings(source)) == [16, 27]


@pytest.mark.parametrize(
    "body",
    [
        # Receivers only the value analysis calls tracers: a closure's return, an instance's attribute.
        "        def g():\n            return x\n        return g().item()\n",
        "        box = Box(x)\n        return box.v.item()\n",
    ],
    ids=["closure", "attribute"],
)
def test_run_only_under_disable_jit_is_asked_only_where_it_decides(body):
    """Whether a jitted function runs only under `jax.disable_jit()` is asked once an access would
    be found, or where a partial reading cannot judge a receiver (``Undecided``): the same
    findings as when asked first, and the partial reading still decides the file clean without
    the whole tree (asked first, the question came before the receiver it cannot judge)."""
    import ast

    from jax_codemod.analysis.context import FileContext

    def module(calls: str) -> str:
        head = "import jax\nimport jax.numpy as jnp\n\nclass Box:\n    def __init__(self, v):\n        self.v = v\n\n"
        filler = "".join(f"\ndef filler_{i}(a):\n    return a + {i}\n" for i in range(300))
        return head + f"def test_it():\n    @jax.jit\n    def f(x):\n{body}{calls}" + filler

    eager = module("    with jax.disable_jit():\n        f(jnp.ones(()))\n")
    traced_too = module("    with jax.disable_jit():\n        f(jnp.ones(()))\n    f(jnp.ones(()))\n")
    assert findings(eager) == []
    assert [f.line for f in findings(traced_too)] == [eager.splitlines().index(body.splitlines()[-1]) + 1]
    ctx = FileContext("case.py", eager, parse=lambda: ast.parse(eager))
    assert RULE.check(ctx) == [] and not ctx.has_tree


def test_differentiation_alone_is_no_finding():
    source = """
    import jax

    def f(x):
        if x.astype(bool).item():
            return x ** 2
        return x.nonzero()[0].sum() + x.tolist()[0]

    g = jax.grad(f)
    h = jax.jit(jax.grad(f))
    """
    # tolist() fails under grad too; item() and nonzero() only under the outer jit
    assert [(f.line, f.message.split("`")[1]) for f in findings(source)] == [
        (5, "x.astype(bool).item()"), (7, "x.nonzero()"), (7, "x.tolist()")
    ]
    only_grad = source.replace("    h = jax.jit(jax.grad(f))\n", "")
    assert [f.message.split("`")[1] for f in findings(only_grad)] == ["x.tolist()"]


def test_compile_time_eval_values_are_concrete():
    source = """
    import jax
    import jax.numpy as jnp

    @jax.jit
    def f(x):
        y = jnp.arange(3)
        with jax.ensure_compile_time_eval():
            n = jnp.arange(3).sum().item()
            w = (x * 2).sum()
            m = w.item()
            k = y.tolist()
        return x * n + m
    """
    # w comes from the traced x; y was computed before the block, in the trace
    assert [f.line for f in findings(source)] == [11, 12]


def test_sharding_only_under_sharding_in_types_is_no_finding():
    source = """
    import jax
    from jax._src import config

    @jax.jit
    def f(x):
        if config.sharding_in_types.value:
            a = x.sharding
        else:
            b = x.sharding
        return x
    """
    assert [f.line for f in findings(source)] == [10]


def test_nonzero_with_a_size_traces():
    """The table's `unless`: `x.nonzero(size=n)` has a static shape and traces."""
    import jax
    import jax.numpy as jnp

    jax.jit(lambda x: x.nonzero(size=1)[0])(jnp.ones(3))
    source = "import jax\n\n\n@jax.jit\ndef f(x):\n    a = x.nonzero()\n    b = x.nonzero(size=2)\n    return a, b\n"
    assert [f.line for f in findings(source)] == [6]


@pytest.mark.target_unpinned
def test_consumer_table_matches_the_libraries():
    """Every consumer in the table, with the libraries installed here: given a tracer inside
    jax.jit it raises the error the table says, given the concrete array it works (so moving
    the call out of the trace is a fix)."""
    import builtins
    import importlib
    import importlib.util
    import io

    import jax
    import jax.numpy as jnp
    from jax_codemod.rules import traced_concrete_access as rule

    def resolve(qualified: str):
        if "." not in qualified:
            return getattr(builtins, qualified)
        module, _, attr = qualified.rpartition(".")
        return getattr(importlib.import_module(module), attr)

    # How to call the consumers whose array is not their only argument.
    adapters = {
        "pickle.dump": lambda f: lambda x: f(x, io.BytesIO()),
        "torch.frombuffer": lambda f: lambda x: f(x, dtype=importlib.import_module("torch").float32),
        "numpy.frombuffer": lambda f: lambda x: f(x, dtype="float32"),
    }
    consumers = {}
    for qualified in rule.CONSUMERS:
        if "." in qualified and importlib.util.find_spec(qualified.split(".", 1)[0]) is None:
            continue  # cupy: not installed here
        function = resolve(qualified)
        consumers[qualified] = adapters.get(qualified, lambda f: f)(function)
    assert {"torch.as_tensor", "numpy.asarray", "memoryview"} <= set(consumers)
    outcomes = {}

    def probe(x):
        for name, consumer in consumers.items():
            try:
                consumer(x)
                outcomes[name] = None
            except Exception as error:  # noqa: BLE001 - the outcome under test
                outcomes[name] = error
        return x

    jax.jit(probe)(jnp.arange(4.0, dtype=jnp.float32))
    family = {name: _family(error, jax) or type(error).__name__ for name, error in outcomes.items() if error is not None}
    assert family == {name: rule.CONSUMERS[name].error for name in consumers}
    for consumer in consumers.values():
        consumer(jnp.arange(4.0, dtype=jnp.float32))  # the concrete array: no error


def test_buffer_helpers_raise_on_tracers_and_work_on_arrays():
    """cffi's `ffi.from_buffer` and ctypes' `from_buffer_copy`, the pointer helpers that take
    an array, fail on a tracer and work on the concrete array."""
    import ctypes
    import importlib.util

    import jax
    import jax.numpy as jnp

    helpers = [lambda x: (ctypes.c_char * 16).from_buffer_copy(x)]
    if importlib.util.find_spec("cffi") is not None:
        import cffi

        ffi = cffi.FFI()
        helpers += [lambda x: ffi.from_buffer(x), lambda x: ffi.from_buffer("float[]", x)]
    errors = []

    def probe(x):
        for helper in helpers:
            with pytest.raises(TypeError) as raised:
                helper(x)
            errors.append(raised.value)
        return x

    jax.jit(probe)(jnp.arange(4.0, dtype=jnp.float32))
    assert len(errors) == len(helpers)
    for helper in helpers:
        helper(jnp.arange(4.0, dtype=jnp.float32))



def test_tracers_through_containers_come_from_the_shared_analysis():
    """A tracer stored in a dict or a tuple is still a tracer: the shared value analysis
    follows those flows, and the finding is an intermediate (report, no split)."""
    source = """
    import jax

    @jax.jit
    def step(x, y):
        state = {"input": x}
        record(state["input"].unsafe_buffer_pointer())
        pair = (x, y)
        first, _ = pair
        record(first.on_device_size_in_bytes())
        return x
    """
    found = findings(source)
    assert [(f.line, f.fix) for f in found] == [(7, FixSafety.NONE), (10, FixSafety.NONE)]
    assert all("computed inside `jax.jit`" in f.message for f in found)


def test_static_parameters_stay_concrete_whatever_the_spelling():
    source = """
    import functools
    import jax
    import numpy as np

    @functools.partial(jax.vmap, in_axes=(0, None))
    def apply(row, table):
        lookup = {"t": table}
        record(np.asarray(lookup["t"]))
        return row
    """
    assert findings(source) == []


def test_arguments_bound_by_partial_are_constants():
    source = """
    import functools
    import jax
    import numpy as np

    def loss(params, batch, *, table):
        record(np.asarray(table))
        record(np.asarray(batch))
        return params

    fast = jax.jit(functools.partial(loss, table=np.ones(3)))
    """
    assert [f.line for f in findings(source)] == [8]
    both = source.rstrip() + "\n    slow = jax.jit(functools.partial(loss, np.ones(2)))\n"
    assert [f.line for f in findings(both)] == [7, 8]


def test_helpers_called_in_a_trace_are_reported_and_callbacks_are_not():
    source = """
    import jax
    import numpy as np

    def record(v):
        LOG.append(v.unsafe_buffer_pointer())

    def host(v):
        return np.asarray(v)

    def guarded(v):
        if isinstance(v, jax.core.Tracer):
            return v
        return np.asarray(v)

    @jax.jit
    def step(x):
        record(x * 2)
        guarded(x)
        return jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    """
    [finding] = findings(source)
    assert finding.line == 6 and finding.fix is FixSafety.NONE
    assert "called from inside the traced `step`" in finding.message


def test_helpers_of_helpers_and_lambdas_over_traced_leaves():
    source = """
    import jax
    import numpy as np

    def _validate(s):
        return s.tolist()

    def _update(c, s):
        _validate(s)
        return c

    def _outer(c, s):
        return _update(c, s)

    def _static(c, s, check):
        _validate(np.arange(3))
        if check is True:  # never true of a traced flag: not surely run on the tracer
            _peek(s)
        return c

    def _peek(s):
        return s.item()

    @jax.jit
    def update(c, s):
        return _static(_outer(c, s), s, c)

    @jax.jit
    def leaves(tree):
        sums = jax.tree.map(lambda leaf: np.asarray(leaf).sum(), tree)
        return jax.tree.map(lambda leaf: leaf * 2, tree), jax.tree.map(lambda leaf: leaf.item(), tree), sums
    """
    found = sorted(findings(source), key=lambda f: f.line)
    assert [(f.line, f.fix) for f in found] == [(6, FixSafety.NONE), (30, FixSafety.NONE), (31, FixSafety.NONE)]
    assert "`s` is a tracer inside `jax.jit`" in found[0].message


def test_a_tracer_returned_by_a_helper_is_followed_into_the_next_helper():
    """`to_host(normalize(x))`: the helper's return value is a tracer by its own taint, so the
    sink it goes to runs on a tracer (a miss before). A helper that does the access itself is
    reported there once: what it returns is concrete to its caller, no second finding."""
    source = """
    import jax
    import numpy as np

    def normalize(x):
        return (x - x.mean()) / (x.std() + 1e-6)

    def rows(x):
        return x.shape[0]

    def to_host(v):
        return np.asarray(v)

    def sink(v):
        return v.tolist()

    @jax.jit
    def step(x):
        y = normalize(x)
        h = to_host(x)
        sink(h)
        return sink(y), to_host(rows(x))
    """
    found = findings(source)
    assert sorted((f.line, f.fix) for f in found) == [(12, FixSafety.NONE), (15, FixSafety.NONE)]
    assert all("called from" in f.message for f in found)


def test_an_outer_jit_traces_what_an_inner_vmap_leaves_unmapped():
    source = """
    import jax
    import numpy as np

    def policy(params, obs):
        return obs * np.asarray(params).sum()

    def eager_policy(params, obs):
        return obs * params.item()

    fast = jax.jit(jax.vmap(policy, in_axes=(None, 0)))
    eager = jax.vmap(eager_policy, in_axes=(None, 0))  # unmapped, untraced: concrete
    """
    assert [(f.line, "`params` is a tracer" in f.message) for f in findings(source)] == [(6, True)]


@pytest.mark.parametrize(
    "use", ["step.lower(x)", "step.eval_shape(x)", "getattr(step, 'lower')(x)", 'hasattr(step, "trace")']
)
def test_no_split_where_the_file_uses_what_only_a_jitted_function_has(use):
    # The split replaces `step` by a plain wrapper, which has no `.lower`, `.trace`, ...
    source = f"""
    import jax

    @jax.jit
    def step(x):
        x.block_until_ready()
        return x + 1

    x = jax.numpy.ones(3)
    probe = {use}
    """
    [finding] = findings(source)
    assert finding.fix is FixSafety.NONE and "which a plain wrapper does not have" in finding.message


def test_detection_is_whitespace_tolerant_and_skips_jax_lookalikes():
    source = """
    import jax
    import jax.numpy as jnp
    import numpy as np

    @jax.jit
    def f(x):
        record(x.devices ())
        record(x . is_fully_replicated)
        record(np.asarray (x))
        y = jnp.array(x)
        return y
    """
    assert [f.line for f in findings(source)] == [8, 9, 10]


# The text scans behind the region, against the plain readings they replace -----------------

DECORATED_TEXTS = [
    "@jax.jit\ndef f(x):\n    return x\n",
    "  @a\n  # why\n\n  @b(1)\n  async  def g(): pass\n",
    "@dataclass\nclass A:\n    def f(self): pass\n@x\n",
    "y = a @ b\n@ c\ndef h(): pass\nz = '@'\n  @d @e\ndef i(): pass\n",
    "@a\r\ndef f(): pass\r\n@b\rdef g(): pass\r@c\ndef h(): pass\n",
    "s = '''\n@not_code\ndef j(): pass\n'''\n@jax.jit\n\n\ndef k(): pass",
    "@",
    "\n@\n",
    "@a\n@b\n",
    "x = 1 @ 2\n\t @f\n\tdef m(): pass\n@g\ndefine = 1\n@h\ndef n(): pass",
]


def _source_files(stdlib: int = 100) -> list[str]:
    """The package's and the snapshots' sources, and the standard library's first ``stdlib``
    modules: a fixed sample of them (a cut of the whole list by count shrank the standard
    library's part each time a module was added to the package)."""
    import jax_codemod

    root = Path(jax_codemod.__file__).parent
    paths = [*sorted(root.rglob("*.py")), *sorted((Path(__file__).parent / "snapshots").rglob("*.py"))]
    paths += sorted(Path(inspect.getfile(inspect)).parent.glob("*.py"))[:stdlib]
    return [p.read_text(encoding="utf-8", errors="replace") for p in paths]


def test_decorated_def_lines_are_those_of_the_regex():
    from jax_codemod.analysis import words

    texts = DECORATED_TEXTS + _source_files()
    found = 0
    for text in texts:
        # The regex run over the whole text, the slow way the fast scan must agree with.
        expected = words.lines_of(text, [match.end() for match in words.DECORATED_DEF.finditer(text)])
        assert words.decorated_def_lines(text) == expected, text[:300]
        found += len(expected)
    assert found > 500


def test_factory_candidates_are_the_functions_whose_lines_name_a_transform():
    """``Spellings._names_transform`` reads one scan of the text: the same answer as searching
    each module-level function's own lines (line breaks of every kind)."""
    import ast
    import re

    from jax_codemod.analysis.context import FileContext
    from jax_codemod.analysis.transforms import TRANSFORM_LEAVES, Spellings

    leaf = re.compile(r"\b(?:" + "|".join(sorted(TRANSFORM_LEAVES)) + r")\b")
    extra = [
        "def a(fn):\r\n    return jax.jit(fn)\r\ndef b():\r    return 1\rdef c(f): return vmap(f)\n",
        "def d(): pass\ndef e():\n    '''jit'''\ndef g(): return xjit\n",
        "def h(f):\n    return vmap(f)",
        "def i(f):\n    return f\n\n\ndef k(f): return jit",
    ]
    checked = named = 0
    for text in extra + _source_files():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        ctx = FileContext("t.py", text, tree)
        spellings = Spellings(ctx)
        for statement in tree.body:
            if isinstance(statement, ast.FunctionDef):
                lines = ctx.lines[statement.lineno - 1 : statement.end_lineno]
                expected = leaf.search("".join(lines)) is not None
                assert spellings._names_transform(statement) == expected, (text[:200], statement.name)
                checked += 1
                named += expected
    assert checked > 300 and named > 5


def test_an_override_a_traced_method_dispatches_to_is_reported_with_that_method():
    """`self.on_batch(x)` in the jitted `Trainer.step` runs each subclass's override in the
    trace: the access there is reported, naming the traced method, and nothing is rewritten
    (the access is not in the jitted function, and the hoist is not local)."""
    source = """
    import functools
    import jax
    import numpy as np

    class Trainer:
        @functools.partial(jax.jit, static_argnums=0)
        def step(self, x):
            return self.on_batch(x) * 2

        def on_batch(self, x):
            return x

    class NumpyTrainer(Trainer):
        def on_batch(self, x):
            return np.asarray(x)

    class ListTrainer(Trainer):
        def on_batch(self, x):
            return x.tolist()
    """
    found = sorted(findings(source), key=lambda f: f.line)
    assert [(f.line, f.fix) for f in found] == [(16, FixSafety.NONE), (20, FixSafety.NONE)]
    assert "no automatic fix because it is called from inside the traced `Trainer.step`" in found[0].message
    assert "`x` is a tracer inside `jax.jit` (called from the traced `Trainer.step`)" in found[1].message
    assert fixed(source, unsafe=True) == textwrap.dedent(source)


# Fix safety across modules (issue 54) ---------------------------------------------


def _project_findings(root: Path, files: dict[str, str]) -> list[dict]:
    import json

    from click.testing import CliRunner
    from jax_codemod.cli.main import main
    from jax_codemod.engine import project

    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    project.forget_roots()
    with CliRunner().isolation() as (out, _err, _):
        main(["run", "--dry-run", "--no-cache", "--no-progress", "--format", "json", "--select", "JAX001", str(root)])
        return sorted(json.loads(out.getvalue().decode())["findings"], key=lambda f: (f["path"], f["line"]))


_JITTED_MODULE = """
    import jax

    SEEN = []

    @jax.jit
    def step(x):
        SEEN.append(x.unsafe_buffer_pointer())
        return x * 2.0

    class Model:
        @jax.jit
        def apply(self, x):
            SEEN.append(x.unsafe_buffer_pointer())
            return x * 3.0
"""


def test_a_wrapper_that_an_importer_only_calls_is_still_a_fix(tmp_path: Path):
    """An importer that calls the function, and one that uses `lower` of something else, break
    nothing: the fix stays."""
    found = _project_findings(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/model.py": _JITTED_MODULE,
        "pkg/train.py": """
            from pkg.model import Model, step

            def run(x, text):
                return step(x), Model().apply(x), text.lower(), step.__name__
        """,
    })
    assert [(f["line"], f["fix"]) for f in found] == [(8, "safe"), (14, "safe")]


def test_an_importer_using_jitted_attributes_blocks_the_fix_and_is_named(tmp_path: Path):
    """`import pkg.model` then `pkg.model.step.trace(x)`, and `Model().apply.lower(...)` on an
    instance of the imported class: each split would raise AttributeError there."""
    found = _project_findings(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/model.py": _JITTED_MODULE,
        "pkg/train.py": """
            import pkg.model
            from pkg.model import Model

            def run(x):
                traced = pkg.model.step.trace(x)
                model = Model()
                return traced, model.apply.lower(model, x)
        """,
    })
    assert [(f["line"], f["fix"]) for f in found] == [(8, "none"), (14, "none")]
    assert "`pkg/train.py` line 6 imports `step` and uses its `trace`" in found[0]["message"]
    assert "`pkg/train.py` line 8 imports `Model().apply` and uses its `lower`" in found[1]["message"]


def test_members_named_by_a_string_are_access_text():
    """`getattr(x, "is_fully_replicated", True)` and `hasattr(x, "committed")` are accesses the
    prefilter, the access lines and the partial reading see; `mygetattr(...)` and a string that
    names no member are not."""
    from jax_codemod.rules.traced_concrete_access import TEXT

    text = 'import jax\n\nok = getattr(x, "is_fully_replicated", True)\nhas = hasattr(f(x), "committed")\n'
    assert TEXT.may_access(text.encode())
    assert TEXT.access_lines(text) == {3, 4}
    for other in ('mygetattr(x, "committed")\n', 'getattr(x, "shape")\n', 'getattr(x, name)\n'):
        assert not TEXT.may_access(other.encode()), other
        assert TEXT.access_lines(other) == set(), other
