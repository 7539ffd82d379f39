"""The CLI selects rules from a manifest so that a run over files without triggers imports no rule;
the manifest must say exactly what the rule classes say."""

from __future__ import annotations

import pickle
import subprocess
import sys

import jax_codemod
from jax_codemod import registry
from jax_codemod.registry import MANIFEST, LazyRule
from test_cli import BROKEN, CLEAN, FIXED, REPO, invoke


def test_manifest_is_generated_from_the_rule_classes():
    text = (REPO / "codemods" / "registry.py").read_text()
    assert registry.generate() in text, "stale: run `python -m jax_codemod.registry`"
    assert [(i.CODE, i.NAME, i.DEFAULT_ENABLED, i.module, i.cls, i.TRIGGERS) for i in MANIFEST] == [
        (r.CODE, r.NAME, r.DEFAULT_ENABLED, r.__module__, r.__name__, tuple(r.TRIGGERS)) for r in jax_codemod.RULES
    ]


def test_lazy_rule_is_the_rule_once_a_trigger_appears(tmp_path):
    info = next(i for i in MANIFEST if i.CODE == "JAX005")
    lazy = LazyRule(info, {"helper-module": "x.y"})
    assert lazy.prefilter(b"x = 1\n") is False and lazy._rule is None  # no import for a file without triggers
    assert lazy.prefilter(BROKEN) is True
    assert type(lazy.rule).__name__ == "RemovedDlpackApi" and lazy.options == {"helper-module": "x.y"}
    copy = pickle.loads(pickle.dumps(lazy))  # as handed to worker processes
    assert copy._rule is None and copy.CODE == "JAX005" and copy.prefilter(BROKEN)
    fresh = pickle.loads(pickle.dumps(LazyRule(info, {})))
    assert fresh.REQUIRES == info.REQUIRES == type(lazy.rule).REQUIRES and fresh._rule is None


def test_lazy_rules_prefilter_a_file_without_what_they_require_unloaded():
    """``Prefilter`` reads ``REQUIRES`` of a LazyRule from the manifest: it never loads the rule."""
    from jax_codemod.rule import Prefilter

    rules = tuple(LazyRule(info, {}) for info in MANIFEST)
    source = b"y = x.to_dlpack().item() + jit(f)(dl_device=1)\n"  # triggers of every rule, no `jax`
    assert Prefilter(rules).active(source) == ()
    assert all(rule._rule is None for rule in rules)
    assert all(not rule.prefilter(source) for rule in rules)


def test_a_run_over_files_without_triggers_imports_no_rule(tmp_path):
    (tmp_path / "clean.py").write_bytes(b"import os\n\nprint(os.getcwd())\n")
    code = (
        "import sys\nfrom jax_codemod.cli.main import main\n"
        "rc = main(['run', '--check', '--no-cache', 'clean.py'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('jax_codemod.rules')))\n"
        "sys.exit(rc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_selection_and_fixes_through_the_manifest(tmp_path):
    (tmp_path / "a.py").write_bytes(BROKEN)
    (tmp_path / "b.py").write_bytes(CLEAN)
    code, _, err = invoke(["run", "--select", "JAX00", "--ignore", "JAX001", "."], cwd=tmp_path)
    assert code == 0, err
    assert (tmp_path / "a.py").read_bytes() == FIXED
    assert invoke(["run", "--select", "JAX9", "."], cwd=tmp_path)[0] == 2
