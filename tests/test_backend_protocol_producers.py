"""Capsule producers whose exported array has the protocol itself (api.py's ``protocol_array``):
a per-framework backend's converter such as NVIDIA Warp's `jax.dlpack.from_dlpack(wp.to_dlpack(a))`
passes `a` instead, as CuPy's `a.toDlpack()` does (issue 54, decision 1); a producer this rule
does not know is reported for what the call shows: the capsule is made right there."""

from __future__ import annotations

import pytest
from jax_codemod.analysis import api
from jax_codemod.engine.pipeline import check_source
from jax_codemod.rule import FixSafety
from jax_codemod.rules.removed_dlpack_api import RemovedDlpackApi


def _findings(source: str):
    _, found = check_source(source.encode(), "interop.py", (RemovedDlpackApi({}),))
    return found


def test_every_protocol_array_fact_belongs_to_a_capsule_producer():
    records = api.records(protocol_array=True)
    assert {r.name for r in records} >= {"warp.to_dlpack", "cupy.ndarray.toDlpack"}
    assert all(r.makes_capsules and r.protocol_array in ("argument", "receiver") for r in records)


@pytest.mark.parametrize("spelling", ["import warp as wp\n", "from warp import dlpack as wp\n"])
def test_a_warp_array_is_passed_as_it_is(spelling):
    source = f"import jax.dlpack\n{spelling}\n\ndef to_jax(a):\n    return jax.dlpack.from_dlpack(wp.to_dlpack(a))\n"
    [found] = _findings(source)
    assert found.fix is FixSafety.SAFE
    assert found.message.endswith("pass the Warp array itself: `a`")


def test_a_producer_of_an_unknown_library_is_reported_where_it_makes_the_capsule():
    source = "import jax.dlpack\nimport mylib\n\n\ndef to_jax(t):\n    return jax.dlpack.from_dlpack(mylib.to_dlpack(t))\n"
    [found] = _findings(source)
    assert found.fix is FixSafety.NONE
    assert "does not show where it is made" not in found.message
    assert "`mylib.to_dlpack(t)` looks like one" in found.message
    assert "made right here by `mylib.to_dlpack`" in found.message
    assert "pass `t` itself where it has `__dlpack__`" in found.message
