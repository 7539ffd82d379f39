"""Higher-order calls: a call that runs one of its arguments with others, at once or on another
thread (``pool.submit(torch.from_dlpack, x)`` runs ``torch.from_dlpack(x)``;
``asyncio.to_thread``, ``loop.run_in_executor``), from the API table's ``calls`` fact, so that a
rule judging calls of a function judges these too, with no method per spelling (issue 54).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jax_codemod.analysis import api

# Qualified name -> (the position of the function it runs, of that function's first argument).
_FUNCTIONS: dict[str, tuple[int, int]] = api.table("calls")
# Methods of library classes (`concurrent.futures.Executor.submit`), by name: the file rarely
# shows the receiver's class (`with ThreadPoolExecutor() as pool`, `loop = get_running_loop()`),
# and the function it is handed (a DLPack consumer) is what a rule then asks about.
_METHODS: dict[str, tuple[int, int]] = {
    name.rsplit(".", 1)[1]: spec for name, spec in _FUNCTIONS.items() if name.split(".")[-2][:1].isupper()
}
# The last components of every such name: a call spelled with none of them runs nothing.
NAMES = frozenset(name.rsplit(".", 1)[1] for name in _FUNCTIONS)


@dataclass(frozen=True)
class Run:
    """What a higher-order call runs: ``function`` with ``args``, by ``by`` (for messages)."""

    function: ast.expr
    args: tuple[ast.expr, ...]
    by: str


def runs(analysis, call: ast.Call) -> Run | None:
    """The call ``call`` makes of one of its arguments (``analysis``: the file's value analysis,
    for its resolver), or None: not a higher-order call of the table, or one whose function or
    arguments are unpacked from a starred argument."""
    func = call.func
    spelled = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if spelled not in NAMES:
        return None
    qualified = analysis.qualname(func)
    spec = _FUNCTIONS.get(qualified) if qualified is not None else None
    if spec is None and qualified is None and isinstance(func, ast.Attribute):
        spec = _METHODS.get(func.attr)
    if spec is None:
        return None
    at, first = spec
    if len(call.args) <= at or any(isinstance(argument, ast.Starred) for argument in call.args[:first]):
        return None
    return Run(call.args[at], tuple(call.args[first:]), qualified or ast.unparse(func))
