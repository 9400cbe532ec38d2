"""Hostile review of open example kinds (issue 30, step 4): a third party's wrong ``KindSpec``.

A plugin author's kind can be wrong in every way the spec allows: an example reference that does
not import or is no class, a check that raises or answers in the wrong shape, a gold reference
that raises, a kind two plugins declare or one named like a built-in kind, a task whose kind's
plugin is disabled, a reader returning another kind's examples or plain dicts. Each is one line on
the right plugin's row of ``clue-core list`` or one ``error:`` line at run time, never a traceback.
The kinds a kernel declares are the process's (code holding an example and no kernel finds them
there); a test kernel declaring a kind must not change another kernel's runs.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import KindSpec, MetricSpec, ModelSpec, TaskSpec, hookimpl

IMPL = '''
from dataclasses import dataclass
from pathlib import Path

from clue_core.plugin import MODEL_FILE, ClassificationExample, Prediction, SplitData, field, iter_jsonl, write_json


@dataclass(frozen=True, slots=True)
class Tagged:
    id: int
    tokens: tuple[str, ...]
    tags: tuple[str, ...] | None = None


NOT_A_CLASS = 3


@dataclass(frozen=True, slots=True)
class Pair(ClassificationExample):
    """A third party's pair kind built on the shared classification type; its gold is the second text."""


@dataclass(frozen=True, slots=True)
class NoId:
    tokens: tuple[str, ...]
    tags: tuple[str, ...] | None = None


def check_example(task, example):
    return None


def check_raises(task, example):
    raise RuntimeError("boom in check_example")


def check_text(task, example):
    return "a bare message, not (field, message)"


def check_three(task, example):
    return ("tags", "wrong", "third")


def check_prediction(task, example, value):
    return None


def prediction_raises(task, example, value):
    raise RuntimeError("boom in check_prediction")


def prediction_says_false(task, example, value):
    return False


def gold_raises(example):
    raise RuntimeError("boom in gold")


def record_gold_raises(gold):
    raise RuntimeError("boom in record_gold")


def _rows(data_dir, split):
    path = Path(data_dir) / f"{split}.jsonl"
    rows = [(line, record) for line, record in iter_jsonl(path)]
    return path, rows


def read(task, data_dir, split):
    path, rows = _rows(data_dir, split)
    examples = tuple(Tagged(field(r, "id", int, path=path, line=n), tuple(r["text"]), tuple(r["tags"]))
                     for n, r in rows)
    return SplitData(examples, files=(str(path),), where=tuple(f"{path}:{n}" for n, _ in rows))


def read_no_id(task, data_dir, split):
    path, rows = _rows(data_dir, split)
    return SplitData(tuple(NoId(tuple(r["text"]), tuple(r["tags"])) for _, r in rows), files=(str(path),))


def read_none(task, data_dir, split):
    _rows(data_dir, split)


def read_raises(task, data_dir, split):
    return {}["examples"]


def read_dicts(task, data_dir, split):
    path, rows = _rows(data_dir, split)
    return SplitData(tuple(r for _, r in rows), files=(str(path),))


def read_other_kind(task, data_dir, split):
    path, rows = _rows(data_dir, split)
    return SplitData(tuple(ClassificationExample(r["id"], r["text"], label="B") for _, r in rows), files=(str(path),))


def metric_raises(examples, predictions):
    raise ZeroDivisionError("boom in the metric")


def accuracy(examples, predictions):
    from clue_core.plugin import gold_of

    pairs = [(t, None if p is None else [*p.value, *gold_of(e)][i]) for e, p in zip(examples, predictions)
             if gold_of(e) is not None for i, t in enumerate(gold_of(e))]
    return {"token_accuracy_attack": 100.0 * sum(g == p for g, p in pairs) / len(pairs)} if pairs else {}


class AllO:
    def fit(self, train, dev, context):
        pass

    def predict(self, examples):
        return [Prediction(e.id, ["O"] * len(getattr(e, "tokens", "x"))) for e in examples]

    def save(self, directory):
        write_json(Path(directory) / MODEL_FILE, {"model": "all-o"})


class Odd(AllO):
    """Answers in a value no JSON holds (a set), which its kind's check lets through."""

    def predict(self, examples):
        return [Prediction(e.id, set(getattr(e, "tokens", "x"))) for e in examples]


def create(argument, task, settings):
    return AllO()


def create_odd(argument, task, settings):
    return Odd()
'''

KIND = KindSpec("tagging-attack", "tokens, one tag each", example="kattack.impl:Tagged", prediction="tags",
                check_prediction="kattack.impl:check_prediction", check_example="kattack.impl:check_example",
                gold="tags")


def task(kind: str = KIND.name, reader: str = "kattack.impl:read", name: str = "toy-attack") -> TaskSpec:
    return TaskSpec(name, kind, "tag tokens", reader, labels=("B", "I", "O"), metrics=("token_accuracy_attack",),
                    primary_metric="token_accuracy_attack", data_files=("train.jsonl", "dev.jsonl"))


class Plugin:
    """A third party's hook object: the kinds, tasks, metric and model it is given."""

    def __init__(self, kinds: list[KindSpec] = (), tasks: list[TaskSpec] = (), extras: bool = True) -> None:
        self.kinds, self.tasks, self.extras = list(kinds), list(tasks), extras

    @hookimpl
    def clue_kinds(self) -> list[KindSpec]:
        return self.kinds

    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        return self.tasks

    @hookimpl
    def clue_metrics(self) -> list[MetricSpec]:
        return [MetricSpec("token_accuracy_attack", "kattack.impl:accuracy", "share of tokens tagged right"),
                MetricSpec("raising_attack", "kattack.impl:metric_raises", "raises")] if self.extras else []

    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        models = [ModelSpec("all-o", "kattack.impl:create", (KIND.name,), "tags every token O"),
                  ModelSpec("odd-values", "kattack.impl:create_odd", (KIND.name,), "answers in sets")]
        return models if self.extras else []


@pytest.fixture(autouse=True)
def impl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``kattack.impl`` importable; the process's kind table as it was before the test."""
    from clue_core import kinds

    package = tmp_path / "site" / "kattack"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "impl.py").write_text(textwrap.dedent(IMPL), encoding="utf-8")
    (package / "types.py").write_text("from kattack.impl import Pair, Tagged  # the types, re-exported\n",
                                        encoding="utf-8")
    monkeypatch.syspath_prepend(str(package.parent))
    declared, by_type = dict(kinds._DECLARED), dict(kinds._BY_TYPE)
    yield
    kinds._DECLARED.clear()
    kinds._DECLARED.update(declared)
    kinds._BY_TYPE.clear()
    kinds._BY_TYPE.update(by_type)
    for name in [n for n in sys.modules if n == "kattack" or n.startswith("kattack.")]:
        del sys.modules[name]


def data(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for split in ("train", "dev"):
        rows = [{"id": 0, "text": "张三来了", "tags": list("BIOO")}, {"id": 1, "text": "李四", "tags": list("BI")}]
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                               encoding="utf-8")
    return folder


def kernel_with(isolated_kernel: Kernel, plugin: Plugin, name: str = "kattack") -> Kernel:
    isolated_kernel.register(plugin, name)
    return isolated_kernel


def row(kernel: Kernel, name: str) -> Any:
    return next(p for p in kernel.plugins if p.name == name)


def run(run_cli, kernel: Kernel, tmp_path: Path, task_name: str = "toy-attack") -> Any:
    return run_cli("run", task_name, "--model", "all-o", "--data-dir", data(tmp_path / "data"),
                   "-o", tmp_path / "out", kernel=kernel)


def one_error_line(result: Any, *words: str) -> str:
    """The run failed with exit 2 and one ``error:`` line holding ``words``, no traceback."""
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_the_sound_kind_runs(run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    kernel = kernel_with(isolated_kernel, Plugin([KIND], [task()]))
    assert row(kernel, "kattack").status == "ok", row(kernel, "kattack").error
    result = run(run_cli, kernel, tmp_path)
    assert result.exit_code == 0, result.output
    (metrics,) = (tmp_path / "out").rglob("metrics.json")
    assert json.loads(metrics.read_text(encoding="utf-8"))["dev"]["token_accuracy_attack"] == pytest.approx(100 / 3)


# -- a wrong reference or check: one error line at run time, naming the kind ---------------------------


@pytest.mark.parametrize("change, words", [
    ({"example": "kattack.nowhere:Tagged"}, ("tagging-attack", "example", "kattack.nowhere:Tagged")),
    ({"example": "kattack.impl:Missing"}, ("tagging-attack", "example", "kattack.impl:Missing")),
    ({"example": "kattack.impl:NOT_A_CLASS"}, ("tagging-attack", "example", "kattack.impl:NOT_A_CLASS")),
    ({"check_example": "kattack.nowhere:check"}, ("tagging-attack", "check_example", "kattack.nowhere:check")),
    ({"check_example": "kattack.impl:check_raises"}, ("tagging-attack", "check_example", "boom in check_example")),
    ({"check_example": "kattack.impl:check_text"}, ("tagging-attack", "check_example", "(field, message)")),
    ({"check_example": "kattack.impl:check_three"}, ("tagging-attack", "check_example", "(field, message)")),
])
def test_a_broken_example_reference_or_check_is_one_line_naming_the_kind(
        run_cli, isolated_kernel: Kernel, tmp_path: Path, change: dict[str, str], words: tuple[str, ...]) -> None:
    kernel = kernel_with(isolated_kernel, Plugin([replace(KIND, **change)], [task()]))
    assert row(kernel, "kattack").status == "ok"  # references are checked without importing them
    one_error_line(run(run_cli, kernel, tmp_path), *words)


@pytest.mark.parametrize("gold", ["kattack.nowhere:gold", "kattack.impl:no_such_gold"])
def test_a_gold_reference_that_does_not_load_is_one_line(run_cli, isolated_kernel: Kernel, tmp_path: Path,
                                                          gold: str) -> None:
    kernel = kernel_with(isolated_kernel, Plugin([replace(KIND, gold=gold)], [task()]))
    one_error_line(run(run_cli, kernel, tmp_path), "tagging-attack", "gold", gold)


def test_a_gold_reference_that_raises_is_one_line(run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    kernel = kernel_with(isolated_kernel, Plugin([replace(KIND, gold="kattack.impl:gold_raises")], [task()]))
    one_error_line(run(run_cli, kernel, tmp_path), "tagging-attack", "boom in gold")


def test_a_record_gold_that_raises_is_one_line(run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    kernel = kernel_with(isolated_kernel, Plugin([replace(KIND, record_gold="kattack.impl:record_gold_raises")],
                                                 [task()]))
    one_error_line(run(run_cli, kernel, tmp_path), "tagging-attack", "boom in record_gold")


def evaluate(run_cli, kernel: Kernel, tmp_path: Path) -> Any:
    """``clue-core evaluate`` of a run's predictions file (written here, as a run writes it)."""
    predictions = tmp_path / "dev.jsonl"
    predictions.write_text('{"id": 0, "prediction": ["B", "I", "O", "O"]}\n{"id": 1, "prediction": ["B", "I"]}\n',
                           encoding="utf-8")
    return run_cli("evaluate", "toy-attack", predictions, "--data-dir", data(tmp_path / "data"), kernel=kernel)


@pytest.mark.parametrize("check", ["kattack.nowhere:check", "kattack.impl:Missing"])
def test_evaluate_with_a_check_prediction_that_does_not_load_is_one_line(
        run_cli, isolated_kernel: Kernel, tmp_path: Path, check: str) -> None:
    kernel = kernel_with(isolated_kernel, Plugin([replace(KIND, check_prediction=check)], [task()]))
    one_error_line(evaluate(run_cli, kernel, tmp_path), "tagging-attack", "check_prediction", check)


def test_evaluate_with_a_check_prediction_that_raises_is_one_line(run_cli, isolated_kernel: Kernel,
                                                                   tmp_path: Path) -> None:
    kernel = kernel_with(isolated_kernel, Plugin([replace(KIND, check_prediction="kattack.impl:prediction_raises")],
                                                 [task()]))
    one_error_line(evaluate(run_cli, kernel, tmp_path), "tagging-attack", "boom in check_prediction")


def test_evaluate_with_a_check_prediction_answering_false_is_the_plugins_error(
        run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    kernel = kernel_with(isolated_kernel, Plugin(
        [replace(KIND, check_prediction="kattack.impl:prediction_says_false")], [task()]))
    one_error_line(evaluate(run_cli, kernel, tmp_path), "tagging-attack", "check_prediction")


@pytest.mark.parametrize("check, words", [("kattack.nowhere:check", ("kattack.nowhere:check",)),
                                          ("kattack.impl:prediction_raises", ("boom in check_prediction",))])
def test_a_run_with_a_broken_check_prediction_is_one_line(run_cli, isolated_kernel: Kernel, tmp_path: Path,
                                                          check: str, words: tuple[str, ...]) -> None:
    kernel = kernel_with(isolated_kernel, Plugin([replace(KIND, check_prediction=check)], [task()]))
    one_error_line(run(run_cli, kernel, tmp_path), "tagging-attack", "check_prediction", *words)


# -- a reader returning what its kind is not ------------------------------------------------------------


@pytest.mark.parametrize("reader, words", [
    ("kattack.impl:read_dicts", ("reader returned a dict, not an example",)),
    ("kattack.impl:read_other_kind", ("reader returned a classification example for a tagging-attack task",)),
    ("kattack.impl:read_none", ("reader", "None")),
    ("kattack.impl:read_raises", ("reader", "KeyError")),
])
def test_a_reader_returning_what_its_kind_is_not_is_one_line(run_cli, isolated_kernel: Kernel, tmp_path: Path,
                                                             reader: str, words: tuple[str, ...]) -> None:
    kernel = kernel_with(isolated_kernel, Plugin([KIND], [task(reader=reader)]))
    one_error_line(run(run_cli, kernel, tmp_path), "toy-attack", *words)


# -- declarations: on the right plugin's row ---------------------------------------------------------


def test_a_kind_two_plugins_declare_is_the_second_ones_error(isolated_kernel: Kernel) -> None:
    kernel_with(isolated_kernel, Plugin([KIND], [task()]))
    second = isolated_kernel.register(Plugin([replace(KIND, description="mine")], extras=False), "kattack-two")
    assert row(isolated_kernel, "kattack").status == "ok"
    assert second.status == "error" and "'tagging-attack' is already registered by plugin 'kattack'" in second.error
    assert isolated_kernel.kinds[KIND.name] == KIND  # the first declaration stands


def test_a_kind_named_like_a_built_in_one_is_the_third_partys_error(isolated_kernel: Kernel) -> None:
    builtin = isolated_kernel.kinds["classification"]
    info = kernel_with(isolated_kernel, Plugin([replace(KIND, name="classification")], extras=False)).plugins[-1]
    assert info.status == "error" and "'classification' is already registered by plugin 'builtin'" in info.error
    assert isolated_kernel.kinds["classification"] is builtin and row(isolated_kernel, "builtin").status == "ok"


def test_a_task_of_a_kind_whose_plugin_is_disabled_is_the_tasks_plugins_error(run_cli, tmp_path: Path) -> None:
    from clue_builtin import hooks as builtin

    kernel = Kernel(entrypoints=False, strict=False, disabled={"kattack-kinds"})
    kernel.register(builtin, "builtin", distribution="clue-core")
    kernel.register(Plugin([KIND], extras=False), "kattack-kinds")
    kernel.register(Plugin(tasks=[task()], extras=False), "kattack-tasks")
    assert row(kernel, "kattack-kinds").status == "disabled"
    info = row(kernel, "kattack-tasks")
    assert info.status == "error" and "task 'toy-attack' dropped: unknown kind 'tagging-attack'" in info.error
    listed = run_cli("list", "plugins", kernel=kernel)
    assert listed.exit_code == 0 and "Traceback" not in listed.output
    refused = run_cli("run", "toy-attack", "--model", "baseline", "--data-dir", data(tmp_path / "data"), kernel=kernel)
    one_error_line(refused, "unknown task 'toy-attack'", "kattack-tasks")


@pytest.mark.parametrize("change, words", [
    ({"name": ""}, "kind name must be one word"), ({"name": "two words"}, "kind name must be one word"),
    ({"name": None}, "kind name must be one word"), ({"example": None}, "example must be 'module:attr', got None"),
    ({"check_prediction": None}, "check_prediction must be 'module:attr', got None"),
    ({"gold": None}, "gold must be 'module:attr', got None"), ({"open": "yes"}, "open must be true or false"),
])
def test_a_kind_missing_what_every_kind_needs_is_on_its_plugins_row(isolated_kernel: Kernel, change: dict[str, Any],
                                                                     words: str) -> None:
    """Each was accepted: a kind named "" made every run's manifest fail its own check (``kind`` is a name),
    a None gold was a TypeError traceback in the first metric, a None example or check_prediction one at run time."""
    kernel_with(isolated_kernel, Plugin([replace(KIND, **change)], extras=False))
    info = row(isolated_kernel, "kattack")
    assert info.status == "error" and words in info.error, info.error
    assert all(spec.name in ("classification", "span", "multiple_choice") for spec in isolated_kernel.kinds.values())


@pytest.mark.parametrize("change", [{"example": "not a ref"}, {"check_prediction": "nocolon"},
                                    {"gold": "not an attribute"}, {"check_example": ""}])
def test_a_malformed_reference_is_on_its_plugins_row(isolated_kernel: Kernel, change: dict[str, str]) -> None:
    kernel_with(isolated_kernel, Plugin([replace(KIND, **change)], [task()]))
    info = row(isolated_kernel, "kattack")
    assert info.status == "error" and "kind 'tagging-attack' dropped" in info.error
    assert KIND.name not in isolated_kernel.kinds and "toy-attack" not in isolated_kernel.tasks


# -- the process-wide kind table: one kernel's declarations never change another's runs --------------------


def test_another_kernels_kind_of_the_same_name_does_not_change_this_kernels_run(
        run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    kernel = kernel_with(isolated_kernel, Plugin([KIND], [task()]))
    other = Kernel(entrypoints=False, strict=False, disabled=())  # a test kernel, built later in the process
    other.register(Plugin([replace(KIND, check_example="kattack.impl:check_raises")], extras=False), "other")
    assert row(other, "other").status == "ok"
    result = run(run_cli, kernel, tmp_path)
    assert result.exit_code == 0, result.output


def test_another_kernels_classification_does_not_change_this_kernels_gold(isolated_kernel: Kernel) -> None:
    from clue_core.examples import ClassificationExample, gold_of

    example = ClassificationExample(1, "text", label="1")
    assert gold_of(example) == "1"
    other = Kernel(entrypoints=False, strict=False, disabled=())
    other.register(Plugin([replace(isolated_kernel.kinds["classification"], gold="text")], extras=False), "other")
    assert row(other, "other").status == "ok"
    assert gold_of(example) == "1"  # isolated_kernel's classification, whatever a later kernel declared


# -- an example type that does not hold what its kind says ---------------------------------------------


def test_a_gold_attribute_the_example_type_lacks_is_one_line(run_cli, isolated_kernel: Kernel,
                                                              tmp_path: Path) -> None:
    """``gold="tagz"`` (a typo) read every example as having no gold: the split was silently not scored."""
    kernel = kernel_with(isolated_kernel, Plugin([replace(KIND, gold="tagz")], [task()]))
    one_error_line(run(run_cli, kernel, tmp_path), "tagging-attack", "gold", "tagz", "Tagged")


def test_an_example_type_without_an_id_is_one_line(run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    kernel = kernel_with(isolated_kernel, Plugin([replace(KIND, example="kattack.impl:NoId")],
                                                 [task(reader="kattack.impl:read_no_id")]))
    one_error_line(run(run_cli, kernel, tmp_path), "tagging-attack", "id", "NoId")


# -- no kernel yet: the installed plugins' kinds, read as a kernel reads them --------------------------------

THIRD_PARTY = '''
from clue_core.plugin import KindSpec, hookimpl


@hookimpl
def clue_kinds():
    return [KindSpec("classification", "a third party's", example="clue_core.plugin:ClassificationExample",
                     prediction="a label", check_prediction="clue_builtin.kinds:label_prediction", gold="text")]
'''


def _gold_without_a_kernel(tmp_path: Path, **environment: str) -> str:
    import os
    import subprocess

    site = tmp_path / "third-party"
    dist = site / "aaa_kinds-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: aaa-kinds\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[clue_core]\naaa-kinds = aaa_kinds\n", encoding="utf-8")
    (site / "aaa_kinds.py").write_text(THIRD_PARTY, encoding="utf-8")
    code = ("from clue_core.examples import ClassificationExample, gold_of\n"
            "print(gold_of(ClassificationExample(1, 'the text', label='1')))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(Path(__file__).parents[2])]), **environment}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)  # not the checkout: its clue_core.egg-info would be found first
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow
def test_without_a_kernel_a_third_partys_builtin_kind_name_does_not_win(tmp_path: Path) -> None:
    assert _gold_without_a_kernel(tmp_path) == "1"


@pytest.mark.slow
def test_without_a_kernel_a_disabled_plugins_kinds_are_not_read(tmp_path: Path) -> None:
    assert _gold_without_a_kernel(tmp_path, CLUE_DISABLE_PLUGINS="aaa-kinds") == "1"


# -- kinds sharing an example type -----------------------------------------------------------------------


@pytest.mark.parametrize("example", ["clue_core.plugin:ClassificationExample",
                                     "clue_core.examples:ClassificationExample", None])  # None: the class
def test_a_kind_declaring_another_kinds_example_type_is_its_plugins_error(isolated_kernel: Kernel,
                                                                          example: str | None) -> None:
    """An example's kind is found by its type: two kinds of one type would share one gold (the first
    declared's), so the second kind's tasks were scored against the other kind's gold without a word.
    The kernel's own re-exports are seen at load time, without importing anything."""
    from clue_core.examples import ClassificationExample, gold_of

    shared = replace(KIND, name="pair-shared", example=example or ClassificationExample, gold="text_pair",
                     check_example=None)
    info = kernel_with(isolated_kernel, Plugin([shared], extras=False)).plugins[-1]
    shown = example or "clue_core.examples:ClassificationExample"
    assert info.status == "error" and f"example type {shown} is already kind 'classification''s (plugin " \
        "builtin)" in info.error, info.error
    assert "pair-shared" not in isolated_kernel.kinds and "classification" in isolated_kernel.kinds
    assert gold_of(ClassificationExample(1, "a", text_pair="b", label="1")) == "1"


def test_one_plugins_two_kinds_of_one_type_the_second_is_dropped(isolated_kernel: Kernel) -> None:
    twin = replace(KIND, name="tagging-twin")
    info = kernel_with(isolated_kernel, Plugin([KIND, twin], extras=False)).plugins[-1]
    assert "kind 'tagging-twin' dropped: example type kattack.impl:Tagged is already kind 'tagging-attack''s " \
        "(plugin kattack)" in str(info.error), info.error
    assert KIND.name in isolated_kernel.kinds and "tagging-twin" not in isolated_kernel.kinds


def test_a_kind_declaring_another_kinds_type_through_a_plugins_re_export_is_one_line_at_run_time(
        run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    """``kattack.types:Tagged`` is ``kattack.impl:Tagged``: seeing it needs the plugin's module imported,
    which listing never does, so the run that reads the type refuses, naming both kinds and plugins (it
    scored the task with the other kind's gold, the tokens, without a word)."""
    first = replace(KIND, name="tagging-first", gold="tokens")
    kernel = kernel_with(isolated_kernel, Plugin([first], extras=False), name="kfirst")
    kernel = kernel_with(kernel, Plugin([replace(KIND, example="kattack.types:Tagged")], [task()]))
    assert row(kernel, "kfirst").status == "ok" and row(kernel, "kattack").status == "ok"  # nothing imported
    one_error_line(run(run_cli, kernel, tmp_path), "example type kattack.impl:Tagged",
                   "kind 'tagging-first''s (plugin kfirst, as kattack.impl:Tagged)",
                   "kind 'tagging-attack''s (plugin kattack, as kattack.types:Tagged)")
    assert not (tmp_path / "out" / "toy-attack").exists()
    checked = run_cli("check", "--data-dir", data(tmp_path / "data"), kernel=kernel)  # reads it too: refuses
    one_error_line(checked, "example type kattack.impl:Tagged", "kind 'tagging-first''s")


def test_a_subclassed_example_type_finds_its_own_kind(isolated_kernel: Kernel) -> None:
    from clue_core.examples import gold_of

    pair = replace(KIND, name="pair-attack", example="kattack.types:Pair", gold="text_pair", check_example=None)
    assert kernel_with(isolated_kernel, Plugin([pair], extras=False)).plugins[-1].status == "ok"
    from kattack.impl import Pair

    assert gold_of(Pair(1, "a", text_pair="b", label="1")) == "b"


def test_a_prediction_value_no_json_holds_is_one_line(run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    """A third party's kind may let any value through its check; the record writer still cannot write a set."""
    kernel = kernel_with(isolated_kernel, Plugin([KIND], [task()]))
    result = run_cli("run", "toy-attack", "--model", "odd-values", "--data-dir", data(tmp_path / "data"),
                     "-o", tmp_path / "out", kernel=kernel)
    one_error_line(result, "set")
    assert not (tmp_path / "out" / "toy-attack").exists()


def test_a_metric_that_raises_is_one_line(run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    kernel = kernel_with(isolated_kernel, Plugin([KIND], [replace(task(), metrics=("raising_attack",),
                                                                  primary_metric="raising_attack")]))
    one_error_line(run(run_cli, kernel, tmp_path), "raising_attack", "boom in the metric")
