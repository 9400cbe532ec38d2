"""Which run folders ``clue-core submit`` packs: a run, a folder's ``submit.json`` selection, or a folder of runs.

Kept apart from the checks of the files themselves (:mod:`clue_leaderboard.submission`): choosing the
folders is about the disk (a selection must stay inside its folder, a ``.<task>.staging`` folder is a run
still being built or interrupted, never packed), checking them is about the leaderboard.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from clue_core.plugin import MANIFEST, ClueError, InputError, Registry

#: A folder's own choice of runs to submit: ``{"schema": SELECTION_SCHEMA, "runs": [relative paths]}``.
SELECTION = "submit.json"
SELECTION_SCHEMA = "clue-core/selection@1"


def selected_runs(folder: Path) -> list[Path] | None:
    """The runs ``folder/submit.json`` names (a sweep's best configuration per task), or None without one.

    Any tool may write it; each path is relative to the folder and must stay inside it, so a
    selection never packs files from elsewhere on the disk.
    """
    path = folder / SELECTION
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as exc:
        raise InputError(path, f"unreadable selection ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SELECTION_SCHEMA:
        raise InputError(path, f"expected {SELECTION_SCHEMA!r}", field="schema")
    runs = data.get("runs")
    if not isinstance(runs, list) or not runs or not all(isinstance(r, str) and r for r in runs):
        raise InputError(path, "expected a non-empty list of run folders relative to this file", field="runs")
    root, chosen = folder.resolve(), []
    for position, name in enumerate(runs):
        run_dir = folder / name
        if Path(name).is_absolute() or not run_dir.resolve().is_relative_to(root):
            raise InputError(path, f"{name!r} is outside {folder}", field=f"runs[{position}]")
        if not (run_dir / MANIFEST).is_file():
            raise InputError(path, f"{name!r} is not a run directory (no {MANIFEST})", field=f"runs[{position}]")
        chosen.append(run_dir)
    return chosen


def find_run_dirs(paths: Sequence[Path]) -> list[Path]:
    """Each path is a task's run dir (with a manifest), a folder whose ``submit.json`` selects runs, or
    a folder of runs."""
    found: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        if not path.is_dir():
            raise ClueError(f"{path}: no such run directory")
        selection = None if (path / MANIFEST).is_file() else selected_runs(path)
        if (path / MANIFEST).is_file():
            children = [path]
        elif selection is not None:
            children = selection
        else:
            # .<task>.staging folders are runs being built (or interrupted, awaiting --resume), not runs
            children = sorted(p.parent for p in path.glob(f"*/{MANIFEST}") if not p.parent.name.startswith("."))
        if not children:
            unfinished = unfinished_runs(path)
            hint = f"; {unfinished}: continue with clue-core run --resume" if unfinished else ""
            raise ClueError(f"{path}: not a run directory (no {MANIFEST} in it or its sub-folders{hint})")
        for child in children:  # a run named twice (itself and its folder) is packed once
            if child.resolve() not in seen:
                seen.add(child.resolve())
                found.append(child)
    return found


def unfinished_runs(folder: Path) -> str:
    """``.tnews.staging holds a run that did not finish`` for the staging folders of runs killed (or still
    running) in ``folder``, which are never packed; ``""`` where there are none."""
    staged = sorted(p.parent.name for p in folder.glob(f".*/{MANIFEST}"))
    many = len(staged) > 1
    return f"{', '.join(staged)} {'hold runs' if many else 'holds a run'} that did not finish" if staged else ""


def leaderboard_runs(kernel: Registry, paths: Sequence[Path], run_dirs: Sequence[Path], skipped: list[str]
                     ) -> list[Path]:
    """``run_dirs`` less the runs found in a folder of runs whose task no leaderboard scores (DataCLUE's,
    SuperCLUE's), each noted in ``skipped``; a run named itself stays, to be refused for it in one line, as
    its files were asked for. A manifest that cannot be read stays too: the checks say what is wrong."""
    named = {path.resolve() for path in paths if (path / MANIFEST).is_file()}
    kept = []
    for run_dir in run_dirs:
        try:
            task = kernel.task(str(json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))["task"]))
        except (OSError, ValueError, KeyError, TypeError, ClueError):
            task = None
        if run_dir.resolve() in named or task is None or task.test_versions:
            kept.append(run_dir)
        else:
            skipped.append(f"{run_dir} ({task.name}: no leaderboard scores its runs)")
    return kept


def nothing_to_submit(paths: Sequence[Path], skipped: Sequence[str]) -> str:
    """The one line for a submit that found no leaderboard files, naming the runs left out (and why)."""
    left_out = f": {'; '.join(skipped)}" if skipped else ""
    return f"no leaderboard files to submit in {', '.join(map(str, paths))}{left_out}"
