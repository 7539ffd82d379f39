import sys
from pathlib import Path

# Case files under snapshots/ are inputs, not tests.
collect_ignore_glob = ["snapshots/*"]

sys.path.insert(0, str(Path(__file__).parent))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a GPU that JAX can see; skipped without one")


import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Runs in tests never share a result cache with each other or with the checkout."""
    monkeypatch.setenv("CODEMOD_CACHE_DIR", str(tmp_path_factory.mktemp("codemod-cache")))
