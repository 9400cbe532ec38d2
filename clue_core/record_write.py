"""The one writer of a run directory's content: the manifest, the predictions, the leaderboard
files and the metrics, each written atomically into the task's staging folder.

The runner enters it twice: :meth:`RunWriter.start` before training (a fresh staging folder and
the started manifest) and :meth:`~RunWriter.finish` with everything the run produced (every file,
then the folder put in place). Each builds the documents, scrubs them of secrets (the task's one
``scrub``, so a secret setting's value that a plugin put anywhere never reaches a file), checks
them with the reader's own declarations (:mod:`clue_core.record`: the writer cannot write a record
its reader refuses) and only then writes, through :mod:`clue_core.atomic`. The manifest is kept in
memory: the final one is the started one with the ``complete`` fields added, never read back.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clue_core import __version__
from clue_core.atomic import write_json, write_jsonl
from clue_core.errors import ClueError
from clue_core.examples import Example, MetricResult, Prediction
from clue_core.kinds import recorded_gold
from clue_core.record import MANIFEST, METRICS, RUN_SCHEMA, Manifest, Metrics, prediction_file
from clue_core.rundir import SUBMISSION_DIR, remove_path
from clue_core.settings import redact_command
from clue_core.specs import resolve as resolve_ref
from clue_core.uncertainty import group_function, uncertainty

if TYPE_CHECKING:
    from clue_core.kernel import Kernel
    from clue_core.plans import RunRequest, TaskPlan
    from clue_core.scoring import Scored
    from clue_core.specs import ModelSpec


#: Whether a clustered task's prediction records name their passage (``group``): the report and
#: ``clue-core bootstrap`` resample by it (tests set it off to see a record without one).
RECORD_GROUPS = True


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def prediction_records(examples: Sequence[Example], predictions: Sequence[Prediction],
                       scored: MetricResult | None = None, groups: Sequence[str | None] | None = None
                       ) -> list[dict[str, Any]]:
    """One JSON record per example; with ``scored``, what the metrics found per example (``scoring``); with
    ``groups`` (a clustered task's: :mod:`clue_core.uncertainty`), the group each shares with others."""
    records = []
    for index, (example, prediction) in enumerate(zip(examples, predictions)):
        record: dict[str, Any] = {"id": example.id, "prediction": prediction.value}
        gold = recorded_gold(example)  # as the example's kind records it (span answers: their texts)
        if gold is not None:
            record["gold"] = gold
        if prediction.scores is not None:
            record["scores"] = [round(float(s), 6) for s in prediction.scores]
        if prediction.raw is not None:
            record["raw"] = prediction.raw
        if scored is not None and index < len(scored.details) and scored.details[index]:
            record["scoring"] = scored.details[index]
        if groups is not None and groups[index] is not None:
            record["group"] = groups[index]
        records.append(record)
    return records


def _write(target: Path, write: Callable[[Path], object], records: Sequence[dict[str, Any]] = ()) -> None:
    """``write(target)``; a lone surrogate (``"\\ud800"``, what a model decoding bytes badly returns) is
    no text UTF-8 can hold: one line naming the file and the record, not the encoder's traceback."""
    try:
        write(target)
    except UnicodeEncodeError as exc:
        where = ""
        for record in records:
            try:
                json.dumps(record, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:
                where = f" (the record of id {record.get('id')!r})"
                break
        bad = exc.object[exc.start:exc.end] if isinstance(exc.object, str) else ""
        raise ClueError(f"{target}: cannot be written: the model's output holds {bad!r}{where}, a lone surrogate "
                        f"that is not text (a model decoding bytes badly returns one); nothing was written") from None


class RunWriter:
    """Writes one task's run into ``plan.paths.staging``; on a rank other than 0 it writes nothing
    but still builds and checks the in-memory record every rank returns."""

    def __init__(self, kernel: Kernel, request: RunRequest, model: ModelSpec, plan: TaskPlan, world: int,
                 main: bool) -> None:
        self.kernel, self.request, self.model, self.plan, self.world, self.main = (
            kernel, request, model, plan, world, main)
        self.folder = plan.paths.staging
        self.scrub = plan.settings.scrub  # the task's one scrub: every document, as it will be written
        self.manifest = Manifest.checked(self._started(), self.folder / MANIFEST)  # as --resume will read it

    @classmethod
    def start(cls, kernel: Kernel, request: RunRequest, model: ModelSpec, plan: TaskPlan, world: int,
              *, main: bool = True) -> RunWriter:
        """Check the started run's manifest (status ``running``), make the staging folder unless the run
        resumes it (``--overwrite`` discards an interrupted one) and write the manifest into it."""
        writer = cls(kernel, request, model, plan, world, main)
        if main:
            if not plan.resume:
                if os.path.lexists(writer.folder):
                    remove_path(writer.folder)
                writer.folder.mkdir(parents=True)
            _write(writer.folder / MANIFEST, lambda t: write_json(t, writer.scrub(writer.manifest.data)))
        return writer

    def _started(self) -> dict[str, Any]:
        """The manifest of a run that has started: everything that decides what it computes."""
        request, plan, task = self.request, self.plan, self.plan.task
        settings = plan.settings
        tests = {v: len(s) for v, s in plan.tests.items()}
        return {
            "schema": RUN_SCHEMA, "status": "running", "task": task.name, "kind": task.kind, "model": request.model,
            "model_spec": self.model.name, "clue_core": __version__,
            "plugins": {p.name: {"distribution": p.distribution, "version": p.version, "status": p.status}
                        for p in self.kernel.plugins},
            "python": sys.version.split()[0], "platform": platform.platform(),
            # --set of a secret is hidden by name too: a value scrub cannot know a setting this task lacks
            "command": redact_command(request.command, settings.secret_names()),
            "seed": request.seed, "world_size": self.world,
            "settings": settings.shown(), "setting_sources": settings.sources, "schedule": settings.flagged("schedule"),
            "no_train": request.no_train,
            "partial": ({"limit": request.limit, **({"first": True} if request.first else {})}
                        if request.limit is not None else None),
            "data": {"source": "sample" if request.sample else "dir", "data_dir": os.path.abspath(plan.data_dir),
                     "user_data_dir": str(request.data_dir) if request.data_dir else None, "files": plan.checksums},
            **({"repeat": dict(plan.repeat)} if plan.repeat else {}),  # the variant of an expanded plan it is
            # examples per split (``test <version>`` for each test version read), as metrics.json records them
            "counts": {"train": len(plan.splits.get("train", ())), "dev": len(plan.splits.get("dev", ())),
                       **{s: len(plan.splits[s]) for s in task.scored_splits if s in plan.splits},
                       **{f"test {v}": n for v, n in tests.items()}},
            "splits": list(plan.predict),  # --splits: submit refuses a run without test, --resume keeps them
            "test_versions": {v.version: v.submission_file for v in task.test_versions if v.version in tests},
            "notes": plan.notes, "started": _now(),
        }

    def finish(self, scored: Scored, train_seconds: float) -> tuple[Metrics, list[str]]:
        """Write every split's prediction records, each test version's leaderboard file, metrics.json and
        the manifest again with status ``complete``, then put the run in place; the metrics and file names.

        Everything is built, scrubbed and checked before the first file is written: a record its
        reader would refuse (a NaN score) stops the run before any of these files exists.
        """
        request, plan, task, folder, scrub = self.request, self.plan, self.plan.task, self.folder, self.scrub
        versions = {v.version: v.submission_file for v in task.test_versions if v.version in scored.tests}
        describe = getattr(plan.learner, "run_info", None)  # prompt hashes, few-shot ids, token usage
        info = dict(describe()) if callable(describe) else {}
        group = group_function(task)  # a clustered task's: each record names its passage

        def groups(examples: Sequence[Example]) -> list[str | None] | None:
            return [group(example) for example in examples] if group else None

        dev_groups = groups(scored.dev)
        named = groups if RECORD_GROUPS else lambda examples: None
        lines = {"dev": prediction_records(scored.dev, scored.dev_predictions, scored.detailed, named(scored.dev)),
                 **{split: prediction_records(examples, predictions, result, named(examples))
                    for split, (examples, predictions, result) in scored.scored.items()},
                 **{f"test-{version}": prediction_records(*scored.tests[version], groups=named(
                     scored.tests[version][0])) for version in versions}}
        spread = uncertainty(task, scored.detailed, dev_groups)  # the primary metric's standard errors
        files = list(versions.values()) if self.main else []
        metrics = Metrics.checked({
            "schema": RUN_SCHEMA, "task": task.name, "model": request.model, "model_category": self.model.category,
            "split": "dev", "primary_metric": task.primary_metric,
            "primary": scored.detailed.totals.get(task.primary_metric), "dev": dict(scored.detailed.totals),
            **({"scored_splits": list(scored.scored)} if scored.scored else {}),
            **{split: dict(result.totals) for split, (_, _, result) in scored.scored.items()},
            "counts": dict(self.manifest.counts),  # as the started manifest recorded them
            "train_seconds": round(train_seconds, 3), "leaderboards": [lb.as_dict() for lb in task.leaderboards],
            "report_settings": plan.settings.flagged("report"), "partial": request.limit is not None,
            "sample": request.sample, "model_info": info, **({"uncertainty": spread} if spread else {}),
        }, folder / METRICS, self.manifest)
        self.manifest = Manifest.checked({**self.manifest.data, "status": "complete", "finished": _now(),
                                          "submission_files": files, "model_info": info}, folder / MANIFEST)
        # one scrub per document written, each as it will be written
        documents = {split: scrub(records) for split, records in lines.items()}
        metrics_document, manifest_document = scrub(metrics.data), scrub(self.manifest.data)
        if not self.main:
            return metrics, files
        write_submission = resolve_ref(self.kernel.writer(task.writer).write)
        # in the order they have always been written: each split's records (a test version's
        # leaderboard file right after its own), metrics.json, and last the complete manifest
        for split, records in documents.items():
            _write(prediction_file(folder, split), lambda t, r=records: write_jsonl(t, r), records)
            version = split.removeprefix("test-")
            if split.startswith("test-"):
                _write(folder / SUBMISSION_DIR / versions[version], lambda t, v=version: write_submission(
                    t, *scored.tests[v]))
        _write(folder / METRICS, lambda t: write_json(t, metrics_document))
        _write(folder / MANIFEST, lambda t: write_json(t, manifest_document))
        plan.paths.publish()
        return metrics, files
