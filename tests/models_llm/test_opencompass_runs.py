"""OpenCompass presets end to end through the CLI (llm-tiny on the bundled samples), and ``--first N``:
the first N examples in file order, recorded in the manifest and held to by ``--resume``."""

from __future__ import annotations

import json
from pathlib import Path

from clue_core.reading import read_split
from clue_models_llm.protocols import load
from tests.models_llm.test_opencompass_presets import sample_dir


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def test_c3_preset_runs_and_is_recorded(run_cli, kernel, tmp_path) -> None:
    preset = "opencompass:CLUE_C3_ppl_e24a31"
    result = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--set", f"protocol={preset}",
                     "-o", tmp_path / "run")
    assert result.exit_code == 0, result.output
    run = tmp_path / "run" / "c3"
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    assert manifest["settings"]["protocol"] == preset
    metrics = json.loads((run / "metrics.json").read_text("utf-8"))
    assert metrics["report_settings"]["protocol"] == preset  # shown beside the scores in reports
    info = metrics["model_info"]
    task = kernel.task("c3")
    protocol = load(task, preset)
    assert info["protocol"]["name"] == preset and info["protocol"]["sha256"] == protocol.digest()
    assert info["decoding"] == {"mode": "loglikelihood", "score": "mean_all"}
    examples = read_split(task, sample_dir(task), "dev").examples
    records = read_jsonl(run / "predictions" / "dev.jsonl")
    assert len(records) == len(examples)
    for record, example in zip(records, examples):
        question = protocol.render(example)
        assert record["raw"]["prompt"] == question.prompt and record["raw"]["continuations"] == list(question.choices)
        assert record["raw"]["score"] == "mean_all"
        assert record["prediction"] == max(range(len(record["scores"])), key=lambda j: (record["scores"][j], -j))
    # clue-core's own protocol asks other prompts: the preset's results are not reused for it
    own = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "-o", tmp_path / "own")
    assert own.exit_code == 0, own.output
    own_info = json.loads((tmp_path / "own" / "c3" / "metrics.json").read_text("utf-8"))["model_info"]
    assert own_info["protocol"] == {"name": "clue-core"} and own_info["cache"]["hits"] == 0
    # the report shows each run's protocol beside the other's: two rows
    report = run_cli("report", tmp_path / "run", tmp_path / "own", "-o", tmp_path / "report")
    assert report.exit_code == 0, report.output
    rows = [line for line in report.output.splitlines() if "llm-tiny" in line]
    assert any(f'protocol="{preset}"' in line for line in rows) and any('protocol="clue-core"' in line for line in rows)
    # beside the scores, the rule the preset scored by (mean_all), not the value the run was given (sum)
    shown = {entry["path"]: entry["report_settings"]
             for entry in json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))["runs"]}
    assert shown[str(run)]["score"] == "mean_all" and shown[str(tmp_path / "own" / "c3")]["score"] == "sum"


def test_unknown_preset_is_one_line_listing_the_tasks_presets(run_cli, tmp_path) -> None:
    result = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--set", "protocol=opencompass:CLUE_C3_nope",
                     "-o", tmp_path / "run")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "'opencompass:CLUE_C3_ppl_e24a31'" in lines[0]
    assert "'clue-core'" in lines[0] and not (tmp_path / "run").exists()


def test_a_preset_refuses_few_shot(run_cli, tmp_path) -> None:
    result = run_cli("run", "fewclue-eprstmt", "--model", "llm-tiny", "--sample", "--set", "shots=1",
                     "--set", "protocol=opencompass:FewCLUE_eprstmt_ppl_f1e631", "-o", tmp_path / "run")
    assert result.exit_code == 2 and "zero-shot" in result.output and "Traceback" not in result.output


def test_a_gen_preset_post_processes_as_its_config(run_cli, kernel, tmp_path) -> None:
    preset = "opencompass:FewCLUE_eprstmt_gen_740ea0"
    result = run_cli("run", "fewclue-eprstmt", "--model", "llm-tiny", "--sample", "--set", f"protocol={preset}",
                     "--set", "max_new_tokens=3", "-o", tmp_path / "run")
    assert result.exit_code == 0, result.output
    run = tmp_path / "run" / "fewclue-eprstmt"
    info = json.loads((run / "metrics.json").read_text("utf-8"))["model_info"]
    assert info["protocol"]["postprocess"] == "first_capital"
    assert info["decoding"]["stop"] == [] and info["decoding"]["max_new_tokens"] == 3
    for record in read_jsonl(run / "predictions" / "dev.jsonl"):
        letter = next((c for c in record["raw"]["generation"] if c.isupper()), "")
        assert record["raw"]["answer"] == letter
        assert record["prediction"] == {"A": "Positive", "B": "Negative"}.get(letter)


def test_first_takes_examples_in_file_order(run_cli, kernel, tmp_path) -> None:
    task = kernel.task("c3")
    examples = read_split(task, sample_dir(task), "dev").examples
    assert len(examples) > 2
    result = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--first", "2", "-o", tmp_path / "run")
    assert result.exit_code == 0, result.output
    run = tmp_path / "run" / "c3"
    assert [r["id"] for r in read_jsonl(run / "predictions" / "dev.jsonl")] == [e.id for e in examples[:2]]
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    assert manifest["partial"] == {"limit": 2, "first": True}
    assert any("first 2 examples" in note for note in manifest["notes"])
    # --resume holds the run to how it took its examples
    again = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--limit", "2", "--resume", "-o", tmp_path / "run")
    assert again.exit_code == 2 and "--first" in again.output
    both = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--limit", "2", "--first", "2", "-o", tmp_path / "x")
    assert both.exit_code == 2 and both.output.startswith("error: ") and not (tmp_path / "x").exists()
    zero = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--first", "0", "-o", tmp_path / "y")
    assert zero.exit_code == 2 and "--first must be at least 1" in zero.output


def test_first_keeps_passage_groups_whole_in_file_order() -> None:
    from clue_core.plugin import MultipleChoiceExample, SplitData
    from clue_core.runner import limited

    examples = tuple(MultipleChoiceExample(id=i, context="c", question="q", choices=("a", "b"), label=0,
                                           group=f"p{i // 2}") for i in range(7))
    part = SplitData(examples)
    assert [e.id for e in limited(part, 2, seed=1, first=True).examples] == [0, 1, 2, 3]  # passages p0, p1
    seeded = {tuple(e.id for e in limited(part, 2, seed=s).examples) for s in range(20)}
    assert len(seeded) > 1  # --limit draws; --first does not
    assert limited(part, 9, seed=1, first=True) is part


def test_a_run_from_before_the_protocol_setting_shares_the_row_of_clue_cores_protocol(run_cli, tmp_path) -> None:
    """A run made before ``protocol`` existed was asked by clue-core's own prompt: one row with today's runs."""
    for task in ("afqmc", "c3"):
        result = run_cli("run", task, "--model", "llm-tiny", "--sample", "-o", tmp_path / "runs")
        assert result.exit_code == 0, result.output
    metrics_path = tmp_path / "runs" / "afqmc" / "metrics.json"
    metrics = json.loads(metrics_path.read_text("utf-8"))
    del metrics["report_settings"]["protocol"]  # as written before the setting
    metrics_path.write_text(json.dumps(metrics), "utf-8")
    report = run_cli("report", tmp_path / "runs", "-o", tmp_path / "report")
    assert report.exit_code == 0, report.output
    rows = [line for line in report.output.splitlines() if line.startswith("llm-tiny")]
    assert len(rows) == 1 and rows[0].rstrip().endswith("2"), report.output
