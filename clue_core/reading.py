"""Reading one split through a task's reader, and the checks every reader can rely on.

Readers turn files into examples; the kernel checks, once for every task, the split name,
that each example is of the task's kind, the kind's own example check (its spec's
``check_example``: labels among the task's labels, choice indices in range, non-empty answer
texts and turns, each kind's plugin says which), and unique ids in test files (the official
test files have unique ids, and the leaderboard scores by id).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clue_core.errors import ClueError, DataError, InputError, PluginError
from clue_core.examples import SplitData
from clue_core.kinds import KindSpec, kind_spec, spec_for
from clue_core.specs import TaskSpec, resolve


def read_split(task: TaskSpec, data_dir: Path, split: str, settings: Mapping[str, Any] | None = None, *,
               kinds: Mapping[str, KindSpec] | None = None) -> SplitData:
    """``task.reader(task, data_dir, split)``, checked; readers may return a plain sequence.

    A task that declares ``reader_settings`` gets their values as ``settings=``: the run's
    (``settings`` is its resolved settings, or a manifest's recorded values), their declared
    defaults where none is given (``clue-core check``, ``evaluate``). ``kinds`` is the caller's
    kernel's (``kernel.kinds``: the runner's): the examples are checked as that kernel declares their
    kind, not as another kernel in the process declared a kind of the same name; without it, the
    process's kinds (:mod:`clue_core.kinds`).
    """
    if kinds is not None:
        from clue_core.kinds import using

        with using(kinds):
            return read_split(task, data_dir, split, settings)
    if split not in task.readable_splits:
        raise ClueError(f"task {task.name} has no split {split!r} (has: {', '.join(task.readable_splits)})")
    from clue_core.data import describe_input_error

    extra: dict[str, Any] = {}
    if task.reader_settings:
        from clue_core.settings import ResolvedSettings

        extra["settings"] = ResolvedSettings.of(settings).values_for(task.reader_settings)
    try:
        result = _call_reader(task, data_dir, split, extra)
        check_examples(task, result, test=split not in task.splits)
    except InputError as exc:  # name the user's zip and member, not the cache copy
        raise describe_input_error(exc) from None
    except DataError as exc:  # a file the reader did not find: the same
        raise _in_users_zip(exc, data_dir, required=split in task.splits) from None
    return result


def _call_reader(task: TaskSpec, data_dir: Path, split: str, extra: dict[str, Any]) -> SplitData:
    """The reader's answer as a ``SplitData``; a reader that cannot be loaded, raises something other than
    the kernel's errors (a ``KeyError`` on a field it did not expect) or returns no sequence is a bug in its
    plugin: one line naming the task and the reader (``CLUE_STRICT_PLUGINS=1`` shows its traceback)."""
    try:
        reader = resolve(task.reader)
    except (ImportError, AttributeError, ValueError) as exc:
        raise PluginError(f"task {task.name}: reader {task.reader} could not be loaded ({type(exc).__name__}: "
                          f"{exc})") from exc
    try:
        result = reader(task, data_dir, split, **extra)
        if isinstance(result, SplitData):
            return result
        if result is None or isinstance(result, (str, bytes, dict)):
            raise PluginError(f"task {task.name}: reader {task.reader} returned {type(result).__name__}, not "
                              f"a SplitData or a sequence of examples")
        return SplitData(examples=tuple(result))
    except ClueError:
        raise
    except Exception as exc:
        raise PluginError(f"task {task.name}: reader {task.reader} raised {type(exc).__name__}: {exc}") from exc


def _in_users_zip(exc: DataError, data_dir: Path, required: bool) -> DataError:
    """A reader's ``DataError`` naming the user's zip, not the cache copy nobody knows about.

    A required split refuses the zip as a bad line does, so its copy is dropped at exit (a
    fixed zip is unpacked anew); a missing test version only skips that version.
    """
    from clue_core import data

    folder = str(data_dir)
    shown = data.display_path(folder)
    if shown == folder:
        return exc
    if required:
        data.mark_refused(folder)
    return DataError(str(exc).replace(folder + os.sep, shown + ":").replace(folder, shown))


def check_examples(task: TaskSpec, part: SplitData, *, test: bool = False) -> None:
    """Raise one clear error for the first example that breaks the task's contract."""
    kind = kind_spec(task.kind)
    example_type = _kind_ref(kind, "example")
    if not isinstance(example_type, type):
        raise PluginError(f"kind {kind.name!r}: example {kind.example} is a {type(example_type).__name__}, "
                          f"not a class")
    check = _kind_ref(kind, "check_example") if kind.check_example else None
    seen: dict[str, int] = {}
    shapes: set[type] = set()  # the example types whose id and gold attribute were looked for
    for index, example in enumerate(part.examples):
        if not isinstance(example, example_type):
            other = spec_for(example)
            if other is None:
                raise PluginError(f"task {task.name}: reader returned a {type(example).__name__}, not an example")
            raise PluginError(f"task {task.name}: reader returned a {other[0].name} example for a "
                              f"{task.kind} task")
        if type(example) not in shapes:
            _check_shape(kind, example)
            spec_for(example)  # two kinds of this type (one through a re-export the reader imported): refused
            shapes.add(type(example))
        problem = _checked(kind, check, task, example) if check else None
        if problem:
            raise _located(part, index, *problem)
        if test:
            key = str(example.id)
            if key in seen:
                raise _located(part, index, "id", f"duplicate id {example.id!r} (also at "
                                                  f"{part.origin(seen[key])})")
            seen[key] = index


def _kind_ref(kind: KindSpec, name: str) -> Any:
    """A kind's reference imported now: one that cannot be (a third party's typo) is one line naming it.

    The spec checks at load time look at a reference's shape only (listing imports no plugin code)."""
    ref = getattr(kind, name)
    try:
        return resolve(ref)
    except (ImportError, AttributeError, ValueError) as exc:
        raise PluginError(f"kind {kind.name!r}: {name} {ref} could not be loaded ({type(exc).__name__}: {exc})"
                          ) from None


def _check_shape(kind: KindSpec, example: Any) -> None:
    """An example has the ``id`` every record and leaderboard file keys by, and the attribute its kind's
    ``gold`` names (a misspelt one read every example as having no gold, and the split went unscored);
    the kind's gold and record_gold functions import."""
    name = type(example).__name__
    if not hasattr(example, "id"):
        raise PluginError(f"kind {kind.name!r}: its example type {name} has no id")
    if ":" not in kind.gold and not hasattr(example, kind.gold):
        raise PluginError(f"kind {kind.name!r}: gold {kind.gold!r} is not an attribute of its example type {name}")
    if ":" in kind.gold:  # imported now, naming the kind: gold_of in a metric would fail without naming it
        _kind_ref(kind, "gold")
    if kind.record_gold:
        _kind_ref(kind, "record_gold")


def _checked(kind: KindSpec, check: Any, task: TaskSpec, example: Any) -> tuple[str, str] | None:
    """The kind's ``check_example`` answer, ``(field, message)`` or None; its own failure is the plugin's, one line."""
    try:
        problem = check(task, example)
    except ClueError:
        raise
    except Exception as exc:  # a bug in the kind's plugin, not bad data: name the plugin's function
        raise PluginError(f"kind {kind.name!r}: check_example {kind.check_example} raised "
                          f"{type(exc).__name__}: {exc}") from exc
    if problem and not (isinstance(problem, tuple) and len(problem) == 2 and all(isinstance(p, str) for p in problem)):
        raise PluginError(f"kind {kind.name!r}: check_example {kind.check_example} must return (field, message) or "
                          f"None, got {type(problem).__name__}")
    return problem or None


def _located(part: SplitData, index: int, field: str, message: str) -> InputError:
    """An error at ``where``: ``"path:line"``, ``"path (record)"`` or anything else as the path."""
    origin = part.origin(index)
    path, sep, line = origin.rpartition(":")
    if sep and line.isdigit():
        return InputError(path, message, line=int(line), field=field)
    if origin.endswith(")") and " (" in origin:
        path, _, record = origin[:-1].rpartition(" (")
        return InputError(path, message, record=record, field=field)
    return InputError(origin, message, field=field)
