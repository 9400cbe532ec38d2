"""``corpus split`` given a folder says it is a folder (docs/pretrain.md: it splits one big text file),
where it said "no such file" of a folder that was there; a missing file still says no such file."""

from __future__ import annotations

from pathlib import Path


def test_a_folder_given_to_corpus_split_is_named_a_folder(run_cli, tmp_path: Path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text("一句话。\n\n", encoding="utf-8")
    result = run_cli("corpus", "split", folder, "-o", tmp_path / "out")
    assert result.exit_code == 2
    assert result.output == (f"error: {folder}: is a folder, not a file; corpus split takes one big text file "
                             f"(corpus stats reads a folder of them)\n")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "clue-home") == ["corpus"]  # no output or staging


def test_a_missing_file_given_to_corpus_split_is_no_such_file(run_cli, tmp_path: Path):
    result = run_cli("corpus", "split", tmp_path / "gone.txt", "-o", tmp_path / "out")
    assert result.exit_code == 2 and result.output == f"error: {tmp_path / 'gone.txt'}: no such file\n"
    assert not (tmp_path / "out").exists()
