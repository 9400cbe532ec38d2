"""clue_core.progress: plain lines in logs (done/total, rate, time left), throttled; a bar on a terminal; off."""

from __future__ import annotations

import io
import sys

import pytest

from clue_core.plugin import Progress


class Clock:
    """A clock the test moves by hand, so the lines' rates and times are exact."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def default_env(monkeypatch):
    for name in ("CLUE_PROGRESS", "CLUE_PROGRESS_EVERY", "RANK"):
        monkeypatch.delenv(name, raising=False)


def lines(capsys) -> list[str]:
    return capsys.readouterr().err.splitlines()


def test_a_log_gets_throttled_lines_with_done_total_rate_and_time_left(capsys, monkeypatch) -> None:
    monkeypatch.setenv("CLUE_PROGRESS_EVERY", "10")
    clock = Clock()
    with Progress(100, "[iflytek] scoring", "examples", clock=clock) as progress:
        assert progress.mode == "lines"  # pytest's stderr is no terminal
        clock.now += 5
        progress.update(10)
        assert lines(capsys) == []  # the first line is due 10 s after the start
        clock.now += 5
        progress.update(30)
        assert lines(capsys) == ["[iflytek] scoring: 40/100 examples, 4/s, ~15 s left"]
        clock.now += 9
        progress.update(20)
        assert lines(capsys) == []  # 9 s after the last line
        clock.now += 1
        progress.update(0)
        assert lines(capsys) == ["[iflytek] scoring: 60/100 examples, 3/s, ~13 s left"]
        clock.now += 20
        progress.update(40)
    assert lines(capsys) == ["[iflytek] scoring: 100/100 examples in 40 s"]


def test_cached_work_counts_as_done_but_not_in_the_rate(capsys, monkeypatch) -> None:
    monkeypatch.setenv("CLUE_PROGRESS_EVERY", "0")
    clock = Clock()
    with Progress(1000, "[c3] generating", "answers", done=400, clock=clock) as progress:
        clock.now += 200
        progress.update(100)
        assert lines(capsys) == ["[c3] generating: 500/1000 answers, 0.5/s, ~16 min 40 s left"]
        clock.now += 3600
        progress.update(100)
        assert lines(capsys) == ["[c3] generating: 600/1000 answers, 0.0526/s, ~2 h 6 min left"]


def test_work_shorter_than_the_first_line_prints_nothing(capsys) -> None:
    clock = Clock()
    with Progress(3, "[afqmc] scoring", clock=clock) as progress:
        clock.now += 2
        progress.update(3)
    assert lines(capsys) == []


def test_no_rate_yet_says_only_how_far(capsys, monkeypatch) -> None:
    monkeypatch.setenv("CLUE_PROGRESS_EVERY", "0")
    with Progress(7, "judge", "judgments", clock=Clock()) as progress:
        progress.update(0)
        assert lines(capsys) == ["judge: 0/7 judgments"]


@pytest.mark.parametrize("how", ["env", "shown", "rank"])
def test_off_by_setting_by_caller_and_on_other_processes(capsys, monkeypatch, how) -> None:
    monkeypatch.setenv("CLUE_PROGRESS_EVERY", "0")
    if how == "env":
        monkeypatch.setenv("CLUE_PROGRESS", "off")
    if how == "rank":
        monkeypatch.setenv("RANK", "1")
    with Progress(5, "scoring", shown=how != "shown", clock=Clock()) as progress:
        progress.update(5)
        assert progress.mode == "off"
    assert lines(capsys) == []


def test_a_terminal_gets_a_tqdm_bar_and_lines_can_be_forced(monkeypatch) -> None:
    pytest.importorskip("tqdm")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with Progress(4, "scoring") as progress:
        assert progress.mode == "bar"
        progress.update(4)
        assert progress.done == 4
    monkeypatch.setenv("CLUE_PROGRESS", "lines")
    monkeypatch.setenv("CLUE_PROGRESS_EVERY", "0")
    with Progress(4, "scoring", clock=Clock()) as progress:
        assert progress.mode == "lines"
        progress.update(1)
    assert "scoring: 1/4 examples" in terminal.getvalue()


def test_without_tqdm_a_terminal_gets_lines(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    monkeypatch.setattr(sys, "stderr", Terminal())
    monkeypatch.setenv("CLUE_PROGRESS_EVERY", "0")
    with Progress(2, "scoring", clock=Clock()) as progress:
        progress.update(2)
        assert progress.mode == "lines"
    assert sys.stderr.getvalue().splitlines() == ["scoring: 2/2 examples in 0 s"]


@pytest.mark.parametrize(("name", "value"), [("CLUE_PROGRESS", "lnes"), ("CLUE_PROGRESS_EVERY", "-5"),
                                              ("CLUE_PROGRESS_EVERY", "soon")])
def test_a_value_the_settings_cannot_take_is_one_line(monkeypatch, name, value) -> None:
    from clue_core.plugin import ClueError

    monkeypatch.setenv(name, value)
    with pytest.raises(ClueError, match=f"{value!r}.*CLUE_PROGRESS is auto, bar, lines or off"):
        Progress(3, "scoring")


def test_progress_opened_inside_a_gathering_one_moves_it_and_shows_nothing(capsys, monkeypatch) -> None:
    monkeypatch.setenv("CLUE_PROGRESS_EVERY", "0")
    clock = Clock()
    with Progress(10, "superclue: judge", "judgments", gathers=True, clock=clock) as judging:
        with Progress(6, "[superclue] model: generating", "answers", done=2, clock=clock) as inner:
            assert inner.mode == "into" and judging.done == 2
            clock.now += 10
            inner.update(4)
        # cached answers count as done but not in the rate: 4 answers in 10 s
        assert lines(capsys) == ["superclue: judge: 2/10 judgments", "superclue: judge: 6/10 judgments, 0.4/s, "
                                 "~10 s left"]
        with Progress(9, "[superclue] model: generating", "answers", clock=clock) as inner:
            inner.update(9)  # more than the judging has left (a learner asking twice): stops at its total
        assert judging.done == 10
    assert lines(capsys) == ["superclue: judge: 10/10 judgments in 10 s"]
    with Progress(3, "alone", clock=clock) as after:  # the gathering one is closed: shown on its own
        after.update(3)
        assert after.parent is None and after.mode == "lines"


def test_progress_inside_one_that_does_not_gather_shows_itself(capsys, monkeypatch) -> None:
    monkeypatch.setenv("CLUE_PROGRESS_EVERY", "0")
    clock = Clock()
    with Progress(2, "sweep", "runs", clock=clock) as sweep, Progress(4, "[afqmc] scoring", clock=clock) as inner:
        inner.update(4)
        assert inner.parent is None and sweep.done == 0
    assert lines(capsys) == ["[afqmc] scoring: 4/4 examples in 0 s"]
