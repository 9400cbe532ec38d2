"""superclue-cpif's sandbox through ``clue-core run``: refused at planning, recorded in the run and shown in
``clue-core report``, and no secret written.

The end-to-end run is a real ``clue-core`` process (its ``/proc/<pid>/environ`` holds a fake API
key, as a user's would) answering from a recorded-answers file, on a prompt file whose checkers
are hostile: every file of the run folder is then searched for the key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from clue_tasks_superclue import cpif_reader, sandbox

from . import test_cpif_reader_cli as table
from .test_cpif_sandbox import GOOD, ISOLATIONS, checker
from .test_sandbox_escapes import ATTACKS, DEEP

CLUE_CORE = Path(sys.executable).with_name("clue-core")


def test_bwrap_without_bubblewrap_is_refused_when_the_run_is_planned(run_cli, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    asked: list[int] = []
    monkeypatch.setattr(table.TableAnswerer, "predict", lambda self, examples: asked.append(1) or [])
    kernel = Kernel()
    kernel.register(table.TablePlugin(), "table-answers")
    result = run_cli("run", "superclue-cpif", "--model", "table-answers", "--sample", "-o", tmp_path / "run",
                     "--set", "sandbox=bwrap", kernel=kernel)
    assert result.exit_code == 2, result.output
    assert "bubblewrap (bwrap) is not installed" in result.output and "Traceback" not in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) == 1, result.output
    assert asked == [] and not (tmp_path / "run" / "superclue-cpif" / "predictions").exists()


@pytest.fixture(params=ISOLATIONS)
def isolation(request: pytest.FixtureRequest) -> str:
    return request.param


HOSTILE = ("parent_environ", "own_environ", "dirfd_open", "dirfd_home", "forged_reply", "mknod")


def test_a_hostile_prompt_file_through_the_cli(isolation: str, tmp_path: Path) -> None:
    home = tmp_path / "home" / "notes.txt"
    home.parent.mkdir()
    home.write_text("PRIVATE-HOME-FILE", encoding="utf-8")
    codes = [checker(DEEP + ATTACKS[name].replace("VICTIM", repr(str(home).lstrip("/")))) for name in HOSTILE]
    records = [{"prompt": f"问题{i}", "valid_code": code} for i, code in enumerate([*codes, GOOD])]
    data = tmp_path / "data"
    data.mkdir()
    (data / cpif_reader.FILE_NAME).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                                             encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"prompt": r["prompt"], "answer": "ok"}, ensure_ascii=False) + "\n"
                               for r in records), encoding="utf-8")
    secret = f"sk-test-{uuid.uuid4().hex}"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CLUE_HOME": str(tmp_path / "clue-home"),
           "OPENAI_API_KEY": secret, "HF_TOKEN": f"hf_{uuid.uuid4().hex}", "LANG": "C.UTF-8"}
    out = tmp_path / "run"
    done = subprocess.run([str(CLUE_CORE), "run", "superclue-cpif", "--model", f"answers:{answers}",
                           "--set", "answer_field=answer", "--data-dir", str(data), "-o", str(out),
                           "--set", f"sandbox={isolation}"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert secret not in done.stdout + done.stderr and env["HF_TOKEN"] not in done.stdout + done.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "dev.jsonl" for p in files)
    for path in files:
        text = path.read_bytes()
        assert secret.encode() not in text and env["HF_TOKEN"].encode() not in text, path
        assert b"PRIVATE-HOME-FILE" not in text and b"root:x:0:0" not in text, path
    run = out / "superclue-cpif"
    dev = json.loads((run / "metrics.json").read_text(encoding="utf-8"))["dev"]
    assert (dev["prompts"], dev["passed"], dev["checker_errors"]) == (len(records), 1, len(HOSTILE)), dev
    assert dev["sandbox_bwrap"] == (1.0 if isolation == "bwrap" else 0.0)
    notes = json.loads((run / "manifest.json").read_text(encoding="utf-8"))["notes"]
    wanted = "checker sandbox: bubblewrap" if isolation == "bwrap" else "checker sandbox: plain processes"
    assert any(note.startswith(f"dev: {wanted}") or note.startswith(wanted) for note in notes), notes
    scoring = [json.loads(line)["scoring"] for line in (run / "predictions" / "dev.jsonl").read_text().splitlines()]
    assert [s["passed"] for s in scoring] == [False] * len(HOSTILE) + [True]
    assert all(s["checker_error"] for s in scoring[:-1]) and home.read_text(encoding="utf-8") == "PRIVATE-HOME-FILE"
    report = tmp_path / "report"
    shown = subprocess.run([str(CLUE_CORE), "report", str(out), "-o", str(report)], capture_output=True, text=True,
                           env=env, timeout=600)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    held = "bubblewrap" if isolation == "bwrap" else "plain processes"
    assert f"| answers:{answers} | {held} |" in (report / "report.md").read_text(encoding="utf-8")
    assert all(secret.encode() not in p.read_bytes() for p in report.rglob("*") if p.is_file())
