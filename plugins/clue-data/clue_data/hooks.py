"""The data plugin's hooks: the official-data fetcher, the zip opener and ``clue-core download``, as specs.

``clue-core list`` and ``--help`` import this module, so it builds specs and imports only
``clue_core.plugin``: the cache, the downloader, the unzipping and the click command load when used.
"""

from __future__ import annotations

from clue_core.plugin import CommandSpec, FetcherSpec, OpenerSpec, hookimpl

OFFICIAL = FetcherSpec(
    name="clue-data",
    help="The official archives each task declares (TaskSpec.source, or $CLUE_DATA_URL), downloaded "
         "resumably, verified against their size and checksums and unpacked once into $CLUE_HOME/data.",
    fetch="clue_data.cache:ensure_task_data",
    location="clue_data.cache:cached_task_dir",
)
ZIP = OpenerSpec(
    name="zip",
    help="A zip the user gives as --data-dir (or finds as <task>.zip in it), unpacked safely (no escapes, no "
         "bombs, no half-written folders) once per content into $CLUE_HOME/extracted/<sha256>.",
    suffixes=(".zip",),
    open="clue_data.opener:open_zip",
    recognises="clue_data.opener:is_zip",
    refused="clue_data.opener:refused",
)
DOWNLOAD = CommandSpec(
    name="download",
    help="Download, verify and extract official task data into the cache ($CLUE_HOME).",
    command="clue_data.command:download",
)


@hookimpl
def clue_data_fetchers() -> list[FetcherSpec]:
    return [OFFICIAL]


@hookimpl
def clue_data_openers() -> list[OpenerSpec]:
    return [ZIP]


@hookimpl
def clue_commands() -> list[CommandSpec]:
    return [DOWNLOAD]
