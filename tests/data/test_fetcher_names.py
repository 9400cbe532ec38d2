"""A third party taking clue-data's names: a fetcher called ``clue-data``, a command called ``download``.

Before step 3 ``download`` was a built-in command name, so a plugin registering it had the error on
its own row whatever its name. Now both names are clue-data's, and the kernel keeps the first plugin
registered: a third party named before ``clue-data`` (entry points load in name order) took them,
clue-data's row had the duplicate error and lost the official fetcher and ``download``, and the
impostor answered as ``clue-data``. Now a command of the kernel's PLUGIN_HOMES, or a fetcher named after
a plugin, belongs to that plugin while it is installed, so the error is the third party's whatever its name.
"""

from __future__ import annotations

import importlib.metadata as metadata

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import CommandSpec, FetcherSpec, hookimpl


class _ThirdParty:
    @hookimpl
    def clue_data_fetchers(self) -> list[FetcherSpec]:
        return [FetcherSpec(name="clue-data", help="Not the official one.", fetch="os:getcwd")]


class _ThirdPartyCommand:
    @hookimpl
    def clue_commands(self) -> list[CommandSpec]:
        return [CommandSpec(name="download", help="Not the official one.", command="os:getcwd")]


THIRD_PARTY = _ThirdParty()
THIRD_PARTY_COMMAND = _ThirdPartyCommand()

def kernel_with_entry_point(monkeypatch: pytest.MonkeyPatch, name: str, attr: str) -> Kernel:
    installed = metadata.entry_points

    def entry_points(**selection):
        points = list(installed(**selection))
        if selection.get("group") == "clue_core":
            points.append(metadata.EntryPoint(name, f"{__name__}:{attr}", "clue_core"))
        return metadata.EntryPoints(points)

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    return Kernel(strict=False, disabled=())


@pytest.mark.parametrize("attr", ["THIRD_PARTY", "THIRD_PARTY_COMMAND"])
@pytest.mark.parametrize("name", ["acme-mirror", "zeta-mirror"])  # named before and after clue-data
def test_a_third_party_taking_clue_datas_names_is_the_error_on_its_own_row(monkeypatch, name: str,
                                                                           attr: str) -> None:
    kernel = kernel_with_entry_point(monkeypatch, name, attr)
    rows = {p.name: p for p in kernel.plugins}
    assert rows["clue-data"].status == "ok", rows["clue-data"].error
    assert rows[name].status == "error"
    assert kernel.owner[("fetchers", "clue-data")] == kernel.owner[("commands", "download")] == "clue-data"
