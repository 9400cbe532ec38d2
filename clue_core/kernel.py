"""Plugin discovery and the registry of tasks, models, metrics and submission writers.

Each entry point of the ``clue_core`` group is loaded and collected on its own: an import
error, a bad hook signature, an unknown hook name, an exception inside a hook, a hook
returning the wrong thing, or a name another plugin already registered puts an error on
*that* plugin's row and drops it, while every other plugin keeps working. ``strict``
re-raises instead, with the original traceback, for plugin authors.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pluggy

from clue_core import hookspecs
from clue_core.discovery import BUILTIN_PLUGIN, env_names, plugin_points
from clue_core.errors import PluginError, UnknownNameError, did_you_mean
from clue_core.fetching import FetcherSpec, OpenerSpec
from clue_core.kinds import KindSpec, declare
from clue_core.saved_models import MODEL_FILE, is_there, saved_family
from clue_core.specs import (
    CommandSpec,
    MetricSpec,
    ModelSpec,
    ReportSectionSpec,
    SubmissionWriterSpec,
    TaskSpec,
)

#: hook name -> (registry attribute, spec type, what users call it)
HOOKS: dict[str, tuple[str, type, str]] = {
    "clue_tasks": ("tasks", TaskSpec, "task"),
    "clue_models": ("models", ModelSpec, "model"),
    "clue_metrics": ("metrics", MetricSpec, "metric"),
    "clue_submission_writers": ("writers", SubmissionWriterSpec, "writer"),
    "clue_commands": ("commands", CommandSpec, "command"),
    "clue_report_sections": ("report_sections", ReportSectionSpec, "report section"),
    "clue_data_fetchers": ("fetchers", FetcherSpec, "fetcher"),
    "clue_data_openers": ("openers", OpenerSpec, "opener"),
    "clue_kinds": ("kinds", KindSpec, "kind"),
}

#: The commands of ``clue-core`` itself: no plugin command may take one of these names but the built-in
#: plugin's own (``list``, ``info`` and ``check`` are its commands; ``run`` is the CLI's).
BUILTIN_COMMANDS = frozenset({"list", "info", "check", "run"})

#: Commands that plugins of this project provide, and the plugin to install for each. While that plugin
#: is installed (and not disabled) the name is its own: a third party registering ``submit`` is the error
#: on its own row whatever its name, though plugins load by name and the first to take a name keeps it.
PLUGIN_HOMES = {"report": "clue-report", "compare": "clue-tasks-superclue", "sweep": "clue-sweep",
                "bootstrap": "clue-sweep", "evaluate": "clue-leaderboard", "submit": "clue-leaderboard",
                "download": "clue-data", **dict.fromkeys(("list", "info", "check"), BUILTIN_PLUGIN)}


HOOKS_BY_REGISTRY = {registry: noun for registry, _, noun in HOOKS.values()}


class PluginInfo:
    """One row of ``clue-core list plugins`` (a plain class: cheaper to create than a dataclass)."""

    def __init__(self, name: str, module: str, distribution: str | None = None, version: str | None = None) -> None:
        self.name = name
        self.module = module
        self.distribution = distribution
        self.version = version
        self.status = "ok"  # ok | error | disabled
        self.error: str | None = None
        self.provides: dict[str, list[str]] = {}

    def __repr__(self) -> str:
        return f"PluginInfo({self.name!r}, status={self.status!r}, error={self.error!r})"

    def as_dict(self) -> dict[str, Any]:
        """The row for ``list plugins --json``: every attribute, in the order ``__init__`` sets them."""
        return dict(vars(self))


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


class Kernel:
    """The registry. ``Kernel(entrypoints=False)`` gives an empty, isolated one for tests."""

    def __init__(
        self,
        *,
        entrypoints: bool = True,
        strict: bool | None = None,
        disabled: Iterable[str] | None = None,
    ) -> None:
        self.strict = _env_flag("CLUE_STRICT_PLUGINS") if strict is None else strict
        self.disabled = env_names("CLUE_DISABLE_PLUGINS") if disabled is None else set(disabled)
        self._pm = pluggy.PluginManager(hookspecs.NAME)
        self._pm.add_hookspecs(hookspecs)
        self.plugins: list[PluginInfo] = []
        self.tasks: dict[str, TaskSpec] = {}
        self.models: dict[str, ModelSpec] = {}
        self.metrics: dict[str, MetricSpec] = {}
        self.writers: dict[str, SubmissionWriterSpec] = {}
        self.commands: dict[str, CommandSpec] = {}
        self.report_sections: dict[str, ReportSectionSpec] = {}
        self.fetchers: dict[str, FetcherSpec] = {}
        self.openers: dict[str, OpenerSpec] = {}
        self.kinds: dict[str, KindSpec] = {}
        self.owner: dict[tuple[str, str], str] = {}  # (registry, name) -> plugin name
        self._coming: set[str] = set()  # entry points about to load (load_entrypoints), for PLUGIN_HOMES
        if entrypoints:
            self.load_entrypoints()

    # -- discovery ---------------------------------------------------------------------

    def load_entrypoints(self) -> None:
        """Load every ``clue_core`` entry point (built-in first, then by name), then check the specs."""
        points = list(plugin_points())
        self._coming = {ep.name for ep in points} - self.disabled  # the homes of PLUGIN_HOMES that will load
        for point in points:
            info = PluginInfo(point.name, point.value, getattr(point.dist, "name", None),
                              getattr(point.dist, "version", None))
            if {point.name, info.distribution} & self.disabled:
                info.status = "disabled"
                self.plugins.append(info)
                continue
            try:
                plugin = point.load()
            except Exception as exc:
                self.plugins.append(info)
                self._fail(info, exc, f"import failed: {type(exc).__name__}: {exc}")
                continue
            self._add(plugin, info)
        self.check_specs()
        # the credentials declarations point at ($OPENAI_API_KEY) are hidden in whatever this process writes
        from clue_core import redaction

        redaction.register_kernel(self)

    def register(self, plugin: object, name: str, *, distribution: str | None = None, version: str | None = None
                 ) -> PluginInfo:
        """Register an in-process plugin (a module or an object with hookimpls), defensively."""
        info = PluginInfo(name=name, module=getattr(plugin, "__name__", type(plugin).__name__),
                          distribution=distribution, version=version)
        if name in self.disabled:
            info.status = "disabled"
            self.plugins.append(info)
            return info
        self._add(plugin, info)
        self.check_specs()
        return info

    def _add(self, plugin: object, info: PluginInfo) -> None:
        self.plugins.append(info)
        try:
            self._pm.register(plugin, name=info.name)
        except Exception as exc:
            self._fail(info, exc, f"{type(exc).__name__}: {exc}")
            return
        try:
            self._check_hook_names(plugin)
            collected = {hook: self._collect(plugin, hook) for hook in HOOKS}
            self._check_duplicates(info.name, collected)
        except Exception as exc:
            self._pm.unregister(plugin)
            self._fail(info, exc, f"{type(exc).__name__}: {exc}")
            return
        for hook, specs in collected.items():
            registry_name, _, _ = HOOKS[hook]
            registry = getattr(self, registry_name)
            for spec in specs:
                registry[spec.name] = spec
                self.owner[(registry_name, spec.name)] = info.name
            if specs:
                info.provides[registry_name] = [spec.name for spec in specs]

    def _fail(self, info: PluginInfo, exc: BaseException, message: str) -> None:
        info.status = "error"
        info.error = message.replace("\n", " ")
        if self.strict:  # show the plugin author the original exception and its traceback
            raise exc.__cause__ if isinstance(exc, PluginError) and exc.__cause__ else exc

    def _check_hook_names(self, plugin: object) -> None:
        """A function marked as a hook under a name no hookspec has (a typo) is an error.

        pluggy keeps such impls under a caller without a spec; reading those back avoids
        scanning the plugin's attributes a second time.
        """
        for caller in self._pm.get_hookcallers(plugin) or []:
            if caller.spec is None:
                raise PluginError(f"unknown hook {caller.name!r} (known: {', '.join(HOOKS)})")

    def _collect(self, plugin: object, hook: str) -> list[Any]:
        _, spec_type, _ = HOOKS[hook]
        result: list[Any] = []
        for impl in getattr(self._pm.hook, hook).get_hookimpls():
            if impl.plugin is not plugin:
                continue
            try:
                specs = impl.function()
            except Exception as exc:
                raise PluginError(f"{hook}() raised {type(exc).__name__}: {exc}") from exc
            if specs is None:
                continue
            if not isinstance(specs, (list, tuple)):
                raise PluginError(f"{hook}() must return a list, got {type(specs).__name__}")
            for spec in specs:
                if not isinstance(spec, spec_type):
                    raise PluginError(f"{hook}() returned {type(spec).__name__}, expected {spec_type.__name__}")
            result.extend(specs)
        return result

    def _check_duplicates(self, plugin_name: str, collected: dict[str, list[Any]]) -> None:
        for hook, specs in collected.items():
            registry_name, _, noun = HOOKS[hook]
            registry = getattr(self, registry_name)
            names = [spec.name for spec in specs]
            for name in names:
                if registry_name == "commands" and name in BUILTIN_COMMANDS and plugin_name != BUILTIN_PLUGIN:
                    raise PluginError(f"command {name!r} is a built-in command of clue-core")
                # a command of PLUGIN_HOMES, or a fetcher named after a plugin, belongs to that plugin
                home = {"commands": PLUGIN_HOMES.get(name), "fetchers": name}.get(registry_name)
                if home is not None and home != plugin_name and home in self._coming:
                    raise PluginError(f"{noun} {name!r} belongs to plugin {home!r}, which is installed")
                if name in registry:
                    owner = self.owner[(registry_name, name)]
                    raise PluginError(f"{noun} {name!r} is already registered by plugin {owner!r}")
                if names.count(name) > 1:
                    raise PluginError(f"{noun} {name!r} is registered twice by this plugin")
            if registry_name == "report_sections":
                self._check_section_keys(specs)

    def _check_section_keys(self, specs: list[ReportSectionSpec]) -> None:
        """Two sections storing their data under one ``report.json`` key would make every report that
        shows both fail, so the second plugin to claim a key is the one in error, as for a name."""
        keys = [spec.data_key for spec in specs]
        taken = {spec.data_key: name for name, spec in self.report_sections.items()}
        for spec in specs:
            if spec.data_key in taken:
                owner = self.owner.get(("report_sections", taken[spec.data_key]), "?")
                raise PluginError(f"report section {spec.name!r}: key {spec.data_key!r} is already used by section "
                                  f"{taken[spec.data_key]!r} of plugin {owner!r}")
            if keys.count(spec.data_key) > 1:
                raise PluginError(f"report section {spec.name!r}: key {spec.data_key!r} is used twice by this plugin")

    def check_specs(self) -> None:
        """Check every registered spec against the whole registry; drop the ones that fail.

        Runs once all plugins are loaded (a task may use another plugin's metric). A failed
        spec's problem goes on its plugin's row, as a broken import does.
        """
        from clue_core.checks import spec_problems

        for registry_name in ("kinds", "writers", "metrics", "models", "tasks", "commands", "report_sections",
                              "fetchers", "openers"):
            registry = getattr(self, registry_name)
            for name, spec in list(registry.items()):
                problems = spec_problems(self, registry_name, spec)
                if not problems:
                    continue
                del registry[name]
                owner = self.owner.pop((registry_name, name), None)
                info = next((p for p in self.plugins if p.name == owner), None)
                noun = HOOKS_BY_REGISTRY[registry_name]
                message = f"{noun} {name!r} dropped: {'; '.join(problems)}"
                if info is None:
                    continue
                if info.provides.get(registry_name):
                    info.provides[registry_name] = [n for n in info.provides[registry_name] if n != name]
                info.status = "error"
                info.error = f"{info.error}; {message}" if info.error else message
                if self.strict:
                    raise PluginError(f"plugin {info.name}: {message}")
        # for code that meets an example without a kernel (gold_of, reading); the built-in plugin's kinds stand
        declare(self.kinds.values(), [n for n in self.kinds if self.owner.get(("kinds", n)) == BUILTIN_PLUGIN])

    # -- lookups -----------------------------------------------------------------------

    def task(self, name: str) -> TaskSpec:
        return self._lookup("tasks", name.lower(), "task")

    def metric(self, name: str) -> MetricSpec:
        return self._lookup("metrics", name, "metric")

    def writer(self, name: str) -> SubmissionWriterSpec:
        return self._lookup("writers", name, "submission writer")

    def kind(self, name: str) -> KindSpec:
        return self._lookup("kinds", name, "example kind")

    def _lookup(self, registry_name: str, name: str, noun: str) -> Any:
        registry = getattr(self, registry_name)
        if name in registry:
            return registry[name]
        raise UnknownNameError(f"unknown {noun} {name!r}{did_you_mean(name, registry)}{self._broken_hint()}")

    def model(self, name: str) -> tuple[ModelSpec, str | None]:
        """Resolve a model name to its spec and the argument its factory receives.

        Accepts an exact name (``baseline``, ``hf:hfl/rbt3``), a family with an argument
        (``hf:<hub id or path>``) or the directory of a trained model (holding ``clue_model.json``).
        """
        if name in self.models:
            spec = self.models[name]
            return spec, (name.partition(":")[2] or None) if ":" in name else None
        path = Path(name).expanduser()
        family = saved_family(path)
        if family is not None:
            if family not in self.models:
                raise UnknownNameError(f"{path}: saved with model {family!r}, which no installed plugin provides")
            return self.models[family], str(path)
        prefix, sep, argument = name.partition(":")
        if sep and prefix in self.models and self.models[prefix].family:
            if not argument:
                raise UnknownNameError(f"model {name!r} needs an argument after '{prefix}:'")
            return self.models[prefix], argument
        if is_there(path) or ("/" in name and not sep):
            raise UnknownNameError(f"{name}: not a saved model directory (no {MODEL_FILE} in it)")
        families = {f"{n}:" for n, spec in self.models.items() if spec.family}
        raise UnknownNameError(
            f"unknown model {name!r}{did_you_mean(name, list(self.models) + sorted(families))}{self._broken_hint()}"
        )

    def _broken_hint(self) -> str:
        broken = [p.name for p in self.plugins if p.status == "error"]
        return f" (plugins with errors: {', '.join(broken)}; see 'clue-core list plugins')" if broken else ""

