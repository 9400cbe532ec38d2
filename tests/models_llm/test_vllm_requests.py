"""``vllm:``'s request building and its reading of vLLM's output shapes, without vLLM (no GPU needed)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from clue_core.plugin import ClueError
from clue_models_llm.backend import GenerateOptions
from clue_models_llm.scoring import ChoiceRequest
from clue_models_llm.vllm_generation import Row, advance, round_kwargs, seed_of
from clue_models_llm.vllm_scoring import Scores, read_scores, sampling_kwargs, token_logprobs, token_requests
from tests.support.vllm_reference import Logprob, RequestOutput, SamplingParams

FIELDS = frozenset(SamplingParams.__struct_fields__)


def output(ids, values, cached=0):
    """A RequestOutput whose prompt_logprobs give ``values[q]`` for token q, from position cached + 1."""
    plp = [None] + [{ids[q]: Logprob(values[q], 1, None), 999: Logprob(-9.0, 2, None)} for q in
                    range(cached + 1, len(ids))]
    return RequestOutput("0", None, list(ids), plp, [], True, num_cached_tokens=cached)


def test_examples_sharing_a_prompt_are_neighbours_and_choices_stay_together() -> None:
    encoded = [ChoiceRequest((1, 5, 6), ((7,), (8, 9))), ChoiceRequest((1, 2, 3), ((4,), (5,))),
               ChoiceRequest((1, 5, 6), ((2,), (3,)))]
    requests = token_requests(encoded, ppl=False)
    assert [(r.example, r.choice) for r in requests] == [(1, 0), (1, 1), (0, 0), (0, 1), (2, 0), (2, 1)]
    assert requests[3].ids == (1, 5, 6, 8, 9) and requests[3].start == 3 and not requests[3].fresh
    ppl = token_requests(encoded, ppl=True)
    assert [(r.fresh, r.start) for r in ppl[:2]] == [(True, 1), (False, 3)]


def test_likelihood_sampling_params_are_real_names() -> None:
    request = token_requests([ChoiceRequest((1, 2), ((3,),))], ppl=False)[0]
    kwargs = sampling_kwargs(request, caching=True, fields=FIELDS)
    assert kwargs == {"n": 1, "max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 0, "detokenize": False,
                      "skip_reading_prefix_cache": False}
    assert SamplingParams(**kwargs).skip_reading_prefix_cache is False
    assert sampling_kwargs(request, caching=False, fields=FIELDS)["skip_reading_prefix_cache"] is True
    older = sampling_kwargs(request, caching=True, fields=frozenset({"n", "max_tokens"}))
    assert "skip_reading_prefix_cache" not in older and "detokenize" not in older


def test_prompt_logprobs_read_after_cached_tokens() -> None:
    ids = [1, 2, 3, 4, 5, 6]
    values = [0.0, -0.1, -0.2, -0.3, -0.4, -0.5]
    assert token_logprobs(output(ids, values), ids) == [None, -0.1, -0.2, -0.3, -0.4, -0.5]
    assert token_logprobs(output(ids, values, cached=3), ids) == [None, None, None, None, -0.4, -0.5]


def test_a_continuation_reached_by_the_cache_is_asked_again() -> None:
    encoded = [ChoiceRequest((1, 2, 3, 4), ((5,), (6, 7)))]
    requests = token_requests(encoded, ppl=False)
    scores = Scores(requests, {})
    outs = [output(requests[0].ids, [0, -1, -1, -1, -0.5]),
            output(requests[1].ids, [0, -1, -1, -1, -0.25, -0.75], cached=4)]  # token 4 (the 6) has no value
    assert read_scores(outs, requests, [0, 1], scores) == [1]
    scores.values[1] = token_logprobs(output(requests[1].ids, [0, -1, -1, -1, -0.25, -0.75]), requests[1].ids)
    assert scores.entry([0, 1], ppl=False) == {"logprobs": [-0.5, -1.0], "tokens": [1, 2], "prefix_logprob": None,
                                               "prefix_tokens": None}


def test_ppl_reads_the_prompt_of_the_fresh_request() -> None:
    requests = token_requests([ChoiceRequest((1, 2, 3), ((4,), (5,)))], ppl=True)
    scores = Scores(requests, {})
    read_scores([output(requests[0].ids, [0, -1, -2, -0.5]), output(requests[1].ids, [0, 0, 0, -3.0], cached=0)],
                requests, [0, 1], scores)
    assert scores.entry([0, 1], ppl=True) == {"logprobs": [-0.5, -3.0], "tokens": [1, 1], "prefix_logprob": -3.0,
                                              "prefix_tokens": 2}


@pytest.mark.parametrize(("change", "message"), [
    ({"prompt_logprobs": None}, "no prompt log-probabilities"),
    ({"prompt_token_ids": [9, 9]}, "other tokens than asked"),
    ({"num_cached_tokens": 1}, "expected 2"),
])
def test_answers_of_another_shape_are_one_line(change, message) -> None:
    answer = output([1, 2, 3], [0, -1, -2])
    for name, value in change.items():
        setattr(answer, name, value)
    with pytest.raises(ClueError, match=message):
        token_logprobs(answer, [1, 2, 3])


def test_a_position_without_its_own_token_is_named() -> None:
    answer = output([1, 2, 3], [0, -1, -2])
    answer.prompt_logprobs[2] = {999: Logprob(-0.1)}
    with pytest.raises(ClueError, match="position 2 lack the prompt's own token 3"):
        token_logprobs(answer, [1, 2, 3])
    answer.prompt_logprobs[2] = {3: Logprob(float("nan"))}
    with pytest.raises(ClueError, match="not one a model gives"):
        token_logprobs(answer, [1, 2, 3])


def test_no_answers_at_all_is_one_line() -> None:
    requests = token_requests([ChoiceRequest((1,), ((2,),))], ppl=False)
    with pytest.raises(ClueError, match="answered 0 of 1"):
        read_scores([], requests, [0], Scores(requests, {}))


OPTIONS = GenerateOptions(max_new_tokens=8, thinking_tokens=4, stops=("\n",), temperature=0.0, seed=7)


def completion(tokens, reason, stop=None):
    return SimpleNamespace(token_ids=tokens, finish_reason=reason, stop_reason=stop, text="")


def decode(ids):
    return "".join({1: "a", 2: "\n", 3: "</think>", 9: "."}.get(t, "?") for t in ids)


def test_generation_params_map_options() -> None:
    row = Row([5, 6], thinking=False)
    kwargs = round_kwargs(row, OPTIONS)
    assert kwargs == {"n": 1, "temperature": 0.0, "include_stop_str_in_output": True, "skip_special_tokens": False,
                      "max_tokens": 8, "stop": ["\n"]}
    SamplingParams(**kwargs)  # every name is one vLLM takes
    sampled = round_kwargs(row, GenerateOptions(8, 4, (), 0.7, 7))
    assert sampled["seed"] == seed_of(7, [5, 6], 0) and sampled["stop"] is None
    assert seed_of(7, [5, 6], 0) != seed_of(8, [5, 6], 0) != seed_of(7, [5, 6], 1)
    thinking = round_kwargs(Row([5], thinking=True), OPTIONS)
    assert thinking["max_tokens"] == 4 and thinking["stop"] == ["</think>"]


def test_a_stop_before_the_first_character_is_not_the_end() -> None:
    row = Row([5], thinking=False)
    advance(row, completion([2], "stop", "\n"), OPTIONS, decode, [3])
    assert row.finish == "" and round_kwargs(row, OPTIONS)["max_tokens"] == 7
    advance(row, completion([1, 2], "stop", "\n"), OPTIONS, decode, [3])
    assert row.finish == "stop" and row.ids == [2, 1, 2]


def test_thinking_budget_closes_the_block_then_answers() -> None:
    row = Row([5], thinking=True)
    advance(row, completion([9, 9, 9, 9], "length"), OPTIONS, decode, [3])
    assert not row.thinking and row.ids[-1] == 3 and row.think_count == 4
    advance(row, completion([1, 0], "stop", None), OPTIONS, decode, [3])
    assert row.finish == "eos"


def test_an_aborted_generation_is_one_line() -> None:
    with pytest.raises(ClueError, match="finish_reason 'abort'"):
        advance(Row([5], thinking=False), completion([1], "abort"), OPTIONS, decode, [3])
