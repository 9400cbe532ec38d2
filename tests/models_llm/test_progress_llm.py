"""Long LLM work shows progress and loses nothing finished when it is killed (issue 22).

* ``clue-core run`` with llm-tiny, progress lines forced on (``CLUE_PROGRESS=lines``, one line per
  report): stderr counts examples scored or answers generated up to the call's total;
* a likelihood call killed after k reports (KeyboardInterrupt from the backend) keeps those k
  examples in the result cache, and the rerun asks the backend for the rest only;
* the transformers backend reports (so commits) every example on its own when an example's
  choices fill the logit budget (IFLYTEK: 119 labels, a 262k vocabulary).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from clue_models_llm.asking import Asker
from clue_models_llm.backend import ScoreRequest
from clue_models_llm.cache import ResultCache, entry_key

LINE = re.compile(r"^\[(\w+)\] llm-tiny: (scoring|generating)(?: dev| test [\d.]+): (\d+)/(\d+) (examples|answers)")


def progress_lines(stderr: str, task: str, doing: str) -> list[tuple[int, int]]:
    return [(int(m.group(3)), int(m.group(4))) for m in map(LINE.match, stderr.splitlines())
            if m and m.group(1) == task and m.group(2) == doing]


@pytest.fixture
def lines_always(monkeypatch):
    monkeypatch.setenv("CLUE_PROGRESS", "lines")
    monkeypatch.setenv("CLUE_PROGRESS_EVERY", "0")


def calls(stderr: str, task: str, doing: str) -> list[tuple[int, list[tuple[int, int]]]]:
    """Each backend call of ``task``: the requests its line announced, and the progress lines that followed."""
    announced = re.compile(rf"^\[{task}\] llm-tiny: {doing} (\d+) (?:dev |test [\d.]+ )(examples|answers)")
    found: list[tuple[int, list[tuple[int, int]]]] = []
    for line in stderr.splitlines():
        if m := announced.match(line):
            found.append((int(m.group(1)), []))
        elif found:
            found[-1][1].extend(progress_lines(line, task, doing))
    return found


@pytest.mark.slow
def test_a_run_shows_progress_in_examples_and_answers(run_cli, tmp_path, lines_always) -> None:
    result = run_cli("run", "afqmc", "cmrc2018", "--model", "llm-tiny", "--sample", "-o", tmp_path / "runs",
                     "--set", "eval_batch_size=4", "--set", "max_new_tokens=4")
    assert result.exit_code == 0, result.output
    stderr = result.stderr
    scored = calls(stderr, "afqmc", "scoring")  # dev, then test
    assert len(scored) == 2, stderr
    for total, lines in scored:
        # one line per committed batch of at most 4 examples, up to every example of the call
        assert lines and all(t == total for _, t in lines) and lines[-1][0] == total, (total, lines)
        done = [d for d, _ in lines]
        assert all(0 < b - a <= 4 for a, b in zip([0, *done], done)), done
    generated = calls(stderr, "cmrc2018", "generating")
    assert generated and all(lines[-1] == (total, total) for total, lines in generated), generated
    last = [line for line in stderr.splitlines() if line.startswith("[cmrc2018] llm-tiny: generating test 1.1:")][-1]
    assert re.fullmatch(r"\[cmrc2018\] llm-tiny: generating test 1.1: (\d+)/\1 answers in \d+ s", last), last


@pytest.mark.slow
def test_a_rerun_shows_the_cached_examples_as_done(run_cli, tmp_path, lines_always) -> None:
    first = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "-o", tmp_path / "a", "--limit", "6")
    assert first.exit_code == 0, first.output
    again = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "-o", tmp_path / "b", "--limit", "6")
    assert again.exit_code == 0, again.output
    assert "(6 cached)" in again.stderr and progress_lines(again.stderr, "afqmc", "scoring") == []


# -- killed likelihood work ------------------------------------------------------------------


class Dying:
    """A backend that answers examples one report each and raises KeyboardInterrupt after ``lives`` reports."""

    def __init__(self, lives: int | None = None) -> None:
        self.lives = lives
        self.asked: list[list[str]] = []

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Any) -> None:
        self.asked.append([r.prompt for r in requests])
        for index, request in enumerate(requests):
            if self.lives is not None and index == self.lives:
                raise KeyboardInterrupt
            n = len(request.choices)
            done({index: {"logprobs": [-1.0 - i for i in range(n)], "tokens": [2] * n, "prefix_logprob": None,
                          "prefix_tokens": None}})


def asker(backend: Dying, folder: Path, said: list[str]) -> Asker:
    cache = ResultCache(folder, json.dumps({"model": "dying"}))
    return Asker(backend, cache, lambda request: entry_key({"model": "dying"}, request),  # type: ignore[arg-type]
                 said.append, "dying", label="[iflytek] dying")


def test_a_killed_likelihood_run_keeps_what_it_finished(tmp_path, capsys, lines_always) -> None:
    labels = tuple(f"类别{i}" for i in range(119))
    requests = [ScoreRequest(f"应用描述{i}。类别：", labels) for i in range(10)]
    said: list[str] = []
    killed = Dying(lives=4)
    with pytest.raises(KeyboardInterrupt):
        asker(killed, tmp_path, said).likelihoods(requests, ppl=False)
    assert progress_lines_of(capsys.readouterr().err) == [(1, 10), (2, 10), (3, 10), (4, 10)]
    rerun = Dying()
    entries = asker(rerun, tmp_path, said).likelihoods(requests, ppl=False)
    assert rerun.asked == [[r.prompt for r in requests[4:]]]  # only the six the killed run did not finish
    assert said[-1] == "dying: scoring 10 examples by likelihood (4 cached)"
    assert len(entries) == 10 and all(len(e["logprobs"]) == 119 for e in entries)
    assert progress_lines_of(capsys.readouterr().err) == [(n, 10) for n in range(5, 11)]


def progress_lines_of(stderr: str) -> list[tuple[int, int]]:
    found = (re.match(r"^\[iflytek\] dying: scoring: (\d+)/(\d+) examples", line) for line in stderr.splitlines())
    return [(int(m.group(1)), int(m.group(2))) for m in found if m]


def test_a_process_that_is_not_the_main_one_shows_no_progress(tmp_path, capsys, lines_always) -> None:
    backend = Dying()
    cache = ResultCache(tmp_path, "{}")
    quiet = Asker(backend, cache, lambda request: entry_key({}, request), lambda _: None, "dying",  # type: ignore[arg-type]
                  label="[iflytek] dying", shown=False)
    quiet.likelihoods([ScoreRequest("p", ("a", "b"))], ppl=False)
    assert backend.asked and capsys.readouterr().err == ""


# -- how often the transformers backend commits ----------------------------------------------


def scorer(vocabulary: int, batch_size: int) -> Any:
    from clue_models_llm.scoring import ChoiceRequest, LikelihoodScorer

    weight = SimpleNamespace(shape=(vocabulary, 8), device="cpu")
    model = SimpleNamespace(config=SimpleNamespace(_attn_implementation="sdpa"),
                            get_output_embeddings=lambda: SimpleNamespace(weight=weight),
                            get_input_embeddings=lambda: SimpleNamespace(weight=weight))
    return LikelihoodScorer(model, batch_size), ChoiceRequest


def test_many_choices_and_a_large_vocabulary_are_committed_example_by_example() -> None:
    pytest.importorskip("torch")
    big, ChoiceRequest = scorer(262_144, 16)
    iflytek = [ChoiceRequest(tuple(range(300)), tuple((7, 8, 9, i) for i in range(119))) for _ in range(5)]
    assert big.batches(iflytek) == [[0], [1], [2], [3], [4]]  # one report (one commit) per example
    small, _ = scorer(262_144, 16)
    two_way = [ChoiceRequest(tuple(range(50)), ((1, 2), (3, 4))) for _ in range(40)]
    assert [len(b) for b in small.batches(two_way)] == [16, 16, 8]  # cheap examples: eval_batch_size a report
