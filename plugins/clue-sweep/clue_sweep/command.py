"""``clue-core sweep SWEEP.toml -o DIR``: plan every trial, run what is not done, summarise.

Everything that can be refused is refused before anything is written: the file (one line naming
it and the key), every task × model × grid point (the kernel plans each, so an unknown setting is
one line, not a hundred failed trials), a ``DIR`` that holds something other than a sweep, a
finished trial made with other settings than the file now says, and a missing Ray. Then the
finished trials are taken as they are, the others go to the executor (an interrupted one resumes
from its staging folder), and ``summary.json`` is rewritten as each trial ends. A failed trial is
recorded with its one-line error while the others go on; the command then ends with one line
saying how many failed (exit 2). Ctrl-C stops the workers, keeps what finished and what was
interrupted (the same command resumes it) and exits 130, wherever in the sweep it comes.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import click

from clue_core.plugin import ClueError, Registry, api
from clue_sweep import interrupts
from clue_sweep import summary as summary_file
from clue_sweep.lock import LOCK, sweep_lock
from clue_sweep.spec import SweepSpec, load_sweep
from clue_sweep.trials import Trial, config_text, expand, is_complete, plan_trials, run_arguments
from clue_sweep.worker import LOG


def _kernel(ctx: click.Context) -> Registry:
    kernel = (ctx.find_root().obj or {}).get("kernel")
    if kernel is None:
        raise ClueError("the sweep command runs as 'clue-core sweep' (it needs clue-core's plugin kernel)")
    return kernel


def check_output_dir(root: Path) -> None:
    """``DIR`` is new, empty, or a sweep's own folder: never another tool's files to write among.

    A folder with no ``summary.json`` is taken only if all it holds are trial folders (each has
    its ``trial.log``), the lock and a sweep's ``submit.json``: a summary deleted by hand (say,
    after it was damaged) is rebuilt from the trials. An ordinary run folder is refused, since
    the sweep's ``submit.json`` would change what ``clue-core submit`` packs from it.
    """
    if root.exists() and not root.is_dir():
        raise ClueError(f"{root} is a file, not a folder for the sweep")
    summary = root / summary_file.SUMMARY
    if summary.exists():
        try:
            data = json.loads(summary.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise ClueError(f"{summary} is damaged (not readable JSON); if {root} is a sweep's folder, delete "
                            "summary.json and run the sweep again: it is rebuilt from the trial folders") from None
        if not isinstance(data, dict) or data.get("schema") != summary_file.SCHEMA:
            raise ClueError(f"{summary} is not a sweep's summary; choose another -o folder")
    elif root.is_dir():
        for entry in sorted(root.iterdir()):
            if entry.name == LOCK or (entry / LOG).is_file() or (
                    entry.name == summary_file.SELECTION and summary_file.written_here(entry)):
                continue
            raise ClueError(f"{root} holds {entry.name!r}, which no sweep wrote; choose another -o folder "
                            "(a new or empty one)")


def reuse_finished(spec: SweepSpec, trials: list[Trial], root: Path, kernel: Registry) -> dict[str, dict[str, Any]]:
    """The results of the trials already complete, read back through the kernel's ``--resume``.

    It checks that each was made with the model, seed, data and schedule this file gives it; a
    folder of another sweep under the same names stops the sweep before anything runs.
    """
    found = {}
    for trial in trials:
        if not is_complete(trial, root):
            continue
        try:
            record = api.run(**run_arguments(spec, trial, root), kernel=kernel, echo=None)[0]
        except ClueError as exc:
            raise ClueError(f"{trial.id} was finished by an earlier sweep with other settings ({exc}); "
                            "choose another -o folder for this sweep") from None
        found[trial.id] = {"id": trial.id, "status": "complete", "primary": record.metrics.primary,
                           "primary_metric": record.metrics.primary_metric, "error": None, "seconds": None}
    return found


class Progress:
    """One line per trial that ends: how many are done, the rate and the time left.

    A failed trial is done (it ended; a rerun tries it again); an interrupted one is not: it is
    kept unfinished for the rerun to resume, and its line says the sweep is stopping rather than
    a rate and a time left that no longer mean anything.
    """

    def __init__(self, total: int, done: int, echo: Any) -> None:
        self.total, self.done, self.failed, self.echo = total, done, 0, echo
        self.ran, self.started = 0, time.monotonic()

    def __call__(self, result: dict[str, Any]) -> None:
        interrupted = result["status"] == "interrupted"
        if not interrupted:
            self.done += 1
            self.ran += 1
            self.failed += result["status"] == "failed"
        score = f" {result['primary_metric']} {result['primary']:.2f}" if result.get("primary") is not None else ""
        error = result.get("error") if result["status"] != "complete" else None
        what = f"{result['id']} {result['status']}{score}" + (f": {error}" if error else "")
        if interrupted and error and error.startswith("interrupted"):
            what = f"{result['id']} {error}"  # the kernel's own "interrupted: … kept unfinished in …"
        if interrupted:
            pace = "interrupted: stopping, no new trial starts"
        else:
            elapsed = max(time.monotonic() - self.started, 1e-9)
            left = (self.total - self.done) * elapsed / self.ran
            pace = f"{60 * self.ran / elapsed:.1f} trials/min, about {_duration(left)} left"
        self.echo(f"[sweep] {self.done}/{self.total} done{f', {self.failed} failed' if self.failed else ''} · "
                  f"{what} · {pace}")


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 3600} h {seconds % 3600 // 60} min" if seconds >= 3600 else \
        f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"


def best_against_runner_up(kernel: Registry, data: dict[str, Any], root: Path) -> dict[str, Any]:
    """Per task, the paired bootstrap of the best configuration's seeds against the runner-up's."""
    from clue_sweep.bootstrap import compare

    found = {}
    for task, best in data["best"].items():
        runner = best.get("runner_up")
        if not runner:
            continue
        try:
            result = compare(kernel, [root / r for r in best["runs"]], [root / r for r in runner["runs"]])
        except ClueError as exc:
            found[task] = {"error": str(exc)}
            continue
        found[task] = {k: result[k] for k in ("metric", "difference", "low", "high", "p_value", "examples",
                                              "samples", "seed", "confidence", "method")}
    return found


@click.command()
@click.argument("sweep_file", metavar="SWEEP.toml", type=click.Path(path_type=Path))
@click.option("-o", "--output-dir", required=True, type=click.Path(path_type=Path),
              help="The sweep's folder: one run folder per trial, summary.json, submit.json.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: worker processes on this machine; ray: one Ray task per trial.")
@click.option("--workers", type=click.IntRange(min=0), default=None,
              help="Trials at once (default: CPUs ÷ [resources] cpus); 0 runs them in this process, one by one.")
@click.option("--address", default=None, help="The Ray cluster to use (ray executor; default: start a local one).")
@click.option("--dry-run", is_flag=True, help="List the trials and what a rerun would do with each; run nothing.")
@click.pass_context
def sweep(ctx: click.Context, sweep_file: Path, output_dir: Path, executor: str, workers: int | None,
          address: str | None, dry_run: bool) -> None:
    """Run every combination of a TOML file's grid × seeds as resumable runs, and summarise them."""
    kernel = _kernel(ctx)
    spec = load_sweep(sweep_file)
    if address and executor != "ray":
        raise ClueError("--address names a Ray cluster: it goes with --executor ray")
    if executor == "ray" and workers == 0:
        raise ClueError("--workers 0 runs trials in this process: it goes with --executor local")
    workers = workers if workers is not None else max(1, (os.cpu_count() or 1) // spec.resources.cpus)
    root = output_dir.expanduser().resolve()
    check_output_dir(root)
    trials = expand(spec)
    plan_trials(spec, trials, root, kernel)
    if dry_run:
        for trial in trials:
            state = "complete" if is_complete(trial, root) else "resume" if (
                trial.output_dir(root) / f".{trial.task}.staging").exists() else "new"
            click.echo(f"{trial.id}  {state}  {trial.task} {trial.model} {config_text(trial.config)} seed {trial.seed}")
        return
    if executor == "ray":
        from clue_sweep.ray_executor import check_address, import_ray

        import_ray()  # its absence is one line before anything is written, as an address where nothing answers
        if address:
            check_address(address)
    root.mkdir(parents=True, exist_ok=True)
    with sweep_lock(root):  # a second sweep into this folder is refused here, in one line
        _run(ctx, kernel, spec, trials, root, executor, workers, address)


def _run(ctx: click.Context, kernel: Registry, spec: SweepSpec, trials: list[Trial], root: Path, executor: str,
         workers: int, address: str | None) -> None:
    """The sweep proper, under its folder's lock: reuse what finished, run the rest, summarise.

    Ctrl-C at any moment of it (reading the finished trials, starting workers, waiting, writing
    the summary, the bootstraps) ends in the same place: the workers are stopped by the executor,
    the summary says what was kept, and the command exits 130.
    """
    say = lambda line: click.echo(line, err=True)  # noqa: E731
    summary = summary_file.Summary(spec, trials, root, executor)
    try:
        with interrupts.sigint_stops():
            _sweep(kernel, spec, trials, root, executor, workers, address, summary, say)
    except KeyboardInterrupt:
        with interrupts.deferred(reraise=False):  # a second Ctrl-C must not cut this summary in two
            data = summary.write("interrupted", stopped=True)
            counts = data["counts"]
            click.echo(summary_file.table(data))
            failed = f", {counts['failed']} failed (a rerun runs them again)" if counts["failed"] else ""
            say(f"interrupted: {counts['complete']} of {counts['total']} trials complete, {counts['interrupted']} "
                f"kept unfinished, {counts['pending']} not started{failed}; the same command resumes the sweep")
        ctx.exit(130)


def _sweep(kernel: Registry, spec: SweepSpec, trials: list[Trial], root: Path, executor: str, workers: int,
           address: str | None, summary: summary_file.Summary, say: Any) -> None:
    finished = reuse_finished(spec, trials, root, kernel)
    for result in finished.values():
        summary.record(result, reused=True)
    todo = [t for t in trials if t.id not in finished]
    summary.write("running")
    say(f"[sweep] {len(trials)} trials: {len(finished)} already complete, {len(todo)} to run "
        f"({executor}{'' if executor == 'ray' else f', {workers} worker(s)' if workers else ', in this process'})")
    progress = Progress(len(trials), len(finished), say)

    def done(result: dict[str, Any]) -> None:
        summary.record(result)
        progress(result)
        summary.write("running")

    payloads = [{"id": t.id, "arguments": run_arguments(spec, t, root), "cpus": spec.resources.cpus} for t in todo]
    _execute(executor, payloads, workers, address, spec, summary, done, say)
    data = summary.write("running")
    summary.bootstraps = best_against_runner_up(kernel, data, root)
    failed = data["counts"]["failed"]
    data = summary.write("failed" if failed else "complete")
    click.echo(summary_file.table(data))
    if failed:
        raise ClueError(failure_line(data, root))


def failure_line(data: dict[str, Any], root: Path) -> str:
    """What failed, and the truth about a rerun: it runs the failed trials again (they are not complete).

    A failure is not an interruption: a bad setting value or a missing file fails the same way
    on every rerun, so the line names the first failure and says to fix its cause first.
    """
    failed = [t for t in data["trials"] if t["status"] == "failed"]
    first = failed[0]
    others = f"; {len(failed) - 1} more" if len(failed) > 1 else ""
    return (f"{len(failed)} of {len(data['trials'])} trials failed: {first['id']}: {first['error']}{others} (every "
            f"error is in {root / summary_file.SUMMARY}, tracebacks in each trial's trial.log); the same command "
            "runs the failed trials again and keeps the complete ones, so fix what failed first")


def _execute(executor: str, payloads: list[dict[str, Any]], workers: int, address: str | None, spec: SweepSpec,
             summary: summary_file.Summary, done: Any, say: Any) -> None:
    if executor == "ray":
        from clue_sweep.ray_executor import run_ray

        run_ray(payloads, address=address, workers=workers, resources=spec.resources, done=done, echo=say)
    elif workers == 0:
        from clue_sweep.local import run_inline

        run_inline(payloads, done, summary.start)
    else:
        from clue_sweep.local import run_local

        run_local(payloads, workers, done, summary.start)
