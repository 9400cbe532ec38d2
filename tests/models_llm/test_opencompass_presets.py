"""OpenCompass presets render, for the plugins' bundled sample examples, exactly the text the
OpenCompass 0.5.4 config would: each expected text below is the config's template (read from
opencompass/configs/datasets/...) with the fields its dataset reader makes, computed here from
the raw sample file as that reader does (C3: the turns joined by a space), not through clue-core's
readers. ``mean_all`` equals a hand computation of the whole sequence's cross-entropy over its
token count including BOS."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import pytest

from clue_core.plugin import ClueError
from clue_core.reading import read_split
from clue_models_llm.protocols import OWN, after_answer_is, exact_match, first_capital, load, presets_of, render_rounds


def sample_dir(task) -> Path:
    package, folder = task.sample.split(":")
    return Path(str(files(package) / folder))


def first_example(kernel, name: str):
    task = kernel.task(name)
    settings = {"split": "few_all"} if name.startswith("fewclue") else None
    return task, read_split(task, sample_dir(task), "dev", settings).examples[0]


def raw_lines(task, name: str) -> list[dict]:
    return [json.loads(line) for line in (sample_dir(task) / name).read_text("utf-8").splitlines() if line.strip()]


def asked(task, preset: str, example) -> list[str]:
    """The full texts the preset scores (ppl: prompt + each choice) or the prompt it generates from."""
    question = load(task, preset).render(example)
    return [question.prompt + choice for choice in question.choices] if question.choices else [question.prompt]


def test_c3_ppl_e24a31(kernel) -> None:
    task, example = first_example(kernel, "c3")
    document = json.loads((sample_dir(task) / "d-dev.json").read_text("utf-8"))[0]
    content = " ".join(document[0])  # C3Dataset: ' '.join(paragraphs)
    question = document[1][0]
    expected = [f"文章：{content}\n问题：{question['question']}\n答案：{choice}" for choice in question["choice"]]
    assert asked(task, "opencompass:CLUE_C3_ppl_e24a31", example) == expected
    assert "\n" not in content and len(document[0]) > 1  # the sample has turns to join


def test_ocnli_ppl_fdc6de(kernel) -> None:
    task, example = first_example(kernel, "ocnli")
    row = raw_lines(task, "dev.json")[0]
    human = f"语句一：“{row['sentence1']}”\n语句二：“{row['sentence2']}”\n请问这两句话是什么关系？"
    question = load(task, "opencompass:CLUE_ocnli_ppl_fdc6de").render(example)
    assert question.values == ("contradiction", "entailment", "neutral")  # the config's label order
    assert asked(task, "opencompass:CLUE_ocnli_ppl_fdc6de", example) == [f"{human}\n{word}" for word in
                                                                          ("矛盾", "蕴含", "无关")]


def test_cmrc_gen_1bd3c8(kernel) -> None:
    task, example = first_example(kernel, "cmrc2018")
    data = json.loads((sample_dir(task) / "dev.json").read_text("utf-8"))["data"]
    paragraph = data[0]["paragraphs"][0]
    expected = ("根据文章回答问题。你的答案应该尽可能简练，请以 ‘答案是’ 开头的句式作答。\n"
                f"文章：{paragraph['context']}\n问：{paragraph['qas'][0]['question']}\n答：")
    assert asked(task, "opencompass:CLUE_CMRC_gen_1bd3c8", example) == [expected]


def test_fewclue_cluewsc_ppl_868415(kernel) -> None:
    task, example = first_example(kernel, "fewclue-cluewsc")
    row = raw_lines(task, "dev_few_all.json")[0]
    target = row["target"]
    human = f"{row['text']}\n此处，代词“{target['span2_text']}“被用于指代“{target['span1_text']}“吗?"
    assert example.text != row["text"]  # clue-core's input is marked; the preset takes the marks off
    assert asked(task, "opencompass:FewCLUE_cluewsc_ppl_868415", example) == [f"{human}\n否", f"{human}\n是"]
    assert load(task, "opencompass:FewCLUE_cluewsc_ppl_868415").render(example).values == ("false", "true")


def test_fewclue_eprstmt_ppl_and_gen(kernel) -> None:
    task, example = first_example(kernel, "fewclue-eprstmt")
    sentence = raw_lines(task, "dev_few_all.json")[0]["sentence"]
    assert asked(task, "opencompass:FewCLUE_eprstmt_ppl_f1e631", example) == [
        f'内容： "{sentence}"。情绪分类：\n消极。', f'内容： "{sentence}"。情绪分类：\n积极。']
    assert asked(task, "opencompass:FewCLUE_eprstmt_gen_740ea0", example) == [
        f'内容： "{sentence}"。请对上述内容进行情绪分类。\nA. 积极\nB. 消极\n请从”A“，”B“中进行选择。\n答：']


def test_fewclue_tnews_ppl_d10e8a(kernel) -> None:
    task, example = first_example(kernel, "fewclue-tnews")
    row = raw_lines(task, "dev_few_all.json")[0]
    labels = ["农业新闻", "旅游新闻", "游戏新闻", "科技类别公司新闻", "体育类别新闻", "初升高教育新闻", "娱乐圈新闻",
              "投资资讯", "军事类别常识", "车辆新闻", "楼市新闻", "环球不含中国类别新闻", "书籍文化历史类别新闻",
              "故事类别新闻", "股票市场类别新闻"]
    texts = asked(task, "opencompass:FewCLUE_tnews_ppl_d10e8a", example)
    assert texts == [f"{row['sentence']}\n上述内容属于什么新闻？\n{label}" for label in labels]
    values = load(task, "opencompass:FewCLUE_tnews_ppl_d10e8a").render(example).values
    assert values[0] == "115" and values[3] == "109"  # news_agriculture, news_tech: the labels the words name


def test_every_declared_preset_renders_its_sample(kernel) -> None:
    """Every preset of every task: declared as a choice of the task's protocol setting, and renders."""
    for name in ("c3", "cmrc2018", "afqmc", "cmnli", "ocnli", "fewclue-cluewsc", "fewclue-eprstmt", "fewclue-tnews",
                 "fewclue-bustm", "fewclue-ocnli"):
        task, example = first_example(kernel, name)
        declared = next(s for s in task.settings if s.name == "protocol")
        assert declared.choices == (OWN, *presets_of(task))
        for preset in presets_of(task):
            texts = asked(task, preset, example)
            assert texts and all("{" not in text for text in texts), (preset, texts)


def test_round_rendering_and_postprocessors() -> None:
    # LMTemplateParser without a meta template: non-empty prompts joined by '\n'; an empty BOT prompt adds nothing
    assert render_rounds((("HUMAN", "问{a}"), ("BOT", "")), {"a": "x"}) == "问x"
    assert render_rounds((("HUMAN", "{a}{b}"), ("BOT", "答{b}")), {"a": "{b}", "b": "y"}) == "yy\n答y"  # field by field
    assert first_capital("the answer is B. A") == "B" and first_capital("无") == ""
    assert after_answer_is("好的，答案是北京。答案是上海") == "北京。"
    assert exact_match("北京。\n其他", ["北京"]) and not exact_match("在北京", ["北京"])


def test_unknown_preset_names_the_tasks_presets(kernel) -> None:
    with pytest.raises(ClueError, match=r"its protocols: clue-core, opencompass:CLUE_C3_ppl_e24a31"):
        load(kernel.task("c3"), "opencompass:nope")
    with pytest.raises(ClueError, match=r"its protocols: clue-core\)"):
        load(kernel.task("iflytek"), "opencompass:nope")  # a task without presets
    assert load(kernel.task("c3"), OWN) is None


def test_mean_all_is_the_whole_sequence_loss_over_its_tokens_with_bos() -> None:
    import torch

    from clue_models_llm.scoring import ChoiceScores, LikelihoodScorer, encode_requests
    from tests.models_llm.test_llm_scoring import tiny_model

    prompt, choices = "文章：天地玄黄\n问题：宇宙？\n答案：", ("洪荒", "日月盈昃")
    model, tokenizer = tiny_model([prompt + "".join(choices)])
    request = encode_requests(tokenizer, [(prompt, choices)], bos=tokenizer.bos_token_id)
    got = LikelihoodScorer(model, 4, prefix_stats=True).score(request)[0]
    for choice, score in zip(choices, got.scores("mean_all")):
        ids = [tokenizer.bos_token_id, *tokenizer(prompt + choice, add_special_tokens=False)["input_ids"]]
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0].float()
        loss = torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:]), reduction="sum").item()
        assert score == pytest.approx(-loss / len(ids), abs=1e-4)  # OpenCompass: lens counts BOS
    plain = ChoiceScores((-2.0, -3.0), (1, 3), prefix_logprob=-10.0, prefix_tokens=4)
    assert plain.scores("mean_all") == pytest.approx((-12.0 / 6, -13.0 / 8))
    assert plain.scores("ppl") == pytest.approx((-12.0 / 5, -13.0 / 7))
