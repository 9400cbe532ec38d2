"""Circular evaluation end to end through ``clue-core run`` and ``clue-core report`` on llm-tiny.

C3's sample: 3 labelled dev questions of 3, 4 and 2 choices (9 orders under ``circular=all``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ORDERS = 3 + 4 + 2  # the rotations of C3's sample dev questions


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _records(run: Path, split: str = "dev") -> list[dict]:
    return [json.loads(line) for line in (run / "predictions" / f"{split}.jsonl").read_text("utf-8").splitlines()]


def _rates(dev: dict) -> dict[str, float]:
    return {k: v for k, v in dev.items() if k.startswith("pick_rate_")}


def test_c3_circular_all_scores_reuses_the_cache_and_reports(run_cli, tmp_path) -> None:
    plain = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "-o", tmp_path / "off")
    assert plain.exit_code == 0, plain.output
    off = tmp_path / "off" / "c3"
    assert "circular_accuracy" not in _json(off / "metrics.json")["dev"]
    assert "circular" not in _json(off / "metrics.json")["model_info"]

    result = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--set", "circular=all", "-o", tmp_path / "on")
    assert result.exit_code == 0, result.output
    run = tmp_path / "on" / "c3"
    metrics = _json(run / "metrics.json")
    dev = metrics["dev"]
    assert dev["accuracy"] == _json(off / "metrics.json")["dev"]["accuracy"]  # plain accuracy unchanged
    assert 0.0 <= dev["circular_accuracy"] <= dev["accuracy"] and dev["circular_questions"] == 3
    assert math.isclose(sum(_rates(dev).values()), 100.0) and set(_rates(dev)) <= {f"pick_rate_{c}" for c in "ABCD"}
    info = metrics["model_info"]
    assert info["circular"] == {"setting": "all", "applied": True, "orders": "every rotation", "seed": 42,
                                "questions": 3}
    # the original orders were cached by the circular=off run: only the other rotations (and nothing of test) computed
    assert info["cache"]["misses"] == ORDERS - 3 and info["cache"]["written"] == ORDERS - 3
    records = _records(run)
    assert [r["prediction"] for r in records] == [r["prediction"] for r in _records(off)]
    assert [len(r["raw"]["circular"]["orders"]) for r in records] == [3, 4, 2]
    for record in records:  # the original order first; its pick is the prediction
        assert record["raw"]["circular"]["orders"][0] == sorted(record["raw"]["circular"]["orders"][0])
        assert record["raw"]["circular"]["picks"][0] == record["prediction"]
    assert all("circular" not in r["raw"] for r in _records(run, "test-1.1"))  # unlabelled: asked once
    submitted = run / "submission" / "c311_predict.json"
    assert submitted.read_bytes() == (off / "submission" / "c311_predict.json").read_bytes()
    # the same predictions: recorded as a setting, not one that sets the run apart in a report's rows
    assert "circular" not in metrics["report_settings"]
    assert _json(run / "manifest.json")["settings"]["circular"] == "all"

    again = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--set", "circular=all", "-o", tmp_path / "again")
    assert again.exit_code == 0, again.output
    assert f"scoring {ORDERS} dev examples by likelihood ({ORDERS} cached)" in again.output
    cache = _json(tmp_path / "again" / "c3" / "metrics.json")["model_info"]["cache"]
    assert cache["misses"] == 0 and cache["written"] == 0  # no rotation scored again
    assert _json(tmp_path / "again" / "c3" / "metrics.json")["dev"] == dev

    report = run_cli("report", run, "-o", tmp_path / "report")
    assert report.exit_code == 0, report.output
    markdown = (tmp_path / "report" / "report.md").read_text("utf-8")
    assert "## Circular evaluation" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| llm-tiny") and "| c3 |" in line)
    assert f"| {dev['circular_accuracy']:.2f} | 3 | A " in row
    page = (tmp_path / "report" / "index.html").read_text("utf-8")
    assert "circular_accuracy" in page and "pick_rate_A" in page
    plain_report = run_cli("report", off, "-o", tmp_path / "plain-report")
    assert plain_report.exit_code == 0, plain_report.output
    assert "Circular" not in (tmp_path / "plain-report" / "report.md").read_text("utf-8")


def test_generation_and_seeded_orders(run_cli, tmp_path) -> None:
    result = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--set", "mode=generate", "--set",
                     "max_new_tokens=4", "--set", "circular=3", "-o", tmp_path / "gen")
    assert result.exit_code == 0, result.output
    metrics = _json(tmp_path / "gen" / "c3" / "metrics.json")
    dev = metrics["dev"]
    assert dev["circular_questions"] == 3 and dev["circular_accuracy"] <= dev["accuracy"]
    assert math.isclose(sum(_rates(dev).values()), 100.0)
    records = _records(tmp_path / "gen" / "c3")
    orders = [r["raw"]["circular"]["orders"] for r in records]
    assert [len(o) for o in orders] == [3, 3, 2]  # 3 seeded orders; a 2-choice question has only 2
    assert all(len({tuple(x) for x in o}) == len(o) for o in orders)
    assert all("generation" in r["raw"] for r in records)
    assert metrics["model_info"]["circular"]["orders"] == ("3 seeded orders (the original first; every order of a "
                                                           "question that has fewer)")  # the 2-choice one: 2
    again = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--set", "mode=generate", "--set",
                    "max_new_tokens=4", "--set", "circular=3", "-o", tmp_path / "gen2")
    assert again.exit_code == 0, again.output
    assert [r["raw"]["circular"] for r in _records(tmp_path / "gen2" / "c3")] == [r["raw"]["circular"]
                                                                                   for r in records]
    assert _json(tmp_path / "gen2" / "c3" / "metrics.json")["model_info"]["cache"]["misses"] == 0


def test_chid_is_reordered_per_blank_and_classification_is_not(run_cli, tmp_path) -> None:
    result = run_cli("run", "chid", "afqmc", "--model", "llm-tiny", "--sample", "--set", "circular=all",
                     "-o", tmp_path)
    assert result.exit_code == 0, result.output
    chid = _json(tmp_path / "chid" / "metrics.json")
    blanks = _records(tmp_path / "chid")
    assert chid["dev"]["circular_questions"] == len(blanks) and chid["dev"]["circular_accuracy"] <= chid["primary"]
    assert math.isclose(sum(_rates(chid["dev"]).values()), 100.0)
    for record in blanks:  # each blank's own rotations; its prediction the passage's joint assignment
        orders = record["raw"]["circular"]["orders"]
        assert len(orders) == len(orders[0]) and orders[1] == orders[0][1:] + orders[0][:1]
    metrics = _json(tmp_path / "afqmc" / "metrics.json")
    assert not any(k.startswith(("circular", "pick_rate")) for k in metrics["dev"])
    assert metrics["model_info"]["circular"]["applied"] is False
    assert "classification" in metrics["model_info"]["circular"]["note"]


@pytest.mark.parametrize("value", ["1", "65", "some", "true"])
def test_a_bad_circular_value_is_one_line_and_exit_2(run_cli, tmp_path, value) -> None:
    result = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--set", f"circular={value}", "-o", tmp_path)
    assert result.exit_code == 2, result.output
    assert "circular" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "c3").exists()


def test_a_server_that_always_answers_a_is_caught_and_every_order_is_billed(run_cli, tmp_path) -> None:
    from tests.support.openai_server import OpenAIServer, ScriptedEngine

    with OpenAIServer(ScriptedEngine(lambda endpoint, body: {"content": "A"}), model="tiny") as server:
        result = run_cli("run", "c3", "--model", "openai:tiny", "--set", f"base_url={server.url}", "--sample",
                         "--set", "mode=generate", "--set", "circular=all", "--set", "price_prompt=1",
                         "-o", tmp_path / "o")
        assert result.exit_code == 0, result.output
        sent = len(server.requests)
    metrics = _json(tmp_path / "o" / "c3" / "metrics.json")
    dev = metrics["dev"]
    assert _rates(dev) == {"pick_rate_A": 100.0}  # position bias in full view
    assert dev["circular_accuracy"] == 0.0 and dev["circular_questions"] == 3
    assert dev["accuracy"] == 100.0 * sum(r["gold"] == 0 for r in _records(tmp_path / "o" / "c3")) / 3
    assert sent == ORDERS + 3 + 1  # dev's 9 orders, test 1.1's 3 and test 1.0's 1 questions
    assert metrics["model_info"]["usage"]["requests"] == sent  # the reordered questions are billed too
