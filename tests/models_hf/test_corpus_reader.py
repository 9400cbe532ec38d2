"""The corpus reader and ``clue-core corpus``: layout, blank lines, bad files, stats, split."""

from __future__ import annotations

import json
from pathlib import Path

from clue_models_hf.corpus import check_file, corpus_files, corpus_stats, held_out, iter_documents

from .conftest import invoke
from .pretrain_samples import write_corpus


def test_files_are_found_recursively_in_sorted_order_without_hidden_or_other_files(tmp_path) -> None:
    for name in ("b/2.txt", "a/z.txt", "a/sub/1.txt", "top.txt", ".hidden/x.txt", "a/.x.txt", "a/notes.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("句子。\n", encoding="utf-8")
    found = [p.relative_to(tmp_path).as_posix() for p in corpus_files(tmp_path)]
    assert found == ["a/sub/1.txt", "a/z.txt", "b/2.txt", "top.txt"]


def test_documents_are_separated_by_any_run_of_blank_lines(tmp_path) -> None:
    path = tmp_path / "c.txt"
    path.write_bytes("\ufeff第一句。\r\n第二句。\r\n\r\n  \n\n第三句。\n \t\n第四句。\n第五句。".encode())
    assert list(iter_documents(path)) == [["第一句。", "第二句。"], ["第三句。"], ["第四句。", "第五句。"]]


def test_bad_files_are_named_with_the_reason(tmp_path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "blank.txt").write_text("\n  \n\n", encoding="utf-8")
    (tmp_path / "gbk.txt").write_bytes("第一行\n".encode() + "中文".encode("gb18030") + b"\n")
    (tmp_path / "cut.txt").write_bytes("好".encode()[:2])
    (tmp_path / "good.txt").write_text("好。\n", encoding="utf-8")
    assert check_file(tmp_path / "empty.txt").startswith("empty")
    assert check_file(tmp_path / "blank.txt").startswith("empty")
    assert check_file(tmp_path / "gbk.txt").startswith("not UTF-8 (byte 10, line 2)")
    assert "ends inside a character" in check_file(tmp_path / "cut.txt")
    assert check_file(tmp_path / "good.txt") is None


def test_the_held_out_share_is_stable_and_near_the_share() -> None:
    picks = [held_out("news/a.txt", i, 0.1) for i in range(5000)]
    assert picks == [held_out("news/a.txt", i, 0.1) for i in range(5000)]
    assert 0.08 < sum(picks) / len(picks) < 0.12
    assert picks != [held_out("news/b.txt", i, 0.1) for i in range(5000)]
    assert not any(held_out("news/a.txt", i, 0.0) for i in range(100))


def test_corpus_stats_counts_what_is_there_and_names_bad_files(tmp_path) -> None:
    root = write_corpus(tmp_path / "corpus")
    expected = {"files": 0, "documents": 0, "sentences": 0, "characters": 0}
    for path in sorted(root.rglob("*.txt")):
        blocks = [b for b in path.read_text(encoding="utf-8").split("\n\n") if b.strip()]
        expected["files"] += 1
        expected["documents"] += len(blocks)
        expected["sentences"] += sum(len(b.strip().splitlines()) for b in blocks)
        expected["characters"] += sum(len(line) for b in blocks for line in b.strip().splitlines())
    (root / "wiki2019zh_corpus" / "bad.txt").write_bytes("坏".encode("gb18030"))
    result = invoke("corpus", "stats", root, "--json")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    bad = [line for line in lines if line.startswith("bad file:")]
    assert len(bad) == 1 and "bad.txt: not UTF-8" in bad[0]
    data = json.loads("\n".join(line for line in lines if not line.startswith("bad file:")))
    assert {k: data[k] for k in expected} == expected and data["bad_files"] == 1
    assert expected["documents"] > 40 and corpus_stats(root).documents == expected["documents"]


def test_corpus_stats_of_a_missing_folder_is_one_line(tmp_path) -> None:
    result = invoke("corpus", "stats", tmp_path / "nope")
    assert result.exit_code == 2 and result.output.strip() == f"error: {tmp_path / 'nope'}: no such corpus folder"


def big_file(path: Path, documents: int) -> list[list[str]]:
    docs = [[f"第{d}篇第{s}句，" + "内容" * (d % 7 + 1) + "。" for s in range(d % 5 + 1)] for d in range(documents)]
    path.write_text("\n\n".join("\n".join(doc) for doc in docs) + "\n", encoding="utf-8")
    return docs


def test_split_makes_small_files_without_cutting_documents(tmp_path) -> None:
    docs = big_file(tmp_path / "big.txt", 400)
    result = invoke("corpus", "split", tmp_path / "big.txt", "-o", tmp_path / "out", "--max-bytes", 2048)
    assert result.exit_code == 0, result.output
    files = corpus_files(tmp_path / "out")
    assert len(files) > 10 and all(p.stat().st_size <= 2048 for p in files)
    assert files[0].name == "big_00000.txt"
    assert [d for p in files for d in iter_documents(p)] == docs  # every document, whole and in order
    again = invoke("corpus", "split", tmp_path / "big.txt", "-o", tmp_path / "out")
    assert again.exit_code == 2 and "not an empty folder" in again.output


def test_split_cuts_an_oversized_document_at_sentences_and_says_so(tmp_path) -> None:
    lines = [f"很长的文档第{i}句。" for i in range(300)]
    (tmp_path / "big.txt").write_text("短文。\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    result = invoke("corpus", "split", tmp_path / "big.txt", "-o", tmp_path / "out", "--max-bytes", 1024)
    assert result.exit_code == 0, result.output
    assert "1 document(s) larger than 1024 bytes were cut" in result.output
    files = corpus_files(tmp_path / "out")
    assert all(p.stat().st_size <= 1024 for p in files)
    assert [s for p in files for d in iter_documents(p) for s in d] == ["短文。", *lines]


def test_split_refuses_a_file_that_is_not_utf8_and_leaves_nothing(tmp_path) -> None:
    (tmp_path / "big.txt").write_bytes("好的。\n\n".encode() + "坏".encode("gb18030") + b"\n")
    result = invoke("corpus", "split", tmp_path / "big.txt", "-o", tmp_path / "out")
    assert result.exit_code == 2
    assert result.output.strip().startswith(f"error: {tmp_path / 'big.txt'}:3: not UTF-8")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out*"))
