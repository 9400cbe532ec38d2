"""The outputs users see are the ones recorded before the contracts redesign.

Every task (and diagnostics, predicted by the trained OCNLI model) with ``baseline`` and
``hf-tiny`` on the bundled samples: dev metrics and the primary score exactly, every
per-example prediction (its recorded fields; per-label scores within 1e-5, since they are
rounded floats from a trained network) and the submission files byte for byte.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.golden.golden import DATA, MODELS, collect, run_model


def _same_record(got: dict, want: dict) -> bool:
    for key, value in want.items():
        if key not in got:
            return False
        if key == "scores" and value is not None:
            close = all(math.isclose(a, b, abs_tol=1e-5) for a, b in zip(got[key], value))
            if len(got[key]) != len(value) or not close:
                return False
        elif got[key] != value:
            return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_outputs_match_the_recorded_golden(model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    golden = json.loads((DATA / f"{model}.json").read_text(encoding="utf-8"))
    run_model(model, tmp_path / model)
    got = collect(tmp_path / model)
    assert sorted(got) == sorted(golden)
    for task, want in golden.items():
        have = got[task]
        assert have["dev"] == want["dev"], task
        assert have["primary"] == want["primary"], task
        assert have["submission"] == want["submission"], task
        assert sorted(have["predictions"]) == sorted(want["predictions"]), task
        for split, records in want["predictions"].items():
            assert len(have["predictions"][split]) == len(records), (task, split)
            for got_record, want_record in zip(have["predictions"][split], records):
                assert _same_record(got_record, want_record), (task, split, got_record, want_record)


def test_golden_compare_detects_a_changed_prediction() -> None:
    want = {"id": 1, "prediction": "0", "scores": [0.25, 0.75]}
    assert _same_record({"id": 1, "prediction": "0", "scores": [0.250001, 0.75], "extra": 1}, want)
    assert not _same_record({"id": 1, "prediction": "1", "scores": [0.25, 0.75]}, want)
    assert not _same_record({"id": 1, "prediction": "0", "scores": [0.26, 0.75]}, want)
    assert not _same_record({"id": 1, "scores": [0.25, 0.75]}, want)
