"""What the kernel hands a run beyond settings: --limit subsets, the cache folder, a judge
model in its own settings namespace, and what a learner reports about itself."""

from __future__ import annotations

import dataclasses
import json

import clue_example_plugin.hooks as example_hooks
from clue_core.plugin import (
    MetricResult,
    MetricSpec,
    ModelSpec,
    MultipleChoiceExample,
    Prediction,
    Setting,
    SplitData,
    hookimpl,
)
from clue_core.runner import limited

TASK = "review-sentiment"
SEEN: dict[str, object] = {}


class EchoLearner:
    """Predicts the first label; remembers the settings and context it was given."""

    def __init__(self, task, settings):
        self.label = task.labels[0]
        self.settings = settings

    def prepare(self, context):
        SEEN["prepared"] = context.seed

    def fit(self, train, dev, context):
        SEEN["train"] = len(train)
        SEEN["context"] = context

    def predict(self, examples):
        return [Prediction(e.id, self.label, raw=f"said {self.label}") for e in examples]

    def save(self, directory):
        pass

    def run_info(self):
        return {"prompt_hash": "abc", "settings": dict(self.settings)}


def create_echo(argument, task, settings):
    SEEN.setdefault("created", []).append((argument, dict(settings)))  # type: ignore[union-attr]
    return EchoLearner(task, settings)


def judged(examples, predictions, settings, context):
    judge = context.load_model(settings["judge"], "judge")
    SEEN["judge"] = judge
    verdicts = judge.predict(examples)
    return MetricResult({"judged": 100.0 * sum(v.value == "positive" for v in verdicts) / len(verdicts)})


class Plugin:
    @hookimpl
    def clue_models(self):
        return [ModelSpec("echo", create_echo, ("classification",), "echo",
                          family=True, trains=False, category="llm",
                          settings=(Setting("temperature", float, 0.0, "sampling temperature", minimum=0,
                                            cache_key=True),
                                    Setting("base_url", str, "", "server", cache_key=True)))]

    @hookimpl
    def clue_metrics(self):
        return [MetricSpec("judged", judged, "share a judge calls positive",
                           produces=("judged",), uses_model=True,
                           settings=(Setting("judge", str, "echo:judge-default", "judge model", names_model=True),))]

    @hookimpl
    def clue_tasks(self):
        task = example_hooks.clue_tasks()[0]
        return [dataclasses.replace(task, name="judged-task", metrics=("accuracy", "judged"), test_versions=())]


def test_limit_runs_a_seeded_subset_marked_partial_everywhere(run_cli, tmp_path):
    out = tmp_path / "out"
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out, "--limit", "5", "--seed", "3")
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / TASK / "manifest.json").read_text())
    metrics = json.loads((out / TASK / "metrics.json").read_text())
    assert manifest["partial"] == {"limit": 5} and metrics["partial"] is True
    assert metrics["counts"]["dev"] == 5 and metrics["counts"]["train"] == 5
    assert f"{TASK} (partial)" in result.output and "partial run: at most 5" in result.output
    ids = [json.loads(line)["id"] for line in (out / TASK / "predictions" / "dev.jsonl").read_text().splitlines()]
    again = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", tmp_path / "again", "--limit", "5",
                    "--seed", "3")
    assert again.exit_code == 0
    same = [json.loads(line)["id"] for line in
            (tmp_path / "again" / TASK / "predictions" / "dev.jsonl").read_text().splitlines()]
    assert ids == same and ids == sorted(ids)  # same seed, same subset, file order kept
    refused = run_cli("submit", out, "-o", tmp_path / "s.zip")
    assert refused.exit_code == 2 and "partial run (--limit 5) cannot be submitted" in refused.output
    assert run_cli("run", TASK, "--model", "baseline", "--sample", "-o", tmp_path / "z", "--limit", "0"
                   ).exit_code == 2


def test_limit_keeps_the_blanks_of_one_passage_together():
    examples = tuple(MultipleChoiceExample(f"{g}-{b}", "c", "q", ("a", "b"), group=f"p{g}")
                     for g in range(6) for b in range(3))
    part = limited(SplitData(examples), 2, seed=1)
    groups = {e.group for e in part.examples}
    assert len(groups) == 2 and len(part.examples) == 6
    assert list(part.examples) == [e for e in examples if e.group in groups]


def test_a_judge_model_gets_its_own_settings_namespace(run_cli, isolated_kernel, tmp_path):
    import clue_example_plugin.hooks as hooks

    isolated_kernel.register(hooks, "example")
    isolated_kernel.register(Plugin(), "plugin")
    SEEN.clear()
    result = run_cli("run", "judged-task", "--model", "echo:answerer", "--sample", "-o", tmp_path / "out",
                     "--set", "temperature=0.5", "--set", "judge=echo:the-judge", "--set", "judge.temperature=0.25",
                     "--set", "judge.base_url=http://127.0.0.1:9/v1", "--cache", tmp_path / "cache",
                     kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    created = SEEN["created"]
    # the judge is built once when the run is planned (its settings checked), again when it scores
    assert created[0] == ("the-judge", {"temperature": 0.25, "base_url": "http://127.0.0.1:9/v1"})
    assert ("answerer", {"temperature": 0.5, "base_url": ""}) in created
    assert created.count(created[0]) == 2
    context = SEEN["context"]
    assert SEEN["prepared"] == 42
    assert context.cache_dir == tmp_path / "cache" and context.seed == 42
    # the context carries no settings (each step gets its own); the run's settings are the manifest's
    assert getattr(context, "settings", None) is None
    recorded = json.loads((tmp_path / "out" / "judged-task" / "manifest.json").read_text())["settings"]
    assert "seed" not in recorded and recorded["judge.temperature"] == 0.25
    metrics = json.loads((tmp_path / "out" / "judged-task" / "metrics.json").read_text())
    assert metrics["dev"]["judged"] == 0.0  # the echo judge answers "negative" to everything
    assert metrics["model_info"] == {"prompt_hash": "abc", "settings": {"temperature": 0.5, "base_url": ""}}
    assert metrics["model_category"] == "llm"
    record = json.loads((tmp_path / "out" / "judged-task" / "predictions" / "dev.jsonl").read_text().splitlines()[0])
    assert record["raw"] == "said negative"
    bad = run_cli("run", "judged-task", "--model", "echo:a", "--sample", "-o", tmp_path / "bad",
                  "--set", "judge.temperatur=1", kernel=isolated_kernel)
    assert bad.exit_code == 2 and "unknown setting 'judge.temperatur'" in bad.output
    bad = run_cli("run", "judged-task", "--model", "echo:a", "--sample", "-o", tmp_path / "bad",
                  "--set", "judge.temperature=-1", kernel=isolated_kernel)
    assert bad.exit_code == 2 and "setting 'temperature' (--set): must be at least 0" in bad.output


def test_a_model_that_does_not_train_runs_a_task_without_a_training_split(run_cli, isolated_kernel, tmp_path):
    import clue_example_plugin.hooks as hooks

    class NoTrain:
        @hookimpl
        def clue_tasks(self):
            task = hooks.clue_tasks()[0]
            return [dataclasses.replace(task, name="dev-only", splits=("dev",), test_versions=())]

    isolated_kernel.register(NoTrain(), "no-train")
    isolated_kernel.register(Plugin(), "plugin")
    refused = run_cli("run", "dev-only", "--model", "baseline", "--sample", "-o", tmp_path / "a",
                      kernel=isolated_kernel)
    assert refused.exit_code == 2 and "has no training data" in refused.output
    SEEN.clear()
    result = run_cli("run", "dev-only", "--model", "echo:x", "--sample", "-o", tmp_path / "b", kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    assert SEEN["train"] == 0


def test_a_secret_setting_never_reaches_the_manifest_or_an_error(run_cli, isolated_kernel, tmp_path, monkeypatch):
    import sys

    from clue_core.settings import redact_command

    class Keyed:
        @hookimpl
        def clue_models(self):
            return [ModelSpec("keyed", create_echo, ("classification",), "needs a key", family=True, trains=False,
                              settings=(Setting("api_key", str, "", "the key", secret=True),
                                        Setting("retries", int, 1, "retries", minimum=0, secret=True)))]

    import clue_example_plugin.hooks as hooks

    isolated_kernel.register(hooks, "example")
    isolated_kernel.register(Keyed(), "keyed")
    argv = ["clue-core", "run", TASK, "--model", "keyed:m", "--set", "api_key=sk-live-123", "--set=judge.token=t0k"]
    monkeypatch.setattr(sys, "argv", argv)
    result = run_cli("run", TASK, "--model", "keyed:m", "--sample", "-o", tmp_path / "out", "--set",
                     "api_key=sk-live-123", kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    manifest = (tmp_path / "out" / TASK / "manifest.json").read_text()
    assert "sk-live-123" not in manifest and "t0k" not in manifest
    assert json.loads(manifest)["settings"]["api_key"] == "***"
    dry = run_cli("run", TASK, "--model", "keyed:m", "--sample", "--dry-run", "--set", "api_key=sk-live-123",
                  kernel=isolated_kernel)
    assert "sk-live-123" not in dry.output and "api_key = '***'" in dry.output
    bad = run_cli("run", TASK, "--model", "keyed:m", "--sample", "--dry-run", "--set", "retries=sekrit",
                  kernel=isolated_kernel)
    assert bad.exit_code == 2 and "sekrit" not in bad.output and "got the value given" in bad.output
    assert redact_command(["x", "--set", "openai.api_key=abc", "--set", "mode=generate"]) == [
        "x", "--set", "openai.api_key=***", "--set", "mode=generate"]
