"""The vLLM-like test server (tests/support/openai_server.py): shapes, numbers, faults and counters.

Its answers are checked against the SDK's own response types and against direct torch
computations on the same saved model, so the ``openai:`` client tests built on it test
against what a real vLLM would say.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.types import Completion, Model
from openai.types.chat import ChatCompletion

from tests.support.openai_server import (
    CHAT_TEMPLATE,
    ModelEngine,
    OpenAIServer,
    ScriptedEngine,
    parse_fault,
    save_tiny_granite,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
SENTENCES = [
    "今天天气很好，我们去公园散步吧！",
    "小明在图书馆里读了一本关于历史的书。",
    "这家餐厅的菜很好吃，价格也不贵。",
    "请问去火车站怎么走？",
]
PROMPT = "小明在图书馆"


# ---------------------------------------------------------------------------------------------- fixtures and helpers


@pytest.fixture(scope="session")
def granite_folder(tmp_path_factory) -> Path:
    return save_tiny_granite(tmp_path_factory.mktemp("openai-server") / "granite", SENTENCES, seed=0)


@pytest.fixture(scope="session")
def engine(granite_folder) -> ModelEngine:
    return ModelEngine(granite_folder)


@pytest.fixture(scope="session")
def reference(granite_folder) -> tuple[Any, Any]:
    """The same saved model loaded separately: the direct torch computations the server must match."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(granite_folder), dtype=torch.float32).eval()
    return model, AutoTokenizer.from_pretrained(str(granite_folder))


def greedy(reference: tuple[Any, Any], ids: list[int], steps: int) -> tuple[list[int], list[float]]:
    """Argmax decoding by full forward passes (no cache): generated ids and their logprobs, eos included."""
    import torch

    model, tokenizer = reference
    out: list[int] = []
    logprobs: list[float] = []
    with torch.no_grad():
        for _ in range(steps):
            logp = torch.log_softmax(model(input_ids=torch.tensor([ids + out])).logits[0, -1].float(), dim=-1)
            token = int(torch.argmax(logp))
            out.append(token)
            logprobs.append(float(logp[token]))
            if token == tokenizer.eos_token_id:
                break
    return out, logprobs


def post(url: str, path: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, dict, Any]:
    """``(status, headers, parsed JSON)`` of a raw POST (no SDK in between)."""
    data = json.dumps(body, ensure_ascii=False).encode()
    request = urllib.request.Request(url + path, data=data, method="POST",
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def client(server: OpenAIServer, **kwargs: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key=kwargs.pop("api_key", "x"), max_retries=0, **kwargs)


def scripted(reply: Any = "好的") -> ScriptedEngine:
    return ScriptedEngine(lambda endpoint, body: reply(endpoint, body) if callable(reply) else reply)


# ---------------------------------------------------------------------------------------------- shapes


def test_models_endpoint_parses_as_the_sdk_model(engine) -> None:
    with OpenAIServer(engine, model="granite-tiny") as server:
        status, listing = get(server.url + "/models")
        assert status == 200 and listing["object"] == "list"
        model = Model.model_validate(listing["data"][0])
        assert (model.id, model.owned_by) == ("granite-tiny", "clue-tests")
        assert [m.id for m in client(server).models.list()] == ["granite-tiny"]
        assert get(server.url + "/nothing-here")[0] == 404


def test_echo_logprobs_match_a_direct_forward_pass(engine, reference) -> None:
    import torch

    model, tokenizer = reference
    request = {"model": "tiny", "prompt": PROMPT, "max_tokens": 0, "echo": True, "logprobs": 2}
    with OpenAIServer(engine) as server:
        status, _, body = post(server.url, "/completions", request)
        sdk = client(server).completions.create(**request)
    assert status == 200
    raw = body["choices"][0]["logprobs"]
    # vLLM's null for the first prompt token is outside the SDK's declared types (the SDK client builds its
    # objects without validating, so it passes through); everything else validates.
    assert raw["token_logprobs"][0] is None and raw["top_logprobs"][0] is None
    with pytest.raises(ValueError, match="top_logprobs"):
        Completion.model_validate(body)
    patched = json.loads(json.dumps(body))
    patched["choices"][0]["logprobs"]["token_logprobs"][0] = 0.0
    patched["choices"][0]["logprobs"]["top_logprobs"][0] = {}
    Completion.model_validate(patched)
    assert sdk.choices[0].logprobs.token_logprobs[0] is None
    assert sdk.choices[0].logprobs.token_logprobs[1:] == raw["token_logprobs"][1:]

    text = body["choices"][0]["text"]
    assert text == PROMPT
    ids = tokenizer(PROMPT).input_ids
    assert len(raw["tokens"]) == len(ids)
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
    expected = sum(float(logp[i - 1, ids[i]]) for i in range(1, len(ids)))
    assert sum(raw["token_logprobs"][1:]) == pytest.approx(expected, abs=1e-4)
    for i, (token, offset) in enumerate(zip(raw["tokens"], raw["text_offset"])):
        assert text[offset:offset + len(token)] == token
        assert offset == sum(len(t) for t in raw["tokens"][:i])
    for i, (token, logprob, top) in enumerate(zip(raw["tokens"], raw["token_logprobs"], raw["top_logprobs"])):
        if i:
            best = sorted(logp[i - 1].tolist(), reverse=True)[:2]
            assert top[token] == logprob and 2 <= len(top) <= 3
            assert sorted(top.values(), reverse=True)[:2] == pytest.approx(best, abs=1e-5)
    assert body["usage"] == {"prompt_tokens": len(ids), "completion_tokens": 0, "total_tokens": len(ids)}


def test_greedy_generation_equals_a_direct_greedy_loop(engine, reference) -> None:
    _, tokenizer = reference
    ids = tokenizer(PROMPT).input_ids
    expected_ids, expected_logprobs = greedy(reference, ids, 8)
    assert tokenizer.eos_token_id not in expected_ids, "pick another prompt: this one stops early"
    expected_text = tokenizer.decode(expected_ids)
    with OpenAIServer(engine) as server:
        sdk = client(server).completions.create(model="tiny", prompt=PROMPT, max_tokens=8, temperature=0, logprobs=1)
        echoed = client(server).completions.create(model="tiny", prompt=PROMPT, max_tokens=8, echo=True, logprobs=0)
    choice = sdk.choices[0]
    assert (choice.text, choice.finish_reason) == (expected_text, "length")
    assert (sdk.usage.prompt_tokens, sdk.usage.completion_tokens, sdk.usage.total_tokens) == (len(ids), 8, len(ids) + 8)
    assert choice.logprobs.token_logprobs == pytest.approx(expected_logprobs, abs=1e-4)
    assert choice.logprobs.text_offset == [len(PROMPT) + i for i in range(8)]  # one character per token
    assert echoed.choices[0].text == PROMPT + expected_text
    assert echoed.choices[0].logprobs.tokens == [tokenizer.decode([i]) for i in ids + expected_ids]
    assert echoed.choices[0].logprobs.token_logprobs[len(ids):] == pytest.approx(expected_logprobs, abs=1e-4)


def test_stop_strings_cut_the_text_and_finish_with_stop(engine, reference) -> None:
    _, tokenizer = reference
    full = tokenizer.decode(greedy(reference, tokenizer(PROMPT).input_ids, 12)[0])
    stop = full[4:6]
    with OpenAIServer(engine) as server:
        sdk = client(server)
        one = sdk.completions.create(model="tiny", prompt=PROMPT, max_tokens=12, stop=stop, logprobs=0)
        several = sdk.completions.create(model="tiny", prompt=PROMPT, max_tokens=12, stop=["不在这里", full[2]])
    cut = full.find(stop)
    assert (one.choices[0].text, one.choices[0].finish_reason) == (full[:cut], "stop")
    assert "".join(one.choices[0].logprobs.tokens) == full[:cut]
    assert one.usage.completion_tokens == cut + len(stop)  # the stop string's tokens were generated
    assert (several.choices[0].text, several.choices[0].finish_reason) == (full[:full.find(full[2])], "stop")


def test_sampling_with_a_seed_is_reproducible(engine) -> None:
    with OpenAIServer(engine) as server:
        sdk = client(server)
        texts = [sdk.completions.create(model="tiny", prompt=PROMPT, max_tokens=20, temperature=1.0, seed=seed)
                 .choices[0].text for seed in (3, 3, 4)]
        greedy_text = sdk.completions.create(model="tiny", prompt=PROMPT, max_tokens=20).choices[0].text
    assert texts[0] == texts[1] and texts[0] != texts[2] and texts[0] != greedy_text


def test_a_list_of_prompts_gives_one_choice_each_in_order(engine) -> None:
    prompts = ["今天天气", "请问去火车站"]
    with OpenAIServer(engine) as server:
        sdk = client(server)
        both = sdk.completions.create(model="tiny", prompt=prompts, max_tokens=4)
        single = [sdk.completions.create(model="tiny", prompt=p, max_tokens=4) for p in prompts]
    assert [c.index for c in both.choices] == [0, 1]
    assert [c.text for c in both.choices] == [s.choices[0].text for s in single]
    assert both.usage.total_tokens == sum(s.usage.total_tokens for s in single)


def test_chat_renders_the_template_and_generates_greedily(engine, reference) -> None:
    _, tokenizer = reference
    messages = [{"role": "system", "content": "请问"}, {"role": "user", "content": "今天天气很好"}]
    rendered = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert rendered.endswith("<|assistant|>\n") and tokenizer.chat_template == CHAT_TEMPLATE
    ids = tokenizer(rendered, add_special_tokens=False).input_ids
    assert tokenizer.unk_token_id not in ids
    expected, _ = greedy(reference, ids, 6)
    with OpenAIServer(engine) as server:
        status, _, body = post(server.url, "/chat/completions", {"model": "tiny", "messages": messages,
                                                                  "max_completion_tokens": 6})
        sdk = client(server).chat.completions.create(model="tiny", messages=messages, max_tokens=6, seed=1)
    assert status == 200
    chat = ChatCompletion.model_validate(body)
    assert chat.choices[0].message.content == tokenizer.decode(expected, skip_special_tokens=True)
    assert not {"reasoning_content", "tool_calls"} & set(body["choices"][0]["message"])
    assert (chat.usage.prompt_tokens, chat.usage.completion_tokens) == (len(ids), len(expected))
    assert sdk.choices[0].message.content == chat.choices[0].message.content


def test_chat_without_a_template_is_a_400(engine, monkeypatch) -> None:
    monkeypatch.setattr(engine.tokenizer, "chat_template", None)
    with OpenAIServer(engine) as server, pytest.raises(openai.BadRequestError, match="chat template"):
        client(server).chat.completions.create(model="tiny", messages=[{"role": "user", "content": "你好"}])


def test_bad_requests_are_answered_as_vllm_does(engine) -> None:
    with OpenAIServer(engine) as server:
        sdk = client(server)
        with pytest.raises(openai.NotFoundError) as missing:
            sdk.completions.create(model="gpt-4", prompt=PROMPT, max_tokens=1)
        with pytest.raises(openai.BadRequestError, match="max_tokens"):
            sdk.completions.create(model="tiny", prompt=PROMPT, max_tokens=0)
        with pytest.raises(openai.BadRequestError, match="logprobs"):
            sdk.completions.create(model="tiny", prompt=PROMPT, max_tokens=1, logprobs=21)
    assert missing.value.body == {"message": "The model `gpt-4` does not exist.", "type": "NotFoundError",
                                  "param": "model", "code": 404}
    assert [r.status for r in server.requests] == [404, 400, 400] and not server.answered


def test_an_engine_without_logprobs_ignores_echo_and_logprobs(granite_folder, engine) -> None:
    plain = ModelEngine(granite_folder, logprobs=False)
    with OpenAIServer(engine) as server:
        expected = client(server).completions.create(model="tiny", prompt=PROMPT, max_tokens=5).choices[0].text
    with OpenAIServer(plain) as server:
        answer = client(server).completions.create(model="tiny", prompt=PROMPT, max_tokens=5, echo=True, logprobs=1)
    assert (answer.choices[0].text, answer.choices[0].logprobs) == (expected, None)


def test_scripted_engine_reasoning_and_tool_calls() -> None:
    def answer(endpoint: str, body: dict) -> Any:
        if endpoint == "/v1/completions":
            return f"[{body['prompt']}]"
        return {"content": None, "reasoning_content": "先想一想",
                "tool_calls": [{"name": "lookup", "arguments": {"城市": "北京"}}]}

    with OpenAIServer(ScriptedEngine(answer)) as server:
        status, _, body = post(server.url, "/chat/completions",
                               {"model": "tiny", "messages": [{"role": "user", "content": "天气"}]})
        completion = client(server).completions.create(model="tiny", prompt=["甲", "乙乙"], max_tokens=3,
                                                       echo=True, logprobs=1)
    assert status == 200
    chat = ChatCompletion.model_validate(body)
    message = chat.choices[0].message
    assert body["choices"][0]["message"]["reasoning_content"] == "先想一想"
    assert chat.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls[0].function.name == "lookup"
    assert json.loads(message.tool_calls[0].function.arguments) == {"城市": "北京"}
    assert chat.usage.completion_tokens_details.reasoning_tokens == 4
    assert (chat.usage.prompt_tokens, chat.usage.completion_tokens) == (2, 4)
    assert [c.text for c in completion.choices] == ["甲[甲]", "乙乙[乙乙]"]
    assert [c.logprobs for c in completion.choices] == [None, None]
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (3, 7)


# ---------------------------------------------------------------------------------------------- faults


def test_each_fault_spec_as_the_sdk_sees_it() -> None:
    faults = ["429:2", "500", "503", "drop", "401", "404", "400", "slow:0.3", None]
    with OpenAIServer(scripted(), faults=faults) as server:
        sdk = client(server)

        def ask() -> Any:
            return sdk.completions.create(model="tiny", prompt="问", max_tokens=1)

        with pytest.raises(openai.RateLimitError) as limited:
            ask()
        assert limited.value.response.headers["retry-after"] == "2"
        assert limited.value.body["type"] == "RateLimitError"
        with pytest.raises(openai.InternalServerError) as error:
            ask()
        assert error.value.status_code == 500
        with pytest.raises(openai.InternalServerError) as unavailable:
            ask()
        assert unavailable.value.status_code == 503
        with pytest.raises(openai.APIConnectionError) as dropped:
            ask()
        assert not isinstance(dropped.value, openai.APITimeoutError)
        for expected in (openai.AuthenticationError, openai.NotFoundError, openai.BadRequestError):
            with pytest.raises(expected):
                ask()
        started = time.monotonic()
        assert ask().choices[0].text == "好的"
        assert time.monotonic() - started >= 0.3
        assert ask().choices[0].text == "好的"
    statuses = [r.status for r in server.requests]
    assert statuses == [429, 500, 503, None, 401, 404, 400, 200, 200]
    assert [r.fault for r in server.requests] == faults
    assert sum(server.answered.values()) == 2 and server.repeated() == 1  # the same body, answered twice


def test_slow_and_hang_time_out_and_stopping_releases_a_hung_request() -> None:
    with OpenAIServer(scripted(), faults=["slow:5", "hang"]) as server:
        sdk = client(server, timeout=0.3)
        for _ in range(2):
            with pytest.raises(openai.APITimeoutError):
                sdk.completions.create(model="tiny", prompt="问", max_tokens=1)
        assert server.wait_for(lambda stats: stats["requests"] == 2)["in_flight"] == 2  # both still held
    # stopping set the event both wait on; the hung one waits on nothing else
    assert server.wait_for(lambda stats: stats["in_flight"] == 0)["in_flight"] == 0
    assert [(r.status, r.complete) for r in server.requests] == [(None, False), (None, False)]
    assert not server.answered


def test_a_fault_function_sees_index_path_and_body() -> None:
    seen: list[tuple[int, str, str]] = []

    def faults(index: int, path: str, body: dict) -> str | None:
        seen.append((index, path, body.get("prompt", "chat")))
        return "503" if body.get("prompt") == "坏" else None

    with OpenAIServer(scripted(), faults=faults) as server:
        sdk = client(server)
        sdk.completions.create(model="tiny", prompt="好", max_tokens=1)
        with pytest.raises(openai.InternalServerError):
            sdk.completions.create(model="tiny", prompt="坏", max_tokens=1)
        sdk.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "你好"}])
        sdk.models.list()  # not a generation request: no fault index
    assert seen == [(0, "/v1/completions", "好"), (1, "/v1/completions", "坏"), (2, "/v1/chat/completions", "chat")]
    with pytest.raises(ValueError, match="unknown fault"):
        OpenAIServer(scripted(), faults=["429:1", "teapot"])
    assert parse_fault("429:1.5") == ("429", 1.5)


def test_api_key_is_required_when_set() -> None:
    with OpenAIServer(scripted(), api_key="sesame") as server:
        with pytest.raises(openai.AuthenticationError) as denied:
            client(server, api_key="wrong").completions.create(model="tiny", prompt="问", max_tokens=1)
        assert denied.value.status_code == 401 and denied.value.body["type"] == "AuthenticationError"
        assert get(server.url + "/models")[0] == 401
        answer = client(server, api_key="sesame").completions.create(model="tiny", prompt="问", max_tokens=1)
        assert answer.choices[0].text == "好的"
        assert server.requests[-1].headers["authorization"] == "Bearer sesame"


# ---------------------------------------------------------------------------------------------- counters
# (concurrency and the counters' timing: test_openai_server_counters.py)


@pytest.mark.slow
def test_main_runs_as_a_process_with_stats() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_server", "--scripted-echo", "--port", "0", "--slots", "2",
         "--latency", "0.01"], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("READY http://127.0.0.1:"), line + process.stderr.read()
        url = line.split()[1]
        status, _, body = post(url, "/completions", {"model": "tiny", "prompt": "回声", "max_tokens": 2})
        assert status == 200 and body["choices"][0]["text"] == "回声"
        root = url.removesuffix("/v1")
        assert get(root + "/stats")[1] == {"requests": 1, "answered": 1, "repeated": 0, "max_in_flight": 1,
                                           "in_flight": 0, "max_computing": 1, "computing": 0}
        assert post(root, "/stats/reset", {})[0] == 200
        assert get(root + "/stats")[1]["requests"] == 0
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
