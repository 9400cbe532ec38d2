"""openai: likelihood against a server that takes one prompt per completions request (as llama.cpp's does).

The vLLM-like test server over a tiny local model, made to answer any list of more than one
prompt with the same 500 every time (llama.cpp's ``assert len(body.prompt) <= 1``): the probe
asks in the run's shape, sees the list refused and one prompt answered, and the run scores
each choice in its own request, with the same scores as the same server taking lists.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from clue_core.cli import cli
from clue_models_llm.backends.openai_likelihood import PROBE_PROMPT, PROBE_PROMPTS
from tests.models_llm.memorizer import sample_pairs
from tests.support.openai_server import ModelEngine, OpenAIServer, save_tiny_granite

TASKS = ("afqmc", "c3")
LINE = "takes one prompt per request"


@pytest.fixture(autouse=True)
def own_home(monkeypatch, tmp_path):
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "clue-home"))


@pytest.fixture(scope="module")
def granite(tmp_path_factory) -> Path:
    from clue_core.kernel import Kernel

    texts = [prompt + answer for prompt, answer in sample_pairs(Kernel(), TASKS)]
    return save_tiny_granite(tmp_path_factory.mktemp("granite") / "model", texts)


def is_list(body: Any) -> bool:
    prompt = body.get("prompt") if isinstance(body, dict) else None
    return isinstance(prompt, list) and len(prompt) > 1


def echoing(body: Any) -> bool:
    return isinstance(body, dict) and bool(body.get("echo"))


def one_prompt_faults(index: int, path: str, body: Any) -> str | None:
    """llama.cpp's answer to a list of prompts: the same 500, every time."""
    return "500" if is_list(body) else None


def run(*args: Any):
    return CliRunner().invoke(cli, ["run", *map(str, args)], catch_exceptions=False)


def scores(folder: Path, task: str) -> list[list[float]]:
    lines = (folder / task / "predictions" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["scores"] for line in lines]


def flat(rows: list[list[float]]) -> list[float]:
    return [value for row in rows for value in row]


def served(server: OpenAIServer, out: Path, cache: Path, *more: Any) -> list[Any]:
    return ["--model", "openai:tiny", "--set", f"base_url={server.url}", "--sample", "-o", out, "--cache", cache,
            *more]


@pytest.fixture(scope="module")
def reference(granite, tmp_path_factory) -> Path:
    """The same model on a server that takes lists: the scores a one-prompt server must give too."""
    folder = tmp_path_factory.mktemp("lists")
    with OpenAIServer(ModelEngine(granite), model="tiny") as server:
        result = run(*TASKS, *served(server, folder / "out", folder / "cache", "--set", "mode=loglikelihood"))
        assert result.exit_code == 0, result.output
        assert all(is_list(r.body) for r in server.requests)  # lists, one per example (the probe's too)
    return folder / "out"


@pytest.mark.parametrize("mode", ["loglikelihood", "auto"])
def test_one_prompt_per_request_is_found_by_the_probe_and_scores_every_choice(granite, reference, tmp_path, mode):
    with OpenAIServer(ModelEngine(granite), model="tiny", faults=one_prompt_faults) as server:
        result = run(*TASKS, *served(server, tmp_path / "out", tmp_path / "cache", "--set", f"mode={mode}"))
        assert result.exit_code == 0, result.output
        bodies = [r.body for r in server.requests]
    # the probe: the run's shape twice (the second identical 500 ends it), then one prompt
    assert [b["prompt"] for b in bodies[:3]] == [list(PROBE_PROMPTS), list(PROBE_PROMPTS), PROBE_PROMPT]
    assert not any(is_list(b) for b in bodies[3:])  # no scoring request was a list
    for task in TASKS:
        expected = scores(reference, task)
        got = scores(tmp_path / "out", task)
        assert [len(row) for row in got] == [len(row) for row in expected]
        assert flat(got) == pytest.approx(flat(expected), abs=1e-4)
        assert len(got) > 1
    singles = [b["prompt"] for b in bodies[3:]]
    assert len(set(singles)) == len(singles)  # nothing asked twice
    choices = sum(len(json.loads(line)["scores"]) for task in TASKS
                  for path in (tmp_path / "out" / task / "predictions").glob("*.jsonl")
                  for line in path.read_text(encoding="utf-8").splitlines())
    assert len(singles) == choices  # one request per choice of every split scored
    # said once per task, and the probe's answer remembered: mode=auto records it
    assert result.output.count(LINE) == len(TASKS)
    info = json.loads((tmp_path / "out" / "afqmc" / "metrics.json").read_text())["model_info"]
    assert info["decoding"]["mode"] == "loglikelihood"
    if mode == "auto":
        assert "one prompt per request" in info["mode_note"]


def test_the_remembered_probe_sends_no_probe_and_no_list(granite, tmp_path):
    with OpenAIServer(ModelEngine(granite), model="tiny", faults=one_prompt_faults) as server:
        first = run("afqmc", *served(server, tmp_path / "a", tmp_path / "cache", "--limit", "2"))
        assert first.exit_code == 0, first.output
        sent = len(server.requests)
        again = run("afqmc", *served(server, tmp_path / "b", tmp_path / "cache"))
        assert again.exit_code == 0, again.output
        later = [r.body for r in server.requests[sent:]]
    assert later and not any(is_list(b) for b in later)
    assert PROBE_PROMPT not in [b["prompt"] for b in later]
    assert LINE in again.output


def test_a_list_refused_after_a_remembered_probe_switches_the_run(granite, reference, tmp_path):
    """A probe remembered while the server took lists (or by an older version): the refused list is caught."""
    takes_lists = {"yes": True}

    def faults(index: int, path: str, body: Any) -> str | None:
        return None if takes_lists["yes"] else one_prompt_faults(index, path, body)

    with OpenAIServer(ModelEngine(granite), model="tiny", faults=faults) as server:
        first = run("afqmc", *served(server, tmp_path / "a", tmp_path / "cache", "--limit", "1",
                                     "--set", "mode=loglikelihood"))
        assert first.exit_code == 0, first.output
        takes_lists["yes"] = False  # the same address now answered by a server that takes one prompt
        sent = len(server.requests)
        result = run("afqmc", *served(server, tmp_path / "b", tmp_path / "cache", "--set", "mode=loglikelihood",
                                      "--set", "concurrency=1"))
        assert result.exit_code == 0, result.output
        later = [r.body for r in server.requests[sent:]]
    assert result.output.count(LINE) == 1 and "a list of prompts is refused: 500" in result.output
    # one list refused twice, then every choice alone
    lists = [i for i, b in enumerate(later) if is_list(b)]
    assert lists == [0, 1]
    assert flat(scores(tmp_path / "b", "afqmc")) == pytest.approx(flat(scores(reference, "afqmc")), abs=1e-4)


def test_a_server_refusing_one_prompt_too_falls_back_to_generation(granite, tmp_path):
    """The list and the single prompt both refused (400): nothing learnt, mode=auto generates for this run."""
    with OpenAIServer(ModelEngine(granite), model="tiny",
                      faults=lambda i, path, body: "400" if echoing(body) else None) as server:
        result = run("afqmc", *served(server, tmp_path / "out", tmp_path / "cache", "--set", "max_new_tokens=2"))
        assert result.exit_code == 0, result.output
        probes = [r.body["prompt"] for r in server.requests if echoing(r.body)]
    assert probes == [list(PROBE_PROMPTS), PROBE_PROMPT]
    info = json.loads((tmp_path / "out" / "afqmc" / "metrics.json").read_text())["model_info"]
    assert info["decoding"]["mode"] == "generate" and "refuses echo + logprobs (400)" in info["mode_note"]
