"""Check a run's metrics.json (and the manifest fields the report reads) before anything is shown.

The report averages and renders these values; one that is not what this clue-core writes
(a newer format's ``{"value": …}`` objects, a list where an object belongs) must stop the
report with the file and the field named, never crash in an average or show as "—". When
the run was written by a newer clue-core than this one, the message says so: upgrading is
then the fix. (Runs carry no record version of their own; the writer's version in
``manifest.json`` is the best evidence there is.)
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from clue_core import __version__
from clue_core.errors import InputError


def _release(version: str) -> tuple[int, ...]:
    """``"0.10.2rc1"`` → ``(0, 10, 2)``: the release numbers, for an order without the packaging library."""
    parts = []
    for part in version.split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        parts.append(int(match.group()))
    return tuple(parts)


def newer_writer(manifest: dict[str, Any]) -> str:
    """The clause naming a newer clue-core that wrote the run, or ``""``."""
    writer = manifest.get("clue_core")
    if isinstance(writer, str) and _release(writer) > _release(__version__):
        return f" (written by clue-core {writer}, newer than this {__version__}: upgrade clue-core to read it)"
    return ""


def _is_number(value: Any) -> bool:
    """A finite int or float: NaN or Infinity (JSON's extensions) would print as "nan", average into
    every group score and make report.json invalid JSON for a browser."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null or missing)"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(type(value), repr(value))


class _Checker:
    """Raises one :class:`InputError` naming the file, the field and, for a newer run, its writer."""

    def __init__(self, path: Path, manifest: dict[str, Any]) -> None:
        self.path = path
        self.hint = newer_writer(manifest)

    def fail(self, field: str, expected: str, value: Any) -> InputError:
        return InputError(self.path, f"expected {expected}, got {_kind(value)}{self.hint}", field=field)

    def text(self, data: dict[str, Any], key: str, *, required: bool = True) -> None:
        value = data.get(key)
        if not (isinstance(value, str) and value) and (required or value is not None):
            raise self.fail(key, "a name", value)

    def mapping(self, data: dict[str, Any], key: str) -> dict[str, Any]:
        value = data.get(key)
        if value is not None and not isinstance(value, dict):
            raise self.fail(key, "an object", value)
        return value or {}


def check_metrics(path: Path, metrics: dict[str, Any], manifest: dict[str, Any]) -> None:
    """Every metrics.json field the report reads has the type this clue-core writes."""
    check = _Checker(path, manifest)
    check.text(metrics, "task")
    check.text(metrics, "primary_metric")
    check.text(metrics, "model", required=False)
    if metrics.get("primary") is not None and not _is_number(metrics["primary"]):
        raise check.fail("primary", "a number or null", metrics["primary"])
    for name, value in check.mapping(metrics, "dev").items():
        if value is not None and not _is_number(value):
            raise check.fail(f"dev.{name}", "a number or null", value)
    _check_primary(check, metrics)
    for name, value in check.mapping(metrics, "counts").items():
        if not _is_number(value):
            raise check.fail(f"counts.{name}", "a number", value)
    check.mapping(metrics, "report_settings")
    check.mapping(metrics, "model_info")
    boards = metrics.get("leaderboards")
    if boards is not None and not isinstance(boards, list):
        raise check.fail("leaderboards", "a list", boards)
    for index, board in enumerate(boards or ()):
        if not isinstance(board, dict):
            raise check.fail(f"leaderboards[{index}]", "an object", board)
        for key in ("benchmark", "group"):
            if not isinstance(board.get(key), str):
                raise check.fail(f"leaderboards[{index}].{key}", "a name", board.get(key))


def _check_primary(check: _Checker, metrics: dict[str, Any]) -> None:
    """``primary`` is ``dev[primary_metric]``: the summary prints the one and the HTML report the other,
    so a metrics.json where they disagree (or the metric is not in ``dev``) would show two scores."""
    primary, dev, name = metrics.get("primary"), metrics.get("dev") or {}, metrics["primary_metric"]
    if primary is None and dev.get(name) is None:
        return
    if name not in dev:
        raise InputError(check.path, f"{name!r} is not one of dev's metrics ({', '.join(dev) or 'none'})"
                         f"{check.hint}", field="primary_metric")
    if primary is None or dev[name] is None or abs(primary - dev[name]) > 1e-9:
        raise InputError(check.path, f"{json.dumps(primary)}, but dev.{name} is {json.dumps(dev[name])} (the same "
                         f"score, written twice: one was edited){check.hint}", field="primary")


def check_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """The manifest fields the report reads as objects are objects (or absent)."""
    check = _Checker(path, manifest)
    for key in ("data", "settings", "partial"):
        check.mapping(manifest, key)
