"""Where a finding is: the analysis produces spans, the rule contract carries them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """A source range in libcst's coordinates: 1-based lines, 0-based character columns."""

    start_line: int
    start_column: int
    end_line: int
    end_column: int
