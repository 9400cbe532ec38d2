"""Field checks of the run record's files: one InputError per problem, naming the file and the field.

Kept apart from :mod:`clue_core.record` (the types and the reader) so each stays short; the
rules are the ones the report checked before the record had one reader: every number finite
(NaN would average into every group score), ``primary`` equal to ``dev[primary_metric]``, and
a field of the wrong type in a run a newer clue-core wrote says that upgrading is the fix.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from clue_core import __version__
from clue_core.errors import InputError

RUN_SCHEMA = "clue-core/run@1"


def _release(version: str) -> tuple[int, ...]:
    """``"0.10.2rc1"`` → ``(0, 10, 2)``: the release numbers, ordered without the packaging library."""
    parts = []
    for part in version.split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        parts.append(int(match.group()))
    return tuple(parts)


def newer_writer(manifest: dict[str, Any] | None) -> str:
    """The clause naming a newer clue-core that wrote the run (its manifest's ``clue_core``), or ``""``."""
    writer = (manifest or {}).get("clue_core")
    if isinstance(writer, str) and _release(writer) > _release(__version__):
        return f" (written by clue-core {writer}, newer than this {__version__}: upgrade clue-core to read it)"
    return ""


def is_number(value: Any) -> bool:
    """A finite int or float: NaN or Infinity (JSON's extensions) would average into every score."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null or missing)"
    if value == "":
        return "an empty string"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(type(value), repr(value))


class Check:
    """Field checks of one object of one file; each failure is one InputError naming file and field."""

    def __init__(self, path: Path, data: dict[str, Any], hint: str = "", line: int | None = None,
                 prefix: str = "") -> None:
        self.path, self.data, self.hint, self.line, self.prefix = path, data, hint, line, prefix

    def fail(self, field: str, expected: str, value: Any) -> InputError:
        return InputError(self.path, f"expected {expected}, got {_kind(value)}{self.hint}",
                          field=f"{self.prefix}{field}", line=self.line)

    def within(self, key: str) -> Check:
        """The checks of the object under ``key`` (checked to be one), its fields named ``key.field``."""
        self.of_type(key, dict, "an object")
        return Check(self.path, self.data.get(key) or {}, self.hint, self.line, f"{self.prefix}{key}.")

    def finite(self) -> None:
        """No NaN or Infinity anywhere: no clue-core writes one (its JSON writers refuse them), and a
        metric or the report would average one into a score or write a file browsers cannot read."""
        found = non_finite(self.data)
        if found is not None:
            raise self.fail(found[0], "a finite number", found[1])

    def strings(self, key: str) -> None:
        """A list of texts (notes, file names, the command's words)."""
        self.of_type(key, list, "a list")
        for index, item in enumerate(self.data.get(key) or ()):
            if not isinstance(item, str):
                raise self.fail(f"{key}[{index}]", "a string", item)

    def name(self, key: str, *, required: bool = False) -> None:
        value = self.data.get(key)
        if not (isinstance(value, str) and value) and (required or value is not None):
            raise self.fail(key, "a name", value)

    def of_type(self, key: str, kind: type, expected: str) -> None:
        value = self.data.get(key)
        if value is not None and (not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool)):
            raise self.fail(key, expected, value)

    def numbers(self, key: str, *, nullable: bool) -> None:
        self.of_type(key, dict, "an object")
        for name, value in (self.data.get(key) or {}).items():
            if not (is_number(value) or (nullable and value is None)):
                raise self.fail(f"{key}.{name}", "a number or null" if nullable else "a number", value)


class NewerRecord(InputError):
    """A record of a schema this clue-core does not know (a newer one's): refused by name, never
    taken for a damaged run that ``--overwrite`` may replace."""


def check_schema(path: Path, data: dict[str, Any]) -> None:
    """No ``schema`` is this release's own format (written before the field); another name is refused
    as a newer one's. A ``schema`` that is no name at all (a number, a list, null) is a damaged file,
    not a newer one: upgrading would not read it, ``--overwrite`` replaces it."""
    schema = data.get("schema", RUN_SCHEMA)
    if schema == RUN_SCHEMA:
        return
    if not isinstance(schema, str) or not schema:
        raise InputError(path, f"expected the schema name {RUN_SCHEMA}, got {_kind(schema)} (a damaged file)",
                         field="schema")
    raise NewerRecord(path, f"written by a newer clue-core (schema {schema}); upgrade clue-core", field="schema")


def load_object_text(text: str) -> Any:
    """``json.loads``, with a nesting too deep to decode a ValueError like any other broken JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


def non_finite(data: Any) -> tuple[str, Any] | None:
    """The field (``raw.logprobs[2]``) and value of the first NaN or Infinity in ``data``, or None.

    A first pass only looks (a test split has many records); the names are built on a find.
    """
    stack = [data]
    while stack:
        value = stack.pop()
        if type(value) is float:
            if not math.isfinite(value):
                break
        elif type(value) is dict:
            stack.extend(value.values())
        elif type(value) is list:
            stack.extend(value)
    else:
        return None
    named: list[tuple[str, Any]] = [("", data)]
    while named:
        at, value = named.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return at, value
        if isinstance(value, dict):
            named.extend((f"{at}.{key}" if at else str(key), item) for key, item in value.items())
        elif isinstance(value, list):
            named.extend((f"{at}[{index}]", item) for index, item in enumerate(value))
    return None


def check_primary(check: Check) -> None:
    """``primary`` is ``dev[primary_metric]``: the summary prints the one and the HTML report the other,
    so a file where they disagree (or the metric is not in ``dev``) would show two scores."""
    metrics = check.data
    primary, dev, name = metrics.get("primary"), metrics.get("dev") or {}, metrics["primary_metric"]
    if primary is None and dev.get(name) is None:
        return
    if name not in dev:
        raise InputError(check.path, f"{name!r} is not one of dev's metrics ({', '.join(dev) or 'none'})"
                         f"{check.hint}", field="primary_metric")
    if primary is None or dev[name] is None or abs(primary - dev[name]) > 1e-9:
        raise InputError(check.path, f"{json.dumps(primary)}, but dev.{name} is {json.dumps(dev[name])} (the same "
                         f"score, written twice: one was edited){check.hint}", field="primary")


# -- the files' fields ---------------------------------------------------------------------


def check_manifest(path: Path, data: dict[str, Any]) -> None:
    """``manifest.json``: its schema and the type of every field clue-core writes; unknown fields pass."""
    check_schema(path, data)
    check = Check(path, data, newer_writer(data))
    for key in ("status", "task", "model", "clue_core", "kind", "model_spec"):
        check.name(key)
    for key in ("seed", "world_size"):
        check.of_type(key, int, "an integer")
    check.of_type("no_train", bool, "true or false")
    for key in ("started", "finished", "python", "platform"):
        check.of_type(key, str, "a string")
    for key in ("settings", "setting_sources", "schedule", "test_versions", "model_info", "plugins", "repeat"):
        check.of_type(key, dict, "an object")
    for key in ("setting", "value"):
        if "repeat" in data and not isinstance(data["repeat"].get(key), str):
            raise check.fail(f"repeat.{key}", "a name", data["repeat"].get(key))
    check.numbers("counts", nullable=False)
    for key in ("submission_files", "notes", "command", "splits"):
        check.strings(key)
    partial = check.within("partial")
    partial.of_type("limit", int, "an integer")
    source = check.within("data")
    source.name("source")
    for key in ("data_dir", "user_data_dir"):
        source.of_type(key, str, "a string")
    source.of_type("files", dict, "an object")
    check.finite()


def check_metrics(path: Path, data: dict[str, Any], manifest: dict[str, Any] | None) -> None:
    """``metrics.json``: the field types the report, the run table and compare read.

    ``manifest`` (the run's) names a newer writer in the message when one wrote it.
    """
    check_schema(path, data)
    check = Check(path, data, newer_writer(manifest))
    check.name("task", required=True)
    check.name("primary_metric", required=True)
    check.name("model")
    check.name("split")
    check.of_type("model_category", str, "a string")  # "" for a model spec that declares none
    if data.get("primary") is not None and not is_number(data["primary"]):
        raise check.fail("primary", "a number or null", data["primary"])
    if data.get("train_seconds") is not None and not is_number(data["train_seconds"]):
        raise check.fail("train_seconds", "a number", data["train_seconds"])
    check.numbers("dev", nullable=True)
    check.of_type("scored_splits", list, "a list")
    for index, split in enumerate(data.get("scored_splits") or ()):
        if not isinstance(split, str) or split in ("dev", "counts", "task", "model", "primary", "scored_splits"):
            raise check.fail(f"scored_splits[{index}]", "the name of a labelled split besides dev", split)
        check.numbers(split, nullable=True)  # its scores, as dev's
    check_primary(check)
    check.numbers("counts", nullable=False)
    for key in ("partial", "sample"):
        check.of_type(key, bool, "true or false")
    for key in ("report_settings", "model_info"):
        check.of_type(key, dict, "an object")
    check.of_type("leaderboards", list, "a list")
    for index, board in enumerate(data.get("leaderboards") or ()):
        if not isinstance(board, dict):
            raise check.fail(f"leaderboards[{index}]", "an object", board)
        for key in ("benchmark", "group"):
            if not isinstance(board.get(key), str):
                raise check.fail(f"leaderboards[{index}].{key}", "a name", board.get(key))
    check.finite()


def check_prediction(path: Path, data: dict[str, Any], line: int) -> None:
    """One line of a predictions file: an id, a prediction, and no NaN or Infinity anywhere (no
    clue-core writes one; a metric or the report would average it into a score)."""
    check = Check(path, data, line=line)
    raw_id = data.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or raw_id == "":
        raise InputError(path, f"expected a string or integer id, got {raw_id!r}", line=line, field="id")
    if "prediction" not in data:
        raise InputError(path, "missing", line=line, field="prediction")
    check.of_type("scores", list, "a list")
    for index, score in enumerate(data.get("scores") or ()):
        if not is_number(score):
            raise check.fail(f"scores[{index}]", "a number", score)
    check.of_type("scoring", dict, "an object")
    check.finite()
