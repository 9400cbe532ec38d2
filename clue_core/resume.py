"""``--resume`` settled once per task, the last step of planning a run (not ``--dry-run``): under the locks
planning took, before any data is read, a swap a kill interrupted is finished and the plan says whether
the task resumes its staging folder (``plan.resume``) or is a complete run left as it is (``plan.done``),
either refused in one line unless it is the run asked for. Only a resumed run's data files wait for the
data to be read (:func:`clue_core.task_data.read_task_data` compares them).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clue_core.errors import ClueError
from clue_core.record import MANIFEST, Manifest, read_manifest
from clue_core.rundir import is_complete
from clue_core.splits import TEST, dev_only, recorded_splits

if TYPE_CHECKING:
    from clue_core.plans import RunRequest, TaskPlan


def settle(plans: list[TaskPlan], request: RunRequest, *, main: bool) -> None:
    """Each task in order, under its lock, before its data is read: whether it resumes its staging folder
    (``plan.resume``, the same run as asked for: :func:`check_resume_matches`) or is a complete run that
    ``--resume`` leaves as it is (``plan.done``, checked too); replacing or discarding work unasked is
    refused. A swap a kill interrupted is finished first; a rank other than 0 follows what it finds."""
    for plan in plans:
        if main:
            _settle_folder(plan, request)
        else:
            plan.resume = request.resume and plan.paths.interrupted()
        if not plan.done:
            _settle_splits(plan, request)
            if plan.resume:
                check_resume_matches(plan, request)


def _settle_folder(plan: TaskPlan, request: RunRequest) -> None:
    """Rank 0's look at the task's run folder: ``plan.resume`` and ``plan.done``, or one line refusing."""
    paths = plan.paths
    paths.recover()
    if paths.final.exists() and not paths.final.is_dir():
        raise ClueError(f"{paths.final} is a file, not a run directory")
    staged, holds = paths.interrupted(), paths.final.exists() and any(paths.final.iterdir())
    if request.resume:
        plan.resume, plan.done = staged, not staged and holds and is_complete(paths.final)
        if not staged and holds and not plan.done:  # the user's files, or a damaged run
            raise ClueError(f"{paths.final} holds no complete run and there is no interrupted one to resume "
                            f"({paths.staging}); pass --overwrite to replace it, or use another --output-dir")
        if plan.done:
            check_resume_matches(plan, request, paths.final)
        elif staged and paths.staging.is_dir():  # a kill between a file's temporary sibling and its rename
            for stray in paths.staging.rglob(".*.????????.tmp"):  # left atomic's '.<name>.<hex>.tmp': not the run's
                stray.unlink(missing_ok=True)
    elif staged and not request.overwrite:
        raise ClueError(f"{paths.final}: an interrupted run is in {paths.staging}; pass --resume to continue it "
                        f"or --overwrite to discard it and start over")
    elif holds and not request.overwrite and not os.path.lexists(paths.final / MANIFEST):
        first = min(entry.name for entry in paths.final.iterdir())
        raise ClueError(f"{paths.final} holds files that are not a run (such as {first}); move them away or use "
                        f"another --output-dir (--overwrite would delete them once the new run is complete)")
    elif holds and not request.overwrite:
        raise ClueError(f"{paths.final} already holds a run; pass --overwrite to replace it (the old run stays "
                        f"until the new one is complete) or --resume to continue it")


def check_resume_matches(plan: TaskPlan, request: RunRequest, folder: Path | None = None) -> None:
    """Resume only the same model, task, data and schedule-changing settings; else say what differs.

    A resumed run's data files are compared once they are read (``task_data``). ``folder`` is
    a complete run that ``--resume`` would leave as it is: its data is not read again, but a different
    model, seed, schedule, data source or setting that changes the scores (``report``: few-shot ``shots``)
    must still be said, not answered with the old run's results.
    """
    complete = folder is not None
    try:
        manifest = read_manifest(folder if complete else plan.paths.staging)
    except ClueError as exc:
        raise ClueError(f"{exc}; use --overwrite to start over") from None
    want, had = _resume_identity(plan, request, manifest, complete)
    differ = [key for key in want if want[key] != had.get(key)]
    if "--splits" in differ:  # other splits read other files: the data differs because of them
        differ = [key for key in differ if key != "data"]
    if not differ:
        return
    detail = ", ".join(f"{k} ({had.get(k)!r} → {want[k]!r})" for k in differ[:4])
    if complete:
        raise ClueError(f"{folder} is a complete run with a different {detail}: --resume leaves it as it is; "
                        f"use --overwrite to replace it or another --output-dir")
    raise ClueError(f"cannot resume {plan.paths.staging}: it was started with a different {detail}; "
                    f"use --overwrite to start over")


def _resume_identity(plan: TaskPlan, request: RunRequest, manifest: Manifest, complete: bool
                     ) -> tuple[dict[str, Any], dict[str, Any]]:
    """What this run asks for and what the run in ``manifest`` was made with, key by key."""
    recorded = {**manifest.settings, **manifest.schedule}
    shown = plan.settings.shown()  # a run older than a schedule setting ran with its default: not refused for it
    names = {name for name in plan.settings.flagged("schedule")
             if name in recorded or shown[name] != plan.settings.declared[name].default}
    if complete:  # settings that change the scores; a run older than a setting is not refused for it
        names |= {name for name in plan.settings.flagged("report") if name in recorded}
    data = manifest.source
    want = {"model": request.model, "task": plan.task.name, "seed": request.seed, "limit": request.limit,
            "--first": request.first,
            **{f"setting {k}": _as_json(shown[k]) for k in sorted(names)}}
    had = {"model": manifest.model, "task": manifest.task, "seed": manifest.seed, "limit": manifest.limit,
           "--first": manifest.first,
           **{f"setting {k}": _as_json(recorded.get(k)) for k in sorted(names)}}
    had["--splits"] = ",".join(recorded_splits(manifest, plan.task))
    want["--splits"] = had["--splits"] if request.splits is None else ",".join(plan.predict)
    if not complete:  # its data files are compared once they are read (task_data)
        plan.resumed_files = data.get("files")
    elif "source" in data:
        want["data"] = _data_source(request.sample, request.data_dir)
        had["data"] = _data_source(data["source"] == "sample", data.get("user_data_dir"))
    return want, had


def _data_source(sample: bool, user_data_dir: str | Path | None) -> str:
    """Where a run's data came from, as far as it is known without reading it again."""
    if sample:
        return "the bundled sample"
    return os.path.normpath(str(user_data_dir)) if user_data_dir else "the downloaded data"


def _as_json(value: Any) -> Any:
    """``value`` as it reads back from a manifest (a tuple is a list there)."""
    return json.loads(json.dumps(value))


def _settle_splits(plan: TaskPlan, request: RunRequest) -> None:
    """A resumed run without ``--splits`` keeps the splits it started with (its data checksums are of
    those), and a run that skips test says it writes no submission."""
    if plan.resume and request.splits is None:
        with contextlib.suppress(ClueError):  # check_resume_matches says what is wrong with the staged manifest
            plan.predict = recorded_splits(read_manifest(plan.paths.staging), plan.task)
    if plan.task.test_versions and TEST not in plan.predict:
        plan.notes.append(f"{dev_only(plan.predict)}: the test split is not predicted, so no submission files "
                          f"are written; run without --splits to submit {plan.task.name}")
