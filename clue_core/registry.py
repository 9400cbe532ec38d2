"""What a plugin command may ask of the kernel: :class:`Registry`, re-exported by :mod:`clue_core.plugin`.

A command finds the kernel in its click context (``ctx.find_root().obj["kernel"]``) and used to
receive it as ``Any``, so nothing said which of the kernel's attributes were a contract and
which were internals a refactoring could rename. This protocol names exactly what the
first-party commands use: the registries of tasks, models, metrics, submission writers,
report sections, example kinds, data fetchers and openers, commands, the plugins as they loaded (``plugins``:
each one's row, with its load problem), who registered each name (``owner``, for messages), ``strict``
(re-raise for plugin authors) and the lookups that turn an unknown name into a one-line error with a
suggestion. Planning or running a run is ``api.plan(..., kernel=registry)`` /
``api.run(..., kernel=registry)``, which take this same object; ``resolved_settings`` and
``fetched_folder`` (:mod:`clue_core.lookups`) answer what ``clue-core info`` shows of a task.
:class:`clue_core.kernel.Kernel` satisfies it (``tests/core/test_plugin_api.py`` checks), so adding a
member here is a promise to every plugin, and removing one from the kernel breaks that test first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from clue_core.fetching import FetcherSpec, OpenerSpec
    from clue_core.kinds import KindSpec
    from clue_core.specs import (
        CommandSpec,
        MetricSpec,
        ModelSpec,
        ReportSectionSpec,
        SubmissionWriterSpec,
        TaskSpec,
    )


class PluginRow(Protocol):
    """One plugin as it loaded (a row of ``clue-core list plugins``): its entry point's ``name``, the
    ``distribution`` and ``version`` that installed it (when known), ``status`` (``ok``, ``error`` or
    ``disabled`` by ``CLUE_DISABLE_PLUGINS``), ``error`` (why it failed to load, or which of its specs were
    dropped and why) and ``provides`` (``registry -> names``); ``as_dict()`` is the row ``--json`` prints.
    A broken plugin is a row, not an exception, so a command can name it and go on."""

    name: str
    distribution: str | None
    version: str | None
    status: str
    error: str | None
    provides: dict[str, list[str]]

    def as_dict(self) -> dict[str, Any]: ...


@runtime_checkable
class Registry(Protocol):
    """The kernel as a plugin command sees it: read-only registries and name lookups."""

    @property
    def tasks(self) -> Mapping[str, TaskSpec]:
        """Every registered task by name."""

    @property
    def models(self) -> Mapping[str, ModelSpec]:
        """Every registered model (or model family, ``hf``) by name."""

    @property
    def metrics(self) -> Mapping[str, MetricSpec]:
        """Every registered metric by name."""

    @property
    def writers(self) -> Mapping[str, SubmissionWriterSpec]:
        """Every registered submission writer by name."""

    @property
    def kinds(self) -> Mapping[str, KindSpec]:
        """Every registered example kind by name (``classification``, a plugin's ``tagging``)."""

    @property
    def report_sections(self) -> Mapping[str, ReportSectionSpec]:
        """Every registered ``clue-core report`` section by name."""

    @property
    def fetchers(self) -> Mapping[str, FetcherSpec]:
        """Every registered data fetcher by name: pass it to ``resolve_task_data(..., fetchers=)``."""

    @property
    def openers(self) -> Mapping[str, OpenerSpec]:
        """Every registered archive opener by name: pass it to ``resolve_task_data(..., openers=)``."""

    @property
    def commands(self) -> Mapping[str, CommandSpec]:
        """Every ``clue-core`` command a plugin registered (``clue_commands``), by name."""

    @property
    def plugins(self) -> Sequence[PluginRow]:
        """Every plugin the kernel tried to load, in load order, with its status and problem."""

    @property
    def owner(self) -> Mapping[tuple[str, str], str]:
        """``(registry, name) -> plugin name``, to name the plugin in a message about its spec."""

    @property
    def strict(self) -> bool:
        """Whether a plugin's failure re-raises with its traceback (``CLUE_STRICT_PLUGINS``)."""

    def task(self, name: str) -> TaskSpec:
        """The task ``name`` (case-insensitive); an unknown name raises ``UnknownNameError`` (a ``ClueError``)."""

    def metric(self, name: str) -> MetricSpec:
        """The metric ``name``; an unknown name raises ``UnknownNameError``."""

    def writer(self, name: str) -> SubmissionWriterSpec:
        """The submission writer ``name``; an unknown name raises ``UnknownNameError``."""

    def kind(self, name: str) -> KindSpec:
        """The example kind ``name`` (its checks, gold, prompt fields); unknown raises ``UnknownNameError``."""

    def model(self, name: str) -> tuple[ModelSpec, str | None]:
        """The model ``name`` (a name, ``family:argument`` or a trained model's folder) and the argument
        its factory receives; an unknown name raises ``UnknownNameError``."""
