"""--data-dir where the data file is there but cannot be read as one: say why."""

from __future__ import annotations


def test_a_data_file_that_is_a_folder_or_a_broken_link_is_said(run_cli, tmp_path):
    """The generic 'no data here' hid why the file that is there was not read (issue 18 review)."""
    folder = tmp_path / "folder"
    (folder / "dev.jsonl").mkdir(parents=True)
    result = run_cli("run", "superclue", "--model", "llm-tiny", "--data-dir", folder, "-o", tmp_path / "o")
    assert result.exit_code == 2 and f"{folder / 'dev.jsonl'} is a folder, not a file" in result.output
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "dev.jsonl").symlink_to(tmp_path / "gone.jsonl")
    result = run_cli("run", "superclue", "--model", "llm-tiny", "--data-dir", linked, "-o", tmp_path / "o")
    said = f"{linked / 'dev.jsonl'} is a broken link (to {tmp_path / 'gone.jsonl'})"
    assert result.exit_code == 2 and said in result.output
    assert not (tmp_path / "o").exists()
