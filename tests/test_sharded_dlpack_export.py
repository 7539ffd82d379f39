"""JAX002 beyond the snapshots: the helper's behaviour, shapes without a CPU execution
(raw CUDA pointers, the removed PositionalSharding), rule interplay, real packages."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import jax_codemod
from jax_codemod.engine.pipeline import Settings, process_source
from jax_codemod.rules._dlpack_exports import HELPER_SOURCE
from jax_codemod.rules.sharded_dlpack_export import ShardedDlpackExport
from test_execution import execution_env


def run(source: str, rules=None, unsafe: bool = False, **options):
    rules = rules or (ShardedDlpackExport(options),)
    return process_source(textwrap.dedent(source).encode(), "case.py", Settings(tuple(rules), unsafe))


def codes(result) -> list[tuple[str, str, bool]]:
    return [(f.code, f.fix.value, f.applied) for f in result.findings]


def test_helper_module_for_tests_holds_the_inserted_helper():
    helper_module = (Path(__file__).parent / "interop_helpers.py").read_text()
    assert HELPER_SOURCE in helper_module


HELPER_BEHAVIOUR = """
import jax, jax.numpy as jnp, numpy as np, torch
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
{helper}
plain = [1, 2]
assert ensure_single_device(plain) is plain
tensor = torch.ones(2)
assert ensure_single_device(tensor) is tensor
host = np.ones(2)
assert ensure_single_device(host) is host
single = jax.device_put(jnp.ones(2), jax.devices()[3])
assert ensure_single_device(single) is single
# Sharded over devices 2 and 3 only: gathered onto device 2, one of its own.
mesh = Mesh(np.array(jax.devices()[2:]), ("x",))
sharded = jax.device_put(jnp.arange(4.0), NamedSharding(mesh, P("x")))
gathered = ensure_single_device(sharded)
assert gathered.sharding.device_set == {{jax.devices()[2]}}, gathered.sharding
assert np.array_equal(np.from_dlpack(gathered), np.arange(4.0))
print("helper ok")
"""


def test_helper_is_identity_off_jax_and_gathers_onto_its_own_lowest_device():
    script = HELPER_BEHAVIOUR.format(helper=HELPER_SOURCE)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=execution_env(gpu=False),
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "helper ok" in done.stdout


def test_cuda_array_interface_rebinds_the_variable_as_an_unsafe_fix():
    result = run(
        """
        import jax
        def pointer(values):
            x = jax.pmap(lambda a: a)(values)
            interface = x.__cuda_array_interface__
            return interface["data"][0], x
        """,
        unsafe=True,
    )
    assert codes(result) == [("JAX002", "unsafe", True)]
    assert b"    x = ensure_single_device(x)\n    interface = x.__cuda_array_interface__\n" in result.fixed


def test_positional_sharding_of_older_jax_is_a_multi_device_producer():
    result = run(
        """
        import jax
        import torch
        from jax.sharding import PositionalSharding
        sharding = PositionalSharding(jax.devices()).reshape(4, 1)
        x = jax.device_put(jax.numpy.ones((4, 2)), sharding)
        t = torch.from_dlpack(x)
        """
    )
    assert codes(result) == [("JAX002", "safe", True)]
    assert b"torch.from_dlpack(ensure_single_device(x))" in result.fixed


def test_sharding_typed_parameter_is_a_sharding_variable():
    result = run(
        """
        import jax
        import numpy as np
        def export(values, sharding: jax.sharding.NamedSharding):
            return np.from_dlpack(jax.device_put(values, sharding))
        """
    )
    assert codes(result) == [("JAX002", "safe", True)]


def test_an_existing_helper_definition_is_reused_not_duplicated():
    source = """
        import jax
        import torch
        def ensure_single_device(x, dev=None):
            return jax.device_put(x, dev or jax.devices()[0])
        t = torch.from_dlpack(jax.pmap(lambda a: a)(jax.numpy.ones((4, 1))))
        """
    for options in ({}, {"helper-module": "myproj.interop"}):
        result = run(source, **options)
        assert codes(result) == [("JAX002", "safe", True)]
        fixed = result.fixed.decode()
        assert fixed.count("def ensure_single_device") == 1
        assert "myproj" not in fixed


def test_helper_module_option_imports_instead_of_defining():
    result = run(
        """
        import jax
        import torch
        t = torch.from_dlpack(jax.pmap(lambda a: a)(jax.numpy.ones((4, 1))))
        """,
        **{"helper-module": "myproj.interop"},
    )
    fixed = result.fixed.decode()
    assert "from myproj.interop import ensure_single_device" in fixed
    assert "def ensure_single_device" not in fixed


def test_helper_named_as_a_parameter_declines():
    result = run(
        """
        import jax
        import torch
        def export(values, ensure_single_device=None):
            return torch.from_dlpack(jax.pmap(lambda a: a)(values))
        """
    )
    assert codes(result) == [("JAX002", "none", False)]
    assert not result.changed
    assert "parameter" in result.findings[0].message


def test_suppression_comment_silences_the_finding():
    result = run(
        """
        import jax
        import torch
        t = torch.from_dlpack(jax.pmap(lambda a: a)(jax.numpy.ones((4, 1))))  # codemod: ignore[JAX002]
        """
    )
    assert result.findings == [] and not result.changed


def test_all_rules_together_insert_the_helper_once_and_follow_jax005():
    # JAX004's try/except BufferError is a guard of its own; the gathering rules are under test.
    rules = tuple(rule({}) for rule in jax_codemod.RULES if rule.CODE != "JAX004")
    result = run(
        """
        import jax
        import jax.dlpack
        import torch

        def boundary(value: jax.Array):
            return torch.from_dlpack(value)

        doubled = jax.pmap(lambda a: a * 2)(jax.numpy.ones((4, 1)))
        t = torch.from_dlpack(jax.dlpack.to_dlpack(doubled))
        """,
        rules=rules,
        unsafe=True,
    )
    assert result.error is None, result.error
    fixed = result.fixed.decode()
    assert fixed.count("def ensure_single_device") == 1
    assert "torch.from_dlpack(ensure_single_device(doubled))" in fixed
    assert "torch.from_dlpack(ensure_single_device(value))" in fixed
    assert {f.code for f in result.findings} == {"JAX002", "JAX005", "JAX006"}
    again = process_source(result.fixed, "case.py", Settings(rules, True))
    assert not again.changed and again.findings == []


def test_registry_order_puts_jax002_before_jax005_and_jax006_last():
    order = [rule.CODE for rule in jax_codemod.RULES]
    mine = [code for code in order if code in {"JAX002", "JAX005", "JAX006"}]
    assert mine == ["JAX002", "JAX005", "JAX006"]
    assert jax_codemod.rule_by_code("JAX006").DEFAULT_ENABLED is False




def test_placement_words_cover_every_placement_the_analysis_knows():
    """JAX002 skips a file whose texts (its own, and what its project imports lead to) hold no
    placement word: every way the value analysis makes a multi-device array must spell one,
    under each name it is known by (a private or legacy spelling is renamed to it)."""
    from jax_codemod.analysis import names
    from jax_codemod.analysis import values as v
    from jax_codemod.rules._dlpack_exports import holds_placement_text

    producers = (
        {name for name, placement in v.SHARDING_TYPES.items() if placement == v.MULTI}
        | v.MULTI_PRODUCERS
        | v.NOT_ADDRESSABLE_PRODUCERS
        | set(v.SHARDED_BY_ARGUMENT)
        | v.MULTI_TRANSFORMS
        | v.MESH_CONTEXTS
        | {"jax.sharding.PartitionSpec"}  # a sharding where one is passed (`device_put(x, P("x"))`)
    )
    spellings = producers | {old for old, new in names._NAMES.items() if new in producers}
    for spelled in sorted(spellings):
        member = spelled.rsplit(".", 1)[-1]
        if member in ("PartitionSpec", "P"):
            continue  # placed only through a call that spells a word itself (below)
        assert holds_placement_text(f"x = {member}(y)\n"), spelled
    # Where a partition spec or a sharding is passed: the options and calls that place with it.
    for spelled in ("jax.jit(f, out_shardings=s)", "pjit(f, out_axis_resources=s)", "jax.device_put(x, s)",
                    "jax.lax.with_sharding_constraint(x, s)", "jax.reshard(x, s)"):
        assert holds_placement_text(spelled), spelled


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("x = jax.pmap(f)(y)\n", True),
        ("# from multiple threads, like with pmap\n", False),
        ("y = f(x)  # sharding: see make_mesh\n", False),
        ("    # x = jax.device_put(y, sharding)\n", False),
        # A `#` that may be a string's, or a line of a triple-quoted f-string (whose `{...}` is code):
        ("s = '#'; y = jax.device_put(x, s)\n", True),
        ('s = f"""\n# {jax.device_put(x, s)}\n"""\n', True),
        ("# pmap\nmesh = jax.make_mesh((2,), ('x',))\n", True),
    ],
)
def test_placement_words_in_comments_place_nothing(text, holds):
    from jax_codemod.rules._dlpack_exports import holds_placement_text

    assert holds_placement_text(text) is holds


def test_export_lines_are_the_lines_the_export_pattern_matches():
    """``_export_lines`` finds with ``str.find`` what ``_EXPORT_WORD`` (and a consumer's alias as a
    whole word) matches, line by line, CR and CRLF endings included."""
    import re

    from jax_codemod.analysis.context import count_line_breaks
    from jax_codemod.rules._dlpack_exports import _EXPORT_WORD, _consumer_aliases, _export_lines

    def by_pattern(text):
        words = _EXPORT_WORD.pattern + "".join(rf"|\b{re.escape(a)}\b" for a in sorted(set(_consumer_aliases(text))))
        return sorted({count_line_breaks(text, 0, m.start()) + 1 for m in re.finditer(words, text)})

    text = (
        "from torch.utils.dlpack import from_dlpack as to_host\r\n"
        "a = to_host(x); b = to_hostx(y)\n"
        "c = tensor(1)\rd = atensor(2)\n"
        "e = _tensor(3)\ne2 = étensor(3)\n"
        "f = torch.as_tensor(x)\n"
        "g = x.__cuda_array_interface__\n"
        "h = x.unsafe_buffer_pointer()\n"
        "i = 1\n"
        "to_host\n"
    )
    assert _export_lines(text) == by_pattern(text) == [1, 2, 3, 7, 8, 9, 11]


def test_a_file_whose_placement_words_are_comments_is_not_parsed_for_jax002():
    from jax_codemod.analysis.context import FileContext

    text = "import jax, torch\n\n\ndef to_torch(x):  # callers may pass a pmap's output\n    return torch.from_dlpack(x)\n"
    ctx = FileContext("case.py", text, parse=lambda: (_ for _ in ()).throw(AssertionError("parsed")))
    assert ShardedDlpackExport({}).check(ctx) == []


def test_a_file_that_can_place_nothing_on_several_devices_is_not_parsed_for_jax002():
    from jax_codemod.analysis.context import FileContext

    text = "import jax, torch\n\ndef to_torch(x):\n    return torch.from_dlpack(x)\n"
    ctx = FileContext("case.py", text, parse=lambda: (_ for _ in ()).throw(AssertionError("parsed")))
    assert ShardedDlpackExport({}).check(ctx) == []
    # With placement text, the same file is read (and still has no finding: `x` is a parameter).
    placed = text + "y = jax.device_put(jax.numpy.ones(2), s)\n"
    import ast

    parsed = []
    ctx = FileContext("case.py", placed, parse=lambda: parsed.append(1) or ast.parse(placed))
    assert ShardedDlpackExport({}).check(ctx) == [] and parsed
