"""A sweep file that cannot run is one line naming the file (and the key), exit 2, nothing written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .conftest import TINY, write_sweep

GOOD = {"tasks": ["afqmc"], "models": ["hf-tiny"], "seeds": [1], "sample": True, "settings": TINY}


def refused(run_cli, sweep: Path, out: Path, *extra: str) -> str:
    result = run_cli("sweep", sweep, "-o", out, "--workers", "0", *extra)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert not out.exists()  # nothing written
    return lines[0]


@pytest.mark.parametrize(("text", "expected"), [
    ("tasks = [afqmc]\n", "invalid TOML"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\nseed = 3\n', "field 'seed': unknown key"),
    ('tasks = ["afqmc"]\n', "field 'models': missing"),
    ('tasks = []\nmodels = ["baseline"]\n', "field 'tasks': expected a non-empty list"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\nseeds = [1, "2"]\n', "field 'seeds'"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\nseeds = [1, 1]\n', "seed 1 is listed twice"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\nseeds = [1, 4294967296]\n',
     "field 'seeds': seed 4294967296 is not a whole number from 0 to 4294967295"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\nseeds = -5\n',
     "field 'seeds': seed -5 is not a whole number from 0 to 4294967295"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\nsample = "yes"\n', "field 'sample': expected true or false"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\nlimit = 0\n', "field 'limit'"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\n[grid]\nlearning_rate = []\n', "field 'grid.learning_rate'"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\n[grid]\nlearning_rate = 0.1\n', "field 'grid.learning_rate'"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\n[grid]\nepochs = [1, 1]\n', "1 is listed twice"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\n[settings]\nepochs = 1\n[grid]\nepochs = [1, 2]\n',
     "field 'settings.epochs': is both fixed"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\n[settings]\nepochs = [1, 2]\n', "a list to sweep goes in [grid]"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\n[resources]\ncpu = 1\n', "field 'resources.cpu': unknown key"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\n[resources]\ngpus = -1\n', "field 'resources.gpus'"),
    ('tasks = ["afqmc"]\nmodels = ["baseline"]\nsample = true\ndata_dir = "x"\n', "exclude each other"),
])
def test_a_bad_file_is_one_line_naming_the_file_and_key(run_cli, tmp_path, text, expected):
    sweep = tmp_path / "bad.toml"
    sweep.write_text(text, encoding="utf-8")
    line = refused(run_cli, sweep, tmp_path / "out")
    assert str(sweep) in line and expected in line, line


def test_a_file_that_is_not_toml_or_not_there(run_cli, tmp_path):
    assert "ends in .toml" in refused(run_cli, tmp_path / "sweep.yaml", tmp_path / "out")
    assert "cannot read the sweep file" in refused(run_cli, tmp_path / "missing.toml", tmp_path / "out")


def test_an_unknown_setting_in_the_grid_fails_the_whole_sweep_up_front(run_cli, tmp_path):
    sweep = write_sweep(tmp_path / "s.toml", **{**GOOD, "grid": {"lerning_rate": [1e-3, 1e-2]}, "seeds": [1, 2]})
    line = refused(run_cli, sweep, tmp_path / "out")
    assert str(sweep) in line and "unknown setting 'lerning_rate'" in line and "did you mean 'learning_rate'" in line


def test_a_value_the_setting_refuses_and_an_unknown_task_fail_up_front(run_cli, tmp_path):
    sweep = write_sweep(tmp_path / "s.toml", **{**GOOD, "grid": {"epochs": [1, "many"]}})
    assert "epochs" in refused(run_cli, sweep, tmp_path / "out")
    sweep = write_sweep(tmp_path / "t.toml", **{**GOOD, "tasks": ["afqmc", "afqcm"]})
    assert "afqcm" in refused(run_cli, sweep, tmp_path / "out")


def test_flags_that_do_not_go_together(run_cli, tmp_path):
    sweep = write_sweep(tmp_path / "s.toml", **GOOD)
    assert "--address" in refused(run_cli, sweep, tmp_path / "out", "--address", "ray://x:10001")
    result = run_cli("sweep", sweep, "-o", tmp_path / "out", "--executor", "ray", "--workers", "0")
    assert result.exit_code == 2 and "--workers 0" in result.output and not (tmp_path / "out").exists()


def test_a_missing_ray_says_what_to_install_before_writing(run_cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    sweep = write_sweep(tmp_path / "s.toml", **GOOD)
    result = run_cli("sweep", sweep, "-o", tmp_path / "out", "--executor", "ray")
    assert result.exit_code == 2, result.output
    assert result.output.strip() == "error: --executor ray needs Ray: pip install 'clue-core[ray]'"
    assert not (tmp_path / "out").exists()


def test_a_folder_holding_something_else_is_not_written_into(run_cli, tmp_path):
    sweep = write_sweep(tmp_path / "s.toml", **GOOD)
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text('{"mine": true}', encoding="utf-8")
    result = run_cli("sweep", sweep, "-o", out, "--workers", "0")
    assert result.exit_code == 2 and "is not a sweep's summary" in result.output
    assert (out / "summary.json").read_text(encoding="utf-8") == '{"mine": true}'
    assert sorted(p.name for p in out.iterdir()) == ["summary.json"]


def test_dry_run_lists_every_trial_and_writes_nothing(run_cli, tmp_path):
    sweep = write_sweep(tmp_path / "s.toml", **{**GOOD, "seeds": [1, 2], "grid": {"learning_rate": [1e-3, 1e-2]}})
    result = run_cli("sweep", sweep, "-o", tmp_path / "out", "--dry-run")
    assert result.exit_code == 0, result.output
    ids = [line.split()[0] for line in result.output.strip().splitlines()]
    assert ids == [f"afqmc--hf-tiny--learning_rate-{lr}--seed-{s}" for lr in ("0.001", "0.01") for s in (1, 2)]
    assert all(" new " in line for line in result.output.strip().splitlines())
    assert not (tmp_path / "out").exists()


def test_a_file_saved_with_a_utf8_bom_is_read(tmp_path):
    from clue_sweep.spec import load_sweep

    sweep = tmp_path / "bom.toml"  # Windows editors (Notepad) save UTF-8 with a byte-order mark
    sweep.write_bytes(b'\xef\xbb\xbftasks = ["afqmc"]\nmodels = ["baseline"]\n')
    spec = load_sweep(sweep)
    assert spec.tasks == ("afqmc",) and spec.models == ("baseline",)


@pytest.mark.parametrize(("fields", "key", "missing"), [
    ({"data_dir": "no/such/data"}, "data_dir", "no/such/data"),
    ({"models": ["baseline", "hf:/no/such/folder"], "sample": True}, "models", "/no/such/folder"),
    ({"models": ["hf:./no-such-checkpoint"], "sample": True}, "models", "no-such-checkpoint"),
])
def test_a_missing_data_folder_or_model_folder_is_refused_at_planning(run_cli, tmp_path, monkeypatch, fields, key,
                                                                     missing):
    monkeypatch.chdir(tmp_path)  # data_dir and ./ model paths are relative to the current folder
    sweep = write_sweep(tmp_path / "s.toml", **{"tasks": ["afqmc"], "models": ["baseline"], "seeds": [1], **fields})
    line = refused(run_cli, sweep, tmp_path / "out")
    assert str(sweep) in line and f"field '{key}'" in line and missing in line and "no such folder" in line, line


def test_a_model_folder_that_is_a_file_is_refused_and_a_hub_id_is_left_to_the_model(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "weights.bin").write_bytes(b"")
    sweep = write_sweep(tmp_path / "s.toml", tasks=["afqmc"], models=["hf:./weights.bin"], seeds=[1],
                        sample=True)
    assert "not a folder" in refused(run_cli, sweep, tmp_path / "out")
    from clue_sweep.spec import load_sweep

    hub = load_sweep(write_sweep(tmp_path / "h.toml", tasks=["afqmc"], models=["hf:hfl/rbt3"], seeds=[1]))
    assert hub.models == ("hf:hfl/rbt3",)  # a hub id (no folder of that name here) is the model plugin's to find



@pytest.mark.parametrize(("table", "value", "point"), [("grid", "[0.0, nan]", "temperature=nan"),
                                                    ("settings", "nan", "default")])
def test_a_refused_value_names_the_sweep_files_table_not_set(run_cli, tmp_path, table, value, point):
    """The sweep's values reach the kernel as overrides, and the error said ``(--set)``, an option
    nobody gave; it names the table and the file now."""
    sweep = tmp_path / "s.toml"
    sweep.write_text(f'tasks = ["tnews"]\nmodels = ["llm-tiny"]\nseeds = [1]\nsample = true\n'
                     f"[{table}]\ntemperature = {value}\n", encoding="utf-8")
    line = refused(run_cli, sweep, tmp_path / "out")
    assert line == f"error: {sweep}: tnews with llm-tiny ({point}): setting 'temperature' " \
                   f"([{table}] in s.toml): expected a finite number, got nan", line
