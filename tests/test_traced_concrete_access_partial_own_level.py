"""JAX001's partial reading drops blocks whose access text nothing can trace
(``AccessText._untraced_own_level``): a `def` named nowhere else in the file, with no dunder
name and no decorator that spells a transform, each of whose accesses lies at its own level
(``blocks.at_own_level``: not in a nested `def`, `class` or `lambda`); and a simple statement
of the module or a class body with no `lambda`. Most test methods of a JAX test module are the
first: `out = jax.jit(f)(x)`, then `out.sharding` on the concrete result.

For each shape dropped, the reading decides the file clean without the whole parse and the
whole file agrees; for each variant that may be traced (the method named elsewhere, decorated
by a transform, a dunder, an override a base's traced method calls, the access in a nested
`def` or `lambda`, a `match`), the finding is kept, found the same from parts as from the whole
tree.
"""

from __future__ import annotations

import ast
import dataclasses
import textwrap

import pytest
from jax_codemod.analysis import partial as partial_reading
from jax_codemod.analysis.context import FileContext
from jax_codemod.rules import traced_concrete_access as jax001
from jax_codemod.rules._access_text import AccessText
from jax_codemod.rules.traced_concrete_access import TracedConcreteAccess

RULE = TracedConcreteAccess()
MEMBERS = jax001.members_for(None)
UNLIMITED = dataclasses.replace(RULE.PARTS, most=None)

FILLER = '''
    def test_unrelated_{n}(self):
        """Nothing traced here: {n}."""
        values = [v + {n} for v in range(3)]
        self.assertEqual(len(values), 3)
'''

HEAD = """
import functools

import jax
import jax.numpy as jnp
import numpy as np
from absl.testing import parameterized


def make(n):
    return jnp.ones(n)


"""


def module(source: str) -> str:
    """``source`` (dedented) after the imports, with unrelated test methods added to a class
    marked `    # members`."""
    source = textwrap.dedent(source)
    filler = "".join(FILLER.format(n=n) for n in range(5))
    return HEAD + source.replace("    # members\n", filler)


def lazy(text: str) -> FileContext:
    return FileContext("case.py", text, parse=lambda: ast.parse(text))


def whole(text: str) -> FileContext:
    return FileContext("case.py", text, ast.parse(text))


def findings(ctx: FileContext) -> list:
    return [f.to_json() for f in RULE.check(ctx)]


DROPPED = {
    "result_read_after_the_jit": """
        class ApiTest(parameterized.TestCase):
            # members
            def test_jit(self):
                out = jax.jit(lambda x: x * 2)(make(3))
                self.assertEqual(out[0].item(), 2.0)
                self.assertLen(out.devices(), 1)
    """,
    "in_suites": """
        class ApiTest(parameterized.TestCase):
            # members
            def test_suites(self):
                f = jax.jit(lambda x: x + 1)
                with jax.default_device(jax.devices()[0]):
                    out = f(make(2))
                    for shard in out.addressable_shards:
                        self.assertEqual(shard.data.shape, (2,))
                if out.is_fully_replicated:
                    pass
                elif out.committed:
                    self.fail(str(out.sharding))
                else:
                    np.asarray(out)
                try:
                    out.block_until_ready()
                except RuntimeError:
                    out.delete()
    """,
    "after_a_nested_jitted_def": """
        class ApiTest(parameterized.TestCase):
            # members
            def test_nested(self):
                @jax.jit
                def f(x):
                    return x * 2

                out = f(make(3))
                self.assertEqual(out.sharding, out.sharding)
    """,
    "decorated_by_no_transform": """
        class ApiTest(parameterized.TestCase):
            # members
            @parameterized.parameters(1, 2)
            def test_sizes(self, n):
                out = jax.jit(lambda x: x + n)(make(n))
                self.assertEqual(out.tolist(), [n + 1.0] * n)
    """,
    "in_its_own_decorator": """
        class ApiTest(parameterized.TestCase):
            # members
            @parameterized.parameters(np.asarray([1, 2]).tolist())
            def test_sizes(self, n):
                out = jax.jit(lambda x: x + n)(make(n))
                self.assertEqual(out.shape, (n,))
    """,
    "a_module_level_function": """
        def check_placement():
            out = jax.jit(lambda x: x * 2)(make(3))
            return out.devices(), out.sharding
    """,
    "a_module_level_statement": """
        OUT = jax.jit(make, static_argnums=0)(1).item()
        DEVICES = jax.jit(make, static_argnums=0)(3).devices()
        print(np.asarray(jax.jit(make, static_argnums=0)(2)))
    """,
    "an_import_that_reads_as_an_access": """
        from jax.sharding import PartitionSpec as P, NamedSharding; from jax import jit as compiled
    """,
    "a_module_level_jit_with_a_sharding": """
        F = jax.jit(make, static_argnums=0, out_shardings=jax.sharding.SingleDeviceSharding(jax.devices()[0]))
    """,
    "a_module_level_alias": """
        P = jax.sharding.PartitionSpec; J = jax.jit
    """,
    "a_class_level_statement": """
        class ApiTest(parameterized.TestCase):
            # members
            DEVICES = jax.jit(make, static_argnums=0)(3).devices()
    """,
}


@pytest.mark.parametrize("name", sorted(DROPPED))
def test_a_dropped_shape_is_decided_clean_as_the_whole_file_is(name, monkeypatch):
    text = module(DROPPED[name])
    with monkeypatch.context() as patched:
        # Without the drop the block would be a target on a chain from a transform: the
        # shape exercises it.
        patched.setattr(AccessText, "_untraced_own_level", lambda self, cut, found, *rest: set())
        assert partial_reading.read(lazy(text), UNLIMITED).may_matter
    assert findings(whole(text)) == []
    assert not jax001.candidate_accesses(whole(text), MEMBERS, judged=True)
    reading = partial_reading.read(lazy(text), UNLIMITED)
    assert reading is not None and not reading.may_matter  # nothing is kept for the rule
    ctx = lazy(text)
    assert findings(ctx) == [] and not ctx.has_tree  # decided without the whole parse


KEPT = {
    "named_elsewhere": """
        class Model:
            def step(self, x):
                return x.item()

            def run(self, x):
                return jax.jit(self.step)(x)
    """,
    "decorated_by_a_transform": """
        class Model:
            @functools.partial(jax.jit, static_argnums=0)
            def step(self, x):
                x.block_until_ready()
                return x + 1
    """,
    "decorated_by_an_imported_alias": """
        from jax import jit as compiled


        @compiled
        def step(x):
            return x.tolist()
    """,
    "a_dunder": """
        class Scale:
            def __call__(self, x):
                return x.tolist()


        batched = jax.vmap(Scale())
    """,
    "an_override_the_base_calls": """
        class Base:
            @functools.partial(jax.jit, static_argnums=0)
            def run(self, x):
                return self.hook(x)

            def hook(self, x):
                return x


        class Child(Base):
            def hook(self, x):
                return x.tolist()
    """,
    "in_a_nested_def": """
        class ApiTest(parameterized.TestCase):
            # members
            def test_nested(self):
                with jax.default_device(jax.devices()[0]):
                    @jax.jit
                    def f(x):
                        return x.item()

                    f(make(3))
    """,
    "a_module_level_lambda": """
        HOST = jax.jit(lambda x: x.tolist())
    """,
    "a_module_level_statement_with_a_lambda": """
        print(jax.jit(lambda x: x.tolist())(make(2)))
    """,
    "a_module_level_if": """
        if True:
            @jax.jit
            def step(x):
                return x.tolist()
    """,
    "in_a_lambda": """
        class ApiTest(parameterized.TestCase):
            # members
            def test_lambda(self):
                jax.jit(lambda x: x.tolist())(make(3))
    """,
    "in_a_multi_line_lambda": """
        class ApiTest(parameterized.TestCase):
            # members
            def test_lambda(self):
                f = jax.jit(lambda x: (
                    x.devices()))
                f(make(3))
    """,
    "in_a_match": """
        class ApiTest(parameterized.TestCase):
            # members
            def test_match(self, kind):
                match kind:
                    case "jit":
                        @jax.jit
                        def f(x):
                            return x.tolist()

                        f(make(3))
    """,
    "in_an_except_clause": """
        class ApiTest(parameterized.TestCase):
            # members
            def test_except(self):
                try:
                    pass
                except ValueError:
                    @jax.jit
                    def f(x):
                        return x.tolist()

                    f(make(3))
    """,
}


def assert_finding_kept(text: str) -> None:
    """``text`` has a finding, and the partial reading keeps it: the same findings, not decided
    clean from its parts, and no reading that says its kept blocks cannot matter."""
    found = findings(whole(text))
    assert found, "the case has a finding"
    assert findings(lazy(text)) == found
    assert not RULE.clean_from_parts(lazy(text))
    reading = partial_reading.read(lazy(text), UNLIMITED)
    assert reading is None or reading.may_matter


@pytest.mark.parametrize("name", sorted(KEPT))
def test_a_variant_that_may_be_traced_keeps_its_finding(name):
    assert_finding_kept(module(KEPT[name]))


@pytest.mark.parametrize("text", [module(DROPPED["in_suites"]), "x = 'é'\ndef f(é1, x_2):\n    return x_2.item()  # x\n"])
def test_word_counts_are_the_regex_words(text):
    from collections import Counter

    cut = partial_reading.Cut.of(text)
    assert cut.word_counts() == Counter(partial_reading.WORDS.findall(text))
