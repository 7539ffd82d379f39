"""The engine's fix loop across rules: one run finds everything, and each finding says who
fixed it (``applied``: its own rule; ``resolved_by``: another rule's fix made it moot)."""

from __future__ import annotations

import json
import textwrap

from jax_codemod.engine.pipeline import Settings, process_source
from jax_codemod.rules.dlpack_without_host_fallback import DlpackWithoutHostFallback
from jax_codemod.rules.removed_dlpack_api import RemovedDlpackApi
from jax_codemod.rules.unguarded_dlpack_export import UnguardedDlpackExport


def run(source: str, rules, unsafe: bool = False):
    return process_source(textwrap.dedent(source).encode(), "case.py", Settings(tuple(rules), unsafe))


def states(result):
    return [(f.code, f.fix.value, f.applied, f.resolved_by) for f in result.findings]


EXPORT_IN_REMOVED_CALL = """
import jax
import jax.dlpack
import torch

def to_torch(value: jax.Array):
    return torch.from_dlpack(jax.dlpack.to_dlpack(value))
"""


def test_finding_that_appears_after_another_rules_fix_is_reported_in_the_same_run():
    result = run(EXPORT_IN_REMOVED_CALL, [RemovedDlpackApi(), UnguardedDlpackExport()])
    assert b"return torch.from_dlpack(value)" in result.fixed
    # JAX006 could not see the export until JAX005 removed to_dlpack; its fix is unsafe.
    assert states(result) == [("JAX005", "safe", True, None), ("JAX006", "unsafe", False, None)]


def test_a_later_finding_is_fixed_by_its_own_rule_when_allowed():
    result = run(EXPORT_IN_REMOVED_CALL, [RemovedDlpackApi(), UnguardedDlpackExport()], unsafe=True)
    assert b"torch.from_dlpack(ensure_single_device(value))" in result.fixed
    assert states(result) == [("JAX005", "safe", True, None), ("JAX006", "unsafe", True, None)]


MOOT = """
import jax
import torch

def to_torch(value: jax.Array):
    tensor = torch.from_dlpack(value)
    return tensor
"""


TPU = {"target-platforms": "cpu,tpu"}


def test_finding_made_moot_by_another_rule_is_resolved_by_it_not_applied():
    result = run(MOOT, [DlpackWithoutHostFallback(TPU), UnguardedDlpackExport()])
    assert b"torch.from_dlpack(ensure_exportable(value))" in result.fixed
    # JAX004's helper copies a multi-device array to the host too (its __dlpack_device__
    # refuses), which answers JAX006's multi-device BufferError.
    assert states(result) == [("JAX004", "safe", True, None), ("JAX006", "unsafe", False, "JAX004")]
    moot = result.findings[1].to_json()
    assert moot["applied"] is False and moot["resolved_by"] == "JAX004"
    assert "resolved_by" not in result.findings[0].to_json()


def test_cli_shows_resolved_by_in_text_json_and_sarif(tmp_path):
    from click.testing import CliRunner
    from jax_codemod.cli.main import cli

    (tmp_path / "m.py").write_text(textwrap.dedent(MOOT))
    (tmp_path / "pyproject.toml").write_text('[tool.codemod]\ntarget-platforms = ["cpu", "tpu"]\n')
    runner = CliRunner()
    base = ["run", "--dry-run", "--select", "JAX004,JAX006", str(tmp_path)]
    text = runner.invoke(cli, base).output
    assert "JAX006 1 (1 resolved by JAX004's fix)" in text
    document = json.loads(runner.invoke(cli, [*base, "--format", "json"]).stdout)
    by_code = {f["code"]: f for f in document["findings"]}
    assert by_code["JAX006"]["resolved_by"] == "JAX004" and not by_code["JAX006"]["applied"]
    assert document["summary"]["by_rule"]["JAX006"] == {"found": 1, "fixed": 0, "resolved": 1}
    assert document["summary"]["by_rule"]["JAX004"] == {"found": 1, "fixed": 1}
    sarif = json.loads(runner.invoke(cli, [*base, "--format", "sarif"]).stdout)
    [resolved] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "JAX006"]
    assert resolved["properties"] == {"fixSafety": "unsafe", "applied": False, "resolvedBy": "JAX004"}
    assert "resolved by JAX004's fix" in resolved["message"]["text"]


SHIFTED = """
import jax
import jax.dlpack
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4,), ("x",))
x = jax.device_put(jax.numpy.arange(8.0), NamedSharding(mesh, P("x")))
t = torch.from_dlpack(x)


def b(value):
    caps = jax.dlpack.to_dlpack(value)
    out = torch.utils.dlpack.from_dlpack(caps)
    return out


def to_torch(value: jax.Array):
    return torch.from_dlpack(jax.dlpack.to_dlpack(value))
"""


def test_findings_keep_the_users_lines_when_an_earlier_fix_inserts_a_helper():
    # JAX002's helper goes in above everything: JAX005's message cites its consumer's line
    # ("only feeds ... (line 14)"), which the helper shifts. That was once a new finding at
    # the shifted line, with the original one "resolved by JAX002's fix".
    from jax_codemod.rules.sharded_dlpack_export import ShardedDlpackExport

    result = run(SHIFTED, [ShardedDlpackExport(), RemovedDlpackApi(), UnguardedDlpackExport()])
    assert b"def ensure_single_device(" in result.fixed
    found = [(f.code, f.line, f.applied, f.resolved_by) for f in result.findings]
    # The JAX006 finding exists only after JAX005's fix, in the shifted text: it is
    # reported at the line of the user's file it comes from, span included.
    assert sorted(found) == [
        ("JAX002", 9, True, None),
        ("JAX005", 13, True, None),
        ("JAX005", 19, True, None),
        ("JAX006", 19, False, None),
    ]
    late = next(f for f in result.findings if f.code == "JAX006")
    assert late.span.start_line == late.line == 19


def test_later_findings_on_consecutive_rewritten_lines_keep_their_own_lines():
    # JAX005 rewrites both lines (one edit to difflib); JAX004 then finds an export on each.
    source = """
    import jax
    import jax.dlpack
    import numpy as np
    import torch

    x = jax.numpy.ones(3)
    t = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
    n = np.from_dlpack(jax.dlpack.to_dlpack(x))
    """
    result = run(source, [RemovedDlpackApi(), DlpackWithoutHostFallback(TPU)])
    # On a TPU target JAX004 also reads `to_dlpack(x)` itself (resolved by JAX005's rewrite, which
    # runs first here), then the consumer JAX005 left: each on its own line, never a shifted one.
    assert sorted((f.code, f.line) for f in result.findings) == [
        ("JAX004", 8), ("JAX004", 8), ("JAX004", 9), ("JAX004", 9), ("JAX005", 8), ("JAX005", 9)
    ]
    assert {f.resolved_by for f in result.findings if f.code == "JAX004" and not f.applied} == {"JAX005"}
