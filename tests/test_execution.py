"""Execution tests: every rewrite case runs with the real jax/torch/numpy.

The code before the rewrite must raise the error its ``# expect:`` header names (the
documented one); the code after must run, and its own assertions check the values.
All cases of a run execute in one subprocess.

The suite is backend-agnostic: ``CODEMOD_EXEC_PLATFORMS`` (default ``cpu``, with four
forced host devices) is passed to JAX as ``JAX_PLATFORMS``; set it to ``cuda`` (or to
an empty string to let JAX choose) to run the same cases on a GPU or a TPU, or to ``tpu-sim``
for the simulated TPU of ``tests/platform_sim.py`` (four TPU cores and a host CPU device on
forced host devices; CI's accelerator). Where the backend is a TPU, real or simulated, every
case is fixed for a target that includes it (``target-platforms``: its own, plus ``tpu``) with
its rule and JAX004, which fixes the reads a TPU refuses, as a project declaring ``jax[tpu]``
gets them; no-op cases too. The code before may then raise the TPU's own refusal instead
of the documented error (``accepted_errors``). Cases that need
several devices (``# requires: multi-device``) or a GPU (``# requires: gpu``) skip,
with the reason, where the backend lacks them, and so do cases whose setup needs a newer JAX
(``# requires: jax>=0.7.1``) on an older one. A case whose old code breaks only from some
release on (``# fails-on: jax>=0.7.0``) still runs on the older ones: there the fix must run
(the old code is not held to anything: it may need an API those releases lack).

The ``# expect:`` header names the error the newest JAX documents; errors are matched by
family, so the same case checks every supported release: ``accepted_errors`` lists what
older releases raise instead (and the table in jax_codemod.analysis.jax_versions says
from when).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import platform_sim
import pytest
from cases import Case, all_cases, fix
from jax_codemod.analysis import jax_versions, platforms

INSTALLED_JAX = jax_versions.installed() or jax_versions.NEWEST_KNOWN
# jaxlib's runtime error: named XlaRuntimeError before 0.4.34 (and an alias until 0.8), then
# JaxRuntimeError; the same RuntimeError subclass throughout.
RUNTIME_ERRORS = ("JaxRuntimeError", "XlaRuntimeError")
# Fragments of documented messages, and how releases back to 0.4.30 word the same error.
REWORDED = {
    # jax/_src/array.py Array.__dlpack__ of older releases (observed on 0.4.30) for a sharded export.
    "__dlpack__ only supported for unsharded arrays": (
        "to_dlpack can only pack a dlpack tensor from an array on a singular device",
    ),
}

HARNESS = Path(__file__).parent / "exec_harness.py"
EXECUTED = [c for c in all_cases() if c.kind in ("rewrite", "unsafe") or c.headers.get("execute") == ["yes"]]


SIMULATED = {"tpu-sim": "tpu"}


def execution_env(gpu: bool) -> dict:
    env = dict(os.environ)
    platforms = "" if gpu else os.environ.get("CODEMOD_EXEC_PLATFORMS", "cpu")
    simulated = SIMULATED.get(platforms)
    devices = platform_sim.DEVICES_NEEDED if simulated else 4
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={devices}").strip()
    env.pop("CODEMOD_EXEC_SIMULATE", None)
    if simulated:
        env["JAX_PLATFORMS"] = "cpu"
        env["CODEMOD_EXEC_SIMULATE"] = simulated
    elif platforms:
        env["JAX_PLATFORMS"] = platforms
    else:
        env.pop("JAX_PLATFORMS", None)
    return env


@cache
def backend(gpu: bool) -> tuple[str, int]:
    """(default platform, device count) that the execution subprocess will see."""
    probe = (
        "import os, sys; sys.path.insert(0, %r)\n"
        "if os.environ.get('CODEMOD_EXEC_SIMULATE'):\n"
        "    import platform_sim; platform_sim.activate(os.environ['CODEMOD_EXEC_SIMULATE'])\n"
        "import jax; print(jax.default_backend(), jax.device_count())" % str(Path(__file__).parent)
    )
    try:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                              env=execution_env(gpu), check=False)
        platform, count = done.stdout.split()[-2:]
        return platform, int(count)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return "none", 0


def accepted_errors(error_type: str, fragment: str, version=INSTALLED_JAX, platform: str = "cpu") -> list[tuple[str, str]]:
    """(exception class name, text the message or traceback holds) pairs that count as the error;
    on a platform that refuses exports, its refusals too (the old code may fail there first)."""
    types = list(RUNTIME_ERRORS) if error_type in RUNTIME_ERRORS else [error_type]
    fragments = [fragment, *REWORDED.get(fragment, ())]
    accepted = [(t, f) for t in types for f in fragments]
    for reads in platforms.READS:
        for refusal in platforms.refusals(frozenset({platform}) - platforms.EXPORTING, reads):
            for t in RUNTIME_ERRORS if refusal.error in RUNTIME_ERRORS else (refusal.error,):
                accepted.append((t, refusal.message.split("(")[0]))
    if (
        error_type == "BufferError"
        and "unsupported device type" in fragment
        and jax_versions.unsupported_device_error(version) == "KeyError"
    ):
        # Before 0.5.1 to_dlpack's table lookup raised KeyError out of to_dlpack itself.
        accepted.append(("KeyError", "in to_dlpack"))
    return accepted


def skip_reason(case: Case) -> str | None:
    unmet = case.unmet_version_requirement()
    if unmet:
        return unmet
    gpu = "gpu" in case.requires
    for requirement in sorted(case.requires):
        if requirement == "gpu":
            if backend(True)[0] != "gpu":
                return "needs a GPU, and JAX finds none"
        elif requirement == "dlpack-platform":
            platform = backend(gpu)[0]
            if platforms.refuses_exports(frozenset({platform})):
                return (f"asserts what a platform with DLPack exports does (zero-copy, an export's own "
                        f"error); the {platform} backend exports nothing")
        elif requirement == "multi-device":
            platform, count = backend(gpu)
            if count < 2:
                return f"needs several devices; the {platform} backend has {count}"
        elif importlib.util.find_spec(requirement) is None:
            return f"needs {requirement}, which is not installed"
    return None


@cache
def execute_all(gpu: bool) -> dict[str, dict]:
    """Outcomes keyed by '<case id>:before' / '<case id>:after', from one subprocess."""
    import tempfile

    spec = []
    for case in EXECUTED:
        if ("gpu" in case.requires) != gpu or skip_reason(case):
            continue
        after = fixed_for(case, backend(gpu)[0])
        spec.append({"id": f"{case.id}:before", "source": case.source.decode("utf-8")})
        spec.append({"id": f"{case.id}:after", "source": (after or b"").decode("utf-8")})
    if not spec:
        return {}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    try:
        done = subprocess.run(
            [sys.executable, str(HARNESS), handle.name],
            capture_output=True,
            text=True,
            env=execution_env(gpu),
            timeout=1800,
            check=False,
        )
    finally:
        os.unlink(handle.name)
    assert done.returncode == 0, done.stderr[-4000:]
    outcomes = json.loads(done.stdout.strip().splitlines()[-1])
    return {entry["id"]: outcome for entry, outcome in zip(spec, outcomes)}


def fixed_for(case: Case, platform: str) -> bytes:
    """The case's code after the migration a project running on ``platform`` gets."""
    if not platforms.refuses_exports(frozenset({platform})):
        return (fix(case).fixed or b"") if case.kind != "noop" else case.source
    from jax_codemod.rules.dlpack_import_on_host import DlpackImportOnHost
    from jax_codemod.rules.dlpack_without_host_fallback import DlpackWithoutHostFallback

    target = ",".join(sorted(platforms.parse(case.options.get(platforms.OPTION)) | {platform}))
    options = {**case.options, platforms.OPTION: target}
    # The case's rule, then the platform rules a TPU target turns on, in the registry's order.
    rules = [case.rule(options), *(rule(options) for rule in (DlpackWithoutHostFallback, DlpackImportOnHost)
                                    if rule is not case.rule)]
    result = fix(case, rules=tuple(rules), unsafe=case.kind == "unsafe")
    assert result.error is None, f"{case.id}: fixing for {target} failed: {result.error}"
    return result.fixed if result.changed else case.source


def _params():
    for case in EXECUTED:
        marks = [pytest.mark.gpu] if "gpu" in case.requires else []
        yield pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_before_fails_and_after_runs(case: Case):
    reason = skip_reason(case)
    if reason:
        pytest.skip(reason)
    if case.kind == "noop":
        outcome = execute_all("gpu" in case.requires)[f"{case.id}:after"]
        assert outcome["ok"], f"{case.id}: correct code failed to run:\n{outcome.get('traceback')}"
        return
    assert case.expected_error, f"{case.id}: add an '# expect: ErrorType: message' header"
    outcomes = execute_all("gpu" in case.requires)
    before, after = outcomes[f"{case.id}:before"], outcomes[f"{case.id}:after"]
    if not case.fails_here():
        # A release before the old code broke as documented (`# fails-on:` names where it does):
        # the fix must run here too, since a project that allows this release gets it. The old
        # code is not held to running: old releases have bugs of their own (0.4.30's legacy
        # from_dlpack refuses a transposed torch tensor's capsule).
        assert after["ok"], f"{case.id}: the rewritten code failed:\n{after.get('traceback')}"
        return
    error_type, fragment = case.expected_error
    assert not before["ok"], f"{case.id}: the code before the rewrite ran without error"
    accepted = accepted_errors(error_type, fragment, platform=backend("gpu" in case.requires)[0])
    assert any(
        t in before["chain"] and (f in before["message"] or f in before["traceback"]) for t, f in accepted
    ), f"expected one of {accepted}:\n{before['traceback']}"
    assert after["ok"], f"{case.id}: the rewritten code failed:\n{after.get('traceback')}"
