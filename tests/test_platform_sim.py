"""The simulated TPU (tests/platform_sim.py), held to the newest TPU record.

CI has no TPU: the execution suite's TPU run there is the simulation's. So each probe of
``tests/platform_probe.py`` (one read of a JAX array's memory each: an export, the buffer
protocol, an import) must come out under the simulation exactly as the TPU answered it in the
newest record under ``.ci/results/tpu/`` (outcome, exception class, message, value). A JAX release
that changes what a TPU does shows up in the next record, and this test then fails until the
simulation and the rules' table (``jax_codemod.analysis.platforms``) follow. The plugin-backend
simulation is held to the seed's message the same way, and the README's TPU table to the record.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import platform_sim
import pytest
from jax_codemod.analysis import platforms

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import tpu_record

SEED_PLUGIN_MESSAGE = "__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: {platform}"


def first_sentence(message: str) -> str:
    """The part of a message that names the error, without the arguments' shapes and device ids
    the TPU and the simulation number differently (``Received incompatible devices for jitted
    computation. Got argument a ...``)."""
    return message.split(". ")[0]


def simulated_probes() -> dict:
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": f"--xla_force_host_platform_device_count={platform_sim.DEVICES_NEEDED}"}
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "platform_probe.py"), "--simulate", "tpu"],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# Where the installed JAX is not the record's (CI's jax 0.4.30 run): jaxlib's runtime error is
# XlaRuntimeError before 0.4.34 (one class), and these probes' outcomes are the installed JAX's own
# on a CPU (0.4.30's CPU has no pinned_host memory; its __cuda_array_interface__ words differ).
RUNTIME_ERRORS = {"XlaRuntimeError": "JaxRuntimeError"}
OWN_ON_OTHER_RELEASES = frozenset({"export of pinned_host memory", "x.__cuda_array_interface__"})


def test_every_probe_under_the_simulation_is_what_the_tpu_answered():
    import jax

    _, record = tpu_record.newest()
    simulated = simulated_probes()
    assert set(simulated) == set(record["probes"]), "the probe set changed: record it on a TPU again"
    same_release = jax.__version__ == record["jax"]
    differences = []
    for name, measured in sorted(record["probes"].items()):
        if name in platform_sim.UNSIMULATED or (not same_release and name in OWN_ON_OTHER_RELEASES):
            continue
        got = dict(simulated[name])
        if not same_release and "type" in got:
            got["type"] = RUNTIME_ERRORS.get(got["type"], got["type"])
        if measured["ok"] != got["ok"]:
            differences.append(f"{name}: TPU {measured}, simulation {got}")
        elif measured["ok"] and measured["value"] != got["value"]:
            differences.append(f"{name}: TPU gave {measured['value']!r}, simulation {got['value']!r}")
        elif not measured["ok"] and (measured["type"], first_sentence(measured["message"])) != (
            got["type"], first_sentence(got["message"])
        ):
            differences.append(f"{name}: TPU raised {measured['type']}: {measured['message']!r}, "
                               f"simulation {got['type']}: {got['message']!r}")
    assert not differences, "\n".join(differences)


def test_the_rules_table_quotes_the_tpus_own_errors():
    _, record = tpu_record.newest()
    probes = record["probes"]
    by_read = {
        platforms.DLPACK_DEVICE: probes["torch.from_dlpack(x)"],
        platforms.DLPACK: probes["np.from_dlpack(x)"],
        platforms.BUFFER: probes["memoryview(x)"],
    }
    for reads, measured in by_read.items():
        [refusal] = platforms.refusals(frozenset({"tpu"}), reads)
        assert not measured["ok"]
        assert (refusal.error, refusal.message) == (measured["type"], measured["message"]), reads


def test_the_helper_every_fix_inserts_worked_on_the_tpu():
    _, record = tpu_record.newest()
    helper_probes = {name: outcome for name, outcome in record["probes"].items() if "ensure_exportable" in name}
    assert len(helper_probes) == 4 and all(outcome["ok"] for outcome in helper_probes.values()), helper_probes


def test_the_plugin_simulation_raises_what_the_seed_documents():
    refusal = platforms.plugin_refusal("metal", platforms.DLPACK_DEVICE)
    assert (refusal.error, refusal.message) == ("BufferError", SEED_PLUGIN_MESSAGE.format(platform="metal"))
    seeds = ROOT.parent / "shared" / "seeds"
    if seeds.is_dir():  # the seed itself, where the checkout has shared/ beside it
        texts = [path.read_text(errors="replace") for path in seeds.glob("*.txt")]
        assert any(SEED_PLUGIN_MESSAGE.replace("{platform}", "{self.platform()}") in text for text in texts)


def test_the_readme_tpu_table_is_the_newest_records():
    text = tpu_record.README.read_text(encoding="utf-8")
    start = text.index(tpu_record.START) + len(tpu_record.START)
    assert text[start:text.index(tpu_record.END)] == "\n" + tpu_record.rendered(), (
        "run `python scripts/tpu_record.py update`"
    )


@pytest.mark.parametrize("field", ["date", "commit", "jax", "jaxlib", "libtpu", "torch", "device_kind",
                                   "passed", "failed", "skipped", "cases", "probes"])
def test_the_record_has_every_field(field):
    _, record = tpu_record.newest()
    assert record.get(field) not in (None, ""), field
