"""``clue-core dataclue audit`` end to end on a synthetic task with PLANTED label errors.

Three tnews labels, each written with its own characters (clearly separable); the labels of a few
train and dev lines are swapped. The tests' character naive Bayes (deterministic) trains in each
fold; the audit must find the planted errors (precision and recall in the assertion message),
write a corrected copy without touching the input, refuse its input folder, need --force for a
foreign OUT, and resume at the next fold after an interruption.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from clue_tasks_dataclue.confident import precision_recall

ALPHABETS = {"0": "春夏秋冬花草风月", "1": "山川河海湖泊江溪", "2": "金木水火土石铁铜"}
PLANTED = {"train": [3, 17, 40, 58], "dev": [2, 11]}
SWAP = {"0": "1", "1": "2", "2": "0"}


def _write(folder: Path) -> dict[str, list[dict]]:
    rng = random.Random(7)
    folder.mkdir(parents=True)
    files = {}
    for split, per_class in (("train", 24), ("dev", 8)):
        records = []
        for n in range(per_class * 3):
            label = str(n % 3)
            text = "".join(rng.choice(ALPHABETS[label]) for _ in range(rng.randint(5, 9)))
            records.append({"label": label, "label_desc": "x", "sentence": text, "keywords": ""})
        for i in PLANTED[split]:
            records[i]["label"] = SWAP[records[i]["label"]]
        files[split] = records
    files["dev"].append(dict(files["train"][0]))  # an exact duplicate across train and dev
    for split, records in files.items():
        (folder / f"{split}.json").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                                              encoding="utf-8")
    return files


def _digest(folder: Path) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(folder.iterdir()))).hexdigest()


def test_the_audit_finds_planted_label_errors(run_cli, kernel, tmp_path: Path) -> None:
    data = tmp_path / "mine"
    files = _write(data)
    before = _digest(data)
    out = tmp_path / "audit"
    result = run_cli("dataclue", "audit", "dataclue-tnews", "--data-dir", data, "-o", out, "--folds", "4",
                     "--model", "dc-char", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert "fold 4/4" in result.output
    report = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    found = [(s["split"], s["line"] - 1) for s in report["suspects"]]
    planted = [(split, i) for split, lines in PLANTED.items() for i in lines]
    precision, recall = precision_recall(found, planted)
    message = f"precision {precision:.2f}, recall {recall:.2f}: found {found}, planted {planted}"
    assert recall >= 0.8 and precision >= 0.5, message
    print(message)
    assert _digest(data) == before  # the user's files are only read
    fixed = [json.loads(line) for line in (out / "data/train.json").read_text(encoding="utf-8").splitlines()]
    for i in PLANTED["train"]:
        if ("train", i) in found:
            original = SWAP[SWAP[files["train"][i]["label"]]]  # the swap undone: the class its characters say
            assert fixed[i]["label"] == original
    assert report["changes"]["relabelled"] == len(found)
    assert any(not g["conflicting_labels"] and {e["split"] for e in g["examples"]} == {"train", "dev"}
               for g in report["exact_duplicates"])
    given = Counter(r["label"] for r in files["train"])
    assert report["distribution"]["train"] == {label: given[label] for label in ("0", "1", "2")}
    markdown = (out / "audit.md").read_text(encoding="utf-8")
    assert "Likely label errors" in markdown and "Label distribution" in markdown


def test_drop_writes_the_copy_without_the_suspects(run_cli, kernel, tmp_path: Path) -> None:
    data = tmp_path / "mine"
    _write(data)
    out = tmp_path / "audit"
    result = run_cli("dataclue", "audit", "dataclue-tnews", "--data-dir", data, "-o", out, "--folds", "3",
                     "--model", "dc-char", "--action", "drop", kernel=kernel)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    kept = sum(len((out / f"data/{s}.json").read_text(encoding="utf-8").splitlines()) for s in ("train", "dev"))
    assert kept == sum(report["examples"].values()) - report["changes"]["dropped"] > 0
    assert report["changes"]["dropped"] == len(report["suspects"])


def test_refusals_are_one_error_line(run_cli, kernel, tmp_path: Path) -> None:
    data = tmp_path / "mine"
    _write(data)
    inside = run_cli("dataclue", "audit", "dataclue-tnews", "--data-dir", data, "-o", data / "out",
                     "--model", "dc-char", kernel=kernel)
    assert inside.exit_code == 2 and "never writes into or around its input folder" in inside.output
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("someone's", encoding="utf-8")
    exists = run_cli("dataclue", "audit", "dataclue-tnews", "--data-dir", data, "-o", taken, "--model", "dc-char",
                     kernel=kernel)
    assert exists.exit_code == 2 and "--force" in exists.output
    other = run_cli("dataclue", "audit", "afqmc", "--data-dir", data, "-o", tmp_path / "x", kernel=kernel)
    assert other.exit_code == 2 and "error:" in other.output
    forced = run_cli("dataclue", "audit", "dataclue-tnews", "--data-dir", data, "-o", taken, "--model", "dc-char",
                     "--folds", "2", "--force", kernel=kernel)
    assert forced.exit_code == 0, forced.output


def test_a_killed_audit_resumes_at_the_next_fold(run_cli, kernel, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import clue_tasks_dataclue.audit as audit_module

    data = tmp_path / "mine"
    _write(data)
    out = tmp_path / "audit"
    real, calls = audit_module.api.run, []

    class Api:
        @staticmethod
        def run(*args, **kwargs):
            calls.append(kwargs["output_dir"])
            if len(calls) == 3:
                raise KeyboardInterrupt("killed")
            return real(*args, **kwargs)

    monkeypatch.setattr(audit_module, "api", Api)
    killed = run_cli("dataclue", "audit", "dataclue-tnews", "--data-dir", data, "-o", out, "--folds", "4",
                     "--model", "dc-char", kernel=kernel)
    assert killed.exit_code != 0 and len(calls) == 3
    assert not (out / "audit.json").exists()
    calls.clear()
    again = run_cli("dataclue", "audit", "dataclue-tnews", "--data-dir", data, "-o", out, "--folds", "4",
                    "--model", "dc-char", kernel=kernel)
    assert again.exit_code == 0, again.output
    assert [Path(c).parent.name for c in calls] == ["2", "3"]
    assert again.output.count("done earlier (kept)") == 2


def test_an_empty_train_file_audits_dev_alone(run_cli, kernel, tmp_path: Path) -> None:
    data = tmp_path / "mine"
    _write(data)
    (data / "train.json").write_text("", encoding="utf-8")
    out = tmp_path / "audit"
    out.mkdir()  # an empty folder is no stranger's: no --force needed
    result = run_cli("dataclue", "audit", "dataclue-tnews", "--data-dir", data, "-o", out, "--folds", "2",
                     "--model", "dc-char", kernel=kernel)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    assert report["examples"] == {"train": 0, "dev": 25}
    assert (out / "data/train.json").read_text(encoding="utf-8") == ""
