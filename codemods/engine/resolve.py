"""Settings for a run, resolved the way ``codemod run`` resolves them.

Each root is governed by the nearest ``pyproject.toml`` with a ``[tool.codemod]`` table (or the one
``--config`` names); the command line's options override it. A group is the roots one config
governs, with its rules, excludes and per-file-ignores validated before any file is read. The CLI
and the all-repos autofixer (``jax_codemod.integrations.all_repos``) both call these functions, so a
repository gets the same result from either. Nothing here prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from jax_codemod.engine.config import (
    Config,
    ConfigError,
    find_pyproject,
    load_config,
    resolve_target,
    select_rules,
    target_is_explicit,
)
from jax_codemod.engine.discovery import DEFAULT_EXCLUDE, Patterns, matches
from jax_codemod.engine.pipeline import FileResult, Settings
from jax_codemod.registry import MANIFEST, LazyRule


# Plain classes, not dataclasses: each @dataclass costs ~0.3 ms of start-up (it execs generated code).
class Options:
    """What the command line says, before any config is read."""

    def __init__(self, select=None, extend_select=(), ignore=(), exclude=(), unsafe_fixes=None, config=None,
                 force_exclude=None, target_jax_version=None) -> None:
        self.select: list[str] | None = select
        self.extend_select: list[str] = list(extend_select)
        self.ignore: list[str] = list(ignore)
        self.exclude: tuple[str, ...] = tuple(exclude)
        self.unsafe_fixes: bool | None = unsafe_fixes
        self.config: str | None = config
        self.force_exclude: bool | None = force_exclude
        # Validated and handed to the rules as the rule option ``target-jax-version``.
        self.target_jax_version: str | None = target_jax_version


class Group:
    """The roots one pyproject.toml governs, and what it says."""

    def __init__(self, roots: list[str], config_path: str | None, config: Config, options: Options,
                 declared=None) -> None:
        self.roots = roots
        self.config_path = config_path
        self.config = config
        self.options = options
        # The jax range the roots' project declares (engine.requirements.Declared), when neither
        # the flag nor the config names a target; the target and where it came from, once prepared.
        self.declared = declared
        self.target: str | None = None
        self.target_source: str | None = None
        self.settings: Settings | None = None
        self.excludes: list[Patterns] = []
        self.per_file: list[tuple[Patterns, list[str]]] = []
        self.variants: dict[frozenset[str], Settings] = {}  # codes turned off -> Settings

    @property
    def force_exclude(self) -> bool:
        forced = self.options.force_exclude
        return bool(forced if forced is not None else self.config.force_exclude)


def resolve(paths: Sequence[str], options: Options) -> list[Group]:
    """The roots grouped by the config that governs them, each group prepared; a ConfigError if a
    config is invalid."""
    return [prepare(group, options) for group in group_by_config(paths, options)]


def group_by_config(paths: Sequence[str], options: Options) -> list[Group]:
    """Roots grouped by the pyproject.toml that governs them (and, where the project's own jax
    requirement is the target, by that requirement), in the order given."""
    configs: dict[str | None, Config] = {}
    groups: dict[tuple, Group] = {}
    found: dict = {}  # folder -> its declared jax range, for this call
    for path in paths:
        config_path = options.config or find_pyproject(path)
        if config_path not in configs:
            configs[config_path] = load_config(config_path) if config_path else Config()
        config = configs[config_path]
        declared = declared_target(path, options, config, found)
        key = (config_path, declared)
        if key not in groups:
            groups[key] = Group([], config_path, config, options, declared)
        groups[key].roots.append(path)
    return list(groups.values())


def declared_target(path: str, options: Options, config: Config, cache: dict | None = None):
    """The project's declared jax range for ``path``, when nothing more explicit sets the target."""
    if target_is_explicit(options.target_jax_version, config):
        return None
    from jax_codemod.engine.requirements import declared_jax

    return declared_jax(path, cache)


def prepare(group: Group, options: Options) -> Group:
    """The group's settings, excludes and per-file-ignores, validated before any file is read."""
    config, config_path = group.config, group.config_path
    base = os.path.dirname(os.path.abspath(config_path)) if config_path else os.getcwd()
    name = config_path or "defaults"
    group.target, group.target_source = resolve_target(options.target_jax_version, config, group.declared)
    group.settings = settings(config, options, target=group.target)
    group.excludes = [
        Patterns.at(base, DEFAULT_EXCLUDE if config.exclude is None else config.exclude,
                    "default" if config.exclude is None else f"{name}: exclude"),
        Patterns.at(base, config.extend_exclude, f"{name}: extend-exclude"),
        Patterns.at(os.getcwd(), options.exclude, "--exclude"),
    ]
    for pattern, codes in config.per_file_ignores.items():
        try:
            select_rules(MANIFEST, [], [], codes)
        except ConfigError as error:
            raise ConfigError(f"{config_path}: [tool.codemod] per-file-ignores {pattern!r}: {error}") from error
        group.per_file.append((Patterns.at(base, [pattern], f"{name}: per-file-ignores"), [c.upper() for c in codes]))
    return group


def ignored_here(group: Group, path: str) -> frozenset[str]:
    """The codes per-file-ignores turns off for ``path``."""
    return frozenset(code for patterns, codes in group.per_file if matches(patterns, path) for code in codes)


def settings_for(group: Group, ignored: frozenset[str]) -> Settings:
    if not ignored:
        return group.settings
    if ignored not in group.variants:
        group.variants[ignored] = settings(group.config, group.options, extra_ignore=sorted(ignored),
                                           target=group.target)
    return group.variants[ignored]


def settings(config: Config, options: Options, extra_ignore=(), target: str | None = None) -> Settings:
    select = options.select if options.select is not None else config.select
    # From the manifest, not the rule modules: a rule is imported when a file has one of its triggers.
    chosen = select_rules(
        MANIFEST,
        select,
        [*config.extend_select, *options.extend_select],
        [*config.ignore, *options.ignore, *extra_ignore],
    )
    unsafe = options.unsafe_fixes if options.unsafe_fixes is not None else config.unsafe_fixes
    # Always resolved, so the cache fingerprint (rule options) changes with the installed jax.
    if target is None:
        target = resolve_target(options.target_jax_version, config)[0]
    rule_options = {**config.rule_options, "target-jax-version": target}
    rules = tuple(LazyRule(info, rule_options) for info in chosen)
    return Settings(rules=rules, unsafe_fixes=unsafe)


def check_grouped(files: list[str], group: Group,
                  check: Callable[[list[str], Settings], list[FileResult]]) -> list[FileResult]:
    """Results in the order of ``files``; files with per-file-ignores are checked with their own rule
    set. ``check(files, settings)`` checks one batch (the CLI's adds a progress bar and the cache)."""
    if not group.per_file:
        return list(check(files, group.settings))
    batches: dict[frozenset[str], list[int]] = {}
    for index, path in enumerate(files):
        batches.setdefault(ignored_here(group, path), []).append(index)
    results: list = [None] * len(files)
    for ignored, indexes in batches.items():
        batch = check([files[i] for i in indexes], settings_for(group, ignored))
        for index, result in zip(indexes, batch):
            results[index] = result
    return results
