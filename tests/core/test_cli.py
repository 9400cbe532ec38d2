"""The CLI end to end, in-process, on the example third-party plugin's task."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from clue_core.plugin import hookimpl

TASK = "review-sentiment"
SUBMISSION = "review_sentiment_predict.json"


@pytest.fixture
def sample_run(run_cli, tmp_path) -> Path:
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    return tmp_path / "runs" / TASK


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_version_and_help(run_cli):
    from clue_core import __version__

    assert run_cli("--version").output.strip().endswith(__version__)
    result = run_cli("--help")
    for command in ("list", "info", "run", "evaluate", "submit", "download", "report", "compare"):
        assert command in result.output


def test_list_shows_every_distribution_with_versions(run_cli):
    result = run_cli("list", "--json")
    rows = {row["name"]: row for row in json.loads(result.output)}
    for name in ("builtin", "clue-tasks-classic", "clue-tasks-mrc", "clue-models-hf", "clue-example-plugin"):
        assert rows[name]["status"] == "ok", rows[name]
        assert rows[name]["version"]
    assert TASK in rows["clue-example-plugin"]["provides"]["tasks"]
    table = run_cli("list").output
    assert "clue-example-plugin" in table and "0.1.0" in table


def test_list_tasks_and_info(run_cli):
    tasks = {t["name"]: t for t in json.loads(run_cli("list", "tasks", "--json").output)}
    assert tasks[TASK]["plugin"] == "clue-example-plugin"
    info = run_cli("info", TASK).output
    assert SUBMISSION in info and "positive (好评)" in info and "classification" in info


def test_run_writes_a_complete_run_directory(sample_run):
    manifest = json.loads((sample_run / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["plugins"]["clue-example-plugin"]["version"] == "0.1.0"
    assert manifest["seed"] == 42 and manifest["settings"] == {}  # the baseline reads no settings
    assert manifest["data"]["source"] == "sample"
    assert all(len(digest) == 64 for digest in manifest["data"]["files"].values())
    assert len(manifest["data"]["files"]) == 3
    metrics = json.loads((sample_run / "metrics.json").read_text())
    dev = read_jsonl(sample_run / "predictions" / "dev.jsonl")
    gold = [r["gold"] for r in dev]
    majority = max(set(gold), key=gold.count)
    assert metrics["dev"]["accuracy"] == pytest.approx(100 * gold.count(majority) / len(gold))
    test_lines = (Path(__file__).parents[2] / "examples/clue-example-plugin/clue_example_plugin/sample/test.json")
    test_ids = [json.loads(line)["id"] for line in test_lines.read_text().splitlines()]
    submission = read_jsonl(sample_run / "submission" / SUBMISSION)
    assert [row["id"] for row in submission] == test_ids
    assert {row["label"] for row in submission} == {majority}
    assert not list(sample_run.rglob("*.tmp"))


def test_run_refuses_to_overwrite_and_overwrites_when_asked(run_cli, sample_run):
    before = (sample_run / "manifest.json").read_text()
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", sample_run.parent)
    assert result.exit_code == 2
    assert "already holds a run" in result.output and "Traceback" not in result.output
    assert (sample_run / "manifest.json").read_text() == before
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", sample_run.parent, "--overwrite",
                     "--seed", "7")
    assert result.exit_code == 0
    assert json.loads((sample_run / "manifest.json").read_text())["seed"] == 7


def test_dry_run_writes_nothing_and_shows_resolved_settings(run_cli, isolated_kernel, tmp_path):
    import clue_example_plugin.hooks as example_hooks
    from tests.core.test_runner import MODEL

    class Model:
        @hookimpl
        def clue_models(self):
            return [MODEL]

    isolated_kernel.register(example_hooks, "example")
    isolated_kernel.register(Model(), "model")
    config = tmp_path / "run.toml"
    config.write_text('model = "m:x"\nseed = 5\n[settings]\nepochs = 9\n[task.review-sentiment]\nbatch_size = 4\n')
    result = run_cli("run", TASK, "--config", config, "--sample", "--set", "epochs=11", "--dry-run", "--json",
                     "-o", tmp_path / "out", kernel=isolated_kernel)
    plan = json.loads(result.output)[0]
    settings = {row["name"]: (row["value"], row["source"]) for row in plan["settings"]}
    assert settings["epochs"] == (11, "--set")  # flag beats file
    assert settings["batch_size"] == (4, f"config file {config} [task.review-sentiment]")  # per-task table
    assert settings["max_length"] == (64, "task review-sentiment")  # the task's recommendation
    assert settings["learning_rate"] == (2.0, "model m")  # the model's beats the task's
    assert plan["seed"] == 5  # seed in the config file, as --seed would give it
    assert not (tmp_path / "out").exists()
    text = run_cli("run", TASK, "--config", config, "--sample", "--dry-run", "--seed", "8", "-o", tmp_path / "o",
                   kernel=isolated_kernel).output
    assert "seed: 8" in text and "epochs = 9  (config file" in text


def test_no_train_predicts_with_a_saved_model(run_cli, sample_run, tmp_path):
    result = run_cli("run", TASK, "--model", sample_run / "model", "--no-train", "--sample", "-o", tmp_path / "again")
    assert result.exit_code == 0, result.output
    again = tmp_path / "again" / TASK
    assert (again / "submission" / SUBMISSION).read_text() == (sample_run / "submission" / SUBMISSION).read_text()
    assert not (again / "model").exists()


def test_evaluate_scores_run_and_leaderboard_shaped_files(run_cli, sample_run, tmp_path):
    metrics = json.loads((sample_run / "metrics.json").read_text())["dev"]
    result = run_cli("evaluate", TASK, sample_run / "predictions" / "dev.jsonl", "--sample", "--json")
    assert json.loads(result.output)["accuracy"] == pytest.approx(metrics["accuracy"])
    dev = read_jsonl(sample_run / "predictions" / "dev.jsonl")
    shaped = tmp_path / "dev_predict.json"
    shaped.write_text("".join(json.dumps({"id": r["id"], "label": r["gold"]}) + "\n" for r in dev))
    assert json.loads(run_cli("evaluate", TASK, shaped, "--sample", "--json").output)["accuracy"] == 100.0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": 1000, "label": "positive"}\n{"id": 1000\n', "dev_predict.json:2: invalid JSON"),
        ('{"id": 1000, "label": "positive"}\n', "no prediction for 15 of 16 examples"),
        ('{"id": 1000, "label": 1}\n',
         "dev_predict.json:1: field 'label': expected a label string, got 1 (a class index?"),
        ('{"id": 1000, "prediction": 1}\n', "dev_predict.json:1: field 'prediction': expected a label string, got 1"),
        ('{"id": 1000, "label": "neutral"}\n{"id": 1001, "label": "positive"}\n',
         "dev_predict.json:1: field 'label': 'neutral' is not a label"),
        ('{"id": 99, "label": "positive"}\n', "id(s) not in review-sentiment dev, first '99'"),
    ],
)
def test_evaluate_bad_predictions_is_one_clear_line(run_cli, tmp_path, content, message):
    path = tmp_path / "dev_predict.json"
    path.write_text(content)
    result = run_cli("evaluate", TASK, path, "--sample")
    assert result.exit_code == 2
    assert message in result.output, result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


def test_submit_builds_a_zip_with_files_at_its_root(run_cli, sample_run, tmp_path):
    out = tmp_path / "submit.zip"
    result = run_cli("submit", sample_run.parent, "-o", out)
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(out) as archive:
        assert archive.namelist() == [SUBMISSION]
        assert archive.read(SUBMISSION) == (sample_run / "submission" / SUBMISSION).read_bytes()
    assert run_cli("submit", sample_run, "-o", out).exit_code == 2  # exists: needs --force
    assert run_cli("submit", sample_run, "-o", out, "--force").exit_code == 0


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda lines: lines[:-1], "has 11 lines for 12 examples"),
        (lambda lines: [lines[1], lines[0], *lines[2:]], "id 2001 where review-sentiment test 1.0 has 2000"),
        (lambda lines: [lines[0].replace('"id": 2000', '"id": "2000"'), *lines[1:]],
         'id "2000" where review-sentiment test 1.0 has 2000 (echo the file\'s own id, with its type)'),
        (lambda lines: [lines[0].replace('"label": "', '"label": "x'), *lines[1:]], "is not a label of"),
    ],
)
def test_submit_refuses_incomplete_reordered_or_wrong_files(run_cli, sample_run, tmp_path, damage, message):
    path = sample_run / "submission" / SUBMISSION
    path.write_text("\n".join(damage(path.read_text().splitlines())) + "\n")
    out = tmp_path / "submit.zip"
    result = run_cli("submit", sample_run, "-o", out)
    assert result.exit_code == 2
    assert message in result.output, result.output
    assert not out.exists()


def test_submit_refuses_an_unfinished_run(run_cli, sample_run, tmp_path):
    manifest = sample_run / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"status": "complete"', '"status": "running"'))
    result = run_cli("submit", sample_run, "-o", tmp_path / "s.zip")
    assert result.exit_code == 2 and "did not complete" in result.output


def test_report_averages_leaderboard_groups(run_cli, sample_run):
    result = run_cli("report", sample_run.parent, "--json")
    scores = json.loads(result.output)
    assert scores["tasks"][0]["task"] == TASK
    assert scores["groups"] == {}  # the example task is in no leaderboard group


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "review-sentimnt", "--model", "baseline", "--sample"), "did you mean 'review-sentiment'"),
        (("run", TASK, "--model", "basline", "--sample"), "did you mean 'baseline'"),
        (("run", TASK, "--model", "baseline", "--data-dir", "/no/such/dir"), "/no/such/dir"),
        (("run", TASK, "--sample"), "choose a model with --model"),
        (("info", "nope"), "unknown task 'nope'"),
    ],
)
def test_bad_arguments_are_one_line_exit_2(run_cli, args, message):
    result = run_cli(*args)
    assert result.exit_code == 2
    assert message in result.output, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.toml", 'model = "baseline"\nseed = \n', "bad.toml: invalid TOML"),
        ("bad.yaml", "model: baseline\nseed: [1,\n", "bad.yaml:3: invalid YAML"),
        ("keys.toml", 'modle = "baseline"\n', "keys.toml: field 'modle': unknown key"),
        ("seed.yaml", "seed: abc\n", "field 'seed': expected an integer"),
    ],
)
def test_malformed_config_file(run_cli, tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "--config", path)
    assert result.exit_code == 2
    assert message in result.output, result.output


def test_yaml_config_runs(run_cli, tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(f"model: baseline\ntasks: [{TASK}]\nsample: true\nseed: 5\noutput_dir: {tmp_path / 'y'}\n")
    result = run_cli("run", "--config", path)
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "y" / TASK / "manifest.json").read_text())["seed"] == 5


def test_a_broken_plugin_shows_on_its_row_while_run_still_works(run_cli, isolated_kernel, tmp_path):
    import clue_example_plugin.hooks as example_hooks

    class Broken:
        @hookimpl
        def clue_tasks(self):
            raise ValueError("this plugin is broken")

    isolated_kernel.register(example_hooks, "clue-example-plugin")
    isolated_kernel.register(Broken(), "broken-plugin")
    listing = run_cli("list", kernel=isolated_kernel).output
    broken_row = next(line for line in listing.splitlines() if line.startswith("broken-plugin"))
    assert "error: PluginError: clue_tasks() raised ValueError: this plugin is broken" in broken_row
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", tmp_path / "r", kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    result = run_cli("run", "nothing", "--model", "baseline", "--sample", kernel=isolated_kernel)
    assert "plugins with errors: broken-plugin" in result.output


def test_strict_flag_reraises_with_traceback(isolated_kernel, monkeypatch):
    from click.testing import CliRunner

    from clue_core.cli import cli

    monkeypatch.setenv("CLUE_STRICT_PLUGINS", "1")
    monkeypatch.setattr("clue_core.kernel.Kernel.load_entrypoints", lambda self: self.register(
        type("Boom", (), {"clue_tasks": hookimpl(lambda self: 1 / 0)})(), "boom"))
    result = CliRunner().invoke(cli, ["list"])
    assert isinstance(result.exception, ZeroDivisionError)


def test_evaluate_warns_when_a_test_submission_is_scored_against_dev(run_cli, sample_run):
    result = run_cli("evaluate", TASK, sample_run / "submission" / SUBMISSION, "--sample")
    assert "warning: review_sentiment_predict.json is named like a review-sentiment test submission" in result.output


def test_no_train_refuses_a_model_that_was_never_trained(run_cli, tmp_path):
    result = run_cli("run", TASK, "--model", "baseline", "--no-train", "--sample", "-o", tmp_path)
    assert result.exit_code == 2 and "--no-train needs a trained model" in result.output
    assert not any(tmp_path.iterdir())


def test_keyed_files_name_an_entry_by_its_id_not_as_a_line(tmp_path, isolated_kernel):
    from clue_core.errors import InputError
    from clue_core.plugin import SpanExample, TaskSpec
    from clue_leaderboard.submission import match_entries

    task = TaskSpec("t", "span", "d", "m:r")
    examples = [SpanExample("q1", "c", "q"), SpanExample("q2", "c", "q")]
    with pytest.raises(InputError) as caught:
        match_entries(task, examples, [("q1", "a"), ("q2", 3)], tmp_path / "p.json", kernel=isolated_kernel,
                      ordered=False)
    assert str(caught.value) == f"{tmp_path / 'p.json'} (id q2): field 'label': expected an answer string, got 3"
