"""Where a superclue run is in a folder the user names, and why a folder holds none.

``clue-core compare RUN`` and ``--set reference_run=DIR`` both accept an output folder
(``clue-core run -o``) holding ``<task>/`` or the task folder itself, and both must say, in
one line, what a folder holds instead of a run; the contents are read by the kernel's one
run reader (``clue_core.plugin.read_run``), so only the finding and the refusal live here.
"""

from __future__ import annotations

from pathlib import Path

from clue_core.plugin import MANIFEST


def task_folder(path: Path, task: str) -> Path:
    """The run's task folder: ``path/<task>`` when it exists, else ``path`` itself."""
    return path / task if (path / task).is_dir() else path


def no_run_here(path: Path, task: str, others_hint: str = "") -> str:
    """Why ``path`` holds no run of ``task``: an interrupted run, other tasks' runs, or nothing.

    ``others_hint`` follows the list of other tasks' runs (``compare`` says ``--task`` names
    the task to compare; a reference run has no such option).
    """
    if (path / f".{task}.staging").is_dir():
        why = f"only an interrupted run, .{task}.staging; 'clue-core run --resume' continues it"
    else:
        others = sorted(p.parent.name for p in path.glob(f"*/{MANIFEST}") if not p.parent.name.startswith("."))
        why = (f"it holds runs of {', '.join(others)}{others_hint}" if others
               else f"no {task}/ folder and no {MANIFEST}")
    return f"{path}: no {task} run here ({why})"
