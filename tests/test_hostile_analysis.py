"""Hostile input to the parsers and the analysis (issue 30, items 1, 3 and 10): no input may
crash the process, run the analysis without bound, or hide a finding behind a spelling Python
reads as the same name.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax_codemod.engine import syntax
from jax_codemod.engine.pipeline import (
    MAX_ANALYSIS_MIB,
    MAX_ANALYSIS_SECONDS,
    Settings,
    check_source,
    process_source,
)
from jax_codemod.engine.syntax import NESTING_BRACKET, NESTING_LIMIT, NestingTooDeep, check_nesting, parse_cst
from jax_codemod.rule import Rule
from jax_codemod.rules import RULES
from test_cli import invoke

ALL = Settings(rules=tuple(rule() for rule in RULES))
EXPORT = "import jax\nimport torch\n\nt = torch.from_dlpack(jax.dlpack.to_dlpack(x))\n"

# Shapes that overflowed libcst's native stack (SIGSEGV) on the main thread, each at a size
# the issue measured or past the point where it crashed.
DEEP = {
    "parentheses": "x = " + "(" * 3000 + "1" + ")" * 3000 + "\n",
    "and-chain": "x = " + " and ".join(f"a{i}" for i in range(10_000)) + "\n",
    "plus-chain": "x = " + " + ".join(["a"] * 10_000) + "\n",
    "attribute-chain": "x = a" + ".b" * 10_000 + "\n",
    "calls": "x = f" + "()" * 10_000 + "\n",
    "unary": "x = " + "-" * 10_000 + "a\n",
    "lambdas": "x = " + "lambda: " * 10_000 + "c\n",
    "elif-chain": "if a:\n    pass\n" + "elif a:\n    pass\n" * 10_000,
    "f-string": 'x = f"{' + "(" * 3000 + "1" + ")" * 3000 + '}"\n',
}


def codemod(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The CLI in a child process: a crash there is an exit status here, not a dead test run."""
    return subprocess.run(
        [sys.executable, "-m", "jax_codemod.cli", *args], check=False, cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("shape", ["parentheses", "and-chain"])
def test_deep_nesting_is_reported_and_the_run_goes_on(tmp_path, shape):
    """The issue's files: in-process runs died with exit 139 and printed nothing."""
    (tmp_path / "deep.py").write_text(EXPORT + DEEP[shape])
    (tmp_path / "other.py").write_text(EXPORT)
    done = codemod("run", "--check", "--no-cache", ".", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "nesting too deep (limit 200 brackets" in done.stderr
    assert "other.py:4:" in done.stdout  # the other file is still checked
    if shape == "parentheses":  # not even ast parses it: not checked, with the line
        assert "deep.py:5: not checked: nesting too deep" in done.stderr
    else:  # ast reads the flat chain, so the findings stand; only the fix is refused
        assert "deep.py:4:" in done.stdout
        assert "deep.py: fix not applied: nesting too deep" in done.stderr


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_no_deep_shape_reaches_the_native_parser(shape):
    with pytest.raises(NestingTooDeep) as raised:
        check_nesting(DEEP[shape], "deep.py")
    assert raised.value.filename == "deep.py" and raised.value.lineno >= 1


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_deep_shapes_cost_one_file(shape):
    """Every shape through the whole engine, in this process: an error for the file, never an
    exception, a crash or a RecursionError traceback."""
    result = process_source((EXPORT + DEEP[shape]).encode(), "deep.py", ALL)
    if result.error is not None:
        assert "nesting too deep" in result.error.message or "fix not applied" in result.error.message
    assert "internal error" not in (result.error.message if result.error else "")


def test_a_chain_under_the_limit_that_libcst_cannot_visit_costs_only_its_fix():
    """Found by the fuzz test below: 1,000 ``elif`` pass the check and parse, but libcst's
    visitors (Python) stop at the recursion limit, and formatting the KeyError it then raised
    (a node in its message) raised RecursionError out of the engine."""
    source = EXPORT + "if c:\n    pass\n" + "elif c:\n    pass\n" * 1000
    result = process_source(source.encode(), "elif.py", ALL)
    assert result.error is not None and result.error.message.startswith("fix not applied")
    assert [finding.code for finding in result.findings] == ["JAX005"]


def test_the_limits_are_what_the_message_says():
    fits = "x = " + "[" * (NESTING_LIMIT // NESTING_BRACKET - 10) + "1" + "]" * (NESTING_LIMIT // NESTING_BRACKET - 10)
    check_nesting(fits, "ok.py")
    parse_cst(fits)  # and libcst parses what the check lets through
    chain = "x = " + " and ".join(["a"] * (NESTING_LIMIT - 10)) + "\n"
    check_nesting(chain, "ok.py")
    parse_cst(chain)
    with pytest.raises(NestingTooDeep):
        check_nesting("x = " + " and ".join(["a"] * (NESTING_LIMIT + 2)) + "\n", "deep.py")


def test_flat_code_of_any_length_passes():
    """A chain ends at a comma, a semicolon, an ``=`` and a new logical line: long data tables
    and long modules are not nesting."""
    table = "x = [\n" + "".join(f"    ({i} + 1, 'a' 'b', f(x).y),\n" for i in range(20_000)) + "]\n"
    check_nesting(table, "table.py")
    module = "".join(f"def f{i}(a, b):\n    if a:\n        return a.b.c + b\n    elif b:\n        pass\n"
                     for i in range(5_000))
    check_nesting(module, "module.py")


def test_the_native_parser_runs_on_a_large_stack(monkeypatch):
    """Defence in depth: with the check switched off, a shape that crashed on the main thread
    parses on the parser's own thread."""
    monkeypatch.setattr(syntax, "check_nesting", lambda *args, **kwargs: None)
    parse_cst("x = " + "(" * 1600 + "1" + ")" * 1600 + "\n")


# Fuzzing: random compositions of the constructs libcst nests, within a strict budget of examples
# and sizes, through the check, the native parser and the whole engine.

_WRAPS = [
    lambda e, n: "(" * n + e + ")" * n,
    lambda e, n: "[" * n + e + "]" * n,
    lambda e, n: e + " and x" * n,
    lambda e, n: e + " + 1" * n,
    lambda e, n: e + ".a" * n,
    lambda e, n: e + "()" * n,
    lambda e, n: "not " * n + e,
    lambda e, n: "-" * n + e,
    lambda e, n: "lambda: " * n + e,
    lambda e, n: e + ' "s"' * n,
    lambda e, n: "f'{" * min(n, 1) + e + "}'" * min(n, 1),
]


@st.composite
def nested_sources(draw) -> str:
    expression = "jax.dlpack.to_dlpack(x)"
    for _ in range(draw(st.integers(1, 4))):
        wrap = draw(st.sampled_from(_WRAPS))
        expression = wrap(expression, draw(st.integers(0, 3000)))
    body = f"y = {expression}\n"
    if draw(st.booleans()):
        body = "if c:\n    pass\n" + "elif c:\n    pass\n" * draw(st.integers(0, 3000)) + body
    if draw(st.booleans()):  # one long line: many statements, or one huge flat literal
        width = draw(st.integers(0, 20_000))
        body = "; ".join([body.rstrip("\n")] + ["z = jax.dlpack.to_dlpack(x)"] * (width // 30)) + "\n"
        body += "w = [" + "1, " * width + "]\n"
    return EXPORT + body


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(nested_sources())
def test_fuzz_deep_nesting_never_crashes(source):
    try:
        check_nesting(source, "fuzz.py")
    except NestingTooDeep:
        pass
    else:
        try:
            parse_cst(source)
        except Exception as error:  # noqa: BLE001 -- a parse error is fine, a crash is not
            assert "ParserSyntaxError" in type(error).__name__ or isinstance(error, RecursionError)
    result = process_source(source.encode(), "fuzz.py", ALL)
    assert result.error is None or "internal error" not in result.error.message


# The analysis budget (item 3) ------------------------------------------------------------------


class _Hog(Rule):
    """A rule whose check never ends, or keeps allocating: what a quadratic shape does to a
    real rule, without depending on how fast this machine is."""

    CODE = "JAX999"
    NAME = "hog"
    TRIGGERS = (b"jax",)

    def __init__(self, memory: bool = False) -> None:
        super().__init__()
        self.memory = memory

    def check(self, ctx):
        held = []
        while True:
            if self.memory:
                held.append(bytearray(16 * 2**20))  # written, so resident


def test_analysis_past_its_cpu_budget_is_reported_not_checked():
    result = process_source(EXPORT.encode(), "slow.py", Settings(rules=(_Hog(),), analysis_seconds=1))
    assert result.error is not None
    assert result.error.message.startswith("not checked: analysis budget exceeded (over 1 s of CPU")
    assert result.findings == [] and result.fixed is None


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="memory is sampled where /proc tells it")
def test_analysis_past_its_memory_budget_is_reported_not_checked():
    settings = Settings(rules=(_Hog(memory=True),), analysis_seconds=0, analysis_mib=64)
    result = process_source(EXPORT.encode(), "big.py", settings)
    assert result.error is not None
    assert result.error.message.startswith("not checked: analysis budget exceeded (over 64 MiB of memory")


def test_the_budget_leaves_no_alarm_behind():
    import signal

    process_source(EXPORT.encode(), "ok.py", ALL)
    assert signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGVTALRM) in (signal.SIG_DFL, None)


def test_a_file_past_the_budget_fails_check_and_the_run_goes_on(tmp_path, monkeypatch):
    """--check must not call it clean: exit 1, the error in JSON, the other file checked."""
    from jax_codemod.engine import resolve

    original = resolve.settings

    def with_hog(*args, **kwargs):
        settings = original(*args, **kwargs)
        return Settings(rules=(*settings.rules, _Hog()), unsafe_fixes=settings.unsafe_fixes,
                        analysis_seconds=settings.analysis_seconds, analysis_mib=settings.analysis_mib)

    monkeypatch.setattr(resolve, "settings", with_hog)
    (tmp_path / "a.py").write_text(EXPORT)
    code, out, _err = invoke(["run", "--check", "--no-cache", "--format", "json", "--analysis-budget-seconds", "1",
                             tmp_path / "a.py"])
    assert code == 1
    errors = json.loads(out)["errors"]
    assert [e["message"][:44] for e in errors] == ["not checked: analysis budget exceeded (over "]


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("", (MAX_ANALYSIS_SECONDS, MAX_ANALYSIS_MIB)),
        ("analysis-budget-seconds = 5\nanalysis-budget-mib = 100\n", (5, 100)),
        # The tree's own pyproject.toml may lower the budget, never raise it.
        ("analysis-budget-seconds = 100000\nanalysis-budget-mib = 1000000\n", (MAX_ANALYSIS_SECONDS, MAX_ANALYSIS_MIB)),
    ],
)
def test_the_budget_from_the_config(tmp_path, table, expected):
    from jax_codemod.engine.resolve import Options, resolve

    (tmp_path / "pyproject.toml").write_text("[tool.codemod]\n" + table)
    [group] = resolve([str(tmp_path)], Options())
    assert (group.settings.analysis_seconds, group.settings.analysis_mib) == expected
    [group] = resolve([str(tmp_path)], Options(analysis_seconds=600, analysis_mib=0))
    assert (group.settings.analysis_seconds, group.settings.analysis_mib) == (600, 0)  # the command line rules


@pytest.mark.parametrize("value", ["0", "-1", "true", "'10'", "1.5"])
def test_a_bad_budget_in_the_config_is_a_config_error(tmp_path, value):
    (tmp_path / "pyproject.toml").write_text(f"[tool.codemod]\nanalysis-budget-seconds = {value}\n")
    (tmp_path / "a.py").write_text(EXPORT)
    code, _out, err = invoke(["run", "--check", tmp_path / "a.py"])
    assert code == 2 and "analysis-budget-seconds" in err and "Traceback" not in err


# The analysis near-linear on the shapes: counted work, not time (no timed tests) --------

_HEADER = "import jax\nimport jax.numpy as jnp\nimport torch\nx = jnp.ones(3)\n"
SHAPES = {
    # 2,000 branches that each rebind the array: the 105 s for 193 KB.
    "branches": lambda n: _HEADER + "".join(f"if c{i}:\n    x = jax.dlpack.to_dlpack(x)\n" for i in range(n))
    + "y = torch.from_dlpack(x)\n",
    # torch.from_dlpack / to_dlpack repeated on one name: the 95 s for 125 KB.
    "repeated": lambda n: _HEADER + "x = jax.dlpack.to_dlpack(x)\nx = torch.from_dlpack(x)\n" * n,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_analysis_does_work_linear_in_the_reads(monkeypatch, shape):
    """Each read's reaching definitions are computed once (main: once per definition that asked,
    10,201 and 20,300 times for 100 reads), and the definitions one overwrites are looked for
    among those in its blocks (main: 34 million ``_overwrites`` for 100 branches)."""
    from jax_codemod.analysis import capsule_reaching, scopes

    counts = {"reaching_in": 0, "_overwrites": 0}

    def counted(name, original):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return original(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(scopes.Scopes, "reaching_in", counted("reaching_in", scopes.Scopes.reaching_in))
    monkeypatch.setattr(capsule_reaching.Reaching, "_overwrites",
                        counted("_overwrites", capsule_reaching.Reaching._overwrites))
    n = 100
    _ctx, findings = check_source(SHAPES[shape](n).encode(), "shape.py", ALL.rules)
    assert len([f for f in findings if f.code == "JAX005"]) == n
    assert counts["reaching_in"] <= 3 * n
    assert counts["_overwrites"] <= n * n


# Prefilters see what Python sees (item 10) ------------------------------------------------------


def _fullwidth(word: str) -> str:
    """``jax`` -> ``ｊａｘ``: the same identifier to Python (NFKC, PEP 3131), other bytes."""
    return "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in word)


JAX, DLPACK, TO_DLPACK = _fullwidth("jax"), _fullwidth("dlpack"), _fullwidth("to_dlpack")
HIDDEN = (f"import {JAX}\nimport {JAX}.numpy as jnp\nx = jnp.ones(3)\n"
          f"y = {JAX}.{DLPACK}.{TO_DLPACK}(x)\nprint(y)\n").encode()


def _utf7(word: str) -> str:
    import base64

    return "+" + base64.b64encode(word.encode("utf-16-be")).decode().rstrip("=") + "-"


# Every byte ASCII, yet Python reads `jax.dlpack.to_dlpack` (PEP 263 declares utf-7).
UTF7 = (f"# coding: utf-7\nimport {_utf7('jax')}\nimport torch\n"
        f"t = torch.from_{_utf7('dlpack')}({_utf7('jax')}.{_utf7('dlpack')}.to_{_utf7('dlpack')}(x))\n").encode()


@pytest.mark.parametrize("source", [HIDDEN, UTF7], ids=["nfkc", "utf-7"])
def test_names_python_normalises_are_found_and_fixed(tmp_path, source):
    """On main: no finding, exit 0, and the code raises on JAX 0.7."""
    path = tmp_path / "hidden.py"
    path.write_bytes(source)
    code, out, err = invoke(["run", "--check", "--no-cache", path])
    assert code == 1, out + err
    assert "JAX005" in out
    code, out, err = invoke(["run", "--no-cache", path])
    assert code == 0, out + err
    fixed = path.read_bytes()
    assert b"to_dlpack" not in fixed.decode("utf-7" if source is UTF7 else "utf-8").encode()
    if source is HIDDEN:  # only the call is replaced; the user's spelling stays everywhere else
        assert fixed == source.replace(f"{JAX}.{DLPACK}.{TO_DLPACK}(x)".encode(), b"x.__dlpack__()")
    code, _out, _err = invoke(["run", "--check", "--no-cache", path])
    assert code == 0  # a second run is a no-op


def test_ascii_files_keep_the_byte_fast_path(monkeypatch):
    from jax_codemod.engine import pipeline

    def never(source):
        raise AssertionError("an ASCII file was decoded for its prefilter")

    monkeypatch.setattr(pipeline, "_as_python_reads", never)
    assert pipeline.active_rules(b"import jax\nx = jax.dlpack.to_dlpack(y)\n", ALL.rules)
    assert pipeline.active_rules(b"x = 1\n", ALL.rules) == ()


def test_non_ascii_text_alone_passes_no_rule():
    from jax_codemod.engine.pipeline import active_rules

    assert active_rules("# 数値計算\nx = 'ｘ'\n".encode(), ALL.rules) == ()
    assert active_rules(b"\xff\xfe not utf-8\n", ALL.rules) == ()  # undecodable: as before, the bytes decide


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFFFF, blacklist_categories=("Cs",)),
               max_size=200))
def test_fuzz_prefilter_of_any_text_is_a_superset_of_the_bytes(text):
    from jax_codemod.engine.pipeline import active_rules, prefilter_for

    source = ("import jax\n" + text).encode("utf-8")
    assert set(map(id, prefilter_for(ALL.rules).active(source))) <= set(map(id, active_rules(source, ALL.rules)))
