"""The plugin's hooks: cheap to import (only clue_core.plugin)."""

from __future__ import annotations
