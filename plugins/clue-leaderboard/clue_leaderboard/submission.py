"""Check leaderboard files against their test files and pack them into one zip.

The leaderboard scores JSON Lines files by position and silently mis-scores files with
class indices, batch-local ids, missing or shuffled lines; so every file is re-read and
compared with the test file it answers before anything is packed. :func:`build_submission` is both
``clue-core submit`` and ``clue_core.api.submit`` (the ``submit`` spec's ``api``); :func:`match_entries`
also lines up the files ``clue-core evaluate`` scores. Which run folders are packed is
:mod:`clue_leaderboard.runs`.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    MANIFEST,
    SUBMISSION_DIR,
    TEST_SPLIT,
    ClueError,
    Example,
    ExampleId,
    InputError,
    Manifest,
    PlanVariant,
    Registry,
    TaskSpec,
    atomic_open,
    disk_fault_message,
    iter_jsonl,
    no_test_label,
    read_manifest,
    read_split,
    recorded_splits,
    resolve,
    resolve_task_data,
)
from clue_leaderboard.runs import find_run_dirs, leaderboard_runs, nothing_to_submit

#: A kind's ``check_prediction(task, example, value)``: what is wrong with a value, or None.
PredictionCheck = Callable[[TaskSpec, Example, Any], "str | None"]


@dataclass(frozen=True)
class CheckedFile:
    task: str
    version: str
    name: str
    path: Path
    entries: int


def check_value(check: PredictionCheck, task: TaskSpec, example: Example, value: Any, path: Path,
                where: dict[str, Any], value_field: str | None = None) -> None:
    """A prediction value must be what the leaderboard expects for the task's kind: ``check`` is the kind's
    ``check_prediction`` (:func:`prediction_check`), so a kind a plugin brings is checked as the built-in
    three are.

    ``value_field`` is the name the file gives the value (``prediction`` in a run's own predictions), so
    the message names the field the user sees; None for a leaderboard file, whose field is the one the
    task's writer read the value from (:func:`field_in_file`: ``answer`` in KgCLUE's file, not ``label``).
    """
    try:
        problem = check(task, example, value)
    except Exception as exc:  # the kind's plugin is broken, not the file: one line naming the kind
        raise ClueError(f"kind {task.kind!r}: check_prediction raised {type(exc).__name__}: {exc}") from None
    if problem is None:
        return
    if not isinstance(problem, str):  # False, 0, a list: not the contract's None-or-message
        raise ClueError(f"kind {task.kind!r}: check_prediction answered {problem!r}, not None or a message")
    field = value_field or field_in_file(path, where.get("line"), value)
    raise InputError(path, problem, field=field, **where)


def field_in_file(path: Path, position: int | None, value: Any) -> str:
    """The field of the ``position``-th JSON line of ``path`` that holds ``value``: the one the task's writer
    read it from (``label``, KgCLUE's and CHID's ``answer``).

    A writer declares its format only in words, so the entry's own line says which field it is; asked only
    when a value is refused, so a file that passes is read once. ``label`` where the line cannot say (a keyed
    file, ``{id: value}``, or a line whose other fields hold the same value).
    """
    if position is not None:
        with contextlib.suppress(ClueError, OSError, ValueError):  # not JSON Lines: the writer's own format
            record = next(r for n, (_, r) in enumerate(iter_jsonl(path), start=1) if n == position)
            names = [name for name in record if name != "id"]
            holding = [name for name in names if record[name] == value]
            if len(holding) == 1 or len(names) == 1:
                return (holding or names)[0]
    return "label"


def prediction_check(kernel: Registry, task: TaskSpec) -> PredictionCheck:
    """The ``check_prediction`` of ``task``'s kind, imported now; one that cannot be is one line naming it."""
    ref = kernel.kind(task.kind).check_prediction
    try:
        check = resolve(ref)
    except Exception as exc:  # a kind's plugin is broken: its ref, not a traceback
        raise ClueError(f"kind {task.kind!r}: check_prediction {ref} could not be loaded "
                        f"({type(exc).__name__}: {exc})") from None
    return check  # type: ignore[no-any-return]


def match_entries(
    task: TaskSpec,
    examples: Sequence[Example],
    entries: Sequence[tuple[ExampleId, Any]],
    path: Path,
    *,
    kernel: Registry,
    ordered: bool,
    allow_missing: bool = False,
    gold_name: str = "the test file",
    exact_id_types: bool = False,
    line_based: bool | None = None,
    value_field: str | None = None,
) -> list[Any]:
    """Line up parsed ``(id, value)`` entries with the examples; values in example order.

    ``ordered`` files must have one line per example in the test file's order; keyed
    files must name every example exactly once. Missing entries are ``None`` only when
    ``allow_missing`` (the official CMRC2018 script scores them 0). ``exact_id_types``
    insists that an ordered file echoes ids with the test file's own JSON type (``0``, not ``"0"``).
    ``line_based`` (default: ``ordered``) says whether entries are lines of the file, so
    messages name the line; otherwise they name the entry by its id. Each value is checked by the
    task's kind in ``kernel`` (:func:`check_value`); a refusal names ``value_field``, or where None the
    field the file holds the value in (:func:`field_in_file`).
    """
    line_based = ordered if line_based is None else line_based
    check = prediction_check(kernel, task)
    if ordered and not allow_missing:
        if len(entries) != len(examples):
            raise InputError(path, f"has {len(entries)} lines for {len(examples)} examples in {gold_name}"
                             " (one line per example, in file order)")
        for line, ((entry_id, value), example) in enumerate(zip(entries, examples), start=1):
            if str(entry_id) != str(example.id):
                raise InputError(path, f"id {entry_id!r} where {gold_name} has {example.id!r} "
                                 "(lines must follow its order)", line=line, field="id")
            if exact_id_types and type(entry_id) is not type(example.id):
                raise InputError(path, f"id {json.dumps(entry_id)} where {gold_name} has {json.dumps(example.id)} "
                                 "(echo the file's own id, with its type)", line=line, field="id")
            check_value(check, task, example, value, path, {"line": line}, value_field)
        return [value for _, value in entries]
    by_id: dict[str, Any] = {}
    for position, (entry_id, value) in enumerate(entries, start=1):
        key = str(entry_id)
        where = {"line": position} if line_based else {"record": f"id {key}"}
        if key in by_id:
            raise InputError(path, f"id {entry_id!r} appears more than once", field="id", **where)
        by_id[key] = (value, where)
    known = {str(e.id) for e in examples}
    unknown = [key for key in by_id if key not in known]
    if unknown:
        raise InputError(path, f"{len(unknown)} id(s) not in {gold_name}, first {unknown[0]!r}", field="id")
    values: list[Any] = []
    missing = []
    for example in examples:
        found = by_id.get(str(example.id))
        if found is None:
            missing.append(example.id)
            values.append(None)
            continue
        check_value(check, task, example, found[0], path, found[1], value_field)
        values.append(found[0])
    if missing and not allow_missing:
        raise InputError(path, f"no prediction for {len(missing)} of {len(examples)} examples, first id {missing[0]!r}")
    return values


def complete_manifest(run_dir: Path) -> Manifest:
    """The manifest of a complete, full run (a ``--limit`` subset is no leaderboard entry)."""
    manifest = read_manifest(run_dir)
    if manifest.partial:
        raise ClueError(f"{run_dir}: a partial run (--limit {manifest.limit}) cannot be "
                        f"submitted; run the task without --limit")
    if not manifest.complete:
        raise ClueError(f"{run_dir}: the run did not complete (status {manifest.status!r}); run it again")
    return manifest


def test_data_dir(task: TaskSpec, manifest: Manifest, run_dir: Path) -> Path:
    source = manifest.source
    if source.get("source") == "sample":
        return resolve_task_data(task, sample=True)
    if not source.get("data_dir"):  # else Path("") would read the test data of the current folder
        raise InputError(run_dir / MANIFEST, "names no data folder, so its files cannot be checked against the "
                         "test data they answer", field="data.data_dir")
    folder = Path(source["data_dir"])
    if not folder.is_dir() and not folder.is_absolute():  # --data-dir as given, relative to a folder not recorded
        raise ClueError(f"{run_dir}: the test data it was run on ({folder}) is a path relative to the folder the "
                        f"run was started in, not found from {Path.cwd()}; run submit from that folder")
    if not folder.is_dir():
        raise ClueError(f"{run_dir}: the test data it was run on ({folder}) is gone; cannot check its files")
    return folder


def run_task(kernel: Registry, run_dir: Path, manifest: Manifest) -> TaskSpec:
    """The task the manifest names; an unknown one names the manifest, so the user knows which run."""
    name = manifest.task
    if not isinstance(name, str) or not name:
        raise InputError(run_dir / MANIFEST, f"expected a task name, got {name!r}", field="task")
    try:
        task = kernel.task(name)
    except ClueError as exc:  # an unknown name (UnknownNameError), with its suggestion
        raise InputError(run_dir / MANIFEST, str(exc), field="task") from None
    if not task.test_versions:
        raise ClueError(f"{run_dir}: a {task.name} run has no leaderboard files to submit (the task has no "
                        f"test set that a leaderboard scores)")
    return task


def repeat_variant(task: TaskSpec, manifest: Manifest, run_dir: Path) -> PlanVariant | None:
    """The variant of the task's ``repeat`` a run ran (``split=3`` of ``split=all``: its files' suffix), by its
    manifest's ``repeat``, else None."""
    variants = task.repeat.expand(task, None, {}) if manifest.repeat and task.repeat is not None else []
    found = next((v for v in variants if all(manifest.repeat.get(k) == x for k, x in v.record.items())), None)
    if variants and found is None:
        raise InputError(run_dir / MANIFEST, f"expected one of {task.name}'s {variants[0].family} values "
                         f"({', '.join(v.record['value'] for v in variants)}), got {json.dumps(manifest.repeat)}",
                         field="repeat")
    return found


def check_families(kernel: Registry, run_dirs: Sequence[Path]) -> None:
    """Every training of a repeated task (FewCLUE's six of ``split=all``), or none: its board wants all files.

    One that is missing (interrupted and awaiting ``--resume``, or deleted) would leave a hole that the
    leaderboard scores as a failed split; one made by another model would be packed as if it were the same.
    """
    families: dict[str, dict[str, tuple[Path, str | None]]] = {}
    for run_dir in run_dirs:
        manifest = read_manifest(run_dir)
        task = run_task(kernel, run_dir, manifest)
        variant = repeat_variant(task, manifest, run_dir)
        if variant is not None:  # a variant twice (two output folders) is refused with its file name later
            families.setdefault(task.name, {}).setdefault(variant.suffix, (run_dir, manifest.model))
    for name, runs in families.items():
        variants = kernel.task(name).repeat.expand(kernel.task(name), None, {})
        family = variants[0].family  # "split=all"
        models = sorted({str(model) for _, model in runs.values()})
        if len(models) > 1:
            raise ClueError(f"{name} {family}: its runs were made by {len(models)} models ({', '.join(models)}); "
                            f"submit the runs of one model")
        missing = [v for v in variants if v.suffix not in runs]
        if missing:
            folder = next(iter(runs.values()))[0].parent
            wanted = ", ".join(f"{name}{v.suffix}" for v in missing)
            raise ClueError(f"{name} {family}: no complete run of {missing[0].record['setting']} "
                            f"{', '.join(v.record['value'] for v in missing)} among the runs given (expected "
                            f"{wanted} in {folder}); the board needs all {len(variants)} files (an interrupted run "
                            f"continues with --resume)")


def check_run(kernel: Registry, run_dir: Path) -> list[CheckedFile]:
    """Validate every submission file of one run against the test file it answers."""
    manifest = complete_manifest(run_dir)
    task = run_task(kernel, run_dir, manifest)
    predicted = recorded_splits(manifest, task)
    if TEST_SPLIT not in predicted:
        raise ClueError(f"{run_dir}: {no_test_label(predicted)}: the run predicted no test split, so it has no "
                        f"submission files; run {task.name} again without --splits to submit it")
    variant = repeat_variant(task, manifest, run_dir)
    if variant is not None:  # one training of split=all: its files carry the suffix
        task = variant.task
    writer = kernel.writer(task.writer)
    read = resolve(writer.read)
    folder = test_data_dir(task, manifest, run_dir)
    checked = []
    missing_versions = [v.version for v in task.test_versions if v.version not in manifest.test_versions]
    if missing_versions:
        raise ClueError(f"{run_dir}: {task.name} has no predictions for test version(s) "
                        f"{', '.join(missing_versions)}; the leaderboard needs every test file of a task")
    for version in task.test_versions:
        path = run_dir / SUBMISSION_DIR / version.submission_file
        if not path.is_file():
            raise ClueError(f"{run_dir}: missing submission file {version.submission_file}")
        examples = read_split(task, folder, version.split, manifest.settings, kinds=kernel.kinds).examples
        entries = read(path)
        match_entries(task, examples, entries, path, kernel=kernel, ordered=writer.ordered, exact_id_types=True,
                      gold_name=f"{task.name} test {version.version}")
        checked.append(CheckedFile(task.name, version.version, version.submission_file, path, len(entries)))
    return checked


def build_submission(kernel: Registry, paths: Sequence[Path], output: Path, *, force: bool = False,
                     skipped: list[str] | None = None) -> list[CheckedFile]:
    """Check every run's files, then write them at the root of one zip (atomically); ``skipped`` gets a
    folder's runs that no leaderboard scores (:func:`~clue_leaderboard.runs.leaderboard_runs`)."""
    if output.suffix.lower() != ".zip":
        raise ClueError(f"{output}: the submission must be a .zip file")
    if output.is_dir():  # --force replaces a zip, never a folder (os.replace could not anyway)
        raise ClueError(f"{output} is a folder, not a zip file; name the zip to write")
    if not force and _taken(output):
        raise ClueError(_exists(output))
    checked: list[CheckedFile] = []
    run_dirs = leaderboard_runs(kernel, paths, find_run_dirs(paths), skipped := [] if skipped is None else skipped)
    for run_dir in run_dirs:
        checked.extend(check_run(kernel, run_dir))
    check_families(kernel, run_dirs)
    if not checked:
        raise ClueError(nothing_to_submit(paths, skipped))
    names: dict[str, CheckedFile] = {}
    for item in checked:
        if item.name in names:
            raise ClueError(f"{item.name} comes from two runs: {names[item.name].path} and {item.path}")
        names[item.name] = item
    write_zip(output, checked, force=force)
    return checked


def _taken(output: Path) -> bool:
    """Something is in the zip's place: a file, or a symlink, even one pointing nowhere."""
    return output.exists() or output.is_symlink()


def _exists(output: Path) -> str:
    return f"{output} exists; pass --force to replace it"


def write_zip(output: Path, checked: Sequence[CheckedFile], *, force: bool = False) -> None:
    """Pack the checked files atomically; a disk fault is one line naming the zip (nothing is left).

    Without ``force`` the zip is written beside ``output`` and published with a hard link, which
    fails where anything is in its place: two ``submit`` runs writing one zip at once (each saw no
    zip when it began) get one zip and one refusal, never a silent replacement.
    """
    staged = output if force else output.with_name(f".{output.name}.{secrets.token_hex(4)}.new")
    try:
        with atomic_open(staged, "wb") as handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as archive:
            for item in checked:
                archive.write(item.path, arcname=item.name)
        if not force:
            _publish(staged, output)
    except OSError as exc:
        if exc.filename in (None, str(staged)):  # inside zipfile, or the staged copy: the zip is the file meant
            exc = OSError(exc.errno, exc.strerror, str(output))
        raise ClueError(disk_fault_message("cannot write the submission", exc)) from None
    finally:
        if not force:
            with contextlib.suppress(OSError):  # published (a second name) or failed: the staged name goes
                os.unlink(staged)


def _publish(staged: Path, output: Path) -> None:
    """Give the staged zip its name unless something took the name meanwhile."""
    try:
        os.link(staged, output)
    except FileExistsError:
        raise ClueError(_exists(output)) from None
    except OSError:  # a file system without hard links (FAT, some shares): check, then rename, as before
        if _taken(output):
            raise ClueError(_exists(output)) from None
        os.replace(staged, output)
