"""A judge's refusal of its own settings names the key the user must write: a panel's ``openai:`` judge
without a base URL suggested ``--set base_url=…`` (the answering model's key) and did not say it was
``judge.1``; it now says ``judge.1 (openai:…): … --set judge.1.base_url=…``."""

from __future__ import annotations

import pytest

from clue_core.errors import ClueError, Interrupted
from clue_core.inner_models import in_namespace
from clue_core.kernel import Kernel
from clue_core.specs import Setting


@pytest.mark.parametrize(("judge", "key"), [("llm-tiny,openai:judge-model", "judge.1"), ("openai:judge-model", "judge"),
                                            ("openai:judge-model,llm-tiny", "judge.0")])
def test_a_judge_without_a_base_url_is_refused_naming_its_key(run_cli, tmp_path, monkeypatch, judge: str,
                                                               key: str) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = run_cli("run", "superclue", "--model", "llm-tiny", "--sample", "-o", tmp_path / "out",
                     "--set", f"judge={judge}", kernel=Kernel())
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (f"error: {key} (openai:judge-model): model openai:<name> needs a server: "
                                     f"--set {key}.base_url=http://HOST:PORT/v1 (or set OPENAI_BASE_URL)")
    assert not (tmp_path / "out").exists()


def test_a_judge_with_a_bad_base_url_names_its_key(run_cli, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = run_cli("run", "superclue", "--model", "llm-tiny", "--sample", "-o", tmp_path / "out",
                     "--set", "judge=llm-tiny,openai:judge-model", "--set", "judge.1.base_url=ftp://host/v1",
                     kernel=Kernel())
    assert result.exit_code == 2
    assert "error: judge.1 (openai:judge-model): setting 'judge.1.base_url' must start with http://" in result.output


def test_only_the_models_own_setting_names_are_rewritten() -> None:
    declared = [Setting("base_url", str, "", "the server"), Setting("mode", str, "auto", "how")]
    refusal = ClueError("setting 'base_url' is bad: --set base_url=x, --set mode=generate, --set other=1, "
                        "setting 'modest' and /data/base_url=3")
    refusal.exit_code = 3
    rewritten = in_namespace(refusal, "judge.2", "openai:m", declared)
    assert str(rewritten) == ("judge.2 (openai:m): setting 'judge.2.base_url' is bad: --set judge.2.base_url=x, "
                              "--set judge.2.mode=generate, --set other=1, setting 'modest' and /data/base_url=3")
    assert rewritten.exit_code == 3
    interrupted = Interrupted("interrupted")
    assert in_namespace(interrupted, "judge", "m", declared) is interrupted
