"""Prompts are the task's, rendered by example kind; few-shot demos are drawn with the seed."""

from __future__ import annotations

import pytest

from clue_core.plugin import (
    ClassificationExample,
    ClueError,
    MultipleChoiceExample,
    Prompt,
    SpanExample,
    TaskSpec,
)
from clue_models_llm.prompts import Renderer, draw_demos, sha256
from clue_tasks_superclue.examples import OpenQuestionExample

PAIR = TaskSpec("third-party-pairs", "classification", "a task no model plugin knows", "x:read",
                labels=("0", "1"),
                prompt=Prompt("判断两句话是否同义。", "甲：{text}\n乙：{text_pair}", {"0": "不同", "1": "相同"}))
CHOICE = TaskSpec("third-party-choice", "multiple_choice", "x", "x:read",
                  prompt=Prompt("选择正确答案。", "材料：{context}\n问题：{question}\n选项：\n{choices}", {}, "答："))
SPAN = TaskSpec("third-party-span", "span", "x", "x:read",
                prompt=Prompt("回答问题。", "{title}：{context}\n问：{question}"))


def test_classification_choices_are_the_verbalizers_of_the_labels() -> None:
    question = Renderer(PAIR).render(ClassificationExample(1, "你好", "您好", "1"))
    assert question.prompt == "判断两句话是否同义。\n\n甲：你好\n乙：您好\n答案："
    assert question.choices == ("不同", "相同") and question.values == ("0", "1")


def test_multiple_choice_letters_its_options_and_scores_their_text() -> None:
    example = MultipleChoiceExample("q", "文章", "为什么？", ("因为甲", "因为乙", "因为丙"), 2)
    question = Renderer(CHOICE).render(example)
    assert question.prompt.endswith("选项：\nA. 因为甲\nB. 因为乙\nC. 因为丙\n答：")
    assert question.choices == example.choices and question.values == (0, 1, 2)
    assert question.letters == ("A", "B", "C")


def test_span_has_no_choices_and_title_is_a_field() -> None:
    question = Renderer(SPAN).render(SpanExample("s", "北京是首都。", "首都是哪里？", (("北京", 0),), "城市"))
    assert question.prompt == "回答问题。\n\n城市：北京是首都。\n问：首都是哪里？\n答案：" and question.choices == ()


def test_few_shot_demos_precede_the_question_with_their_answers() -> None:
    train = [ClassificationExample(i, f"句{i}", f"对{i}", str(i % 2)) for i in range(10)]
    demos = draw_demos(train, 2, seed=3, task="t")
    assert demos == draw_demos(train, 2, seed=3, task="t") and demos != draw_demos(train, 2, seed=4, task="t")
    prompt = Renderer(PAIR, demos=demos).render(ClassificationExample("x", "问", "答")).prompt
    blocks = prompt.split("\n\n")
    assert len(blocks) == 4 and blocks[-1] == "甲：问\n乙：答\n答案："
    assert blocks[1] == f"甲：{demos[0].text}\n乙：{demos[0].text_pair}\n答案：{('不同', '相同')[int(demos[0].label)]}"
    with pytest.raises(ClueError, match="needs 20 labelled training examples"):
        draw_demos(train, 20, seed=3, task="t")


def test_chat_turns_and_the_answer_prefix() -> None:
    seen = []

    def chat(messages):
        seen.append(list(messages))
        return "".join(f"<{m['role']}>{m['content']}</{m['role']}>" for m in messages) + "<assistant>"

    demo = ClassificationExample(0, "一", "二", "0")
    renderer = Renderer(PAIR, demos=[demo], chat=chat)
    prompt = renderer.render(ClassificationExample(1, "三", "四")).prompt
    assert [m["role"] for m in seen[-1]] == ["user", "assistant", "user"]
    assert seen[-1][0]["content"].startswith("判断两句话是否同义。\n\n甲：一")
    assert seen[-1][1]["content"] == "答案：不同"
    assert prompt.endswith("<assistant>答案：")
    thinking = Renderer(PAIR, chat=chat, prefix_in_chat=False).render(ClassificationExample(1, "三", "四")).prompt
    assert thinking.endswith("<assistant>")


def test_template_hash_covers_the_skeleton_not_the_examples() -> None:
    renderer = Renderer(PAIR)
    assert renderer.skeleton() == "判断两句话是否同义。\n\n甲：{text}\n乙：{text_pair}\n答案："
    assert sha256(renderer.skeleton()) != sha256(Renderer(SPAN).skeleton())


def test_open_questions_are_asked_turn_by_turn() -> None:
    task = TaskSpec("dialogue", "open_question", "x", "x:read", prompt=Prompt("请回答。", "（{category}）"))
    example = OpenQuestionExample(1, "常识", "地理", ("中国的首都？", "它有多少人口？"))
    renderer = Renderer(task)
    assert renderer.turn_prompt(example, []) == "请回答。\n\n（地理）\n\n问：中国的首都？\n答："
    assert renderer.turn_prompt(example, ["北京"]).endswith("问：中国的首都？\n答：北京\n\n问：它有多少人口？\n答：")


def test_a_task_without_prompt_cannot_be_asked() -> None:
    with pytest.raises(ClueError, match="declares no prompt"):
        Renderer(TaskSpec("bare", "classification", "x", "x:read", labels=("a",)))
