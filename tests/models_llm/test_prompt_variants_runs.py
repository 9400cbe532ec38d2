"""Prompt spread end to end through ``clue-core run`` and ``clue-core report`` on llm-tiny.

AFQMC's sample: 16 labelled dev examples, 4 variants besides the default; C3's: 3 labelled dev
questions, 3 variants. llm-tiny is random, so the spread itself is whatever it is: what is checked
is that every variant was asked, scored and reported, and that nothing of the run's own changed.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

VARIANTS = {"afqmc": ["plain", "fields", "yes_no", "prefix"], "c3": ["plain", "fields", "prefix"]}
DEV = {"afqmc": 16, "c3": 3}


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _records(run: Path, split: str = "dev") -> list[dict]:
    return [json.loads(line) for line in (run / "predictions" / f"{split}.jsonl").read_text("utf-8").splitlines()]


def test_all_variants_score_beside_unchanged_predictions_reuse_the_cache_and_report(run_cli, tmp_path) -> None:
    plain = run_cli("run", "afqmc", "c3", "--model", "llm-tiny", "--sample", "-o", tmp_path / "off")
    assert plain.exit_code == 0, plain.output
    result = run_cli("run", "afqmc", "c3", "--model", "llm-tiny", "--sample", "--set", "prompt_variants=all",
                     "-o", tmp_path / "on")
    assert result.exit_code == 0, result.output
    for task, names in VARIANTS.items():
        off, on = tmp_path / "off" / task, tmp_path / "on" / task
        for split in ("dev", "test-1.1"):  # the run's predictions are the default prompt's
            assert [r["prediction"] for r in _records(on, split)] == [r["prediction"] for r in _records(off, split)]
        for path in (off / "submission").iterdir():
            assert (on / "submission" / path.name).read_bytes() == path.read_bytes()
        metrics, before = _json(on / "metrics.json"), _json(off / "metrics.json")
        dev = metrics["dev"]
        assert dev["accuracy"] == before["dev"]["accuracy"] and metrics["primary"] == before["primary"]
        scores = [dev[f"prompt_variant_{name}"] for name in ["default", *names]]
        assert scores[0] == dev["accuracy"]  # the default prompt scored as the run is
        assert math.isclose(dev["prompt_spread_mean"], statistics.fmean(scores))
        assert math.isclose(dev["prompt_spread_std"], statistics.stdev(scores))
        assert dev["prompt_spread_prompts"] == len(names) + 1
        assert not any(key.startswith("prompt_") for key in before["dev"])
        variants = metrics["model_info"]["prompt"]["variants"]
        assert variants["applied"] is True and list(variants["template_sha256"]) == ["default", *names]
        assert len(set(variants["template_sha256"].values())) == len(names) + 1
        assert variants["template_sha256"]["default"] == metrics["model_info"]["prompt"]["template_sha256"]
        # the default prompt's answers came from the first run's cache: only the variants' dev questions are new
        assert metrics["model_info"]["cache"]["misses"] == len(names) * DEV[task]
        for record in _records(on):
            assert list(record["raw"]["prompt_variants"]["values"]) == ["default", *names]
        assert all("prompt_variants" not in r["raw"] for r in _records(on, "test-1.1"))  # unlabelled: asked once
        assert "prompt_variants" not in metrics["report_settings"]  # the same predictions: the same report row
        assert _json(on / "manifest.json")["settings"]["prompt_variants"] == "all"

    again = run_cli("run", "afqmc", "c3", "--model", "llm-tiny", "--sample", "--set", "prompt_variants=all",
                    "-o", tmp_path / "again")
    assert again.exit_code == 0, again.output
    assert "llm-tiny (prompt yes_no): scoring 16 dev examples by likelihood (16 cached)" in again.output
    for task in VARIANTS:
        rerun = _json(tmp_path / "again" / task / "metrics.json")
        assert rerun["model_info"]["cache"]["misses"] == 0  # every variant answered from the cache
        assert rerun["dev"] == _json(tmp_path / "on" / task / "metrics.json")["dev"]

    report = run_cli("report", tmp_path / "on", "-o", tmp_path / "report")
    assert report.exit_code == 0, report.output
    markdown = (tmp_path / "report" / "report.md").read_text("utf-8")
    dev = _json(tmp_path / "on" / "afqmc" / "metrics.json")["dev"]
    row = next(line for line in markdown.split("## Prompt spread")[1].splitlines() if "| afqmc |" in line)
    assert (f"| {dev['accuracy']:.2f} | {dev['prompt_spread_mean']:.2f} ± {dev['prompt_spread_std']:.2f} over 5 "
            f"prompts | default {dev['prompt_variant_default']:.2f} · plain ") in row
    assert "over 4 prompts" in markdown.split("## Prompt spread")[1]  # c3
    assert "<section id='prompt-spread'>" in (tmp_path / "report" / "index.html").read_text("utf-8")
    plain_report = run_cli("report", tmp_path / "off", "-o", tmp_path / "plain-report")
    assert plain_report.exit_code == 0, plain_report.output
    assert "Prompt spread" not in (tmp_path / "plain-report" / "report.md").read_text("utf-8")


def test_an_unknown_variant_name_is_one_line_listing_the_tasks_and_nothing_is_written(run_cli, tmp_path) -> None:
    result = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "--set", "prompt_variants=plain,nope",
                     "-o", tmp_path / "out")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["error: setting 'prompt_variants': task afqmc has no prompt variant 'nope' (its variants: "
                     "plain, fields, yes_no, prefix; or all, default)"], result.output
    assert not (tmp_path / "out").exists()


def test_a_task_without_variants_under_all_is_said_in_one_line_and_runs_as_before(run_cli, tmp_path) -> None:
    result = run_cli("run", "dataclue-afqmc", "--model", "llm-tiny", "--sample", "--set", "prompt_variants=all",
                     "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    said = [line for line in result.output.splitlines() if "has no variants" in line]
    assert said == ["[dataclue-afqmc] prompt_variants=all: task dataclue-afqmc's prompt has no variants; its "
                    "prompt alone is asked"], result.output
    metrics = _json(tmp_path / "out" / "dataclue-afqmc" / "metrics.json")
    assert not any(key.startswith("prompt_") for key in metrics["dev"])
    assert metrics["model_info"]["prompt"]["variants"]["applied"] is False


def test_answers_read_from_a_record_do_not_take_the_setting(run_cli, tmp_path) -> None:
    """A record holds each question asked one way: its answer by id would be every variant's (a spread of 0), so
    ``answers:<file>`` does not declare the setting and a run asking for it stops before it starts."""
    file = tmp_path / "a.jsonl"
    file.write_text(json.dumps({"id": 0, "answer": "相同"}, ensure_ascii=False) + "\n", encoding="utf-8")
    result = run_cli("run", "afqmc", "--sample", "--model", f"answers:{file}", "--set", "prompt_variants=all",
                     "-o", tmp_path / "out")
    assert result.exit_code == 2 and "unknown setting 'prompt_variants'" in result.output, result.output
    assert not (tmp_path / "out").exists()


def test_a_server_moved_by_the_wording_shows_its_spread_and_every_variant_is_billed(run_cli, tmp_path) -> None:
    """A scripted server answering 相同 to every question, except 否 where asked for 是/否 (yes_no): the rewording
    alone moves AFQMC's accuracy from the share of gold 1s to the share of gold 0s."""
    from tests.support.openai_server import OpenAIServer, ScriptedEngine

    def answer(endpoint: str, body: dict) -> str:
        return "否" if "回答“是”" in str(body.get("prompt") or body.get("messages")) else "相同"

    with OpenAIServer(ScriptedEngine(answer), model="tiny") as server:
        result = run_cli("run", "afqmc", "--model", "openai:tiny", "--set", f"base_url={server.url}", "--sample",
                         "--set", "mode=generate", "--set", "prompt_variants=all", "--set", "price_prompt=1",
                         "-o", tmp_path / "o")
        assert result.exit_code == 0, result.output
        sent = len(server.requests)
    run = tmp_path / "o" / "afqmc"
    dev, info = _json(run / "metrics.json")["dev"], _json(run / "metrics.json")["model_info"]
    golds = [r["gold"] for r in _records(run)]
    ones = 100.0 * golds.count("1") / len(golds)
    assert dev["accuracy"] == dev["prompt_variant_default"] == ones
    assert dev["prompt_variant_yes_no"] == 100.0 - ones  # 否 is label 0 under yes_no's words
    assert dev["prompt_variant_plain"] == dev["prompt_variant_fields"] == dev["prompt_variant_prefix"] == ones
    assert math.isclose(dev["prompt_spread_std"], statistics.stdev([ones] * 4 + [100.0 - ones]))
    assert [r["prediction"] for r in _records(run)] == ["1"] * len(golds)  # the default prompt's answers
    assert sent == 16 * 5 + 16  # every dev question under 5 prompts, the test file's once
    assert info["usage"]["requests"] == sent  # the variants' questions are billed too
