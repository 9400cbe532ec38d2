"""FewCLUE's multi-split board: ``--set split=all`` trains on each of the six pairs in one run and
writes ``<name>_predict_{0,1,2,3,4,all}.json``; the run prints the mean ± std over splits 0-4 and
``submit`` packs the twelve files of two tasks, each checked against the test file."""

from __future__ import annotations

import json
import re
import zipfile


def test_split_all_on_the_samples_trains_six_times_and_submits_every_file(run_cli, tmp_path):
    out = tmp_path / "runs"
    result = run_cli("run", "fewclue-eprstmt", "fewclue-chid", "--model", "baseline", "--sample", "-o", out,
                     "--set", "split=all")
    assert result.exit_code == 0, result.output
    for task, name in (("fewclue-eprstmt", "eprstmt"), ("fewclue-chid", "chidf")):
        primaries = []
        for value, suffix in (*((str(k), f"_{k}") for k in range(5)), ("few_all", "_all")):
            run = out / f"{task}.split-{value}"
            manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
            assert manifest["settings"]["split"] == value and manifest["repeat"] == {"setting": "split",
                                                                                     "value": value}
            assert manifest["submission_files"] == [f"{name}_predict{suffix}.json"]
            if value != "few_all":
                primaries.append(json.loads((run / "metrics.json").read_text(encoding="utf-8"))["primary"])
        mean = sum(primaries) / 5
        line = re.search(rf"{task} split=all: accuracy ([\d.]+) ± ([\d.]+) over split 0, 1, 2, 3, 4", result.output)
        assert line and float(line.group(1)) == round(mean, 2), result.output
    submitted = run_cli("submit", out, "-o", tmp_path / "board.zip")
    assert submitted.exit_code == 0, submitted.output
    with zipfile.ZipFile(tmp_path / "board.zip") as archive:
        names = sorted(archive.namelist())
    assert names == sorted(f"{n}_predict_{s}.json" for n in ("eprstmt", "chidf") for s in ("0", "1", "2", "3", "4",
                                                                                              "all"))
