"""The one writer of a run directory's content: the manifest, the predictions, the leaderboard
files and the metrics, each written atomically into the task's staging folder.

The runner hands a task's plan to :class:`RunWriter` once and calls it twice: :meth:`~RunWriter.start`
before training, :meth:`~RunWriter.finish` with everything the run produced. The writer knows the
layout (:mod:`clue_core.rundir`), the record's format (:mod:`clue_core.record`) and the secrets.
Each of the two is one straight line — build the documents, scrub them of secrets (the task's
one ``scrub``, so a secret setting's value that a plugin put anywhere never reaches a file),
check them with the reader's own checks (:mod:`clue_core.record_check`: the writer cannot write
a record its reader refuses), write them in order through :mod:`clue_core.atomic` — so nothing
is written before everything is checked. The manifest is kept in memory: the final status is the
same manifest with ``complete`` fields added, written again — never read back from disk.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clue_core import __version__
from clue_core.atomic import write_json, write_jsonl
from clue_core.errors import ClueError
from clue_core.examples import Example, MetricResult, Prediction, gold_of
from clue_core.record import MANIFEST, METRICS, RUN_SCHEMA, Manifest, Metrics, prediction_file
from clue_core.record_check import check_manifest, check_metrics
from clue_core.rundir import SUBMISSION_DIR
from clue_core.settings import redact_command
from clue_core.specs import resolve as resolve_ref

if TYPE_CHECKING:
    from clue_core.kernel import Kernel
    from clue_core.plans import RunRequest, TaskPlan
    from clue_core.scoring import Scored
    from clue_core.specs import ModelSpec


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def counts(plan: TaskPlan) -> dict[str, int]:
    """Examples per split (``test <version>`` for each test version read), as both files record them."""
    return {"train": len(plan.splits.get("train", ())), "dev": len(plan.splits.get("dev", ())),
            **{s: len(plan.splits[s]) for s in plan.task.scored_splits if s in plan.splits},
            **{f"test {v}": len(s) for v, s in plan.tests.items()}}


def model_info(learner: Any) -> dict[str, Any]:
    """What a learner reports about its run (prompt hashes, few-shot ids, token usage), if it does."""
    describe = getattr(learner, "run_info", None)
    return dict(describe()) if callable(describe) else {}


def prediction_records(examples: Sequence[Example], predictions: Sequence[Prediction],
                       scored: MetricResult | None = None) -> list[dict[str, Any]]:
    """One JSON record per example; with ``scored``, what the metrics found per example (``scoring``)."""
    records = []
    for index, (example, prediction) in enumerate(zip(examples, predictions)):
        record: dict[str, Any] = {"id": example.id, "prediction": prediction.value}
        gold = gold_of(example)
        if gold is not None:
            record["gold"] = [text for text, _ in gold] if isinstance(gold, tuple) else gold
        if prediction.scores is not None:
            record["scores"] = [round(float(s), 6) for s in prediction.scores]
        if prediction.raw is not None:
            record["raw"] = prediction.raw
        if scored is not None and index < len(scored.details) and scored.details[index]:
            record["scoring"] = scored.details[index]
        records.append(record)
    return records


def not_text(path: Path, exc: UnicodeEncodeError, records: Sequence[dict[str, Any]] = ()) -> ClueError:
    """A lone surrogate (``"\\ud800"``, what a model decoding bytes badly returns) is no text UTF-8 can
    hold: one line naming the file and the record, where the encoder's own error was a traceback that
    left the staging folder behind."""
    where = ""
    for record in records:
        try:
            json.dumps(record, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            where = f" (the record of id {record.get('id')!r})"
            break
    bad = exc.object[exc.start:exc.end] if isinstance(exc.object, str) else ""
    return ClueError(f"{path}: cannot be written: the model's output holds {bad!r}{where}, a lone surrogate "
                     f"that is not text (a model decoding bytes badly returns one); nothing was written")


class RunWriter:
    """Writes one task's run into ``plan.paths.staging``; on a rank other than 0 it writes nothing
    but still builds and checks the in-memory record every rank returns."""

    def __init__(self, kernel: Kernel, request: RunRequest, model: ModelSpec, plan: TaskPlan, world: int,
                 *, main: bool = True) -> None:
        self.kernel, self.request, self.model, self.plan, self.world, self.main = (
            kernel, request, model, plan, world, main)
        self.folder = plan.paths.staging
        self.manifest: Manifest | None = None

    def manifest_data(self) -> dict[str, Any]:
        """The manifest of a run that has started: everything that decides what it computes."""
        request, plan, task = self.request, self.plan, self.plan.task
        tally, settings = counts(plan), plan.settings  # counted before the settings are asked: one pass each
        return {
            "schema": RUN_SCHEMA,
            "status": "running",
            "task": task.name,
            "kind": task.kind,
            "model": request.model,
            "model_spec": self.model.name,
            "clue_core": __version__,
            "plugins": {p.name: {"distribution": p.distribution, "version": p.version, "status": p.status}
                        for p in self.kernel.plugins},
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            # --set of a secret is hidden by name too: a value scrub cannot know a setting this task lacks
            "command": redact_command(request.command, settings.secret_names()),
            "seed": request.seed,
            "world_size": self.world,
            "settings": settings.shown(),
            "setting_sources": settings.sources,
            "schedule": settings.flagged("schedule"),
            "no_train": request.no_train,
            "partial": {"limit": request.limit} if request.limit is not None else None,
            "data": {
                "source": "sample" if request.sample else "dir",
                "data_dir": str(plan.data_dir),
                "user_data_dir": str(request.data_dir) if request.data_dir else None,
                "files": plan.checksums,
            },
            **({"repeat": {"setting": plan.task.repeat.setting, "value": plan.repeat_value}}
               if plan.repeat_value is not None and plan.task.repeat is not None else {}),
            "counts": tally,
            "splits": list(plan.predict),  # --splits: submit refuses a run without test, --resume keeps them
            "test_versions": {v.version: v.submission_file for v in task.test_versions if v.version in plan.tests},
            "notes": plan.notes,
            "started": _now(),
        }

    def start(self) -> None:
        """Write the manifest of the started run (status ``running``): what ``--resume`` checks against."""
        data = self.manifest_data()
        path = self.folder / MANIFEST
        document = self.plan.settings.scrub(data)
        # checked as the reader will: a run is never written that --resume, submit or report then refuses
        check_manifest(path, data)
        self.manifest = Manifest(data, path)
        if self.main:
            try:
                write_json(path, document)
            except UnicodeEncodeError as exc:
                raise not_text(path, exc) from None

    def finish(self, scored: Scored, train_seconds: float) -> tuple[Metrics, list[str]]:
        """Write every split's prediction records, each test version's leaderboard file, metrics.json,
        then the manifest again with status ``complete``; the metrics as written and the files' names.

        Everything is built, scrubbed and checked before the first file is written: a record its
        reader would refuse (a NaN score) stops the run before any of these files exists.
        """
        if self.manifest is None:
            raise RuntimeError("RunWriter.finish before start")  # a bug in the runner, not the user's
        request, plan, task, folder = self.request, self.plan, self.plan.task, self.folder
        submission_names = {v.version: v.submission_file for v in task.test_versions if v.version in scored.tests}
        info = model_info(plan.learner)
        lines = {"dev": prediction_records(scored.dev, scored.dev_predictions, scored.detailed),
                 **{split: prediction_records(*scored.scored[split]) for split in scored.scored},
                 **{f"test-{version}": prediction_records(*scored.tests[version]) for version in submission_names}}
        files = list(submission_names.values()) if self.main else []
        metrics_data = {
            "schema": RUN_SCHEMA,
            "task": task.name, "model": request.model, "model_category": self.model.category,
            "split": "dev", "primary_metric": task.primary_metric,
            "primary": scored.detailed.totals.get(task.primary_metric), "dev": dict(scored.detailed.totals),
            **({"scored_splits": list(scored.scored)} if scored.scored else {}),
            **{split: dict(result.totals) for split, (_, _, result) in scored.scored.items()},
            "counts": dict(self.manifest.data["counts"]),  # as the started manifest recorded them
            "train_seconds": round(train_seconds, 3),
            "leaderboards": [lb.as_dict() for lb in task.leaderboards],
            "report_settings": plan.settings.flagged("report"),
            "partial": request.limit is not None,
            "sample": request.sample,
            "model_info": info,
        }
        manifest_data = {**self.manifest.data, "status": "complete", "finished": _now(),
                         "submission_files": files, "model_info": info}
        # one scrub per document written, each as it will be written
        documents = {"lines": {split: plan.settings.scrub(records) for split, records in lines.items()},
                     "metrics": plan.settings.scrub(metrics_data), "manifest": plan.settings.scrub(manifest_data)}
        check_metrics(folder / METRICS, metrics_data, self.manifest.data)
        check_manifest(folder / MANIFEST, manifest_data)
        metrics = Metrics(metrics_data, folder / METRICS)
        self.manifest = Manifest(manifest_data, folder / MANIFEST)
        targets = {split: prediction_file(folder, split) for split in lines}
        if not self.main:
            return metrics, files
        write_submission = resolve_ref(self.kernel.writer(task.writer).write)
        # in the order they have always been written: each split's records (a test version's
        # leaderboard file right after its own), metrics.json, and last the complete manifest
        target, records = folder, []
        try:
            for split, records in documents["lines"].items():
                target = targets[split]
                write_jsonl(target, records)
                version = split.removeprefix("test-")
                if split.startswith("test-"):
                    target, records = folder / SUBMISSION_DIR / submission_names[version], []
                    write_submission(target, *scored.tests[version])
            records = []
            target = folder / METRICS
            write_json(target, documents["metrics"])
            target = folder / MANIFEST
            write_json(target, documents["manifest"])
        except UnicodeEncodeError as exc:
            raise not_text(target, exc, records) from None
        return metrics, files
