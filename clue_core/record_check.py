"""How a run record's fields are declared and checked: :func:`field` with a :class:`Kind`, one checker.

:mod:`clue_core.record` declares each file's fields once, as typed class attributes
(``seed: int | None = field(INT)``): that one line names the field, says what it reads as, and
is what the reader and the writer check. A failure is one InputError naming the file, the field
(``data.files``, ``scores[1]``) and, for JSON Lines, the line. The rules are the ones the report
checked before the record had one reader: every number finite (NaN would average into every
group score), and a field of the wrong type in a run a newer clue-core wrote says that upgrading
is the fix.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
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


def no_value() -> None:
    """What an absent field reads as when it is not its kind's empty value (``splits``: None, not [])."""
    return None


@dataclass(frozen=True, slots=True)
class Kind:
    """A JSON type: the test a value passes, its words in a refusal, and what an absent field reads as.

    ``items`` checks each item of a list or value of an object; ``fields`` the fields of an object.
    """

    expected: str
    test: Callable[[Any], bool]
    empty: Callable[[], Any] = no_value
    read: Callable[[Any], Any] | None = None
    items: Kind | None = None
    fields: tuple[Field, ...] = ()
    got: Callable[[Any], str] = _kind  # how the refused value is shown
    missing: str | None = None  # the message when a required field is absent (else the test's)

    def named(self, expected: str) -> Kind:
        """The same test, said otherwise in a refusal (a text field that is "a name")."""
        return replace(self, expected=expected)


class Field:
    """One field of a record file: its key, its :class:`Kind`, whether it must be there; read as an attribute."""

    __slots__ = ("empty", "key", "kind", "name", "read", "required")

    def __init__(self, kind: Kind, key: str | None, required: bool, read: Callable[[Any], Any] | None,
                 empty: Callable[[], Any] | None) -> None:
        self.kind, self.key, self.required, self.name = kind, key or "", required, key or ""
        self.read, self.empty = read or kind.read, empty or kind.empty

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.key = name, self.key or name

    def __get__(self, record: Any, owner: type | None = None) -> Any:
        if record is None:
            return self
        value = record.data.get(self.key)
        if value is None:
            return self.empty()
        return self.read(value) if self.read else value


def field(kind: Kind, *, key: str | None = None, required: bool = False, read: Callable[[Any], Any] | None = None,
          empty: Callable[[], Any] | None = None) -> Any:
    """Declare a field (typed as the attribute's annotation says): ``key`` when the file names it otherwise."""
    return Field(kind, key, required, read, empty)


def obj(**fields: Any) -> Kind:
    """An object whose own fields are declared too (``partial``'s ``limit``)."""
    for name, declared in fields.items():
        declared.__set_name__(object, name)
    return Kind("an object", lambda v: isinstance(v, dict), dict, fields=tuple(fields.values()))


def _is(kind: type) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, kind) and (kind is bool or not isinstance(v, bool))


ANY = Kind("anything", lambda v: True, missing="missing")
NAME = Kind("a name", lambda v: isinstance(v, str) and v != "")
TEXT = Kind("a string", _is(str))
INT = Kind("an integer", _is(int))
BOOL = Kind("true or false", _is(bool), bool, bool)
NUMBER = Kind("a number", is_number)
OBJECT = Kind("an object", _is(dict), dict)
LIST = Kind("a list", _is(list), list)
STRINGS = Kind("a list", _is(list), list, lambda v: [str(x) for x in v], items=TEXT)
COUNTS = Kind("an object", _is(dict), dict, items=NUMBER)
SCORES = Kind("an object", _is(dict), dict, items=Kind("a number or null", lambda v: v is None or is_number(v)))


@dataclass(frozen=True, slots=True)
class At:
    """Where a check is: the file, the newer writer's clause (if any), the line of a JSON Lines record."""

    path: Path
    hint: str = ""
    line: int | None = None

    def fail(self, name: str, expected: str, value: Any, got: Callable[[Any], str] = _kind) -> InputError:
        return InputError(self.path, f"expected {expected}, got {got(value)}{self.hint}", field=name, line=self.line)


def check_fields(at: At, data: dict[str, Any], fields: tuple[Field, ...], prefix: str = "") -> None:
    """Each declared field of ``data``; an absent or null optional one passes, unknown fields pass."""
    for declared in fields:
        name, value = f"{prefix}{declared.key}", data.get(declared.key)
        if declared.required and declared.kind.missing and declared.key not in data:
            raise InputError(at.path, declared.kind.missing, field=name, line=at.line)
        if value is not None or declared.required:
            check_value(at, name, value, declared.kind)


def check_value(at: At, name: str, value: Any, kind: Kind) -> None:
    if not kind.test(value):
        raise at.fail(name, kind.expected, value, kind.got)
    if kind.items is not None:
        for key, item in enumerate(value) if isinstance(value, list) else value.items():
            check_value(at, f"{name}[{key}]" if isinstance(value, list) else f"{name}.{key}", item, kind.items)
    if kind.fields:
        check_fields(at, value, kind.fields, f"{name}.")


def check_finite(at: At, data: dict[str, Any]) -> None:
    """No NaN or Infinity anywhere: no clue-core writes one (its JSON writers refuse them), and a
    metric or the report would average one into a score or write a file browsers cannot read."""
    found = non_finite(data)
    if found is not None:
        raise at.fail(found[0], "a finite number", found[1])


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
