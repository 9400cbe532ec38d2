"""superclue-cpif: the reader (sample, official-file leniency), and runs through the CLI.

The end-to-end runs use a tiny in-process model that answers from a {prompt: answer} table, as a
model answering from recorded answers does; the reproduction of the official figure on the real
SuperCLUE-CPIFOpen files needs /work/cpif (and the answers: model) and skips without them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from clue_core.errors import InputError
from clue_core.kernel import Kernel
from clue_core.plugin import ModelSpec, Prediction, RunContext, TaskSpec, hookimpl
from clue_tasks_superclue import cpif_reader
from clue_tasks_superclue.hooks import OPEN_QUESTION

SAMPLE = Path(cpif_reader.__file__).with_name("cpif_sample")
OFFICIAL = Path("/work/cpif")
ANSWERS: dict[str, str] = {}


def write(folder: Path, records: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / cpif_reader.FILE_NAME).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                                                encoding="utf-8")
    return folder


def test_the_sample() -> None:
    split = cpif_reader.read(None, SAMPLE, "dev")  # type: ignore[arg-type]
    lines = (SAMPLE / cpif_reader.FILE_NAME).read_text(encoding="utf-8").splitlines()
    assert [e.id for e in split.examples] == list(range(6))
    assert [e.turns for e in split.examples] == [(json.loads(line)["prompt"],) for line in lines]
    codes = [cpif_reader.checker_of(e) for e in split.examples]
    assert any(c.count("{") != c.count("}") for c in codes if c)
    assert any("json.loads" in c and "import json" not in c and "import re" not in c for c in codes if c)


def test_leniency_as_the_evaluators(tmp_path: Path) -> None:
    folder = write(tmp_path / "nested" / "deeper", [
        {"prompt": "甲", "valid_code": "first", "extra": 1},
        {"prompt": "乙", "valid_code": ""},
        {"prompt": "甲", "valid_code": "last"},
        {"prompt": "丙", "valid_code": "c"},
    ])
    split = cpif_reader.read(None, tmp_path, "dev")  # type: ignore[arg-type]
    found = [(e.id, e.turns[0], cpif_reader.checker_of(e)) for e in split.examples]
    assert found == [(0, "甲", "last"), (3, "丙", "c")]
    assert len(split.notes) == 2 and split.where[0] == f"{folder / cpif_reader.FILE_NAME}:1"
    write(tmp_path / "bad", [{"valid_code": "x"}])
    with pytest.raises(InputError, match="prompt"):
        cpif_reader.read(None, tmp_path / "bad", "dev")  # type: ignore[arg-type]


@pytest.mark.skipif(not (OFFICIAL / cpif_reader.FILE_NAME).is_file(), reason="no copy of SuperCLUE-CPIFOpen here")
def test_every_official_record_reads() -> None:
    assert len(cpif_reader.read(None, OFFICIAL, "dev").examples) == 431  # type: ignore[arg-type]


class TableAnswerer:
    def fit(self, train: Sequence[Any], dev: Sequence[Any], context: RunContext) -> None:
        pass

    def predict(self, examples: Sequence[Any]) -> list[Prediction]:
        return [Prediction(e.id, ANSWERS.get(e.turns[0], ""), None, None) for e in examples]

    def save(self, directory: Path) -> None:
        pass


def create(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> TableAnswerer:
    return TableAnswerer()


class TablePlugin:
    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec("table-answers", f"{__name__}:create", (OPEN_QUESTION,), "answers by prompt", trains=False)]


def test_run_on_the_sample(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = [e.turns[0] for e in cpif_reader.read(None, SAMPLE, "dev").examples]  # type: ignore[arg-type]
    monkeypatch.setattr(__import__(__name__, fromlist=["ANSWERS"]), "ANSWERS", {
        prompts[0]: "<think>长江……</think>【答案开始】长江是中国最长的河流。【答案结束】",
        prompts[1]: '【答案开始】{"苹果": "红色", "香蕉": "黄色", "葡萄": "紫色"}【答案结束】',
        prompts[2]: "【答案开始】秋风起\n落叶黄\n书声朗\n桂花香【答案结束】",
        prompts[5]: "【答案开始】chun mian bu jue xiao【答案结束】",
    })
    kernel = Kernel()
    kernel.register(TablePlugin(), "table-answers")
    result = run_cli("run", "superclue-cpif", "--model", "table-answers", "--sample", "-o", tmp_path / "run",
                     "--set", "sandbox=process", kernel=kernel)
    assert result.exit_code == 0, result.output
    dev = json.loads((tmp_path / "run" / "superclue-cpif" / "metrics.json").read_text(encoding="utf-8"))["dev"]
    assert (dev["accuracy"], dev["prompts"], dev["passed"], dev["checker_errors"]) == (pytest.approx(400 / 6), 6, 4, 0)
    lines = (tmp_path / "run" / "superclue-cpif" / "predictions" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    scoring = [json.loads(line)["scoring"] for line in lines]
    assert [s["passed"] for s in scoring] == [True, True, True, False, False, True]
    assert all(set(s) == {"passed", "reason", "checker_error"} for s in scoring)


@pytest.mark.skipif(not (OFFICIAL / "superclue-all-jqzl-deepseek-r1-0528.json").is_file(),
                    reason="no copy of SuperCLUE-CPIFOpen's recorded answers here (CI has none)")
def test_the_official_figure(run_cli, tmp_path: Path) -> None:
    kernel = Kernel()
    if "answers" not in kernel.models:
        pytest.skip("no answers: model installed yet (clue-models-llm)")
    answers = OFFICIAL / "superclue-all-jqzl-deepseek-r1-0528.json"
    result = run_cli("run", "superclue-cpif", "--model", f"answers:{answers}",
                     "--set", "answer_field=deepseek-r1-0528", "--data-dir", OFFICIAL, "-o", tmp_path / "run")
    assert result.exit_code == 0, result.output
    dev = json.loads((tmp_path / "run" / "superclue-cpif" / "metrics.json").read_text(encoding="utf-8"))["dev"]
    assert dev["accuracy"] == 100 * 188 / 431
