"""scripts/jax_matrix.py's own bookkeeping: the counts and skip reasons it reads from JUnit XML
(the script itself installs environments and runs the whole suite; it is not run here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("jax_matrix", REPO / "scripts" / "jax_matrix.py")
jax_matrix = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jax_matrix)

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="5">
<testcase classname="tests.test_a" name="test_ok" time="0.1"/>
<testcase classname="tests.test_a" name="test_bad" time="0.1"><failure message="assert 1 == 2"/></testcase>
<testcase classname="tests.test_a" name="test_broken" time="0.1"><error message="fixture"/></testcase>
<testcase classname="tests.test_b" name="test_new[a]" time="0"><skipped type="pytest.skip"
 message="needs jax&gt;=0.7.1; jax 0.4.30 is installed"/></testcase>
<testcase classname="tests.test_b" name="test_new[b]" time="0"><skipped type="pytest.skip"
 message="Skipped: needs jax&gt;=0.7.1; jax 0.4.30 is installed"/></testcase>
</testsuite></testsuites>
"""


def test_outcomes_and_skip_reasons_are_counted(tmp_path):
    xml = tmp_path / "junit.xml"
    xml.write_text(JUNIT)
    outcomes, skips = jax_matrix.summarise(xml)
    assert dict(outcomes) == {"passed": 1, "failed": 2, "skipped": 2}
    assert dict(skips) == {"needs jax>=0.7.1; jax 0.4.30 is installed": 2}

