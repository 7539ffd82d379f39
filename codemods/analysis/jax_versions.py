"""What changed in which JAX release: the one table the version-aware rules read.

Every fact names the JAX release that first behaves that way and where it can be checked:
``jax/...`` paths are files of that release's source (tag ``jax-vX.Y.Z`` of
github.com/jax-ml/jax, the same files the PyPI wheel installs), "CHANGELOG" is
``docs/CHANGELOG.md`` of the same tag. ``tests/test_jax_versions.py`` checks every fact
against the JAX that is installed, so each environment of the CI matrix (JAX 0.4.30, 0.6.2
and the newest release; scripts/jax_matrix.py for the rest) re-verifies the table against
real wheels.

Versions are tuples of ints. A run targets a *range* of releases (``Range``): the
``target-jax-version`` option, one version (``"0.7"``) or a requirement specifier
(``">=0.4.30"``, ``">=0.6,<0.11"``), which the CLI always fills in (from the flag, the config,
the analysed project's own jax requirement, the installed JAX's metadata -- never by importing
it -- or the newest release this table knows). Rules ask the range, not one version: code is
broken when it breaks on any release in the range, and a fix must run on every one of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

Version = tuple[int, ...]

OPTION = "target-jax-version"
# The oldest JAX whose behaviour the rules' fixes are written and tested for.
OLDEST_SUPPORTED: Version = (0, 4, 30)
# The newest release this table was checked against: the jax 0.12.1 wheel (it needs Python
# 3.12+; the newest for Python 3.11 is 0.10.2). Its source is not tagged in the repository
# mirror used here, so its facts are the 0.11.0 tag's, observed unchanged on the 0.12.0.1 and
# 0.12.1 wheels (0.12.1 changes DLPack import only: `from_dlpack` takes a `Format`; export, the
# device types and the tracer's members are as in 0.12.0.1, and the whole suite passes on it).
NEWEST_KNOWN: Version = (0, 12, 1)


@dataclass(frozen=True)
class Change:
    """One behaviour change: from ``since`` on, ``what`` holds."""

    key: str
    since: Version
    what: str
    source: str


CHANGES: tuple[Change, ...] = (
    Change(
        "dl_device.cuda_host",
        (0, 10, 2),
        "__dlpack__(dl_device=(kDLCUDAHost=3, id)) is exported (to the cuda platform)",
        "jax/_src/dlpack.py _DL_DEVICE_TO_PLATFORM; jax/_src/typing.py DLDeviceType",
    ),
    Change(
        "dl_device.rocm_host_tpu_host_oneapi",
        (0, 11, 0),
        "kDLROCMHost=11, kDLOneAPI=14 and kDLTPUHost=20 are exported (rocm, oneapi, tpu platforms)",
        "jax/_src/dlpack.py _DL_DEVICE_TO_PLATFORM; jax/_src/typing.py DLDeviceType "
        "(commits 4192022b5a 'Add dlpack support for OneAPI', 51a20c5f6a 'Add DlPack for host memory on TPU')",
    ),
    Change(
        "dl_device.unsupported_raises_buffererror",
        (0, 5, 1),
        "an unmapped dl_device type raises BufferError; before, the table lookup's KeyError escaped "
        "(to_dlpack caught TypeError instead)",
        "jax/_src/dlpack.py to_dlpack: `except TypeError` (0.4.30-0.5.0), `except KeyError` (0.5.1+)",
    ),
    Change(
        "dlpack.to_dlpack.deprecated",
        (0, 6, 0),
        "jax.dlpack.to_dlpack warns DeprecationWarning",
        "jax/dlpack.py _deprecations['to_dlpack']; CHANGELOG 0.6.0",
    ),
    Change(
        "dlpack.to_dlpack.removed",
        (0, 7, 0),
        "jax.dlpack.to_dlpack raises AttributeError (from jax.dlpack import to_dlpack: ImportError)",
        "jax/dlpack.py _deprecations['to_dlpack'] -> None ('Finalized in JAX v0.7.0'); CHANGELOG 0.7.0",
    ),
    Change(
        "dlpack.from_dlpack_capsule.deprecated",
        (0, 4, 32),
        "jax.dlpack.from_dlpack(capsule) warns DeprecationWarning",
        "jax/_src/dlpack.py from_dlpack 'Deprecated legacy path'",
    ),
    Change(
        "dlpack.from_dlpack_capsule.removed",
        (0, 7, 2),
        "jax.dlpack.from_dlpack(capsule) raises TypeError (needs __dlpack__ and __dlpack_device__)",
        "jax/_src/dlpack.py from_dlpack",
    ),
    Change(
        "errors.JaxRuntimeError",
        (0, 4, 34),
        "jax.errors.JaxRuntimeError exists (an alias of jaxlib's XlaRuntimeError until 0.8.0); "
        "jax.errors never had XlaRuntimeError",
        "jax/errors.py",
    ),
    Change(
        "errors.runtime_error_renamed",
        (0, 8, 0),
        "runtime errors are raised as a class named JaxRuntimeError (before: XlaRuntimeError; "
        "a RuntimeError subclass on every version)",
        "jax/errors.py; commit 92f5dcba89 'Rename XlaRuntimeError to JaxRuntimeError'",
    ),
    Change("api.make_mesh", (0, 4, 32), "jax.make_mesh exists", "jax/__init__.py"),
    Change(
        "api.shard_map",
        (0, 6, 1),
        "jax.shard_map exists (before: jax.experimental.shard_map.shard_map only, deprecated from 0.8.0)",
        "jax/__init__.py; jax/experimental/shard_map.py",
    ),
    Change(
        "api.jit_decorator_factory",
        (0, 8, 1),
        "jax.jit(**options) without a function returns a decorator (`@jax.jit(static_argnums=0)`); "
        "before, it raises TypeError: jit() missing 1 required positional argument: 'fun'",
        "jax/_src/api.py jit overloads",
    ),
)
_BY_KEY = {change.key: change for change in CHANGES}

# DLPack device types (DLDeviceType, dlpack.h) that ``__dlpack__(dl_device=...)`` maps to a
# platform, from each listed version on. A zero or None type is ignored (``if dl_device_type:``).
_EXPORTABLE = (
    ((0, 0), frozenset({1, 2, 10})),  # kDLCPU, kDLCUDA, kDLROCM
    (_BY_KEY["dl_device.cuda_host"].since, frozenset({1, 2, 3, 10})),
    (_BY_KEY["dl_device.rocm_host_tpu_host_oneapi"].since, frozenset({1, 2, 3, 10, 11, 14, 20})),
)


def since(key: str) -> Version:
    return _BY_KEY[key].since


def has(key: str, version: Version) -> bool:
    """Whether ``version`` behaves as the change ``key`` says."""
    return version >= _BY_KEY[key].since


def exportable_device_types(version: Version) -> frozenset[int]:
    """The DLPack device types JAX ``version`` exports to (the keys of _DL_DEVICE_TO_PLATFORM)."""
    found = _EXPORTABLE[0][1]
    for first, types in _EXPORTABLE:
        if version >= first:
            found = types
    return found


def unsupported_device_error(version: Version) -> str:
    """What ``__dlpack__(dl_device=(t, 0))`` raises on ``version`` for a type it does not map."""
    return "BufferError" if has("dl_device.unsupported_raises_buffererror", version) else "KeyError"


# What a fallback around ``__dlpack__(dl_device=...)`` must catch so that the fixed code runs on
# every supported JAX: the unmapped-type error of each release (KeyError before 0.5.1,
# BufferError after), and RuntimeError, which every release raises for a mapped type whose
# platform has no backend in this process (``xla_bridge.get_backend``: "Unknown backend ...",
# e.g. kDLCUDA on a CPU-only install, kDLTPUHost on 0.11 without a TPU).
DL_DEVICE_FALLBACK_ERRORS: tuple[str, ...] = ("BufferError", "KeyError", "RuntimeError")


def unsupported_device_errors(target: Range) -> dict[str, Version]:
    """Each error an unmapped type raises somewhere in ``target`` -> the first release in it that does."""
    found: dict[str, Version] = {}
    for point in target.points([since("dl_device.unsupported_raises_buffererror")]):
        found.setdefault(unsupported_device_error(point), point)
    return found


def exportable_from(target: Range) -> dict[int, Version]:
    """Each device type some release in ``target`` exports to -> the first release in it that does
    (the tables only grow, so a type exported there stays exported in every later one)."""
    found: dict[int, Version] = {}
    for point in target.points([first for first, _types in _EXPORTABLE]):
        for device_type in exportable_device_types(point):
            found.setdefault(device_type, point)
    return found


def dl_device_errors(version: Version) -> tuple[str, ...]:
    """Exception classes an export with an unusable dl_device raises on ``version``."""
    return (unsupported_device_error(version), "RuntimeError")


# Versions ------------------------------------------------------------------------------

_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def parse(text: str) -> Version:
    """``"0.7"`` -> (0, 7, 0); ``"0.4.38.dev2024"`` -> (0, 4, 38). Raises ValueError."""
    match = _VERSION.match(str(text))
    if not match:
        raise ValueError(f"not a JAX version: {text!r} (expected e.g. 0.7 or 0.4.38)")
    parts = [int(part) for part in match.groups() if part is not None]
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts)


def render(version: Version) -> str:
    return ".".join(str(part) for part in version)


@lru_cache(maxsize=1)
def installed() -> Version | None:
    """The installed jax's version from its distribution metadata (jax is never imported)."""
    from importlib import metadata

    try:
        return parse(metadata.version("jax"))
    except (metadata.PackageNotFoundError, ValueError):
        return None


def default_target() -> Version:
    return installed() or NEWEST_KNOWN


def target(options: dict | None) -> Range:
    """The JAX releases a rule's findings and fixes must be right for: its option, else the default."""
    value = (options or {}).get(OPTION)
    if value is None:
        return Range.single(default_target())
    if isinstance(value, Range):
        return value
    if isinstance(value, tuple):
        return Range.single(value)
    return parse_range(value)


# Ranges --------------------------------------------------------------------------------


class Range:
    """The releases from ``low`` up to ``high`` (None: every later release too).

    Every behaviour this table knows changes at one release and stays changed, so a range is
    decided by its ends: ``!=`` takes out one release and keeps those around it, so it narrows
    nothing here. ``low`` is at least OLDEST_SUPPORTED: the rules speak for no older JAX.
    """

    __slots__ = ("high", "high_inclusive", "low")

    def __init__(self, low: Version, high: Version | None = None, high_inclusive: bool = False) -> None:
        self.low = low
        self.high = high
        self.high_inclusive = high_inclusive

    @classmethod
    def single(cls, version: Version) -> Range:
        return cls(version, version, True)

    @property
    def is_single(self) -> bool:
        return self.high_inclusive and self.high == self.low

    @property
    def oldest(self) -> Version:
        return self.low

    def reaches(self, version: Version) -> bool:
        """Whether some release in the range is ``version`` or newer."""
        if self.high is None:
            return True
        return self.high > version or (self.high_inclusive and self.high == version)

    def has_anywhere(self, key: str) -> bool:
        """Whether some release in the range behaves as the change ``key`` says."""
        return self.reaches(_BY_KEY[key].since)

    def has_everywhere(self, key: str) -> bool:
        return self.low >= _BY_KEY[key].since

    def first(self, key: str) -> Version:
        """The first release in the range that behaves as ``key`` says (ask has_anywhere first)."""
        return max(self.low, _BY_KEY[key].since)

    def __contains__(self, version: Version) -> bool:
        return version >= self.low and (self.high is None or version < self.high
                                        or (self.high_inclusive and version == self.high))

    def since(self, key: str) -> Range | None:
        """The part of the range that behaves as the change ``key`` says, or None if none does."""
        if not self.has_anywhere(key):
            return None
        return Range(self.first(key), self.high, self.high_inclusive)

    def releases(self) -> list[Version]:
        """Version numbers in the range, enough to decide what a comparison of version *strings*
        gives on it (such a comparison flips where a part gains a digit, not at a known change):
        its ends, and every 0.M.P with M up to one past the newest known minor and P below 40."""
        candidates = {self.low, *([self.high] if self.high is not None else [])}
        for minor in range(self.low[1], NEWEST_KNOWN[1] + 2):
            candidates.update((0, minor, patch) for patch in range(40))
        return sorted(v for v in candidates if v in self)

    def points(self, thresholds) -> list[Version]:
        """One version for each stretch of the range on which a table with these thresholds (the
        versions it changes at) stays the same: the oldest, then each threshold inside."""
        inside = {t for t in thresholds if t > self.low and self.reaches(t)}
        return [self.low, *sorted(inside)]

    def __str__(self) -> str:
        if self.is_single:
            return render(self.low)
        text = f">={render(self.low)}"
        if self.high is not None:
            text += f",{'<=' if self.high_inclusive else '<'}{render(self.high)}"
        return text

    def __repr__(self) -> str:
        return f"Range({str(self)!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Range) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


_CLAUSE = re.compile(r"^\s*(===|==|!=|~=|>=|<=|>|<|\^|~)?\s*v?(\d+(?:\.\d+)*)(\.\*)?\s*([.+-]?[A-Za-z][A-Za-z0-9.+-]*)?\s*$")


def _release(text: str) -> Version:
    parts = [int(p) for p in text.split(".")]
    while len(parts) > 3 and parts[-1] == 0:
        parts.pop()
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts)


def _bump(parts: list[int], position: int) -> Version:
    """The release after every ``parts[:position + 1]`` one: ``[0, 6, 1]``, 1 -> (0, 7, 0)."""
    bumped = [*parts[:position], parts[position] + 1]
    return _release(".".join(map(str, bumped)))


@lru_cache(maxsize=64)
def parse_range(text: str) -> Range:
    """``"0.7"`` (that one release), or a PEP 440 specifier such as ``">=0.4.30"`` or ``">=0.6,<0.11"``
    (``~=``, ``==0.6.*``, and Poetry's ``^0.6``/``~0.6.1`` too). Raises ValueError.

    A lower end older than OLDEST_SUPPORTED is raised to it (the rules speak for no older JAX);
    a range with no supported release in it is an error.
    """
    clauses = [c for c in str(text).split(",") if c.strip()]
    if not clauses:
        raise ValueError(f"not a JAX version or requirement specifier: {text!r} (expected e.g. 0.7 or >=0.4.30)")
    low: Version = OLDEST_SUPPORTED
    high: Version | None = None
    high_inclusive = False

    def cap(version: Version, inclusive: bool) -> None:
        nonlocal high, high_inclusive
        if high is None or version < high or (version == high and not inclusive):
            high, high_inclusive = version, inclusive

    for clause in clauses:
        match = _CLAUSE.match(clause)
        if not match:
            raise ValueError(f"not a JAX version or requirement specifier: {text!r} "
                             f"(expected e.g. 0.7, >=0.4.30 or >=0.6,<0.11; cannot read {clause.strip()!r})")
        op, number, star, _suffix = match.groups()  # a pre/post/dev suffix counts as its release
        parts = [int(p) for p in number.split(".")]
        version = _release(number)
        if star and op not in ("==", "!="):
            raise ValueError(f"{clause.strip()!r}: '.*' goes with == or != only")
        if op == "!=":
            continue
        if star:  # ==0.6.*: every 0.6 release
            low = max(low, version)
            cap(_bump(parts, len(parts) - 1), False)
        elif op in (None, "==", "==="):
            low = max(low, version)
            cap(version, True)
        elif op in (">=", ">"):
            low = max(low, version)  # >0.6.2 starts after 0.6.2, which behaves as 0.6.2 does
        elif op == "<=":
            cap(version, True)
        elif op == "<":
            cap(version, False)
        elif op == "~=":
            if len(parts) < 2:
                raise ValueError(f"{clause.strip()!r}: ~= needs at least two parts (~=0.6)")
            low = max(low, version)
            cap(_bump(parts, len(parts) - 2), False)
        elif op == "~":  # Poetry: ~0.6.1 -> >=0.6.1,<0.7; ~0.6 -> <0.7; ~1 -> <2
            low = max(low, version)
            cap(_bump(parts, min(1, len(parts) - 1)), False)
        elif op == "^":  # Poetry: up to the next change of the first non-zero part
            low = max(low, version)
            first = next((i for i, p in enumerate(parts) if p), len(parts) - 1)
            cap(_bump(parts, first), False)
    if high is not None and (high < low or (high == low and not high_inclusive)):
        oldest = render(OLDEST_SUPPORTED)
        if high < OLDEST_SUPPORTED or (high == OLDEST_SUPPORTED and not high_inclusive):
            raise ValueError(f"{text!r} allows no JAX release from the oldest supported, {oldest}, on")
        raise ValueError(f"{text!r} allows no JAX release")
    return Range(low, high, high_inclusive)
