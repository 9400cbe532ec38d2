"""Render a task's prompt for one example, by example kind (no torch here).

The task owns the words (:class:`clue_core.plugin.Prompt`: instruction, a ``str.format``
template over the example's fields, verbalizers and the answer prefix); this module only
knows the example kinds. A classification example's choices are the verbalizers of the
task's labels, a multiple-choice example's are its own choices (listed with letters A, B,
C… where the template says ``{choices}``), a span or open question has none (its answer
is generated).

Without a chat template the prompt is plain text::

    {instruction}

    {demo's template}
    {answer_prefix}{demo's answer}        (one block per few-shot example)

    {template}
    {answer_prefix}

With ``chat`` the instruction and each question are user turns, each demo's answer an
assistant turn, and the model's template renders them; the answer prefix then opens the
assistant's reply (not when a reasoning model is asked to think first).
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from clue_core.plugin import (
    CLASSIFICATION,
    MULTIPLE_CHOICE,
    SPAN,
    ClueError,
    Prompt,
    TaskSpec,
)
from clue_models_llm import generic
from clue_models_llm.kinds import OPEN_QUESTION

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: Turns of an open question without a chat template: question and answer marks.
ASK, ANSWER = "问：", "答："

#: Tools offered in a plain-text prompt (no chat template to carry them): how to call one.
TOOLS_TEXT = ("你可以调用以下工具。需要调用时，只输出一个 JSON 对象："
              '{{"name": 工具名, "arguments": {{参数名: 值}}}}。\n工具：\n{tools}')

Message = dict[str, str]
ChatRender = Callable[..., str]
"""``(messages, tools=None) -> text`` ending with the assistant's generation prompt (the model's chat
template; ``tools`` are chat tool definitions offered to the model)."""


@dataclass(frozen=True, slots=True)
class Question:
    """One example as it is asked.

    ``prompt`` is everything before the answer; ``choices`` are the continuations scored
    by likelihood (and the words answers are matched against), ``values`` the prediction
    value of each (a label string or a choice index), ``letters`` the options' letters.
    """

    prompt: str
    choices: tuple[str, ...] = ()
    values: tuple[Any, ...] = ()
    letters: tuple[str, ...] = ()


def require_prompt(task: TaskSpec) -> Prompt:
    if task.prompt is None:
        raise ClueError(f"task {task.name} declares no prompt, so a language model cannot be asked it "
                        f"(the task plugin sets TaskSpec.prompt)")
    return task.prompt


def verbalizer(prompt: Prompt, label: str) -> str:
    """The word an LLM answers for ``label`` (the label itself where the task gives none)."""
    return str(prompt.verbalizers.get(label, label))


def lettered(choices: Sequence[str], example_id: object = None) -> str:
    """The choices as ``A. …`` lines; more than 26 cannot be lettered (one line naming the example)."""
    if len(choices) > len(LETTERS):
        which = f"multiple-choice example {example_id!r}" if example_id is not None else "a multiple-choice example"
        raise ClueError(f"{which} has {len(choices)} choices; at most {len(LETTERS)} can be lettered in a prompt "
                        f"(score it by likelihood without {{choices}} in the template, or give fewer choices)")
    return "\n".join(f"{LETTERS[i]}. {choice}" for i, choice in enumerate(choices))


def example_fields(example: Any, kind: str) -> dict[str, str]:
    """The values a template may name, by kind (each kind's spec lists them: ``KindSpec.prompt_fields``)."""
    if kind == CLASSIFICATION:
        return {"text": example.text, "text_pair": example.text_pair or ""}
    if kind == SPAN:
        return {"context": example.context, "question": example.question, "title": example.title}
    if kind == MULTIPLE_CHOICE:
        return {"context": example.context, "question": example.question,
                "choices": lettered(example.choices, example.id)}
    if kind == OPEN_QUESTION:
        return {"dimension": example.dimension, "category": example.category}
    raise ClueError(f"language models cannot answer {kind} examples")  # a generic kind: clue_models_llm.generic


class _Placeholders(dict):
    """Fields rendered as their own ``{name}``: the template's skeleton, for its hash."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class Renderer:
    """Renders ``task.prompt`` for the examples of one task, with few-shot demos and chat."""

    def __init__(self, task: TaskSpec, *, demos: Sequence[Any] = (), chat: ChatRender | None = None,
                 prefix_in_chat: bool = True) -> None:
        self.task = task
        self.kind = task.kind
        self.prompt = require_prompt(task)
        self.demos = tuple(demos)
        self.chat = chat
        self.prefix_in_chat = prefix_in_chat
        names = {name for _, name, _, _ in string.Formatter().parse(self.prompt.template) if name}
        self.fields = names
        self.functions = generic.TaskFunctions.of(task) if generic.is_generic(self.kind) else None
        if self.kind == CLASSIFICATION:
            self.labels = tuple(task.labels)
            self.words = tuple(verbalizer(self.prompt, label) for label in self.labels)

    # -- pieces ---------------------------------------------------------------------------

    def body(self, example: Any) -> str:
        if self.functions is not None:  # a kind the task reads itself: its render, or its fields by name
            if self.functions.render is not None:
                return self.functions.render(example)
            values = generic.template_fields(self.prompt.template, example)
        else:
            values = example_fields(example, self.kind)
        try:
            return self.prompt.template.format_map(values)
        except (KeyError, IndexError, ValueError) as exc:
            raise ClueError(f"task {self.task.name}: its prompt template cannot be filled from a {self.kind} "
                            f"example ({type(exc).__name__}: {exc})") from None

    def answer(self, example: Any) -> str:
        """The gold answer as the model should say it (for few-shot demos)."""
        if self.kind == CLASSIFICATION:
            return verbalizer(self.prompt, example.label)
        if self.kind == MULTIPLE_CHOICE:
            return example.choices[example.label]
        if self.kind == SPAN:
            return example.answers[0][0]
        if self.functions is not None:
            if self.functions.answer is None:
                raise ClueError(f"task {self.task.name}: few-shot demos need its prompt's answer function "
                                f"(Prompt.answer); use shots=0")
            return self.functions.answer(example)
        return example.reference or ""

    def choices(self, example: Any) -> tuple[tuple[str, ...], tuple[Any, ...], tuple[str, ...]]:
        if self.kind == CLASSIFICATION:
            return self.words, self.labels, ()
        if self.kind == MULTIPLE_CHOICE:
            n = len(example.choices)
            return tuple(example.choices), tuple(range(n)), tuple(LETTERS[:n])
        return (), (), ()

    # -- whole prompts --------------------------------------------------------------------

    def render(self, example: Any) -> Question:
        words, values, letters = self.choices(example)
        return Question(self._compose(self.body(example)), words, values, letters)

    def _compose(self, body: str) -> str:
        instruction = self.prompt.instruction.strip()
        prefix = self.prompt.answer_prefix
        if self.chat is None:
            blocks = [instruction] if instruction else []
            blocks += [f"{self.body(demo)}\n{prefix}{self.answer(demo)}" for demo in self.demos]
            blocks.append(f"{body}\n{prefix}")
            return "\n\n".join(blocks)
        messages: list[Message] = []
        lead = f"{instruction}\n\n" if instruction else ""
        for demo in self.demos:
            messages.append({"role": "user", "content": lead + self.body(demo)})
            messages.append({"role": "assistant", "content": prefix + self.answer(demo)})
            lead = ""
        messages.append({"role": "user", "content": lead + body})
        text = self.chat(messages)
        return text + prefix if self.prefix_in_chat else text

    def turn_prompt(self, example: Any, answers: Sequence[str]) -> str:
        """An open question's next turn: its turns so far with the answers already given."""
        head = self.prompt.instruction.strip()
        extra = self.prompt.template.format_map(example_fields(example, self.kind)).strip()
        tools = list(getattr(example, "tools", ()) or ())
        if tools and self.chat is None:
            extra = "\n\n".join(part for part in (extra, TOOLS_TEXT.format(
                tools=json.dumps(tools, ensure_ascii=False, indent=1))) if part)
        lead = "\n\n".join(part for part in (head, extra) if part)
        turns = example.turns[:len(answers) + 1]
        if self.chat is None:
            blocks = [lead] if lead else []
            for i, turn in enumerate(turns):
                said = answers[i] if i < len(answers) else ""
                blocks.append(f"{ASK}{turn}\n{ANSWER}{said}")
            return "\n\n".join(blocks)
        messages: list[Message] = []
        for i, turn in enumerate(turns):
            content = f"{lead}\n\n{turn}" if i == 0 and lead else turn
            messages.append({"role": "user", "content": content})
            if i < len(answers):
                messages.append({"role": "assistant", "content": answers[i]})
        return self.chat(messages, tools=tools) if tools else self.chat(messages)

    def skeleton(self) -> str:
        """The prompt with every field left as ``{name}``: what the template hash covers."""
        body = self.prompt.template.format_map(_Placeholders())
        if self.prompt.render is not None and self.functions is not None:  # the task writes the question itself
            body = f"{{render {self.prompt.render}}}"
        if self.kind == OPEN_QUESTION:
            return "\n\n".join(part for part in (self.prompt.instruction, body) if part)
        return self._compose(body)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_shots(train: Sequence[Any], shots: int, task: str) -> list[Any]:
    """The labelled training examples demos are drawn from; ClueError when there are fewer than ``shots``.

    Called when the run is planned (before any task of it runs) and again when demos are drawn.
    """
    pool = [example for example in train if _has_gold(example)] if shots else []
    if len(pool) < shots:
        raise ClueError(f"{task}: shots={shots} needs {shots} labelled training examples, the run has "
                        f"{len(pool)}")
    return pool


def draw_demos(train: Sequence[Any], shots: int, seed: int, task: str) -> list[Any]:
    """``shots`` labelled training examples drawn with ``seed``, in drawn order."""
    if shots == 0:
        return []
    pool = check_shots(train, shots, task)
    import random

    return random.Random(seed).sample(pool, shots)


def _has_gold(example: Any) -> bool:
    for name in ("label", "answers", "reference"):
        if hasattr(example, name):
            return getattr(example, name) is not None
    from clue_core.plugin import gold_of  # a generic kind's example: its kind says where the gold is

    return gold_of(example) is not None


def vocabulary_texts(task: TaskSpec, examples: Iterable[Any]) -> list[str]:
    """What a model built from the task's texts (``llm-tiny``) takes its characters from: the prompt's
    words, the labels and the examples' fields (answers and turns included)."""
    prompt = task.prompt
    texts = ["ABCDEFGHIJKLMNOPQRSTUVWXYZ. \n0123456789"]
    if prompt is not None:
        texts += [prompt.instruction, prompt.template, prompt.answer_prefix, *prompt.verbalizers.values()]
    texts += list(task.labels)
    functions = generic.TaskFunctions.of(task) if generic.is_generic(task.kind) and prompt is not None else None
    if functions is not None:  # the rendered questions, the gold answers and the characters of JSON answers
        texts.append('{}[]":,|')
        for example in examples:
            texts.append(functions.render(example) if functions.render else
                         prompt.template.format_map(generic.template_fields(prompt.template, example)))  # type: ignore[union-attr]
            if functions.answer is not None and _has_gold(example):
                texts.append(functions.answer(example))
        return texts
    for example in examples:
        texts += [str(value) for value in example_fields(example, task.kind).values()]
        if task.kind == SPAN and getattr(example, "answers", None):
            texts += [text for text, _ in example.answers]
        if task.kind == OPEN_QUESTION:
            texts += list(example.turns)
    return texts
