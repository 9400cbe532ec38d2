"""A killed ``openai:`` run, in its own process, resumes without asking the server again."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.models_llm.test_openai_runs import REPO, always, metrics, run, served
from tests.support.openai_server import OpenAIServer


@pytest.fixture(autouse=True)
def own_home(monkeypatch, tmp_path):
    """Runs that name no ``--cache`` use this test's own."""
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "clue-home"))


def _wait_while_running(process: subprocess.Popen, ready: Callable[[], bool], deadline_s: float = 120) -> None:
    """Poll ``ready()`` until it holds; fail at once if the process ended first.

    Every wait is on a state the test can observe (the server's requests, the cache's rows), not
    on a guessed duration; the deadline only guards against a hang.
    """
    deadline = time.monotonic() + deadline_s
    while not ready():
        if process.poll() is not None:
            pytest.fail(f"the run ended early: {process.stdout.read().decode()[-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail("the awaited state never came")
        time.sleep(0.05)


def _cached_entries(folder: Path) -> int:
    """Entries committed to the result caches under ``folder`` (read beside the writer, WAL mode)."""
    total = 0
    for path in folder.rglob("*.sqlite"):
        database = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        # OperationalError: the table is still being created
        with contextlib.closing(database) as db, contextlib.suppress(sqlite3.OperationalError):
            total += db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    return total


@pytest.mark.slow
def test_a_killed_run_resumes_without_repeating_a_request(tmp_path):
    """Request 5 is held until the client is killed: five answers are cached, none is asked again."""
    held = 5
    with OpenAIServer(always("蕴含"), model="tiny",
                      faults=lambda index, path, body: "hang" if index == held else None) as server:
        command = [sys.executable, "-m", "clue_core", "run", "afqmc", *served(server, "--set", "mode=generate",
                   "--set", "concurrency=1", "-o", str(tmp_path / "o"), "--cache", str(tmp_path / "c"))]
        process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            _wait_while_running(process, lambda: len(server.requests) > held)
            assert len(server.requests) == held + 1
            # the five answers before the held one are committed as they arrive: wait until they are
            _wait_while_running(process, lambda: _cached_entries(tmp_path / "c") >= held)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(30)
        assert sum(server.answered.values()) == held
        resumed = run("afqmc", *served(server, "--set", "mode=generate", "-o", str(tmp_path / "o"),
                                       "--cache", str(tmp_path / "c")), "--resume")
        assert resumed.exit_code == 0, resumed.output
        assert server.repeated() == 0
        info = metrics(tmp_path / "o", "afqmc")["model_info"]
        assert info["predict_calls"][0]["cached"] == held


@pytest.mark.slow
def test_ctrl_c_with_requests_hanging_at_the_server_ends_at_once_and_keeps_the_answers(tmp_path):
    """Ctrl-C while two requests hang (timeout 60 s): the run ends within seconds, not after the timeout;
    the answers that arrived are cached and the resumed run asks for none of them again."""
    answered, hanging = 4, [True]
    with OpenAIServer(always("蕴含"), model="tiny",
                      faults=lambda index, path, body: "hang" if hanging[0] and index >= answered else None) as server:
        command = [sys.executable, "-m", "clue_core", "run", "afqmc", *served(server, "--set", "mode=generate",
                   "--set", "concurrency=2", "--set", "timeout=60", "-o", str(tmp_path / "o"),
                   "--cache", str(tmp_path / "c"))]
        process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            _wait_while_running(process, lambda: len(server.requests) >= answered + 2)
            _wait_while_running(process, lambda: _cached_entries(tmp_path / "c") >= answered)
            interrupted = time.monotonic()
            process.send_signal(signal.SIGINT)
            output = process.communicate(timeout=50)[0].decode()
            seconds = time.monotonic() - interrupted
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(30)
        assert process.returncode == 130, output
        assert "interrupted: afqmc is kept unfinished" in output and seconds < 15, (seconds, output)
        assert _cached_entries(tmp_path / "c") == answered
        hanging[0] = False
        resumed = run("afqmc", *served(server, "--set", "mode=generate", "-o", str(tmp_path / "o"),
                                       "--cache", str(tmp_path / "c")), "--resume")
        assert resumed.exit_code == 0, resumed.output
        assert metrics(tmp_path / "o", "afqmc")["model_info"]["predict_calls"][0]["cached"] == answered
