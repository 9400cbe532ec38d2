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

    def __init__(self, path: Path, data: dict[str, Any], hint: str = "", line: int | None = None) -> None:
        self.path, self.data, self.hint, self.line = path, data, hint, line

    def fail(self, field: str, expected: str, value: Any) -> InputError:
        return InputError(self.path, f"expected {expected}, got {_kind(value)}{self.hint}", field=field,
                          line=self.line)

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
    """No ``schema`` is this release's own format (written before the field); another one is refused."""
    schema = data.get("schema", RUN_SCHEMA)
    if schema != RUN_SCHEMA:
        shown = schema if isinstance(schema, str) else json.dumps(schema)
        raise NewerRecord(path, f"written by a newer clue-core (schema {shown}); upgrade clue-core", field="schema")


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
