"""Prompt variants, piece by piece: the specs and their checks, the rendering, the setting, the spread metric.

End to end through ``clue-core run`` and ``clue-core report``: test_prompt_variants_runs.py.
"""

from __future__ import annotations

import dataclasses
import math
import statistics

import pytest

from clue_builtin import prompt_spread
from clue_core.checks import spec_problems
from clue_core.plugin import ClassificationExample, ClueError, Prediction, PromptVariant, prompt_variant, variant_names
from clue_models_llm import variants
from clue_models_llm.prompts import Renderer

CLASSIC = ("afqmc", "tnews", "iflytek", "ocnli", "cmnli", "cluewsc2020", "csl")
MRC = ("cmrc2018", "drcd", "chid", "c3")
FEWCLUE = tuple(f"fewclue-{name}" for name in ("eprstmt", "csldcp", "tnews", "iflytek", "ocnli", "bustm", "chid",
                                                "csl", "cluewsc"))
OTHERS = ("cluener2020", "kgclue", "superclue-close")  # DataCLUE's tasks and SuperCLUE's open questions have none


@pytest.mark.parametrize("name", [*CLASSIC, *MRC, *FEWCLUE, *OTHERS])
def test_every_task_with_a_prompt_ships_three_to_five_variants_that_pass_the_checks(kernel, name: str) -> None:
    task = kernel.task(name)
    names = variant_names(task.prompt)
    assert names[0] == "default" and 4 <= len(names) <= 6, names  # the default and 3-5 rewordings
    assert not spec_problems(kernel, "tasks", task)
    skeletons = {Renderer(dataclasses.replace(task, prompt=prompt_variant(task.prompt, n))).skeleton() for n in names}
    assert len(skeletons) == len(names)  # every variant words the prompt differently


def test_variants_render_different_prompts_and_answer_words_for_one_example(kernel) -> None:
    task = kernel.task("afqmc")
    example = ClassificationExample("7", "花呗怎么还款", "花呗如何还钱", "1")
    asked = {name: Renderer(dataclasses.replace(task, prompt=prompt_variant(task.prompt, name))).render(example)
             for name in variant_names(task.prompt)}
    assert len({question.prompt for question in asked.values()}) == len(asked)
    assert asked["default"].choices == ("不同", "相同") and asked["yes_no"].choices == ("否", "是")
    assert asked["prefix"].prompt.endswith("\n答：") and asked["default"].prompt.endswith("\n答案：")
    assert "句子一：花呗怎么还款\n句子二：花呗如何还钱" in asked["fields"].prompt
    assert all(q.values == ("0", "1") for q in asked.values())  # the same labels: only the words change
    assert prompt_variant(task.prompt, "default") is task.prompt
    assert prompt_variant(task.prompt, "plain").variants == ()
    with pytest.raises(KeyError):
        prompt_variant(task.prompt, "nope")


@pytest.mark.parametrize(("variant", "problem"), [
    (PromptVariant("odd", template="{text}\n{passage}"), "prompt variant odd: prompt template uses {passage}"),
    (PromptVariant("few", verbalizers={"0": "否"}), "prompt variant few: prompt verbalizers miss labels 1"),
    (PromptVariant("same", verbalizers={"0": "是", "1": "是"}), "prompt variant same: prompt verbalizers must be "
                                                                 "distinct"),
    (PromptVariant("Bad Name", answer_prefix="答："), "prompt variant name 'Bad Name' must be"),
    (PromptVariant("default", answer_prefix="答："), "prompt variant name 'default' must be"),
    (PromptVariant("idle"), "prompt variant idle: changes nothing of the prompt"),
])
def test_a_broken_variant_is_a_problem_of_its_task(kernel, variant: PromptVariant, problem: str) -> None:
    task = kernel.task("afqmc")
    broken = dataclasses.replace(task, prompt=dataclasses.replace(task.prompt, variants=(variant,)))
    problems = spec_problems(kernel, "tasks", broken)
    assert any(p.startswith(problem) for p in problems), problems


def test_two_variants_of_one_name_and_a_wrong_type_are_problems(kernel) -> None:
    task = kernel.task("afqmc")
    twice = (PromptVariant("a", answer_prefix="答："), PromptVariant("a", answer_prefix="答案是："))
    problems = spec_problems(kernel, "tasks", dataclasses.replace(task, prompt=dataclasses.replace(
        task.prompt, variants=twice)))
    assert "prompt variant names must be unique" in problems
    problems = spec_problems(kernel, "tasks", dataclasses.replace(task, prompt=dataclasses.replace(
        task.prompt, variants=[PromptVariant("a", answer_prefix="答：")])))
    assert "prompt variants must be a tuple of PromptVariant" in problems


def test_the_setting_picks_variants_and_refuses_an_unknown_name_listing_the_tasks(kernel) -> None:
    task = kernel.task("afqmc")
    assert variants.chosen(task, "default") == []
    assert variants.chosen(task, "all") == ["plain", "fields", "yes_no", "prefix"]
    assert variants.chosen(task, "prefix, plain,default") == ["plain", "prefix"]  # in the prompt's order
    with pytest.raises(ClueError) as raised:
        variants.chosen(task, "plain,nope")
    assert str(raised.value) == ("setting 'prompt_variants': task afqmc has no prompt variant 'nope' (its variants: "
                                 "plain, fields, yes_no, prefix; or all, default)")
    with pytest.raises(ClueError, match="no prompt variant ','"):
        variants.chosen(task, ",")
    spread = variants.Spread(kernel.task("dataclue-afqmc"), "all")
    assert spread.names == [] and spread.metrics == () and "has no variants" in (spread.note or "")
    preset = variants.Spread(task, "all", preset=True)
    assert preset.names == [] and "protocol preset" in (preset.note or "")
    assert variants.Spread(task, "all").metrics == (variants.METRIC,)
    assert variants.Spread(task, "default").info(None) is None


class _Context:
    """The run context the metric reads: the split being scored, the primary metric, ``score``'s accuracy."""

    def __init__(self, examples, split: str = "dev") -> None:
        self.split, self.primary_metric, self.examples, self.calls = split, "accuracy", examples, 0

    def score(self, predictions):
        self.calls += 1
        gold = {e.id: e.label for e in self.examples}
        return {"accuracy": 100.0 * sum(p.value == gold[p.id] for p in predictions) / len(self.examples)}


def _spread_case():
    examples = [ClassificationExample(str(i), "t", None, "1") for i in range(4)]
    answers = {"default": "1110", "plain": "1100", "prefix": "1111"}  # 75, 50, 100
    predictions = [Prediction(e.id, answers["default"][i], None, {"prompt_variants": {"values": {
        name: answers[name][i] for name in answers}}}) for i, e in enumerate(examples)]
    return examples, predictions


def test_the_spread_metric_scores_each_variant_as_the_run_does_and_their_mean_and_std() -> None:
    examples, predictions = _spread_case()
    context = _Context(examples)
    totals = prompt_spread.compute(examples, predictions, context=context).totals
    assert {k: totals[k] for k in ("prompt_variant_default", "prompt_variant_plain", "prompt_variant_prefix")} == {
        "prompt_variant_default": 75.0, "prompt_variant_plain": 50.0, "prompt_variant_prefix": 100.0}
    assert math.isclose(totals["prompt_spread_mean"], 75.0)
    assert math.isclose(totals["prompt_spread_std"], statistics.stdev([75.0, 50.0, 100.0]))  # n - 1: 25.0
    assert totals["prompt_spread_prompts"] == 3 and context.calls == 3
    assert prompt_spread.variants(totals) == {"default": 75.0, "plain": 50.0, "prefix": 100.0}


def test_the_spread_metric_gives_nothing_without_the_runs_dev_context_or_records() -> None:
    examples, predictions = _spread_case()
    assert prompt_spread.compute(examples, predictions).totals == {}  # context.score's own call: no recursion
    assert prompt_spread.compute(examples, predictions, context=_Context(examples, "test_public")).totals == {}
    bare = [dataclasses.replace(p, raw={}) for p in predictions]
    assert prompt_spread.compute(examples, bare, context=_Context(examples)).totals == {}
    # an example without a record (no gold: not asked again) is scored as the run answered it
    mixed = [*predictions[:2], dataclasses.replace(predictions[2], raw=None), predictions[3]]
    totals = prompt_spread.compute(examples, mixed, context=_Context(examples)).totals
    assert totals["prompt_variant_plain"] == 75.0  # example 2 keeps its default answer "1" (plain said "0")


def test_ask_keeps_the_default_predictions_and_records_each_variant_on_labelled_dev_examples_only(kernel) -> None:
    task = kernel.task("afqmc")
    spread = variants.Spread(task, "yes_no,prefix")
    spread.fit(lambda worded: Renderer(worded))
    examples = [ClassificationExample("0", "a", "b", "1"), ClassificationExample("1", "c", "d", None)]
    default = [Prediction("0", "1", (-2.0, -1.0), {"usage": [{"prompt_tokens": 3}]}), Prediction("1", "0", None, {})]
    asked: list[tuple[str, list[str]]] = []

    def answer(name, renderer, subset):
        asked.append((name, [renderer.render(e).prompt for e in subset]))
        return [Prediction(e.id, "0", (-1.0, -3.0), {"usage": [{"prompt_tokens": 5}]}) for e in subset]

    assert spread.ask(examples, default, answer, "test_public") == default and asked == []  # not scored there
    result = spread.ask(examples, default, answer, "dev")
    assert [name for name, _ in asked] == ["yes_no", "prefix"] and all(len(p) == 1 for _, p in asked)  # labelled
    assert asked[0][1][0].endswith("相同回答“是”，不同回答“否”。\n\n问题一：a\n问题二：b\n答案：")
    assert [(p.id, p.value, p.scores) for p in result] == [(p.id, p.value, p.scores) for p in default]
    assert result[0].raw["prompt_variants"] == {"values": {"default": "1", "yes_no": "0", "prefix": "0"},
                                                "scores": {"default": [-2.0, -1.0], "yes_no": [-1.0, -3.0],
                                                           "prefix": [-1.0, -3.0]}}
    assert result[0].raw["usage"] == [{"prompt_tokens": 3}, {"prompt_tokens": 5}, {"prompt_tokens": 5}]  # billed
    assert result[1] == default[1]  # no gold: asked once
    info = spread.info(Renderer(task))
    assert info["applied"] and list(info["template_sha256"]) == ["default", "yes_no", "prefix"]
