"""Declared settings: merge the layers (built by :mod:`clue_core.run_settings`), convert each value once,
reject what nobody reads.

Every spec that reads settings declares them (:class:`~clue_core.specs.Setting`). For one
task and one model the layers are, lowest first::

    declared default < task recommendation < model recommendation (by kind, then "*")
    < model recipe for this task < the task's override for this model
    < config file [settings] < config file [task.NAME] < --set

A plugin's value only reaches settings that some spec of the run declares (a task's
``learning_rate`` does not reach a model without one); a key the *user* supplied that no
spec declares is an error with a did-you-mean. Keys under ``<name>.`` belong to the model
named by a ``names_model`` setting (``judge.base_url``) and are checked against that
model's declarations. Each resolved value remembers where it came from, for ``--dry-run``
and ``clue-core info``.

A ``names_model`` value may name several models, separated by commas (a panel of judges,
``judge=a,b,c``). Each is then the model under ``<name>.<i>.`` (counting from 0): a key
``judge.max_new_tokens`` reaches every judge that declares it, ``judge.1.max_new_tokens``
only the second, and the indexed key wins over the shared one (``run_settings.panel_layers``).
One model keeps the plain namespace, so a single judge resolves exactly as it always did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clue_core.errors import ClueError
from clue_core.redaction import MARKER
from clue_core.specs import Setting

#: Run control: typed fields of the run context, never settings (``--seed``, not ``--set seed=``).
RUN_CONTROL = {
    "seed": "--seed N (or seed = N at the top of the config file)",
    "resume": "--resume",
    "output_dir": "--output-dir",
    "primary_metric": "the task's primary metric (fixed by the task)",
    "rank": "the launcher (torchrun / accelerate launch)",
    "world_size": "the launcher (torchrun / accelerate launch)",
    "task": "the TASK arguments",
    "limit": "--limit N",
}

REDACTED = MARKER  # one marker for a secret, wherever it is hidden
_SECRET_WORDS = ("key", "token", "secret", "password")

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}
_TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


class SettingError(ClueError):
    """A setting the user gave is unknown or has a value its declaration does not allow."""


def convert(setting: Setting, value: Any, where: str) -> Any:
    """``value`` as the declared type, within the declared bounds, or one clear error.

    Values from ``--set`` arrive as JSON when they parse (``7``, ``true``) and as strings
    otherwise (``1e-4`` parses as JSON too); config files give native types.
    """
    name = f"setting '{setting.name}' ({where})"
    shown = "the value given" if setting.secret else repr(value)
    if isinstance(value, str) and value in setting.also:
        return value
    converted = _as_type(setting.type, value)
    if converted is _INVALID:
        also = "".join(f" or {v!r}" for v in setting.also)
        raise SettingError(f"{name}: expected {_TYPE_WORDS.get(setting.type, setting.type.__name__)}{also}, "
                           f"got {shown}")
    if setting.choices and converted not in setting.choices:
        raise SettingError(f"{name}: expected one of {', '.join(map(repr, setting.choices))}, got {shown}")
    if setting.type is float and not -float("inf") < converted < float("inf"):  # a NaN passes every bound
        raise SettingError(f"{name}: expected a finite number, got {shown}")
    if setting.type in (int, float):
        if setting.minimum is not None and converted < setting.minimum:
            raise SettingError(f"{name}: must be at least {setting.minimum}, got {shown}")
        if setting.maximum is not None and converted > setting.maximum:
            raise SettingError(f"{name}: must be at most {setting.maximum}, got {shown}")
        if setting.above is not None and converted <= setting.above:
            raise SettingError(f"{name}: must be greater than {setting.above}, got {shown}")
    return converted


_INVALID = object()


def _as_type(kind: type, value: Any) -> Any:
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        return _INVALID
    if kind is int:
        if isinstance(value, bool):
            return _INVALID
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                return _INVALID
        return _INVALID
    if kind is float:
        if isinstance(value, bool):
            return _INVALID
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                return _INVALID
        return _INVALID
    if kind is str:
        return value if isinstance(value, str) else _INVALID
    return value if isinstance(value, kind) else _INVALID


@dataclass(frozen=True, slots=True)
class Layer:
    """One source of values: its name for ``--dry-run`` and whether the user wrote it."""

    source: str
    values: Mapping[str, Any]
    user: bool = False


@dataclass
class ResolvedSettings:
    """The settings of one task's run: value and source of every declared name.

    Names are flat (``learning_rate``) or namespaced for an inner model
    (``judge.base_url``).
    """

    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    declared: dict[str, Setting] = field(default_factory=dict)

    @classmethod
    def of(cls, values: ResolvedSettings | Mapping[str, Any] | None) -> ResolvedSettings:
        """``values`` as resolved settings: a plain mapping of values (or none) is wrapped, so that a
        caller without a planned run (scoring a predictions file) slices it the same way."""
        if isinstance(values, ResolvedSettings):
            return values
        return cls(values=dict(values or {}))

    def values_for(self, declarations: Iterable[Setting], namespace: str = "") -> dict[str, Any]:
        """The values of exactly these declarations, under their own names: what one step receives.

        This is the one place a step's settings are picked out of the run's: the model factory,
        the decode step, each metric and its check, and (with ``namespace="judge"``) a model a
        setting names, which gets ``judge.base_url`` as ``base_url``. A declaration the run did
        not resolve gets its declared default: scoring with no run, or a model loaded under a
        namespace whose model the plan did not name.
        """
        prefix = f"{namespace}." if namespace else ""
        return {s.name: self.values.get(prefix + s.name, s.default) for s in declarations}

    def flagged(self, flag: str) -> dict[str, Any]:
        """Values whose declaration sets ``schedule``, ``cache_key`` or ``report``."""
        shown = self.shown()
        return {name: shown[name] for name, s in self.declared.items() if getattr(s, flag)}

    def rows(self) -> list[tuple[str, Any, str]]:
        """``(name, value, source)`` in name order, for ``--dry-run`` and ``info`` (secrets hidden)."""
        return [(name, self.shown()[name], self.sources[name]) for name in sorted(self.values)]

    def shown(self) -> dict[str, Any]:
        """The values as they may be written or printed: a secret's value is replaced by ``"***"``."""
        return {name: REDACTED if self.declared[name].secret and value else value
                for name, value in self.values.items()}

    def secret_names(self) -> set[str]:
        return {name for name, setting in self.declared.items() if setting.secret}

    def scrub(self, data: Any) -> Any:
        """``data`` with every occurrence of a secret's value replaced, wherever a plugin put it."""
        values = [str(v) for n, v in self.values.items() if self.declared[n].secret and v not in ("", None)]
        return _scrub(data, values) if values else data


def resolve(
    declared: Mapping[str, Setting],
    layers: Sequence[Layer],
    *,
    nested: Mapping[str, Mapping[str, Setting]] | None = None,
) -> ResolvedSettings:
    """Merge ``layers`` over the declared defaults; see the module docstring.

    ``nested`` maps a namespace (``"judge"``) to the declarations of the model it names.
    A user key that nothing declares is an error; a plugin key that nothing declares is
    simply not used.
    """
    nested = nested or {}
    resolved = ResolvedSettings()
    everything: dict[str, Setting] = dict(declared)
    for namespace, settings in nested.items():
        everything.update({f"{namespace}.{name}": s for name, s in settings.items()})
    for name, setting in everything.items():
        resolved.values[name] = setting.default
        resolved.sources[name] = "default"
        resolved.declared[name] = setting
    for layer in layers:
        for key, value in layer.values.items():
            if key not in everything:
                if layer.user:
                    raise unknown_setting(key, everything, layer.source)
                continue
            resolved.values[key] = convert(everything[key], value, layer.source)
            resolved.sources[key] = layer.source
    return resolved


def model_names(value: Any) -> list[str]:
    """The models a ``names_model`` value names: one, or a panel separated by commas (``--set judge=a,b``
    is one shell word, and model names such as ``llm:org/name`` hold no comma); empty: none."""
    text = str(value or "").strip()
    return [part.strip() for part in text.split(",")] if text else []


def inner_namespaces(setting: str, names: Sequence[str]) -> list[str]:
    """Each named model's namespace: ``judge`` for one (a single judge's keys, sources and manifest are
    what they were before panels), ``judge.0``, ``judge.1``… for several."""
    return [setting] if len(names) == 1 else [f"{setting}.{index}" for index in range(len(names))]


def unknown_setting(key: str, known: Iterable[str], source: str) -> SettingError:
    """The one-line error for a key nothing declares, with a did-you-mean or a run-control hint."""
    from clue_core.errors import did_you_mean

    if key in RUN_CONTROL:
        return SettingError(f"'{key}' ({source}) is run control, not a setting: use {RUN_CONTROL[key]}")
    return SettingError(f"unknown setting '{key}' ({source}){did_you_mean(key, known)}; "
                        f"'clue-core run … --dry-run' lists the settings this run reads")


def typos(word: str, known: set[str]) -> list[str]:
    """Names a keystroke or two from ``word`` (one for short words), closest first; ``batch_size`` is no
    typo of ``eval_batch_size``."""
    limit = 1 if len(word) <= 4 else 2
    found = sorted((distance, name) for name in known if (distance := keystrokes(word, name, limit)) <= limit)
    return [name for _, name in found[:3]]


def keystrokes(a: str, b: str, limit: int) -> int:
    """Edits from ``a`` to ``b`` (a character added, dropped, changed, or two neighbours swapped);
    ``limit + 1`` where their lengths alone differ by more than ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            cost = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                cost = min(cost, before[j - 2] + 1)
            current.append(cost)
        before, row = row, current
    return row[-1]


def redact_command(argv: Sequence[str], secret_names: Iterable[str] = ()) -> list[str]:
    """The command line as it may be recorded: the value of every ``--set`` of a secret setting,
    or of a key that looks like one (``api_key``, ``token``, ``password``), becomes ``***``."""
    secrets = set(secret_names)

    def hide(assignment: str) -> str:
        key, sep, value = assignment.partition("=")
        last = key.rpartition(".")[2].lower()
        if sep and value and (key in secrets or last in secrets or any(w in last for w in _SECRET_WORDS)):
            return f"{key}={REDACTED}"
        return assignment

    out: list[str] = []
    following_set = False
    for arg in argv:
        if following_set:
            out.append(hide(arg))
            following_set = False
        elif arg == "--set":
            out.append(arg)
            following_set = True
        elif arg.startswith("--set="):
            out.append("--set=" + hide(arg[len("--set="):]))
        else:
            out.append(arg)
    return out


def _scrub(data: Any, secrets: list[str]) -> Any:
    if isinstance(data, str):
        for secret in secrets:
            data = data.replace(secret, REDACTED)
        return data
    if isinstance(data, Mapping):
        return {key: _scrub(value, secrets) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [_scrub(value, secrets) for value in data]
    return data
