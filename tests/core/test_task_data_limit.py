"""``--limit`` / ``--first`` are applied where a task's data is read (issue 30: the runner only
orchestrates): every split and every test version that :func:`read_task_data` reads comes back cut,
the data files' checksums are still the whole files', and the note saying so is the plan's last."""

from __future__ import annotations

import pytest

from clue_core.kernel import Kernel
from clue_core.planning import plan_run
from clue_core.plans import RunRequest
from clue_core.task_data import read_task_data


def _read(tmp_path, **asked):
    kernel = Kernel()
    request = RunRequest(tasks=["afqmc"], model="baseline", sample=True, output_dir=tmp_path / "out", **asked)
    [plan] = plan_run(kernel, request).plans  # a --dry-run's plan: nothing locked, nothing written
    read_task_data(plan, request, kernel)
    return plan


def test_without_a_limit_every_split_is_read_whole(tmp_path):
    whole = _read(tmp_path)
    assert {name: len(part.examples) for name, part in whole.splits.items()} == {"train": 34, "dev": 16}
    assert [len(part.examples) for part in whole.tests.values()] == [16]
    assert not any(note.startswith("partial run") for note in whole.notes)


@pytest.mark.parametrize("first", [False, True])
def test_a_limit_cuts_every_split_and_test_version_as_it_is_read(tmp_path, first):
    whole = _read(tmp_path / "whole")
    cut = _read(tmp_path / "cut", limit=5, first=first, seed=3)
    assert {name: len(part.examples) for name, part in cut.splits.items()} == {"train": 5, "dev": 5}
    assert [len(part.examples) for part in cut.tests.values()] == [5]
    for name, part in [*cut.splits.items(), *(("test " + v, p) for v, p in cut.tests.items())]:
        source = whole.splits[name] if name in whole.splits else whole.tests[name.removeprefix("test ")]
        ids = [e.id for e in source.examples]
        kept = [e.id for e in part.examples]
        assert kept == sorted(kept, key=ids.index)  # file order kept
        if first:
            assert kept == ids[:5]
    assert cut.checksums == whole.checksums  # the files the run read are the whole files, cut or not
    said = ("the first 5 examples (or example groups) per split in file order (--first)" if first
            else "at most 5 examples (or example groups) per split, drawn with seed 3")
    assert cut.notes == [*whole.notes, f"partial run: {said}; not comparable with full runs and not submittable"]
