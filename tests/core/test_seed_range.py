"""A run's seed is one every backend takes (0 to 2**32 - 1): accelerate's set_seed and numpy refused
``--seed -5`` and ``--seed 4294967296`` (hf models), torch ``--seed 99999999999999999999999`` (llm-tiny)
with a traceback from inside the learner, leaving the run's staging folder behind; the baseline took
them. Now each is one line, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize("seed", ["-5", "4294967296", "99999999999999999999999"])
def test_a_seed_no_backend_takes_is_one_line_and_writes_nothing(run_cli, tmp_path: Path, seed: str) -> None:
    out = tmp_path / "out"
    result = run_cli("run", "afqmc", "-m", "baseline", "--sample", "--seed", seed, "-o", out)
    assert result.exit_code == 2, result.output
    assert result.output == f"error: seed must be a whole number from 0 to 4294967295 (--seed, or seed in the " \
                            f"config file), got {seed}\n"
    assert not out.exists()


def test_the_largest_and_smallest_seeds_run(run_cli, tmp_path: Path) -> None:
    for seed in ("0", "4294967295"):
        result = run_cli("run", "afqmc", "-m", "baseline", "--sample", "--seed", seed, "-o", tmp_path / seed)
        assert result.exit_code == 0, result.output


@pytest.mark.parametrize("seed", ["-5", "4294967296"])
def test_dry_run_refuses_the_seed_as_the_run_does(run_cli, tmp_path: Path, seed: str) -> None:
    """The range is checked while planning, where --limit is: --dry-run took -5 and showed a plan."""
    result = run_cli("run", "tnews", "-m", "baseline", "--sample", "--dry-run", "--seed", seed,
                     "-o", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert result.output == f"error: seed must be a whole number from 0 to 4294967295 (--seed, or seed in the " \
                            f"config file), got {seed}\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("seed", ["-5", "4294967296"])
def test_a_config_files_seed_out_of_range_names_the_file_and_key(run_cli, tmp_path: Path, seed: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'model = "baseline"\ntasks = ["tnews"]\nseed = {seed}\n', encoding="utf-8")
    for dry in ((), ("--dry-run",)):
        result = run_cli("run", "--config", config, "--sample", *dry, "-o", tmp_path / "out")
        assert result.exit_code == 2, result.output
        assert result.output == f"error: {config}: field 'seed': expected a whole number from 0 to 4294967295, " \
                                f"got {seed}\n"
        assert not (tmp_path / "out").exists()
