"""A third party's data fetcher, as tests register it: "fetches" a task by copying its bundled sample.

It stands for a mirror a lab keeps of the official files: it knows nothing of clue-data, only the
``FetcherSpec`` contract (``fetch(task, *, progress) -> Path``, ``location(task) -> Path``). Each
fetch is counted in ``CALLS`` so a test can tell it was this fetcher that brought the files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from clue_core.data import sample_dir
from clue_core.plugin import FetcherSpec, TaskSpec, clue_home, hookimpl

CALLS: list[tuple[str, bool]] = []


def location(task: TaskSpec) -> Path:
    return clue_home() / "mirror" / task.name


def fetch(task: TaskSpec, *, progress: bool) -> Path:
    CALLS.append((task.name, progress))
    folder = location(task)
    if not folder.is_dir():
        shutil.copytree(sample_dir(task), folder)
    return folder


MIRROR = FetcherSpec(name="lab-mirror", help="The lab's copy of the official files (a test stand-in).",
                     fetch="tests.support.mirror_fetcher:fetch", location="tests.support.mirror_fetcher:location")


class MirrorPlugin:
    """The plugin object a test registers on an isolated kernel."""

    @hookimpl
    def clue_data_fetchers(self) -> list[FetcherSpec]:
        return [MIRROR]
