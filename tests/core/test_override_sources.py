"""An override's source label: ``--set`` unless the caller names another. A sweep's ``[grid]`` and
``[settings]`` values reach the kernel as overrides, and its errors and ``--dry-run`` sources said
``(--set)``, an option the user never gave."""

from __future__ import annotations

import pytest

from clue_core import api
from clue_core.errors import ClueError


def test_a_named_source_is_shown_and_the_others_stay_set() -> None:
    planned = api.plan("tnews", "llm-tiny", sample=True, overrides={"temperature": 0.5, "stop": "x"},
                       override_sources={"temperature": "[grid] in s.toml"})
    sources = {s["name"]: s["source"] for s in planned[0]["settings"]}
    assert sources["temperature"] == "[grid] in s.toml"
    assert sources["stop"] == "--set"


def test_an_error_names_the_source_given() -> None:
    with pytest.raises(ClueError, match=r"^setting 'temperature' \(\[settings\] in s.toml\): "):
        api.plan("tnews", "llm-tiny", sample=True, overrides={"temperature": float("nan")},
                 override_sources={"temperature": "[settings] in s.toml"})
    with pytest.raises(ClueError, match=r"^unknown setting 'temprature' \(\[grid\] in s.toml\)"):
        api.plan("tnews", "llm-tiny", sample=True, overrides={"temprature": 0.5},
                 override_sources={"temprature": "[grid] in s.toml"})
