"""Faults a hostile review of ``clue_core.api`` (issue 19) provoked, and what held.

Before the fixes: ``api.run("afqmc")`` ran tasks 'a', 'f', …; a generator of tasks was read twice
(the second time empty); a seed of ``"7"`` was written into a complete run its own reader then
refused; ``limit="3"``, ``model=5``, ``output_dir=5`` or ``overrides=[("k", "v")]`` ended in a
TypeError or AttributeError traceback from deep inside; ``sample="no"`` ran on the sample;
``overrides="k=v"`` was read letter by letter; Ctrl-C came out as a ``ClueError`` that an
``except ClueError`` loop swallowed; a secret given through ``overrides`` was printed through a
learner's ``context.echo`` and, from the command line, sat in the lock file for the whole run;
two runs into one folder from two threads could share the lock's private file.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from clue_builtin import hooks as builtin
from clue_builtin.baseline import BaselineLearner
from clue_core import api
from clue_core.config import ArgumentError, run_request
from clue_core.errors import ClueError, InputError
from clue_core.kernel import Kernel
from clue_core.plugin import ModelSpec, Prediction, Setting, hookimpl
from clue_core.specs import TaskSpec

TASK = "review-sentiment"
SECRET = "sk-live-0123456789"


@pytest.fixture
def home(monkeypatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "clue-home"))
    monkeypatch.delenv("CLUE_STRICT_PLUGINS", raising=False)
    monkeypatch.delenv("CLUE_DISABLE_PLUGINS", raising=False)
    return tmp_path


def _quiet(line: str) -> None:
    pass


# -- a model with settings of each type, one of them secret ------------------------------------

SEEN: dict[str, Any] = {}


class Keyed(BaselineLearner):
    """The baseline, reading its settings; it says its key through context.echo, as a careless plugin might,
    and notes what the lock file held while it ran."""

    def __init__(self, task: TaskSpec, settings: Mapping[str, Any]) -> None:
        super().__init__(task.name, task.kind, task.labels)
        self.settings = dict(settings)

    def fit(self, train: Sequence[Any], dev: Sequence[Any], context: Any) -> None:
        SEEN["settings"] = self.settings
        SEEN["locks"] = [p.read_text(encoding="utf-8") for p in Path(context.run_dir).parent.glob(".*.lock")]
        if SEEN.get("interrupt"):
            raise KeyboardInterrupt
        context.echo(f"calling https://api.example/v1 with key {self.settings['api_key']}")
        super().fit(train, dev, context)

    def predict(self, examples: Sequence[Any]) -> list[Prediction]:
        return [Prediction(p.id, p.value, raw={"auth": f"Bearer {self.settings['api_key']}"})
                for p in super().predict(examples)]

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)


def create(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> Keyed:
    return Keyed(task, settings)


SETTINGS = (Setting("api_key", str, "", "the key", secret=True), Setting("shots", int, 0, "demos", minimum=0),
            Setting("temperature", float, 0.0, "sampling"), Setting("chat", bool, False, "chat template"))


class KeyedPlugin:
    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec("keyed", create, ("classification",), "reads settings",
                          settings=SETTINGS)]


@pytest.fixture
def kernel(home) -> Kernel:
    import clue_example_plugin.hooks as example_hooks

    SEEN.clear()
    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    kernel.register(builtin, "builtin", distribution="clue-core")
    kernel.register(example_hooks, "example")
    kernel.register(KeyedPlugin(), "keyed")
    return kernel


# -- argument types ------------------------------------------------------------------------------


def test_a_task_name_given_as_a_string_is_one_task_not_its_letters(home) -> None:
    [record] = api.run("afqmc", "baseline", sample=True, output_dir=home / "one", echo=_quiet)
    assert record.manifest.task == "afqmc" and sorted(p.name for p in (home / "one").iterdir()) == ["afqmc"]
    assert [row["task"] for row in api.plan("afqmc", "baseline", sample=True)] == ["afqmc"]


def test_tasks_from_a_generator_are_read_once(home) -> None:
    records = api.run((name for name in ["afqmc", "tnews"]), "baseline", sample=True, output_dir=home / "gen",
                      echo=_quiet)
    assert [r.manifest.task for r in records] == ["afqmc", "tnews"]


class Index:
    """An integer type that is not int (numpy's int64 is one): operator.index reads it."""

    def __index__(self) -> int:
        return 3


def test_an_integer_type_other_than_int_is_taken_as_its_value(home) -> None:
    [record] = api.run(["afqmc"], "baseline", sample=True, seed=Index(), limit=Index(), output_dir=home / "ix",
                       echo=_quiet)
    assert record.manifest.seed == 3 and record.manifest.limit == 3


BAD = [
    ({"tasks": [1]}, "tasks item: expected a name"),
    ({"tasks": {"afqmc": 1}}, "tasks: expected a name or a list of names"),
    ({"model": 5}, "model: expected a name"),
    ({"seed": "7"}, "seed: expected an integer"),
    ({"seed": 7.5}, "seed: expected an integer"),
    ({"seed": True}, "seed: expected an integer"),
    ({"limit": "3"}, "limit: expected an integer"),
    ({"limit": 2.5}, "limit: expected an integer"),
    ({"sample": "no"}, "sample: expected True or False"),
    ({"no_train": "yes"}, "no_train: expected True or False"),
    ({"resume": 1}, "resume: expected True or False"),
    ({"overwrite": None}, "overwrite: expected True or False"),
    ({"overrides": "shots=2"}, "overrides: expected a mapping"),
    ({"overrides": [("shots", 2)]}, "overrides item: expected a \"key=value\" text"),
    ({"overrides": {1: 2}}, "overrides key: expected a setting name"),
    ({"output_dir": 5}, "output_dir: expected a path"),
    ({"data_dir": 5, "sample": False}, "data_dir: expected a path"),
    ({"cache_dir": ["x"]}, "cache_dir: expected a path"),
    ({"config": 5}, "config: expected a path"),
]


@pytest.mark.parametrize(("bad", "says"), BAD, ids=[next(iter(b)) + "=" + repr(next(iter(b.values()))) for b, _ in BAD])
def test_an_argument_of_the_wrong_type_is_one_line_naming_it_and_nothing_is_written(home, bad, says) -> None:
    arguments: dict[str, Any] = {"tasks": ["afqmc"], "model": "baseline", "sample": True,
                                 "output_dir": home / "out", **bad}
    with pytest.raises(ArgumentError, match=says) as refused:
        api.run(**arguments, echo=_quiet)
    assert isinstance(refused.value, ClueError) and isinstance(refused.value, TypeError)
    assert not (home / "out").exists()
    with pytest.raises(ArgumentError, match=says):
        api.plan(**arguments)


def test_plan_takes_runs_arguments_and_no_others(home) -> None:
    """It took **options and failed with "run_request() got an unexpected keyword argument"."""
    with pytest.raises(TypeError, match=r"plan\(\) got an unexpected keyword argument 'bogus'"):
        api.plan(["afqmc"], "baseline", sample=True, bogus=1)


def test_echo_none_is_silence_and_a_non_function_is_refused_before_the_run(home) -> None:
    [record] = api.run(["afqmc"], "baseline", sample=True, output_dir=home / "quiet", echo=None)
    assert record.manifest.complete
    with pytest.raises(TypeError, match="echo: expected a function"):
        api.run(["afqmc"], "baseline", sample=True, output_dir=home / "loud", echo="stderr")
    assert not (home / "loud").exists()


def test_typed_overrides_and_key_value_texts_give_the_same_settings(kernel, home) -> None:
    typed = api.run([TASK], "keyed", sample=True, output_dir=home / "typed", kernel=kernel, echo=_quiet,
                    overrides={"shots": 2, "temperature": 0.5, "chat": True, "api_key": SECRET})
    texts = api.run([TASK], "keyed", sample=True, output_dir=home / "texts", kernel=kernel, echo=_quiet,
                    overrides=["shots=2", "temperature=0.5", "chat=true", f"api_key={SECRET}"])
    assert typed[0].manifest.settings == texts[0].manifest.settings
    assert typed[0].manifest.settings["shots"] == 2 and typed[0].manifest.settings["chat"] is True
    with pytest.raises(ClueError, match=r"setting 'shots' \(--set\): expected an integer, got 'two'"):
        api.run([TASK], "keyed", sample=True, output_dir=home / "bad", kernel=kernel, overrides={"shots": "two"})


def test_a_kernel_reused_for_two_runs_keeps_no_state_between_them(kernel, home) -> None:
    first = api.run([TASK], "keyed", sample=True, output_dir=home / "a", kernel=kernel, echo=_quiet, seed=1,
                    overrides={"shots": 3, "api_key": SECRET})
    second = api.run([TASK], "keyed", sample=True, output_dir=home / "b", kernel=kernel, echo=_quiet)
    assert first[0].manifest.settings["shots"] == 3 and second[0].manifest.settings["shots"] == 0
    assert SEEN["settings"]["api_key"] == "" and second[0].manifest.seed == 42
    fresh = api.run([TASK], "keyed", sample=True, output_dir=home / "c", echo=_quiet, kernel=kernel)
    assert fresh[0].metrics.dev == second[0].metrics.dev


# -- Ctrl-C ----------------------------------------------------------------------------------------


def test_ctrl_c_in_api_run_is_a_keyboard_interrupt_that_keeps_the_staging_folder(kernel, home) -> None:
    """It was Interrupted, a ClueError: `for ...: try: api.run(...) except ClueError: continue` went on."""
    SEEN["interrupt"] = True
    out = home / "out"
    with pytest.raises(KeyboardInterrupt) as stopped:
        try:
            api.run([TASK], "keyed", sample=True, output_dir=out, kernel=kernel, echo=_quiet)
        except ClueError:
            pytest.fail("Ctrl-C was caught as a ClueError")
    assert f"{TASK} is kept unfinished in {out / f'.{TASK}.staging'}" in str(stopped.value)
    assert json.loads((out / f".{TASK}.staging" / "manifest.json").read_text())["status"] == "running"
    assert not (out / f".{TASK}.lock").exists()
    SEEN["interrupt"] = False
    [record] = api.run([TASK], "keyed", sample=True, output_dir=out, kernel=kernel, echo=_quiet, resume=True)
    assert record.manifest.complete and not (out / f".{TASK}.staging").exists()


# -- secrets -------------------------------------------------------------------------------------


def test_a_secret_passed_through_overrides_reaches_no_file_and_no_printed_line(kernel, home) -> None:
    lines: list[str] = []
    [record] = api.run([TASK], "keyed", sample=True, output_dir=home / "out", kernel=kernel, echo=lines.append,
                       overrides={"api_key": SECRET})
    assert record.manifest.settings["api_key"] == "***"
    files = [p for p in (home / "out").rglob("*") if p.is_file()]
    assert files and not [p for p in files if SECRET.encode() in p.read_bytes()]
    assert "Bearer ***" in record.prediction_file("dev").read_text(encoding="utf-8")
    assert any("with key ***" in line for line in lines) and not [line for line in lines if SECRET in line]


def test_the_lock_file_does_not_hold_a_secret_from_the_command_line(run_cli, kernel, home, monkeypatch) -> None:
    """The lock records the command (sys.argv) as given: --set api_key=… sat in .<task>.lock for the run."""
    argv = ["clue-core", "run", TASK, "-m", "keyed", "--sample", "-o", str(home / "out"), "--set", f"api_key={SECRET}"]
    monkeypatch.setattr("sys.argv", argv)
    result = run_cli(*argv[1:], kernel=kernel)
    assert result.exit_code == 0, result.output
    assert SEEN["locks"] and not [lock for lock in SEEN["locks"] if SECRET in lock]
    assert "api_key=***" in SEEN["locks"][0] and SECRET not in result.output


# -- two runs at once ------------------------------------------------------------------------------


def test_two_api_runs_at_once_into_one_folder_one_runs_the_other_is_refused(home) -> None:
    outcomes: list[Any] = []
    barrier = threading.Barrier(4)

    def go() -> None:
        barrier.wait()
        try:
            outcomes.append(api.run(["afqmc", "tnews"], "baseline", sample=True, output_dir=home / "out",
                                    echo=_quiet))
        except ClueError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=go) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    won = [o for o in outcomes if isinstance(o, list)]
    refused = [o for o in outcomes if isinstance(o, ClueError)]
    assert len(won) == 1 and len(refused) == 3
    assert all("is in use by process" in str(e) or "already holds a run" in str(e) for e in refused), refused
    assert sorted(p.name for p in (home / "out").iterdir()) == ["afqmc", "tnews"]


def test_two_locks_taken_at_once_in_one_process_do_not_share_a_private_file(tmp_path, monkeypatch) -> None:
    """Both wrote `.<task>.lock.<pid>`: when the second's cleanup removed it before the first linked it,
    the first failed with 'No such file' (a disk error) instead of 'in use by process …'."""
    from clue_core import rundir

    real_link = os.link
    order: list[str] = []
    first_may_link = threading.Event()

    def link(source, target) -> None:
        if threading.current_thread().name == "first":
            first_may_link.wait(5)
        order.append(threading.current_thread().name)
        real_link(source, target)

    monkeypatch.setattr(rundir.os, "link", link)
    final = tmp_path / "afqmc"
    errors: dict[str, BaseException] = {}

    def take(name: str) -> None:
        try:
            rundir.RunLock(tmp_path / ".afqmc.lock", final).acquire(["run"])
        except BaseException as exc:  # the test reports what each thread met
            errors[name] = exc
        finally:
            if name == "second":
                first_may_link.set()

    first = threading.Thread(target=take, args=("first",), name="first")
    second = threading.Thread(target=take, args=("second",), name="second")
    first.start()
    second.start()
    second.join()
    first.join()
    assert "second" not in errors and isinstance(errors.get("first"), ClueError)
    assert "is in use by process" in str(errors["first"]), errors["first"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".afqmc.lock.")]


# -- evaluate / submit / report --------------------------------------------------------------------


def test_evaluate_with_arguments_of_the_wrong_type_or_a_wrong_file(home) -> None:
    [record] = api.run(["afqmc"], "baseline", sample=True, output_dir=home / "runs", echo=_quiet)
    with pytest.raises(ArgumentError, match="task: expected a name"):
        api.evaluate(5, record.prediction_file("dev"), sample=True)  # was AttributeError: 'int' ... 'lower'
    with pytest.raises(ArgumentError, match="split: expected a split name"):
        api.evaluate("afqmc", record.prediction_file("dev"), sample=True, split=None)
    with pytest.raises(ArgumentError, match="sample: expected True or False"):
        api.evaluate("afqmc", record.prediction_file("dev"), sample="yes")
    with pytest.raises(InputError, match=r"manifest.json:1: invalid JSON"):  # held: one line naming the file
        api.evaluate("afqmc", record.path / "manifest.json", sample=True)
    with pytest.raises(ClueError, match="no such predictions file"):
        api.evaluate("afqmc", record.path, sample=True)
    with pytest.raises(ClueError, match="not in tnews dev"):
        api.evaluate("tnews", record.prediction_file("dev"), sample=True)


def test_submit_and_report_take_one_path_as_one_path(home) -> None:
    """A string was read character by character: submit looked for a run in '/'."""
    [record] = api.run(["afqmc"], "baseline", sample=True, output_dir=home / "runs", echo=_quiet)
    [checked] = api.submit(str(record.path), home / "one.zip")
    assert checked.task == "afqmc" and (home / "one.zip").is_file()
    assert api.submit(record.path, home / "one.zip", force=True)[0].name == checked.name
    assert "afqmc" in json.dumps(api.report(str(home / "runs")), ensure_ascii=False)
    with pytest.raises(ArgumentError, match="run_dirs item: expected a path"):
        api.submit([record.path, 5], home / "two.zip")
    with pytest.raises(ArgumentError, match="force: expected True or False"):
        api.submit([record.path], home / "one.zip", force="yes")


# -- the command line's config file ------------------------------------------------------------------


def test_a_config_sample_that_is_not_true_or_false_is_refused(tmp_path) -> None:
    """``sample = "no"`` was bool("no"), a run on the bundled sample."""
    config = tmp_path / "run.toml"
    config.write_text('model = "baseline"\ntasks = ["afqmc"]\nsample = "no"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"run.toml: field 'sample': expected true or false"):
        run_request(config_file=config)


def test_every_config_key_resolves_as_the_previous_release_did(tmp_path, monkeypatch) -> None:
    """What f079bfe's ``run`` built from a config file, key by key: ``~`` is expanded in data_dir and cache
    (and now in output_dir too: see the next test), relative paths stay relative to the current folder,
    flags win over the file."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = tmp_path / "run.toml"
    config.write_text('model = "baseline"\ntasks = ["afqmc", "tnews"]\nseed = 7\noutput_dir = "~/runs"\n'
                      'data_dir = "~/data"\nlimit = 3\ncache = "rel/cache"\n[settings]\nshots = 1\n'
                      '[task.AFQMC]\nshots = 2\n', encoding="utf-8")
    request = run_request(config_file=config)
    assert (request.model, request.tasks, request.seed, request.limit) == ("baseline", ["afqmc", "tnews"], 7, 3)
    assert request.output_dir == tmp_path / "home" / "runs" and request.data_dir == tmp_path / "home" / "data"
    assert request.cache_dir == Path("rel/cache") and request.sample is False
    assert request.settings == {"shots": 1} and request.task_settings == {"afqmc": {"shots": 2}}
    flags = run_request(config_file=config, tasks=("tnews",), model="hf-tiny", seed=1, limit=2,
                        output_dir=Path("o"), data_dir=Path("d"), cache_dir=Path("c"), overrides=("shots=5",))
    assert (flags.tasks, flags.model, flags.seed, flags.limit) == (["tnews"], "hf-tiny", 1, 2)
    assert (flags.output_dir, flags.data_dir, flags.cache_dir) == (Path("o"), Path("d"), Path("c"))
    assert flags.overrides == {"shots": "5"} and flags.config_file == str(config)
    sample = run_request(config_file=config, sample=True)
    assert sample.sample is True and sample.data_dir is None  # --sample drops the file's data_dir
    with pytest.raises(ClueError, match="--sample and --data-dir exclude each other"):
        run_request(config_file=config, sample=True, data_dir=Path("d"))


def test_a_config_files_output_dir_expands_the_home_folder(tmp_path, monkeypatch):
    """``output_dir = "~/runs"`` in a file means the home folder, as ``data_dir`` and ``cache`` do:
    it made a folder literally named ``~`` in the current directory."""
    from clue_core.config import run_request

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = tmp_path / "run.toml"
    config.write_text('model = "baseline"\noutput_dir = "~/runs"\n', encoding="utf-8")
    request = run_request(tasks=["afqmc"], config_file=config)
    assert request.output_dir == tmp_path / "home" / "runs"
