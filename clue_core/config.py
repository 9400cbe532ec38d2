"""Run configuration files (TOML or YAML) and ``--set key=value`` overrides.

A config file mirrors the ``run`` flags, plus settings for every task and per task::

    model = "hf-tiny"
    tasks = ["task-a", "task-b"]
    seed = 42
    [settings]
    learning_rate = 1e-4
    [task.task-b]
    epochs = 5

Flags given on the command line win over the file; the file wins over the model's and
the task's recommended values. Which keys exist is decided by the settings the run's
specs declare (:mod:`clue_core.settings`), so a typo fails there with a did-you-mean.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.errors import ClueError, InputError
from clue_core.plans import RunRequest
from clue_core.seeds import MAX_SEED

RUN_KEYS = {"model", "tasks", "seed", "output_dir", "data_dir", "sample", "limit", "cache"}
TABLE_KEYS = {"settings", "task"}

def load_config(path: str | Path) -> dict[str, Any]:
    """Parse and check a config file; errors name the file, the line where known, and the key."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(path, f"cannot read config file ({exc.strerror})") from None
    if path.suffix.lower() in {".yaml", ".yml"}:
        data = _parse_yaml(path, text)
    elif path.suffix.lower() == ".toml":
        data = _parse_toml(path, text)
    else:
        raise InputError(path, "config files must end in .toml, .yaml or .yml")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(path, f"expected a mapping at the top level, got {type(data).__name__}")
    _check(path, data)
    return data


def _parse_toml(path: Path, text: str) -> Any:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib puts "(at line N, column M)" in the message
        raise InputError(path, f"invalid TOML: {exc}") from None


def _parse_yaml(path: Path, text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(path, f"invalid YAML: {problem}", line=mark.line + 1 if mark else None) from None


def _check(path: Path, data: dict[str, Any]) -> None:
    for key, value in data.items():
        if key not in RUN_KEYS | TABLE_KEYS:
            known = ", ".join(sorted(RUN_KEYS | TABLE_KEYS))
            raise InputError(path, f"unknown key (known: {known})", field=key)
        if key in TABLE_KEYS and not isinstance(value, dict):
            raise InputError(path, "expected a table/mapping", field=key)
    if "tasks" in data and not (
        isinstance(data["tasks"], list) and all(isinstance(t, str) for t in data["tasks"])
    ):
        raise InputError(path, "expected a list of task names", field="tasks")
    for name, table in data.get("task", {}).items():
        if not isinstance(table, dict):
            raise InputError(path, "expected a table/mapping", field=f"task.{name}")
    if "seed" in data and (not isinstance(data["seed"], int) or isinstance(data["seed"], bool)):
        raise InputError(path, "expected an integer", field="seed")
    if "seed" in data and not 0 <= data["seed"] <= MAX_SEED:
        raise InputError(path, f"expected a whole number from 0 to {MAX_SEED}, got {data['seed']}", field="seed")
    if "limit" in data and (not isinstance(data["limit"], int) or isinstance(data["limit"], bool)):
        raise InputError(path, "expected an integer", field="limit")
    for key in ("model", "output_dir", "data_dir", "cache"):
        if key in data and not isinstance(data[key], str):
            raise InputError(path, "expected a string", field=key)
    if "sample" in data and not isinstance(data["sample"], bool):  # sample = "no" was read as true
        raise InputError(path, "expected true or false", field="sample")


def parse_override(text: str) -> tuple[str, str]:
    """``key=value``; the value stays text until its declaration converts it (``1e-4``, ``true``)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ClueError(f"--set expects key=value, got {text!r}")
    return key, raw


def run_request(*, tasks: Sequence[str] = (), model: str | None = None, config_file: str | Path | None = None,
                data_dir: str | Path | None = None, sample: bool | None = None, output_dir: str | Path | None = None,
                seed: int | None = None, overrides: Mapping[str, Any] | Sequence[str] = (), no_train: bool = False,
                resume: bool = False, overwrite: bool = False, limit: int | None = None, first: int | None = None,
                cache_dir: str | Path | None = None, command: Sequence[str] = (),
                splits: str | Sequence[str] | None = None, override_sources: Mapping[str, str] | None = None
                ) -> RunRequest:
    """The one place where a config file and the options given beside it become a run request.

    The ``run`` command and :func:`clue_core.api.run` both call it, so a flag wins over the
    file the same way everywhere. ``overrides`` are ``--set`` texts (``"key=value"``) or a
    mapping of already typed values. ``first`` is ``--first N``: a limit of the first N examples in file
    order instead of a seeded draw of ``limit``.
    """
    tasks, model, seed, limit = names("tasks", tasks), _text("model", model), _integer("seed", seed), _integer(
        "limit", limit)
    first = _integer("first", first)
    if first is not None and limit is not None:
        raise ClueError("choose --limit (a seeded subset) or --first (the first N), not both")
    sample = _flag("sample", sample) if sample is not None else None
    no_train, resume, overwrite = _flag("no_train", no_train), _flag("resume", resume), _flag("overwrite", overwrite)
    config_file, data_dir, output_dir, cache_dir = (_path(n, v) for n, v in (
        ("config", config_file), ("data_dir", data_dir), ("output_dir", output_dir), ("cache_dir", cache_dir)))
    config = load_config(config_file) if config_file else {}
    model_name = model or config.get("model")
    if not model_name:
        raise ClueError("choose a model with --model (see 'clue-core list models')")
    if sample is None:
        sample = bool(config.get("sample", False))
    if data_dir is None and config.get("data_dir") and not sample:
        data_dir = Path(config["data_dir"]).expanduser()
    if sample and data_dir:
        raise ClueError("--sample and --data-dir exclude each other")
    if output_dir is None and config.get("output_dir"):  # "~/runs" in a file, as data_dir and cache are
        output_dir = Path(config["output_dir"]).expanduser()
    if resume and not output_dir:
        raise ClueError("--resume needs the --output-dir of the run to continue")
    cache_dir = cache_dir if cache_dir is not None else (Path(config["cache"]).expanduser() if config.get("cache")
                                                         else None)
    typed = _overrides(overrides)
    return RunRequest(
        tasks=tasks or config.get("tasks", []),
        model=model_name,
        data_dir=Path(data_dir) if data_dir is not None else None,
        sample=sample,
        output_dir=Path(output_dir) if output_dir else None,
        seed=seed if seed is not None else config.get("seed", 42),
        settings=dict(config.get("settings", {})),
        task_settings={k.lower(): dict(v) for k, v in config.get("task", {}).items()},
        overrides=typed,
        override_sources=dict(override_sources or {}),
        config_file=str(config_file) if config_file else None,
        limit=first if first is not None else limit if limit is not None else config.get("limit"),
        first=first is not None,
        cache_dir=Path(cache_dir) if cache_dir is not None else None,
        no_train=no_train,
        resume=resume,
        overwrite=overwrite,
        command=list(command),
        splits=_splits(splits),
    )


# -- the arguments of clue_core.api: what the command line's parser would have refused ----------


class ArgumentError(ClueError, TypeError):
    """An argument of the wrong type, given through :mod:`clue_core.api` (the command line's parser
    refuses these before any code runs): one line naming the argument, a ``ClueError`` and a ``TypeError``."""


def _wrong(name: str, expected: str, value: Any) -> ArgumentError:
    return ArgumentError(f"{name}: expected {expected}, got {type(value).__name__} {value!r:.60}")


def names(name: str, value: str | Sequence[str] | None) -> list[str]:
    """Task names: one name, or a list of them (a string is one name, never its letters)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise _wrong(name, "a name or a list of names", value)
    items = list(value)  # once: a generator is read a single time
    for item in items:
        if not isinstance(item, str) or not item:
            raise _wrong(f"{name} item", "a name", item)
    return items


def paths(name: str, value: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Path]:
    """One path, or a list of them (a string is one path, never its characters)."""
    if isinstance(value, (str, os.PathLike)):
        value = [value]
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise _wrong(name, "a path or a list of paths", value)
    items = list(value)
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise _wrong(f"{name} item", "a path (str or os.PathLike)", item)
    return [Path(item) for item in items]


def _path(name: str, value: Any) -> Any:
    if value is None or isinstance(value, (str, os.PathLike)):
        return value
    raise _wrong(name, "a path (str or os.PathLike)", value)


def _text(name: str, value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):  # a trained model folder
        return os.fspath(value)
    raise _wrong(name, "a name", value)


def _flag(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise _wrong(name, "True or False", value)


def _integer(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        try:
            return operator.index(value)  # an int, or numpy's
        except TypeError:
            pass
    raise _wrong(name, "an integer", value)


def _splits(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``"dev"``, ``"dev,test"`` or a list of names, as ``--splits`` and ``api.run(splits=)`` take them;
    None when not given (a fresh run predicts everything, a resumed one what it started with)."""
    if value is None:
        return None
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, Iterable) and not isinstance(value, (bytes, dict)):
        items = list(value)
        for item in items:
            if not isinstance(item, str):
                raise _wrong("splits item", "a split name", item)
    else:
        raise _wrong("splits", "a split name or a list of them", value)
    names = tuple(dict.fromkeys(item.strip() for item in items))
    if "" in names or not names:
        raise ClueError(f"--splits {value if isinstance(value, str) else ','.join(value)!r}: an empty split name; "
                        f"name them separated by commas (--splits dev or --splits dev,test)")
    if "dev" not in names:
        raise ClueError(f"--splits {','.join(names)}: a run always predicts dev (its scores are dev's); "
                        f"name dev too (--splits dev,{','.join(names)})")
    return names


def _overrides(value: Mapping[str, Any] | Sequence[str]) -> dict[str, Any]:
    """``{"key": value}`` (typed values) or ``["key=value", …]`` (texts, as ``--set`` gives them)."""
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str) or not key:
                raise _wrong("overrides key", "a setting name", key)
        return dict(value)
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise _wrong("overrides", 'a mapping {"key": value} or a list of "key=value" texts', value)
    items = list(value)
    for item in items:
        if not isinstance(item, str):
            raise _wrong("overrides item", 'a "key=value" text', item)
    return dict(parse_override(item) for item in items)


check_path, check_flag = _path, _flag


def check_evaluate(*, task: Any, predictions: Any, data_dir: Any, sample: Any, split: Any, allow_missing: Any) -> None:
    """``clue_core.api.evaluate``'s arguments, as ``clue-core evaluate``'s parser would have them."""
    if _text("task", task) is None:
        raise _wrong("task", "a name", task)
    if _path("predictions", predictions) is None:
        raise _wrong("predictions", "a path (str or os.PathLike)", predictions)
    _path("data_dir", data_dir)
    _flag("sample", sample)
    _flag("allow_missing", allow_missing)
    if not isinstance(split, str) or not split:
        raise _wrong("split", "a split name", split)
