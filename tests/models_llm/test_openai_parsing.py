"""openai:<model> without a server: reading typed answers, Retry-After, usage and cost, tool calls.

The answers are the JSON a server sends, parsed by the ``openai`` SDK itself (a client over
an in-memory transport), so what is read here is what a real server's answer becomes. (The
SDK parses leniently: vLLM's ``null`` first-token log-probability does not pass its types'
strict ``model_validate``, yet it is what the client returns.)
"""

from __future__ import annotations

import email.utils
import json
import math
import time

import httpx2
import openai
import pytest

from clue_core.plugin import ClueError
from clue_models_llm.backends.openai import CHAT_MARK, chat_prompt, parse_generation
from clue_models_llm.backends.openai_likelihood import likelihood_body, parse_likelihood
from clue_models_llm.client import Usage, retry_after
from clue_models_llm.extract import extract_tool_calls
from clue_models_llm.prompts import Question


def through_sdk(answer: dict) -> object:
    """``answer`` as the SDK returns it from a server (completions or chat, by its ``object``)."""
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, json=answer))
    client = openai.OpenAI(base_url="http://server.invalid/v1", api_key="k", max_retries=0,
                           http_client=httpx2.Client(transport=transport))
    if answer["object"] == "chat.completion":
        return client.chat.completions.create(model="m", messages=[{"role": "user", "content": "?"}])
    return client.completions.create(model="m", prompt="?")


def echoed(texts_and_tokens: list[tuple[list[str], list[float | None]]], prompt_tokens: int = 0) -> object:
    """A completions answer with echo + logprobs, one choice per ``(tokens, logprobs)``."""
    choices = []
    for index, (tokens, logprobs) in enumerate(texts_and_tokens):
        offsets, at = [], 0
        for token in tokens:
            offsets.append(at)
            at += len(token)
        choices.append({"index": index, "text": "".join(tokens), "finish_reason": "length", "logprobs": {
            "tokens": tokens, "token_logprobs": logprobs, "text_offset": offsets,
            "top_logprobs": [None if lp is None else {t: lp} for t, lp in zip(tokens, logprobs)]}})
    return through_sdk({"id": "c", "object": "text_completion", "created": 0, "model": "m",
                                      "choices": choices, "usage": {"prompt_tokens": prompt_tokens,
                                                                    "completion_tokens": 1, "total_tokens": 9}})


def test_likelihood_splits_by_offsets_and_leaves_out_the_null_first_token_and_the_generated_one():
    question = Question("问：好吗\n答：", ("好", "不好"), ("a", "b"))
    prompt = ["问", "：", "好", "吗", "\n", "答", "："]
    prompt_lp = [None, -1.0, -2.0, -0.5, -0.25, -0.125, -0.0625]
    response = echoed([([*prompt, "好", "X"], [*prompt_lp, -0.3, -9.0]),
                       ([*prompt, "不", "好", "Y"], [*prompt_lp, -1.5, -0.7, -9.0])])
    entry = parse_likelihood(response, question)
    assert entry["logprobs"] == pytest.approx([-0.3, -2.2])
    assert entry["tokens"] == [1, 2]
    # the prompt's own tokens (for ppl): the first has no log-probability and is not counted
    assert entry["prefix_tokens"] == 6
    assert entry["prefix_logprob"] == pytest.approx(sum(lp for lp in prompt_lp if lp is not None))


def test_a_token_straddling_the_boundary_belongs_to_every_choice():
    """A BPE merge of the prompt's last character with a choice's first: scored with each choice."""
    question = Question("答：", ("是", "否"), ("a", "b"))
    response = echoed([(["答", "：是", "!"], [None, -1.0, -5.0]), (["答", "：否", "!"], [None, -3.0, -5.0])])
    entry = parse_likelihood(response, question)
    assert entry["logprobs"] == pytest.approx([-1.0, -3.0])
    assert entry["tokens"] == [1, 1]
    assert entry["prefix_tokens"] == 0


def test_a_server_that_ignores_echo_gives_one_clear_line():
    question = Question("答：", ("是", "否"))
    plain = through_sdk({"id": "c", "object": "text_completion", "created": 0, "model": "m",
                                       "choices": [{"index": i, "text": "x", "finish_reason": "length",
                                                    "logprobs": None} for i in range(2)]})
    with pytest.raises(ClueError, match="did not echo the prompt's token log-probabilities"):
        parse_likelihood(plain, question)


def test_the_likelihood_request_asks_every_choice_at_once_with_echo():
    body = likelihood_body(Question("答：", ("是", "否")))
    assert body["prompt"] == ["答：是", "答：否"]
    assert body["echo"] is True and body["logprobs"] == 1 and body["temperature"] == 0


def test_generation_keeps_reasoning_apart_and_reads_tool_calls_and_usage():
    response = through_sdk({
        "id": "x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "好的", "reasoning_content": "先想一想……",
            "tool_calls": [{"id": "t1", "type": "function",
                            "function": {"name": "get_weather", "arguments": "{\"city\": \"北京\"}"}}]}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42,
                  "completion_tokens_details": {"reasoning_tokens": 20}}})
    entry = parse_generation(response, chat=True)
    assert entry["text"] == "好的"
    assert entry["reasoning"] == "先想一想……"
    assert entry["tool_calls"] == [{"name": "get_weather", "arguments": {"city": "北京"}}]
    assert entry["usage"] == {"prompt_tokens": 12, "completion_tokens": 30, "reasoning_tokens": 20}
    assert entry["finish"] == "tool_calls"


def test_completions_generation_reads_the_text():
    response = through_sdk({"id": "c", "object": "text_completion", "created": 0, "model": "m",
                                          "choices": [{"index": 0, "text": " 蕴含\n", "finish_reason": "stop"}],
                                          "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})
    entry = parse_generation(response, chat=False)
    assert (entry["text"], entry["tokens"], entry["finish"]) == (" 蕴含\n", 3, "stop")


def test_chat_prompts_travel_as_marked_json():
    text = chat_prompt([{"role": "user", "content": "你好"}], tools=[{"type": "function"}])
    assert text.startswith(CHAT_MARK)
    assert json.loads(text[len(CHAT_MARK):]) == {"messages": [{"role": "user", "content": "你好"}],
                                                 "tools": [{"type": "function"}]}


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "3"}, 3.0),
    ({"retry-after-ms": "1500"}, 1.5),
    ({"retry-after": "soon"}, None),
    ({}, None),
])
def test_retry_after(headers, expected):
    assert retry_after(headers) == expected


def test_retry_after_as_an_http_date():
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after({"retry-after": when}) <= 31


def test_usage_and_cost():
    usage = Usage()
    usage.add({"prompt_tokens": 1_000_000, "completion_tokens": 500_000, "reasoning_tokens": 100_000})
    usage.add({"prompt_tokens": 0, "completion_tokens": 500_000, "reasoning_tokens": 0})
    data = usage.as_dict(price_prompt=0.5, price_completion=2.0, currency="CNY")
    assert data["requests"] == 2
    assert math.isclose(data["cost"], 0.5 + 2.0)
    assert data["currency"] == "CNY"
    assert "cost" not in usage.as_dict()


def test_tool_calls_written_as_text():
    assert extract_tool_calls('<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>') == [
        {"name": "f", "arguments": {"x": 1}}]
    assert extract_tool_calls('好的，我来查：{"name": "get_weather", "parameters": {"city": "上海"}} 稍等') == [
        {"name": "get_weather", "arguments": {"city": "上海"}}]
    assert extract_tool_calls('{"name": "f", "arguments": "{\\"a\\": 2}"}') == [{"name": "f", "arguments": {"a": 2}}]
    assert extract_tool_calls("我不需要调用工具。{没有 JSON}") == []
