"""Settings for a run, resolved the way ``codemod run`` resolves them.

Each file is governed by the nearest ``pyproject.toml`` with a ``[tool.codemod]`` table above it
(or the one ``--config`` names), as in ruff: ``codemod run sub/x.py`` and ``codemod run .`` check
``sub/x.py`` with the same settings. The command line's options override the file. A group is the
roots and files one config governs, with its rules, excludes and per-file-ignores validated before
any of its files is read (``Resolver``). The CLI
and the all-repos autofixer (``jax_codemod.integrations.all_repos``) both call these functions, so a
repository gets the same result from either. Nothing here prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from jax_codemod.engine import wildmatch
from jax_codemod.engine.config import (
    Config,
    ConfigError,
    find_pyproject,
    has_codemod_table,
    load_config,
    platforms_are_explicit,
    resolve_platforms,
    resolve_target,
    select_rules,
    target_is_explicit,
)
from jax_codemod.engine.discovery import DEFAULT_EXCLUDE, DEFAULT_INCLUDE, Patterns, matches
from jax_codemod.engine.pipeline import MAX_ANALYSIS_MIB, MAX_ANALYSIS_SECONDS, FileResult, Settings
from jax_codemod.registry import MANIFEST, LazyRule


# Plain classes, not dataclasses: each @dataclass costs ~0.3 ms of start-up (it execs generated code).
class Options:
    """What the command line says, before any config is read."""

    def __init__(self, select=None, extend_select=(), ignore=(), exclude=(), unsafe_fixes=None, config=None,
                 force_exclude=None, target_jax_version=None, analysis_seconds=None, analysis_mib=None,
                 target_platforms=None) -> None:
        self.select: list[str] | None = select
        self.extend_select: list[str] = list(extend_select)
        self.ignore: list[str] = list(ignore)
        self.exclude: tuple[str, ...] = tuple(exclude)
        self.unsafe_fixes: bool | None = unsafe_fixes
        self.config: str | None = config
        self.force_exclude: bool | None = force_exclude
        # Validated and handed to the rules as the rule option ``target-jax-version``.
        self.target_jax_version: str | None = target_jax_version
        # Comma-separated platform names, validated and handed to the rules as ``target-platforms``.
        self.target_platforms: str | None = target_platforms
        # The analysis budget of one file; None: the config's, capped at the default.
        self.analysis_seconds: int | None = analysis_seconds
        self.analysis_mib: int | None = analysis_mib


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
        # The target platforms ("cpu,tpu") and where they came from, once prepared.
        self.platforms: str | None = None
        self.platforms_source: str | None = None
        self.settings: Settings | None = None
        self.excludes: list[Patterns] = []
        self.include: tuple[str, ...] = DEFAULT_INCLUDE
        self.per_file: list[tuple[Patterns, list[str]]] = []
        self.variants: dict[frozenset[str], Settings] = {}  # codes turned off -> Settings

    @property
    def force_exclude(self) -> bool:
        forced = self.options.force_exclude
        return bool(forced if forced is not None else self.config.force_exclude)

    @property
    def respect_gitignore(self) -> bool:
        """Whether the walk honours the tree's .gitignore files: yes, unless a trusted --config
        governs the run (a pull request's `.gitignore` with `*.py` must not hide its own files)
        and does not say `respect-gitignore = true`."""
        if self.config.respect_gitignore is not None:
            return self.config.respect_gitignore
        return not self.options.config

    @property
    def venv_markers(self) -> bool:
        """Whether a folder holding a pyvenv.cfg is skipped as a virtualenv: not under a trusted
        --config (an empty pyvenv.cfg committed beside code would hide it); a real environment's
        packages are still skipped by name (site-packages, .venv, venv in the default excludes)."""
        return not self.options.config

    @property
    def warnings(self) -> tuple[tuple[str, str], ...]:
        """(path, reason) for each settings file of the project that could not be read."""
        return self.declared.warnings if self.declared is not None else ()


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
    """What the project around ``path`` declares (engine.requirements.Declared: its jax range and
    platforms), less what something more explicit sets. Under ``--config`` only what that file
    declares itself (its ``[project] dependencies``): the config is trusted and the checked tree (a
    pull request) is not, and its requirements must not narrow the target (``jax==0.4.30`` would
    quiet every finding about a later release)."""
    target = target_is_explicit(options.target_jax_version, config)
    platforms = platforms_are_explicit(options.target_platforms, config)
    if target and platforms:
        return None
    from jax_codemod.engine import requirements

    if options.config:
        if cache is not None and options.config in cache:
            found = cache[options.config]
        else:
            found = requirements.declared_by_config(options.config)
            if cache is not None:
                cache[options.config] = found
    else:
        found = requirements.declared_jax(path, cache)
    return found.without(target=target, platforms=platforms) if found is not None else None


def prepare(group: Group, options: Options) -> Group:
    """The group's settings, excludes and per-file-ignores, validated before any file is read."""
    config, config_path = group.config, group.config_path
    base = os.path.dirname(os.path.abspath(config_path)) if config_path else os.getcwd()
    name = config_path or "defaults"
    group.target, group.target_source = resolve_target(options.target_jax_version, config, group.declared)
    group.platforms, group.platforms_source = resolve_platforms(options.target_platforms, config, group.declared)
    if options.config:  # say why a requirement in the tree is not what decided (the flag and $VAR need no note)
        note = "; under --config the checked tree's requirements are not read"
        for attribute in ("target_source", "platforms_source"):
            if not getattr(group, attribute).startswith(("--", "$", f"{config.source} [tool.codemod]")):
                setattr(group, attribute, getattr(group, attribute) + note)
    group.settings = settings(config, options, target=group.target, platforms=group.platforms)
    for key, patterns in (("exclude", config.exclude or ()), ("extend-exclude", config.extend_exclude),
                          ("per-file-ignores", config.per_file_ignores), ("--exclude", options.exclude)):
        refused = wildmatch.too_many(patterns)
        if refused:
            where = key if key.startswith("--") else f"{name}: [tool.codemod] {key}"
            raise ConfigError(f"{where}: {refused} (the limit for one list of patterns)")
    group.include = (*(DEFAULT_INCLUDE if config.include is None else config.include), *config.extend_include)
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


class Resolver:
    """The group that governs each file: the one of the nearest ``pyproject.toml`` with a
    ``[tool.codemod]`` table at or above the file's folder, or ``--config``'s for every file.

    A root's walk finds files under folders with a config of their own (``sub/pyproject.toml``):
    those are checked with that config's rules and per-file-ignores, and its excludes apply to
    them too, so that naming the file (what pre-commit does) and walking its parent agree.
    """

    def __init__(self, options: Options, groups: Sequence[Group] = ()) -> None:
        self.options = options
        # By config and, where the project's own jax requirement is the target, by that requirement.
        self.groups: dict[tuple, Group] = {(g.config_path, g.declared): g for g in groups}
        self._configs: dict[str | None, Config] = {g.config_path: g.config for g in groups}
        self._nearest: dict[str, str | None] = {}
        self._declared: dict = {}  # folder -> its declared jax range
        # folder -> the group of its files: both the config and the declared range are looked
        # up from a file's folder (a walk hands over files folder by folder; asking each file
        # cost a stat and two walks up the caches, 20 ms before a pool's first file on jax).
        self._by_folder: dict[str, Group] = {}

    def group_for(self, path: str) -> Group:
        folder = os.path.dirname(os.path.abspath(path))
        group = self._by_folder.get(folder)
        if group is not None:
            return group
        config_path = self.options.config or self.nearest_config(folder)
        config = self._configs.get(config_path)
        if config is None:
            config = self._configs[config_path] = load_config(config_path) if config_path else Config()
        declared = declared_target(path, self.options, config, self._declared)
        group = self.groups.get((config_path, declared))
        if group is None:
            group = prepare(Group([], config_path, config, self.options, declared), self.options)
            self.groups[(config_path, declared)] = group
        self._by_folder[folder] = group
        return group

    def nearest_config(self, folder: str) -> str | None:
        """``find_pyproject`` with its answer remembered per folder: a walk asks once per folder."""
        known = self._nearest.get(folder, _UNKNOWN)
        if known is not _UNKNOWN:
            return known
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate) and has_codemod_table(candidate):
            found: str | None = candidate
        else:
            parent = os.path.dirname(folder)
            found = None if parent == folder else self.nearest_config(parent)
        self._nearest[folder] = found
        return found

    def split(self, files: Sequence[str], root_group: Group) -> tuple[list[str], list[tuple[Group, list[int]]]]:
        """``files`` (found under roots ``root_group`` governs) less those a nested config's excludes
        drop (the walk applied the root's), and the rest by the group that governs each: (group,
        indexes into the files kept), in first-seen order."""
        kept: list[str] = []
        by_group: dict[int, tuple[Group, list[int]]] = {}
        for path in files:
            group = root_group if self.options.config else self.group_for(path)
            # Only a nested config's excludes: a group of the same config (a subproject that declares
            # another JAX range or platforms) excludes nothing the walk did not.
            nested = group is not root_group and group.config_path != root_group.config_path
            if nested and any(matches(patterns, path) for patterns in group.excludes):
                continue
            by_group.setdefault(id(group), (group, []))[1].append(len(kept))
            kept.append(path)
        return kept, list(by_group.values())


_UNKNOWN = object()


def check_per_config(files: list[str], groups: Sequence[tuple[Group, list[int]]],
                     check: Callable[[list[str], Settings], list[FileResult]]) -> list[FileResult]:
    """Results in the order of ``files``, each file checked under its own group (``Resolver.split``)."""
    results: list = [None] * len(files)
    for group, indexes in groups:
        batch = check_grouped([files[i] for i in indexes], group, check)
        for index, result in zip(indexes, batch, strict=True):
            results[index] = result
    return results


def ignored_here(group: Group, path: str) -> frozenset[str]:
    """The codes per-file-ignores turns off for ``path``."""
    return frozenset(code for patterns, codes in group.per_file if matches(patterns, path) for code in codes)


def settings_for(group: Group, ignored: frozenset[str]) -> Settings:
    if not ignored:
        return group.settings
    if ignored not in group.variants:
        group.variants[ignored] = settings(group.config, group.options, extra_ignore=sorted(ignored),
                                           target=group.target, platforms=group.platforms)
    return group.variants[ignored]


def settings(config: Config, options: Options, extra_ignore=(), target: str | None = None,
             platforms: str | None = None) -> Settings:
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
    if platforms is None:
        platforms = resolve_platforms(options.target_platforms, config)[0]
    rule_options = {**config.rule_options, "target-jax-version": target, "target-platforms": platforms}
    rules = tuple(LazyRule(info, rule_options) for info in chosen)
    return Settings(rules=rules, unsafe_fixes=unsafe, **analysis_budget(config, options))


def analysis_budget(config: Config, options: Options) -> dict:
    """The per-file analysis budget: the command line's, else the config's, which may only lower
    the default (a pyproject.toml can come with the untrusted code it would exempt)."""
    seconds = options.analysis_seconds
    if seconds is None:
        seconds = min(config.analysis_budget.get("seconds", MAX_ANALYSIS_SECONDS), MAX_ANALYSIS_SECONDS)
    mib = options.analysis_mib
    if mib is None:
        mib = min(config.analysis_budget.get("mib", MAX_ANALYSIS_MIB), MAX_ANALYSIS_MIB)
    return {"analysis_seconds": seconds, "analysis_mib": mib}


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
