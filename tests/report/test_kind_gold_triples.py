"""``clue-core report`` compares a run's records with its re-read dev examples through the kind's own
``record_gold`` (``clue_core.plugin.recorded_gold``), whatever shape the kind's gold has.

``clue_report.scored`` kept its own copy of the span kind's rule (a tuple gold is ``(text, offset)``
pairs, recorded as their texts): a kind whose gold is a tuple of triples (CLUENER2020's
``[type, start, end]``, here a tiny third-party kind) crashed the report with ``ValueError: too many
values to unpack`` until the NER plugin changed its gold to dodge the rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import KindSpec, MetricSpec, ModelSpec, Prediction, SplitData, TaskSpec, hookimpl, iter_jsonl

KIND = "mentions"
TRAIN = [("张三来了", [["name", 0, 1]]), ("李四走了", [["name", 0, 1]])]
DEV = [("张三走了", [["name", 0, 1]]), ("王五来了", [["name", 0, 1]]), ("来了李四", [["name", 2, 3]])]


@dataclass(frozen=True, slots=True)
class Mentions:
    id: int
    text: str
    mentions: tuple[tuple[str, int, int], ...] | None = None


def gold(example: Mentions) -> tuple[tuple[str, int, int], ...] | None:
    return example.mentions  # a tuple of (type, start, end) triples, as CLUENER2020's gold was


def record_gold(gold: tuple[tuple[str, int, int], ...]) -> list[list[Any]]:
    return [list(mention) for mention in gold]


def check_prediction(task: TaskSpec, example: Mentions, value: object) -> str | None:
    if not isinstance(value, list) or not all(isinstance(m, list) and len(m) == 3 for m in value):
        return f"expected a list of [type, start, end], got {json.dumps(value)}"
    return None


def read(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    rows = [record for _, record in iter_jsonl(Path(data_dir) / f"{split}.jsonl")]
    return SplitData(tuple(Mentions(r["id"], r["text"], tuple(tuple(m) for m in r["mentions"])) for r in rows))


def exact(examples: list[Mentions], predictions: list[Prediction | None]) -> dict[str, float]:
    right = [p is not None and [tuple(m) for m in p.value] == list(e.mentions or ())
             for e, p in zip(examples, predictions)]
    return {"exact": 100.0 * sum(right) / len(right)}


class KnownNames:
    """Marks each two characters seen as a name in train, wherever they occur."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def fit(self, train: list[Mentions], dev: list[Mentions], context: Any) -> None:
        self.names = {e.text[start:end + 1] for e in train for _, start, end in e.mentions or ()}

    def predict(self, examples: list[Mentions]) -> list[Prediction]:
        return [Prediction(e.id, [["name", i, i + 1] for i in range(len(e.text) - 1) if e.text[i:i + 2] in self.names])
                for e in examples]

    def save(self, directory: Path) -> None:
        pass


def create(argument: str | None, task: TaskSpec, settings: dict[str, Any]) -> KnownNames:
    return KnownNames()


class _MentionsPlugin:
    @hookimpl
    def clue_kinds(self) -> list[KindSpec]:
        return [KindSpec(KIND, "a text's name mentions", example=f"{__name__}:Mentions",
                         prediction="a list of [type, start, end]", check_prediction=f"{__name__}:check_prediction",
                         gold=f"{__name__}:gold", record_gold=f"{__name__}:record_gold")]

    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        return [TaskSpec("toy-mentions", KIND, "find the names", f"{__name__}:read", labels=("name",),
                         metrics=("mentions_exact",), primary_metric="exact", data_files=("train.jsonl", "dev.jsonl"))]

    @hookimpl
    def clue_metrics(self) -> list[MetricSpec]:
        return [MetricSpec("mentions_exact", f"{__name__}:exact", "share of texts whose mentions are all right",
                           kinds=(KIND,), produces=("exact",))]

    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec("known-names", f"{__name__}:create", (KIND,), "the names seen in train")]


@pytest.fixture
def kernel(isolated_kernel: Kernel) -> Kernel:
    import clue_report.hooks

    isolated_kernel.register(_MentionsPlugin(), "clue-mentions")
    isolated_kernel.register(clue_report.hooks, "clue-report", distribution="clue-report")
    assert all(p.status == "ok" for p in isolated_kernel.plugins), [p.error for p in isolated_kernel.plugins]
    return isolated_kernel


@pytest.fixture
def runs(run_cli, kernel: Kernel, tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    for split, rows in (("train", TRAIN), ("dev", DEV)):
        lines = [json.dumps({"id": i, "text": text, "mentions": mentions}, ensure_ascii=False)
                 for i, (text, mentions) in enumerate(rows)]
        (data / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_cli("run", "toy-mentions", "--model", "known-names", "--data-dir", data, "-o", tmp_path / "runs",
                     kernel=kernel)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (tmp_path / "runs" / "toy-mentions" / "predictions" / "dev.jsonl")
               .read_text(encoding="utf-8").splitlines()]
    assert [r["gold"] for r in records] == [m for _, m in DEV]  # the kind's record_gold wrote them
    return tmp_path / "runs"


def _report_runs(run_cli, kernel: Kernel, runs: Path, output: Path) -> list[dict[str, Any]]:
    """The report's entry of each run (``report.json``; scoring per example happens only with ``-o``)."""
    result = run_cli("report", runs, "-o", output, kernel=kernel)
    assert result.exit_code == 0, result.output
    return json.loads((output / "report.json").read_text(encoding="utf-8"))["runs"]


def test_the_report_matches_records_and_examples_by_the_kinds_record_gold(run_cli, kernel: Kernel, runs: Path,
                                                                          tmp_path: Path) -> None:
    (entry,) = _report_runs(run_cli, kernel, runs, tmp_path / "report")
    # read again from the data and found to match: not rebuilt from the records, no mismatch note
    assert entry["scored_from"] == "data", entry["notes"]
    assert not any("no longer matches" in note or "cannot" in note for note in entry["notes"]), entry["notes"]
    # 张三 and 李四 are known names, 王五 is not: two of three texts exact, recomputed as the run scored it
    assert entry["dev"]["exact"] == pytest.approx(200 / 3)
    assert entry["recomputed"]["exact"] == pytest.approx(entry["dev"]["exact"])


def test_changed_gold_is_still_found_to_differ(run_cli, kernel: Kernel, runs: Path, tmp_path: Path) -> None:
    dev = tmp_path / "data" / "dev.jsonl"
    lines = dev.read_text(encoding="utf-8").splitlines()
    changed = json.loads(lines[0])
    changed["mentions"] = [["name", 1, 2]]
    dev.write_text("\n".join([json.dumps(changed, ensure_ascii=False), *lines[1:]]) + "\n", encoding="utf-8")
    (entry,) = _report_runs(run_cli, kernel, runs, tmp_path / "report")
    assert entry["scored_from"] is None
    assert any("no longer matches the run's predictions" in note and "cannot be rebuilt" in note
               for note in entry["notes"]), entry["notes"]


def test_a_kinds_record_gold_that_raises_is_a_note_not_a_traceback(run_cli, kernel: Kernel, runs: Path,
                                                                   tmp_path: Path, monkeypatch) -> None:
    import sys

    def broken(gold: object) -> object:
        raise RuntimeError("no triples today")

    monkeypatch.setattr(sys.modules[__name__], "record_gold", broken)  # after the run wrote its records
    (entry,) = _report_runs(run_cli, kernel, runs, tmp_path / "report")
    assert entry["scored_from"] is None
    assert any(note.startswith("its dev examples' gold cannot be compared with the records (kind 'mentions': "
                               "record_gold ") and "RuntimeError: no triples today" in note
               for note in entry["notes"]), entry["notes"]
