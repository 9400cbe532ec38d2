"""A key in the environment never reaches what a run writes or prints, whatever put it there.

Each test puts ``$OPENAI_API_KEY`` (or the variable ``api_key_env`` names) into the output the way
a hostile or careless source would — a recorded answer, a server's answer, an error quoting it —
then reads every file of the run folder, the cache, the sweep and the report, and the command's
output: the key is absent and the marker is there.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clue_core import redaction

KEY = "sk-test-0123456789abcdef"
AFQMC_DEV = (Path(__file__).resolve().parents[2] / "plugins" / "clue-tasks-classic" / "clue_tasks_classic" / "samples"
             / "afqmc" / "dev.json")
WORDS = {"0": "不同", "1": "相同"}


def afqmc_dev() -> list[dict[str, Any]]:
    return [json.loads(line) for line in AFQMC_DEV.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def empty_registry() -> Iterator[None]:
    redaction.reset()
    yield
    redaction.reset()


def files_holding(folder: Path, text: str) -> list[str]:
    """Every file under ``folder`` (hidden ones, SQLite's journal too) whose bytes hold ``text``."""
    needle = text.encode("utf-8")
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


def leaky_answers(path: Path, key: str) -> Path:
    """Recorded answers for afqmc's sample dev split that quote the key after the right label word."""
    return write_jsonl(path, [{"id": i, "answer": f"{WORDS[r['label']]} (read {key})"}
                              for i, r in enumerate(afqmc_dev())])


def test_a_recorded_answer_quoting_the_key_reaches_no_file_and_no_line(run_cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    answers = leaky_answers(tmp_path / "a.jsonl", KEY)
    result = run_cli("run", "afqmc", "--sample", "--model", f"answers:{answers}", "-o", tmp_path / "out",
                     "--set", "answer_match=id")
    assert result.exit_code == 0, result.output
    assert files_holding(tmp_path / "out", KEY) == [] and KEY not in result.output
    assert "predictions/dev.jsonl" in " ".join(files_holding(tmp_path / "out", "(read ***)"))
    first = json.loads((tmp_path / "out" / "afqmc" / "predictions" / "dev.jsonl").read_text("utf-8").splitlines()[0])
    assert first["raw"]["generation"].endswith("(read ***)")
    assert json.loads((tmp_path / "out" / "afqmc" / "metrics.json").read_text("utf-8"))["dev"]["accuracy"] == 100.0


def test_a_value_shorter_than_eight_characters_is_not_redacted(run_cli, tmp_path, monkeypatch) -> None:
    # "sk-1234" replaced everywhere would also eat every "sk-1234" of ordinary text; too short to guard
    monkeypatch.setenv("OPENAI_API_KEY", "sk-1234")
    answers = leaky_answers(tmp_path / "a.jsonl", "sk-1234")
    result = run_cli("run", "afqmc", "--sample", "--model", f"answers:{answers}", "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "predictions/dev.jsonl" in " ".join(files_holding(tmp_path / "out", "(read sk-1234)"))


def test_a_served_answer_quoting_the_key_reaches_neither_the_run_nor_the_cache(run_cli, answering, tmp_path,
                                                                                  monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CLUE_TEST_SERVER_KEY", KEY)  # named by --set api_key_env: no default to know it by
    body = {"id": "c", "object": "text_completion", "created": 0, "model": "tiny",
            "choices": [{"index": 0, "text": f"相同 {KEY}", "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    url, handler = answering(json.dumps(body).encode())
    result = run_cli("run", "afqmc", "--sample", "--model", "openai:tiny", "--set", f"base_url={url}",
                     "--set", "mode=generate", "--set", "concurrency=1", "--set", "api_key_env=CLUE_TEST_SERVER_KEY",
                     "-o", tmp_path / "out", "--cache", tmp_path / "cache")
    assert result.exit_code == 0, result.output
    assert handler.posts > 0
    assert files_holding(tmp_path / "out", KEY) == [] and files_holding(tmp_path / "cache", KEY) == []
    assert KEY not in result.output
    assert files_holding(tmp_path / "out", "相同 ***")
    (cache,) = (tmp_path / "cache" / "llm").glob("*.sqlite")
    with sqlite3.connect(cache) as connection:
        values = [value for (value,) in connection.execute("SELECT value FROM results")]
    assert values and all(KEY not in v for v in values) and any("相同 ***" in v for v in values)


def test_a_sweep_summary_and_trial_log_quoting_the_key_hold_the_marker(run_cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    # a file whose duplicated id is the key: the trial fails with a message quoting it
    bad = tmp_path / "dup.jsonl"
    bad.write_text(f'{{"id": "{KEY}", "answer": "a"}}\n{{"id": "{KEY}", "answer": "b"}}\n', encoding="utf-8")
    good = leaky_answers(tmp_path / "a.jsonl", KEY)
    sweep = tmp_path / "s.toml"
    sweep.write_text(f'tasks = ["afqmc"]\nmodels = ["answers:{bad}", "answers:{good}"]\nseeds = [1]\n'
                     f'sample = true\n', encoding="utf-8")
    result = run_cli("sweep", sweep, "-o", tmp_path / "sweep", "--workers", "0")
    assert result.exit_code == 2, result.output  # one trial failed
    assert files_holding(tmp_path / "sweep", KEY) == [] and KEY not in result.output
    summary = json.loads((tmp_path / "sweep" / "summary.json").read_text(encoding="utf-8"))
    failed = [t for t in summary["trials"] if t["status"] == "failed"]
    assert len(failed) == 1 and "'***' is already the id of line 1" in failed[0]["error"]
    assert "'***' is already the id" in result.output


def test_a_report_over_a_run_that_holds_the_key_holds_the_marker(run_cli, tmp_path, monkeypatch) -> None:
    # the run is written where the key is no secret (an older clue-core, another machine): it holds it
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    answers = leaky_answers(tmp_path / "a.jsonl", KEY)
    assert run_cli("run", "afqmc", "--sample", "--model", f"answers:{answers}", "-o", tmp_path / "run").exit_code == 0
    assert files_holding(tmp_path / "run", KEY)
    # the report is made in a process whose environment has it
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    redaction.reset()
    result = run_cli("report", tmp_path / "run", "-o", tmp_path / "report")
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in (tmp_path / "report").iterdir())
    assert {"index.html", "report.json", "report.md"} <= set(written)
    assert files_holding(tmp_path / "report", KEY) == [] and KEY not in result.output
    assert {"index.html", "report.json"} <= set(files_holding(tmp_path / "report", "(read ***)"))
    # the files are what report.json vouches for: a second report replaces them without --force
    again = run_cli("report", tmp_path / "run", "-o", tmp_path / "report")
    assert again.exit_code == 0, again.output
