"""A sweep folder (``clue-core sweep -o DIR``) as the report reads it.

A sweep writes each trial as an ordinary run one level further down than ``clue-core run -o``
does (``DIR/<trial id>/<task>/``) and lists them in ``DIR/summary.json`` (schema
``clue-core/sweep@1``). The report reads the trials that file lists — not every folder on disk:
a value removed from the grid leaves its folders behind, and the summary no longer counts them —
and gives each run the trial's grid values, so that each configuration (model × grid point) is
a row of its own, its seeds averaged, rather than being folded into one row per model where the
configuration with the most runs would win. The configuration the summary's ``best`` names for a
task (chosen on dev, as the sweep chose it) is marked in that row's cell.

The file is read as JSON here, with its fields checked: the report imports nothing from the sweep
plugin (plugins depend only on ``clue_core.plugin``), and a damaged or hostile summary is one line
naming the file and the field, never a traceback or a path outside ``DIR``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from clue_core.plugin import ClueError

SUMMARY = "summary.json"
SCHEMA = "clue-core/sweep@1"


@dataclass(frozen=True)
class Trial:
    """One trial the summary lists: where its run is, its grid values, whether its configuration is the best."""

    id: str
    task: str
    status: str
    error: str | None
    run_dir: Path
    settings: dict[str, Any]
    best: bool

    @property
    def staging(self) -> Path:
        """Where an interrupted trial's run is (the kernel's ``.<task>.staging`` beside the run folder)."""
        return self.run_dir.parent / f".{self.run_dir.name}.staging"

    def info(self, folder: Path) -> dict[str, Any]:
        """What report.json keeps of the trial on its run (``runs[].sweep``)."""
        return {"folder": str(folder), "trial": self.id, "settings": dict(self.settings), "best": self.best}


@dataclass
class Sweep:
    """A sweep folder's summary: its status and trials, in the summary's order."""

    folder: Path
    status: str
    trials: list[Trial] = field(default_factory=list)

    def note(self) -> str | None:
        """A line for *Read this first* when the sweep has not finished cleanly, else None."""
        if self.status == "complete":
            return None
        done = sum(t.status == "complete" for t in self.trials)
        return (f"sweep {self.folder}: status {self.status!r}, {done} of {len(self.trials)} trial(s) complete; "
                f"the best configurations are those among the completed trials")


def is_sweep(folder: Path) -> bool:
    """Whether ``folder`` holds a sweep's summary.json (by its schema: another tool's summary.json is not one)."""
    path = folder / SUMMARY
    if not path.is_file():
        return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return _mentions_schema(path)
    return isinstance(data, dict) and SCHEMA in (data.get("schema"), data.get("format"))


def _mentions_schema(path: Path) -> bool:
    """A summary.json that is not JSON but names the sweep's schema: a damaged sweep summary (refused by
    :func:`read_sweep` with its error), not someone else's file."""
    try:
        return SCHEMA in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _field(path: Path, where: str, value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, kind):
        raise ClueError(f"{path}: field '{where}' must be {what}, got {json.dumps(value, default=str)[:80]}")
    return value


def _inside(path: Path, folder: Path, where: str, value: str) -> Path:
    """``folder/value``, refused unless a relative path that stays in ``folder`` (no ``..``, no link out)."""
    relative = PurePosixPath(value)
    if not value or relative.is_absolute() or ".." in relative.parts or "\\" in value:
        raise ClueError(f"{path}: field '{where}' {value!r} is not a folder inside the sweep folder")
    target = folder / relative
    try:
        target.resolve().relative_to(folder.resolve())
    except ValueError:
        raise ClueError(f"{path}: field '{where}' {value!r} leads outside the sweep folder") from None
    return target


def read_sweep(folder: Path) -> Sweep:
    """The sweep in ``folder`` (:func:`is_sweep` said there is one); a field it cannot read is one line."""
    path = folder / SUMMARY
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise ClueError(f"{path}: cannot read the sweep's summary ({exc}); rerunning the sweep rebuilds it") \
            from None
    if not isinstance(data, dict):
        raise ClueError(f"{path}: not a sweep summary (an object with 'trials' and 'best')")
    status = _field(path, "status", data.get("status"), str, "a string")
    trials = _field(path, "trials", data.get("trials"), list, "a list")
    best = _field(path, "best", data.get("best", {}), dict, "an object")
    best_runs: set[str] = set()
    for task, chosen in best.items():
        _field(path, f"best.{task}", chosen, dict, "an object")
        runs = _field(path, f"best.{task}.runs", chosen.get("runs"), list, "a list")
        best_runs |= {_field(path, f"best.{task}.runs[{i}]", r, str, "a string") for i, r in enumerate(runs)}
    sweep = Sweep(folder, status)
    for i, trial in enumerate(trials):
        where = f"trials[{i}]"
        _field(path, where, trial, dict, "an object")
        texts = {key: _field(path, f"{where}.{key}", trial.get(key), str, "a string")
                 for key in ("id", "task", "status", "run_dir")}
        error = trial.get("error")
        config = _field(path, f"{where}.config", trial.get("config", {}), dict, "an object")
        sweep.trials.append(Trial(texts["id"], texts["task"], texts["status"], error if isinstance(error, str)
                                  else None, _inside(path, folder, f"{where}.run_dir", texts["run_dir"]),
                                  dict(config), texts["run_dir"] in best_runs))
    return sweep
