"""A plugin that adds a kind of its own, built exactly as docs/writing-a-plugin.md shows it (issue 30).

The two files of the doc's "A kind of its own" section are taken from the doc as written, put in a
package on ``sys.path`` and registered on an isolated kernel; ``clue-core run`` then reads, trains,
predicts and scores the new ``tagging`` kind with nothing in the kernel knowing it. The kernel's side
of a kind is checked through the same plugin: a task of an undeclared kind is an error on its plugin's
row, a model that does not run a task's kind is refused in one line naming the kinds it runs, the
kind's example check names the file, line and field, and a model's kind a typo away from a declared
one is an error while an undeclared one is the kind of a plugin not installed.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from clue_core.examples import gold_of
from clue_core.kernel import Kernel
from clue_core.plugin import ModelSpec, TaskSpec, hookimpl

DOC = Path(__file__).resolve().parents[2] / "docs" / "writing-a-plugin.md"
TRAIN = [("张三来了", "BIOO"), ("李四走了", "BIOO"), ("来了张三", "OOBI")]
DEV = [("张四来了", "BIOO"), ("王五走了", "BIOO")]


def doc_files() -> dict[str, str]:
    """``{file name: code}`` of every ``# clue_tagging/<name>.py`` block of the doc, as written."""
    section = DOC.read_text(encoding="utf-8").split("## A kind of its own", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"```python\n# clue_tagging/(\w+\.py)\n(.*?)```", section, flags=re.S))


@pytest.fixture
def tagging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The doc's plugin as an importable package ``clue_tagging``; its hook module."""
    package = tmp_path / "plugin" / "clue_tagging"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    files = doc_files()
    assert sorted(files) == ["hooks.py", "tagging.py"]
    for name, code in files.items():
        (package / name).write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(package.parent))
    import clue_tagging.hooks

    yield clue_tagging.hooks
    for name in [n for n in sys.modules if n == "clue_tagging" or n.startswith("clue_tagging.")]:
        del sys.modules[name]


@pytest.fixture
def kernel(isolated_kernel: Kernel, tagging: ModuleType) -> Kernel:
    isolated_kernel.register(tagging, "clue-tagging")
    assert all(p.status == "ok" for p in isolated_kernel.plugins), [p.error for p in isolated_kernel.plugins]
    return isolated_kernel


def write_data(folder: Path, dev: list[tuple[str, str]] = DEV) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for split, rows in (("train", TRAIN), ("dev", dev)):
        lines = [json.dumps({"id": i, "text": text, "tags": list(tags)}, ensure_ascii=False)
                 for i, (text, tags) in enumerate(rows)]
        (folder / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_the_docs_plugin_runs_its_own_kind_end_to_end(run_cli, kernel: Kernel, tmp_path: Path) -> None:
    listed = run_cli("list", "kinds", kernel=kernel)
    assert listed.exit_code == 0 and re.search(r"^tagging .* clue-tagging ", listed.output, flags=re.M)
    data = write_data(tmp_path / "data")
    result = run_cli("run", "toy-names", "--model", "tag-by-token", "--data-dir", data, "-o", tmp_path / "out",
                     kernel=kernel)
    assert result.exit_code == 0, result.output
    (metrics_file,) = (tmp_path / "out").rglob("metrics.json")
    metrics = json.loads(metrics_file.read_text(encoding="utf-8"))
    # train tags 张 B, 四 I, 来 走 了 O: 张四来了 all right; 王 and 五 are unseen (O, gold B and I): 6 of 8 tokens
    assert metrics["dev"]["token_accuracy"] == pytest.approx(75.0)
    records = [json.loads(line) for line in (metrics_file.parent / "predictions" / "dev.jsonl").open(encoding="utf-8")]
    assert [r["prediction"] for r in records] == [["B", "I", "O", "O"], ["O", "O", "O", "O"]]
    assert [r["gold"] for r in records] == [list("BIOO"), list("BIOO")]


def test_the_kinds_spec_is_what_the_kernel_asks(kernel: Kernel, tagging: ModuleType) -> None:
    from clue_tagging.tagging import Tagged

    task, kind = kernel.task("toy-names"), kernel.kind("tagging")
    example = Tagged(1, tuple("张三"), ("B", "I"))
    assert gold_of(example) == ("B", "I") and gold_of(Tagged(2, ("张",))) is None
    from clue_core.plugin import resolve

    check = resolve(kind.check_prediction)
    assert check(task, example, ["B", "I"]) is None
    assert check(task, example, ["B"]) == 'expected 2 tags of B, I, O, got ["B"]'


def test_a_model_that_does_not_run_the_kind_is_refused_in_one_line(run_cli, kernel: Kernel, tmp_path: Path) -> None:
    result = run_cli("run", "toy-names", "--model", "baseline", "--data-dir", write_data(tmp_path / "data"),
                     "-o", tmp_path / "out", kernel=kernel)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: model baseline does not support tagging tasks like toy-names "
        "(it runs: classification, span, multiple_choice)"]
    assert not (tmp_path / "out").exists()


def test_the_kinds_example_check_names_the_file_line_and_field(run_cli, kernel: Kernel, tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", dev=[DEV[0], ("王五走了", "BIO")])
    result = run_cli("run", "toy-names", "--model", "tag-by-token", "--data-dir", data, "-o", tmp_path / "out",
                     kernel=kernel)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {data / 'dev.jsonl'}:2: field 'tags': 3 tags for 4 tokens")


class TaskOnly:
    """The doc's task without the plugin that declares its kind."""

    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        return [TaskSpec("toy-names", "tagging", "a task of a kind nobody declares", "clue_tagging.tagging:read",
                         metrics=())]


class Taggers:
    """A model whose kind is a typo of the doc's, and one naming a kind of a plugin not installed."""

    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec("typo-tagger", "m:create", ("taging",), "a typo of a declared kind"),
                ModelSpec("ner-tagger", "m:create", ("classification", "ner"), "a kind not installed here")]


def test_a_task_of_an_undeclared_kind_is_an_error_on_its_plugins_row(run_cli, isolated_kernel: Kernel) -> None:
    info = isolated_kernel.register(TaskOnly(), "task-only")
    assert info.status == "error" and "toy-names" not in isolated_kernel.tasks
    assert "task 'toy-names' dropped: unknown kind 'tagging' (known: classification, span, multiple_choice)" \
        in str(info.error)
    listed = run_cli("list", kernel=isolated_kernel)
    assert re.search(r"^task-only .*error: task 'toy-names' dropped: unknown kind 'tagging'", listed.output,
                     flags=re.M)


def test_a_models_kind_is_an_error_only_as_a_typo_of_a_declared_one(isolated_kernel: Kernel,
                                                                     tagging: ModuleType) -> None:
    isolated_kernel.register(tagging, "clue-tagging")
    info = isolated_kernel.register(Taggers(), "taggers")
    assert "typo-tagger" not in isolated_kernel.models
    assert "model 'typo-tagger' dropped: unknown kind 'taging'; did you mean 'tagging'?" in str(info.error)
    assert isolated_kernel.models["ner-tagger"].kinds == ("classification", "ner")  # ner: a plugin not here


def test_the_docs_kind_does_not_outlive_the_tests_that_declared_it() -> None:
    """Runs after the tests above (pytest keeps a file's order): their kernels declared ``tagging`` in the
    process's kind table, and ``clue_tagging`` is gone from ``sys.path`` since. A later test (or any code)
    resolving the table's example types must not meet it (tests/core/test_kernel_names_nothing.py run after
    this file failed with ModuleNotFoundError: clue_tagging)."""
    from clue_core import kinds
    from clue_core.specs import resolve

    assert "tagging" not in kinds._DECLARED
    for spec in kinds._DECLARED.values():
        resolve(spec.example)  # every kind the table still holds loads
