"""The sweep file (TOML): what to run, checked whole before anything is planned or written.

A sweep names tasks, models and seeds, where the data comes from, settings every trial shares
(``[settings]``), the grid (``[grid]``: each setting a list of values) and what one trial needs
(``[resources]``). Every mistake the file can hold (bad TOML, an unknown key, a wrong type, an
empty list, a setting both fixed and swept) is one :class:`InputError` naming the file and the key,
so the command prints one line and exits 2 before it writes anything. Whether a setting exists
is the kernel's to say, when the trials are planned (:mod:`clue_sweep.trials`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clue_core.plugin import MAX_SEED, InputError

Scalar = str | int | float | bool

TOP_KEYS = ("tasks", "models", "seeds", "sample", "data_dir", "limit", "settings", "grid", "resources")
RESOURCE_KEYS = ("cpus", "gpus")
DEFAULT_SEEDS = (42,)  # the seed `clue-core run` uses when none is given


@dataclass(frozen=True)
class Resources:
    """What one trial needs: Ray reserves it per task; the local executor gives each worker ``cpus`` threads."""

    cpus: int = 1
    gpus: float = 0.0


@dataclass(frozen=True)
class SweepSpec:
    """A checked sweep file. ``grid`` keeps the file's order of keys and values (ties in ``best`` use it)."""

    path: Path
    tasks: tuple[str, ...]
    models: tuple[str, ...]
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    sample: bool = False
    data_dir: Path | None = None
    limit: int | None = None
    settings: dict[str, Scalar] = field(default_factory=dict)
    grid: dict[str, tuple[Scalar, ...]] = field(default_factory=dict)
    resources: Resources = Resources()

    def as_dict(self) -> dict[str, Any]:
        """What summary.json records of the file it ran."""
        return {"file": str(self.path), "tasks": list(self.tasks), "models": list(self.models),
                "seeds": list(self.seeds), "sample": self.sample,
                "data_dir": str(self.data_dir) if self.data_dir else None, "limit": self.limit,
                "settings": dict(self.settings), "grid": {k: list(v) for k, v in self.grid.items()},
                "resources": {"cpus": self.resources.cpus, "gpus": self.resources.gpus}}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _names(path: Path, data: dict[str, Any], key: str, what: str) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        raise InputError(path, f"missing: the sweep needs a list of {what}", field=key)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise InputError(path, f"expected a non-empty list of {what}", field=key)
    if len(set(value)) != len(value):
        raise InputError(path, f"{next(v for v in value if value.count(v) > 1)!r} is listed twice", field=key)
    return tuple(v.strip() for v in value)


def _seeds(path: Path, data: dict[str, Any]) -> tuple[int, ...]:
    seeds = data.get("seeds", list(DEFAULT_SEEDS))
    if _is_int(seeds):
        seeds = [seeds]
    if not isinstance(seeds, list) or not seeds or not all(_is_int(s) for s in seeds):
        raise InputError(path, "expected a non-empty list of whole numbers", field="seeds")
    wrong = next((s for s in seeds if not 0 <= s <= MAX_SEED), None)  # the run's range: numpy refuses others
    if wrong is not None:
        raise InputError(path, f"seed {wrong} is not a whole number from 0 to {MAX_SEED}", field="seeds")
    if len(set(seeds)) != len(seeds):
        raise InputError(path, f"seed {next(s for s in seeds if seeds.count(s) > 1)} is listed twice", field="seeds")
    return tuple(seeds)


def _table(path: Path, data: dict[str, Any], key: str) -> dict[str, Any]:
    table = data.get(key, {})
    if not isinstance(table, dict):
        raise InputError(path, "expected a table", field=key)
    return table


def _grid(path: Path, data: dict[str, Any]) -> dict[str, tuple[Scalar, ...]]:
    grid: dict[str, tuple[Scalar, ...]] = {}
    for name, values in _table(path, data, "grid").items():
        where = f"grid.{name}"
        if isinstance(values, dict):
            raise InputError(path, "expected a list of values (a setting name holds no table)", field=where)
        if not isinstance(values, list) or not values:
            raise InputError(path, "expected a non-empty list of values, e.g. [1e-4, 5e-4]", field=where)
        if not all(_is_scalar(v) for v in values):
            raise InputError(path, "expected values that are text, numbers or true/false", field=where)
        seen: list[Any] = []
        for value in values:
            if any(type(value) is type(s) and value == s for s in seen):
                raise InputError(path, f"{value!r} is listed twice", field=where)
            seen.append(value)
        grid[name] = tuple(values)
    return grid


def _settings(path: Path, data: dict[str, Any], grid: dict[str, Any]) -> dict[str, Scalar]:
    settings = _table(path, data, "settings")
    for name, value in settings.items():
        if not _is_scalar(value):
            raise InputError(path, "expected text, a number or true/false (a list to sweep goes in [grid])",
                             field=f"settings.{name}")
        if name in grid:
            raise InputError(path, "is both fixed in [settings] and swept in [grid]; keep one",
                             field=f"settings.{name}")
    return dict(settings)


def _resources(path: Path, data: dict[str, Any]) -> Resources:
    table = _table(path, data, "resources")
    for key in table:
        if key not in RESOURCE_KEYS:
            raise InputError(path, f"unknown key (known: {', '.join(RESOURCE_KEYS)})", field=f"resources.{key}")
    cpus, gpus = table.get("cpus", 1), table.get("gpus", 0)
    if not _is_int(cpus) or cpus < 1:
        raise InputError(path, "expected a whole number of CPUs, at least 1", field="resources.cpus")
    if isinstance(gpus, bool) or not isinstance(gpus, int | float) or not 0 <= gpus < 1e6:
        raise InputError(path, "expected a number of GPUs, 0 or more (a fraction shares one)", field="resources.gpus")
    return Resources(cpus, float(gpus))


def _folder(path: Path, key: str, name: str, where: str) -> None:
    """A folder the file names must be there: otherwise every trial would fail on it, one by one."""
    folder = Path(where).expanduser()
    if not folder.is_dir():
        what = "not a folder" if folder.exists() else "no such folder"
        raise InputError(path, f"{name}: {what} {folder.resolve()} (relative paths start at the current folder)",
                         field=key)


def _model_folders(path: Path, models: tuple[str, ...]) -> None:
    """An ``hf:`` model given as a path (``/``, ``.``, ``~``, or an existing relative path) must be a folder.

    The model plugin checks it only when a trial builds its learner, after planning; a hub id
    (``hf:hfl/rbt3``, no such path here) is left to the plugin, which knows the hub and its cache.
    """
    for model in models:
        scheme, _, source = model.partition(":")
        if scheme == "hf" and source and (source.startswith((".", "/", "~")) or (
                "/" in source.strip("/") and Path(source).exists())):
            _folder(path, "models", model, source)


def load_sweep(path: Path) -> SweepSpec:
    """Parse and check the sweep file; anything wrong is one line naming the file and the key."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    if path.suffix.lower() != ".toml":
        raise InputError(path, "a sweep file is TOML and ends in .toml")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # a BOM (Notepad's UTF-8) is no TOML error
    except OSError as exc:
        raise InputError(path, f"cannot read the sweep file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:  # its message says "(at line N, column M)"
        raise InputError(path, f"invalid TOML: {exc}") from None
    for key in data:
        if key not in TOP_KEYS:
            raise InputError(path, f"unknown key (known: {', '.join(TOP_KEYS)})", field=key)
    sample = data.get("sample", False)
    if not isinstance(sample, bool):
        raise InputError(path, "expected true or false", field="sample")
    data_dir = data.get("data_dir")
    if data_dir is not None and (not isinstance(data_dir, str) or not data_dir):
        raise InputError(path, "expected the path of a data folder", field="data_dir")
    if sample and data_dir:
        raise InputError(path, "sample = true and data_dir exclude each other", field="data_dir")
    if data_dir:
        _folder(path, "data_dir", data_dir, data_dir)
    limit = data.get("limit")
    if limit is not None and (not _is_int(limit) or limit < 1):
        raise InputError(path, "expected a whole number of examples, at least 1", field="limit")
    grid = _grid(path, data)
    tasks, models = _names(path, data, "tasks", "task names"), _names(path, data, "models", "model names")
    _model_folders(path, models)
    return SweepSpec(path=path, tasks=tasks, models=models, seeds=_seeds(path, data),
                     sample=sample, data_dir=Path(data_dir).expanduser().resolve() if data_dir else None,
                     limit=limit, settings=_settings(path, data, grid), grid=grid, resources=_resources(path, data))
