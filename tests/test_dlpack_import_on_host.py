"""JAX008: which targets it reports for, what it leaves alone, and its one helper."""

from __future__ import annotations

from jax_codemod.engine.pipeline import Settings, process_source
from jax_codemod.rules.dlpack_import_on_host import HELPER, DlpackImportOnHost

SOURCE = (
    "import jax\nimport jax.dlpack\nimport jax.numpy as jnp\nimport torch\n\n"
    "t = torch.arange(3.0)\n"
    "a = jax.dlpack.from_dlpack(t)\n"
    "b = jnp.from_dlpack(t)\n"
    "c = jnp.from_dlpack(jnp.ones(2))\n"  # a JAX array: no import
    "d = jax.device_put(jax.dlpack.from_dlpack(t), jax.devices()[0])\n"  # placed already
    "e = jnp.from_dlpack(t, device=jax.devices()[0])\n"  # names its device
)


def fix(options):
    return process_source(SOURCE.encode(), "m.py", Settings(rules=(DlpackImportOnHost(options),)))


def test_only_a_tpu_target_is_told():
    for options in ({}, {"target-platforms": "cpu,gpu"}, {"target-platforms": "cpu,gpu,metal"}):
        result = fix(options)
        assert result.findings == [] and not result.changed
    result = fix({"target-platforms": "cpu,tpu"})
    assert [f.line for f in result.findings] == [7, 8]
    assert "committed to the CPU device on a TPU host" in result.findings[0].message
    assert "Received incompatible devices for jitted computation" in result.findings[0].message


def test_the_fix_places_the_import_once_and_a_second_run_is_a_no_op():
    text = fix({"target-platforms": "cpu,tpu"}).fixed.decode()
    assert text.count(f"def {HELPER}(") == 1
    assert "a = on_default_device(jax.dlpack.from_dlpack(t))" in text
    assert "b = on_default_device(jnp.from_dlpack(t))" in text
    again = process_source(text.encode(), "m.py", Settings(rules=(DlpackImportOnHost({"target-platforms": "tpu"}),)))
    assert not again.changed and again.findings == []


def test_helper_module_option_imports_the_helper():
    text = fix({"target-platforms": "cpu,tpu", "helper-module": "proj.interop"}).fixed.decode()
    assert f"from proj.interop import {HELPER}" in text and f"def {HELPER}" not in text
