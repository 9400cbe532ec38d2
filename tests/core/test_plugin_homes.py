"""Names that belong to a plugin of this project (``kernel.PLUGIN_HOMES``) without changing the load order.

Plugins load by name and the first to register a name keeps it, so a third party named before
``clue-leaderboard`` could take ``submit``. Loading the homes first fixed that but moved their tasks to the
top of ``clue-core list tasks``; the names are reserved instead, while their home is installed and enabled.
"""

from __future__ import annotations

import importlib.metadata as metadata

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import CommandSpec, hookimpl


class _Submit:
    @hookimpl
    def clue_commands(self) -> list[CommandSpec]:
        return [CommandSpec(name="submit", help="A lab's own submit.", command="os:getcwd")]


SUBMIT = _Submit()


def _kernel(monkeypatch: pytest.MonkeyPatch, disabled: tuple[str, ...] = ()) -> Kernel:
    installed = metadata.entry_points

    def entry_points(**selection):
        points = list(installed(**selection))
        if selection.get("group") == "clue_core":
            points.append(metadata.EntryPoint("acme-submit", f"{__name__}:SUBMIT", "clue_core"))
        return metadata.EntryPoints(points)

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    return Kernel(strict=False, disabled=disabled)


def test_plugins_still_load_by_name_so_the_task_list_keeps_its_order(monkeypatch) -> None:
    kernel = _kernel(monkeypatch)
    names = [p.name for p in kernel.plugins]
    assert names[0] == "builtin" and names[1:] == sorted(names[1:])
    tasks = list(kernel.tasks)
    assert tasks.index("afqmc") < tasks.index("superclue")  # clue-tasks-classic loads before clue-tasks-superclue


def test_with_its_home_disabled_a_third_party_may_take_the_command(monkeypatch) -> None:
    kernel = _kernel(monkeypatch, disabled=("clue-leaderboard",))
    rows = {p.name: p for p in kernel.plugins}
    assert rows["acme-submit"].status == "ok", rows["acme-submit"].error
    assert kernel.owner[("commands", "submit")] == "acme-submit"


def test_with_its_home_installed_the_third_party_row_has_the_error(monkeypatch) -> None:
    kernel = _kernel(monkeypatch)
    rows = {p.name: p for p in kernel.plugins}
    assert rows["acme-submit"].status == "error"
    assert rows["acme-submit"].error.endswith(
        "command 'submit' belongs to plugin 'clue-leaderboard', which is installed")
    assert kernel.owner[("commands", "submit")] == "clue-leaderboard"
