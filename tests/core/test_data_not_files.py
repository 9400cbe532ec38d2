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


def test_a_data_dir_that_is_neither_a_file_nor_a_folder_says_so(run_cli, tmp_path):
    """A named pipe or a device given as --data-dir is not a folder the user cannot read: the line said
    "cannot read this folder (permission denied)" for a pipe named ``x.zip`` and for ``/dev/null``."""
    import os

    pipe = tmp_path / "tnews_public.zip"
    os.mkfifo(pipe)
    for given, what in ((pipe, "a named pipe"), ("/dev/null", "a device")):
        result = run_cli("run", "tnews", "--model", "baseline", "--data-dir", given, "-o", tmp_path / "o")
        assert result.exit_code == 2, result.output
        assert result.output.splitlines() == [
            f"error: {given}: {what}, not a folder or a file; give the task's data folder or archive"]
        assert not (tmp_path / "o").exists()
