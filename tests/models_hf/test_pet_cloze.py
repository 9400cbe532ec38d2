"""PET's clozes and refusals: masks per character, one variant per verbaliser length, truncation that
keeps the answer slot, and every input PET cannot score refused in one line before anything trains."""

from __future__ import annotations

import json

import pytest

from clue_core.plugin import ClassificationExample, ClueError, Prompt, TaskSpec
from clue_models_hf import tiny
from clue_models_hf.factory import create, create_tiny
from clue_models_hf.pet import ClozeEncoder, _fit, prompt_texts, task_prompt, verbalizer_tokens

from .conftest import FAST, TINY

PROMPT = Prompt("判断两句话的关系。", "问题一：{text}\n问题二：{text_pair}", {"0": "不同", "1": "相同"})
TASK = TaskSpec("toy-pet", "classification", "toy", "x:y", labels=("0", "1"), prompt=PROMPT)
#: TNEWS-like: verbalisers of two and three characters.
MIXED = TaskSpec("toy-mixed", "classification", "toy", "x:y", labels=("a", "b", "c"),
                 prompt=Prompt("", "标题：{text}", {"a": "体育", "b": "国际新闻", "c": "财经"}))
PET = {**TINY, "method": "pet"}
#: For hf:<folder> (no tiny_* settings).
PET_HF = {**FAST, "method": "pet"}


def tokenizer_for(task: TaskSpec, texts: list[str]) -> object:
    return tiny.build_tokenizer(texts, required=prompt_texts(task_prompt(task, False)))


def decode(tokenizer: object, ids: list[int]) -> list[str]:
    return tokenizer.convert_ids_to_tokens(ids)  # type: ignore[attr-defined]


def test_one_mask_per_character_after_the_answer_prefix() -> None:
    example = ClassificationExample(0, "天地玄黄", "宇宙洪荒", "1")
    tokenizer = tokenizer_for(TASK, [example.text, example.text_pair])
    prompt = task_prompt(TASK, False)
    tokens = verbalizer_tokens(tokenizer, prompt, TASK.labels, "hf-tiny")
    assert [len(t) for t in tokens] == [2, 2]
    features = ClozeEncoder(tokenizer, prompt, tokens, 64, TASK.name).encode([example], {"0": 0, "1": 1})
    item = features.items[0]
    assert item["label"] == 1 and len(item["variants"]) == 1
    pieces = decode(tokenizer, item["variants"][0])
    assert "".join(pieces) == "[CLS]问题一：天地玄黄问题二：宇宙洪荒答案：[MASK][MASK][SEP]"
    assert pieces[item["mask_start"]:item["mask_start"] + 2] == ["[MASK]", "[MASK]"]


def test_verbalisers_of_different_lengths_get_one_input_each() -> None:
    example = ClassificationExample(0, "天地玄黄", None, "b")
    tokenizer = tokenizer_for(MIXED, [example.text])
    prompt = task_prompt(MIXED, False)
    tokens = verbalizer_tokens(tokenizer, prompt, MIXED.labels, "hf-tiny")
    item = ClozeEncoder(tokenizer, prompt, tokens, 64, MIXED.name).encode([example], None).items[0]
    short, long = (decode(tokenizer, v) for v in item["variants"])
    assert short[-3:] == ["[MASK]", "[MASK]", "[SEP]"] and short.count("[MASK]") == 2
    assert long.count("[MASK]") == 4
    assert short[:item["mask_start"]] == long[:item["mask_start"]]  # the same text, only the masks differ
    assert "label" not in item


def test_long_texts_are_cut_never_the_template_or_the_answer_slot() -> None:
    examples = [ClassificationExample(0, "天" * 300, "地" * 20, "0"), ClassificationExample(1, "玄" * 5, "黄" * 5, "1")]
    tokenizer = tokenizer_for(TASK, [e.text for e in examples] + [e.text_pair for e in examples])
    prompt = task_prompt(TASK, False)
    tokens = verbalizer_tokens(tokenizer, prompt, TASK.labels, "hf-tiny")
    features = ClozeEncoder(tokenizer, prompt, tokens, 60, TASK.name).encode(examples, None)
    long, short = (decode(tokenizer, item["variants"][0]) for item in features.items)
    assert len(long) == 60 and long.count("天") == 25
    text = "".join(long)
    assert text.startswith("[CLS]问题一：天") and "问题二：" in text and text.endswith("答案：[MASK][MASK][SEP]")
    assert text.count("地") == 20  # longest first: the short field is kept whole
    assert "".join(short) == "[CLS]问题一：玄玄玄玄玄问题二：黄黄黄黄黄答案：[MASK][MASK][SEP]"
    assert features.notes == ["1 of 2 cloze texts were cut to max_length 60 (the answer slot kept)"]


@pytest.mark.parametrize(("lengths", "budget", "expected"), [
    ([10, 3], 20, [10, 3]), ([10, 3], 8, [5, 3]), ([10, 10], 9, [5, 4]), ([7, 7, 1], 6, [3, 2, 1])])
def test_truncation_is_longest_first(lengths: list[int], budget: int, expected: list[int]) -> None:
    assert _fit(lengths, budget) == expected


def test_a_prompt_too_long_for_max_length_is_one_line() -> None:
    with pytest.raises(ClueError, match=r"max_length 12 leaves no room for toy-pet's texts.*15 tokens"):
        create_tiny(None, TASK, {**PET, "max_length": 12}).check_plan({"train": [ClassificationExample(0, "天", "地",
                                                                                                   "0")]})


@pytest.mark.parametrize(("task", "message"), [
    (TaskSpec("t", "classification", "toy", "x:y", labels=("0", "1")), "declares no prompt"),
    (TaskSpec("t", "classification", "toy", "x:y", labels=("0", "1"), prompt=Prompt("", "{text}")),
     "has no verbalizers"),
    (TaskSpec("t", "classification", "toy", "x:y", labels=("0", "1"), prompt=Prompt("", "{text}", {"0": "是"})),
     "verbalizers miss labels 1"),
    (TaskSpec("t", "classification", "toy", "x:y", labels=("0", "1"),
              prompt=Prompt("", "{text}", {"0": "是", "1": " "})), "label '1' is empty"),
    (TaskSpec("t", "span", "toy", "x:y"), "span tasks use method=finetune"),
])
def test_tasks_pet_cannot_ask_are_refused(task: TaskSpec, message: str) -> None:
    with pytest.raises(ClueError, match=message):
        create_tiny(None, task, PET)


def test_a_verbaliser_that_tokenizes_to_nothing_is_refused() -> None:
    task = TaskSpec("t", "classification", "toy", "x:y", labels=("0", "1"),
                    prompt=Prompt("", "{text}", {"0": "是", "1": "\u0007"}))
    with pytest.raises(ClueError, match=r"verbalizer '\\x07' of label '1' tokenizes to nothing"):
        create_tiny(None, task, PET).check_plan({"train": [ClassificationExample(0, "天", None, "0")]})


def test_an_unknown_verbaliser_token_is_refused_by_name() -> None:
    tokenizer = tiny.build_tokenizer(["天地相"])  # no 同, no 不
    prompt = task_prompt(TASK, False)
    with pytest.raises(ClueError, match=r"verbalizer '不同' of label '0'.*'不', '同' -> \[UNK\]"):
        verbalizer_tokens(tokenizer, prompt, TASK.labels, "my-model")


def test_the_offline_backbone_always_knows_the_prompt_even_with_a_small_vocabulary() -> None:
    required = prompt_texts(task_prompt(TASK, False))
    tokenizer = tiny.build_tokenizer(["天地玄黄宇宙洪荒" * 3], max_size=16, required=required)
    assert tokenizer.unk_token_id not in tokenizer("不同相同答案", add_special_tokens=False)["input_ids"]


def _save_bert(folder, architecture: str, with_head: bool) -> None:
    from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification, BertModel

    config = BertConfig(vocab_size=len(tiny.build_vocab(["不同相答案问题一二"])), hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32)
    model = {"mlm": BertForMaskedLM, "cls": BertForSequenceClassification, "bare": BertModel}[architecture](config)
    model.save_pretrained(folder)
    tiny.build_tokenizer(["不同相答案问题一二"]).save_pretrained(folder)
    if not with_head:  # weights without the MLM head, claiming to be a masked LM
        data = json.loads((folder / "config.json").read_text())
        data["architectures"] = ["BertForMaskedLM"]
        (folder / "config.json").write_text(json.dumps(data))


def test_a_checkpoint_without_a_masked_lm_head_is_refused(tmp_path) -> None:
    example = ClassificationExample(0, "问题", "答案", "0")
    _save_bert(tmp_path / "cls", "cls", True)
    with pytest.raises(ClueError, match=r"saved as BertForSequenceClassification, without a masked-LM head"):
        create(str(tmp_path / "cls"), TASK, PET_HF).check_plan({"train": [example]})
    _save_bert(tmp_path / "bare", "bare", False)
    learner = create(str(tmp_path / "bare"), TASK, PET_HF)
    learner.check_plan({"train": [example]})  # the configuration claims a head: only the weights tell
    with pytest.raises(ClueError, match=r"has no masked-LM head weights \(cls\.predictions"):
        learner.predict([example])


def test_an_electra_discriminator_is_refused(tmp_path) -> None:
    from transformers import ElectraConfig

    config = ElectraConfig(vocab_size=32, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=32, embedding_size=16, architectures=["ElectraForPreTraining"])
    config.save_pretrained(tmp_path)
    tiny.build_tokenizer(["不同相"]).save_pretrained(tmp_path)
    with pytest.raises(ClueError, match="ElectraForPreTraining, without a masked-LM head"):
        create(str(tmp_path), TASK, PET_HF).check_plan({"train": []})


def test_a_model_type_without_any_masked_lm_class_is_refused() -> None:
    from transformers import GPT2Config

    from clue_models_hf.pet_scoring import check_mlm_architecture

    with pytest.raises(ClueError, match="gpt2 model, which has no masked-LM head"):
        check_mlm_architecture(GPT2Config(), "gpt")
