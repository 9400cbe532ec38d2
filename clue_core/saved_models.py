"""A trained model saved to a folder, and how ``--model <folder>`` finds the family that loads it.

A learner's ``save`` writes :data:`MODEL_FILE` into the folder, naming its model family (``"model":
"hf"``) beside whatever else the family keeps there; :meth:`clue_core.kernel.Kernel.model` reads that
name back (:func:`saved_family`), so a saved model is run by the plugin that wrote it.
"""

from __future__ import annotations

from pathlib import Path

from clue_core.errors import ClueError

MODEL_FILE = "clue_model.json"
"""The file in a saved model directory that names the model family that wrote it."""


def is_there(path: Path) -> bool:
    """Whether ``path`` exists; a name the file system cannot hold (too long) does not, rather than an OSError."""
    try:
        return path.exists()
    except OSError:
        return False


def saved_family(folder: Path) -> str | None:
    """The model family ``folder``'s :data:`MODEL_FILE` names; None where the folder holds none.

    An unreadable or malformed file is one ``ClueError`` line naming it.
    """
    path = folder / MODEL_FILE
    if not is_there(path):
        return None
    import json

    try:
        family = json.loads(path.read_text(encoding="utf-8"))["model"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ClueError(f"{path}: unreadable model description ({exc})") from None
    if not isinstance(family, str) or not family:  # null, a number: not a family to look up as 'None'
        raise ClueError(f"{path}: field 'model' must name the model family that saved it (such as \"hf\"), "
                        f"not {json.dumps(family, ensure_ascii=False)}")
    return family
