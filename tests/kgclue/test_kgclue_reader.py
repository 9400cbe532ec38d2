"""KgCLUE's reader and knowledge base: the official files' quirks, one error line for a bad answer,
candidates of the longest entity name, and the kind's checks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clue_core.plugin import DataError, InputError, read_split, resolve
from clue_tasks_kgclue import hooks
from clue_tasks_kgclue.knowledge import candidates_for, entity_name, question_entity
from clue_tasks_kgclue.reader import read
from clue_tasks_kgclue.triples import KbqaExample, check_example, check_prediction, gold

SAMPLE = Path(hooks.__file__).parent / "samples" / "kgclue"


def _copy_sample(tmp_path: Path) -> Path:
    folder = tmp_path / "datasets"
    shutil.copytree(SAMPLE, folder)
    (folder / "Knowledge.txt").unlink()
    return folder


def test_the_sample_reads_as_the_official_files_are() -> None:
    dev = read(hooks.KGCLUE, SAMPLE, "dev")
    assert len(dev.examples) == 16 and dev.files == (str(SAMPLE / "dev.json"),)
    first = dev.examples[0]
    assert first == KbqaExample(0, "刘晓华主要讲什么课啊？",
                                ("刘晓华（广东工业大学教授）", "主讲课程", "《固体物理》"), ())
    assert dev.where[0] == f"{SAMPLE / 'dev.json'}:1"
    assert dev.examples[-1].answer == ("DB3轰炸机", "翼展", "\xa021.44 米")  # kept as written: the metric normalises
    public = read(hooks.KGCLUE, SAMPLE, "test_public").examples
    assert public[14].id == 350 and public[14].answer[2].startswith("\xa0")
    test = read(hooks.KGCLUE, SAMPLE, "test").examples
    assert [e.id for e in test] == list(range(16)) and all(e.answer is None for e in test)
    assert gold(first) == "刘晓华（广东工业大学教授） ||| 主讲课程 ||| 《固体物理》" and gold(test[0]) is None


def test_test_json_without_a_trailing_newline_and_with_an_answer_reads(tmp_path: Path) -> None:
    folder = _copy_sample(tmp_path)
    lines = (folder / "test.json").read_text(encoding="utf-8").splitlines()
    lines[1] = json.dumps({"id": 1, "question": "q", "answer": "no separator"}, ensure_ascii=False)
    (folder / "test.json").write_text("\n".join(lines), encoding="utf-8")  # as the official file: no final \n
    test = read(hooks.KGCLUE, folder, "test").examples
    assert len(test) == 16 and test[1].answer is None  # never scored, whatever it holds


@pytest.mark.parametrize("answer, message", [
    ("刘晓华 主讲课程", "no ' ||| ' separator"),
    ("刘晓华|||主讲课程|||《固体物理》", "no ' ||| ' separator ('|||' needs a space each side)"),
    ("a ||| b", "2 parts on ' ||| ', not 3"),
    ("a ||| b ||| c ||| d", "4 parts on ' ||| ', not 3"),
])
def test_a_bad_gold_answer_is_one_line_naming_file_line_and_field(run_cli, kernel, tmp_path: Path, answer: str,
                                                                  message: str) -> None:
    folder = _copy_sample(tmp_path)
    lines = (folder / "dev.json").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[2])
    record["answer"] = answer
    lines[2] = json.dumps(record, ensure_ascii=False)
    (folder / "dev.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_cli("run", "kgclue", "--model", "kg-first-candidate", "--data-dir", folder, "-o", tmp_path / "out",
                     kernel=kernel)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {folder / 'dev.json'}:3: field 'answer': expected 'subject ||| predicate ||| object', "
        f"got {answer!r}: {message}"]
    assert not (tmp_path / "out").exists()


def test_a_missing_answer_outside_test_is_an_error(tmp_path: Path) -> None:
    folder = _copy_sample(tmp_path)
    (folder / "test_public.json").write_text('{"id": 0, "question": "q"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"test_public.json:1: field 'answer': missing"):
        read(hooks.KGCLUE, folder, "test_public")


def test_entity_names_and_the_longest_match() -> None:
    assert entity_name("刘晓华（广东工业大学教授）") == "刘晓华"
    assert entity_name("BOT（dota游戏中飞鞋的简称。）") == "BOT"
    assert entity_name("a（b）（c）") == "a（b）（c）" and entity_name("a（b") == "a（b"  # es.py's rule
    # train 5: the sample's KB has an entity named 是什么, longer than 冯慧: the lookup takes it
    assert question_entity("冯慧专业是什么方向？", ["冯慧", "是什么", "向"]) == "是什么"
    # dev 2: 龙编站 and 是什么 have one length: the earlier wins
    assert question_entity("我很好奇龙编站的坐标是什么啊？", ["是什么", "龙编站"]) == "龙编站"
    assert question_entity("no name", ["x"]) is None


def test_candidates_are_every_disambiguation_of_the_entity_in_file_order(tmp_path: Path) -> None:
    kb = tmp_path / "Knowledge.txt"
    kb.write_text("刘晓华（教授）\t主讲课程\t《固体物理》 \n\n刘晓华（演员）\t代表作品\t某剧\n刘晓\t性别\t男\n"
                  "华\t类型\t字\n", encoding="utf-8")
    found = candidates_for(kb, ["刘晓华主要讲什么课啊？", "没有"])
    assert found == [(("刘晓华（教授）", "主讲课程", "《固体物理》"), ("刘晓华（演员）", "代表作品", "某剧")), ()]


def test_a_knowledge_line_with_fewer_than_three_fields_is_one_error(tmp_path: Path) -> None:
    kb = tmp_path / "Knowledge.txt"
    kb.write_text("a\tb\tc\na b c\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        candidates_for(kb, ["a"])
    assert str(error.value) == f"{kb}:2: expected 'head<TAB>relation<TAB>tail', got 1 field(s)"


def test_a_knowledge_file_not_utf8_names_the_line_of_the_bad_byte(tmp_path: Path) -> None:
    """The decoder reads ahead in chunks, so the line must come from the line holding the byte, not from
    how far the text reader had got (it named line 1 of a 300-line file whose line 250 was Latin-1)."""
    kb = tmp_path / "Knowledge.txt"
    lines = [f"实体{i}\t关系\t值{i}".encode() for i in range(300)]
    lines[249] = "é\tb\tc".encode("latin-1")
    kb.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(InputError) as error:
        candidates_for(kb, ["实体1"])
    assert str(error.value) == f"{kb}:250: not UTF-8 text (invalid continuation byte)"
    kb.write_bytes(b"\xef\xbb\xbf" + b"\n".join(lines[:3]) + b"\r\n")  # a BOM and CRLF still read
    assert candidates_for(kb, ["实体1是什么"]) == [(("实体1", "关系", "值1"),)]


def test_a_knowledge_folder_or_an_empty_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"cannot read the knowledge file \(Is a directory\)"):
        candidates_for(tmp_path, ["a"])
    (tmp_path / "Knowledge.txt").write_text("", encoding="utf-8")
    assert candidates_for(tmp_path / "Knowledge.txt", ["a", "b"]) == [(), ()]


def test_the_kb_setting_finds_its_file_and_joins_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _copy_sample(tmp_path)
    (folder / "knowledge").mkdir()
    shutil.copy(SAMPLE / "Knowledge.txt", folder / "knowledge" / "Knowledge.txt")
    monkeypatch.chdir(tmp_path)
    part = read_split(hooks.KGCLUE, folder, "dev", {"kb": "Knowledge.txt"})  # found in the data folder
    kb = (folder / "knowledge" / "Knowledge.txt").resolve()
    assert part.files == (str(folder / "dev.json"), str(kb))
    assert part.notes == ("dev.json: 16 of 16 question(s) with candidate triples from Knowledge.txt",)
    assert part.examples[0].candidates == (("刘晓华（广东工业大学教授）", "主讲课程", "《固体物理》"),)
    here = read_split(hooks.KGCLUE, folder, "dev", {"kb": "datasets/knowledge/Knowledge.txt"})  # from the cwd
    assert here.files[1] == str(kb)
    assert read_split(hooks.KGCLUE, folder, "dev").files == (str(folder / "dev.json"),)  # no kb: no candidates
    with pytest.raises(DataError, match=r"^nowhere.txt: no such knowledge file \(setting kb"):
        read_split(hooks.KGCLUE, folder, "dev", {"kb": "nowhere.txt"})
    with pytest.raises(DataError, match=r"^datasets: a folder, not a knowledge file \(setting kb"):
        read_split(hooks.KGCLUE, folder, "dev", {"kb": "datasets"})  # was 'no such knowledge file'


def test_a_missing_knowledge_file_is_one_error_line(run_cli, kernel, tmp_path: Path) -> None:
    result = run_cli("run", "kgclue", "--model", "kg-first-candidate", "--sample", "--set", "kb=/no/Knowledge.txt",
                     "-o", tmp_path / "out", kernel=kernel)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: /no/Knowledge.txt: no such knowledge file (setting kb: a path to KgCLUE's Knowledge.txt, "
        "or a file name found in the data folder)"]


def test_the_kinds_checks(kernel) -> None:
    kind = kernel.kind("kbqa_triple")
    assert resolve(kind.check_prediction) is check_prediction and resolve(kind.gold) is gold
    example = KbqaExample(0, "q", ("s", "p", "o"))
    assert check_prediction(None, example, "s ||| p ||| o") is None
    assert check_prediction(None, example, "anything: malformed is scored, not refused") is None
    assert check_prediction(None, example, ["s", "p", "o"]) == (
        "expected an answer string 'subject ||| predicate ||| object', got list")
    assert check_example(None, example) is None
    assert check_example(None, KbqaExample(0, "q", ("s", "p"))) == (  # type: ignore[arg-type]
        "answer", "expected three strings (subject, predicate, object), got ('s', 'p')")
    assert check_example(None, KbqaExample(0, "q", None, (("s", "p"),))) == (  # type: ignore[arg-type]
        "candidates", "expected a tuple of (subject, predicate, object) string triples")


def test_the_hook_module_is_cheap_to_import() -> None:
    code = ("import sys, clue_tasks_kgclue.hooks; "
            "print(sorted(m for m in sys.modules if m.startswith('clue_tasks_kgclue') or m in ('torch', 'numpy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['clue_tasks_kgclue', 'clue_tasks_kgclue.hooks']"
