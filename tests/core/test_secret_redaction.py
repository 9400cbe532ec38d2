"""Secrets never reach a file or a terminal: the registry (:mod:`clue_core.redaction`), the kernel's
writers (``write_json``, ``write_jsonl``, ``atomic_open``), the declarations that point at the
environment (``Setting.env``, ``Setting.secret_env``) and the command line's output.

The runs end to end (a recorded answer, a served answer and the LLM cache, a sweep's summary, a
report) are in ``tests/models_llm/test_secret_redaction_runs.py``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from clue_core import redaction
from clue_core.atomic import atomic_open, write_json, write_jsonl
from clue_core.plugin import ClueError, CommandSpec, Setting, hookimpl
from clue_core.settings import REDACTED

KEY = "sk-test-0123456789abcdef"
#: A secret with characters JSON, repr and HTML escape (a quote, a slash, a backslash, Chinese).
ODD = 'pa"ss/wörd\\密钥-0123'


@pytest.fixture(autouse=True)
def empty_registry() -> Iterator[None]:
    """Each test starts and ends with no secret: the registry lives as long as the process."""
    redaction.reset()
    yield
    redaction.reset()


def test_the_marker_is_the_settings_marker() -> None:
    assert redaction.MARKER == REDACTED == "***"


def test_nothing_is_changed_while_no_secret_is_registered() -> None:
    data = {"a": [KEY, 1]}
    assert not redaction.active()
    assert redaction.redact(data) is data and redaction.redact_text(KEY) == KEY


def test_a_value_shorter_than_eight_characters_is_never_a_secret() -> None:
    # "abc" or a 7-digit number replaced everywhere would mangle scores, ids and words
    assert not redaction.register("abc") and not redaction.register("1234567") and not redaction.register(None)
    assert not redaction.active()
    assert redaction.redact_text("abc 1234567") == "abc 1234567"
    assert redaction.register("12345678")
    assert redaction.redact_text("x12345678y abc") == "x***y abc"


def test_a_value_with_surrounding_blanks_hides_its_stripped_text_too() -> None:
    assert redaction.register(f" {KEY}\n")
    assert redaction.redact_text(f"Bearer {KEY}.") == "Bearer ***."


def test_longest_secret_first_and_every_occurrence() -> None:
    redaction.register("sk-12345678")
    redaction.register("sk-12345678-extra")
    assert redaction.redact_text("a sk-12345678-extra b sk-12345678 c") == "a *** b *** c"


def test_values_keys_lists_and_numbers_are_redacted() -> None:
    redaction.register(KEY)
    redaction.register("98765432")
    data = {"reason": f"found {KEY}", KEY: [KEY, ("t", KEY)], "n": 98765432, "ok": 7, "flag": True}
    assert redaction.redact(data) == {"reason": "found ***", "***": ["***", ["t", "***"]], "n": "***", "ok": 7,
                                      "flag": True}


@pytest.mark.parametrize("dump", [
    lambda s: s,
    lambda s: json.dumps(s, ensure_ascii=False),
    lambda s: json.dumps(s),
    repr,
    lambda s: __import__("html").escape(s),
    lambda s: __import__("urllib.parse").parse.quote(s, safe=""),
    lambda s: __import__("urllib.parse").parse.quote(s),  # the default keeps '/': a URL's path
], ids=["raw", "json", "json-ascii", "repr", "html", "url", "url-path"])
def test_a_secret_is_caught_however_it_was_serialised(dump) -> None:
    redaction.register(ODD)
    text = f"before {dump(ODD)} after"
    assert ODD not in redaction.redact_text(text) and dump(ODD).strip("'\"") not in redaction.redact_text(text)
    assert "***" in redaction.redact_text(text)


def test_write_json_and_write_jsonl_redact_and_stay_valid_json(tmp_path) -> None:
    redaction.register(ODD)
    redaction.register(KEY)
    document = {"reason": f"the key is {KEY}", "odd": f"<{ODD}>", ODD: 1}
    write_json(tmp_path / "a.json", document)
    write_jsonl(tmp_path / "a.jsonl", [document, {"id": 2, "prediction": KEY}])
    for name in ("a.json", "a.jsonl"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert KEY not in text and ODD not in text and json.dumps(ODD, ensure_ascii=False)[1:-1] not in text
    assert json.loads((tmp_path / "a.json").read_text(encoding="utf-8")) == {
        "reason": "the key is ***", "odd": "<***>", "***": 1}
    lines = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines[1] == {"id": 2, "prediction": "***"}


def test_write_jsonl_redacts_the_one_line_of_a_batch_that_holds_a_secret(tmp_path) -> None:
    redaction.register(KEY)
    records = [{"id": i, "prediction": KEY if i == 700 else f"答案{i}", "scores": [0.5]} for i in range(1500)]
    write_jsonl(tmp_path / "p.jsonl", records)
    lines = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines == [{**r, "prediction": "***"} if r["id"] == 700 else r for r in records]


def test_atomic_open_redacts_text_across_writes_and_bytes(tmp_path) -> None:
    redaction.register(KEY)
    with atomic_open(tmp_path / "page.md") as handle:
        for piece in ("# ", KEY[:5], KEY[5:], " end"):  # a secret written in two pieces
            handle.write(piece)
    assert (tmp_path / "page.md").read_text(encoding="utf-8") == "# *** end"
    with atomic_open(tmp_path / "data.json") as handle:
        json.dump({"deep": [{"key": KEY}]}, handle)  # many small writes
    assert json.loads((tmp_path / "data.json").read_text(encoding="utf-8")) == {"deep": [{"key": "***"}]}
    with atomic_open(tmp_path / "page.html", "wb") as handle:
        handle.write(f"<p>{KEY}</p>".encode())
    assert (tmp_path / "page.html").read_bytes() == b"<p>***</p>"


def test_a_stream_holds_back_only_what_may_be_a_cut_secret() -> None:
    redaction.register(KEY)
    out = io.StringIO()
    stream = redaction.RedactingStream(out)
    stream.write("progress 10%\r")
    assert out.getvalue().startswith("progress")  # most of a line is shown at once
    stream.write("line " + KEY[:9])
    stream.write(KEY[9:] + "\n")
    stream.flush()
    assert KEY not in out.getvalue() and out.getvalue().endswith("line ***\n")


def test_declarations_point_at_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("CLUE_TEST_TOKEN", "token-0123456789")
    monkeypatch.setenv("CLUE_TEST_KEY_VAR", "key-value-0123456789")
    monkeypatch.setenv("CLUE_TEST_OTHER", "other-0123456789")
    monkeypatch.setenv("CLUE_TEST_PLAIN", "plain-0123456789")
    declared = (Setting("token", str, "", "falls back to $CLUE_TEST_TOKEN", secret=True, env="CLUE_TEST_TOKEN"),
                Setting("key_env", str, "CLUE_TEST_KEY_VAR", "names the key's variable", secret_env=True),
                Setting("url", str, "", "not a secret", env="CLUE_TEST_PLAIN"))
    redaction.register_declared(declared)
    text = "token-0123456789 key-value-0123456789 other-0123456789 plain-0123456789"
    assert redaction.redact_text(text) == "*** *** other-0123456789 plain-0123456789"
    # a run that names another variable: that one's value is a secret too
    redaction.register_settings({s.name: s for s in declared}, {"token": "", "key_env": "CLUE_TEST_OTHER"})
    assert redaction.redact_text(text) == "*** *** *** plain-0123456789"


# -- the command line ---------------------------------------------------------------------

@click.command()
def leaky() -> None:
    """Print a secret (stdout, stderr, print), then fail quoting it."""
    import os
    import sys

    secret = os.environ["CLUE_TEST_SECRET"]
    click.echo(f"the secret is {secret}")
    click.echo(f"stderr has {secret}", err=True)
    print("printed", secret, file=sys.stderr)  # a library's own line, not click's
    raise ClueError(f"cannot use {secret!r}")


class Leaky:
    @hookimpl
    def clue_commands(self) -> list[CommandSpec]:
        return [CommandSpec("leaky", "Leak a secret.", f"{__name__}:leaky")]

    @hookimpl
    def clue_models(self) -> list:
        from clue_core.plugin import ModelSpec

        return [ModelSpec("leaky-model", "clue_builtin.baseline:make_learner", ("classification",), "leaks",
                          settings=(Setting("key_env", str, "CLUE_TEST_SECRET", "names the key", secret_env=True),))]


def test_everything_a_command_prints_is_redacted(run_cli, monkeypatch, isolated_kernel) -> None:
    monkeypatch.setenv("CLUE_TEST_SECRET", KEY)
    isolated_kernel.register(Leaky(), "leaky")
    redaction.register_kernel(isolated_kernel)  # what loading the entry points does
    result = run_cli("leaky", kernel=isolated_kernel)
    assert result.exit_code == 2
    assert KEY not in result.output
    assert "the secret is ***" in result.output and "stderr has ***" in result.output
    assert "printed ***" in result.output
    assert "error: cannot use '***'" in result.output


@click.command()
def crashing() -> None:
    """Fail with a bug (not a ClueError) whose message quotes a secret, raised from another."""
    try:
        raise ValueError(f"inner {KEY}")
    except ValueError as exc:
        raise RuntimeError(f"outer {KEY}") from exc


class Crashing:
    @hookimpl
    def clue_commands(self) -> list[CommandSpec]:
        return [CommandSpec("crashing", "Crash.", f"{__name__}:crashing")]


def test_a_traceback_quotes_no_secret(run_cli, isolated_kernel) -> None:
    redaction.register(KEY)
    isolated_kernel.register(Crashing(), "crashing")
    with pytest.raises(RuntimeError) as raised:  # Python prints it after the command: its message is redacted
        run_cli("crashing", kernel=isolated_kernel)
    assert str(raised.value) == "outer ***" and str(raised.value.__cause__) == "inner ***"


def test_a_click_usage_error_is_redacted(run_cli, monkeypatch) -> None:
    redaction.register(KEY)
    result = run_cli("run", "afqmc", "--model", "baseline", "--data-dir", f"/nowhere/{KEY}")
    assert result.exit_code == 2 and KEY not in result.output and "***" in result.output


def test_loading_the_entry_points_registers_declared_credentials(monkeypatch) -> None:
    from clue_core.kernel import Kernel

    monkeypatch.setenv("HF_TOKEN", "hf_0123456789abcdef")
    Kernel()
    assert redaction.redact_text("hf_0123456789abcdef") == "***"


def test_any_credential_in_the_environment_is_registered_by_its_name(monkeypatch) -> None:
    from clue_core.kernel import Kernel

    monkeypatch.setenv("CLUE_TEST_GITHUB_TOKEN", "ghp_0123456789abcdef")
    monkeypatch.setenv("CLUE_TEST_AWS_SECRET", "aws/0123456789+abcdef")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false-but-long")  # not a credential's name
    monkeypatch.setenv("CLUE_TEST_KEYBOARD", "keyboard-layout")
    Kernel()
    assert redaction.redact_text("ghp_0123456789abcdef aws/0123456789+abcdef false-but-long keyboard-layout") == (
        "*** *** false-but-long keyboard-layout")


def test_a_short_environment_value_is_left_alone(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_1")
    from clue_core.kernel import Kernel

    Kernel()
    write_json(tmp_path / "a.json", {"id": "hf_1"})
    assert json.loads((tmp_path / "a.json").read_text(encoding="utf-8")) == {"id": "hf_1"}


# -- the Python API -----------------------------------------------------------------------

def test_api_run_echoes_writes_and_raises_no_environment_credential(tmp_path, monkeypatch) -> None:
    from clue_core import api

    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_TOKEN", KEY)  # read by the Hugging Face hub itself: no plugin declares it
    lines: list[str] = []
    out = tmp_path / KEY / "out"  # a path holding it: each progress line names the run folder
    api.run("afqmc", model="baseline", sample=True, output_dir=out, echo=lines.append)
    assert lines and not [line for line in lines if KEY in line] and any("***" in line for line in lines)
    with pytest.raises(ClueError) as raised:  # an error of planning quotes it: the message does not
        api.run("afqmc", model="baseline", data_dir=tmp_path / KEY / "no-data", output_dir=tmp_path / "o2",
                echo=None)
    assert KEY not in str(raised.value) and "***" in str(raised.value)


# -- overlapping secrets, and what an undeclared *_KEY variable may hold --------------------

def test_overlapping_secrets_leave_no_part_of_either() -> None:
    redaction.register("abcdefgh")
    redaction.register("efghijkl")  # starts inside the first: a plain sub left 'ijkl' showing
    assert redaction.redact_text("<abcdefghijkl> abcdefgh") == "<***> ***"
    assert redaction.redact_bytes(b"<abcdefghijkl>") == b"<***>"
    assert redaction.redact({"a": "abcdefghijkl"}) == {"a": "***"}


@pytest.mark.parametrize("parts", [["abcd", "efghijkl"], ["abcdefgh", "ijkl", " tail"], ["xabcdefgh", "ijkl\n"]])
def test_overlapping_secrets_split_over_writes(parts: list[str]) -> None:
    redaction.register("abcdefgh")
    redaction.register("efghijkl")
    out = io.StringIO()
    stream = redaction.RedactingStream(out)
    for part in parts:
        stream.write(part)
    stream.flush()
    assert "ijkl" not in out.getvalue() and "abcd" not in out.getvalue() and "***" in out.getvalue()


@pytest.mark.parametrize("value", ["/usr/local/bin", "~/keys/site.key", "./keys/site.key", r"C:\keys\site.key",
                                   "accuracy", "PRIORITY", "12345678", "1e-10000", "infinity"])
def test_an_undeclared_credential_variable_holding_a_path_number_or_word_is_not_a_secret(
        monkeypatch, tmp_path: Path, value: str) -> None:
    from clue_core.kernel import Kernel

    monkeypatch.setenv("CLUE_TEST_SSL_KEY", value)  # hidden, every path under it and every 'accuracy' was ***
    monkeypatch.setenv("CLUE_TEST_GITHUB_TOKEN", "ghp_0123456789abcdef")
    monkeypatch.setenv("CLUE_TEST_SERVICE_KEY", "qwhzxkplmnbvcxzasdfghjkl")  # 24 letters: a token, not a word
    Kernel()
    text = f"{value}/tnews accuracy 12345678 ghp_0123456789abcdef qwhzxkplmnbvcxzasdfghjkl"
    assert redaction.redact_text(text) == f"{value}/tnews accuracy 12345678 *** ***"


def test_an_existing_path_is_not_a_secret_but_a_declared_one_is(monkeypatch, tmp_path: Path) -> None:
    from clue_core.kernel import Kernel

    (tmp_path / "keys").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLUE_TEST_TLS_KEY", "keys")  # a relative folder (and a word): no secret
    monkeypatch.setenv("CLUE_TEST_DEPLOY_KEY", "keys/deploy-2026")  # a relative path that exists
    (tmp_path / "keys" / "deploy-2026").write_text("x", encoding="utf-8")
    monkeypatch.setenv("OPENAI_API_KEY", "/declared/by-a-plugin")  # api_key_env's default: always a secret
    Kernel()
    assert redaction.redact_text("keys/deploy-2026 /declared/by-a-plugin") == "keys/deploy-2026 ***"


def test_a_secret_with_a_blank_is_caught_in_a_query_string() -> None:
    import urllib.parse

    redaction.register("my secret pass/42")
    query = urllib.parse.urlencode({"key": "my secret pass/42"})  # key=my+secret+pass%2F42
    assert redaction.redact_text(f"GET /v1?{query}") == "GET /v1?key=***"
