"""The rest of OpenCompass 0.5.4's CLUE/FewCLUE configs (DRCD, FewCLUE CHID and CSL, BUSTM's and
OCNLI-FC's other variants) render, for the plugins' bundled sample examples, exactly the text the
config would. Each expected text is the config's template (read from
opencompass/configs/datasets/...) filled with the fields its dataset reader makes, computed here
from the raw sample file as that reader does (CHIDDataset: each candidate put into ``#idiom#``;
CHIDDatasetV2: ``#idiom#`` → ``______``; CslDataset: the keywords joined by '，'), not through
the presets' field functions."""

from __future__ import annotations

import json

import pytest

from clue_models_llm.protocols import OWN, load, presets_of
from tests.models_llm.test_opencompass_presets import asked, first_example, raw_lines, sample_dir

DRCD_CMRC_PROMPT = "根据文章回答问题。你的答案应该尽可能简练，请以 ‘答案是’ 开头的句式作答。\n"


def drcd_first() -> tuple[str, str]:
    from clue_core.kernel import Kernel

    task = Kernel().task("drcd")
    paragraph = json.loads((sample_dir(task) / "dev.json").read_text("utf-8"))["data"][0]["paragraphs"][0]
    return paragraph["context"], paragraph["qas"][0]["question"]


@pytest.mark.parametrize(("preset", "template"), [
    ("opencompass:CLUE_DRCD_gen_1bd3c8", DRCD_CMRC_PROMPT + "文章：{c}\n问：{q}\n答："),
    ("opencompass:CLUE_DRCD_gen_3749cd", "文章：{c}\n根据上文，回答如下问题：{q}\n答："),  # HUMAN + BOT '答：'
    ("opencompass:CLUE_DRCD_gen_8484b9", "文章：{c}\n根据上文，回答如下问题： {q}\n答："),
    ("opencompass:CLUE_DRCD_gen_941108", "文章：{c}\n根据上文，回答如下问题：\n{q}\n答："),
])
def test_drcd_gen(kernel, preset: str, template: str) -> None:
    task, example = first_example(kernel, "drcd")
    context, question = drcd_first()
    assert asked(task, preset, example) == [template.replace("{c}", context).replace("{q}", question)]
    info = load(task, preset).info()
    assert info["inferencer"] == "gen" and info["evaluator"] == "em"
    assert info["postprocess"] == ("after_answer_is" if preset.endswith("1bd3c8") else None)


def test_fewclue_chid_ppl(kernel) -> None:
    task, example = first_example(kernel, "fewclue-chid")
    row = raw_lines(task, "dev_few_all.json")[0]
    filled = [row["content"].replace("#idiom#", c) for c in row["candidates"]]  # CHIDDataset's content{i}
    assert len(filled) == 7 and "#idiom#" in row["content"]
    assert asked(task, "opencompass:FewCLUE_chid_ppl_8f2872", example) == [
        f"以下句子是否通顺？\n{text}\n这个句子是通顺的。" for text in filled]
    assert asked(task, "opencompass:FewCLUE_chid_ppl_acccb5", example) == [
        f"以下句子是否通顺？\n{text}\n这个句子是通顺的。" for text in filled]
    assert load(task, "opencompass:FewCLUE_chid_ppl_8f2872").render(example).values == tuple(range(7))


def test_fewclue_chid_gen(kernel) -> None:
    task, example = first_example(kernel, "fewclue-chid")
    row = raw_lines(task, "dev_few_all.json")[0]
    content = row["content"].replace("#idiom#", "______")
    options = "\n".join(f"{letter}. {c}" for letter, c in zip("ABCDEFG", row["candidates"]))
    expected = (f"{content}\n请选择______处所填的词\n{options}\n"
                "请从”A“，”B“，”C“，”D“，”E“，”F“，”G“中进行选择。答：")
    assert asked(task, "opencompass:FewCLUE_chid_gen_0a29a2", example) == [expected]
    assert load(task, "opencompass:FewCLUE_chid_gen_0a29a2").preset["answers"]["C"] == 2  # 'ABCDEFG'[answer]


def test_fewclue_csl(kernel) -> None:
    task, example = first_example(kernel, "fewclue-csl")
    row = raw_lines(task, "dev_few_all.json")[0]
    abst, keywords = row["abst"], "，".join(row["keyword"])
    assert len(row["keyword"]) > 1  # the sample has keywords to join
    for preset in ("opencompass:FewCLUE_csl_ppl_841b62", "opencompass:FewCLUE_csl_ppl_769f8d"):
        assert asked(task, preset, example) == [f"摘要：{abst}", f"摘要：{abst}\n关键词：{keywords}"]
        assert load(task, preset).render(example).values == ("0", "1")
    assert asked(task, "opencompass:FewCLUE_csl_gen_28b223", example) == [
        "摘要是对论文内容不加注释和评论的简短陈述，要求扼要地说明研究工作的目的、研究方法和最终结论等。\n"
        "关键词是一篇学术论文的核心词汇，一般由一系列名词组成。关键词在全文中应有较高出现频率，且能起到帮助文献检索的作用。\n"
        f"摘要：{abst}\n关键词：{keywords}\n请问上述关键词是否匹配摘要且符合要求？\nA. 否\nB. 是\n"
        "请从”A“，”B“中进行选择。\n答："]
    assert asked(task, "opencompass:FewCLUE_csl_gen_87f4a8", example) == [
        f"摘要：{abst}\n关键词：{keywords}\n上述关键词出现在学术期刊中是否恰当？\nA. 否\nB. 是\n"
        "请从”A“，”B“中进行选择。\n答："]
    assert load(task, "opencompass:FewCLUE_csl_gen_28b223").preset["answers"] == {"A": "0", "B": "1"}


def test_fewclue_bustm_more(kernel) -> None:
    task, example = first_example(kernel, "fewclue-bustm")
    row = raw_lines(task, "dev_few_all.json")[0]
    s1, s2 = row["sentence1"], row["sentence2"]
    assert asked(task, "opencompass:FewCLUE_bustm_ppl_4b16c0", example) == [
        f"请判断以下两句话说的是否是一个意思：\n{s1}，{s2}\n两句话说的毫不相关。",
        f"请判断以下两句话说的是否是一个意思：\n{s1}，{s2}\n两句话说是的一个意思。"]
    assert asked(task, "opencompass:FewCLUE_bustm_ppl_9ef540", example) == [
        f"{s1}。\n{s2}。\n两句话说的毫不相关。", f"{s1}。\n{s2}。\n两句话说的一个意思。"]
    assert asked(task, "opencompass:FewCLUE_bustm_gen_634f41", example) == [
        f"语句一：“{s1}”\n语句二：“{s2}”\n请判断语句一和语句二说的是否是一个意思？\nA. 无关\nB. 相关\n"
        "请从“A”，“B”中进行选择。\n答："]
    assert load(task, "opencompass:FewCLUE_bustm_gen_634f41").preset["answers"] == {"A": "0", "B": "1"}


def test_fewclue_ocnli_fc_more(kernel) -> None:
    task, example = first_example(kernel, "fewclue-ocnli")
    row = raw_lines(task, "dev_few_all.json")[0]
    s1, s2 = row["sentence1"], row["sentence2"]
    ask = f"阅读文章：{s1}\n根据上文，回答如下问题：{s2}？"
    assert asked(task, "opencompass:FewCLUE_ocnli_fc_ppl_9e8b3d", example) == [
        f"{ask}\n错", f"{ask}\n对", f"如果{s1}为真，那么{s2}也为真吗？\n可能"]
    assert load(task, "opencompass:FewCLUE_ocnli_fc_ppl_9e8b3d").render(example).values == (
        "contradiction", "entailment", "neutral")
    assert asked(task, "opencompass:FewCLUE_ocnli_fc_gen_f97a97", example) == [
        f"阅读文章：{s1}\n根据上文，回答如下问题：{s2}\nA. 对\nB. 错\nC. 可能\n请从“A”，“B”，“C”中进行选择。\n答："]
    assert load(task, "opencompass:FewCLUE_ocnli_fc_gen_f97a97").preset["answers"] == {
        "A": "entailment", "B": "contradiction", "C": "neutral"}  # CMNLIDatasetV2's letters


def test_new_tasks_declare_their_presets(kernel) -> None:
    """DRCD, FewCLUE CHID and CSL now have a protocol setting naming every preset, and each renders."""
    for name, count in (("drcd", 4), ("fewclue-chid", 3), ("fewclue-csl", 4), ("fewclue-bustm", 4),
                        ("fewclue-ocnli", 3)):
        task, example = first_example(kernel, name)
        declared = next(s for s in task.settings if s.name == "protocol")
        assert declared.choices == (OWN, *presets_of(task)) and len(presets_of(task)) == count
        for preset in presets_of(task):
            texts = asked(task, preset, example)
            assert texts and all("{" not in text for text in texts), (preset, texts)


def _run(run_cli, tmp_path, task: str, preset: str, *more: str) -> tuple[dict, list[dict]]:
    result = run_cli("run", task, "--model", "llm-tiny", "--sample", "--first", "3", "--set", f"protocol={preset}",
                     *more, "-o", tmp_path / "run")
    assert result.exit_code == 0, result.output
    run = tmp_path / "run" / task
    records = [json.loads(line) for line in (run / "predictions" / "dev.jsonl").read_text("utf-8").splitlines()]
    return json.loads((run / "metrics.json").read_text("utf-8"))["model_info"], records


def test_csl_ppl_runs_with_a_label_text_that_is_the_prompt(run_cli, kernel, tmp_path) -> None:
    """CSL ppl_841b62's label 0 text is a prefix of label 1's: its continuation is empty, yet it is scored
    (the whole sequence's mean loss, as OpenCompass scores each label's text on its own)."""
    info, records = _run(run_cli, tmp_path, "fewclue-csl", "opencompass:FewCLUE_csl_ppl_841b62")
    assert info["protocol"]["name"] == "opencompass:FewCLUE_csl_ppl_841b62"
    assert len(records) == 3
    for record in records:
        assert record["raw"]["continuations"][0] == "" and record["raw"]["continuations"][1].startswith("\n关键词：")
        assert record["raw"]["tokens"][0] >= 1 and len(record["scores"]) == 2
        assert record["prediction"] == ("0", "1")[max(range(2), key=lambda j: (record["scores"][j], -j))]


def test_chid_gen_reads_a_letter_as_the_candidate(run_cli, kernel, tmp_path) -> None:
    info, records = _run(run_cli, tmp_path, "fewclue-chid", "opencompass:FewCLUE_chid_gen_0a29a2",
                         "--set", "max_new_tokens=3")
    assert info["protocol"]["postprocess"] == "first_capital"
    for record in records:
        letter = next((c for c in record["raw"]["generation"] if c.isupper()), "")
        assert record["raw"]["answer"] == letter
        if letter in "ABCDEFG" and letter:
            assert record["prediction"] == "ABCDEFG".index(letter)
        else:
            assert record["raw"]["extracted"] is False


def test_drcd_gen_records_em(run_cli, kernel, tmp_path) -> None:
    info, records = _run(run_cli, tmp_path, "drcd", "opencompass:CLUE_DRCD_gen_1bd3c8", "--set", "max_new_tokens=4")
    assert info["protocol"]["evaluator"] == "em" and info["protocol"]["em_examples"] == 3
    assert info["decoding"]["max_new_tokens"] == 4 and len(records) == 3


@pytest.mark.parametrize("name", ["cmnli", "ocnli"])
def test_nli_gen_51e956(kernel, name: str) -> None:
    task, example = first_example(kernel, name)
    file = "cmnli_public/dev.json" if name == "cmnli" else "dev.json"
    row = next(r for r in raw_lines(task, file) if r["label"] != "-")  # CMNLIDatasetV2 drops '-'
    preset = f"opencompass:CLUE_{name}_gen_51e956"
    assert asked(task, preset, example) == [
        f"阅读文章：{row['sentence1']}\n根据上文，回答如下问题：{row['sentence2']}\nA. 对\nB. 错\nC. 可能\n"
        "请从“A”，“B”，“C”中进行选择。\n答："]
    assert load(task, preset).preset["answers"] == {"A": "entailment", "B": "contradiction", "C": "neutral"}


@pytest.mark.parametrize(("preset", "template"), [
    ("opencompass:CLUE_CMRC_gen_3749cd", "文章：{c}\n根据上文，回答如下问题：{q}\n答："),
    ("opencompass:CLUE_CMRC_gen_8484b9", "文章：{c}\n根据上文，回答如下问题： {q}\n答："),
    ("opencompass:CLUE_CMRC_gen_941108", "文章：{c}\n根据上文，回答如下问题：\n{q}\n答："),
])
def test_cmrc_gen_variants(kernel, preset: str, template: str) -> None:
    task, example = first_example(kernel, "cmrc2018")
    paragraph = json.loads((sample_dir(task) / "dev.json").read_text("utf-8"))["data"][0]["paragraphs"][0]
    expected = template.replace("{c}", paragraph["context"]).replace("{q}", paragraph["qas"][0]["question"])
    assert asked(task, preset, example) == [expected]
    assert load(task, preset).info()["evaluator"] == "em" and load(task, preset).info()["postprocess"] is None


def test_fewclue_cluewsc_english_ppl(kernel) -> None:
    task, example = first_example(kernel, "fewclue-cluewsc")
    row = raw_lines(task, "dev_few_all.json")[0]
    target = row["target"]
    ask = f'{row["text"]}\nHere, is the pronoun "{target["span2_text"]}" used to mean "{target["span1_text"]}"?'
    assert asked(task, "opencompass:FewCLUE_cluewsc_ppl_12e4e0", example) == [f"{ask}\nNo.", f"{ask}\nYes."]
    assert asked(task, "opencompass:FewCLUE_cluewsc_ppl_4284a0", example) == [f"{ask} No.", f"{ask} Yes."]
    assert load(task, "opencompass:FewCLUE_cluewsc_ppl_4284a0").render(example).values == ("false", "true")


def test_fewclue_eprstmt_ppl_1ce587(kernel) -> None:
    task, example = first_example(kernel, "fewclue-eprstmt")
    sentence = raw_lines(task, "dev_few_all.json")[0]["sentence"]
    assert asked(task, "opencompass:FewCLUE_eprstmt_ppl_1ce587", example) == [
        f' 内容： "{sentence}"。情绪分类：消极。', f' 内容： "{sentence}"。情绪分类：积极。']


def test_fewclue_tnews_ppl_variants(kernel) -> None:
    task, example = first_example(kernel, "fewclue-tnews")
    sentence = raw_lines(task, "dev_few_all.json")[0]["sentence"]
    labels = ["农业新闻", "旅游新闻", "游戏新闻", "科技类别公司新闻", "体育类别新闻", "初升高教育新闻", "娱乐圈新闻",
              "投资资讯", "军事类别常识", "车辆新闻", "楼市新闻", "环球不含中国类别新闻", "书籍文化历史类别新闻",
              "故事类别新闻", "股票市场类别新闻"]
    assert asked(task, "opencompass:FewCLUE_tnews_ppl_7d1c07", example) == [
        f"{sentence}这篇新闻属于：{label}" for label in labels]
    assert asked(task, "opencompass:FewCLUE_tnews_ppl_fff486", example) == [
        f"以下内容属于什么新闻：{sentence}。\n{label}" for label in labels]
    values = load(task, "opencompass:FewCLUE_tnews_ppl_7d1c07").render(example).values
    assert values[0] == "115" and values[3] == "109"  # news_agriculture, news_tech


def test_every_opencompass_config_has_its_preset(kernel) -> None:
    """The 50 CLUE/FewCLUE configs of OpenCompass 0.5.4 (its configs/datasets/CLUE_* and FewCLUE_* with a
    hash), listed by hand from that release: each is a preset of its task."""
    expected = {
        "c3": "CLUE_C3_ppl_e24a31 CLUE_C3_ppl_56b537 CLUE_C3_gen_8c358f",
        "cmrc2018": "CLUE_CMRC_gen_1bd3c8 CLUE_CMRC_gen_3749cd CLUE_CMRC_gen_8484b9 CLUE_CMRC_gen_941108",
        "drcd": "CLUE_DRCD_gen_1bd3c8 CLUE_DRCD_gen_3749cd CLUE_DRCD_gen_8484b9 CLUE_DRCD_gen_941108",
        "afqmc": "CLUE_afqmc_ppl_6507d7 CLUE_afqmc_ppl_378c5b CLUE_afqmc_ppl_7b0c1e CLUE_afqmc_gen_901306",
        "cmnli": "CLUE_cmnli_ppl_fdc6de CLUE_cmnli_ppl_ef69e7 CLUE_cmnli_ppl_98dd6e CLUE_cmnli_gen_1abf97 "
                 "CLUE_cmnli_gen_51e956",
        "ocnli": "CLUE_ocnli_ppl_fdc6de CLUE_ocnli_ppl_ef69e7 CLUE_ocnli_ppl_98dd6e CLUE_ocnli_gen_c4cb6c "
                 "CLUE_ocnli_gen_51e956",
        "fewclue-bustm": "FewCLUE_bustm_ppl_e53034 FewCLUE_bustm_ppl_4b16c0 FewCLUE_bustm_ppl_9ef540 "
                         "FewCLUE_bustm_gen_634f41",
        "fewclue-chid": "FewCLUE_chid_ppl_8f2872 FewCLUE_chid_ppl_acccb5 FewCLUE_chid_gen_0a29a2",
        "fewclue-cluewsc": "FewCLUE_cluewsc_ppl_868415 FewCLUE_cluewsc_ppl_12e4e0 FewCLUE_cluewsc_ppl_4284a0 "
                           "FewCLUE_cluewsc_gen_c68933",
        "fewclue-csl": "FewCLUE_csl_ppl_841b62 FewCLUE_csl_ppl_769f8d FewCLUE_csl_gen_28b223 FewCLUE_csl_gen_87f4a8",
        "fewclue-eprstmt": "FewCLUE_eprstmt_ppl_f1e631 FewCLUE_eprstmt_ppl_1ce587 FewCLUE_eprstmt_gen_740ea0",
        "fewclue-ocnli": "FewCLUE_ocnli_fc_ppl_c08300 FewCLUE_ocnli_fc_ppl_9e8b3d FewCLUE_ocnli_fc_gen_f97a97",
        "fewclue-tnews": "FewCLUE_tnews_ppl_d10e8a FewCLUE_tnews_ppl_7d1c07 FewCLUE_tnews_ppl_fff486 "
                         "FewCLUE_tnews_gen_b90e4a",
    }
    assert sum(len(names.split()) for names in expected.values()) == 50
    for name, names in expected.items():
        task, example = first_example(kernel, name)
        assert sorted(presets_of(task)) == sorted(f"opencompass:{n}" for n in names.split()), name
        declared = next(s for s in task.settings if s.name == "protocol")
        assert declared.choices == (OWN, *presets_of(task))
        for preset in presets_of(task):
            source = load(task, preset).preset["source"]
            assert f"/{preset.split(':')[1]}.py" in source, (preset, source)
            texts = asked(task, preset, example)
            assert texts and all("{" not in text for text in texts), (preset, texts)
