"""PET cloze construction: a task's prompt turned into masked-LM inputs (no torch here).

PET (Schick & Schütze) asks a masked-LM encoder the question the way it was pre-trained:
the task's own :class:`~clue_core.plugin.Prompt` (template over the example's fields, the
answer prefix, the label verbalisers) becomes one text that ends with the answer slot::

    [CLS] (instruction) template filled with the example … answer_prefix [MASK]…[MASK] [SEP]

with as many ``[MASK]`` tokens as the verbaliser has tokens (BERT tokenizers split Chinese
into characters, so one mask per character). A label's score is the mean log-probability
of its verbaliser's tokens at their mask positions (:mod:`clue_models_hf.pet_scoring`).

Verbalisers of different lengths (TNEWS has 2- and 3-character ones) are scored each with
its own number of masks: one input per *distinct* length (a variant), identical but for the
masks, rather than padding short verbalisers with masks they do not fill: a model asked
for three characters and scored on two is asked a different question. Every variant holds
the same text, truncated for the longest verbaliser.

Truncation cuts the example's own fields (longest first, like the tokenizer's
``longest_first``), never the template's literal text, the answer prefix or the masks:
the answer slot always survives. Fields and literals are tokenized separately and joined
as token ids (exact for Chinese, whose characters are tokens of their own).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clue_core.plugin import CLASSIFICATION, ClassificationExample, ClueError, TaskSpec
from clue_models_hf.encoding import Features

#: The forward "kind" of PET batches (heads.forward, runtime.infer, the training loop).
PET = "pet"
METHODS = ("finetune", PET)


@dataclass(frozen=True, slots=True)
class PetPrompt:
    """What a PET model asks: recorded in ``clue_model.json`` so a reload asks the same."""

    template: str
    answer_prefix: str
    instruction: str
    verbalizers: Mapping[str, str]

    def as_json(self) -> dict[str, Any]:
        return {"template": self.template, "answer_prefix": self.answer_prefix, "instruction": self.instruction,
                "verbalizers": dict(self.verbalizers)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str) -> PetPrompt:
        try:
            return cls(str(data["template"]), str(data["answer_prefix"]), str(data.get("instruction", "")),
                       {str(k): str(v) for k, v in dict(data["verbalizers"]).items()})
        except (KeyError, TypeError, ValueError) as exc:
            raise ClueError(f"{where}: the saved PET prompt is incomplete ({exc})") from None

    def fields(self) -> list[str]:
        return [name for _, name, _, _ in string.Formatter().parse(self.template) if name]

    def words(self, labels: Sequence[str]) -> list[str]:
        return [self.verbalizers[label] for label in labels]


def task_prompt(task: TaskSpec, use_instruction: bool) -> PetPrompt:
    """The task's prompt as a cloze; a task PET cannot ask is one line (checked when planned)."""
    if task.kind != CLASSIFICATION:
        raise ClueError(f"method=pet: {task.name} is a {task.kind} task; PET scores classification labels "
                        f"(use method=finetune)")
    prompt = task.prompt
    if prompt is None:
        raise ClueError(f"method=pet: task {task.name} declares no prompt (TaskSpec.prompt), so there is no cloze "
                        f"to ask; use method=finetune")
    if not prompt.verbalizers:
        raise ClueError(f"method=pet: task {task.name}'s prompt has no verbalizers (label -> words), so no label "
                        f"can be scored; use method=finetune")
    missing = [label for label in task.labels if label not in prompt.verbalizers]
    if missing or not task.labels:
        raise ClueError(f"method=pet: task {task.name}'s verbalizers miss labels "
                        f"{', '.join(missing) or '(the task lists no labels)'}")
    pet = PetPrompt(prompt.template, prompt.answer_prefix, prompt.instruction if use_instruction else "",
                    {label: str(prompt.verbalizers[label]) for label in task.labels})
    for label, word in pet.verbalizers.items():
        if not word.strip():
            raise ClueError(f"method=pet: task {task.name}: the verbalizer of label {label!r} is empty")
    return pet


def verbalizer_tokens(tokenizer: Any, prompt: PetPrompt, labels: Sequence[str], source: str) -> list[list[int]]:
    """Token ids of every label's verbaliser; empty or unknown tokens are refused by name.

    A verbaliser token the tokenizer does not know becomes ``[UNK]``: scoring it would score
    the unknown token for every such label alike, so the run stops instead.
    """
    unk = getattr(tokenizer, "unk_token_id", None)
    result = []
    for label, word in zip(labels, prompt.words(labels)):
        ids = tokenizer(word, add_special_tokens=False)["input_ids"]
        if not ids:
            raise ClueError(f"method=pet: the verbalizer {word!r} of label {label!r} tokenizes to nothing with "
                            f"{source}'s tokenizer")
        if unk is not None and unk in ids:
            unknown = [c for c in word if not c.isspace()
                       and unk in tokenizer(c, add_special_tokens=False)["input_ids"]] or [word]
            raise ClueError(f"method=pet: the verbalizer {word!r} of label {label!r} has tokens {source}'s "
                            f"tokenizer does not know ({', '.join(repr(c) for c in unknown)} -> "
                            f"{tokenizer.unk_token}); choose other verbalizers or another model")
        result.append(list(ids))
    return result


def mask_counts(tokens: Sequence[Sequence[int]]) -> list[int]:
    """The distinct verbaliser lengths, shortest first: one input (variant) per length."""
    return sorted({len(t) for t in tokens})


def prompt_texts(prompt: PetPrompt) -> list[str]:
    """The prompt's own words (the offline backbone's vocabulary must hold them)."""
    literal = "".join(text for text, _, _, _ in string.Formatter().parse(prompt.template))
    return [literal, prompt.answer_prefix, prompt.instruction, *prompt.verbalizers.values()]


def _fit(lengths: list[int], budget: int) -> list[int]:
    """Longest-first truncation of several fields to ``budget`` tokens in all: the new lengths."""
    if sum(lengths) <= budget:
        return list(lengths)
    low, high = 0, max(lengths)  # the largest cap with sum(min(l, cap)) <= budget
    while low < high:
        cap = (low + high + 1) // 2
        if sum(min(n, cap) for n in lengths) <= budget:
            low = cap
        else:
            high = cap - 1
    cut = [min(n, low) for n in lengths]
    spare = budget - sum(cut)
    for i, n in enumerate(lengths):  # the leftover tokens go to the first fields still cut
        if spare and n > low:
            cut[i] += 1
            spare -= 1
    return cut


class ClozeEncoder:
    """Builds the cloze inputs of one task's examples for one tokenizer and verbaliser set."""

    def __init__(self, tokenizer: Any, prompt: PetPrompt, tokens: Sequence[Sequence[int]], max_length: int,
                 task_name: str) -> None:
        self.tokenizer = tokenizer
        self.prompt = prompt
        self.counts = mask_counts(tokens)
        self.max_length = max_length
        parsed = list(string.Formatter().parse(prompt.template))
        literals = [text for text, _, _, _ in parsed]
        self.names = [name for _, name, _, _ in parsed]
        encode = self._ids
        self.literal_ids = [encode(text) for text in literals]
        self.instruction_ids = encode(prompt.instruction)
        self.prefix_ids = encode(prompt.answer_prefix)
        fixed = (tokenizer.num_special_tokens_to_add(pair=False) + len(self.instruction_ids)
                 + sum(map(len, self.literal_ids)) + len(self.prefix_ids) + max(self.counts))
        self.budget = max_length - fixed
        if self.budget < sum(1 for name in self.names if name):
            raise ClueError(f"method=pet: max_length {max_length} leaves no room for {task_name}'s texts: the "
                            f"prompt's own words, answer prefix and {max(self.counts)} masks take {fixed} tokens "
                            f"(raise max_length{' or drop pet_instruction' if prompt.instruction else ''})")

    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"]) if text else []

    def encode(self, examples: Sequence[ClassificationExample], label2id: Mapping[str, int] | None) -> Features:
        """One item per example: ``variants`` (one input per mask count), ``mask_start``, ``label``."""
        names = [name for name in self.names if name]
        values = [self._field(e, name) for e in examples for name in names]
        encoded = self.tokenizer(values, add_special_tokens=False)["input_ids"] if values else []
        cls_id, sep_id = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        mask_id = self.tokenizer.mask_token_id
        if mask_id is None:
            raise ClueError("method=pet: the tokenizer has no mask token")
        features = Features([], [], [])
        cut_examples = 0
        for index, example in enumerate(examples):
            fields = encoded[index * len(names):(index + 1) * len(names)]
            kept = _fit([len(f) for f in fields], self.budget)
            cut_examples += kept != [len(f) for f in fields]
            body: list[int] = [cls_id] if cls_id is not None else []
            body += self.instruction_ids
            position = 0
            for literal, name in zip(self.literal_ids, self.names):
                body += literal
                if name:
                    body += fields[position][:kept[position]]
                    position += 1
            body += self.prefix_ids
            start = len(body)
            variants = [body + [mask_id] * n + ([sep_id] if sep_id is not None else []) for n in self.counts]
            item: dict[str, Any] = {"variants": variants, "mask_start": start}
            if label2id is not None:
                item["label"] = _label_id(example, label2id)
            features.items.append(item)
            features.lengths.append(sum(len(v) for v in variants))
            features.example_index.append(index)
        if cut_examples:
            features.notes.append(f"{cut_examples} of {len(examples)} cloze texts were cut to max_length "
                                  f"{self.max_length} (the answer slot kept)")
        return features

    @staticmethod
    def _field(example: ClassificationExample, name: str) -> str:
        if name == "text":
            return example.text
        if name == "text_pair":
            return example.text_pair or ""
        raise ClueError(f"method=pet: the prompt template names {{{name}}}, which classification examples lack")


def _label_id(example: ClassificationExample, label2id: Mapping[str, int]) -> int:
    if example.label not in label2id:
        raise ClueError(f"example {example.id!r}: label {example.label!r} is not one of the model's labels "
                        f"({', '.join(label2id)})")
    return label2id[example.label]
