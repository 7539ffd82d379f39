"""Every rule over real installed code: no crash, valid output, idempotent.

Runs in memory (never writes into site-packages) with all registered rules selected and
unsafe fixes on. ``scripts/scan_site_packages.py`` runs the same scan and writes the
findings and diffs for a person to review. jax, numpy and torch together take ~2 s on
2 cores while few files pass the prefilter.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
from pathlib import Path

import pytest
from jax_codemod.engine.pipeline import process_source

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("scan_site_packages", REPO / "scripts" / "scan_site_packages.py")
scan_site_packages = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = scan_site_packages  # dataclasses look their module up there
_spec.loader.exec_module(scan_site_packages)

CALL = b"_t = torch.from_dlpack(jax.dlpack.to_dlpack(_x))\n"
FIXED_CALL = b"_t = torch.from_dlpack(_x)\n"
SPLICE = b"\nimport jax.dlpack\nimport torch\n" + CALL


@pytest.mark.parametrize("package", ["jax", "numpy", "torch"])
def test_every_rule_over_an_installed_package(package):
    scan = scan_site_packages.scan_package(package)
    assert scan.files > 100, f"{package} not found or nearly empty"
    assert scan.problems == []


# flax, equinox and optax jit, vmap and scan their own code everywhere: JAX001's test bed.
OPTIONAL = ("flax", "equinox", "optax")


@pytest.mark.parametrize("package", ["jax", "jaxlib", "numpy", "torch", *OPTIONAL])
@pytest.mark.target_unpinned
def test_no_findings_in_correct_library_code(package):
    """These libraries use DLPack, buffer pointers and transforms correctly: every rule,
    opt-in ones included, must stay silent on them (precision as much as recall). Their code is
    right for the jax installed with them, so that is the target, not the pinned one."""
    if package in OPTIONAL and scan_site_packages.package_dir(package) is None:
        pytest.skip(f"{package} is not installed")
    scan = scan_site_packages.scan_package(package)
    assert scan.files > 50, f"{package} not found or nearly empty"
    assert [f"{f.path}:{f.line}: {f.code} {f.message}" for f in scan.findings] == []


def _sample(package: str, count: int, max_size: int) -> list[Path]:
    """Every n-th small-enough module of ``package``: deterministic, spread over the tree."""
    root = Path(scan_site_packages.package_dir(package))
    files = sorted(p for p in root.rglob("*.py") if 2000 < p.stat().st_size < max_size)
    step = max(1, len(files) // count)
    return files[::step][:count]


@pytest.mark.parametrize("package", ["jax", "numpy"])
def test_fix_path_on_real_modules_changes_only_the_fixed_line(package):
    """Real modules with a fixable call appended: only that call changes, and a second pass is a no-op."""
    settings = scan_site_packages.all_rules()
    sample = _sample(package, count=8, max_size=30_000)
    fixed_count = 0
    for path in sample:
        source = path.read_bytes()
        source = source if source.endswith(b"\n") else source + b"\n"
        spliced = source + SPLICE
        result = process_source(spliced, str(path), settings)
        assert result.error is None, result.error
        if not result.changed:
            continue  # the module binds jax or torch to something else: nothing to fix
        fixed_count += 1
        assert result.fixed == spliced[: -len(CALL)] + FIXED_CALL, os.fspath(path)
        ast.parse(result.fixed)
        assert not process_source(result.fixed, str(path), settings).changed
    assert fixed_count >= len(sample) // 2
