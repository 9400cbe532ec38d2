"""The specs of clue-tasks-mrc against the kernel's contracts: leaderboards, settings,
prompts, published scores, and the one public module."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from clue_core.checks import spec_problems
from clue_core.kernel import Kernel
from clue_core.plugin import Leaderboard, MultipleChoiceExample, SpanExample
from clue_tasks_mrc import hooks, published

from .conftest import SAMPLES

PACKAGE = Path(hooks.__file__).parent
TASKS = {spec.name: spec for spec in hooks.clue_tasks()}
READING = (Leaderboard("CLUE 1.1", "reading comprehension"), Leaderboard("CLUE 1.0", "reading comprehension"))
SPAN = {"max_length": 512, "doc_stride": 128, "max_query_length": 64, "max_answer_length": 50, "n_best": 20,
        "batch_size": 32, "learning_rate": 3e-5, "epochs": 2, "warmup_ratio": 0.1}
#: The values the golden outputs were recorded with (was ``hyperparameters``).
RECOMMENDED = {
    "cmrc2018": SPAN,
    "drcd": SPAN,
    "chid": {"max_length": 64, "batch_size": 24, "learning_rate": 2e-5, "epochs": 3, "warmup_ratio": 0.06},
    "c3": {"max_length": 512, "batch_size": 24, "learning_rate": 2e-5, "epochs": 8, "warmup_ratio": 0.1},
}


@pytest.fixture(scope="module")
def kernel() -> Kernel:
    return Kernel(strict=False, disabled=())


def test_plugin_modules_import_only_the_plugin_api():
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = [node.module] if isinstance(node, ast.ImportFrom) else (
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            wrong += [(path.name, m) for m in modules if m and m.startswith("clue_core") and m != "clue_core.plugin"]
    assert not wrong


def test_specs_load_without_problems(kernel):
    mrc = next(p for p in kernel.plugins if p.name == "clue-tasks-mrc")
    assert mrc.status == "ok", mrc.error
    assert mrc.provides == {"tasks": ["cmrc2018", "drcd", "chid", "c3"], "metrics": ["cmrc2018"]}
    for name in TASKS:
        assert spec_problems(kernel, "tasks", kernel.task(name)) == []


def test_leaderboards_and_recommendations():
    assert {name: spec.leaderboards for name, spec in TASKS.items()} == {
        "cmrc2018": READING, "drcd": (), "chid": READING, "c3": READING}
    assert {name: dict(spec.recommendations) for name, spec in TASKS.items()} == RECOMMENDED
    assert TASKS["cmrc2018"].primary_metric == "em"
    assert [s.name for spec in TASKS.values() for s in spec.decode_settings] == ["chid_decode"]


def test_metric_declares_what_it_returns():
    from clue_tasks_mrc.cmrc_metric import compute

    (metric,) = hooks.clue_metrics()
    result = compute([SpanExample("q", "北京", "?", answers=(("北京", 0),))], [None])
    assert metric.produces == ("em", "f1", "average") == tuple(result.totals) == tuple(result.per_example)


EXAMPLES = {
    "cmrc2018": SpanExample("q", "白鹭湖面积约为58平方公里。", "白鹭湖的面积约为多少？", title="白鹭湖"),
    "drcd": SpanExample("q", "梵語在歐洲的研究", "梵語在哪裡被研究？"),
    "chid": MultipleChoiceExample("#idiom000001#", "春节前的商业街上____，□□□□", "", ("车水马龙", "门可罗雀")),
    "c3": MultipleChoiceExample(1, "男：几点开会？\n女：下午三点。", "会议几点开始？", ("上午", "下午三点")),
}


@pytest.mark.parametrize("name", list(TASKS))
def test_prompts_render_every_field_they_name(name):
    prompt = TASKS[name].prompt
    assert prompt is not None and prompt.instruction and prompt.answer_prefix == "答案："
    example = EXAMPLES[name]
    fields = {f: getattr(example, f) for f in ("context", "question", "title") if hasattr(example, f)}
    if isinstance(example, MultipleChoiceExample):
        fields["choices"] = "\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(example.choices))
    used = {field for _, field, _, _ in string.Formatter().parse(prompt.template) if field}
    rendered = prompt.template.format(**fields)
    assert example.context in rendered
    expected = {"cmrc2018": {"context", "question"}, "drcd": {"context", "question"},
                "chid": {"context", "choices"}, "c3": {"context", "question", "choices"}}[name]
    assert used == expected
    assert not prompt.verbalizers  # answers are spans and choice letters, not label words


def test_drcd_prompt_is_in_traditional_characters():
    assert "閱讀" in TASKS["drcd"].prompt.instruction and "问题" not in TASKS["drcd"].prompt.template
    assert "____" in TASKS["chid"].prompt.instruction


@pytest.mark.parametrize("name", list(TASKS))
def test_published_scores_are_comparable_with_runs(name):
    spec = TASKS[name]
    scores = spec.published
    assert isinstance(scores, tuple) and scores
    produced = {"em", "f1", "average"} if spec.metrics == ("cmrc2018",) else {"accuracy"}
    versions = {t.version for t in spec.test_versions}
    keys = set()
    for score in scores:
        assert score.metric in produced and score.split in ("dev", "test") and score.mode == "fine-tuned"
        assert score.version in versions and 0 < score.value < 100 and score.source
        key = (score.model, score.split, score.version, score.metric)
        assert key not in keys, key  # one score per model, split, version and metric
        keys.add(key)


def test_published_values_from_the_sources():
    def value(task, model, split, metric):
        return next(s.value for s in TASKS[task].published
                    if (s.model, s.split, s.metric) == (model, split, metric))

    # CLUE 1.0 leaderboard, reading comprehension, test
    assert value("cmrc2018", "RoBERTa-wwm-large", "test", "em") == 77.95
    assert value("chid", "ALBERT-tiny", "test", "accuracy") == 43.53
    assert value("c3", "ALBERT-xxlarge", "test", "accuracy") == 73.28
    assert sum(s.split == "test" and s.metric == "em" for s in TASKS["cmrc2018"].published) == 12
    # per-task tables: CMRC2018 F1 / EM, DRCD
    assert value("cmrc2018", "BERT-base", "dev", "f1") == 85.48 and value("cmrc2018", "BERT-base", "dev", "em") == 64.77
    assert value("cmrc2018", "RoBERTa-wwm-ext", "test", "f1") == 90.41
    assert value("drcd", "RoBERTa-wwm-ext", "test", "em") == 88.12
    # PaddleNLP, dev
    assert value("cmrc2018", "HFL/RoBERTa-wwm-ext", "dev", "f1") == 88.50
    assert value("c3", "BERT-Base-Chinese", "dev", "accuracy") == 65.38
    chid = {s.version for s in TASKS["chid"].published if s.split == "test"}
    assert chid == {"1.0"} and published.TEST_VERSION["chid"] == "1.0"


def test_samples_are_where_the_specs_say():
    for name, spec in TASKS.items():
        assert spec.sample == f"clue_tasks_mrc:samples/{name}" and (SAMPLES / name).is_dir()
