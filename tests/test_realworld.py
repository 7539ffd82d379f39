"""Real bridges between JAX and PyTorch (tests/realworld/): migrated by codemod, then driven.

Each file there is a real file's bridging functions (the header names repository, path and
commit). The test migrates it with the default rule set, runs the migrated functions with
real jax and torch on contiguous, transposed, strided and grad-requiring inputs, and
compares every result -- values, dtype, shape, library -- with a hand-written fix of the
same functions. A function the migration only reports must be reported, not driven.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest
from jax_codemod import RULES
from jax_codemod.analysis import jax_versions
from jax_codemod.engine.pipeline import Settings, process_source

REALWORLD = Path(__file__).parent / "realworld"
SETTINGS = Settings(rules=tuple(rule() for rule in RULES if rule.DEFAULT_ENABLED))

# Fixes written by hand, function by function, through the host (a copy) rather than DLPack:
# an independent reference for the values the migrated zero-copy code must give.
HAND_HELPERS = """
import jax.numpy as _jnp, numpy as _np, torch as _torch
def _t2j(t):
    return _jnp.asarray(t.detach().cpu().numpy())
def _j2t(x):
    return _torch.from_numpy(_np.array(x))
"""
HAND_FIXED = {
    "algoperf_interop_utils.py": """
        import jax.dlpack, torch
        def pytorch_to_jax(x):
            return _t2j(x)
    """,
    "lucidrains_jax2torch.py": """
        import jax, jax.numpy as jnp, torch
        from jax.tree_util import tree_map
        def j2t(x_jax):
            return _j2t(x_jax)
        def t2j(x_torch):
            return _t2j(x_torch)
        def tree_t2j(x):
            return tree_map(lambda t: t2j(t) if isinstance(t, torch.Tensor) else t, x)
        def tree_j2t(x):
            return tree_map(lambda t: j2t(t) if isinstance(t, jnp.ndarray) else t, x)
        def jax2torch(fun):
            class JaxFun(torch.autograd.Function):
                @staticmethod
                def forward(ctx, *args):
                    ctx.num_args = len(args)
                    y_, ctx.fun_vjp = jax.vjp(fun, *tree_t2j(args))
                    return tree_j2t(y_)
                @staticmethod
                def backward(ctx, grad_y):
                    grads, *_ = ctx.fun_vjp(t2j(grad_y))
                    return tree_j2t(grads), *((None,) * (ctx.num_args - 1))
            return JaxFun.apply
    """,
    "brax_io_torch.py": """
        import jax, torch
        def torch_to_jax(value):
            if isinstance(value, dict):
                return {k: torch_to_jax(v) for k, v in value.items()}
            return _t2j(value) if isinstance(value, torch.Tensor) else value
        def jax_to_torch(value, device=None):
            if isinstance(value, dict):
                return {k: jax_to_torch(v, device) for k, v in value.items()}
            if not isinstance(value, jax.Array):
                return value
            tensor = _j2t(value)
            return tensor.to(device=device) if device else tensor
    """,
    "brax_v1_io_torch.py": """
        import jax, torch
        def torch_to_jax(value):
            if isinstance(value, dict):
                return {k: torch_to_jax(v) for k, v in value.items()}
            return _t2j(value) if isinstance(value, torch.Tensor) else value
        def jax_to_torch(value, device=None):
            if not isinstance(value, jax.Array):
                return value
            tensor = _j2t(value.astype("float32"))
            return tensor.to(device=device) if device else tensor
    """,
    "rdyro_torch2jax_dlpack_passing.py": """
        import jax, torch
        def j2t(x, via="dlpack"):
            return _j2t(x)
        def t2j(x, via="dlpack"):
            return _t2j(x)
    """,
    "torch_jax_interop_to_torch.py": """
        import torch
        def jax_to_torch_tensor(value):
            return _j2t(value)
        def jax_to_torch(value):
            if value is None:
                return None
            if isinstance(value, dict):
                return {k: jax_to_torch(v) for k, v in value.items()}
            return jax_to_torch_tensor(value)
    """,
    "torch_jax_interop_to_jax.py": """
        import jax
        def torch_to_jax_tensor(value):
            return _t2j(value)
        def torch_to_jax(value):
            if isinstance(value, dict):
                return {k: torch_to_jax(v) for k, v in value.items()}
            return torch_to_jax_tensor(value)
    """,
    "mujoco_playground_wrapper_torch.py": """
        import jax, torch
        def _jax_to_torch(tensor):
            return _j2t(tensor)
        def _torch_to_jax(tensor):
            return _t2j(tensor)
    """,
    "pytorch2jax_convert.py": """
        import jax.numpy as jnp, torch
        def convert_to_pyt(x):
            return _j2t(x) if isinstance(x, jnp.ndarray) else x
        def convert_to_jax(x):
            return _t2j(x) if isinstance(x, torch.Tensor) else x
    """,
    "sample_factory_train_brax.py": """
        def jax_to_torch(tensor):
            return _j2t(tensor)
        def torch_to_jax(tensor):
            return _t2j(tensor)
    """,
    "skrl_isaacgym_envs.py": """
        import torch
        def _jax2torch(array, device, from_jax=True):
            if from_jax:
                return _j2t(array).to(device=device)
            return torch.tensor(array, device=device)
        def _torch2jax(tensor, to_jax=True):
            if to_jax:
                return _t2j(tensor)
            return tensor.cpu().numpy()
    """,
}

J, T = "jax", "torch"  # what a function takes
DRIVEN = {
    "algoperf_interop_utils.py": {"pytorch_to_jax": T},
    "lucidrains_jax2torch.py": {"j2t": J, "t2j": T, "tree_t2j": T, "tree_j2t": J},
    "brax_io_torch.py": {"torch_to_jax": T, "jax_to_torch": J},
    "brax_v1_io_torch.py": {"torch_to_jax": T, "jax_to_torch": J},
    "rdyro_torch2jax_dlpack_passing.py": {"j2t": J, "t2j": T},
    "torch_jax_interop_to_torch.py": {"jax_to_torch": J, "jax_to_torch_tensor": J},
    "torch_jax_interop_to_jax.py": {"torch_to_jax": T, "torch_to_jax_tensor": T},
    "mujoco_playground_wrapper_torch.py": {"_jax_to_torch": J, "_torch_to_jax": T},
    # x = to_dlpack(x); x = from_dlpack(x): the capsule rebinds the tensor's own name, and the
    # return after the branch sees the parameter or the second binding, never the capsule.
    "pytorch2jax_convert.py": {"convert_to_pyt": J, "convert_to_jax": T},
    "skrl_isaacgym_envs.py": {"_jax2torch": (J, "cpu"), "_torch2jax": T},
    # the broken one first (test_the_original_raises_on_current_jax); jax._src.dlpack.to_dlpack
    # into torch still works and is left alone
    "sample_factory_train_brax.py": {"torch_to_jax": T, "jax_to_torch": J},
}
# Functions the migration reports instead of fixing, with a fragment of the reason.
REPORTED = {
    "algoperf_interop_utils.py": {11: "take_ownership=take_ownership"},
}


def _inputs(kind: str):
    import jax.numpy as jnp
    import torch

    if kind == J:
        base = jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4)
        return [base, base.T, base[:, ::2], jnp.arange(5, dtype=jnp.int32)]
    base = torch.arange(12.0).reshape(3, 4)
    return [base, base.T, base[:, ::2], base.clone().requires_grad_(), torch.arange(5, dtype=torch.int32)]


def _calls(spec):
    """A DRIVEN entry is the kind of value a function takes, or (kind, *its further positional arguments)."""
    kind, *rest = (spec,) if isinstance(spec, str) else spec
    return [(value, *rest) for value in _inputs(kind)]


def _same(got, want) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys()
        for key in want:
            _same(got[key], want[key])
        return
    if isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for a, b in zip(got, want):
            _same(a, b)
        return
    assert type(got).__module__.split(".")[0] == type(want).__module__.split(".")[0], (type(got), type(want))
    got_values = got.detach().numpy() if hasattr(got, "detach") else np.asarray(got)
    want_values = want.detach().numpy() if hasattr(want, "detach") else np.asarray(want)
    assert got_values.dtype == want_values.dtype and got_values.shape == want_values.shape
    assert np.array_equal(got_values, want_values), (got_values, want_values)


def _load(source: str, name: str) -> dict:
    namespace = {"__name__": f"realworld_{name}"}
    exec(compile(source, name, "exec"), namespace)  # noqa: S102 - running the migrated code is the test
    return namespace


@pytest.mark.parametrize("name", sorted(HAND_FIXED))
def test_migrated_real_file_matches_the_hand_written_fix(name):
    source = (REALWORLD / name).read_bytes()
    assert b"# source:" in source and b"# commit:" in source or b"not named by the code index" in source
    result = process_source(source, name, SETTINGS)
    assert result.error is None, result.error
    assert result.changed, f"{name}: nothing migrated"
    unfixed = {f.line: f.message for f in result.findings if not f.applied}
    expected = REPORTED.get(name, {})
    assert sorted(unfixed) == sorted(expected), unfixed
    for line, fragment in expected.items():
        assert fragment in unfixed[line]
    migrated = _load(result.fixed.decode(), name)
    hand = _load(HAND_HELPERS + textwrap.dedent(HAND_FIXED[name]), f"{name}-hand")
    for function, spec in DRIVEN[name].items():
        for args in _calls(spec):
            want = hand[function](*args)
            got = migrated[function](*args)
            _same(got, want)
    # A second run finds nothing more to change.
    again = process_source(result.fixed, name, SETTINGS)
    assert not again.changed, again.diff()


@pytest.mark.parametrize("name", sorted(HAND_FIXED))
@pytest.mark.target_unpinned
def test_the_original_raises_on_current_jax(name):
    function, spec = next(iter(DRIVEN[name].items()))
    installed = jax_versions.installed() or jax_versions.NEWEST_KNOWN
    if not jax_versions.has("dlpack.from_dlpack_capsule.removed", installed):
        # to_dlpack goes in 0.7.0, capsules into from_dlpack in 0.7.2: before, the originals may run.
        pytest.skip(f"the originals call APIs jax {jax_versions.render(installed)} still has")
    with pytest.raises((AttributeError, TypeError, ImportError)):  # some fail at import already
        original = _load((REALWORLD / name).read_text(), name)
        original[function](*_calls(spec)[0])


def test_dict_conversions_go_through_the_migrated_leaf_functions():
    import jax.numpy as jnp
    import torch

    for name in ("brax_io_torch.py", "torch_jax_interop_to_torch.py"):
        result = process_source((REALWORLD / name).read_bytes(), name, SETTINGS)
        migrated = _load(result.fixed.decode(), name)
        hand = _load(HAND_HELPERS + textwrap.dedent(HAND_FIXED[name]), f"{name}-hand")
        value = {"w": jnp.arange(4.0).reshape(2, 2).T, "b": jnp.ones(2)}
        _same(migrated["jax_to_torch"](value), hand["jax_to_torch"](value))
    result = process_source((REALWORLD / "brax_io_torch.py").read_bytes(), "brax", SETTINGS)
    migrated = _load(result.fixed.decode(), "brax")
    tensors = {"w": torch.arange(4.0).reshape(2, 2).T}
    assert migrated["torch_to_jax"](tensors)["w"].tolist() == [[0.0, 2.0], [1.0, 3.0]]


def test_jax_function_inside_torch_autograd_after_migration():
    import jax.numpy as jnp
    import torch

    name = "lucidrains_jax2torch.py"
    result = process_source((REALWORLD / name).read_bytes(), name, SETTINGS)
    migrated = _load(result.fixed.decode(), name)
    sin = migrated["jax2torch"](jnp.sin)
    x = torch.linspace(0.0, 1.0, 5, requires_grad=True)
    y = sin(x)
    y.sum().backward()
    assert torch.allclose(y, torch.sin(x.detach()))
    assert torch.allclose(x.grad, torch.cos(x.detach()))


# Other JAX versions: CODEMOD_JAX_PYTHONS names interpreters (with jax and torch, no codemod
# needed) to drive the migrated files under, e.g. JAX 0.6.2 or 0.7.0 whose from_dlpack
# ignores torch strides.
OTHER_PYTHONS = [p for p in os.environ.get("CODEMOD_JAX_PYTHONS", "").split(os.pathsep) if p]


@pytest.mark.skipif(not OTHER_PYTHONS, reason="set CODEMOD_JAX_PYTHONS to drive the files on other JAX versions")
@pytest.mark.parametrize("python", OTHER_PYTHONS)
def test_migrated_real_files_on_other_jax_versions(python, tmp_path):
    for name in sorted(HAND_FIXED):
        result = process_source((REALWORLD / name).read_bytes(), name, SETTINGS)
        (tmp_path / name).write_bytes(result.fixed)
        (tmp_path / f"hand_{name}").write_text(HAND_HELPERS + textwrap.dedent(HAND_FIXED[name]))
    this = Path(__file__).read_text()
    helpers = this[this.index("J, T = "):this.index("@pytest.mark.parametrize")]
    driver = tmp_path / "driver.py"
    driver.write_text(
        "import numpy as np\nfrom pathlib import Path\n" + helpers
        + f"\nout = Path({str(tmp_path)!r})\nimport jax\n"
        + "for name, functions in DRIVEN.items():\n"
        + "    migrated = _load((out / name).read_text(), name)\n"
        + "    hand = _load((out / ('hand_' + name)).read_text(), 'hand')\n"
        + "    for function, spec in functions.items():\n"
        + "        for args in _calls(spec):\n"
        + "            _same(migrated[function](*args), hand[function](*args))\n"
        + "print('ok', jax.__version__)\n"
    )
    done = subprocess.run([python, str(driver)], capture_output=True, text=True, check=False, timeout=600,
                          env=dict(os.environ, JAX_PLATFORMS="cpu"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ok")
