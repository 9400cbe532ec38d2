"""The one writer of a run directory's content: the manifest, the predictions, the leaderboard
files and the metrics, each written atomically into the task's staging folder.

The runner hands a task's plan to :class:`RunWriter` once; the writer knows the layout
(:mod:`clue_core.rundir`), the record's format (:mod:`clue_core.record`) and the secrets
(every document goes through the task's one ``scrub`` as it is written, so a secret
setting's value that a plugin put anywhere never reaches a file). The manifest is kept in
memory: the final status is the same :class:`~clue_core.record.Manifest` with ``complete``
fields added, written again — never read back from disk. Each document is checked with the
reader's own checks (:mod:`clue_core.record_check`) before it is written, so the writer cannot
write a record its reader refuses.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clue_core import __version__
from clue_core.atomic import write_json, write_jsonl
from clue_core.errors import ClueError
from clue_core.examples import Example, MetricResult, Prediction, gold_of
from clue_core.record import MANIFEST, METRICS, RUN_SCHEMA, Manifest, Metrics, prediction_file
from clue_core.rundir import SUBMISSION_DIR
from clue_core.settings import redact_command
from clue_core.specs import resolve as resolve_ref

if TYPE_CHECKING:
    from clue_core.kernel import Kernel
    from clue_core.planning import RunRequest, TaskPlan
    from clue_core.specs import ModelSpec


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def counts(plan: TaskPlan) -> dict[str, int]:
    """Examples per split (``test <version>`` for each test version read), as both files record them."""
    return {"train": len(plan.splits.get("train", ())), "dev": len(plan.splits.get("dev", ())),
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
    but still builds the in-memory metrics every rank returns."""

    def __init__(self, kernel: Kernel, request: RunRequest, model: ModelSpec, plan: TaskPlan, world: int,
                 *, main: bool = True) -> None:
        self.kernel, self.request, self.model, self.plan, self.world, self.main = (
            kernel, request, model, plan, world, main)
        self.folder = plan.paths.staging
        self.manifest: Manifest | None = None
        self.submission_files: list[str] = []

    # -- the one place secrets are scrubbed -------------------------------------------------

    def _json(self, path: Path, document: Any) -> None:
        try:
            write_json(path, self.plan.settings.scrub(document))
        except UnicodeEncodeError as exc:
            raise not_text(path, exc) from None

    def _jsonl(self, path: Path, records: list[dict[str, Any]]) -> None:
        try:
            write_jsonl(path, self.plan.settings.scrub(records))
        except UnicodeEncodeError as exc:
            raise not_text(path, exc, records) from None

    # -- the files -----------------------------------------------------------------------------

    def manifest_data(self) -> dict[str, Any]:
        """The manifest of a run that has started: everything that decides what it computes."""
        request, plan, task = self.request, self.plan, self.plan.task
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
            "command": redact_command(request.command, plan.settings.secret_names()),
            "seed": request.seed,
            "world_size": self.world,
            "settings": plan.settings.shown(),
            "setting_sources": plan.settings.sources,
            "schedule": plan.settings.flagged("schedule"),
            "no_train": request.no_train,
            "partial": {"limit": request.limit} if request.limit is not None else None,
            "data": {
                "source": "sample" if request.sample else "dir",
                "data_dir": str(plan.data_dir),
                "user_data_dir": str(request.data_dir) if request.data_dir else None,
                "files": plan.checksums,
            },
            "counts": counts(plan),
            "test_versions": {v.version: v.submission_file for v in task.test_versions if v.version in plan.tests},
            "notes": plan.notes,
            "started": _now(),
        }

    def start(self) -> None:
        """Write the manifest of the started run (status ``running``): what ``--resume`` checks against."""
        # checked as the reader will: a run is never written that --resume, submit or report then refuses
        self.manifest = Manifest.checked(self.manifest_data(), self.folder / MANIFEST)
        if self.main:
            self._json(self.folder / MANIFEST, self.manifest.data)

    def predictions(self, dev: Sequence[Example], dev_predictions: Sequence[Prediction], scored: MetricResult,
                    tests: Mapping[str, Sequence[Prediction]]) -> list[str]:
        """Write every split's prediction records and each test version's leaderboard file; their names."""
        files: list[str] = []
        if not self.main:
            return files
        plan = self.plan
        self._jsonl(prediction_file(self.folder, "dev"), prediction_records(dev, dev_predictions, scored))
        write = resolve_ref(self.kernel.writer(plan.task.writer).write)
        for version in plan.task.test_versions:
            if version.version not in plan.tests:
                continue
            examples = plan.tests[version.version].examples
            self._jsonl(prediction_file(self.folder, f"test-{version.version}"),
                        prediction_records(examples, tests[version.version]))
            target = self.folder / SUBMISSION_DIR / version.submission_file
            try:
                write(target, examples, tests[version.version])
            except UnicodeEncodeError as exc:
                raise not_text(target, exc) from None
            files.append(version.submission_file)
        self.submission_files = files
        return files

    def finish(self, dev_metrics: dict[str, float], train_seconds: float) -> Metrics:
        """Write metrics.json, then the manifest again with status ``complete``; the metrics as written."""
        request, plan, task = self.request, self.plan, self.plan.task
        info = model_info(plan.learner)
        metrics = Metrics.checked({
            "schema": RUN_SCHEMA,
            "task": task.name, "model": request.model, "model_category": self.model.category,
            "split": "dev", "primary_metric": task.primary_metric,
            "primary": dev_metrics.get(task.primary_metric), "dev": dev_metrics, "counts": counts(plan),
            "train_seconds": round(train_seconds, 3),
            "leaderboards": [lb.as_dict() for lb in task.leaderboards],
            "report_settings": plan.settings.flagged("report"),
            "partial": request.limit is not None,
            "sample": request.sample,
            "model_info": info,
        }, self.folder / METRICS, self.manifest)
        if self.main:
            if self.manifest is None:
                raise RuntimeError("RunWriter.finish before start")  # a bug in the runner, not the user's
            self._json(self.folder / METRICS, metrics.data)
            self.manifest = Manifest.checked({
                **self.manifest.data, "status": "complete", "finished": _now(),
                "submission_files": self.submission_files, "model_info": info}, self.folder / MANIFEST)
            self._json(self.folder / MANIFEST, self.manifest.data)
        return metrics
