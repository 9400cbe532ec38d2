"""The kinds code holding an example and no kernel finds: what kernels declared, else the installed plugins'.

A metric calls ``gold_of(example)`` and a script may call ``read_split`` before any kernel exists;
both ask the example's kind (:mod:`clue_core.kinds`) where its gold is and how it is checked. A
kernel declares the kinds it checked; with none made yet, the installed plugins' ``clue_kinds`` are
read once. An object of no declared kind has no gold (it is never an error to ask).
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

from clue_core import kinds
from clue_core.examples import ClassificationExample, SpanExample, gold_of
from clue_core.kernel import Kernel


@dataclasses.dataclass(frozen=True, slots=True)
class Again(SpanExample):
    """A span question of a kind of its own (``span-again``)."""


def test_without_any_kernel_the_installed_plugins_kinds_are_read() -> None:
    code = ("import sys\n"
            "from clue_tasks_classic import hooks\n"
            "from clue_core.data import sample_dir\n"
            "from clue_core.examples import gold_of\n"
            "from clue_core.reading import read_split\n"
            "task = next(t for t in hooks.clue_tasks() if t.name == 'afqmc')\n"
            "part = read_split(task, sample_dir(task), 'dev')\n"
            "assert 'clue_core.kernel' not in sys.modules\n"
            "print(len(part), gold_of(part.examples[0]) in task.labels)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    count, labelled = done.stdout.split()
    assert int(count) > 0 and labelled == "True"


def test_a_kernel_declares_the_kinds_it_checked(isolated_kernel: Kernel) -> None:
    spec = isolated_kernel.kind("classification")
    assert kinds.kind_spec("classification") == spec
    example = ClassificationExample(1, "text", label="1")
    assert gold_of(example) == "1"
    other = dataclasses.replace(spec, gold="text")
    try:  # another kernel's spec for a built-in name does not replace the built-in plugin's for code without one
        kinds.declare([other])
        assert kinds.kind_spec("classification") == spec and gold_of(example) == "1"
    finally:
        kinds.declare([spec])
    with kinds.using({**isolated_kernel.kinds, "classification": other}):  # that kernel's run reads its own
        assert kinds.kind_spec("classification") == other and gold_of(example) == "text"
    assert gold_of(example) == "1"  # and what examples found outside it is found again


def test_a_kernels_spec_for_a_name_of_its_own_replaces_anothers(isolated_kernel: Kernel) -> None:
    """A name the built-in plugin does not declare: the last kernel's spec is what code without one finds."""
    spec = dataclasses.replace(isolated_kernel.kind("span"), name="span-again", example=f"{__name__}:Again")
    example = Again("q", "context", "question", answers=(("text", 0),))
    try:
        kinds.declare([spec])
        assert gold_of(example) == (("text", 0),)
        kinds.declare([dataclasses.replace(spec, gold="title")])
        assert gold_of(example) == ""
    finally:
        kinds._DECLARED.pop("span-again", None)
        kinds._BY_TYPE.clear()


def test_an_object_of_no_kind_has_no_gold() -> None:
    assert gold_of(object()) is None and gold_of(object()) is None  # the second ask is the cached answer


def test_a_prediction_record_holds_the_gold_as_its_kind_records_it(isolated_kernel: Kernel) -> None:
    from clue_core.examples import Prediction, SpanExample
    from clue_core.record_write import prediction_records

    span = SpanExample("q1", "context", "question", answers=(("58平方公里", 3), ("约为58平方公里", 1)))
    label = ClassificationExample(2, "text", label="1")
    records = prediction_records([span, label], [Prediction("q1", "58"), Prediction(2, "0")])
    # the span kind's record_gold keeps the texts; a kind without one records its gold as it is
    assert [r["gold"] for r in records] == [["58平方公里", "约为58平方公里"], "1"]
    from clue_core.plugin import recorded_gold  # what a plugin comparing records with examples asks

    assert [recorded_gold(span), recorded_gold(label)] == [r["gold"] for r in records]
    spec = isolated_kernel.kind("span")
    # the record is the kind's to write: without record_gold the (text, offset) pairs are kept as they are
    with kinds.using({**isolated_kernel.kinds, "span": dataclasses.replace(spec, record_gold=None)}):
        assert prediction_records([span], [Prediction("q1", "58")])[0]["gold"] == span.answers


def test_a_kinds_record_gold_must_be_a_reference(isolated_kernel: Kernel) -> None:
    from clue_core.plugin import KindSpec, hookimpl

    class BadKind:
        @hookimpl
        def clue_kinds(self) -> list[KindSpec]:
            return [KindSpec("odd", "an odd kind", "clue_core.plugin:SpanExample", "a text",
                             "clue_builtin.kinds:span_prediction", record_gold="texts")]

    info = isolated_kernel.register(BadKind(), "bad-kind")
    assert info.status == "error" and "record_gold must be 'module:attr', got 'texts'" in str(info.error)
