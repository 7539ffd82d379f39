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
    assert f"{decorator}\ndef _step_traced(x, n):\n    return x * n\n" in after
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


def test_jit_nested_in_jit_converges():
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
    after = fixed(source)
    assert "def _outer_traced(x):" in after and "def _inner_traced(y):" in after
    assert findings(after) == []


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
