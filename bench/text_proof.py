"""How many files JAX001's prefilter passes could be called clean from their text alone.

    python bench/text_proof.py /tmp/corpus5
    python bench/text_proof.py /tmp/corpus5 --ignore-bare-consumers   # a looser upper bound

An estimate, not an analysis: it answers whether a first stage that never parses (a "proof of
absence" from the text, per function) could take most files off JAX001's partial reading. A
file counts as decidable when every access text in code (``TEXT.possible_either``) is at module or
class level, or directly in a ``def`` (found by indentation) that no lambda before the access
shares, that is no dunder, has no decorator spelling a transform, and whose name the file spells
nowhere else; and when no consumer is named bare (`asarray(` after `from numpy import asarray`,
`bytes(`). Each rule is looser than a sound proof would be (continuation lines at a low indent,
aliases of decorators, a lambda's extent are not looked at), so the count is an upper bound. It
prints the first reason each other file is not decidable.
"""

from __future__ import annotations

import argparse
import bisect
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jax_codemod.analysis.context import in_code, string_interiors
from jax_codemod.rules._access_text import TRANSFORM_BYTES as _TRANSFORM_BYTES
from jax_codemod.rules.traced_concrete_access import TEXT, TracedConcreteAccess

_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
_LAMBDA = re.compile(r"\blambda\b")
_BARE = re.compile(r"(?<![.\w])(?:" + "|".join((*TEXT.consumer_names, *sorted(TEXT.builtin_consumers))) + r")\b")


def _functions(text: str, interiors, starts) -> list[tuple[int, int, int, str, str]]:
    """(start, body start, body end, name, decorator text) of every ``def`` in code."""
    found = []
    for match in _DEF.finditer(text):
        if not in_code(text, match.start(2), interiors, starts):
            continue
        header = text.find(":\n", match.end())
        body = header + 2 if header >= 0 else len(text)
        dedent = re.compile(rf"\n(?=[ \t]{{0,{len(match.group(1))}}}[^ \t\n#])")
        end = dedent.search(text, body)
        while end is not None and not in_code(text, end.end(), interiors, starts):
            end = dedent.search(text, end.end())
        decorators, line = "", match.start()
        while line > 0:
            previous = text.rfind("\n", 0, line - 1) + 1
            stripped = text[previous:line].strip()
            if not (stripped.startswith("@") or (decorators and stripped.startswith("#"))):
                break
            decorators, line = decorators + stripped, previous
        found.append((match.start(), body, end.end() if end else len(text), match.group(2), decorators))
    return found


def undecidable(text: str, ignore_bare: bool) -> str | None:
    """Why the text alone cannot call the file clean, or None when it can (see above)."""
    interiors = string_interiors(text)
    if interiors is None or "\r" in text:
        return "text the string reading is unsure of"
    starts = [first for first, _ in interiors]
    if not ignore_bare and any(in_code(text, m.start(), interiors, starts) for m in _BARE.finditer(text)):
        return "a consumer named bare"
    functions = _functions(text, interiors, starts)
    positions = [function[0] for function in functions]
    for match in TEXT.possible_either.finditer(text):
        at = match.start()
        if not in_code(text, at, interiors, starts):
            continue
        index = bisect.bisect_left(positions, at) - 1
        while index >= 0 and not functions[index][1] <= at < functions[index][2]:
            index -= 1
        if index < 0:
            continue  # module or class level
        _, body, _, name, decorators = functions[index]
        if any(in_code(text, m.start(), interiors, starts) for m in _LAMBDA.finditer(text, body, at)):
            return "a lambda before the access in its function"
        if name.startswith("__"):
            return "the access is in a dunder method"
        if decorators and _TRANSFORM_BYTES.search(decorators.encode()):
            return "the function has a decorator spelling a transform"
        if len(re.findall(rf"\b{re.escape(name)}\b", text)) != 1:
            return "the function is named elsewhere in the file"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--ignore-bare-consumers", action="store_true")
    args = parser.parse_args()
    rule = TracedConcreteAccess()
    reasons: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    passed = 0
    for path in sorted(args.tree.rglob("*.py")):
        source = path.read_bytes()
        if not rule.prefilter(source):
            continue
        passed += 1
        reason = undecidable(source.decode("utf-8", "replace"), args.ignore_bare_consumers) or "decidable"
        reasons[reason] += 1
        sizes[reason] += len(source)
    mib = 1 << 20
    decidable, size = reasons.pop("decidable", 0), sizes.pop("decidable", 0)
    print(
        f"{decidable} of {passed} files JAX001's prefilter passes ({size / mib:.1f} of"
        f" {(size + sum(sizes.values())) / mib:.1f} MiB) are decidable from the text; the others:"
    )
    for reason, count in reasons.most_common():
        print(f"  {count:5d} files {sizes[reason] / mib:5.1f} MiB  {reason}")


if __name__ == "__main__":
    main()
