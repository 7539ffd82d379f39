"""Results do not depend on how a run is executed: cold or warm cache, one process or a pool.

The tree is the project's own snapshot inputs and examples (every rule's rewrite, unsafe,
report and no-op cases), checked with every rule and unsafe fixes on, so the JSON compared
holds findings, errors and the full diffs.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from jax_codemod.cli.main import main
from jax_codemod.engine import cache as cache_module
from jax_codemod.engine import runner

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    sources = [*sorted((REPO / "tests" / "snapshots").rglob("*.py")), *sorted((REPO / "examples").glob("*.py"))]
    for source in sources:
        target = root / source.relative_to(REPO)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return root


def run_json(tree: Path, *options: str) -> dict:
    runner_ = CliRunner()
    previous = os.getcwd()
    os.chdir(tree)
    try:
        with runner_.isolation() as (out, err, _mixed):
            # Every platform too: JAX004 and JAX008 report only for targets that include a TPU.
            code = main(["run", "--dry-run", "--select", "ALL", "--unsafe-fixes", "--format", "json",
                         "--target-platforms", "cpu,gpu,metal,tpu", "--no-progress", *options, "."])
            stdout = out.getvalue().decode()
    finally:
        os.chdir(previous)
    assert code in (0, 1), err.getvalue().decode()
    return json.loads(stdout)


def test_the_corpus_exercises_every_rule(corpus):
    document = run_json(corpus, "--no-cache", "-j", "1")
    found = {code for code, counts in document["summary"]["by_rule"].items() if counts["found"]}
    assert found == {"JAX001", "JAX002", "JAX003", "JAX004", "JAX005", "JAX006", "JAX007", "JAX008"}
    assert document["diffs"], "no rewrite in the corpus: the comparison would prove little"


def test_cold_warm_serial_and_pool_give_identical_json(corpus, tmp_path, pool_calls, monkeypatch):
    cache_dir = str(tmp_path / "cache")
    cold_serial = run_json(corpus, "--no-cache", "-j", "1")
    assert pool_calls == []

    cold_pool = run_json(corpus, "--no-cache", "-j", "2")
    assert len(pool_calls) == 1 and pool_calls[0] > 1, "-j 2 did not go through the pool"

    filling = run_json(corpus, "--cache-dir", cache_dir, "-j", "2")
    assert any(Path(cache_dir).rglob("*.json")), "the cache was not written"

    computed: list[str] = []
    real = cache_module.process_source

    def counting(source, path, settings, *rest, **options):
        computed.append(path)
        return real(source, path, settings, *rest, **options)

    monkeypatch.setattr(cache_module, "process_source", counting)
    warm_serial = run_json(corpus, "--cache-dir", cache_dir, "-j", "1")
    # Only results with an error are never cached; everything else came from the cache.
    assert len(computed) == len({error["path"] for error in warm_serial["errors"]})
    warm_pool = run_json(corpus, "--cache-dir", cache_dir, "-j", "2")

    expected = json.dumps(cold_serial, indent=1, sort_keys=True).splitlines()
    for name, document in (("cold -j 2", cold_pool), ("filling the cache", filling),
                           ("warm -j 1", warm_serial), ("warm -j 2", warm_pool)):
        assert json.dumps(document, indent=1, sort_keys=True).splitlines() == expected, name


def test_chunks_put_the_big_files_first_and_no_chunk_far_over_its_share():
    sizes = [400_000, 300_000, 50_000, *([2_000] * 300), *([100] * 500)]
    pending = [(index, f"f{index}.py", size) for index, size in enumerate(sizes)]
    jobs = 4
    chunks = runner._chunks(pending, jobs)
    flat = [item for chunk in chunks for item in chunk]
    assert sorted(flat) == sorted(pending)
    assert [item[2] for item in flat] == sorted(sizes, reverse=True)
    share = sum(sizes) / (jobs * runner.CHUNKS_PER_WORKER)
    for chunk in chunks:
        assert len(chunk) <= runner.CHUNK_SIZE
        # A chunk is closed as soon as it reaches its share: only its last file can overshoot.
        assert sum(item[2] for item in chunk[:-1]) < share
    assert chunks[0] == [pending[0]] and chunks[1] == [pending[1]]


def test_a_file_changed_after_the_parent_prefiltered_it_is_prefiltered_again(tmp_path):
    """A worker trusts the parent's prefilter answer only for the very bytes the parent read."""
    from jax_codemod.engine.pipeline import Settings
    from jax_codemod.registry import MANIFEST, LazyRule

    settings = Settings(tuple(LazyRule(info, {}) for info in MANIFEST))
    path = tmp_path / "m.py"
    path.write_text("import jax.dlpack\ncapsule = jax.dlpack.to_dlpack(x)\n")
    stale = runner.zlib.crc32(b"import os\n")
    # As if the parent had read "import os" (no rule passes) and the file was edited since.
    result = runner._check_pending((0, str(path), len(b"import os\n"), stale, ()), settings)
    assert [finding.code for finding in result.findings] == ["JAX005"]
    # The same bytes as the parent read: its answer (no rule) is used, nothing is parsed.
    source = path.read_bytes()
    same = runner._check_pending((0, str(path), len(source), runner.zlib.crc32(source), ()), settings)
    assert same.findings == [] and same.error is None


def test_a_small_run_with_several_jobs_stays_in_process_and_gives_the_same_json(corpus, monkeypatch):
    """Below PARALLEL_MIN_BYTES a -j 2 run checks the bytes it read itself, in this process."""
    calls: list[int] = []
    monkeypatch.setattr(runner, "_check_in_pool", lambda pending, *a, **k: calls.append(len(pending)))
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 1 << 40)
    monkeypatch.setattr(runner, "available_cpus", lambda: 2)
    held = run_json(corpus, "--no-cache", "-j", "2")
    assert calls == []
    serial = run_json(corpus, "--no-cache", "-j", "1")
    assert json.dumps(held, sort_keys=True) == json.dumps(serial, sort_keys=True)


def test_a_pool_run_reads_files_only_until_the_threshold_and_workers_prefilter_the_rest(tmp_path, monkeypatch):
    """Once PARALLEL_MIN_BYTES of files pass, the parent reads no more: the rest go to the
    workers unread, largest first, and each worker prefilters what it reads."""
    from jax_codemod.engine.pipeline import Settings
    from jax_codemod.rules.removed_dlpack_api import RemovedDlpackApi

    broken = b"import jax.dlpack\ncapsule = jax.dlpack.to_dlpack(x)\n"
    paths = []
    for index in range(12):
        path = tmp_path / f"m{index:02}.py"
        # Every third file holds no trigger; sizes differ so that the order can be seen.
        path.write_bytes((broken if index % 3 else b"import os\n") + b"#" * (10 * index) + b"\n")
        paths.append(str(path))
    threshold = 2 * len(broken)
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", threshold)
    monkeypatch.setattr(runner, "available_cpus", lambda: 2)
    read_here: list[str] = []
    real_read = runner._read
    sent: list[list] = []
    real_pool = runner._check_in_pool

    def reading(path, settings):
        read_here.append(path)
        return real_read(path, settings)

    def pool(pending, *args, **kwargs):
        sent.append(list(pending))
        monkeypatch.setattr(runner, "_read", real_read)  # the workers' reads are not the parent's
        return real_pool(pending, *args, **kwargs)

    monkeypatch.setattr(runner, "_read", reading)
    monkeypatch.setattr(runner, "_check_in_pool", pool)
    settings = Settings(rules=(RemovedDlpackApi(),))
    results = runner.check_files(paths, settings, jobs=2)
    # m00 has no trigger; m01 and m02 pass and reach the threshold: the parent stops there.
    assert read_here == paths[:3]
    [pending] = sent
    assert [(item[1], item[3] is None, item[4] is None) for item in pending] == (
        [(paths[1], False, False), (paths[2], False, False)] + [(path, True, True) for path in paths[3:]]
    )
    assert [item[2] for item in pending[2:]] == [os.path.getsize(path) for path in paths[3:]]
    assert [result.path for result in results] == paths
    assert [bool(result.findings) for result in results] == [bool(index % 3) for index in range(12)]
    serial = runner.check_files(paths, settings, jobs=1)
    assert [(r.findings, r.fixed, r.error) for r in results] == [(r.findings, r.fixed, r.error) for r in serial]


def test_a_worker_prefilters_a_file_the_parent_never_read(tmp_path):
    from jax_codemod.engine.pipeline import Settings
    from jax_codemod.registry import MANIFEST, LazyRule

    settings = Settings(tuple(LazyRule(info, {}) for info in MANIFEST))
    broken, clean = tmp_path / "broken.py", tmp_path / "clean.py"
    broken.write_text("import jax.dlpack\ncapsule = jax.dlpack.to_dlpack(x)\n")
    clean.write_text("import os\n")
    found = runner._check_pending((0, str(broken), 0, None, None), settings)
    assert [finding.code for finding in found.findings] == ["JAX005"]
    nothing = runner._check_pending((1, str(clean), 0, None, None), settings)
    assert nothing.findings == [] and nothing.error is None and nothing.source is None
