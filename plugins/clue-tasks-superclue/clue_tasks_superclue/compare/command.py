"""What ``clue-core compare`` runs: read the runs, build the comparison, write it, and the screen table.

Everything is read and checked before anything is written, so a bad sheet or human
ranking leaves no half-done output; comparison.json (and an exported sheet) are written
atomically and never replace an existing file without ``force``.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from clue_core.plugin import METRICS, ClueError, atomic_open, disk_fault_message, format_table
from clue_tasks_superclue.compare import judges, sheet
from clue_tasks_superclue.compare.build import build_comparison
from clue_tasks_superclue.compare.comparison_file import COMPARISON, load_comparison
from clue_tasks_superclue.compare.human import human_ranking
from clue_tasks_superclue.compare.runs import Run, find_folder, load_run
from clue_tasks_superclue.compare.standings import RatingOptions

DEFAULT_SHEET_SIZE = 100


@dataclass
class CompareOptions:
    runs: list[Path]
    reference: Path
    output_dir: Path
    task: str | None = None
    tie_margin: float = 0.5
    human: Path | None = None
    export_sheet: Path | None = None
    sheet_size: int = DEFAULT_SHEET_SIZE
    seed: int = 0
    import_sheet: Path | None = None
    force: bool = False
    ratings: RatingOptions = field(default_factory=RatingOptions)


@dataclass
class CompareResult:
    document: dict[str, Any]
    text: str
    warnings: list[str] = field(default_factory=list)


def _runs(options: CompareOptions) -> tuple[list[Run], Run]:
    """The runs in order (the reference first unless given among them), each read once, all of one task."""
    paths = [options.reference, *options.runs]
    read: dict[Path, Run] = {}
    for path in paths:
        key = find_folder(path, options.task).resolve()
        if key not in read:
            read[key] = load_run(path, options.task)
            first, run = next(iter(read.values())), read[key]
            if run.task != first.task:
                raise ClueError(f"{run.path / METRICS}: field 'task': a run of {run.task!r}, not "
                                f"{first.task!r} like the reference run {first.path}; a comparison holds runs "
                                "of one task")
    runs = list(read.values())
    reference = read[find_folder(options.reference, options.task).resolve()]
    by_name: dict[str, Run] = {}
    for run in runs:
        if run.model in by_name:
            raise ClueError(f"{run.path} and {by_name[run.model].path} are both runs of {run.model}; "
                            "a comparison names each model once")
        by_name[run.model] = run
    if len(runs) < 2:
        raise ClueError("nothing to compare: give at least one run besides the reference")
    return runs, reference


def _check_outputs(options: CompareOptions) -> Path:
    target = options.output_dir / COMPARISON
    if options.output_dir.exists() and not options.output_dir.is_dir():
        raise ClueError(f"{options.output_dir} is a file, not a folder")
    if target.exists() and not options.force:
        raise ClueError(f"{target} exists; pass --force to replace it")
    if options.export_sheet is not None:
        if options.import_sheet is not None and options.export_sheet.resolve() == options.import_sheet.resolve():
            raise ClueError(f"{options.export_sheet}: the same file for --export-sheet and --import-sheet")
        if options.export_sheet.exists() and not options.force:
            raise ClueError(f"{options.export_sheet} exists (a filled-in sheet?); pass --force to replace it")
    return target


def _outcome_cell(outcome: dict[str, Any] | None) -> str:
    return "-" if not outcome else f"{outcome['win']:.1f}/{outcome['tie']:.1f}/{outcome['loss']:.1f}"


def screen_table(document: dict[str, Any]) -> str:
    """Models × total, categories, judged questions and win/tie/loss against the reference."""
    categories = [c["name"] for c in document["categories"]]
    pairwise = any("vs_reference_pairwise" in m for m in document["models"])
    header = ["model", "total", *categories, "judged", "win/tie/loss %",
              *(["pairwise w/t/l %"] if pairwise else [])]
    rows = [header]
    for model in document["models"]:
        reference = model["name"] == document["reference"]
        rows.append([model["name"], f"{model['total']:.2f}",
                     *(f"{model['categories'][c]:.2f}" if c in model["categories"] else "-" for c in categories),
                     f"{model['judged']}/{model['questions']}",
                     "(reference)" if reference else _outcome_cell((model.get("vs_reference") or {}).get("overall")),
                     *([_outcome_cell((model.get("vs_reference_pairwise") or {}).get("overall"))] if pairwise else [])])
    return format_table(rows)


def ratings_table(document: dict[str, Any]) -> str:
    """Models by Bradley-Terry rating: its 95% interval, Elo, and SuperCLUE points against the reference."""
    fitted, board = document["bradley_terry"], document["elo"]
    rows = [["model", "Bradley-Terry", "95% interval", "Elo", "points"]]
    for model in sorted(document["models"], key=lambda m: -fitted[m["name"]]["rating"]):
        bt = fitted[model["name"]]
        points = ("(reference)" if model["name"] == document["reference"]
                  else f"{model['points']:g}/{model['points_max']}")
        rows.append([model["name"], f"{bt['rating']:.1f}", f"{bt['ci_low']:.1f} to {bt['ci_high']:.1f}",
                     f"{board[model['name']]:.1f}", points])
    return format_table(rows)


def _lines(document: dict[str, Any]) -> list[str]:
    prior = " (with a virtual-tie prior: the MLE diverges)" if document["bradley_terry_prior"] else ""
    lines = [screen_table(document), f"win/tie/loss against {document['reference']}: points differing by more "
                                     f"than {document['tie_margin']:g} on the 0-10 scale",
             ratings_table(document),
             f"ratings: {document['ratings_games']} games (every pair of models, every question); Bradley-Terry "
             f"mean 1000, 400 points = odds of 10 to 1, intervals from {document['bradley_terry_bootstrap']} "
             f"bootstrap rounds{prior}"
             f"; Elo K {document['elo_k']:g} over {document['elo_orders']} orders; points: win 3, tie 1, loss 0"]
    if document["maturity"]:
        lines.append("maturity: " + ", ".join(f"{m['dimension']} {m['index']:.2f} ({m['band']})"
                                               for m in document["maturity"]))
    human = document.get("human_ranking")
    if human:
        lines.append(f"human ranking ({human['n']} models): Pearson {human['pearson']:.3f} "
                     f"(p {human['pearson_p']:.3g}), Spearman {human['spearman']:.3f} (p {human['spearman_p']:.3g})")
    lines += judges.screen_lines(document["models"])
    agreement = document.get("judge_agreement")
    if agreement:
        lines.append(f"judge agreement: {agreement['acceptable_share']:.1f}% of {agreement['graded']} judgments "
                     f"graded 及格 or better by people{judges.ci(agreement.get('acceptable_interval'))}"
                     + "".join(f"; {line}" for line in judges.people_figures(agreement)))
    return lines


def write_outputs(target: Path, document: dict[str, Any], sheet_path: Path | None,
                  chosen: list[tuple[Run, Any]] | None) -> None:
    """comparison.json and the sheet, each to a temporary, renamed only once both are on disk.

    A full disk while writing the second must not leave the first (or replace a sheet the
    user asked to replace with ``--force``) beside no comparison: each file is flushed and
    synced inside the block, so a disk fault shows before any rename.
    """
    try:
        with contextlib.ExitStack() as stack:
            handle = stack.enter_context(atomic_open(target))
            json.dump(document, handle, ensure_ascii=False, indent=2)
            handle.write("\n")
            opened = [(target, handle)]
            if chosen is not None and sheet_path is not None:
                opened.append((sheet_path, stack.enter_context(atomic_open(sheet_path, encoding=sheet.ENCODING))))
                sheet.write_sheet(opened[-1][1], chosen)
            for path, handle in opened:
                _sync(path, handle)
    except OSError as exc:
        raise ClueError(disk_fault_message("cannot write the comparison", exc)) from None


def _sync(path: Path, handle: IO[str]) -> None:
    """Flush and sync one file; its fault names it (unnamed, the innermost open file would take it)."""
    try:
        handle.flush()
        os.fsync(handle.fileno())
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None


def compare_command(options: CompareOptions) -> CompareResult:
    """Build and write the comparison; return it with the text to show and the warnings."""
    target = _check_outputs(options)
    runs, reference = _runs(options)
    warnings: list[str] = []
    document = build_comparison(runs, reference, options.tie_margin, warnings, options.ratings, options.seed)
    if options.human is not None:
        totals = {m["name"]: m["total"] for m in document["models"]}
        document["human_ranking"], found = human_ranking(options.human, totals)
        warnings += found
    if options.import_sheet is not None:
        document["judge_agreement"], found = sheet.read_sheet(options.import_sheet, runs, options.seed)
        warnings += found
    chosen = None
    if options.export_sheet is not None:
        dimensions = [d["name"] for d in document["dimensions"]]
        chosen = sheet.sample(runs, dimensions, options.sheet_size, options.seed)
        if not chosen:
            raise ClueError("no judge-method judgment with a parsed grade to put on the sheet")
    write_outputs(target, document, options.export_sheet, chosen)
    warnings += [w for w in load_comparison(target)["warnings"] if w not in warnings]
    lines = _lines(document)
    if chosen is not None:
        short = f" (all there are; --sheet-size was {options.sheet_size})" if len(chosen) < options.sheet_size else ""
        lines.append(f"wrote {options.export_sheet}: {len(chosen)} judgments to grade{short}, "
                     f"column {sheet.HUMAN} with {', '.join(sheet.GRADES)}")
    lines.append(f"wrote {target}")
    return CompareResult(document, "\n".join(lines), warnings)
