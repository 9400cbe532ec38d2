"""Another framework's protocol for a task (``--set protocol=opencompass:<config>``), reproduced to the example.

A task owns its prompt, and it owns its presets too: a task plugin's ``presets`` module (next to its
hooks: ``<package>.presets``) holds ``PRESETS``, task name → preset name → a plain dict transcribed
from the other framework's config (OpenCompass is never imported). This module only reads those
dicts; it names no task. A preset says

* ``inferencer``: ``ppl`` (every label's whole text scored, the best one chosen) or ``gen`` (the
  model answers, the answer post-processed);
* ``fields``: a ``"module:attr"`` of the task plugin's, ``example -> {name: value}``, the config's
  data fields (its dataset reader's columns), in the reader's column order (OpenCompass fills
  ``{name}`` by plain replacement, one field after another);
* ``templates`` (``ppl``): one round list per label — a classification label string or a choice
  index — each round ``(role, text)``; ``template`` (``gen``): one round list;
* ``score`` (``ppl``): the clue-models-llm score rule the config's inferencer computes
  (OpenCompass's PPL inferencer with a base model: ``mean_all``);
* ``postprocess`` (``gen``): ``first_capital`` or ``after_answer_is`` (their text post-processors),
  ``answers``: a post-processed answer → a label (classification); ``max_out_len``: most new
  tokens (``None``: the run's ``max_new_tokens``, as OpenCompass takes it from the model config);
* ``evaluator``: ``acc`` or ``em`` (OpenCompass's EMEvaluator with its normalisation, computed
  beside the task's own metric and recorded in ``model_info.protocol``).

Rounds become text as OpenCompass's template parser does for a model without a meta template
(a base model): the non-empty prompts joined by a newline. A ``ppl`` preset's label texts are
split into their longest shared beginning (the prompt) and each label's rest (the choice); the
scorer tokenizes ``prompt + choice`` whole, so the whole-sequence loss is that of the full text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clue_core.plugin import CLASSIFICATION, MULTIPLE_CHOICE, SPAN, ClueError, Example, Prediction, TaskSpec, resolve
from clue_models_llm.prompts import Question

#: The protocol setting's value for the task's own prompt.
OWN = "clue-core"
POSTPROCESSORS = ("first_capital", "after_answer_is")


def presets_of(task: TaskSpec) -> Mapping[str, Mapping[str, Any]]:
    """The task's presets by name (none when its plugin has no ``presets`` module or none for the task)."""
    package = str(task.reader).split(":", 1)[0].split(".", 1)[0]
    try:
        table = resolve(f"{package}.presets:PRESETS")
    except (ImportError, AttributeError, ClueError):
        return {}
    return table.get(task.name, {}) if isinstance(table, Mapping) else {}


def load(task: TaskSpec, name: str) -> Protocol | None:
    """The preset ``name`` of ``task`` (``None`` for clue-core's own); an unknown name is one line naming them."""
    if name in ("", OWN):
        return None
    presets = presets_of(task)
    if name not in presets:
        known = ", ".join([OWN, *presets])
        raise ClueError(f"task {task.name}: unknown protocol {name!r} (its protocols: {known})")
    return Protocol(task, name, presets[name])


def render_rounds(rounds: Sequence[Sequence[str]], fields: Mapping[str, Any]) -> str:
    """OpenCompass's text of a round list for a base model: fields filled, non-empty prompts joined by newlines."""
    texts = []
    for _, text in rounds:
        for key, value in fields.items():  # safe_format: plain replacement, field after field
            text = text.replace("{" + key + "}", str(value))
        if text:
            texts.append(text)
    return "\n".join(texts)


def first_capital(text: str) -> str:
    """OpenCompass's ``first_capital_postprocess``: the first upper-case character ('' when none)."""
    return next((char for char in text if char.isupper()), "")


def after_answer_is(text: str) -> str:
    """OpenCompass's reading-comprehension post-processor: what follows the first '答案是', when the text has one."""
    return text.split("答案是")[1] if "答案是" in text else text


def general(text: str) -> str:
    """OpenCompass's ``general_postprocess`` (its EMEvaluator's normalisation)."""
    text = re.split(r"[\n.,]", text, maxsplit=1)[0]
    text = re.sub(r"[^\w\s]", "", text)
    text = re.sub(r"\b(a|an|the)\b", "", text, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", text).strip()


def exact_match(prediction: str, golds: Sequence[str]) -> bool:
    """EMEvaluator: the normalised prediction equals a gold, normalised or as it is."""
    return general(prediction) in {*(general(g) for g in golds), *golds}


def _common(texts: Sequence[str]) -> int:
    first = texts[0]
    n = min(len(text) for text in texts)
    for i in range(n):
        if any(text[i] != first[i] for text in texts):
            return i
    return n


@dataclass
class Protocol:
    """One preset of one task: renders its questions, reads its answers, says what it is."""

    task: TaskSpec
    name: str
    preset: Mapping[str, Any]

    def __post_init__(self) -> None:
        inferencer = self.preset.get("inferencer")
        if inferencer not in ("ppl", "gen"):
            raise ClueError(f"task {self.task.name}: protocol {self.name} has inferencer {inferencer!r} "
                            f"(ppl or gen)")
        if inferencer == "gen" and self.preset.get("postprocess") not in (None, *POSTPROCESSORS):
            raise ClueError(f"task {self.task.name}: protocol {self.name}: unknown postprocess "
                            f"{self.preset.get('postprocess')!r}")
        self.fields = resolve(self.preset["fields"])
        self.oc_em: list[bool] = []

    @property
    def generates(self) -> bool:
        return self.preset["inferencer"] == "gen"

    def overrides(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The settings the preset fixes: its mode, score rule, stop strings (none) and answer length."""
        if self.generates:
            more = {"mode": "generate", "stop": "", "temperature": 0.0}
            if self.preset.get("max_out_len"):
                more["max_new_tokens"] = int(self.preset["max_out_len"])
            return more
        return {"mode": "loglikelihood", "score": self.preset.get("score", "mean_all")}

    def check(self, values: Mapping[str, Any]) -> None:
        """What the preset cannot be asked under: few-shot demos, a chat template (its configs are zero-shot, plain)."""
        if values.get("shots"):
            raise ClueError(f"task {self.task.name}: protocol {self.name} is zero-shot (ZeroRetriever); "
                            f"leave shots at 0")
        if values.get("chat"):
            raise ClueError(f"task {self.task.name}: protocol {self.name} asks plain prompts (a base model's "
                            f"template); leave chat off")

    def digest(self) -> str:
        """SHA-256 of what the preset renders (its templates, fields function, rules): in the run's identity."""
        text = json.dumps(self.preset, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def info(self) -> dict[str, Any]:
        info = {"name": self.name, "sha256": self.digest(), "source": self.preset.get("source"),
                "inferencer": self.preset["inferencer"], "evaluator": self.preset.get("evaluator", "acc")}
        if self.generates:
            info["postprocess"] = self.preset.get("postprocess")
        else:
            info["score"] = self.preset.get("score", "mean_all")
        if self.oc_em:
            info["em"] = 100.0 * sum(self.oc_em) / len(self.oc_em)
            info["em_examples"] = len(self.oc_em)
        return info

    def texts(self) -> list[str]:
        """The preset's own words (llm-tiny's vocabulary)."""
        rounds = [*self.preset.get("templates", {}).values(), self.preset.get("template", ())]
        return [text for group in rounds for _, text in group] + [str(k) for k in self.preset.get("answers", {})]

    # -- asking ----------------------------------------------------------------------------

    def render(self, example: Example) -> Question:
        """The example as the preset asks it (a ppl preset: its labels' texts as prompt + choices)."""
        fields = self.fields(example)
        if self.generates:
            return Question(render_rounds(self.preset["template"], fields))
        templates = self.preset["templates"]
        if self.task.kind == MULTIPLE_CHOICE:
            values: tuple[Any, ...] = tuple(i for i in range(len(example.choices)) if i in templates)
        else:
            values = tuple(label for label in templates if label in self.task.labels)
        texts = [render_rounds(templates[value], fields) for value in values]
        cut = _common(texts)
        return Question(texts[0][:cut], tuple(text[cut:] for text in texts), values)

    def skeleton(self) -> str:
        return json.dumps(self.preset, sort_keys=True, ensure_ascii=False, default=str)

    def answered(self, examples: Sequence[Example], questions: Sequence[Question],
                 generations: Sequence[Mapping[str, Any]]) -> list[Prediction]:
        """A gen preset's answers: post-processed as the config says, read as its evaluator reads them."""
        from clue_models_llm.answers import generated_raw, gold

        rules = {"first_capital": first_capital, "after_answer_is": after_answer_is}
        post = rules.get(self.preset.get("postprocess") or "", str)
        table = self.preset.get("answers", {})
        predictions = []
        for example, question, generation in zip(examples, questions, generations):
            text = generation["text"] or ""
            answer = post(text)
            raw = generated_raw(question.prompt, generation)
            raw["answer"] = answer
            if self.task.kind == SPAN:
                value: Any = answer
                golds = gold(example)
                if golds:
                    self.oc_em.append(exact_match(answer, [g for g, _ in golds]))
            elif self.task.kind == CLASSIFICATION:
                value = table.get(answer)
                raw["extracted"] = value is not None
                if value is None and gold(example) is None:
                    value = self.task.labels[0]
                    raw["placeholder"] = value
            else:
                value = table.get(answer)
                raw["extracted"] = isinstance(value, int) and value < len(example.choices)
                if not raw["extracted"]:
                    value = 0 if gold(example) is None else (example.label + 1) % max(len(example.choices), 1)
                    raw["placeholder"] = value
            predictions.append(Prediction(example.id, value, None, raw))
        return predictions
