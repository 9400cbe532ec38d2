"""One way to pick a step's own settings out of a run's (issue 19, part 5): ``values_for``.

The model factory, the decode step, each metric, a metric's check and a model named by a
setting (a judge, under its namespace) all receive exactly the values of their own
declarations; and the run context carries no settings of its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from clue_core import scoring
from clue_core.context import RunContext
from clue_core.examples import ClassificationExample, Prediction
from clue_core.plugin import MetricSpec, Setting, hookimpl
from clue_core.settings import Layer, ResolvedSettings, resolve
from clue_core.specs import TaskSpec

TEMPERATURE = Setting("temperature", float, 0.0, "how random", minimum=0.0)
JUDGE = Setting("judge", str, "", "the model that grades", names_model=True)
BEAM = Setting("beam", int, 1, "how wide the decode searches")
STRICT = Setting("strict", bool, False, "whether the metric is strict")

SEEN: dict[str, Any] = {}


def _resolved() -> ResolvedSettings:
    declared = {s.name: s for s in (TEMPERATURE, JUDGE, BEAM, STRICT)}

    layer = Layer("--set", {"temperature": 0.5, "judge": "echo", "judge.temperature": 0.25, "beam": 4,
                            "strict": True}, user=True)
    return resolve(declared, [layer], nested={"judge": {"temperature": TEMPERATURE}})


def test_values_for_picks_exactly_the_declarations_it_is_given():
    settings = _resolved()
    assert settings.values_for((TEMPERATURE,)) == {"temperature": 0.5}
    assert settings.values_for((BEAM, STRICT)) == {"beam": 4, "strict": True}
    assert settings.values_for(()) == {}


def test_values_for_reads_a_named_models_namespace_under_its_own_names():
    settings = _resolved()
    assert settings.values_for((TEMPERATURE,), namespace="judge") == {"temperature": 0.25}


def test_values_for_gives_declared_defaults_for_what_the_run_did_not_resolve():
    settings = _resolved()
    other = Setting("base_url", str, "http://localhost", "where the judge is")
    assert settings.values_for((other,), namespace="judge") == {"base_url": "http://localhost"}
    assert ResolvedSettings.of(None).values_for((BEAM, STRICT)) == {"beam": 1, "strict": False}
    assert ResolvedSettings.of({"beam": 3}).values_for((BEAM,)) == {"beam": 3}
    assert ResolvedSettings.of(settings) is settings


def decode(examples: Sequence[Any], predictions: Sequence[Prediction], settings: dict[str, Any]
           ) -> list[Prediction]:
    SEEN["decode"] = settings
    return list(predictions)


def metric(examples: Sequence[Any], predictions: Sequence[Any], settings: dict[str, Any]) -> dict[str, float]:
    SEEN["metric"] = settings
    return {"seen": float(len(settings))}


class Plugin:
    @hookimpl
    def clue_metrics(self) -> list[MetricSpec]:
        return [MetricSpec("strictness", "tests.core.test_settings_values_for:metric", "records its settings",
                           settings=(STRICT,), produces=("seen",))]


TASK = TaskSpec("probe", "classification", "a probe", "m:r", labels=("a", "b"), metrics=("strictness",),
                primary_metric="seen", decode="tests.core.test_settings_values_for:decode",
                decode_settings=(BEAM,))


def test_scoring_takes_the_runs_resolved_settings_and_hands_each_step_only_its_own(isolated_kernel):
    isolated_kernel.register(Plugin(), "plugin")
    import tests.core.test_settings_values_for as module  # the copy the kernel resolves "module:attr" in

    module.SEEN.clear()
    settings = _resolved()
    examples = [ClassificationExample(0, "text", label="a")]
    bound = scoring.bind_decode(TASK, settings)
    assert bound is not None
    predictions = bound(examples, [Prediction(0, "a")])
    result = scoring.score_detailed(isolated_kernel, TASK, examples, predictions, settings)
    assert module.SEEN == {"decode": {"beam": 4}, "metric": {"strict": True}}
    assert result.totals == {"seen": 1.0}


def test_scoring_with_a_plain_mapping_or_none_still_slices_the_same_way(isolated_kernel):
    isolated_kernel.register(Plugin(), "plugin")
    import tests.core.test_settings_values_for as module

    module.SEEN.clear()
    examples = [ClassificationExample(0, "text", label="a")]
    scoring.score(isolated_kernel, TASK, examples, [Prediction(0, "a")], {"strict": True, "beam": 9})
    assert module.SEEN == {"metric": {"strict": True}}
    scoring.score(isolated_kernel, TASK, examples, [Prediction(0, "a")])
    assert module.SEEN == {"metric": {"strict": False}}


def test_the_run_context_has_no_settings_field():
    names = {f.name for f in dataclasses.fields(RunContext)}
    assert "settings" not in names
    context = RunContext(task=TASK)
    assert not hasattr(context, "settings")
    with pytest.raises(TypeError):
        RunContext(task=TASK, settings={"beam": 2})  # type: ignore[call-arg]
