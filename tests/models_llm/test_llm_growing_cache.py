"""The growing cache layer holds exactly what transformers' ``DynamicLayer`` builds by ``torch.cat``.

Generation's caches write each step's keys and values into room kept for them
(:mod:`clue_models_llm.growing_cache`); these tests drive a ``GrowingLayer`` and a
``DynamicLayer`` through the same updates (a prompt, steps past the first buffer's room, rows
dropped as they finish, a copy continued apart) and compare what each holds.
"""

from __future__ import annotations

import copy

import torch
from transformers.cache_utils import DynamicLayer

from clue_models_llm.growing_cache import ROOM, GrowingLayer, growing_cache


def states(rows: int, columns: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn((rows, 2, columns, 8), generator=generator),
            torch.randn((rows, 2, columns, 8), generator=generator))


def same(growing: GrowingLayer, plain: DynamicLayer) -> None:
    assert torch.equal(growing.keys, plain.keys)
    assert torch.equal(growing.values, plain.values)
    assert growing.get_seq_length() == plain.get_seq_length()


def test_steps_past_the_first_buffers_room_hold_what_concatenation_holds():
    growing, plain = GrowingLayer(), DynamicLayer()
    for step, columns in enumerate([5] + [1] * (ROOM + 40)):
        k, v = states(3, columns, step)
        returned = growing.update(k, v)
        plain.update(k, v)
        assert torch.equal(returned[0], plain.keys) and torch.equal(returned[1], plain.values)
    same(growing, plain)


def test_a_step_within_the_room_writes_into_the_same_buffer():
    layer = GrowingLayer()
    layer.update(*states(2, 10, 0))
    buffer = layer._key_buffer.data_ptr()
    for step in range(ROOM - 1):
        layer.update(*states(2, 1, step + 1))
        assert layer._key_buffer.data_ptr() == buffer, f"reallocated at step {step}"
    assert layer.keys.data_ptr() == buffer  # the keys are a view of the buffer, not a copy


def test_rows_dropped_then_stepped_on_hold_what_concatenation_holds():
    growing, plain = GrowingLayer(), DynamicLayer()
    for layer in (growing, plain):
        layer.update(*states(4, 6, 1))
    kept = torch.tensor([0, 2, 3])
    growing.batch_select_indices(kept)
    plain.batch_select_indices(kept)
    same(growing, plain)
    for step in range(ROOM + 3):
        k, v = states(3, 1, 10 + step)
        growing.update(k, v)
        plain.update(k, v)
    same(growing, plain)


def test_a_copy_continues_apart_from_its_original():
    original = GrowingLayer()
    original.update(*states(1, 7, 2))
    before = original.keys.clone()
    twin = copy.deepcopy(original)
    twin.update(*states(1, 3, 3))
    assert torch.equal(original.keys, before) and original.get_seq_length() == 7
    assert twin.get_seq_length() == 10 and torch.equal(twin.keys[:, :, :7], before)


def test_the_cache_makes_growing_layers_as_the_model_writes_them():
    cache = growing_cache()
    for layer in range(3):
        cache.update(*states(2, 4, layer), layer)
    assert [type(layer) for layer in cache.layers] == [GrowingLayer] * 3
    assert cache.get_seq_length() == 4


def test_a_long_prompt_gets_room_for_an_answer_not_half_of_itself_again():
    layer = GrowingLayer()
    layer.update(*states(1, 1000, 5))
    assert layer._key_buffer.shape[-2] == 1000 + ROOM  # the prompt's cache is made once
    for step in range(ROOM + 1):  # then full: it grows by half
        layer.update(*states(1, 1, 6 + step))
    assert layer._key_buffer.shape[-2] == (1000 + ROOM + 1) * 3 // 2
