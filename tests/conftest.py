import sys
from pathlib import Path

# Case files under snapshots/ are inputs, not tests.
collect_ignore_glob = ["snapshots/*", "projects/*"]

sys.path.insert(0, str(Path(__file__).parent))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a GPU that JAX can see; skipped without one")
    config.addinivalue_line(
        "markers", "target_unpinned: about the installed JAX or how the default target is found; not pinned"
    )


import pytest
from jax_codemod.analysis import jax_versions
from jax_codemod.engine import runner
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class DiffSnapshotExtension(SingleFileSnapshotExtension):
    """Stores each snapshot as a plain ``.diff`` file a reviewer can read."""

    file_extension = "diff"
    _write_mode = WriteMode.TEXT


@pytest.fixture
def diff_snapshot(snapshot):
    """A snapshot kept as the unified diff of a rewrite (tests/__snapshots__/<module>/<test>.diff)."""
    return snapshot.use_extension(DiffSnapshotExtension)

# The JAX a test targets when it says nothing else: the newest release codemod knows, so a
# result never depends on which jax this environment installed. Tests about the installed JAX,
# or about how the default target is found, are marked target_unpinned.
PINNED_TARGET = jax_versions.render(jax_versions.NEWEST_KNOWN)


@pytest.fixture(autouse=True)
def _pinned_target(request, monkeypatch):
    """The target of a rule that names none, and of a codemod run (in this process or in a
    subprocess, through $CODEMOD_TARGET_JAX_VERSION), is the pinned one."""
    from jax_codemod.engine import config

    if request.node.get_closest_marker("target_unpinned"):
        monkeypatch.delenv(config.TARGET_ENV_VAR, raising=False)
        return
    monkeypatch.setenv(config.TARGET_ENV_VAR, PINNED_TARGET)
    monkeypatch.setattr(jax_versions, "installed", lambda: jax_versions.NEWEST_KNOWN)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Runs in tests never share a result cache with each other or with the checkout."""
    monkeypatch.setenv("CODEMOD_CACHE_DIR", str(tmp_path_factory.mktemp("codemod-cache")))


@pytest.fixture
def pool_calls(monkeypatch) -> list[int]:
    """Make -j 2 use the process pool even for a small tree, and record that it did."""
    calls: list[int] = []
    real = runner._check_in_pool

    def spy(pending, *args, **kwargs):
        calls.append(len(pending))
        return real(pending, *args, **kwargs)

    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(runner, "_check_in_pool", spy)
    return calls
