"""Example kinds: :class:`KindSpec`, the kinds this process knows, and three shared kind names.

A kind is declared by a plugin through the ``clue_kinds`` hook, so a third party can bring one
(NER, KBQA) without touching the kernel: the spec names the example type, what a prediction's
value is and how it is checked, the example checks run after reading, where the gold is, the
fields a prompt template may name and whether examples may lack gold. The kernel never branches
on a kind: it asks the kind's spec.

Code handed an example without a kernel (a metric calling ``gold_of``, a reader's checks) finds
its kind here. Inside a run it is the run's kernel's kinds (:func:`using`, entered by the runner and
by scoring): another kernel in the process (a test's, a notebook's) declaring a kind of the same name
never changes this kernel's runs. Outside one it is the process table: every kernel declares the kinds
it registered and checked (:func:`declare`; the built-in plugin's declaration of a name stands against
another kernel's different one), and where none has yet (a script or test reading a split directly)
the installed plugins' kinds are read once from their entry points, as a kernel loads them (built-in
first, a name's first declaration wins, ``CLUE_DISABLE_PLUGINS`` skipped). The tables only ever hold
declarations, never run state.

``CLASSIFICATION``, ``SPAN`` and ``MULTIPLE_CHOICE`` are the names of the three kinds the built-in
plugin declares, which many task and model plugins share; they live here, with their example
dataclasses in :mod:`clue_core.examples`, as shared vocabulary, so a hook module can name them
without importing another plugin.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from clue_core.discovery import BUILTIN_PLUGIN, env_names, plugin_points
from clue_core.specs import Ref, SpecMixin, resolve

CLASSIFICATION = "classification"
SPAN = "span"
MULTIPLE_CHOICE = "multiple_choice"


@dataclass(frozen=True, slots=True)
class KindSpec(SpecMixin):
    """One example kind, as the plugin that brings it declares it (``clue_kinds``).

    ``example`` names the example type (a frozen dataclass with an ``id``) as ``"module:attr"``;
    the kernel checks each example a reader returns is one. ``prediction`` says in words what a
    prediction's ``value`` is (``"a label string"``); ``check_prediction(task, example, value)``
    returns what is wrong with one (a leaderboard file's, a run's recorded prediction), or None.
    ``check_example(task, example)`` returns ``(field, message)`` for an example that breaks the
    kind's contract (a label not among the task's labels), or None. ``gold`` is the attribute
    holding an example's gold value (``"label"``), or ``"module:attr"`` of ``gold(example)``.
    ``record_gold`` is ``"module:attr"`` of ``record_gold(gold) -> JSON value``: the gold as a run's
    prediction records write it beside each prediction (span answers as their texts, without their
    offsets); by default the gold value as it is. ``prompt_fields`` are the example fields a task's
    prompt template may name; ``open`` marks examples scored without gold (open questions judged by
    a model): a split none of whose examples has gold is then still scored.
    """

    name: str
    description: str
    example: Ref
    prediction: str
    check_prediction: Ref
    check_example: Ref | None = None
    gold: str = "label"
    prompt_fields: tuple[str, ...] = ()
    open: bool = False
    record_gold: Ref | None = None


#: ``(kind name, its example reference) -> the plugin declaring it``, as a kernel's checks saw it, so
#: that the refusal of two kinds of one example type names their plugins (a spec does not know its plugin).
_OWNERS: dict[tuple[str, str], str] = {}


def note_owner(spec: KindSpec, plugin: str) -> None:
    """Remember which plugin declares ``spec`` (the kernel's spec checks call this for every kind)."""
    _OWNERS[(spec.name, str(spec.example))] = plugin


def _owner(spec: KindSpec) -> str:
    return _OWNERS.get((spec.name, str(spec.example)), "unknown")


class _Table:
    """Kinds by name and, filled as examples are met, example type -> (its kind, its gold accessor) or
    None for a type of no kind: one kernel's while its run (or scoring) reads examples, or the process's."""

    __slots__ = ("by_type", "specs")

    def __init__(self, specs: Mapping[str, KindSpec]) -> None:
        self.specs = dict(specs)
        self.by_type: dict[type, tuple[KindSpec, Callable[[Any], Any]] | None] = {}


#: The process's table, as kernels declared it (the built-in plugin's standing), for code outside any run.
_PROCESS = _Table({})
_DECLARED, _BY_TYPE = _PROCESS.specs, _PROCESS.by_type
#: The names whose spec in ``_DECLARED`` is the built-in plugin's: another kernel's spec does not replace it.
_STANDING: set[str] = set()
_installed_read = False
_SCOPE: ContextVar[_Table | None] = ContextVar("clue_core_kinds", default=None)


@contextmanager
def using(specs: Mapping[str, KindSpec]) -> Iterator[None]:
    """Inside: ``kind_spec``, ``gold_of`` and the record writer read ``specs`` (a kernel's ``kinds``), not
    the process table, so a run reads, scores and records its examples as its own kernel declared
    their kinds, whatever kernel was made later in the process (the runner and scoring enter this)."""
    token = _SCOPE.set(_Table(specs))
    try:
        yield
    finally:
        _SCOPE.reset(token)


def declare(specs: Iterable[KindSpec], standing: Collection[str] = ()) -> None:
    """Make checked kinds known to code that has an example but no kernel (a kernel calls this).

    A name's spec is replaced by a different one, except the built-in plugin's (``standing`` names
    those of ``specs``): a kernel without the built-in plugin declaring its own ``classification`` (a
    test's) must not change the gold every other kernel's code finds. A kernel's own runs never read
    this table (:func:`using`).
    """
    for spec in specs:
        if _DECLARED.get(spec.name) != spec and (spec.name in standing or spec.name not in _STANDING):
            _DECLARED[spec.name] = spec
            _BY_TYPE.clear()
    _STANDING.update(standing)


def _read_installed() -> None:
    """No kernel declared the kind asked for: read the installed plugins' ``clue_kinds`` once, as a
    kernel loads them: the built-in plugin first, then by name, a plugin ``CLUE_DISABLE_PLUGINS`` names
    (by plugin or distribution) skipped, and a name's first declaration kept (a third party's
    ``classification`` is an error on its row in any kernel; it must not win here either).

    A plugin that fails to import or to answer is skipped here; its error shows on its row of
    ``clue-core list``, where a kernel loads it.
    """
    global _installed_read
    if _installed_read:
        return
    _installed_read = True
    disabled = env_names("CLUE_DISABLE_PLUGINS")
    for point in plugin_points():
        if {point.name, getattr(point.dist, "name", None)} & disabled:
            continue
        try:
            hook = getattr(point.load(), "clue_kinds", None)
            found = [spec for spec in (hook() if callable(hook) else ()) if isinstance(spec, KindSpec)]
        except Exception:  # reported by the kernel that loads the plugin, not here
            continue
        fresh = [spec for spec in found if spec.name not in _DECLARED]
        for spec in fresh:
            note_owner(spec, point.name)
        declare(fresh, standing=[spec.name for spec in fresh] if point.name == BUILTIN_PLUGIN else ())


def kind_spec(name: str) -> KindSpec:
    """The spec of kind ``name`` (the run's kernel's inside :func:`using`); an undeclared one is a ``PluginError``."""
    table = _SCOPE.get() or _PROCESS
    if table is _PROCESS and name not in _DECLARED:
        _read_installed()
    try:
        return table.specs[name]
    except KeyError:
        from clue_core.errors import PluginError

        raise PluginError(f"unknown example kind {name!r} (known: {', '.join(sorted(table.specs)) or 'none'})"
                          ) from None


def _gold_accessor(spec: KindSpec) -> Callable[[Any], Any]:
    if ":" in spec.gold:
        return resolve(spec.gold)  # type: ignore[no-any-return]
    attr = spec.gold
    return lambda example: getattr(example, attr, None)


def _names(ref: Ref, kind: type, own: str) -> bool:
    """``ref`` is ``kind``, found without importing anything new: by its path, or through a module the
    process already imported (a kind's tasks read their examples after importing their type, so an alias
    that matters for this process's examples is loaded by then)."""
    if ref == own or ref is kind:
        return True
    module = ref.partition(":")[0] if isinstance(ref, str) else None
    if module is None or module not in sys.modules:
        return False
    try:
        return resolve(ref) is kind
    except (ImportError, AttributeError, ValueError):
        return False


def _match(specs: Mapping[str, KindSpec], kind: type) -> tuple[KindSpec, Callable[[Any], Any]] | None:
    """The kind whose example type ``kind`` is: the kinds naming ``kind`` itself (by its path, or a re-export
    under another path: ``kattack.types:Pair``) without importing anything new, else the kinds declaring its
    nearest base class (a subclass of a shared type that no kind declares is still that kind's), importing
    every kind's type. Two kinds of one type are refused: which one's gold an example has would be a guess."""
    own = f"{kind.__module__}:{kind.__qualname__}"
    claims = [spec for spec in specs.values() if _names(spec.example, kind, own)]
    if not claims:
        declared: dict[type, list[KindSpec]] = {}
        for spec in specs.values():
            try:
                example_type = resolve(spec.example)
            except (ImportError, AttributeError, ValueError):
                continue
            if isinstance(example_type, type):
                declared.setdefault(example_type, []).append(spec)
        claims = next((declared[base] for base in kind.__mro__ if base in declared), [])
    if len(claims) > 1:
        from clue_core.errors import PluginError

        first, second = claims[:2]
        raise PluginError(f"example type {own} is kind {first.name!r}'s (plugin {_owner(first)}, as {first.example}) "
                          f"and kind {second.name!r}'s (plugin {_owner(second)}, as {second.example}): an example's "
                          f"kind is found by its type, so each kind needs its own (disable one: CLUE_DISABLE_PLUGINS)")
    return (claims[0], _gold_accessor(claims[0])) if claims else None


def spec_for(example: Any) -> tuple[KindSpec, Callable[[Any], Any]] | None:
    """``(kind, gold accessor)`` of an example, or None for an object of no declared kind."""
    kind = type(example)
    table = _SCOPE.get() or _PROCESS
    if kind not in table.by_type:
        found = _match(table.specs, kind)
        if found is None and table is _PROCESS and not _installed_read:  # a run's kinds are its kernel's only
            _read_installed()
            found = _match(_DECLARED, kind)
        table.by_type[kind] = found  # None too: a metric asking gold_of of a foreign object pays the search once
    return table.by_type[kind]


def recorded_gold(example: Any) -> Any:
    """The example's gold as a prediction record holds it (its kind's ``record_gold``), or None
    without gold: the record writer asks the kind, so no kind's shape is written in the kernel.

    A kind's gold or ``record_gold`` function that fails (or does not load) is its plugin's bug: one
    line naming the kind and the function (a ``PluginError``), as ``gold_of`` says it, no traceback.
    """
    found = spec_for(example)
    if found is None:
        return None
    spec, accessor = found
    step, ref = "gold", spec.gold
    try:
        gold = accessor(example)
        if gold is None or spec.record_gold is None:
            return gold
        step, ref = "record_gold", spec.record_gold
        return resolve(spec.record_gold)(gold)
    except Exception as exc:
        from clue_core.errors import PluginError

        raise PluginError(f"kind {spec.name!r}: {step} {ref} raised {type(exc).__name__}: {exc}") from exc
