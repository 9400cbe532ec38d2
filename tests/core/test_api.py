"""``clue_core.api``: the commands as functions return what the commands write and print."""

from __future__ import annotations

import json
import zipfile

import pytest

from clue_core import api
from clue_core.errors import ClueError
from clue_core.record import RunRecord


@pytest.fixture
def home(monkeypatch, tmp_path):
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "clue-home"))
    monkeypatch.delenv("CLUE_STRICT_PLUGINS", raising=False)
    monkeypatch.delenv("CLUE_DISABLE_PLUGINS", raising=False)
    return tmp_path


def test_run_returns_the_records_the_command_writes(home, run_cli):
    lines: list[str] = []
    records = api.run(["afqmc", "tnews"], model="baseline", sample=True, output_dir=home / "api",
                      echo=lines.append)
    assert [type(r) for r in records] == [RunRecord, RunRecord]
    assert [r.metrics.task for r in records] == ["afqmc", "tnews"]
    assert lines, "progress lines reach echo"
    cli = run_cli("run", "afqmc", "tnews", "--model", "baseline", "--sample", "-o", home / "cli", "--json")
    assert cli.exit_code == 0, cli.output
    printed = json.loads(cli.stdout)
    assert [r.metrics.dev for r in records] == [p["dev"] for p in printed]
    first = next(records[0].predictions("dev"))
    assert first.id is not None and first.prediction is not None


def test_run_with_a_config_file_and_overrides_merges_like_the_cli(home):
    config = home / "run.toml"
    config.write_text('model = "baseline"\ntasks = ["afqmc"]\nsample = true\nseed = 7\n', encoding="utf-8")
    [record] = api.run(config=config, output_dir=home / "cfg")
    assert record.manifest.seed == 7 and record.manifest.model == "baseline"
    [row] = api.plan(config=config, seed=3)
    assert row["seed"] == 3 and row["task"] == "afqmc"


def test_evaluate_and_submit_match_the_run(home):
    [record] = api.run(["afqmc"], model="baseline", sample=True, output_dir=home / "runs")
    scored = api.evaluate("afqmc", record.prediction_file("dev"), sample=True)
    assert scored["examples"] > 0
    assert scored["accuracy"] == pytest.approx(record.metrics.dev["accuracy"])
    checked = api.submit([record.path], home / "sub.zip")
    assert [c.task for c in checked] == ["afqmc"]
    with zipfile.ZipFile(home / "sub.zip") as archive:
        assert sorted(archive.namelist()) == sorted(c.name for c in checked)


def test_errors_are_raised_with_the_commands_message(home):
    with pytest.raises(ClueError, match="unknown task 'afqmcc'; did you mean 'afqmc'"):
        api.run(["afqmcc"], model="baseline", sample=True, output_dir=home / "x")
    with pytest.raises(ClueError, match="choose a model with --model"):
        api.run(["afqmc"], sample=True)
    with pytest.raises(ClueError, match="--sample and --data-dir exclude each other"):
        api.evaluate("afqmc", home / "p.jsonl", sample=True, data_dir=home)
    assert not (home / "x").exists()


def test_report_returns_report_json_and_the_summary(home):
    [record] = api.run(["afqmc"], model="baseline", sample=True, output_dir=home / "runs")
    page = api.report([home / "runs"], output_dir=home / "page")
    assert (home / "page" / "index.html").is_file()
    assert page == json.loads((home / "page" / "report.json").read_text(encoding="utf-8"))
    assert [row["model"] for row in page["rows"]] == ["baseline"]
    summary = api.report([record.path])
    assert summary and "afqmc" in json.dumps(summary, ensure_ascii=False)
    with pytest.raises(ClueError, match="--force goes with -o DIR"):
        api.report([record.path], force=True)


def test_report_without_the_report_plugin_raises_the_install_line(home, monkeypatch):
    from clue_core.kernel import Kernel

    monkeypatch.setenv("CLUE_DISABLE_PLUGINS", "clue-report")
    with pytest.raises(ClueError, match="'clue-core report' comes with the clue-report plugin"):
        api.report([home], kernel=Kernel())


def test_run_first_takes_the_first_examples_as_the_cli_does(home, run_cli):
    """``api.run(first=N)`` is ``--first N``: the first N dev examples in file order, recorded as such;
    with ``limit`` beside it, the command's refusal."""
    [record] = api.run(["afqmc"], model="baseline", sample=True, output_dir=home / "api", first=3)
    cli = run_cli("run", "afqmc", "--model", "baseline", "--sample", "--first", "3", "-o", home / "cli")
    assert cli.exit_code == 0, cli.output
    ids = [p.id for p in record.predictions("dev")]
    assert len(ids) == 3 and record.manifest.first and record.manifest.limit == 3
    with open(home / "cli" / "afqmc" / "predictions" / "dev.jsonl", encoding="utf-8") as lines:
        assert [json.loads(line)["id"] for line in lines] == ids
    [row] = api.plan(["afqmc"], model="baseline", sample=True, first=3)
    assert row["task"] == "afqmc"
    with pytest.raises(ClueError, match="not both"):
        api.run(["afqmc"], model="baseline", sample=True, output_dir=home / "both", first=3, limit=3)
