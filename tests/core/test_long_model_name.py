"""A model name longer than a file name may be (255 bytes) is a name, not a crash: ``os.stat`` raises
ENAMETOOLONG on it, which the kernel's saved-model lookup, the default output folder and the LLM
plugin's local-folder check each hit before (a traceback)."""

from __future__ import annotations

from pathlib import Path

from clue_core.planning import default_output_dir

LONG = "x" * 5000


def test_an_unknown_long_name_is_one_line(run_cli) -> None:
    result = run_cli("run", "c3", "--model", LONG, "--sample", "--dry-run")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.startswith("error: unknown model") and result.output.count("\n") == 1


def test_a_long_argument_plans_without_a_traceback(run_cli, tmp_path: Path) -> None:
    result = run_cli("run", "c3", "--model", f"llm:{LONG}", "--sample", "--dry-run", "-o", tmp_path)
    assert result.exit_code == 0, result.output
    assert not any(tmp_path.iterdir())  # a dry run writes nothing


def test_the_default_output_folder_fits_a_file_name() -> None:
    folder = default_output_dir(f"llm:{LONG}")
    assert len(folder.name) <= 255 and folder.name.endswith("x")
