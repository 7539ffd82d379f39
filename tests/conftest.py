import sys
from pathlib import Path

# Case files under snapshots/ are inputs, not tests.
collect_ignore_glob = ["snapshots/*"]

sys.path.insert(0, str(Path(__file__).parent))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a GPU that JAX can see; skipped without one")
    config.addinivalue_line(
        "markers", "installed_jax: about the installed JAX itself; the default target is not pinned"
    )


import pytest
from jax_codemod.analysis import jax_versions

# The JAX a test targets when it says nothing else: the newest release codemod knows, so a
# result never depends on which jax this environment installed (tests about the installed
# JAX are marked installed_jax; tests about ranges and versions name their target).
PINNED_TARGET = jax_versions.render(jax_versions.NEWEST_KNOWN)


@pytest.fixture(scope="session", autouse=True)
def _projects_declare_the_pinned_jax(tmp_path_factory):
    """Every project a test builds under tmp_path lies below this pyproject.toml, which declares
    the pinned jax (and no [tool.codemod]): codemod run, in-process or in a subprocess, takes its
    target from it unless the test's project declares its own (or has a .git, which ends the
    search as a repository's top does)."""
    base = tmp_path_factory.getbasetemp()
    (base / "pyproject.toml").write_text(
        f'[project]\nname = "codemod-test-projects"\ndependencies = ["jax=={PINNED_TARGET}"]\n'
    )


@pytest.fixture(autouse=True)
def _pinned_default_target(request, monkeypatch):
    """In this process, the target of a rule or run that names none is the pinned one, not the
    installed jax's version."""
    if request.node.get_closest_marker("installed_jax"):
        return
    from jax_codemod.engine import config

    monkeypatch.setattr(jax_versions, "installed", lambda: jax_versions.NEWEST_KNOWN)
    monkeypatch.setattr(config, "_installed_jax_version", lambda: PINNED_TARGET)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Runs in tests never share a result cache with each other or with the checkout."""
    monkeypatch.setenv("CODEMOD_CACHE_DIR", str(tmp_path_factory.mktemp("codemod-cache")))
