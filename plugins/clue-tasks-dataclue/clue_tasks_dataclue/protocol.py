"""Does a run train with DataCLUE's fixed recipe? The "not the DataCLUE protocol" mark.

The kernel hands a task step only the values of the settings it declares, so the task declares
the recipe's settings as reader settings under the hf models' own names, types and defaults
(:data:`clue_tasks_dataclue.catalog.PROTOCOL_SETTINGS`): the kernel merges the declarations and
the reader of ``train`` receives the values the model trains with. A departure becomes one reader
note, which the runner prints and records in the manifest's ``notes``.

The model's name is given to no task step either, so the task's recommendation for the recipe's
model (and only for it) sets ``recipe_model``; a run of any other model reads it empty and is
marked. The seed stays unseen (run control, not a setting): the manifest records it, and
docs/dataclue.md says the recipe's is 42, clue-core's default. Values all equal to the declared
defaults mean no run planned them (``clue-core check``): a run always has the task's recommendation
layer, so no note is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MARK = "not the DataCLUE protocol"


def departures(folder: str, values: Mapping[str, Any] | None) -> list[str]:
    """``["epochs 3 (recipe 15)", …]``: each recipe value the run's settings change."""
    from clue_tasks_dataclue.catalog import PROTOCOL_SETTINGS, RECIPE_MODEL, RECIPE_MODEL_SETTING, recipe

    if not values:
        return []
    defaults = {s.name: s.default for s in PROTOCOL_SETTINGS}
    given = {name: values[name] for name in defaults if name in values}
    if given == {name: defaults[name] for name in given}:
        return []  # not planned by a run (check, evaluate): nothing to compare
    wanted = recipe(folder)
    changed = [f"model is not {RECIPE_MODEL}"] if given.get(RECIPE_MODEL_SETTING.name) != RECIPE_MODEL else []
    return changed + [f"{name} {given[name]!r} (recipe {wanted[name]!r})" for name in wanted
                      if name in given and given[name] != wanted[name]]


def note(folder: str, values: Mapping[str, Any] | None) -> str:
    """The note for a departing run, or ``""`` when it follows the recipe (as far as a task can see)."""
    changed = departures(folder, values)
    return f"{MARK}: {', '.join(changed)}" if changed else ""
