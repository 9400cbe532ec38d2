"""Where a task's files come from: bundled samples, the user's folder or zip, or the cache.

(Skeleton: downloading, verification and safe extraction are being filled in.)
"""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

from clue_core.errors import DataError
from clue_core.specs import TaskSpec

JUNK_PARTS = ("__MACOSX",)
JUNK_NAMES = (".DS_Store",)


def is_junk(path: Path) -> bool:
    """Archive debris (macOS resource forks, Finder files) that readers must ignore."""
    return any(part in JUNK_PARTS for part in path.parts) or path.name in JUNK_NAMES or path.name.startswith("._")


def find_file(root: Path, name: str, *, required: bool = True) -> Path | None:
    """Find ``name`` anywhere below ``root`` (official zips nest differently), skipping junk.

    The shallowest match wins, so ``cmnli_public/train.json`` is found from the zip root.
    """
    root = Path(root)
    direct = root / name
    if direct.is_file():
        return direct
    matches = sorted(
        (p for p in root.rglob(name) if p.is_file() and not is_junk(p.relative_to(root))),
        key=lambda p: (len(p.relative_to(root).parts), str(p)),
    )
    if matches:
        return matches[0]
    if required:
        raise DataError(f"{root}: no file named {name!r} (looked in all sub-folders)")
    return None


def clue_home() -> Path:
    """The cache directory: ``$CLUE_HOME``, else ``$XDG_CACHE_HOME/clue-core``, else ``~/.cache/clue-core``."""
    if os.environ.get("CLUE_HOME"):
        return Path(os.environ["CLUE_HOME"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "clue-core"


def sample_dir(task: TaskSpec) -> Path:
    """The bundled sample folder of a task (``TaskSpec.sample = "package:relative/dir"``)."""
    if not task.sample:
        raise DataError(f"task {task.name} ships no bundled sample")
    package, _, relative = task.sample.partition(":")
    path = Path(str(importlib.resources.files(package).joinpath(relative)))
    if not path.is_dir():
        raise DataError(f"task {task.name}: bundled sample folder {path} is missing")
    return path
