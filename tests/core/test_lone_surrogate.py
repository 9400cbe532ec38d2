"""A lone surrogate (the JSON escape ``\\ud800``) in a CLUE data file is refused when the file is read:
one line naming the file, line and field, exit 2, and no staging folder. It was read without a word,
then llm-tiny and hf-tiny died with tracebacks (UnicodeEncodeError) and left the staging folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clue_core.errors import InputError
from clue_core.jsonio import iter_jsonl, read_json
from clue_core.kernel import Kernel


def _broken_copy(tmp_path: Path, task_name: str, name: str, old: str, new: str) -> tuple[Path, Path]:
    """A copy of ``task_name``'s bundled sample whose file ``name`` has ``old`` replaced (once) by ``new``."""
    from clue_core.data import sample_dir

    data = tmp_path / "data"
    shutil.copytree(sample_dir(Kernel().task(task_name)), data)
    text = (data / name).read_text(encoding="utf-8")
    assert old in text
    (data / name).write_text(text.replace(old, new, 1), encoding="utf-8")
    return data, data / name


@pytest.mark.parametrize("model", ["hf-tiny", "llm-tiny", "baseline"])
def test_a_lone_surrogate_in_a_jsonl_field_is_one_line_and_leaves_nothing(run_cli, tmp_path, model):
    data, path = _broken_copy(tmp_path, "afqmc", "dev.json", '"sentence2": "借呗额度被下调是什么原因"',
                              '"sentence2": "借呗额度被\\ud800下调是什么原因"')
    out = tmp_path / "runs"
    result = run_cli("run", "afqmc", "-m", model, "--data-dir", data, "-o", out)
    assert result.exit_code == 2, result.output
    assert result.output == (f"error: {path}:2: field 'sentence2': holds the escape \\ud800, a lone surrogate (half "
                             f"of a UTF-16 pair) that is not text; fix or remove it\n")
    assert not out.exists()  # no run folder, no staging folder


def test_a_lone_surrogate_in_a_json_document_names_its_line_and_field(run_cli, tmp_path):
    data, path = _broken_copy(tmp_path, "c3", "m-dev.json", '"下棋"', '"下棋\\udc00"')
    out = tmp_path / "runs"
    result = run_cli("run", "c3", "-m", "llm-tiny", "--data-dir", data, "-o", out)
    assert result.exit_code == 2, result.output
    line = next(n for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "\\udc00" in text)
    assert result.output == (f"error: {path}:{line}: field '[0][1][0].choice[3]': holds the escape \\udc00, a lone "
                             f"surrogate (half of a UTF-16 pair) that is not text; fix or remove it\n")
    assert not out.exists()


def test_check_names_the_lone_surrogate(run_cli, tmp_path):
    data, path = _broken_copy(tmp_path, "afqmc", "train.json", '"label": "1"}', '"label": "1", "x": ["\\uDBFF"]}')
    result = run_cli("check", "afqmc", "--data-dir", data)
    assert result.exit_code == 2
    line = next(n for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "\\uDBFF" in text)
    assert f"error: afqmc: {path}:{line}: field 'x[0]': holds the escape \\udbff, a lone surrogate" in result.stderr


@pytest.mark.parametrize("text", ['"\\ud83d\\ude00"', '"\\\\ud800"', '"\\u4e2d"', '"plain"'])
def test_pairs_escaped_backslashes_and_other_escapes_are_text(tmp_path, text):
    lines = tmp_path / "a.jsonl"
    lines.write_text(f'{{"a": {text}}}\n', encoding="utf-8")
    assert len(list(iter_jsonl(lines))) == 1
    document = tmp_path / "a.json"
    document.write_text(f'{{"a": [\n{text}\n]}}', encoding="utf-8")
    assert read_json(document)["a"]


def test_a_lone_surrogate_in_a_key_is_named_printably(tmp_path):
    lines = tmp_path / "a.jsonl"
    lines.write_text('{"ok": 1}\n{"\\ud800": 1}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(iter_jsonl(lines))
    assert (caught.value.line, caught.value.field) == (2, "\\ud800")
    str(caught.value).encode("utf-8")  # the message itself is text
