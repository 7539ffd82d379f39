"""scripts/jax_matrix.py's own bookkeeping: what it reads from JUnit XML, and the README section it
writes from the committed records (the script itself installs environments and runs the whole
suite; it is not run here)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("jax_matrix", REPO / "scripts" / "jax_matrix.py")
jax_matrix = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jax_matrix)

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="9">
<testcase classname="tests.test_a" name="test_ok" time="0.1"/>
<testcase classname="tests.test_a" name="test_bad" time="0.1"><failure message="assert 1 == 2"/></testcase>
<testcase classname="tests.test_a" name="test_broken" time="0.1"><error message="fixture"/></testcase>
<testcase classname="tests.test_b" name="test_new[a]" time="0"><skipped type="pytest.skip"
 message="needs jax&gt;=0.7.1; jax 0.4.30 is installed"/></testcase>
<testcase classname="tests.test_b" name="test_new[b]" time="0"><skipped type="pytest.skip"
 message="Skipped: needs jax&gt;=0.7.1; jax 0.4.30 is installed"/></testcase>
<testcase classname="tests.test_b" name="test_known_bug" time="0"><skipped type="pytest.xfail"
 message="a known bug"/></testcase>
<testcase classname="tests.test_execution" name="test_before_fails_and_after_runs[removed_dlpack_api-rewrite_x]"
 time="0"><skipped type="pytest.skip" message="needs jax&gt;=0.7.1; jax 0.4.30 is installed"/></testcase>
<testcase classname="tests.test_execution" name="test_before_fails_and_after_runs[removed_dlpack_api-unsafe_y]"
 time="0"/>
<testcase classname="tests.test_execution" name="test_before_fails_and_after_runs[removed_dlpack_api-noop_z]"
 time="0"><skipped type="pytest.skip" message="needs cupy, which is not installed"/></testcase>
</testsuite></testsuites>
"""


def test_outcomes_and_skip_reasons_are_counted(tmp_path):
    xml = tmp_path / "junit.xml"
    xml.write_text(JUNIT)
    outcomes, skips = jax_matrix.summarise(xml)
    assert dict(outcomes) == {"passed": 2, "failed": 2, "skipped": 4, "xfailed": 1}
    assert dict(skips) == {"needs jax>=0.7.1; jax 0.4.30 is installed": 3, "needs cupy, which is not installed": 1}
    assert jax_matrix.failures(xml) == ["tests.test_a::test_bad", "tests.test_a::test_broken"]


def test_rewrite_cases_not_executed_are_named_with_their_reason(tmp_path):
    """Only rewrite_ and unsafe_ cases count: a noop case is executed only to show it runs."""
    xml = tmp_path / "junit.xml"
    xml.write_text(JUNIT)
    assert jax_matrix.unexecuted_rewrites(xml) == (
        2, {"needs jax>=0.7.1; jax 0.4.30 is installed": ["removed_dlpack_api/rewrite_x"]})


def _entry(python, jax, **extra):
    entry = {"python": python, "jax": jax, "newest": False, "suite": "whole suite", "passed": 10, "failed": 0, "skipped": 2, "xfailed": 1,
             "install_s": 30, "tests_s": 400, "commit": "abc1234", "date": "2026-12-03", "failures": [],
             "skips": {}, "rewrite_cases": 5, "unexecuted_rewrites": {}}
    entry.update(extra)
    return entry


def test_the_section_pivots_skip_reasons_and_names_the_oldest_jaxs_unexecuted_rewrites(tmp_path):
    old = _entry("3.11.7", "0.4.30", skips={"needs jax>=0.7.1; jax 0.4.30 is installed": 2,
                                            "jax 0.4.30 still takes a capsule": 1},
                 unexecuted_rewrites={"needs jax>=0.7.1; jax 0.4.30 is installed": ["m/rewrite_a", "m/rewrite_b"]})
    new = _entry("3.13.0", "0.12.0.1", newest=True, failed=1, failures=["tests.test_a::test_bad"],
                 skips={"needs torch, which is not installed": 2, "jax 0.12.0.1 still takes a capsule": 3},
                 install_s=None)
    for entry in (new, old):
        (tmp_path / f"py{entry['python'][:4]}-jax{entry['jax']}.json").write_text(json.dumps(entry))
    found = jax_matrix.records(tmp_path)
    assert [entry["jax"] for entry in found] == ["0.4.30", "0.12.0.1"]  # by Python, then by version
    text = jax_matrix.section(found)
    assert text.startswith(jax_matrix.START) and text.endswith(jax_matrix.END)
    assert "| 3.11.7 | 0.4.30 | whole suite | 10 | 0 | 2 | 1 | 30 s | 400 s | abc1234, 2026-12-03 |" in text
    assert "| 3.13.0 | 0.12.0.1 (newest) | whole suite | 10 | 1 | 2 | 1 | — | 400 s |" in text
    assert "Failed on 3.13 / 0.12.0.1: `tests.test_a::test_bad`." in text
    assert "not executed on the oldest JAX, 0.4.30: **2 of 5**, 2 for the JAX release" in text
    assert "0 for a device or package that environment lacks:" in text
    assert "- 2, needs jax>=0.7.1; jax 0.4.30 is installed: `m/rewrite_a`, `m/rewrite_b`" in text
    assert "| why | 3.11 / 0.4.30 | 3.13 / 0.12.0.1 |" in text
    assert "| needs jax>=0.7.1 | 2 | — |" in text
    assert "| needs torch, which is not installed | — | 2 |" in text
    assert "| the installed jax still takes a capsule | 1 | 3 |" in text
    readme = f"intro\n{jax_matrix.START}\nstale\n{jax_matrix.END}\nrest\n"
    assert jax_matrix.rendered(readme, found) == f"intro\n{text}\nrest\n"
    assert jax_matrix.rendered(jax_matrix.rendered(readme, found), found) == jax_matrix.rendered(readme, found)


def test_the_readme_section_is_what_the_committed_records_give():
    readme = jax_matrix.README.read_text()
    assert jax_matrix.rendered(readme, jax_matrix.records()) == readme, (
        "run python scripts/jax_matrix.py --readme")
    assert jax_matrix.main(["--check"]) == 0
