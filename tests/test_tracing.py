"""The tracing answer (analysis/tracing.py) on its own: which functions run on tracers, which of
their parameters are traced, the local taint, and that it is one object per file, whose
answers the value analysis and JAX001 share."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_codemod.analysis import taint, tracing
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.tracing import (
    BY_CALL,
    CALLED_IN_TRACE,
    NOTHING_REPORTED,
    OTHER_DECORATORS,
    TRACED_TWICE,
    Region,
    Reported,
    tracing_for,
)

HEADER = "import functools\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax\n"


def _ctx(source: str) -> FileContext:
    text = HEADER + textwrap.dedent(source)
    return FileContext("t.py", text, ast.parse(text))


def _traced(source: str) -> dict[str, tracing.Traced]:
    ctx = _ctx(source)
    return {tracing.name_of(t.node): t for t in tracing_for(ctx).traced_functions()}


def test_one_tracing_per_file_kept_by_the_value_analysis():
    ctx = _ctx("def f(x):\n    return x\n")
    assert tracing_for(ctx) is tracing_for(ctx) is ctx.analysis.tracing
    assert ctx.analysis.spellings is tracing_for(ctx).spellings


def test_decorators_calls_and_lambdas():
    found = _traced(
        """
        @jax.jit
        def step(x, y):
            return x

        @functools.partial(jax.jit, static_argnames="n")
        def scaled(x, n):
            return x * n

        def plain(a):
            return a

        fast = jax.jit(plain)
        squares = jax.vmap(lambda v: v * v)
        """
    )
    assert found["step"].traced == {"x", "y"} and found["step"].obstacle is None
    assert found["scaled"].traced == {"x"}  # static arguments are concrete
    assert found["plain"].obstacle == (BY_CALL, "")  # the plain function may also run eagerly
    assert found["<lambda>"].transform == "jax.vmap"


def test_control_flow_bodies_and_methods():
    found = _traced(
        """
        class Model:
            def _step(self, x):
                return x

            def compiled(self):
                return jax.jit(self._step)

        def run(x):
            def body(i, carry):
                return carry
            return lax.fori_loop(0, 3, body, x)
        """
    )
    assert found["_step"].traced == {"x"}  # `self` is no argument of the jitted method
    assert found["body"].transform == "jax.lax.fori_loop" and found["body"].traced == {"i", "carry"}


def test_helpers_reached_from_a_trace():
    found = _traced(
        """
        def leaf(value, flag):
            return value

        def mid(value):
            return leaf(value, True)

        @jax.jit
        def step(x):
            return mid(x)
        """
    )
    assert found["mid"].caller == "step" and found["mid"].obstacle == (CALLED_IN_TRACE, "step")
    assert found["leaf"].caller == "mid" and found["leaf"].traced == {"value"}  # `flag` gets a constant
    assert found["leaf"].transforms == {"jax.jit"}


HIERARCHY = """
    class Trainer:
        @functools.partial(jax.jit, static_argnums=0)
        def step(self, x):
            return self.on_batch(x) * 2 + self.sibling(x)

        def on_batch(self, x):
            return x

        def sibling(self, x):
            return x

    class NumpyTrainer(Trainer):
        def on_batch(self, x):
            return x

    class Deeper(NumpyTrainer):
        def on_batch(self, x):
            return x

    class Replaced(Trainer):
        def step(self, x):  # an eager `step`: its instances never run the traced one
            return self.on_batch(x)

        def on_batch(self, x):
            return x

    class Child(Trainer):
        def on_batch(self, x):
            return super().on_batch(x)
    """


def _methods(ctx) -> dict[str, ast.FunctionDef]:
    return {
        f"{cls.name}.{node.name}": node
        for cls in ctx.tree.body
        if isinstance(cls, ast.ClassDef)
        for node in cls.body
        if isinstance(node, ast.FunctionDef)
    }


def test_a_traced_methods_hook_runs_the_overrides_of_the_files_subclasses():
    ctx = _ctx(HIERARCHY)
    methods = _methods(ctx)
    found = {t.node: t for t in tracing_for(ctx).traced_functions()}
    reached = {name for name, node in methods.items() if node in found}
    # Every `on_batch` an instance that inherits the traced `step` runs; not `Replaced`'s, whose
    # instances run their own eager `step`. `Child.on_batch`'s `super()` call reaches Trainer's.
    assert reached == {
        "Trainer.step", "Trainer.on_batch", "Trainer.sibling", "NumpyTrainer.on_batch", "Deeper.on_batch",
        "Child.on_batch",
    }
    override = found[methods["Deeper.on_batch"]]
    # `self` is no argument of the call: the tracer is `x`, and the traced method is named with its class.
    assert override.traced == {"x"} and override.caller == "Trainer.step"
    assert override.obstacle == (CALLED_IN_TRACE, "Trainer.step")


def test_a_method_called_through_self_is_found_outside_the_region():
    """JAX001's region holds the lines around its candidates: the call `self.sibling(x)` is not
    among them, the traced method and the access are."""
    ctx = _ctx(HIERARCHY)
    methods = _methods(ctx)
    lines = [methods["Trainer.step"].lineno, methods["NumpyTrainer.on_batch"].body[0].lineno]
    found = {t.node for t in tracing_for(ctx).traced_functions(Region(ctx.tree, lines))}
    assert methods["NumpyTrainer.on_batch"] in found and methods["Trainer.sibling"] in found


def test_the_class_hierarchy_of_a_file():
    from jax_codemod.analysis.classes import classes_for

    ctx = _ctx(
        HIERARCHY
        + """
    class Left(Trainer):
        def on_batch(self, x):
            return super().on_batch(x)

    class Right(Trainer):
        def on_batch(self, x):
            return x

    class Diamond(Left, Right):
        pass

    class Opaque(Exception, Trainer):
        pass

    class Later(Undefined):
        def on_batch(self, x):
            return x
    """
    )
    classes = classes_for(ctx)
    assert classes_for(ctx) is classes
    by_name = {c.name: c for c in ctx.tree.body if isinstance(c, ast.ClassDef)}
    methods = _methods(ctx)
    trainer, diamond = by_name["Trainer"], by_name["Diamond"]
    assert [getattr(c, "name", c) for c in classes.mro(diamond)] == ["Diamond", "Left", "Right", "Trainer"]
    assert {c.name for c in classes.subclasses(trainer)} == {
        "NumpyTrainer", "Deeper", "Replaced", "Child", "Left", "Right", "Diamond", "Opaque"
    }
    assert classes.lookup(diamond, "on_batch") is methods["Left.on_batch"]
    # Past Left in a Diamond's order: Right's method.
    assert classes.lookup(diamond, "on_batch", after=by_name["Left"]) is methods["Right.on_batch"]
    # An opaque base first in the order: what `on_batch` is there is unknown.
    assert classes.lookup(by_name["Opaque"], "on_batch") is None
    assert classes.bases(by_name["Later"]) == ["Undefined"] and classes.subclasses(by_name["Later"]) == []
    assert classes.lookup(trainer, "step") is None  # a decorated method is no plain one
    assert classes.definition(trainer, "step") is methods["Trainer.step"]
    child = methods["Child.on_batch"]
    call = child.body[0].value
    assert classes.called(child, call.func) == [methods["Trainer.on_batch"]]  # `super().on_batch`
    # `super()` in Left runs Trainer's method on a Left, Right's on a Diamond.
    left = methods["Left.on_batch"]
    assert classes.called(left, left.body[0].value.func) == [methods["Trainer.on_batch"], methods["Right.on_batch"]]


def test_methods_of_classes_outside_the_hierarchy_are_found_as_before():
    found = _traced(
        """
        import torch

        class Wrapped(torch.nn.Module):
            @functools.partial(jax.jit, static_argnums=0)
            def step(self, x):
                return self.forward(x) + self.own(x)

            def own(self, x):
                return x

        class Sub(Wrapped):
            def forward(self, x):  # before the opaque base in Sub's order: what `self.forward` runs
                return x

        def factory():
            class Local:
                @functools.partial(jax.jit, static_argnums=0)
                def step(self, x):
                    return self.inner(x)

                def inner(self, x):
                    return x
            return Local

        class Static:
            @staticmethod
            @jax.jit
            def step(x):
                return x.helper(x)

            def helper(self, x):
                return x
        """
    )
    # `Wrapped`'s `forward` is its base's, outside the file: not followed (only `Sub`'s
    # override is); a staticmethod has no `self` (`x.helper` is no method of the class).
    assert set(found) == {"step", "own", "inner", "forward"}
    assert found["own"].traced == found["inner"].traced == {"x"}


def test_a_function_traced_twice_and_one_with_other_decorators():
    found = _traced(
        """
        def cache(f):
            return f

        @jax.jit
        @cache
        def decorated(x):
            return x

        @jax.jit
        @jax.vmap
        def twice(x):
            return x
        """
    )
    assert found["decorated"].obstacle == (OTHER_DECORATORS, "")
    assert found["twice"].obstacle == (TRACED_TWICE, "")
    assert found["twice"].transform == "jax.vmap" and found["twice"].transforms == {"jax.jit", "jax.vmap"}


def test_a_region_sees_only_the_functions_on_its_lines():
    ctx = _ctx("@jax.jit\ndef a(x):\n    return x\n\n\n@jax.jit\ndef b(x):\n    return x\n")
    line = next(n.lineno for n in ast.walk(ctx.tree) if isinstance(n, ast.FunctionDef) and n.name == "b")
    found = tracing_for(ctx).traced_functions(Region(ctx.tree, [line]))
    assert [t.node.name for t in found] == ["b"]


def test_taint_follows_jax_calls_and_stops_at_what_a_rule_reports():
    ctx = _ctx(
        """
        @jax.jit
        def step(x, n):
            y = jnp.sin(x)
            z = y.reshape(-1)
            k = n + 1
            host = z.tolist()
            fresh = jnp.zeros(3)
            return z
        """
    )
    answer = tracing_for(ctx)
    [traced] = answer.traced_functions()
    names = answer.tainted_names(traced.node, frozenset({"x"}))
    assert {"x", "y", "z", "fresh", "host"} <= names and "k" not in names and "n" not in names
    reported = Reported(call=lambda ctx, call: getattr(call.func, "attr", None) == "tolist")
    assert "host" not in answer.tainted_names(traced.node, frozenset({"x"}), reported)
    # A fresh set each time: a caller that adds to it changes no later answer.
    answer.tainted_names(traced.node, frozenset({"x"})).add("k")
    assert "k" not in answer.tainted_names(traced.node, frozenset({"x"}), NOTHING_REPORTED)


def test_compile_time_eval_lines_and_leaf_aliases():
    ctx = _ctx(
        """
        @jax.jit
        def step(params):
            for leaf in jax.tree.leaves(params):
                print(leaf)
            with jax.ensure_compile_time_eval():
                table = jnp.arange(3)
            return params
        """
    )
    answer = tracing_for(ctx)
    [traced] = answer.traced_functions()
    assert answer.comprehension_aliases(traced.node, {"params"}) == {"leaf": "params"}
    [(start, end)] = answer.compile_time_eval_lines(traced.node)
    table = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.Assign))
    assert start == end == table.lineno
    assert "table" not in answer.taint(traced.node, frozenset({"params"}), [(start, end)])


def test_the_value_analysis_asks_the_tracing_answer():
    ctx = _ctx("def step(x, n):\n    return x\nfast = jax.jit(step, static_argnums=1)\n")
    function = next(n for n in ctx.tree.body if isinstance(n, ast.FunctionDef))
    x, n = function.args.args
    assert ctx.analysis.function_transforms(function) == tracing_for(ctx).function_transforms(function)
    answer = tracing_for(ctx)
    assert answer.traced_parameter(x, function) and not answer.traced_parameter(n, function)
    body_x = function.body[0].value
    assert ctx.analysis.is_tracer(body_x) and tracing_for(ctx).is_tracer(body_x)


def test_no_answer_is_kept_on_the_tree():
    ctx = _ctx(
        """
        def helper(v):
            return v.reshape(-1)

        @jax.jit
        def step(x):
            y = helper(x)
            return y
        """
    )
    before = {id(node): set(vars(node)) for node in ast.walk(ctx.tree)}
    answer = tracing_for(ctx)
    for traced in answer.traced_functions():
        answer.tainted_names(traced.node, traced.traced)
        answer.stored_names(traced.node)
    assert {id(node): set(vars(node)) for node in ast.walk(ctx.tree)} == before


ANALYSIS = Path(__file__).resolve().parent.parent / "codemods" / "analysis"


@pytest.mark.parametrize("module", ["tracing.py", "partial_receivers.py"])
def test_no_function_of_the_tracing_answer_is_long(module):
    tree = ast.parse((ANALYSIS / module).read_text(encoding="utf-8"))
    long = [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 80
    ]
    assert long == []


def test_jax001_asks_the_value_analysis_only_when_the_taint_cannot_tell():
    from jax_codemod.rules.traced_concrete_access import TracedConcreteAccess

    ctx = _ctx("@jax.jit\ndef step(x):\n    return x.item()\n")
    [finding] = TracedConcreteAccess().check(ctx)
    assert "x" in finding.message
    assert "analysis" not in ctx.__dict__  # a traced parameter's access: the taint alone decides


# The two readings of "runs under a transform" this module still holds (its docstring): where they
# disagree today. Merging them decides each of these; a change here is that decision.


def test_a_lax_body_past_the_first_argument_is_traced_to_the_sweep_only():
    ctx = _ctx("def run(x):\n    def body(i, carry):\n        return carry\n    return lax.fori_loop(0, 3, body, x)\n")
    answer = tracing_for(ctx)
    body = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.FunctionDef) and n.name == "body")
    [traced] = answer.traced_functions()
    assert traced.node is body and traced.traced == {"i", "carry"}
    assert not answer.traced_parameter(body.args.args[1], body)


def test_a_private_lax_spelling_is_traced_to_both_readings():
    # The one resolver maps `jax._src.lax` for both: before it, only the value analysis did
    # (33 of the 38 parameters only it called traced on jax's own sources).
    text = "from jax._src import lax\n\ndef run(x):\n    def cond(state):\n        return state\n"
    text += "    return lax.while_loop(cond, cond, x)\n"
    ctx = FileContext("t.py", text, ast.parse(text))
    answer = tracing_for(ctx)
    cond = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.FunctionDef) and n.name == "cond")
    assert [(traced.node, traced.transform) for traced in answer.traced_functions()] == [(cond, "jax.lax.while_loop")]
    assert answer.traced_parameter(cond.args.args[0], cond)

HELPERS = """
def normalize(x):
    return (x - x.mean()) / (x.std() + 1e-6)

def twice(x):
    return normalize(x) * 2

def rows(x, table=None):
    return x.shape[0], len(x), x.dtype, x.ndim, isinstance(x, jax.Array), 1.0, table

def first(*xs):
    return xs[0]

def loop(x, n):
    return loop(x, n - 1)

def ping(x):
    return pong(x)

def pong(x):
    return ping(x)

def chain4(x):
    return chain3(x)

def chain3(x):
    return chain2(x)

def chain2(x):
    return chain1(x)

def chain1(x):
    return normalize(x)

@jax.jit
def step(x, n):
    def normalize(v):  # a local of the same name is not the module's helper
        return 0
    a = twice(x=x)
    b = rows(x, table=n)
    c = first(x)
    d = loop(x, 3)
    e = ping(x)
    f = normalize(x)
    g = rows(n)
    h = chain4(x)
    return a
"""


def test_a_helpers_return_value_is_traced_by_its_own_taint():
    ctx = _ctx(HELPERS)
    answer = tracing_for(ctx)
    step = next(n for n in ctx.tree.body if getattr(n, "name", None) == "step")
    names = answer.tainted_names(step, frozenset({"x"}))
    # `a`: a helper of a helper, by keyword. Not `b` (shapes, lengths, dtypes, constants, a
    # parameter given no tracer), `c` (`*args`: not guessed), `d`/`e` (recursion answers "not
    # traced"), `f` (shadowed), `g` (no tracer goes in), `h` (five helpers deep: past the guard).
    assert names == {"x", "a"}


def test_a_helpers_answer_does_not_depend_on_what_was_asked_first():
    # `chain1(x)` alone is traced; asked first, its memoized answer must not make `chain4(x)`
    # traced where a fresh question stops at the depth guard.
    ctx = _ctx(HELPERS)
    answer = tracing_for(ctx)
    calls = {n.targets[0].id: n.value for n in ast.walk(ctx.tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)}
    chain1 = next(n for n in ctx.tree.body if getattr(n, "name", None) == "chain1")
    call = ast.parse("chain1(x)").body[0].value
    ast.copy_location(call, chain1.body[0].value)
    assert answer.is_traced(call, {"x"})
    assert not answer.is_traced(calls["h"], {"x"})
    assert answer.is_traced(calls["a"], {"x"})


# `_instance_names` scans the text for `= Name(` before asking the value analysis: every name
# the analysis finds bound to an instance (`x = Model(s)`, however spaced, bracketed, continued
# or commented) must be a class the scan sees called after an `=`.
_BETWEEN = st.lists(st.sampled_from([" ", "(", "\n", "\\\n", "  # c\n", "\t"]), max_size=4).map("".join)
_AFTER = st.lists(st.sampled_from([" ", ")", "\n", "\\\n", "  # c\n"]), max_size=3).map("".join)


@settings(max_examples=300, deadline=None)
@given(before=_BETWEEN, after=_AFTER, scope=st.sampled_from(["", "def f():\n    "]))
def test_the_text_scan_sees_every_instance_the_analysis_binds(before, after, scope):
    text = f"class Model:\n    def __call__(self, x):\n        return x\n\n{scope}model ={before}Model{after}(1)\n"
    try:
        ast.parse(text)
    except SyntaxError:
        return
    ctx = _ctx(text)
    if ctx.analysis.instance_names("Model"):
        assert "Model" in tracing._ASSIGNED_CALL.findall(text), text
        assert "model" in tracing.tracing_for(ctx)._instance_names()


def test_a_name_bound_once_reads_the_same_one_name_at_a_time_or_all_at_once():
    # ``Taint._module_function`` asks ``_bound_once`` of a file's first names, then
    # ``_bound_once_every`` of all: the two must agree on every name.
    root = Path(__file__).parent.parent
    sources = [*sorted((root / "codemods" / "analysis").glob("*.py")), *sorted((root / "tests" / "realworld").rglob("*.py"))]
    extra = "x = 1\nx += 2\ny = z = 3\n(w := 4)\nif c:\n    v = 5\nelse:\n    v = 6\nglobal_name = 7\ndef f():\n    global global_name\n"
    comprehension = "def g():\n    pass\nfs = [g for g in range(3)]\n(k := 1)\n"
    unicode = "ｆｏｏ = 1\nfoo2 = 2\n"  # (not spelled as parsed: the whole-tree reading)
    texts = [path.read_text(encoding="utf-8") for path in sources] + [extra, comprehension, unicode]
    checked = 0
    for text in texts:
        tree = ast.parse(text)
        every = taint._bound_once_every(tree, text)
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)} | {
            node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))
        }
        for name in sorted(names)[:300]:
            assert taint._bound_once(tree, text, name) is (name in every), name
            checked += 1
    assert checked > 1000


def test_only_under_config_flag_is_the_branch_that_holds_the_node():
    """``only_under_config_flag`` finds a function's flag branches once and answers each node
    from them: checked against asking every `if` around the node, for every node of a function
    with nested, sibling and `else` branches, each read of the flag spelled differently."""
    source = textwrap.dedent(
        """
        import jax
        from jax._src import config
        from jax import config as cfg

        def f(x):
            a = x.sharding
            if config.sharding_in_types.value:
                b = x.sharding
                if other:
                    c = x.sharding
                else:
                    d = x.sharding
            else:
                e = x.sharding
            if cfg.sharding_in_types.value and other:
                g = x.sharding
            if jax.config.other_flag.value:
                h = x.sharding
            if not_config.sharding_in_types.value:
                i = x.sharding
            def inner(y):
                if config.sharding_in_types.value:
                    return y.sharding
            return x.sharding
        """
    )
    ctx = FileContext("flags.py", source, ast.parse(source))
    answer = tracing.tracing_for(ctx)
    function = next(n for n in ctx.tree.body if isinstance(n, ast.FunctionDef))

    def plain(node):
        return any(
            isinstance(s, ast.If) and s.body and s.body[0].lineno <= node.lineno <= s.body[-1].end_lineno
            and any(isinstance(p, ast.Attribute) and p.attr == "sharding_in_types" and ctx.qualname(p.value) in tracing.CONFIG_MODULES
                    for p in ast.walk(s.test))
            for s in answer.scope_nodes(function)
        )

    nodes = [n for n in ast.walk(function) if isinstance(n, ast.Attribute) and n.attr == "sharding"]
    answers = [answer.only_under_config_flag(function, n, "sharding_in_types") for n in nodes]
    assert answers == [plain(n) for n in nodes]
    assert sorted(n.lineno for n, yes in zip(nodes, answers) if yes) == [9, 11, 13, 17]
