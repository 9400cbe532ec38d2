"""KgCLUE with an encoder (``hf-tiny``) through the CLI, in-process: the candidate ranker end to end.

With the sample's knowledge base every answer is one of its question's candidate triples (or three
empty parts for a question with none), the run writes metrics, dev and test_public predictions and
``kgclue_predict.json``, and its saved model predicts the same again. On a knowledge base with
distractor triples (each train question's entity gets three more relations) the trained ranker picks
the gold triple of the train questions far more often than a random candidate would. Without a
knowledge base the run stops at planning: one line, exit 2, nothing written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from clue_tasks_kgclue import hooks as kgclue_plugin
from clue_tasks_kgclue.knowledge import candidates_for

pytestmark = pytest.mark.slow

SAMPLE = Path(kgclue_plugin.__file__).parent / "samples" / "kgclue"
EMPTY = " |||  ||| "
SMALL = ("--set", "progress=false", "--set", "tiny_hidden_size=32", "--set", "tiny_num_layers=1",
         "--set", "tiny_intermediate_size=64", "--set", "max_length=48")


@pytest.fixture
def hf_kernel(isolated_kernel: Kernel) -> Kernel:
    pytest.importorskip("torch")
    from clue_models_hf import hooks as hf_plugin

    isolated_kernel.register(kgclue_plugin, "clue-tasks-kgclue", distribution="clue-tasks-kgclue")
    isolated_kernel.register(hf_plugin, "clue-models-hf", distribution="clue-models-hf")
    assert all(p.status == "ok" for p in isolated_kernel.plugins), [p.error for p in isolated_kernel.plugins]
    return isolated_kernel


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _candidates(folder: Path, split: str, kb: Path) -> list[set[str]]:
    rows = _lines(folder / f"{split}.json")
    return [{" ||| ".join(c) for c in found} for found in candidates_for(kb, [r["question"] for r in rows])]


def test_hf_tiny_ranks_the_samples_candidates_end_to_end(run_cli, hf_kernel: Kernel, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    result = run_cli("run", "kgclue", "--model", "hf-tiny", "--sample", "--set", "kb=Knowledge.txt", "-o", out,
                     *SMALL, kernel=hf_kernel)
    assert result.exit_code == 0, result.output
    # train 5 (冯慧) finds the entity 是什么 in its question: its gold triple is no candidate, so it is not trained on
    assert "1 of 16 training questions have their gold triple among no candidates" in result.output
    run = out / "kgclue"
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    for split in ("dev", "test_public"):
        assert {"emf1", "em_o", "f1_o", "em_all", "malformed"} <= set(metrics[split])
        assert metrics[split]["malformed"] == 0
        records = _lines(run / "predictions" / f"{split}.jsonl")
        allowed = _candidates(SAMPLE, split, SAMPLE / "Knowledge.txt")
        assert len(records) == 16
        for record, choices in zip(records, allowed):
            assert record["prediction"] in (choices or {EMPTY}), record
    submission = _lines(run / "submission" / "kgclue_predict.json")
    test = _lines(SAMPLE / "test.json")
    assert [s["id"] for s in submission] == [t["id"] for t in test]
    allowed = _candidates(SAMPLE, "test", SAMPLE / "Knowledge.txt")
    assert [s["answer"] for s, c in zip(submission, allowed) if not c] == [EMPTY] * 6  # 6 name no KB entity
    assert all(s["answer"] in c for s, c in zip(submission, allowed) if c)
    saved = json.loads((run / "model" / "clue_model.json").read_text(encoding="utf-8"))
    assert (saved["kind"], saved["kbqa_head"]) == ("kbqa_triple", "listwise")

    # the saved model predicts the same answers again
    again = run_cli("run", "kgclue", "--model", run / "model", "--no-train", "--sample", "--set", "kb=Knowledge.txt",
                    "-o", tmp_path / "again", "--set", "progress=false", kernel=hf_kernel)
    assert again.exit_code == 0, again.output
    assert ([r["prediction"] for r in _lines(tmp_path / "again" / "kgclue" / "predictions" / "dev.jsonl")]
            == [r["prediction"] for r in _lines(run / "predictions" / "dev.jsonl")])
    # and without the knowledge base it is refused when planned (dev alone under --no-train), nothing written
    bare = run_cli("run", "kgclue", "--model", run / "model", "--no-train", "--sample", "-o", tmp_path / "bare",
                   kernel=hf_kernel)
    assert bare.exit_code == 2 and "give one with --set kb=Knowledge.txt" in bare.output
    assert not (tmp_path / "bare").exists()


def _distractor_data(folder: Path) -> Path:
    """The sample with dev = train and a KB where each train entity has 3 more (wrong) relations."""
    folder.mkdir()
    for name in ("train.json", "test_public.json", "test.json"):
        shutil.copy(SAMPLE / name, folder / name)
    shutil.copy(SAMPLE / "train.json", folder / "dev.json")
    gold = [row["answer"].split(" ||| ") for row in _lines(SAMPLE / "train.json")]
    extra = [f"{s}\t{gold[(i + 5 * k) % len(gold)][1]}\t假{k}{i}" for i, (s, p, _) in enumerate(gold)
             for k in (1, 2, 3) if gold[(i + 5 * k) % len(gold)][1] != p]
    (folder / "kb.txt").write_text("\n".join(extra) + "\n" + (SAMPLE / "Knowledge.txt").read_text(encoding="utf-8"),
                                   encoding="utf-8")
    return folder


def test_training_ranks_the_gold_triple_above_distractors(run_cli, hf_kernel: Kernel, tmp_path: Path) -> None:
    data = _distractor_data(tmp_path / "data")
    kb = data / "kb.txt"
    allowed = _candidates(data, "dev", kb)
    answers = [row["answer"] for row in _lines(data / "dev.json")]
    # a random candidate is right this often (counting the question whose gold is among no candidates as 0)
    chance = 100.0 * sum(1 / len(c) for c, a in zip(allowed, answers) if a in c) / len(answers)
    assert 20.0 < chance < 30.0 and all(len(c) >= 3 for c, a in zip(allowed, answers) if a in c)
    result = run_cli("run", "kgclue", "--model", "hf-tiny", "--data-dir", data, "--set", f"kb={kb}", "-o",
                     tmp_path / "runs", "--set", "epochs=30", "--set", "eval_every=10", *SMALL, kernel=hf_kernel)
    assert result.exit_code == 0, result.output
    run = tmp_path / "runs" / "kgclue"
    records = _lines(run / "predictions" / "dev.jsonl")
    assert all(r["prediction"] in c for r, c in zip(records, allowed))
    right = 100.0 * sum(r["prediction"] == r["gold"] for r in records) / len(records)
    assert right >= 2 * chance, (right, chance)
    assert json.loads((run / "metrics.json").read_text(encoding="utf-8"))["dev"]["em_all"] == pytest.approx(right)


def test_without_a_knowledge_base_the_run_stops_at_planning(run_cli, hf_kernel: Kernel, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    result = run_cli("run", "kgclue", "--model", "hf-tiny", "--sample", "-o", out, kernel=hf_kernel)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert lines == ["error: kgclue: an hf encoder answers by ranking the knowledge base's candidate triples, and "
                     "no question has any; give one with --set kb=Knowledge.txt (KgCLUE's knowledge base, "
                     "distributed apart from the data) whose entity names occur in the questions"]
    assert "Traceback" not in result.output and "training:" not in result.output
    assert not out.exists()


def test_a_knowledge_base_naming_no_question_entity_stops_at_planning(run_cli, hf_kernel: Kernel,
                                                                      tmp_path: Path) -> None:
    """A kb that is given but matches nothing is refused as no kb is, and the line does not only say to give one."""
    kb = tmp_path / "kb.txt"
    kb.write_text("某个不存在的实体名字甲乙\t关系\t值\n", encoding="utf-8")
    out = tmp_path / "runs"
    result = run_cli("run", "kgclue", "--model", "hf-tiny", "--sample", "--set", f"kb={kb}", "-o", out,
                     kernel=hf_kernel)
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].endswith("whose entity names occur in the questions"), result.output
    assert "Traceback" not in result.output and not out.exists()
