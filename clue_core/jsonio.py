"""Read the official JSON / JSON Lines files with errors that name file, line and field.

Task readers build on these so that every malformed input ends in the same kind of
one-line message (see :class:`clue_core.errors.InputError`).
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clue_core.errors import DataError, InputError
from clue_core.surrogates import check_document, check_record

_MISSING = object()
# ``json.loads`` per line costs a third more than the decoder's own raw_decode (it wraps it
# in two whitespace regex matches); on a 400,000-line file that is most of a reader's overhead
_raw_decode = json.JSONDecoder().raw_decode


def _missing(path: Path) -> DataError:
    """A missing file is a data-location problem (a test split may be absent), not malformed input."""
    return DataError(f"{path}: no such file")


def read_json(path: str | Path) -> Any:
    """Parse a whole-file JSON document (a SQuAD-style file, an answers file)."""
    path = Path(path)
    try:
        raw = path.read_bytes().removeprefix(codecs.BOM_UTF8)
    except FileNotFoundError:
        raise _missing(path) from None
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, message = _not_utf8(raw, exc)
        raise InputError(path, message, line=line) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    check_document(document, text, path)  # "\ud800" parses, but is no text: one line, not a later traceback
    return document


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; 1-based line numbers.

    Accepts and rejects exactly what ``json.loads`` does line by line, with its messages.
    """
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8-sig")  # text mode: decoding per line in Python costs 12%
    except FileNotFoundError:
        raise _missing(path) from None
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror})") from None
    with handle:
        line_number = 0
        try:
            for line_number, line in enumerate(handle, start=1):
                try:
                    # fast path: one object and nothing but the newline after it
                    record, end = _raw_decode(line)
                    if end != len(line) and not line[end:].isspace():
                        raise ValueError("extra data")
                except ValueError:
                    # blank line, leading blanks, trailing data or broken JSON: json.loads decides and words it
                    if not line.strip():
                        continue
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise InputError(
                            path, f"invalid JSON: {exc.msg} (column {exc.colno})", line=line_number
                        ) from None
                if not isinstance(record, dict):
                    raise InputError(path, f"expected a JSON object, got {type(record).__name__}", line=line_number)
                if "\\u" in line:  # a lone surrogate ("\ud800") parses but is no text: one line, not a traceback
                    check_record(record, line, path, line_number)
                yield line_number, record
        except UnicodeDecodeError:
            # Text mode decodes 8 KB blocks ahead of the lines it hands out, so the error comes
            # before the lines preceding the bad byte in its block: find the byte's true line.
            raw = path.read_bytes().removeprefix(codecs.BOM_UTF8)
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                line, message = _not_utf8(raw, exc)
                raise InputError(path, message, line=line) from None
            raise InputError(path, "not UTF-8 text (the file changed while read)", line=line_number + 1) from None


def _not_utf8(raw: bytes, exc: UnicodeDecodeError) -> tuple[int, str]:
    """The line of the first byte of ``raw`` that is not UTF-8, and a message with its column.

    Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``, as text mode (and so iter_jsonl) counts them.
    """
    lines = raw[: exc.start].decode("utf-8").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return len(lines), f"not UTF-8 text ({exc.reason} at column {len(lines[-1]) + 1})"


def field(
    record: dict[str, Any],
    name: str,
    expected: type | tuple[type, ...],
    *,
    path: str | Path,
    line: int | None = None,
    default: Any = _MISSING,
) -> Any:
    """Fetch ``record[name]`` checking its type; missing or mistyped fields raise InputError."""
    if name not in record:
        if default is not _MISSING:
            return default
        raise InputError(path, "missing", line=line, field=name)
    value = record[name]
    # bool is an int subclass: never accept it where a number or string is wanted
    if isinstance(value, bool) and bool not in (expected if isinstance(expected, tuple) else (expected,)):
        raise InputError(path, f"expected {_type_names(expected)}, got bool", line=line, field=name)
    if not isinstance(value, expected):
        raise InputError(
            path, f"expected {_type_names(expected)}, got {type(value).__name__}", line=line, field=name
        )
    return value


def _type_names(expected: type | tuple[type, ...]) -> str:
    types = expected if isinstance(expected, tuple) else (expected,)
    names = {"str": "a string", "int": "an integer", "list": "a list", "dict": "an object", "float": "a number"}
    return " or ".join(names.get(t.__name__, t.__name__) for t in types)
