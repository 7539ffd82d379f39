"""``[tool.codemod]`` in the nearest pyproject.toml, and rule selection."""

from __future__ import annotations

import keyword
import os
import re
import stat
from collections.abc import Iterable, Sequence

from jax_codemod.rule import Rule

# key -> expected type; rule options (e.g. helper-module) are passed to every rule.
KNOWN_KEYS = {
    "select": list,
    "extend-select": list,
    "ignore": list,
    "exclude": list,
    "extend-exclude": list,
    "include": list,
    "extend-include": list,
    "force-exclude": bool,
    "per-file-ignores": dict,
    "unsafe-fixes": bool,
    "helper-module": str,
    "target-jax-version": str,
    "target-platforms": (list, str),  # ["cpu", "tpu"], or "cpu,tpu" as the flag spells it
    "respect-gitignore": bool,
    "report-unknown-origin": bool,  # JAX005's report on values of unknown origin (capsules.py)
    "analysis-budget-seconds": int,
    "analysis-budget-mib": int,
}
# A dotted module name: what `from helper_module import ensure_single_device` can name. Anything
# else (`a import b; import os`) would be pasted into every fixed file.
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


class ConfigError(Exception):
    """A configuration or usage error: the run stops with exit code 2."""


class Config:
    """``[tool.codemod]`` as read (a plain class: a dataclass costs start-up time)."""

    def __init__(
        self,
        select: list[str] | None = None,
        extend_select: list[str] | None = None,
        ignore: list[str] | None = None,
        exclude: list[str] | None = None,
        extend_exclude: list[str] | None = None,
        force_exclude: bool = False,
        per_file_ignores: dict[str, list[str]] | None = None,
        unsafe_fixes: bool = False,
        rule_options: dict | None = None,
        source: str | None = None,
        include: list[str] | None = None,
        extend_include: list[str] | None = None,
        analysis_budget: dict[str, int] | None = None,
        respect_gitignore: bool | None = None,
    ) -> None:
        self.select = select
        self.extend_select = list(extend_select or [])
        self.ignore = list(ignore or [])
        # None: the default exclude list (DEFAULT_EXCLUDE); a list replaces it, as in ruff.
        self.exclude = exclude
        self.extend_exclude = list(extend_exclude or [])
        self.force_exclude = force_exclude
        # glob -> codes: rules not run on the files the glob matches.
        self.per_file_ignores = dict(per_file_ignores or {})
        self.unsafe_fixes = unsafe_fixes
        self.rule_options = dict(rule_options or {})
        self.source = source
        # None: the default (DEFAULT_INCLUDE: *.py, *.ipynb); a list replaces it.
        self.include = include
        self.extend_include = list(extend_include or [])
        # "seconds"/"mib" -> the [tool.codemod] analysis budget, only where the file sets one.
        self.analysis_budget = dict(analysis_budget or {})
        # None: git's ignore files in the tree are honoured, except under --config (resolve.py).
        self.respect_gitignore = respect_gitignore

    def __repr__(self) -> str:
        return f"Config({self.__dict__!r})"


def find_pyproject(start: str) -> str | None:
    """The nearest pyproject.toml at or above ``start`` that has a [tool.codemod] table."""
    current = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        candidate = os.path.join(current, "pyproject.toml")
        if os.path.isfile(candidate) and has_codemod_table(candidate):
            return candidate
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


# A pyproject.toml is a few KiB; a bigger one is refused (a config error), not read into memory.
MAX_CONFIG_BYTES = 1 * 2**20


def has_codemod_table(path: str) -> bool:
    try:
        data = _read_config(path)
    except ConfigError:
        return True  # let load_config report it: a config too big or unreadable is not silently skipped
    return b"[tool.codemod" in data


def _read_config(path: str) -> bytes:
    """The file's bytes, at most MAX_CONFIG_BYTES, opened without blocking (a FIFO named
    pyproject.toml must not hang the run) and read no further than the limit (nor /dev/zero)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        # Not only regular files (`--config /dev/null` means the defaults); the read is bounded.
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: {info.st_size:,} bytes, over the {MAX_CONFIG_BYTES // 2**20} MiB limit "
                              "for a configuration file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: over the {MAX_CONFIG_BYTES // 2**20} MiB limit for a configuration file")
    return data


def load_config(path: str) -> Config:
    """``[tool.codemod]`` of ``path``; every way the file can be wrong (unreadable, too big, not
    TOML, nested past the parser's depth, a value of the wrong type) is a one-line ConfigError."""
    try:  # imported here: a run with no [tool.codemod] anywhere never parses TOML
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    raw = _read_config(path)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte {error.start})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply to read") from None
    except MemoryError:
        raise ConfigError(f"{path}: invalid TOML: too large to read") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: [tool] must be a table")
    table = tool.get("codemod", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.codemod] must be a table")
    for key, value in table.items():
        expected = KNOWN_KEYS.get(key)
        if expected is None:
            known = ", ".join(sorted(KNOWN_KEYS))
            raise ConfigError(f"{path}: unknown key {key!r} in [tool.codemod] (known: {known})")
        if not isinstance(value, expected) or (expected is list and not all(isinstance(v, str) for v in value)):
            kind = {list: "a list of strings", dict: "a table", (list, str): "a list of names or a comma-separated "
                    "string"}.get(expected) or expected.__name__
            raise ConfigError(f"{path}: [tool.codemod] {key} must be {kind}")
    helper = table.get("helper-module")
    if helper is not None and (not _DOTTED_NAME.match(helper) or any(keyword.iskeyword(p) for p in helper.split("."))):
        raise ConfigError(
            f"{path}: [tool.codemod] helper-module must be a dotted module name such as 'myproject.interop', "
            f"got {helper!r}"
        )
    for key in ("include", "extend-include"):
        for pattern in table.get(key, []):
            if "/" in pattern or not pattern.strip():
                raise ConfigError(f"{path}: [tool.codemod] {key}: {pattern!r}: patterns match file names "
                                  "(such as '*.py' or '*.ipynb'), not paths")
    per_file = table.get("per-file-ignores", {})
    for pattern, codes in per_file.items():
        if not isinstance(codes, list) or not all(isinstance(code, str) for code in codes):
            raise ConfigError(f"{path}: [tool.codemod] per-file-ignores {pattern!r} must be a list of rule codes")
    budget = {}
    for unit in ("seconds", "mib"):
        value = table.get(f"analysis-budget-{unit}")
        if value is None:
            continue
        if isinstance(value, bool) or value <= 0:
            raise ConfigError(f"{path}: [tool.codemod] analysis-budget-{unit} must be a positive integer")
        budget[unit] = value
    options = {key: table[key] for key in ("helper-module", "target-jax-version", "target-platforms",
                                           "report-unknown-origin") if key in table}
    for key, check in (("target-jax-version", check_target_jax_version), ("target-platforms", check_target_platforms)):
        if key in options:
            try:
                options[key] = check(options[key])
            except ConfigError as error:
                raise ConfigError(f"{path}: [tool.codemod] {error}") from error
    return Config(
        select=table.get("select"),
        extend_select=table.get("extend-select", []),
        ignore=table.get("ignore", []),
        exclude=table.get("exclude"),
        extend_exclude=table.get("extend-exclude", []),
        force_exclude=table.get("force-exclude", False),
        per_file_ignores={pattern: list(codes) for pattern, codes in per_file.items()},
        unsafe_fixes=table.get("unsafe-fixes", False),
        rule_options=options,
        source=path,
        include=table.get("include"),
        extend_include=table.get("extend-include", []),
        analysis_budget=budget,
        respect_gitignore=table.get("respect-gitignore"),
    )


def check_target_jax_version(value: str) -> str:
    """``value`` normalised (``"0.7"`` -> ``"0.7.0"``, ``">=0.6, <0.11"`` -> ``">=0.6.0,<0.11.0"``); a
    ConfigError if it is neither a JAX version nor a specifier that allows a supported release."""
    from jax_codemod.analysis import jax_versions

    try:
        target = jax_versions.parse_range(value)
    except ValueError as error:
        raise ConfigError(f"target-jax-version: {error}") from None
    if target.oldest[:2] > jax_versions.NEWEST_KNOWN[:2]:
        # As ruff refuses a target-version it does not know: what such a release changed is unknown,
        # so fixes "right for" it would be a guess. A patch release of a known minor is accepted.
        newest = jax_versions.render(jax_versions.NEWEST_KNOWN)
        raise ConfigError(
            f"target-jax-version {value!r} is newer than every JAX release this codemod knows (newest: {newest}); "
            "upgrade codemod or name a known version"
        )
    return str(target)


def resolve_target_jax_version(cli_value: str | None, config: Config, declared=None) -> str:
    """The target for a run (see resolve_target)."""
    return resolve_target(cli_value, config, declared)[0]


# A target for the runs of one environment (a CI job, a test run): above what codemod infers
# (the declared requirement, the installed jax), below what the project's config says.
TARGET_ENV_VAR = "CODEMOD_TARGET_JAX_VERSION"


def target_is_explicit(cli_value: str | None, config: Config) -> bool:
    """Whether the flag, its variable or the config names the target (no declaration is read)."""
    return _is_explicit("target-jax-version", cli_value, config)


def _is_explicit(key: str, cli_value: str | None, config: Config) -> bool:
    return cli_value is not None or bool(os.environ.get(_ENV_VARS[key])) or key in config.rule_options


def _explicit(key: str, cli_value: str | None, config: Config) -> tuple[str, str] | None:
    """(value, source) of a setting the flag, else the config, else its environment variable names
    (the order both targets share: the project's config above the environment's); None when none
    does. A bad value is a ConfigError naming where it came from."""
    check = _CHECKS[key]
    if cli_value is not None:
        try:
            return check(cli_value), f"--{key}"
        except ConfigError as error:
            raise ConfigError(f"--{error}") from None  # "--target-platforms: 'x y' is not a platform name ..."
    if key in config.rule_options:
        return config.rule_options[key], f"{config.source} [tool.codemod] {key}"
    variable = _ENV_VARS[key]
    if os.environ.get(variable):
        try:
            return check(os.environ[variable]), f"${variable}"
        except ConfigError as error:
            raise ConfigError(f"${variable}: {str(error).removeprefix(key + ': ')}") from None
    return None


def resolve_target(cli_value: str | None, config: Config, declared=None) -> tuple[str, str]:
    """The target JAX range for a run and where it comes from: the flag, else the config, else
    $CODEMOD_TARGET_JAX_VERSION, else the project's own jax requirement (``declared``:
    engine.requirements.Declared), else the installed jax (metadata), else the newest known
    release."""
    from jax_codemod.analysis import jax_versions

    explicit = _explicit("target-jax-version", cli_value, config)
    if explicit is not None:
        return explicit
    if declared is not None and declared.target is not None:
        return str(declared.target), f"the project's jax requirement, {declared.source}"
    installed = _installed_jax_version()
    if installed is not None:
        try:
            return jax_versions.render(jax_versions.parse(installed)), f"the installed jax ({installed})"
        except ValueError:
            pass
    version = jax_versions.default_target()
    return jax_versions.render(version), (f"the installed jax ({jax_versions.render(version)})"
                                          if jax_versions.installed() else "the newest JAX codemod knows")


# The target platforms: the backends the checked code must run on. The rules read them as the rule
# option ``target-platforms``: a sorted, comma-joined string ("cpu,gpu", "cpu,tpu").
PLATFORMS_ENV_VAR = "CODEMOD_TARGET_PLATFORMS"
# JAX's own names for the GPU builds: spelled "gpu" here, as jax.devices("gpu") spells them.
_PLATFORM_ALIASES = {"cuda": "gpu", "rocm": "gpu"}
# A plugin backend's name (metal, ...): a lowercase identifier, as JAX's platform names are.
_PLATFORM_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}\Z")
MAX_PLATFORMS = 16
# A project that declares no platform: plain `jax` from the index is the CPU-only build, and the
# CUDA build (jax[cuda12]) is the other common install; a TPU install is declared (every TPU
# install guide says jax[tpu]), or named with target-platforms.
DEFAULT_PLATFORMS = "cpu,gpu"


def check_target_platforms(value) -> str:
    """``value`` (a list of names, or a comma-separated string) normalised: lower-cased, ``cuda``
    and ``rocm`` spelled ``gpu``, sorted, comma-joined. A ConfigError names what is wrong."""
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ConfigError("target-platforms: expected a list of platform names such as [\"cpu\", \"tpu\"]")
    found = set()
    for name in names:
        if not name.strip():
            continue  # "cpu,tpu," as codes are read: an empty piece names nothing
        normal = _PLATFORM_ALIASES.get(name.strip().lower(), name.strip().lower())
        if not _PLATFORM_NAME.match(normal):
            raise ConfigError(f"target-platforms: {name[:40]!r} is not a platform name (cpu, gpu, tpu, or a "
                              "plugin backend's lowercase name such as metal)")
        found.add(normal)
    if not found:
        raise ConfigError("target-platforms: no platform named (cpu, gpu, tpu, or a plugin backend such as metal)")
    if len(found) > MAX_PLATFORMS:
        raise ConfigError(f"target-platforms: {len(found)} platforms, more than the {MAX_PLATFORMS} allowed")
    return ",".join(sorted(found))


def platforms_are_explicit(cli_value: str | None, config: Config) -> bool:
    """Whether the flag, its variable or the config names the platforms (no declaration is read)."""
    return _is_explicit("target-platforms", cli_value, config)


def resolve_platforms(cli_value: str | None, config: Config, declared=None) -> tuple[str, str]:
    """The target platforms and where they come from: the flag, else the config, else
    $CODEMOD_TARGET_PLATFORMS, else the project's requirements (``declared``:
    engine.requirements.Declared; ``cpu`` is always among them), else DEFAULT_PLATFORMS."""
    explicit = _explicit("target-platforms", cli_value, config)
    if explicit is not None:
        return explicit
    if declared is not None and declared.platforms:
        shown = "; ".join(declared.platform_sources[:3]) + ("; ..." if len(declared.platform_sources) > 3 else "")
        return ",".join(sorted({"cpu", *declared.platforms})), f"the project's requirements, {shown}"
    return DEFAULT_PLATFORMS, ("the default: no platform declared (plain jax is the CPU build, jax[cuda12] "
                               "the other common install; a TPU project declares jax[tpu] or sets "
                               "target-platforms)")


# The two targets' explicit sources, one table: each setting's environment variable and checker.
_ENV_VARS = {"target-jax-version": TARGET_ENV_VAR, "target-platforms": PLATFORMS_ENV_VAR}
_CHECKS = {"target-jax-version": check_target_jax_version, "target-platforms": check_target_platforms}

def _installed_jax_version() -> str | None:
    """The installed jax's version as ``importlib.metadata.version("jax")`` finds it, in the one
    common layout: the first folder on ``sys.path`` with a jax distribution holds exactly one
    ``jax-*.dist-info``, whose METADATA names the version. Anything else: None, and the caller
    asks importlib.metadata (importing it and the email package costs ~10 ms of every run).
    """
    import sys
    from importlib import machinery  # already imported by the interpreter

    if any(
        hasattr(finder, "find_distributions") and finder is not machinery.PathFinder for finder in sys.meta_path
    ):
        return None  # another finder may know distributions too
    for entry in sys.path:
        folder = entry or "."
        if folder.lower().endswith(".egg"):
            return None  # an egg's EGG-INFO: importlib.metadata's own rules
        try:
            names = os.listdir(folder)
        except OSError:
            if os.path.exists(folder):
                return None  # a zip or other finder importlib would search: let it
            continue
        found = [n for n in names if _distribution_name(n) == "jax"]
        if not found:
            continue
        if len(found) != 1 or not found[0].endswith(".dist-info"):
            return None
        try:
            with open(os.path.join(folder, found[0], "METADATA"), encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith("Version:"):
                        return line[len("Version:"):].strip() or None
                    if not line.strip():
                        return None  # the headers ended without one
        except (OSError, UnicodeDecodeError):
            return None
        return None
    return None


def _distribution_name(entry: str) -> str | None:
    """``jax`` for ``jax-0.10.2.dist-info`` or ``JAX.egg-info``, normalised as importlib.metadata does."""
    lowered = entry.lower()
    for suffix in (".dist-info", ".egg-info"):
        if lowered.endswith(suffix):
            stem = entry[: -len(suffix)]
            return re.sub(r"[-_.]+", "_", stem.partition("-")[0]).lower()
    return None


def parse_codes(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [code.strip().upper() for code in value.split(",") if code.strip()]


def select_rules(
    registry: Sequence[type[Rule]],
    select: Iterable[str] | None,
    extend_select: Iterable[str] = (),
    ignore: Iterable[str] = (),
) -> list[type[Rule]]:
    """Rules chosen by ruff-style selectors: a code, a code prefix, or ALL."""
    if select is None:
        chosen = {rule.CODE for rule in registry if rule.DEFAULT_ENABLED}
    else:
        chosen = set(_expand(registry, select))
    chosen |= set(_expand(registry, extend_select))
    chosen -= set(_expand(registry, ignore))
    return [rule for rule in registry if rule.CODE in chosen]


def _expand(registry: Sequence[type[Rule]], selectors: Iterable[str]) -> list[str]:
    codes: list[str] = []
    for selector in selectors:
        selector = selector.strip().upper()
        if selector == "ALL":
            matched = [rule.CODE for rule in registry]
        else:
            matched = [rule.CODE for rule in registry if rule.CODE.startswith(selector)]
        if not matched:
            known = ", ".join(rule.CODE for rule in registry)
            raise ConfigError(f"unknown rule selector {selector!r} (known codes: {known}, or ALL)")
        codes.extend(matched)
    return codes
