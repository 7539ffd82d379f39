"""``guards.callers_catch``: a helper whose every call, project-wide, sits in a ``try`` that
catches the error its export raises is left alone (issue 54's regression: `def to_torch(x):
return torch.from_dlpack(x)` whose callers wrap it in `try: ... except BufferError: <fallback>`
was rewritten by JAX002, JAX006 and JAX004). A call the project does not show, or a use that is
no call, and the catch does not count."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.guards import callers_catch
from jax_codemod.cli.main import main

BUFFER_ERROR = frozenset({"BufferError"})

HELPER = """
import torch

def to_torch(x):
    return torch.from_dlpack(x)
"""


def _answer(body: str, helper: str = HELPER, function: str = "to_torch") -> bool:
    text = textwrap.dedent(helper) + textwrap.dedent(body)
    ctx = FileContext("m.py", text, ast.parse(text))
    definition = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    export = next(n for n in ast.walk(definition) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("dlpack"))
    return callers_catch(ctx, export, BUFFER_ERROR)


CAUGHT = """
def export(x):
    try:
        return to_torch(x)
    except BufferError:
        return None
"""


def test_every_call_caught_counts():
    assert _answer(CAUGHT)
    assert _answer(CAUGHT + "\ntry:\n    to_torch(1)\nexcept (ValueError, BufferError):\n    pass\n")


def test_a_base_of_the_error_counts_another_error_does_not():
    assert _answer(CAUGHT.replace("except BufferError", "except Exception"))
    assert _answer(CAUGHT.replace("except BufferError", "except"))
    assert not _answer(CAUGHT.replace("except BufferError", "except ValueError"))


@pytest.mark.parametrize(
    "extra",
    [
        "\nto_torch(1)\n",  # one call outside any try
        "\nresults = list(map(to_torch, [1]))\n",  # passed on: its calls are unknown
        "\nexporters = {'torch': to_torch}\n",  # stored
        "\ndef later():\n    try:\n        return lambda: to_torch(1)\n    except BufferError:\n        pass\n",
        "\nto_torch = staticmethod(to_torch)\n",  # the name bound again
    ],
    ids=["uncaught-call", "passed", "stored", "lambda-runs-later", "rebound"],
)
def test_a_call_or_use_outside_a_catch_keeps_the_finding(extra):
    assert not _answer(CAUGHT + extra)


def test_no_caller_at_all_is_no_catch():
    assert not _answer("")


@pytest.mark.parametrize(
    "helper",
    [
        "import torch\n\ndef to_torch(x):\n    yield torch.from_dlpack(x)\n",  # runs when iterated
        "import functools, torch\n\n@functools.cache\ndef to_torch(x):\n    return torch.from_dlpack(x)\n",
        "import torch\n\nclass C:\n    def to_torch(self, x):\n        return torch.from_dlpack(x)\n",
    ],
    ids=["generator", "decorated", "method"],
)
def test_only_plain_functions_count(helper):
    assert not _answer(CAUGHT, helper=helper)


def test_a_caller_that_is_itself_always_caught_counts_two_levels_up():
    inner = """
def inner(x):
    return to_torch(x)

def export(x):
    try:
        return inner(x)
    except BufferError:
        return None
"""
    assert _answer(inner)
    deeper = inner.replace("return inner(x)\n    except", "return middle(x)\n    except") + "\ndef middle(x):\n    return inner(x)\n"
    assert not _answer(deeper)  # three levels: not followed


def test_a_local_helper_is_called_only_in_its_scope():
    local = """
def export(x):
    def to_torch(x):
        return torch.from_dlpack(x)
    try:
        return to_torch(x)
    except BufferError:
        return None
"""
    assert _answer(local, helper="import torch\n")
    assert not _answer(local.replace("        return None", "        return to_torch(x)"), helper="import torch\n")


# Across modules (through the CLI, as a project) --------------------------------------------

HELPER_MODULE = """\
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P


def to_torch(x):
    return torch.from_dlpack(x)


def export(x):
    try:
        return to_torch(x)
    except BufferError:  # a sharded array has no single buffer: go through the host
        return torch.from_numpy(np.array(x))


def sharded():
    mesh = jax.sharding.Mesh(jax.devices(), ("d",))
    return jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("d")))


assert export(sharded()).tolist() == list(range(8))
"""

CAUGHT_ELSEWHERE = {
    "direct": "from pkg.interop import to_torch as convert\n\n\ndef go(x):\n    try:\n"
    "        return convert(x)\n    except BufferError:\n        return None\n",
    "module attribute": "from pkg import interop\n\n\ndef go(x):\n    try:\n"
    "        return interop.to_torch(x)\n    except BufferError:\n        return None\n",
    "re-exported": "from pkg import to_torch\n\n\ndef go(x):\n    try:\n"
    "        return to_torch(x)\n    except BufferError:\n        return None\n",
}
UNCAUGHT_ELSEWHERE = {
    "direct": "from pkg.interop import to_torch as convert\n\n\ndef go(x):\n    return convert(x)\n",
    "module attribute": "from pkg import interop\n\n\ndef go(x):\n    return interop.to_torch(x)\n",
    "re-exported": "from pkg import to_torch\n\n\ndef go(x):\n    return to_torch(x)\n",
    "function-level import": "def go(x):\n    from pkg.interop import to_torch\n\n    return to_torch(x)\n",
    "passed on": "from pkg.interop import to_torch\n\nconverters = [to_torch]\n",
}


def _project(root: Path, other: str) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("from pkg.interop import to_torch\n")
    (root / "pkg" / "interop.py").write_text(HELPER_MODULE)
    (root / "main.py").write_text("import pkg.interop\n")
    (root / "other.py").write_text(other)
    return root


def _jax002(root: Path) -> list[str]:
    with CliRunner().isolation() as (out, _err, _):
        main(["run", "--dry-run", "--no-cache", "--format", "json", "--select", "JAX002", str(root)])
        document = json.loads(out.getvalue().decode())
    return [f"{Path(f['path']).name}:{f['line']}" for f in document["findings"]]


@pytest.mark.parametrize("other", sorted(CAUGHT_ELSEWHERE))
def test_another_module_that_catches_too_leaves_the_helper_alone(tmp_path, other):
    assert _jax002(_project(tmp_path, CAUGHT_ELSEWHERE[other])) == []


@pytest.mark.parametrize("other", sorted(UNCAUGHT_ELSEWHERE))
def test_another_module_that_calls_it_unguarded_keeps_the_finding(tmp_path, other):
    assert _jax002(_project(tmp_path, UNCAUGHT_ELSEWHERE[other])) == ["interop.py:9"]


def test_a_module_that_does_not_import_the_helper_is_no_caller(tmp_path):
    # Its own `to_torch`, called unguarded: another function, whatever its name.
    own = HELPER_MODULE.split("\n\n\ndef export")[0] + "\n\n\nto_torch(1)\n"
    assert _jax002(_project(tmp_path, own)) == []


def test_the_project_runs_as_written(tmp_path):
    """The correct program the issue names, run with the real JAX on four devices: the sharded
    export raises BufferError inside the helper and each caller's handler falls back."""
    root = _project(tmp_path, CAUGHT_ELSEWHERE["direct"])
    (root / "main.py").write_text(
        "import jax.numpy as jnp\nfrom other import go\nfrom pkg.interop import sharded\n\n"
        "assert go(sharded()) is None\nassert go(jnp.arange(2.0)).tolist() == [0.0, 1.0]\nprint('ok')\n"
    )
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(
        [sys.executable, "main.py"], check=False, cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
