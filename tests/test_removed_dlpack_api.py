"""JAX005 beyond its snapshot cases: --check honesty, the engine's re-check, values on other JAX."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from jax_codemod.analysis.capsules import UNKNOWN_ORIGIN_OPTION, capsules
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.version_gates import OLD, Gates
from jax_codemod.cli.main import EXIT_ATTENTION, main
from jax_codemod.engine.pipeline import Settings, process_source
from jax_codemod.rule import FixSafety, Rule
from jax_codemod.rules.removed_dlpack_api import RemovedDlpackApi

HALF_FIXABLE = textwrap.dedent(
    """\
    import jax.dlpack
    import torch.utils.dlpack


    def export(x):
        return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))


    def to_jax(capsule):
        return jax.dlpack.from_dlpack(capsule)
    """
).encode()


def _run(args, capsys):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out


def test_check_never_calls_a_fixed_file_clean_while_a_capsule_call_is_left(tmp_path, capsys):
    path = tmp_path / "bridge.py"
    path.write_bytes(HALF_FIXABLE)
    code, out = _run(["run", "--no-cache", path], capsys)
    assert code == EXIT_ATTENTION, out  # one finding is fixed, one is left
    fixed = path.read_bytes()
    assert b"to_dlpack" not in fixed and b"jax.dlpack.from_dlpack(capsule)" in fixed
    # The fixed file has no `to_dlpack` left: the prefilter must still let JAX005 look.
    code, out = _run(["run", "--check", "--no-cache", path], capsys)
    assert code == EXIT_ATTENTION, out
    assert "bridge.py:10:12: JAX005" in out and "parameter `capsule`" in out


def test_check_through_a_subprocess(tmp_path):
    path = tmp_path / "bridge.py"
    path.write_bytes(HALF_FIXABLE)
    done = subprocess.run([sys.executable, "-m", "jax_codemod.cli", "run", "--check", "--no-cache", str(path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == EXIT_ATTENTION, done.stderr
    assert done.stdout.count("JAX005") == 2


class _Renames(Rule):
    """Fixes `old()` into `new()`."""

    CODE, NAME, TRIGGERS = "TST001", "renames", (b"old(",)

    def check(self, ctx):
        return [self.finding(ctx, n, "old", FixSafety.SAFE) for n in ast.walk(ctx.tree)
                if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "old"]

    def rewrite(self, original, updated, finding, fixer):
        import libcst as cst

        return updated.with_changes(func=cst.Name("new"))


class _ReportsNew(Rule):
    """Reports `new()`, without a fix."""

    CODE, NAME, TRIGGERS = "TST002", "reports-new", (b"new(",)

    def check(self, ctx):
        return [self.finding(ctx, n, "new is broken too", FixSafety.NONE) for n in ast.walk(ctx.tree)
                if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "new"]


def test_a_finding_that_only_appears_after_a_fix_is_reported():
    # TST002's prefilter does not match the original source at all.
    result = process_source(b"y = old()\n", "a.py", Settings(rules=(_Renames(), _ReportsNew())))
    assert result.fixed == b"y = new()\n"
    assert [(f.code, f.applied) for f in result.findings] == [("TST001", True), ("TST002", False)]


def test_an_unfixed_finding_is_not_reported_twice_after_the_fix():
    source = HALF_FIXABLE + b"\nCACHE = []\n\n\ndef keep(x):\n    c = jax.dlpack.to_dlpack(x)\n" \
        b"    CACHE.append(c)\n    return jax.dlpack.from_dlpack(c)\n"
    result = process_source(source, "a.py", Settings(rules=(RemovedDlpackApi(),)))
    lines = sorted((f.line, f.applied) for f in result.findings)
    assert lines == [(6, True), (10, False), (16, True), (18, False)], result.findings


def test_export_arguments_keep_a_capsule_and_say_so():
    # torch.from_dlpack takes arrays: the reason to keep a capsule is `copy=`/`stream=`, which
    # only `__dlpack__` has, and the suggested call carries them.
    source = (b"import jax\nimport jax.dlpack\nimport torch\n\n\ndef a(x):\n"
              b"    return torch.from_dlpack(jax.dlpack.to_dlpack(x, copy=False))\n")
    result = process_source(source, "a.py", Settings(rules=(RemovedDlpackApi(),)))
    assert b"torch.from_dlpack(x.__dlpack__(copy=False))" in result.fixed
    [finding] = result.findings
    assert "made with `copy=`, which `__dlpack__` takes" in finding.message
    assert "`x.__dlpack__(copy=False)`" in finding.message and "only capsules" not in finding.message


# Analyses ---------------------------------------------------------------------------------


def _ctx(source: str) -> FileContext:
    source = textwrap.dedent(source)
    return FileContext("a.py", source, ast.parse(source))


def test_flows_follow_variables_containers_and_escapes():
    ctx = _ctx(
        """
        import jax.dlpack, torch
        def f(x, xs):
            c = jax.dlpack.to_dlpack(x)
            t = torch.from_dlpack(c)
            d = jax.dlpack.to_dlpack(x)
            return d, t
        def g(xs):
            cs = [jax.dlpack.to_dlpack(a) for a in xs]
            return [torch.from_dlpack(c) for c in cs]
        """
    )
    analysis = capsules(ctx)
    flows = {p.call.lineno: analysis.flow(p) for p in analysis.producers}
    assert (flows[4].via, flows[4].variable, [u.consumer_name for u in flows[4].uses]) == (
        "variable", "c", ["torch.from_dlpack"])
    assert flows[6].escapes and flows[6].escapes[0].escape == "returned"
    assert flows[9].via == "container" and not flows[9].escapes
    assert capsules(ctx) is analysis  # one analysis per file


def test_a_capsule_read_twice_escapes():
    ctx = _ctx(
        """
        import jax.dlpack, torch
        c = jax.dlpack.to_dlpack(x)
        a = torch.from_dlpack(c)
        b = torch.from_dlpack(c)
        """
    )
    analysis = capsules(ctx)
    (flow,) = [analysis.flow(p) for p in analysis.producers]
    assert any("read 2 times" in (u.escape or "") for u in flow.escapes)


@pytest.mark.parametrize(
    ("test", "old_when"),
    [
        ("jax.__version_info__ < (0, 7)", True),
        ("jax.__version_info__ >= (0, 7)", False),
        ("(0, 7) > jax.__version_info__", True),
        ("version.parse(jax.__version__) >= version.parse('0.7')", False),
        ("not hasattr(jax.dlpack, 'to_dlpack')", False),
        ("getattr(jax.dlpack, 'to_dlpack', None) is not None", True),
        ("jax.__version__.startswith('0.4')", "both"),
        ("x > 3", None),
    ],
)
def test_gate_direction(test, old_when):
    ctx = _ctx(f"import jax\nimport jax.dlpack\nfrom packaging import version\nif {test}:\n    pass\n")
    gates = Gates(ctx, capsules(ctx).qualname, frozenset({"jax.dlpack.to_dlpack"}))
    assert gates.old_when(ctx.tree.body[3].test) == old_when


def test_code_after_an_early_return_for_new_jax_is_the_old_side():
    ctx = _ctx(
        """
        import jax, jax.dlpack, torch
        def f(x):
            if jax.__version_info__ >= (0, 7):
                return torch.from_dlpack(x)
            return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
        """
    )
    analysis = capsules(ctx)
    gates = Gates(ctx, analysis.qualname, frozenset({"jax.dlpack.to_dlpack"}))
    (producer,) = analysis.producers
    assert gates.side(producer.call) == OLD


def test_a_try_that_only_logs_and_reraises_is_not_a_gate():
    source = textwrap.dedent(
        """
        import jax.dlpack, logging, torch
        def export(x):
            try:
                return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
            except Exception:
                logging.exception("export failed")
                raise
        def export_or_fallback(x):
            try:
                return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
            except Exception:
                return torch.from_dlpack(x)
        """
    ).encode()
    result = process_source(source, "a.py", Settings(rules=(RemovedDlpackApi(),)))
    assert [f.line for f in result.findings] == [5]


# Right values on every JAX the fix may run on --------------------------------------------

# The interpreters of other JAX versions to run the migrated code under, e.g.
# CODEMOD_JAX_PYTHONS=/tmp/jax07/bin/python:/tmp/jax062/bin/python (each with jax and torch).
OTHER_PYTHONS = [p for p in os.environ.get("CODEMOD_JAX_PYTHONS", "").split(os.pathsep) if p]

TORCH_TO_JAX = textwrap.dedent(
    """\
    import jax.dlpack
    import jax.numpy as jnp
    import numpy as np
    import torch
    import torch.utils.dlpack


    def t2j(t):
        capsule = torch.utils.dlpack.to_dlpack(t)
        return jax.dlpack.from_dlpack(capsule)


    def t2j_direct(t):
        return jnp.from_dlpack(torch.utils.dlpack.to_dlpack(t))


    def t2j_made_contiguous(t):
        return jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t.contiguous()))


    def t2j_detached(t):
        return jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t.detach()))


    def t2j_named_for_it(t):
        a_dlpack = torch.utils.dlpack.to_dlpack(t.contiguous())
        return jax.dlpack.from_dlpack(a_dlpack)


    def t2j_each(tensors):
        packs = [torch.utils.dlpack.to_dlpack(u) for u in tensors]
        return [jax.dlpack.from_dlpack(p) for p in packs]
    """
)
DRIVER = textwrap.dedent(
    """
    import jax
    base = torch.arange(12.0).reshape(3, 4)
    for make in (lambda: base, lambda: base.T, lambda: base[:, ::2], lambda: base.clone().requires_grad_()):
        t = make()
        for convert in (t2j, t2j_direct, t2j_made_contiguous, t2j_detached, t2j_named_for_it,
                        lambda t: t2j_each([t, t])[1]):
            got = np.asarray(convert(t))
            assert np.array_equal(got, t.detach().numpy()), (jax.__version__, convert.__name__, got)
    contiguous = torch.arange(8.0)
    assert t2j(contiguous).unsafe_buffer_pointer() == contiguous.data_ptr()  # still zero-copy
    print("ok", jax.__version__)
    """
)


def _migrated_torch_to_jax() -> str:
    result = process_source(TORCH_TO_JAX.encode(), "t2j.py", Settings(rules=(RemovedDlpackApi(),)))
    assert result.error is None and result.changed
    fixed = result.fixed.decode()
    assert "t.detach().contiguous()" in fixed and "to_dlpack" not in fixed
    # A tensor that already ends in one of the two calls gets only the other.
    assert "t.contiguous().detach())" in fixed and fixed.count("t.detach().contiguous()") == 3
    return fixed


@pytest.mark.parametrize("python", [sys.executable, *OTHER_PYTHONS])
def test_migrated_torch_to_jax_gives_the_right_values(python, tmp_path):
    """Transposed and strided tensors come back right, contiguous ones without a copy.

    On JAX 0.6.1-0.7.1 `jax.dlpack.from_dlpack(t.detach())` returns a transposed tensor's
    values in memory order; run with CODEMOD_JAX_PYTHONS naming such an interpreter to
    check the fix there (the suite's own interpreter runs the newest JAX).
    """
    if python != sys.executable and not Path(python).exists():
        pytest.skip(f"{python} does not exist")
    script = tmp_path / "driver.py"
    script.write_text(_migrated_torch_to_jax() + DRIVER)
    done = subprocess.run([python, str(script)], capture_output=True, text=True, check=False, timeout=600,
                          env=dict(os.environ, JAX_PLATFORMS="cpu"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ok")


def test_a_report_below_a_fix_that_moves_lines_is_reported_once_at_its_line():
    # The import the fix drops moves every later line up by one: a message that cited the
    # capsule's line came back from the re-check as a second finding, citing a wrong line.
    source = textwrap.dedent(
        """\
        import jax.dlpack
        import torch.utils.dlpack
        from jax.dlpack import to_dlpack


        def export(x):
            return torch.utils.dlpack.from_dlpack(to_dlpack(x))


        def maybe_to_jax(x, to_jax):
            x = torch.utils.dlpack.to_dlpack(x)
            if to_jax:
                x = jax.dlpack.from_dlpack(x)
            return x
        """
    ).encode()
    result = process_source(source, "a.py", Settings(rules=(RemovedDlpackApi(),)))
    left = [(f.line, f.message) for f in result.findings if not f.applied]
    assert [line for line, _ in left] == [13], result.findings
    assert "capsule of `x` that is also returned" in left[0][1]
    assert not any(f.resolved_by for f in result.findings)


def test_a_rebinding_overwrites_the_capsule_only_on_every_path():
    ctx = _ctx(
        """
        import jax.dlpack, torch.utils.dlpack
        def f(x, c):
            if c:
                x = torch.utils.dlpack.to_dlpack(x)
                x = jax.dlpack.from_dlpack(x)
            return x
        def g(x, c):
            x = torch.utils.dlpack.to_dlpack(x)
            if c:
                x = jax.dlpack.from_dlpack(x)
            return x
        def h(xs):
            for x in xs:
                x = torch.utils.dlpack.to_dlpack(x)
                if x is None:
                    continue
                x = jax.dlpack.from_dlpack(x)
            return x
        def k(xs):
            for x in xs:
                x = torch.utils.dlpack.to_dlpack(x)
                x = jax.dlpack.from_dlpack(x)
            return x
        """
    )
    analysis = capsules(ctx)
    uses = {p.call.lineno: sorted((u.node.lineno, u.escape is None) for u in analysis.flow(p).uses)
            for p in analysis.producers}
    assert uses[5] == [(6, True)]  # f: the return after the branch sees x rebound
    assert (12, False) in uses[9]  # g: the branch may be skipped
    assert (19, False) in uses[15]  # h: `continue` skips the rebinding
    assert uses[22] == [(23, True)]  # k: the next turn's `for` rebinds x first


# Values of unknown origin fed to JAX's consumers -------------------------------------------

CASES_DIR = Path(__file__).parent / "snapshots" / "removed_dlpack_api"


def _jax005(source: bytes, **options):
    return process_source(source, "a.py", Settings(rules=(RemovedDlpackApi(options),)))


# The report on values of unknown origin is opt-in (issue 54, decision 2).
REPORT_UNKNOWN = {UNKNOWN_ORIGIN_OPTION: True}


def test_values_of_unknown_origin_are_silent_by_default_and_reported_on_request():
    source = (CASES_DIR / "noop_values_of_unknown_origin.py").read_bytes()
    assert _jax005(source).findings == []
    assert _jax005(source, **{UNKNOWN_ORIGIN_OPTION: "true"}).findings == []  # a TOML boolean, not text
    assert len(_jax005(source, **REPORT_UNKNOWN).findings) == 8


def test_cupy_to_dlpack_of_an_unknown_value_is_fixed_unless_unknown_values_are_reported():
    """`from_dlpack(a.toDlpack())`: CuPy's method shows `a` is an array (decision 1). Where the
    unknown-origin report is on, the fix is withheld: the call it leaves would be reported."""
    source = b"import jax.dlpack\n\ndef f(a):\n    return jax.dlpack.from_dlpack(a.toDlpack())\n"
    result = _jax005(source)
    assert [(f.fix, f.applied) for f in result.findings] == [(FixSafety.SAFE, True)]
    assert b"jax.dlpack.from_dlpack(a)\n" in result.fixed
    assert _jax005(result.fixed).findings == []
    withheld = _jax005(source, **REPORT_UNKNOWN).findings
    assert [f.fix for f in withheld] == [FixSafety.NONE]
    assert "annotate its type (`a: cupy.ndarray`)" in withheld[0].message


def test_every_value_of_unknown_origin_is_reported_with_what_to_do():
    source = (CASES_DIR / "noop_values_of_unknown_origin.py").read_bytes()
    consumers = sorted(
        (node.lineno, node.col_offset + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("from_dlpack")
    )
    findings = _jax005(source, **REPORT_UNKNOWN).findings
    assert sorted((f.line, f.column) for f in findings) == consumers
    for finding in findings:
        assert finding.fix is FixSafety.NONE and not finding.applied
        assert finding.message.startswith("cannot tell whether `")
        assert "since JAX 0.7.2 (a capsule raises TypeError)" in finding.message
        assert "pass the tensor or array itself" in finding.message
    by_line = {f.line: f.message for f in findings}
    assert "(the parameter `x` of `torch_to_jax`)" in by_line[11]
    assert "(an element of the parameter `*tensors` of `tree_t2j`)" in by_line[15]
    assert "(an item of the parameter `batch` of `batch_to_jax`)" in by_line[19]
    assert "(the attribute `handle`)" in by_line[27]
    assert "(what `queue.get()` returns)" in by_line[31]
    assert "`buffer` (what `worker.fetch()` returns)" in by_line[40]


def test_unknown_values_are_silent_where_capsules_still_work_or_behind_a_gate():
    source = textwrap.dedent(
        """\
        import jax, jax.dlpack

        def torch_to_jax(x):
            return jax.dlpack.from_dlpack(x)

        def gated(x):
            if jax.__version_info__ < (0, 7, 2):
                return jax.dlpack.from_dlpack(x)
            return jax.dlpack.from_dlpack(x.contiguous())
        """
    ).encode()
    assert [f.line for f in _jax005(source, **REPORT_UNKNOWN).findings] == [4]
    # JAX 0.7.0 still takes a capsule (deprecated): nothing is broken there yet.
    assert _jax005(source, **{"target-jax-version": "0.7.0", **REPORT_UNKNOWN}).findings == []


@pytest.mark.parametrize("body, evidence", [
    ("def f(x: torch.Tensor):\n    return jax.dlpack.from_dlpack(x)", "annotated"),
    ("def f(*xs: 'torch.Tensor'):\n    return [jax.dlpack.from_dlpack(x) for x in xs]", "annotated"),
    ("def f(x: Float[torch.Tensor, 'b']):\n    return jax.dlpack.from_dlpack(x)", "annotated"),
    ("def f(x):\n    return jax.dlpack.from_dlpack(x.contiguous())", ".contiguous()"),
    ("def f(x):\n    y = jax.dlpack.from_dlpack(x)\n    return y, x.shape", "x.shape"),
    ("def f(x):\n    if x.ndim == 0:\n        x = x[None]\n    return jax.dlpack.from_dlpack(x)", "x.ndim"),
    ("def f(x):\n    x = x * 2\n    return jax.dlpack.from_dlpack(x)", "computed"),
    ("def f(x):\n    if hasattr(x, '__dlpack__'):\n        return jax.dlpack.from_dlpack(x)", "hasattr"),
    ("def f(x):\n    if not torch.is_tensor(x):\n        raise TypeError\n    return jax.dlpack.from_dlpack(x)",
     "is_tensor"),
    ("def f():\n    return jax.dlpack.from_dlpack(torch.ones(2))", "torch.ones"),
    # what JAX005's own fix leaves: the name still says capsule, the binding says tensor
    ("def f(t):\n    a_dlpack = t.contiguous().detach()\n    return jax.dlpack.from_dlpack(a_dlpack)", ".detach()"),
    ("def f(ts):\n    packs = [t.detach() for t in ts]\n    return [jax.dlpack.from_dlpack(p) for p in packs]",
     "each element"),
    ("def f(a, b):\n    for p in (a.contiguous(), b.contiguous()):\n        jax.dlpack.from_dlpack(p)", "each element"),
    # pydlpack (nnx-lightning's try_pydlpack.py): the name says dlpack, the object has __dlpack__
    ("from dlpack import asdlpack\ndef f(t):\n    return jax.dlpack.from_dlpack(asdlpack(t))", "asdlpack"),
])
def test_a_value_shown_to_be_an_array_is_not_reported(body, evidence):
    source = f"import jax, jax.dlpack, torch\nfrom jaxtyping import Float\n{body}\n"
    ctx = FileContext("a.py", source, ast.parse(source))
    analysis = capsules(ctx)
    (consumer, _), = analysis.consumers
    assert evidence in (analysis.array_evidence(consumer.args[0]) or "")
    assert _jax005(source.encode()).findings == []


@pytest.mark.parametrize("body", [
    # a dict is indexable and has attributes, and its items may be capsules
    "def f(batch):\n    n = len(batch.keys())\n    return jax.dlpack.from_dlpack(batch['x']), n",
    # the attribute is read from the value before the rebinding, not the value consumed
    "def f(x):\n    print(x.shape)\n    x = load(x)\n    return jax.dlpack.from_dlpack(x)",
    # the guard is about another value
    "def f(x, y):\n    if torch.is_tensor(y):\n        return jax.dlpack.from_dlpack(x)",
    # a list of tensors that something else may add to
    "def f(ts, get):\n    packs = [t.detach() for t in ts]\n    packs.append(get())\n"
    "    return [jax.dlpack.from_dlpack(p) for p in packs]",
    "def f(ts, get):\n    packs = [t.detach() for t in ts]\n    packs[0] = get()\n"
    "    return [jax.dlpack.from_dlpack(p) for p in packs]",
    "def f(ts, more):\n    packs = [t.detach() for t in ts]\n    packs += more\n"
    "    return [jax.dlpack.from_dlpack(p) for p in packs]",
])
def test_evidence_about_another_value_does_not_count(body):
    source = f"import jax, jax.dlpack, torch\n{body}\n".encode()
    findings = _jax005(source, **REPORT_UNKNOWN).findings
    assert len(findings) == 1 and findings[0].message.startswith("cannot tell whether"), findings


ALIASES = textwrap.dedent(
    """\
    import jax
    import jax.dlpack
    import torch.utils.dlpack
    from jax import dlpack as D


    def through_two_names(x):
        export = D.to_dlpack
        g = export
        return torch.utils.dlpack.from_dlpack(g(x))


    def through_getattr(x):
        return torch.utils.dlpack.from_dlpack(getattr(jax.dlpack, "to_dlpack")(x))


    def consumer_alias(t):
        to_jax = jax.dlpack.from_dlpack
        f = to_jax
        return f(torch.utils.dlpack.to_dlpack(t))


    def unrelated(a):
        b = a.shape
        return len(b)
    """
)


def test_only_calls_that_may_be_dlpack_functions_are_resolved_and_none_is_missed():
    # Resolving every call of a large module cost most of JAX005's time; the calls it now skips
    # are those whose callee no DLPack-mentioning binding can reach, through any chain of names.
    ctx = _ctx(ALIASES)
    analysis = capsules(ctx)
    names = analysis.index._dlpack_names
    assert {"export", "g", "to_jax", "f", "D"} <= names
    assert not {"b", "a", "len"} & names
    assert {ast.unparse(c.func) for c in analysis.index.candidate_calls} >= {"g", "f", "getattr(jax.dlpack, 'to_dlpack')"}
    assert "len" not in {ast.unparse(c.func) for c in analysis.index.candidate_calls}
    findings = _jax005(ALIASES.encode()).findings
    assert sorted(f.line for f in findings) == [8, 9, 10, 14, 20]


def test_the_prefilter_needs_jax_in_the_file():
    rule = RemovedDlpackApi()
    assert not rule.prefilter(b"import torch.utils.dlpack\nc = torch.utils.dlpack.to_dlpack(t)\n")
    assert rule.prefilter(b"import jax.numpy as jnp\ny = jnp.from_dlpack(c)\n")
    assert rule.prefilter(b"import jax\nc = jax.dlpack.to_dlpack(x)\n")


def test_what_the_unknown_origin_report_says_breaks_does_break():
    # The report is only worth its noise if a capsule there really fails, and a tensor works:
    # run the reported functions of the case with both (on the installed JAX).
    import jax
    import torch
    import torch.utils.dlpack
    from jax_codemod.analysis import jax_versions

    if not jax_versions.has("dlpack.from_dlpack_capsule.removed", jax_versions.parse(jax.__version__)):
        pytest.skip(f"jax {jax.__version__} still takes a capsule")
    namespace: dict = {}
    exec(compile((CASES_DIR / "noop_values_of_unknown_origin.py").read_text(), "case", "exec"), namespace)  # noqa: S102
    t = torch.arange(6.0).reshape(2, 3)
    assert namespace["torch_to_jax"](t).tolist() == t.tolist()
    assert [a.tolist() for a in namespace["tree_t2j"](t[0], t[1])] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert namespace["batch_to_jax"]({"obs": t, "reward": t[0]})["reward"].tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match="__dlpack__"):
        namespace["torch_to_jax"](torch.utils.dlpack.to_dlpack(t))
    with pytest.raises(TypeError, match="__dlpack__"):
        namespace["tree_t2j"](torch.utils.dlpack.to_dlpack(t))
    with pytest.raises(TypeError, match="__dlpack__"):
        namespace["SharedBuffer"](torch.utils.dlpack.to_dlpack(t)).as_jax()


def test_a_tensorflow_capsule_into_jax_is_reported_once_per_consumer_and_never_rewritten():
    path = CASES_DIR / "report_tensorflow_capsule.py"
    source = path.read_bytes()
    result = _jax005(source, **{"target-jax-version": "0.7.2"})
    consumers = [n for n, line in enumerate(source.decode().splitlines(), 1) if "from_dlpack(" in line]
    assert sorted(f.line for f in result.findings) == consumers
    assert all(f.fix.value == "none" and "TensorFlow capsule" in f.message for f in result.findings)
    assert not result.changed
