"""How a run record's files are declared and checked: :class:`Record` types whose fields are :func:`field`\\ s.

:mod:`clue_core.record` declares each file once, its fields as typed class attributes
(``seed: int | None = field(INT)``): one line names the field, says what it reads as when absent,
and is what the reader and the writer check. A failure is one InputError naming the file, the
field (``data.files``, ``scores[1]``) and, in JSON Lines, the line; every number must be finite (NaN
would average into every group score), and a wrong field in a run a newer clue-core wrote says so.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from clue_core import __version__
from clue_core.errors import InputError

RUN_SCHEMA = "clue-core/run@1"
R = TypeVar("R", bound="Record")


def newer_writer(manifest: dict[str, Any] | None) -> str:
    """The clause naming a newer clue-core that wrote the run (its manifest's ``clue_core``), or ``""``."""
    def release(version: str) -> tuple[int, ...]:  # "0.10.2rc1" → (0, 10, 2), without the packaging library
        return tuple(int(p) for p in re.findall(r"\d+", re.split(r"[^\d.]", version, maxsplit=1)[0]))

    writer = (manifest or {}).get("clue_core")
    if isinstance(writer, str) and release(writer) > release(__version__):
        return f" (written by clue-core {writer}, newer than this {__version__}: upgrade clue-core to read it)"
    return ""


def is_number(value: Any) -> bool:
    """A finite int or float: NaN or Infinity (JSON's extensions) would average into every score."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value: Any) -> str:
    if value is None or value == "":
        return "nothing (null or missing)" if value is None else "an empty string"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(type(value), repr(value))


def no_value() -> None:
    """What an absent field reads as when that is not its kind's empty value (``splits``: None, not [])."""


@dataclass(frozen=True, slots=True)
class Kind:
    """A JSON type and, declared as a record's attribute through :func:`field`, one field of that type.

    ``test`` and ``expected`` check a value and say what it should have been; ``items`` checks each
    item of a list or value of an object, ``fields`` an object's own fields; ``empty`` is what an
    absent field reads as and ``read`` makes of a present one; ``key`` reaches into an object
    (``raw.prompt``); a ``required`` field that is absent is refused as ``missing`` says, if it says.
    """

    expected: str
    test: Callable[[Any], bool]
    empty: Callable[[], Any] = no_value
    read: Callable[[Any], Any] | None = None
    items: Kind | None = None
    fields: tuple[Kind, ...] = ()
    shown: Callable[[Any], str] = _shown
    missing: str | None = None
    key: str = ""
    required: bool = False

    def named(self, expected: str) -> Kind:
        return replace(self, expected=expected)

    def __set_name__(self, owner: type, name: str) -> None:
        object.__setattr__(self, "key", self.key or name)

    def value(self, data: dict[str, Any]) -> Any:
        if "." not in self.key:  # nearly every field: one look-up (a test split checks each of its lines)
            return data.get(self.key) if isinstance(data, dict) else None
        for part in self.key.split("."):
            data = data.get(part) if isinstance(data, dict) else None
        return data

    @property
    def checks(self) -> bool:
        """Whether a present value can fail this field (``raw``, ``gold``: anything passes, unless required)."""
        return self.required or self.test is not _anything or self.items is not None or bool(self.fields)

    def __get__(self, record: Any, owner: type | None = None) -> Any:
        if record is None:
            return self
        value = self.value(record.data)
        return self.empty() if value is None else self.read(value) if self.read else value

    def __set__(self, record: Any, value: Any) -> None:
        raise AttributeError(f"{type(record).__name__}.{self.key} is read-only: the record is as read")


def field(kind: Kind, *, key: str = "", required: bool = False, read: Callable[[Any], Any] | None = None,
          empty: Callable[[], Any] | None = None) -> Any:
    """Declare a field of ``kind``, typed as the attribute's annotation says; ``key`` when the file names it
    otherwise; ``read`` and ``empty`` in place of the kind's own."""
    return replace(kind, key=key, required=required, read=read or kind.read, empty=empty or kind.empty)


def obj(**fields: Kind) -> Kind:
    """An object whose own fields are declared too (``partial``'s ``limit``)."""
    declared = tuple(replace(kind, key=kind.key or name) for name, kind in fields.items())
    return Kind("an object", lambda v: isinstance(v, dict), dict, fields=declared)


def _is(kind: type) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, kind) and (kind is bool or not isinstance(v, bool))


def _anything(value: Any) -> bool:
    return True


ANY = Kind("anything", _anything, missing="missing")
NAME = Kind("a name", lambda v: isinstance(v, str) and v != "")
TEXT, INT, NUMBER = Kind("a string", _is(str)), Kind("an integer", _is(int)), Kind("a number", is_number)
BOOL = Kind("true or false", _is(bool), bool, bool)
OBJECT, LIST = Kind("an object", _is(dict), dict), Kind("a list", _is(list), list)
STRINGS = replace(LIST, read=lambda v: [str(x) for x in v], items=TEXT)
COUNTS = replace(OBJECT, items=NUMBER)
SCORES = replace(OBJECT, items=Kind("a number or null", lambda v: v is None or is_number(v)))


@dataclass(frozen=True, slots=True)
class At:
    """Where a check is: the file, the newer writer's clause (if any), the line of a JSON Lines record."""

    path: Path
    hint: str = ""
    line: int | None = None

    def fail(self, name: str, expected: str, value: Any, shown: Callable[[Any], str] = _shown) -> InputError:
        return InputError(self.path, f"expected {expected}, got {shown(value)}{self.hint}", field=name, line=self.line)

    def fields(self, data: dict[str, Any], fields: tuple[Kind, ...], prefix: str = "") -> None:
        """Each declared field of ``data``; an absent or null optional one passes, unknown fields pass."""
        for declared in fields:
            value = declared.value(data)
            if declared.required and declared.missing and declared.key not in data:
                raise InputError(self.path, declared.missing, field=f"{prefix}{declared.key}", line=self.line)
            if value is not None or declared.required:
                self.value(f"{prefix}{declared.key}", value, declared)

    def value(self, name: str, value: Any, kind: Kind) -> None:
        if not kind.test(value):
            raise self.fail(name, kind.expected, value, kind.shown)
        if kind.items is not None:
            for key, item in enumerate(value) if isinstance(value, list) else value.items():
                self.value(f"{name}[{key}]" if isinstance(value, list) else f"{name}.{key}", item, kind.items)
        if kind.fields:
            self.fields(value, kind.fields, f"{name}.")


class NewerRecord(InputError):
    """A record of a schema this clue-core does not know (a newer one's): refused by name, never
    taken for a damaged run that ``--overwrite`` may replace."""


@dataclass(frozen=True)
class Record:
    """A record file's object as read (``data``; a field nothing declares is still there), its declared
    fields as attributes (an absent one reads as empty, never as an error)."""

    data: dict[str, Any]
    path: Path | None = None
    FIELDS: ClassVar[tuple[Kind, ...]] = ()
    CHECKED: ClassVar[tuple[Kind, ...]] = ()
    SCHEMA: ClassVar[bool] = True  # it carries ``schema`` (a prediction line does not)

    def __init_subclass__(cls) -> None:
        declared = {name: v for klass in reversed(cls.__mro__) for name, v in vars(klass).items()
                    if isinstance(v, Kind)}
        cls.FIELDS = tuple(declared.values())  # a base's fields too: a subclass declaring one more checks them all
        cls.CHECKED = tuple(kind for kind in cls.FIELDS if kind.checks)  # what checking a file walks

    @classmethod
    def checked(cls: type[R], data: dict[str, Any], path: Path, manifest: Record | None = None) -> R:
        """``data`` as read from ``path``, checked (see :meth:`check`)."""
        cls.check(data, path, manifest)
        return cls(data, path)

    @classmethod
    def check(cls, data: dict[str, Any], path: Path, manifest: Record | None = None, line: int | None = None) -> None:
        """``data`` as read from ``path``: schema, declared fields, the checks across fields, no NaN anywhere.
        The run's ``manifest`` (``data`` itself for a manifest) names a newer writer in the message."""
        schema = data.get("schema", RUN_SCHEMA) if cls.SCHEMA else RUN_SCHEMA
        if schema != RUN_SCHEMA and isinstance(schema, str) and schema:
            raise NewerRecord(path, f"written by a newer clue-core (schema {schema}); upgrade clue-core",
                              field="schema")
        if schema != RUN_SCHEMA:  # no name at all is a damaged file: upgrading would not read it, --overwrite may
            raise InputError(path, f"expected the schema name {RUN_SCHEMA}, got {_shown(schema)} (a damaged file)",
                             field="schema")
        writer = manifest.data if manifest else data if cls.SCHEMA else None  # a prediction line names none
        at = At(path, newer_writer(writer) if writer else "", line)
        at.fields(data, cls.CHECKED)
        cls.check_across(at, data)
        found = non_finite(data)  # no clue-core writes one (its JSON writers refuse them)
        if found is not None:
            raise at.fail(found[0], "a finite number", found[1])

    @classmethod
    def check_across(cls, at: At, data: dict[str, Any]) -> None:
        """What no one field's declaration says (metrics: ``primary`` is ``dev[primary_metric]``)."""


def non_finite(data: Any) -> tuple[str, Any] | None:
    """The field (``raw.logprobs[2]``) and value of the first NaN or Infinity in ``data``, or None.

    A first pass only looks (a test split has many records); the names are built on a find.
    """
    stack = [data]
    while stack:  # branch by type: extending by () for every string and number doubled this walk's cost
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
