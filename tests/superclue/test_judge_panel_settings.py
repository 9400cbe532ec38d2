"""A panel of judges (``judge=a,b,c``): each judge's settings, layered and checked when the run is planned.

``judge.<setting>`` reaches every judge that declares it, ``judge.<i>.<setting>`` the i-th (from 0),
and the indexed key wins; each judge gets the recommendations a single judge gets, under its own
namespace; a single judge resolves exactly as before panels existed.
"""

from __future__ import annotations

from typing import Any

import pytest

from clue_core.errors import ClueError
from clue_core.kernel import Kernel
from clue_core.planning import RunRequest, resolve_settings
from clue_core.settings import inner_namespaces, model_names
from clue_tasks_superclue import panel

PANEL = "llm-tiny,llm-tiny,llm:some/model"


def settings_of(judge: str, settings: dict[str, Any] | None = None, **overrides: Any) -> Any:
    kernel = Kernel()
    request = RunRequest(tasks=["superclue"], model="llm-tiny", settings=settings or {},
                         overrides={"judge": judge, **overrides}, config_file="c.toml")
    model, _ = kernel.model("llm-tiny")
    return resolve_settings(kernel, request, [kernel.task("superclue")], model)["superclue"]


def test_each_judge_gets_the_recommendations_a_single_judge_gets_under_its_own_namespace() -> None:
    found = settings_of(PANEL)
    assert [found.values[f"judge.{i}.max_new_tokens"] for i in range(3)] == [32, 32, 512]
    assert [found.sources[f"judge.{i}.max_new_tokens"] for i in range(3)] == [
        "task superclue for llm-tiny, as judge.0", "task superclue for llm-tiny, as judge.1",
        "task superclue (judge.max_new_tokens)"]
    assert found.values["judge.2.mode"] == "generate" and found.sources["judge.2.mode"] == "task superclue (judge.mode)"
    assert not any(name.startswith("judge.") and not name[6].isdigit() for name in found.values)
    assert found.values["max_new_tokens"] == 32  # the answering model is untouched


def test_a_shared_key_reaches_every_judge_and_an_indexed_key_wins_for_its_judge() -> None:
    found = settings_of(PANEL, **{"judge.max_new_tokens": 8, "judge.1.max_new_tokens": 16})
    assert [found.values[f"judge.{i}.max_new_tokens"] for i in range(3)] == [8, 16, 8]
    assert [found.sources[f"judge.{i}.max_new_tokens"] for i in range(3)] == [
        "--set (judge.max_new_tokens)", "--set", "--set (judge.max_new_tokens)"]
    # the indexed key wins whichever layer either came from: config [settings] under --set
    found = settings_of(PANEL, {"judge.2.temperature": 0.7}, **{"judge.temperature": 0.1})
    assert [found.values[f"judge.{i}.temperature"] for i in range(3)] == [0.1, 0.1, 0.7]
    assert found.sources["judge.2.temperature"] == "config file c.toml [settings]"


def test_each_judge_receives_its_own_values() -> None:
    kernel = Kernel()
    found = settings_of(PANEL, **{"judge.1.max_new_tokens": 16})
    spec, _ = kernel.model("llm-tiny")
    assert found.values_for(spec.settings, "judge.1")["max_new_tokens"] == 16
    assert found.values_for(spec.settings, "judge.0")["max_new_tokens"] == 32


@pytest.mark.parametrize(("overrides", "message"), [
    ({"judge.7.max_new_tokens": 8}, "setting 'judge.7.max_new_tokens' (--set): 'judge' names 3 models, whose keys "
                                    "go under judge.0. to judge.2. (counting from 0)"),
    ({"judge.1.max_new_token": 8}, "unknown setting 'judge.1.max_new_token' (--set); did you mean "
                                   "'judge.1.max_new_tokens' or"),
    ({"judge.max_new_token": 8}, "unknown setting 'judge.max_new_token' (--set); did you mean "
                                 "'judge.max_new_tokens' or"),
    ({"judge.0.tiny_num_layers": 1, "judge.2.tiny_num_layers": 1}, "unknown setting 'judge.2.tiny_num_layers'"),
])
def test_a_wrong_key_of_a_panel_is_one_line(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ClueError) as caught:
        settings_of(PANEL, **overrides)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_key_only_some_judges_declare_reaches_those() -> None:
    found = settings_of(PANEL, **{"judge.tiny_num_layers": 1})
    assert found.values["judge.0.tiny_num_layers"] == found.values["judge.1.tiny_num_layers"] == 1
    assert "judge.2.tiny_num_layers" not in found.values


def test_an_empty_name_in_a_panel_is_refused() -> None:
    with pytest.raises(ClueError, match=r"setting 'judge' \(--set\): an empty model name in 'llm-tiny,,llm-tiny'"):
        settings_of("llm-tiny,,llm-tiny")


def test_a_single_judge_keeps_its_namespace_and_takes_index_0() -> None:
    found = settings_of("llm-tiny", **{"judge.0.max_new_tokens": 9})
    assert (found.values["judge.max_new_tokens"], found.sources["judge.max_new_tokens"]) == (9, "--set")
    assert not any(name.startswith("judge.0") for name in found.values)
    with pytest.raises(ClueError, match=r"'judge' names 1 model, whose keys go under judge\.0\. "):
        settings_of("llm-tiny", **{"judge.1.max_new_tokens": 9})
    # a single judge, spaces and all, resolves as it always did
    spaced, plain = settings_of(" llm-tiny "), settings_of("llm-tiny")
    assert [row for row in spaced.rows() if row[0] != "judge"] == [row for row in plain.rows() if row[0] != "judge"]


def test_the_plugin_splits_names_as_the_kernel_does() -> None:
    for value in ("llm-tiny", "a, b ,c", "", "a,b"):
        assert panel.judge_names(value) == model_names(value)
        names = model_names(value)
        assert panel.namespaces(names) == inner_namespaces("judge", names)


def test_dry_run_shows_every_judges_values_and_sources(run_cli, tmp_path) -> None:
    result = run_cli("run", "superclue", "--model", "llm-tiny", "--set", "judge=llm-tiny,llm-tiny",
                     "--set", "judge.1.max_new_tokens=7", "--set", "judge.temperature=0.5", "--sample", "--dry-run",
                     "-o", tmp_path / "o")
    assert result.exit_code == 0, result.output
    lines = {line.strip() for line in result.output.splitlines()}
    assert {"judge.0.max_new_tokens = 32  (task superclue for llm-tiny, as judge.0)",
            "judge.1.max_new_tokens = 7  (--set)",
            "judge.0.temperature = 0.5  (--set (judge.temperature))",
            "judge.1.mode = 'generate'  (task superclue (judge.mode))"} <= lines
    assert not (tmp_path / "o").exists()


def test_every_judge_is_built_when_planned_and_a_broken_one_stops_the_run(run_cli, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = run_cli("run", "superclue", "--model", "llm-tiny", "--sample", "-o", tmp_path / "out",
                     "--set", "judge=llm-tiny,openai:judge-model", kernel=Kernel())
    assert result.exit_code == 2, result.output
    assert "base_url" in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
    result = run_cli("run", "superclue", "--model", "llm-tiny", "--sample", "-o", tmp_path / "out",
                     "--set", "judge=llm-tiny,hf-tiny", kernel=Kernel())
    assert result.exit_code == 2
    assert ("setting 'judge' names model hf-tiny (judge.1), which cannot answer open_question examples"
            in result.output)
    assert not (tmp_path / "out").exists()
