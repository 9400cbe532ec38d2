"""A hostile user against ``clue-core corpus`` and ``clue-core pretrain``: each test provoked a
fault (a traceback, lost or clobbered data, a silently dropped file, a resumed run on other
data) before its fix."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from clue_models_hf import corpus_split
from clue_models_hf.corpus import corpus_files, corpus_stats, iter_documents

from .conftest import invoke


def docs_file(path: Path, count: int = 3) -> Path:
    path.write_text("\n\n".join(f"第{i}篇第一句。\n第{i}篇第二句。" for i in range(count)) + "\n", encoding="utf-8")
    return path


# ---- corpus split --------------------------------------------------------------------------
def test_split_never_deletes_a_folder_that_happens_to_have_its_staging_name(tmp_path) -> None:
    docs_file(tmp_path / "big.txt")
    mine = tmp_path / ".out.splitting"
    mine.mkdir()
    (mine / "notes.md").write_text("keep me", encoding="utf-8")
    result = invoke("corpus", "split", tmp_path / "big.txt", "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert (mine / "notes.md").read_text(encoding="utf-8") == "keep me"
    assert [p.name for p in corpus_files(tmp_path / "out")] == ["big_00000.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.splitting", "big.txt", "out"]


@pytest.mark.parametrize("prefix", ["a/b", "../escape", ".hidden", "", "x\\y"])
def test_split_refuses_a_prefix_that_is_no_plain_visible_file_name(tmp_path, prefix) -> None:
    docs_file(tmp_path / "big.txt")
    result = invoke("corpus", "split", tmp_path / "big.txt", "-o", tmp_path / "out", "--prefix", prefix)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: --prefix") and len(result.output.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]


def test_split_of_a_hidden_source_writes_files_the_reader_sees(tmp_path) -> None:
    docs_file(tmp_path / ".notes.txt")
    result = invoke("corpus", "split", tmp_path / ".notes.txt", "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert [p.name for p in corpus_files(tmp_path / "out")] == ["notes_00000.txt"]


def test_split_names_sort_in_file_order_beyond_100000_files(tmp_path) -> None:
    # at 1024 bytes a file, 130,000 files would take 130 MB; the width is decided from the
    # source's size, so a file of the size that needs six digits is faked through the bound
    assert corpus_split.name_width(200 * 1024 * 1024, 1024) >= 6
    assert corpus_split.name_width(1024, 1024) == 5
    docs = [[f"第{d}篇。" + "字" * 300] for d in range(40)]
    (tmp_path / "big.txt").write_text("\n\n".join(d[0] for d in docs) + "\n", encoding="utf-8")
    result = invoke("corpus", "split", tmp_path / "big.txt", "-o", tmp_path / "out", "--max-bytes", 1024)
    assert result.exit_code == 0, result.output
    files = corpus_files(tmp_path / "out")
    assert [d for p in files for d in iter_documents(p)] == docs


def test_a_line_longer_than_max_bytes_is_named_by_file_and_line(tmp_path) -> None:
    (tmp_path / "big.txt").write_text("短。\n\n" + "长" * 2000 + "\n", encoding="utf-8")
    result = invoke("corpus", "split", tmp_path / "big.txt", "-o", tmp_path / "out", "--max-bytes", 1024)
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {tmp_path / 'big.txt'}:3: a single line of 6001 bytes")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]


def test_a_full_disk_during_split_is_one_line_and_leaves_nothing(tmp_path, monkeypatch) -> None:
    docs_file(tmp_path / "big.txt", 50)
    real_open = open

    class Full:
        def __init__(self, handle):
            self.handle = handle

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def close(self):
            self.handle.close()

    def opener(path, mode="r", *args, **kwargs):
        handle = real_open(path, mode, *args, **kwargs)
        return Full(handle) if "x" in mode else handle

    monkeypatch.setattr(corpus_split, "open", opener, raising=False)
    result = invoke("corpus", "split", tmp_path / "big.txt", "-o", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: corpus split: ") and "disk is full" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]


def test_the_split_folder_gets_the_umask_mode_not_the_staging_folders_0700(tmp_path) -> None:
    docs_file(tmp_path / "big.txt")
    umask = os.umask(0o022)
    try:
        assert invoke("corpus", "split", tmp_path / "big.txt", "-o", tmp_path / "out").exit_code == 0
    finally:
        os.umask(umask)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755


# ---- the corpus reader ---------------------------------------------------------------------
def test_a_linked_sub_corpus_is_read_and_a_link_loop_ends(tmp_path) -> None:
    elsewhere = tmp_path / "disk2" / "wiki"
    elsewhere.mkdir(parents=True)
    docs_file(elsewhere / "w.txt")
    root = tmp_path / "corpus"
    (root / "news").mkdir(parents=True)
    docs_file(root / "news" / "n.txt")
    (root / "wiki2019zh_corpus").symlink_to(elsewhere)
    (root / "news" / "loop").symlink_to(root)
    found = [p.relative_to(root).as_posix() for p in corpus_files(root)]
    assert found == ["news/n.txt", "wiki2019zh_corpus/w.txt"]
    assert corpus_stats(root).documents == 6


def test_a_broken_link_or_a_pipe_named_txt_is_a_bad_file_not_a_silent_gap(tmp_path) -> None:
    docs_file(tmp_path / "good.txt")
    (tmp_path / "gone.txt").symlink_to(tmp_path / "nowhere.txt")
    os.mkfifo(tmp_path / "pipe.txt")
    result = invoke("corpus", "stats", tmp_path, "--json")
    assert result.exit_code == 0, result.output
    bad = [line for line in result.output.splitlines() if line.startswith("bad file:")]
    assert [line.split(": ")[1].rsplit("/", 1)[1] for line in bad] == ["gone.txt", "pipe.txt"]
    assert all("not a regular file" in line for line in bad)
    data = json.loads("\n".join(line for line in result.output.splitlines() if not line.startswith("bad file:")))
    assert data["files"] == 1 and data["bad_files"] == 2


def test_a_file_without_line_breaks_is_read_in_bounded_parts(tmp_path) -> None:
    import tracemalloc

    from clue_models_hf.corpus import iter_parts

    path = tmp_path / "one-line.txt"
    path.write_text("字" * 3_000_000, encoding="utf-8")  # 9 MB, one line, one document
    tracemalloc.start()
    try:
        total, ends, largest = 0, 0, 0
        for index, sentences, end in iter_parts(path):
            assert index == 0
            size = sum(len(s) for s in sentences)
            total, ends, largest = total + size, ends + end, max(largest, size)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert total == 3_000_000 and ends == 1
    assert largest < 400_000 and peak < 4_000_000  # whole, the line alone is 6 MB as a str


def test_parts_of_one_document_keep_its_boundaries(tmp_path) -> None:
    from clue_models_hf.corpus import iter_parts

    path = tmp_path / "c.txt"
    path.write_text("一" * 25 + "\n二二\n\n  \u3000\n三" + " " * 30 + "\n\n四\n", encoding="utf-8")
    parts = list(iter_parts(path, part_chars=10, line_chars=8))
    assert [(i, end) for i, _, end in parts][-2:] == [(1, True), (2, True)]
    assert "".join(s for i, ss, _ in parts if i == 0 for s in ss) == "一" * 25 + "二二"
    assert all(sum(map(len, ss)) <= 10 + 8 for _, ss, _ in parts)
    assert list(iter_documents(path)) == [["一" * 25, "二二"], ["三"], ["四"]]


def test_a_document_in_several_parts_is_one_document_with_one_sep(tmp_path, monkeypatch) -> None:
    from functools import partial

    from clue_models_hf import corpus, pretrain_data, tiny
    from clue_models_hf.wwm import WordEncoder

    path = tmp_path / "c.txt"
    path.write_text("甲乙丙丁。" * 40 + "\n\n" + "戊己。\n" * 30 + "\n短。\n", encoding="utf-8")
    tokenizer = tiny.build_tokenizer(["甲乙丙丁戊己短。"])
    encoder = WordEncoder(tokenizer, whole_words=False)
    dtype, flag = pretrain_data.token_dtype(len(tokenizer))
    whole = pretrain_data.encode_file(path, "c.txt", encoder, tokenizer.sep_token_id, 0.0, flag, dtype)
    monkeypatch.setattr(pretrain_data, "iter_parts", partial(corpus.iter_parts, part_chars=16, line_chars=16))
    parted = pretrain_data.encode_file(path, "c.txt", encoder, tokenizer.sep_token_id, 0.0, flag, dtype)
    assert whole[2] == parted[2] == 3
    assert (parted[0] == tokenizer.sep_token_id).sum() == 3 and parted[0][-1] == tokenizer.sep_token_id
    assert len(parted[0]) == len(whole[0]) == 200 + 90 + 2 + 3


# ---- pretrain: the output folder, the corpus under it, a second run, a full disk ----------
FAST = ("--set", "max_length=32", "--set", "batch_size=4", "--set", "tiny_hidden_size=32",
        "--set", "tiny_num_layers=1", "--set", "tiny_intermediate_size=64", "--set", "eval_sequences=4",
        "--set", "eval_share=0.2", "--set", "tokenize_workers=1", "--set", "progress=false",
        "--set", "save_every_seconds=0", "--set", "max_steps=2")


@pytest.fixture()
def small_corpus(tmp_path) -> Path:
    from .pretrain_samples import write_corpus

    return write_corpus(tmp_path / "corpus")


def pretrain(corpus: Path, out: Path, *extra: object) -> object:
    return invoke("pretrain", "--corpus", corpus, "--model", "hf-tiny", "-o", out, *FAST, *extra)


def listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.mark.slow
def test_overwrite_removes_the_run_and_nothing_the_user_put_next_to_it(small_corpus, tmp_path) -> None:
    out = tmp_path / "out"
    assert pretrain(small_corpus, out).exit_code == 0
    (out / "notes.md").write_text("my notes", encoding="utf-8")
    (out / "eval").mkdir()
    (out / "eval" / "afqmc.json").write_text("{}", encoding="utf-8")
    again = pretrain(small_corpus, out, "--overwrite")
    assert again.exit_code == 0, again.output
    assert (out / "notes.md").read_text(encoding="utf-8") == "my notes" and (out / "eval" / "afqmc.json").is_file()
    assert (out / "model" / "model.safetensors").is_file() and (out / "metrics.json").is_file()


@pytest.mark.parametrize("content", ["not json {", '{"model": "x"}', '["a list"]'])
def test_a_pretrain_json_this_command_did_not_write_protects_the_folder(small_corpus, tmp_path, content) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "pretrain.json").write_text(content, encoding="utf-8")
    (mine / "data").mkdir()
    (mine / "data" / "thesis.tex").write_text("years of work", encoding="utf-8")
    for flag in ("--overwrite", "--resume"):
        result = pretrain(small_corpus, mine, flag)
        assert result.exit_code == 2 and "is no pre-training output" in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1
    assert listing(mine) == ["data", "data/thesis.tex", "pretrain.json"]


def test_an_output_folder_inside_the_corpus_or_around_it_is_refused(small_corpus, tmp_path) -> None:
    before = listing(small_corpus)
    inside = pretrain(small_corpus, small_corpus / "runs" / "pt")
    assert inside.exit_code == 2 and "inside the corpus folder" in inside.output, inside.output
    assert listing(small_corpus) == before
    around = tmp_path / "work"
    (around / "corpus").mkdir(parents=True)
    docs_file(around / "corpus" / "a.txt", 40)
    (around / "pretrain.json").write_text(json.dumps({"schema": "clue-models-hf/pretrain@1"}), encoding="utf-8")
    holds = pretrain(around / "corpus", around, "--overwrite")
    assert holds.exit_code == 2 and "holds the corpus folder" in holds.output, holds.output
    assert (around / "corpus" / "a.txt").is_file()


def test_a_second_run_on_the_same_folder_stops_in_one_line(small_corpus, tmp_path) -> None:
    from clue_models_hf.pretrain import lock_output

    out = tmp_path / "out"
    out.mkdir()
    (out / "pretrain.json").write_text(json.dumps({"schema": "clue-models-hf/pretrain@1"}), encoding="utf-8")
    (out / "data").mkdir()
    (out / "data" / "train.tokens").write_bytes(b"\0" * 8)
    held = lock_output(out)  # the first run, still writing
    try:
        for flag in ("--overwrite", "--resume"):
            result = pretrain(small_corpus, out, flag, "--set", "max_steps=2")
            assert result.exit_code == 2, result.output
            if flag == "--overwrite":
                assert f"another clue-core pretrain (process {os.getpid()}) is writing there" in result.output
        assert (out / "data" / "train.tokens").read_bytes() == b"\0" * 8
    finally:
        os.close(held)


class Killed(Exception):
    """Stands for SIGKILL: no handler runs, nothing is written after it."""


@pytest.mark.slow
@pytest.mark.parametrize("change", ["edit", "add"])
def test_resume_refuses_a_corpus_that_changed_since_it_was_tokenized(small_corpus, tmp_path, monkeypatch,
                                                                       change) -> None:
    from clue_models_hf import pretrain_loop

    def kill(self, step):
        raise Killed

    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        patch.setattr(pretrain_loop.PretrainLoop, "after_step", kill)
        with pytest.raises(Killed):
            pretrain(small_corpus, out, "--set", "save_every=1", "--set", "max_steps=3")
    victim = sorted(small_corpus.rglob("*.txt"))[0]
    if change == "edit":
        victim.write_text(victim.read_text(encoding="utf-8") + "\n新加的一篇文档。\n", encoding="utf-8")
    else:
        docs_file(small_corpus / "zzz_new.txt")
    result = pretrain(small_corpus, out, "--set", "save_every=1", "--set", "max_steps=3", "--resume")
    assert result.exit_code == 2, result.output
    assert "the corpus changed since it was tokenized" in result.output
    assert ("changed (size or modification time)" if change == "edit" else "zzz_new.txt is new") in result.output
    assert not (out / "model").exists()


@pytest.mark.slow
def test_a_full_disk_while_tokenizing_is_one_line_and_resume_goes_on(small_corpus, tmp_path, monkeypatch) -> None:
    from clue_models_hf import pretrain_data

    real = pretrain_data.write_json
    calls = {"n": 0}

    def full_after_three(path, data, **kwargs):
        calls["n"] += 1
        if calls["n"] > 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, data, **kwargs)

    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        patch.setattr(pretrain_data, "write_json", full_after_three)
        result = pretrain(small_corpus, out)
    assert result.exit_code == 2
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("error: pretrain: ") and "the disk is full" in last and "continue with --resume" in last
    assert len(json.loads((out / "data" / "index.json").read_text())["files"]) == 3
    resumed = pretrain(small_corpus, out, "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "tokenizing 5 of 8 files" in resumed.output


def test_a_max_length_longer_than_the_model_takes_stops_before_tokenizing(small_corpus, tmp_path) -> None:
    from clue_models_hf import tiny

    folder = tmp_path / "short-model"
    folder.mkdir()
    config = tiny.tiny_config(100, {"tiny_hidden_size": 32, "tiny_num_layers": 1, "tiny_num_heads": 2,
                                    "tiny_intermediate_size": 64}, 16)
    config.max_position_embeddings = 16
    config.save_pretrained(str(folder))
    result = invoke("pretrain", "--corpus", small_corpus, "--model", f"config:{folder}", "-o", tmp_path / "out",
                    "--set", "max_length=64", "--set", "tokenize_workers=1")
    assert result.exit_code == 2, result.output
    assert "setting 'max_length' (64) is longer than" in result.output and "(16)" in result.output
    assert not (tmp_path / "out").exists()


# ---- masking -------------------------------------------------------------------------------
def test_special_token_text_in_the_corpus_is_text_not_special_tokens() -> None:
    from clue_models_hf import tiny
    from clue_models_hf.wwm import WordEncoder

    tokenizer = tiny.build_tokenizer(["我们在北京学习。"])
    for whole in (True, False):
        ids, _ = WordEncoder(tokenizer, whole).encode(["我们[MASK]在[SEP]北京[CLS][PAD]"])
        assert not set(ids.tolist()) & set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}


def test_random_replacements_and_masks_never_touch_special_tokens() -> None:
    import numpy as np

    from clue_models_hf import tiny
    from clue_models_hf.mlm import MaskingCollator

    tokenizer = tiny.build_tokenizer(["天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏"])
    special = set(tokenizer.all_special_ids)
    collator = MaskingCollator(tokenizer, seed=3, probability=0.5)
    assert not set(collator.random_ids.tolist()) & special
    rng = np.random.default_rng(0)
    body = [i for i in range(len(tokenizer)) if i not in special]
    items = []
    for n in range(200):
        ids = np.concatenate(([tokenizer.cls_token_id], rng.choice(body, 30), [tokenizer.sep_token_id],
                              rng.choice(body, 10), [tokenizer.sep_token_id]))
        items.append({"ids": ids, "continues": rng.random(len(ids)) < 0.3, "index": n})
    batch = collator(items)
    originals = np.stack([item["ids"] for item in items])
    inputs, labels = batch["input_ids"].numpy(), batch["labels"].numpy()
    at_special = np.isin(originals, list(special))
    assert (inputs[at_special] == originals[at_special]).all() and (labels[at_special] == -100).all()
    replaced = (inputs != originals) & (inputs != tokenizer.mask_token_id)
    assert replaced.sum() > 50 and not np.isin(inputs[replaced], list(special)).any()
