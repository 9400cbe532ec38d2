"""superclue-cpif: each rule of the official evaluator, on hand-written checkers and answers.

The expected verdicts are what SuperCLUE-CPIFOpen's superclue-evaluation.py gives for the same
checker and answer (worked out by its rules, which cpif_rules documents); the checks run in the
sandbox's plain-process mode, which every machine has.
"""

from __future__ import annotations

import pytest

from clue_core.plugin import Prediction
from clue_tasks_superclue import cpif_metric, cpif_rules
from clue_tasks_superclue.cpif_reader import CHECK_TYPE
from clue_tasks_superclue.examples import OpenQuestionExample

SETTINGS = {"sandbox": "process", "sandbox_timeout": 5.0, "sandbox_workers": 2}


def checker(body: str) -> str:
    return "def check_response(response):\n" + "".join(f"    {line}\n" for line in body.splitlines())


def verdicts(cases: list[tuple[str, str | None]]) -> list[dict]:
    examples = [OpenQuestionExample(id=i, dimension="d", category="c", turns=(f"q{i}",),
                                    constraints=({"type": CHECK_TYPE, "check_code": code},))
                for i, (code, _) in enumerate(cases)]
    predictions = [None if answer is None else Prediction(i, answer, None, None) for i, (_, answer) in enumerate(cases)]
    result = cpif_metric.compute(examples, predictions, settings=SETTINGS)
    assert result.totals["prompts"] == len(cases)
    return [dict(d) for d in result.details]


EQUALS = checker("return {'check_code': response == EXPECTED, 'reason': repr(response)}")


def equals(expected: str) -> str:
    return EQUALS.replace("EXPECTED", repr(expected))


@pytest.mark.parametrize(("answer", "seen"), [
    ("<think>想一想</think>\n  【答案开始】好【答案结束】 \n", "【答案开始】好【答案结束】"),  # after the last </think>
    ("<think>a</think>b</think>  c", "c"),
    ("第一行\n第二行", "第一行\n第二行"),                   # a newline is escaped as \n: the checker sees a newline
    ("a\\tb", "a\tb"),                                       # a written \t is read as an escape: a tab
    ("a\\\\b", "a\\b"),                                      # a written \\ becomes one backslash
    ("it's", "it's"),                                        # single quotes are escaped
    ('他说"好"', '他说"好"'),                                 # double quotes need no escape single-quoted
    ("x\\'y", "x\\'y"),                                      # \' ends the single-quoted literal: retried double-quoted
    ("\\u4e2d", "中"),
])
def test_the_answer_the_checker_sees(answer: str, seen: str) -> None:
    (found,) = verdicts([(equals(seen), answer)])
    assert found == {"passed": True, "reason": repr(seen), "checker_error": False}


@pytest.mark.parametrize("answer", ["abc\\", 'x\\\'"y', "a\rb", "\\x4g", "a\x00b", "\\N{NO SUCH NAME}"])
def test_answers_no_quoting_parses_are_checker_errors(answer: str) -> None:
    (found,) = verdicts([(equals(answer), answer)])
    assert found["passed"] is False and found["checker_error"] is True


def test_an_answer_that_would_be_code_is_never_run() -> None:
    # single-quoted, the evaluator would exec `response = 'a\\'+str(7)+"b"#'`: code that calls str(7)
    answer = 'a\\\'+str(7)+"b"#'
    single, double = cpif_rules.candidates(answer)
    assert single.value is None and "not a string literal" in (single.error or "")
    assert double.value is None
    (found,) = verdicts([(checker("return {'check_code': True}"), answer)])
    assert found["passed"] is False and found["checker_error"] is True


def test_checker_rules() -> None:
    cases = [
        (checker("m = re.search(r'(\\d+)', response)\nreturn {'check_code': json.loads(m.group(1)) == 42}"), "答42"),
        (checker("return {\n    'check_code': True,\n    'reason': 'braces'\n}") + "}", "x"),   # stray } stripped
        ("def helper():\n    return True\n\n" + checker("return {'check_code': helper()}"), "x"),  # not in scope
        (checker("return 'ok'"), "x"),                           # not a dict: the evaluator's s['check_code'] raises
        (checker("return None"), "x"),
        (checker("return {'reason': 'no verdict'}"), "x"),       # KeyError there too
        (checker("return {'check_code': 1}"), "x"),              # 1 == True
        (checker("return {'check_code': 'yes'}"), "x"),          # truthy, but not == True
        (checker("raise ValueError('boom')"), "x"),
        (checker("import sys\nsys.exit(0)"), "x"),               # SystemExit: the evaluator's bare except catches it
        (checker("return {'check_code': True, 'reason': 7}"), "x"),
        (checker("return {'check_code': True}"), None),          # no answer at all
        ("def check_response(response:\n    return {'check_code': True}", "x"),  # checker that does not compile
    ]
    found = verdicts(cases)
    passed = [f["passed"] for f in found]
    errors = [f["checker_error"] for f in found]
    assert passed == [True, True, False, False, False, False, True, False, False, False, True, False, False]
    assert errors == [False, False, True, True, True, True, False, False, True, True, False, False, True]
    assert found[2]["reason"].startswith("checker error: NameError")
    assert found[10]["reason"] == "7" and found[11]["reason"] == "no answer"


def test_rule_helpers() -> None:
    assert cpif_rules.escaped("a\nb'c\"d") == "a\\nb\\'c\"d"
    assert cpif_rules.checker_source("}def f():\n    return {}\n}}") == "def f():\n    return {}\n"
    assert cpif_rules.checker_source("{}}") == "{"
    balanced = "x = {}\n}"
    assert cpif_rules.checker_source(balanced + "{") == balanced + "{"
    assert cpif_rules.final_answer("  no think  ") == "no think"


def test_accuracy_and_counts() -> None:
    ok, bad = checker("return {'check_code': True}"), checker("return {'check_code': False, 'reason': 'no'}")
    examples = [OpenQuestionExample(id=i, dimension="d", category="c", turns=(f"q{i}",),
                                    constraints=({"type": CHECK_TYPE, "check_code": code},))
                for i, code in enumerate([ok, ok, bad, checker("1/0")])]
    result = cpif_metric.compute(examples, [Prediction(i, "x", None, None) for i in range(4)], settings=SETTINGS)
    assert result.totals == {"accuracy": 50.0, "prompts": 4.0, "passed": 2.0, "checker_errors": 1.0,
                             "sandbox_bwrap": 0.0, "sandbox_landlock": result.totals["sandbox_landlock"]}
    assert result.per_example["accuracy"] == [100.0, 100.0, 0.0, 0.0]
    assert [set(d) for d in result.details] == [{"passed", "reason", "checker_error"}] * 4
