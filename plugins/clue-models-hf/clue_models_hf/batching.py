"""Batches: dynamic padding and length-grouped, seed-determined batch order.

Padding every batch only to its own longest member, and putting sequences of similar
length in the same batch, is what makes training on a CPU bearable: most CLUE texts are
far shorter than ``max_length``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from clue_models_hf.ner_tags import IGNORE


class LengthGroupedBatches:
    """Shuffled batches of similar lengths; the same ``(seed, epoch)`` gives the same batches.

    Indices are shuffled, cut into mega-batches of ``group_factor`` batches, sorted by
    length inside each mega-batch and cut into batches; the batch order is then shuffled
    again. Only the very last batch may be short, and it stays last, so Accelerate can
    shard the batches evenly across processes.

    The epoch is set with :meth:`use_epoch` by the training loop. Deliberately there is no
    ``set_epoch``: Accelerate calls that with its own pass counter, which restarts at 0
    when an interrupted run resumes mid-way.
    """

    def __init__(self, lengths: Sequence[int], batch_size: int, seed: int, group_factor: int = 50) -> None:
        self.lengths = list(lengths)
        self.batch_size = batch_size
        self.seed = seed
        self.group_factor = group_factor
        self.drop_last = False
        self.epoch = 0

    def use_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return (len(self.lengths) + self.batch_size - 1) // self.batch_size

    def batches(self) -> list[list[int]]:
        rng = random.Random(self.seed * 1_000_003 + self.epoch)
        order = list(range(len(self.lengths)))
        rng.shuffle(order)
        group = self.batch_size * self.group_factor
        batches: list[list[int]] = []
        for start in range(0, len(order), group):
            chunk = sorted(order[start:start + group], key=lambda i: -self.lengths[i])
            batches.extend(chunk[i:i + self.batch_size] for i in range(0, len(chunk), self.batch_size))
        last = batches.pop() if batches and len(batches[-1]) < self.batch_size else None
        rng.shuffle(batches)
        if last is not None:
            batches.append(last)
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.batches())


def _pad(rows: Sequence[Sequence[int]], value: int, multiple: int | None) -> torch.Tensor:
    width = max(len(r) for r in rows)
    if multiple:
        width = (width + multiple - 1) // multiple * multiple
    out = torch.full((len(rows), width), value, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.as_tensor(row, dtype=torch.long)
    return out


def _attention(rows: Sequence[Sequence[int]], width: int) -> torch.Tensor:
    lengths = torch.as_tensor([len(r) for r in rows])
    return (torch.arange(width)[None, :] < lengths[:, None]).long()


class Collator:
    """Pads a list of feature items into tensors; ``index`` says which features they are."""

    def __init__(self, kind: str, pad_token_id: int, pad_to_multiple_of: int | None = None) -> None:
        self.kind = kind
        self.pad_token_id = pad_token_id
        self.multiple = pad_to_multiple_of

    def __call__(self, items: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:
        batch: dict[str, torch.Tensor] = {"index": torch.as_tensor([item["index"] for item in items])}
        if self.kind == "multiple_choice":
            return self._choices(items, batch)
        rows = [item["input_ids"] for item in items]
        batch["input_ids"] = _pad(rows, self.pad_token_id, self.multiple)
        batch["attention_mask"] = _attention(rows, batch["input_ids"].shape[1])
        if "token_type_ids" in items[0]:
            batch["token_type_ids"] = _pad([item["token_type_ids"] for item in items], 0, self.multiple)
        if "label" in items[0]:
            batch["labels"] = torch.as_tensor([item["label"] for item in items])
        for name in ("tags", "start_tags", "end_tags"):  # entity spans: per-token labels, padding ignored
            if name in items[0]:
                batch[name] = _pad([item[name] for item in items], IGNORE, self.multiple)
        if "start_position" in items[0]:
            batch["start_positions"] = torch.as_tensor([item["start_position"] for item in items])
            batch["end_positions"] = torch.as_tensor([item["end_position"] for item in items])
        return batch

    def _choices(self, items: Sequence[dict[str, Any]], batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """All real choices of the batch flattened into one (choices, length) block.

        ``choice_slot`` places each row in a (batch, max choices) grid; grid cells without a
        row are padding choices, masked so they can never win or take probability mass.
        """
        counts = [len(item["choices"]) for item in items]
        width = max(counts)
        rows = [ids for item in items for ids in item["choices"]]
        batch["input_ids"] = _pad(rows, self.pad_token_id, self.multiple)
        batch["attention_mask"] = _attention(rows, batch["input_ids"].shape[1])
        if "choice_token_types" in items[0]:
            batch["token_type_ids"] = _pad([t for item in items for t in item["choice_token_types"]], 0,
                                           self.multiple)
        batch["choice_slot"] = torch.as_tensor([b * width + c for b, n in enumerate(counts) for c in range(n)])
        batch["choice_mask"] = torch.as_tensor([[c < n for c in range(width)] for n in counts])
        if "label" in items[0]:
            batch["labels"] = torch.as_tensor([item["label"] for item in items])
        return batch
