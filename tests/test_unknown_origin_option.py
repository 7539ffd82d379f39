"""Decision (2) of issue 54, the analysis side: the report on a value of unknown origin ("cannot
tell whether `x` is a DLPack capsule") is opt-in, a rule option off by default."""

from __future__ import annotations

import pytest
from jax_codemod.analysis.capsules import UNKNOWN_ORIGIN_OPTION, reports_unknown_origin


def test_off_by_default():
    assert reports_unknown_origin({}) is False
    assert reports_unknown_origin({"helper-module": "pkg.interop"}) is False


def test_on_only_when_set_to_true():
    assert reports_unknown_origin({UNKNOWN_ORIGIN_OPTION: True}) is True


@pytest.mark.parametrize("value", [False, "true", 1, None])
def test_anything_but_true_leaves_it_off(value):
    assert reports_unknown_origin({UNKNOWN_ORIGIN_OPTION: value}) is False
