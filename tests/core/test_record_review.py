"""Hostile review of the run record (issue 30, step 5): kills at every stage, and two runs at once.

A run killed anywhere (SIGKILL: no handler runs) either resumes with ``--resume`` or says what
to do in one line; a finished run is never lost to a run killed while replacing it, and a final
folder never holds half a run. The kill points are exact: the run is started in a subprocess
whose kill point (``KILL_AT``) wraps one step of the writer and kills the process right there,
after the started manifest, in predict, before or after each file the finish writes, between the
two renames of the swap and after it. Two runs started into one output folder at the same moment
leave one complete run and a refusal naming the holder, never a mix.

The hand-edited-file side of the record (wrong types, NaN, huge numbers, missing and extra fields,
a newer schema or writer, BOM, CRLF, cut and non-UTF-8 files) was checked differentially against
the reader at 84d44c6 on the three fixture folders: the same outcome for all ~3,300 edits but one
(a manifest whose ``repeat`` is null crashed there and reads as no repeat now, as
``test_record.py`` asserts); the cases below pin the messages that comparison saw.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clue_core.errors import ClueError
from clue_core.record import iter_predictions, read_manifest, read_metrics, read_run

TASK = "review-sentiment"
ROOT = Path(__file__).parents[2]
FIXTURE = Path(__file__).parent / "data" / "run-folder-2026-12"
OTHERS = "clue-models-hf,clue-models-llm,clue-tasks-classic,clue-tasks-mrc,clue-tasks-fewclue,clue-tasks-superclue," \
         "clue-tasks-ner,clue-tasks-kgclue,clue-report,clue-sweep"

KILLPOINT = '''
"""Imported before clue-core runs: kill this process (SIGKILL) at the step KILL_AT names."""
import os, signal
from pathlib import Path

AT = os.environ.get("KILL_AT", "")
MARK = Path(os.environ["KILL_MARK"])


def die():
    MARK.write_text(AT)
    os.kill(os.getpid(), signal.SIGKILL)


from clue_core import record_write, rundir, scoring

if AT.startswith("started"):  # started / started-2: after the n-th task's started manifest
    start, begun = record_write.RunWriter.start.__func__, []

    def started(cls, *args, **kwargs):
        writer = start(cls, *args, **kwargs)
        begun.append(writer)
        if len(begun) == int(AT.partition("-")[2] or 1):
            die()
        return writer
    record_write.RunWriter.start = classmethod(started)
elif AT == "predict":
    predict = scoring.predict_checked

    def predicting(*args, **kwargs):
        die()
    scoring.predict_checked = predicting
elif AT.startswith("write-"):  # write-<n>-before / write-<n>-after: around the n-th file the writer writes
    _, number, when = AT.split("-")
    write, calls = record_write._write, []

    def writing(target, *args, **kwargs):
        calls.append(target)
        if len(calls) == int(number) and when == "before":
            die()
        write(target, *args, **kwargs)
        if len(calls) == int(number) and when == "after":
            die()
    record_write._write = writing
elif AT.startswith("mid-write-"):  # mid-write-<name>: the file's temporary sibling written, not yet renamed
    import clue_core.atomic as atomic
    fsync, name = os.fsync, AT.removeprefix("mid-write-")

    def syncing(fd):
        fsync(fd)
        if os.readlink(f"/proc/self/fd/{fd}").rpartition("/")[2].startswith(f".{name}."):
            die()
    atomic.os.fsync = syncing
elif AT == "swap":  # between the swap's two renames: the old run moved aside, the new not yet in place
    publish = rundir.RunPaths.publish

    def swapping(self):
        if os.path.lexists(self.final):
            os.rename(self.final, self._replaced())
            die()
        publish(self)
    rundir.RunPaths.publish = swapping
elif AT == "published":
    publish = rundir.RunPaths.publish

    def published(self):
        publish(self)
        die()
    rundir.RunPaths.publish = published
'''

KILL_POINTS = ["started", "predict", *[f"write-{n}-{when}" for n in range(2, 7) for when in ("before", "after")],
               "swap", "published"]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "killpoint.py").write_text(KILLPOINT, encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "CLUE_DISABLE_PLUGINS": OTHERS,
                   "CLUE_HOME": str(tmp_path / "home"), "KILL_MARK": str(tmp_path / "killed")}
    environment.pop("CLUE_STRICT_PLUGINS", None)
    environment.pop("KILL_AT", None)
    return environment


def run(env: dict[str, str], out: Path, *extra: str, kill_at: str = "", tasks: tuple[str, ...] = (TASK,)
        ) -> subprocess.CompletedProcess[str]:
    code = "import sys, killpoint; from clue_core.entry import main; sys.argv[0] = 'clue-core'; main()"
    return subprocess.run([sys.executable, "-c", code, "run", *tasks, "--model", "baseline", "--sample", "-o", str(out),
                           *extra], env={**env, "KILL_AT": kill_at}, capture_output=True, text=True, timeout=120)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def complete(folder: Path) -> bool:
    try:
        record = read_run(folder)
        list(iter_predictions(folder, "dev"))
    except ClueError:
        return False
    return record.manifest.complete


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", KILL_POINTS)
@pytest.mark.parametrize("earlier", [False, True], ids=["fresh", "over-a-finished-run"])
def test_a_run_killed_at_any_step_resumes_or_says_what_to_do_and_loses_no_finished_run(
        env: dict[str, str], tmp_path: Path, kill_at: str, earlier: bool) -> None:
    out, final = tmp_path / "out", tmp_path / "out" / TASK
    if earlier:
        assert run(env, out).returncode == 0
        (final / "OLD").write_text("the finished run this one replaces", encoding="utf-8")
    killed = run(env, out, *(["--overwrite"] if earlier else []), kill_at=kill_at)
    if kill_at == "swap" and not earlier:  # no finished run to move aside: the swap is one rename
        assert killed.returncode == 0 and not (tmp_path / "killed").exists(), killed.stderr
        assert complete(final)
        return
    assert killed.returncode == -9
    replaced = out / f".{TASK}.replaced"
    # never half a run in place; a finished run is in place, or (killed between the swap's renames) set aside whole
    if final.exists():
        assert complete(final), sorted(p.name for p in final.iterdir())
    else:
        assert not earlier or complete(replaced)
    resumed = run(env, out, "--resume")
    if resumed.returncode != 0:
        line = one_line(resumed)
        assert resumed.returncode == 2 and ("--overwrite" in line or "--resume" in line), line
    else:
        assert complete(final) and not (out / f".{TASK}.staging").exists(), resumed.stderr
    if earlier:  # the finished run is never lost: it is in place until a complete one replaces it
        assert complete(final), resumed.stderr
    if resumed.returncode == 0:
        assert not replaced.exists() and not (out / f".{TASK}.lock").exists()
        again = run(env, out, "--resume")
        assert again.returncode == 0 and "nothing to resume" in again.stderr, again.stderr


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", ["started", "predict", "write-4-after", "write-6-after", "swap"])
def test_a_resume_killed_again_still_resumes_and_keeps_the_finished_run(env: dict[str, str], tmp_path: Path,
                                                                         kill_at: str) -> None:
    out, final = tmp_path / "out", tmp_path / "out" / TASK
    assert run(env, out).returncode == 0
    assert run(env, out, "--overwrite", kill_at="predict").returncode == -9
    again = run(env, out, "--resume", kill_at=kill_at)
    assert again.returncode == -9, again.stderr
    assert complete(final) or complete(out / f".{TASK}.replaced")
    resumed = run(env, out, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert complete(final) and sorted(p.name for p in out.iterdir()) == [TASK]


@pytest.mark.slow
def test_a_two_task_run_killed_in_its_second_task_resumes_only_that_one(env: dict[str, str], tmp_path: Path) -> None:
    env = {**env, "CLUE_DISABLE_PLUGINS": OTHERS.replace("clue-tasks-classic,", "")}
    out, tasks = tmp_path / "out", (TASK, "afqmc")
    killed = run(env, out, kill_at="started-2", tasks=tasks)
    assert killed.returncode == -9, killed.stderr
    assert complete(out / TASK) and not (out / "afqmc").exists() and (out / ".afqmc.staging").is_dir()
    first = (out / TASK / "manifest.json").read_bytes()
    plain = run(env, out, tasks=tasks)
    assert plain.returncode == 2 and "--resume" in one_line(plain)
    resumed = run(env, out, "--resume", tasks=tasks)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{out / TASK} is already complete; nothing to resume" in resumed.stderr
    assert (out / TASK / "manifest.json").read_bytes() == first  # the finished task is left as it was
    assert complete(out / "afqmc") and sorted(p.name for p in out.iterdir()) == sorted(tasks)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dev.jsonl", "metrics.json"])
def test_a_run_killed_mid_write_publishes_no_temporary_file(env: dict[str, str], tmp_path: Path, name: str) -> None:
    """A kill between a file's temporary sibling and its rename leaves ``.<name>.<hex>.tmp`` in the staging
    folder; the resumed run must not publish it as part of the run."""
    out = tmp_path / "out"
    killed = run(env, out, kill_at=f"mid-write-{name}")
    assert killed.returncode == -9 and (tmp_path / "killed").exists(), killed.stderr
    assert list((out / f".{TASK}.staging").rglob("*.tmp"))  # the kill left one
    resumed = run(env, out, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert complete(out / TASK) and not list((out / TASK).rglob("*.tmp")), sorted(map(str, (out / TASK).rglob("*")))


@pytest.mark.slow
def test_two_runs_started_at_once_into_one_folder_leave_one_complete_run(env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run(env, out).returncode == 0
    code = "import sys, killpoint; from clue_core.entry import main; sys.argv[0] = 'clue-core'; main()"
    args = [sys.executable, "-c", code, "run", TASK, "--model", "baseline", "--sample", "-o", str(out), "--overwrite"]
    for _ in range(3):
        both = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
        done = [(process.wait(timeout=120), process.stderr.read()) for process in both]  # type: ignore[union-attr]
        for code_, stderr in done:
            assert code_ == 0 or (code_ == 2 and "is in use by process" in stderr and "Traceback" not in stderr), stderr
        assert any(code_ == 0 for code_, _ in done)
        assert complete(out / TASK)
        assert sorted(p.name for p in out.iterdir()) == [TASK]  # no staging, lock or replaced folder left


# -- hand-edited files: the one-line messages the reader at 84d44c6 gave -------------------------------


@pytest.fixture
def fixture_run(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE / "afqmc", tmp_path / "afqmc")
    return tmp_path / "afqmc"


def _message(call) -> str:
    with pytest.raises(ClueError) as caught:
        call()
    return str(caught.value)


def edit(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize("name, changes, expected", [
    ("manifest.json", {"seed": "42"}, "field 'seed': expected an integer, got a string"),
    ("manifest.json", {"seed": 10**30}, None),  # a huge integer is an integer
    ("manifest.json", {"schema": "clue-core/run@2"}, "written by a newer clue-core (schema clue-core/run@2)"),
    ("manifest.json", {"clue_core": "9.0.0", "seed": "x"}, "(written by clue-core 9.0.0, newer than this"),
    ("manifest.json", {"zzz_extra": {"a": [1]}}, None),
    ("manifest.json", {"partial": {"limit": 1.5}}, "field 'partial.limit': expected an integer, got 1.5"),
    ("metrics.json", {"primary": 1e308}, "(the same score, written twice: one was edited)"),
    ("metrics.json", {"counts": {"dev": "16"}}, "field 'counts.dev': expected a number, got a string"),
    ("metrics.json", {"leaderboards": [{"benchmark": "CLUE"}]}, "field 'leaderboards[0].group'"),
])
def test_hand_edited_files_read_or_are_one_line_as_before(fixture_run: Path, name: str, changes: dict[str, object],
                                                          expected: str | None) -> None:
    edit(fixture_run / name, **changes)
    if expected is None:
        assert read_run(fixture_run).manifest.complete
    else:
        assert expected in _message(lambda: read_run(fixture_run))


@pytest.mark.parametrize("name", ["manifest.json", "metrics.json", "predictions/dev.jsonl"])
def test_bom_and_crlf_read(fixture_run: Path, name: str) -> None:
    path = fixture_run / name
    raw = path.read_bytes()
    path.write_bytes(b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n"))
    record = read_run(fixture_run)
    assert record.metrics.primary == read_metrics(FIXTURE / "afqmc").primary
    assert len(list(record.predictions())) == len(list(iter_predictions(FIXTURE / "afqmc")))
    assert read_manifest(fixture_run).seed == 42


def test_nan_in_metrics_is_named(fixture_run: Path) -> None:
    path = fixture_run / "metrics.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"macro_f1": 36.0', '"macro_f1": NaN'), encoding="utf-8")
    assert "field 'dev.macro_f1': expected a number or null, got nan" in _message(lambda: read_run(fixture_run))


def test_checking_a_prediction_line_walks_only_the_fields_that_can_fail() -> None:
    """A test split is read line by line (``submit``, the report, ``evaluate``), each line checked. The
    declared checks walked all nine fields of every line, the five that take anything too (``gold``, ``raw``,
    ``raw.prompt``…): a line's check cost 2.9-3.6x ``json.dumps`` of it (0.8-1.0x at 84d44c6; a 100 MB
    predictions file read in 2.2 s, not 1.1 s); 1.0-1.6x now. Asserted by what is walked, not by a clock."""
    from clue_core.record import PredictionRecord

    assert sorted(kind.key for kind in PredictionRecord.CHECKED) == ["group", "id", "prediction", "scores", "scoring"]
    assert len(PredictionRecord.FIELDS) == 10  # the others are still declared: attributes, what absent reads as
    path = Path("dev.jsonl")
    for record, field_ in [({"id": 1}, "prediction"), ({"id": 1, "prediction": 1, "scores": ["x"]}, "scores[0]"),
                           ({"id": 1, "prediction": 1, "scoring": []}, "scoring"),
                           ({"id": 1, "prediction": 1, "group": 3}, "group"),
                           ({"id": 1, "prediction": 1, "raw": {"logprobs": [float("nan")]}}, "raw.logprobs[0]")]:
        with pytest.raises(ClueError) as caught:
            PredictionRecord.check(record, path, line=2)
        assert f"dev.jsonl:2: field '{field_}'" in str(caught.value)


def test_a_prediction_record_checked_as_at_84d44c6_keeps_its_path_and_line() -> None:
    """``PredictionRecord.checked(data, path, line)`` is how 84d44c6 checked one line (plugins hold it through
    ``clue_core.plugin``); the inherited ``Record.checked(data, path, manifest)`` took the line for a manifest
    (an AttributeError) and, without one, stored the path as the line."""
    from clue_core.plugin import PredictionRecord

    record = PredictionRecord.checked({"id": 1, "prediction": "x"}, Path("dev.jsonl"), 3)
    assert (record.path, record.line, record.id) == (Path("dev.jsonl"), 3, 1)
    assert PredictionRecord.checked({"id": 1, "prediction": "x"}, Path("dev.jsonl")).line == 0
    with pytest.raises(ClueError) as caught:
        PredictionRecord.checked({"id": True, "prediction": "x"}, Path("dev.jsonl"), 7)
    assert str(caught.value) == "dev.jsonl:7: field 'id': expected a string or integer id, got True"
    assert PredictionRecord({"id": 2, "prediction": "y"}, 5).line == 5  # positional line, as the dataclass had it


def test_a_record_type_extending_another_keeps_its_declared_fields() -> None:
    """A declaration inherits its base's fields: a subclass declaring one more must still check the rest."""
    from clue_core.record import Manifest
    from clue_core.record_check import INT, field

    class Extended(Manifest):
        epochs: int | None = field(INT)

    assert {kind.key for kind in Manifest.FIELDS} < {kind.key for kind in Extended.FIELDS}
    with pytest.raises(ClueError) as caught:
        Extended.checked({"schema": "clue-core/run@1", "seed": "x"}, Path("manifest.json"))
    assert "field 'seed'" in str(caught.value)
    with pytest.raises(ClueError):
        Extended.checked({"schema": "clue-core/run@1", "epochs": "x"}, Path("manifest.json"))


@pytest.mark.parametrize("name", ["manifest.json", "metrics.json"])
def test_an_integer_too_long_for_python_in_a_record_file_is_worded_as_in_a_prediction_line(fixture_run: Path,
                                                                                           name: str) -> None:
    """Python's own words (``use sys.set_int_max_str_digits()``) were the message for a manifest or metrics
    file, while a prediction line with the same integer already said it plainly."""
    path = fixture_run / name
    path.write_text(path.read_text(encoding="utf-8").replace("{", '{"huge": ' + "9" * 5000 + ", ", 1),
                    encoding="utf-8")
    message = _message(lambda: read_run(fixture_run))
    assert message == f"{path}: unreadable {name.split('.')[0]} (an integer too long to read)"
