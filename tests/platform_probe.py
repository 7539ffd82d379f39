"""What a platform does with each interop call this project rewrites: one probe per row of the
platform fact table (``jax_codemod.analysis.platforms``), run on a fresh array of the default device.

Run as ``python tests/platform_probe.py`` (or ``--simulate tpu`` on a CPU, through
``tests/platform_sim.py``): prints one JSON object, ``{probe id: outcome}``, each outcome
``{"ok": true, "value": ...}`` or ``{"ok": false, "type": ..., "message": ...}``. The TPU record
(``.ci/results/tpu/*.json``, written by ``scripts/tpu-verify.sh``) keeps this output as measured on
the TPU; ``tests/test_platform_sim.py`` runs the same probes under the simulated TPU and holds the
simulation to the record.
"""

from __future__ import annotations

import json
import sys

# id -> code; `x` is a float32 (2, 3) array on the default device, `t` a torch CPU tensor,
# `ensure_exportable` the helper that codemod inserts (the one source of its body: the rules' table).
PROBES = {
    "torch.from_dlpack(x)": "torch.from_dlpack(x).sum().item()",
    "torch.utils.dlpack.from_dlpack(x)": "torch.utils.dlpack.from_dlpack(x).sum().item()",
    "torch.utils.dlpack.from_dlpack(x.__dlpack__())": "torch.utils.dlpack.from_dlpack(x.__dlpack__()).sum().item()",
    "np.from_dlpack(x)": "float(np.from_dlpack(x).sum())",
    "np.from_dlpack(x, copy=True)": "float(np.from_dlpack(x, copy=True).sum())",
    "np.from_dlpack(x, device='cpu')": "float(np.from_dlpack(x, device='cpu').sum())",
    "x.__dlpack__()": "type(x.__dlpack__()).__name__",
    "x.__dlpack_device__()": "[int(v) for v in x.__dlpack_device__()]",
    "x.__dlpack__(dl_device=(kDLCPU, 0))": "torch.utils.dlpack.from_dlpack(x.__dlpack__(dl_device=(1, 0))).sum().item()",
    "x.__dlpack__(dl_device=(kDLCUDA, 0))": "type(x.__dlpack__(dl_device=(2, 0))).__name__",
    "memoryview(x)": "memoryview(x).nbytes",
    "np.frombuffer(x)": "float(np.frombuffer(x, dtype=np.float32).sum())",
    "x.__cuda_array_interface__": "sorted(x.__cuda_array_interface__)",
    "x.unsafe_buffer_pointer()": "x.unsafe_buffer_pointer() != 0",
    "np.asarray(x)": "float(np.asarray(x).sum())",
    "torch.as_tensor(x)": "torch.as_tensor(x).sum().item()",
    "torch.tensor(x)": "torch.tensor(x).sum().item()",
    "torch.asarray(x)": "torch.asarray(x).sum().item()",
    "bytes(x)": "len(bytes(x))",
    "jax.tree.map(torch.from_dlpack, {'a': x})": "jax.tree.map(torch.from_dlpack, {'a': x})['a'].sum().item()",
    "jax.device_get(x)": "float(jax.device_get(x).sum())",
    "export of jax.device_put(x, jax.devices()[0])": "torch.from_dlpack(jax.device_put(x, jax.devices()[0])).sum().item()",
    "export of jax.device_put(x, jax.devices('cpu')[0])": (
        "torch.from_dlpack(jax.device_put(x, jax.devices('cpu')[0])).sum().item()"
    ),
    "np.from_dlpack of jax.device_put(x, jax.devices('cpu')[0])": (
        "float(np.from_dlpack(jax.device_put(x, jax.devices('cpu')[0])).sum())"
    ),
    "torch.from_dlpack(ensure_exportable(x))": "torch.from_dlpack(ensure_exportable(x)).sum().item()",
    "np.from_dlpack(ensure_exportable(x))": "float(np.from_dlpack(ensure_exportable(x)).sum())",
    "ensure_exportable(x).__dlpack__()": "torch.utils.dlpack.from_dlpack(ensure_exportable(x).__dlpack__()).sum().item()",
    "memoryview(ensure_exportable(x))": "memoryview(ensure_exportable(x)).nbytes",
    "jax.dlpack.from_dlpack(t) platform": "platform_of(jax.dlpack.from_dlpack(t))",
    "jnp.from_dlpack(x) of a JAX array": "platform_of(jnp.from_dlpack(x))",
    "jnp.from_dlpack(t) platform": "platform_of(jnp.from_dlpack(t))",
    "jit of a default-device array and jax.dlpack.from_dlpack(t)": (
        "float(jax.jit(lambda a, b: a + b)(jax.device_put(x[0], jax.devices()[0]), jax.dlpack.from_dlpack(t)).sum())"
    ),
    "eager sum of x[0] and jax.dlpack.from_dlpack(t) platform": "platform_of(x[0] + jax.dlpack.from_dlpack(t))",
    "jax.device_put(jax.dlpack.from_dlpack(t), jax.devices()[0]) platform": (
        "platform_of(jax.device_put(jax.dlpack.from_dlpack(t), jax.devices()[0]))"
    ),
    "jit with jax.device_put(jax.dlpack.from_dlpack(t), jax.devices()[0])": (
        "float(jax.jit(lambda a, b: a + b)(jax.device_put(x[0], jax.devices()[0]),"
        " jax.device_put(jax.dlpack.from_dlpack(t), jax.devices()[0])).sum())"
    ),
    "export of pinned_host memory": (
        "torch.from_dlpack(jax.device_put(x, x.sharding.with_memory_kind('pinned_host'))).sum().item()"
    ),
}


def platform_of(array) -> str:
    """The platform that holds ``array``: the simulation's name where one is active."""
    device = next(iter(array.devices()))
    simulated = getattr(sys.modules.get("platform_sim"), "platform_of_device", None)
    return simulated(device) if simulated else device.platform


def run() -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np
    import torch
    import torch.utils.dlpack

    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from interop_helpers import ensure_exportable

    results = {}
    for name, code in PROBES.items():
        namespace = {"jax": jax, "jnp": jnp, "np": np, "torch": torch, "ensure_exportable": ensure_exportable,
                     "platform_of": platform_of}
        namespace["x"] = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
        namespace["t"] = torch.arange(3.0)
        try:
            value = eval(code, namespace)
        except Exception as error:  # noqa: BLE001 - the outcome is what is recorded
            results[name] = {"ok": False, "type": type(error).__name__, "message": str(error)[:300]}
        else:
            results[name] = {"ok": True, "value": value if isinstance(value, (int, float, str, list, bool)) else repr(value)}
    return results


def main() -> None:
    if "--simulate" in sys.argv:
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        import platform_sim

        platform_sim.activate(sys.argv[sys.argv.index("--simulate") + 1])
    print(json.dumps(run(), sort_keys=True))


if __name__ == "__main__":
    main()
