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
