"""Log-likelihood of each choice after its prompt, the prompt encoded once for all its choices.

Tokens. Each choice's text is ``prompt + choice`` tokenized as a whole, so the model sees the
natural tokenization of what it would have written. The tokens the prompt alone and every
``prompt + choice`` share (their longest common prefix) form the shared prefix; the rest of
each is that choice's continuation, scored token by token. Where a tokenizer merges the
prompt's last characters with a choice's first (byte-level BPE), the merged token belongs to
the continuation of *every* choice, so all choices are scored over the same text. With a
tokenizer that keeps the boundary (characters, or a prompt ending in punctuation), this is
exactly lm-evaluation-harness's split (context tokens, then ``whole[len(context):]``).

Batches. Prefixes of up to ``eval_batch_size`` examples (longest first; at most
:data:`PASS_TOKENS` tokens, padding included, which bounds the pass's memory) run left-padded in
one pass that fills a key/value cache and computes the logits of the last column only; the
first token of every continuation is scored from them. The cache's rows are then repeated
once per choice and all continuations of the batch run in one more pass against it. A
choice costs its own tokens, not its prompt's: on reading-comprehension examples (a long passage, four
short options) that is most of the work of scoring each ``prompt + choice`` separately.

``ppl`` (OpenCompass's perplexity) also needs the prompt's own tokens scored: the prefix
pass then keeps all its logits (an ``ppl`` run is slower).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from clue_models_llm.chunked_head import HEAD_BUDGET, Head
from clue_models_llm.runtime import input_device, left_padded, new_cache, right_padded
from clue_models_llm.settings import PROMPT_SCORES

#: Most logits (rows x columns x vocabulary) one pass may return: batches shrink to fit.
LOGIT_BUDGET = 1 << 27
#: Most prompt tokens (rows x columns, padding included) one prefix pass runs: its key/value cache
#: and activations grow with them (gemma-3-270m: about 37 KiB of cache and 60 KiB of activations
#: a token in float32), and a pass this large already keeps the matmuls busy.
PASS_TOKENS = 2048
#: Tokens all prompts of a call must share for them to run once (:meth:`LikelihoodScorer.shared_prefix`).
SHARED_MIN = 64


@dataclass(frozen=True, slots=True)
class ChoiceRequest:
    """One example's prompt tokens shared by all choices, and each choice's continuation."""

    prefix: tuple[int, ...]
    continuations: tuple[tuple[int, ...], ...]
    truncated: int = 0


@dataclass(frozen=True, slots=True)
class ChoiceScores:
    """Summed log-probability and token count of each continuation; the prefix's, for ``ppl``."""

    logprobs: tuple[float, ...]
    tokens: tuple[int, ...]
    prefix_logprob: float | None = None
    prefix_tokens: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"logprobs": list(self.logprobs), "tokens": list(self.tokens),
                "prefix_logprob": self.prefix_logprob, "prefix_tokens": self.prefix_tokens}

    @classmethod
    def of(cls, data: dict[str, Any]) -> ChoiceScores:
        return cls(tuple(data["logprobs"]), tuple(data["tokens"]), data.get("prefix_logprob"),
                   data.get("prefix_tokens"))

    def scores(self, method: str) -> tuple[float, ...]:
        """Per-choice scores, higher is better: ``sum``, ``mean`` (per token), ``ppl`` or ``mean_all``."""
        if method == "sum":
            return self.logprobs
        if method == "mean":
            return tuple(lp / max(n, 1) for lp, n in zip(self.logprobs, self.tokens))
        if method in PROMPT_SCORES:
            if self.prefix_logprob is None or self.prefix_tokens is None:
                raise ValueError(f"{method} needs the prompt's log-probability")
            # mean_all: OpenCompass's PPL loss, the whole sequence's summed log-probability over its token
            # count with the first (BOS) token, which is never predicted; ppl: over the predicted tokens
            extra = 1 if method == "mean_all" else 0
            return tuple((self.prefix_logprob + lp) / max(self.prefix_tokens + n + extra, 1)
                         for lp, n in zip(self.logprobs, self.tokens))
        raise ValueError(f"unknown score method {method!r}")


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def build_request(prompt_ids: Sequence[int], whole_ids: Sequence[Sequence[int]], *, bos: int | None = None,
                  fallback: int = 0, max_positions: int | None = None) -> ChoiceRequest:
    """The shared prefix and the continuations of one example (see the module docstring).

    ``prompt_ids`` tokenize the prompt, ``whole_ids[i]`` the prompt followed by choice ``i``
    (neither with special tokens); ``bos`` is prepended to all when the model wants it.
    An empty prefix (a prompt sharing no token with a choice) becomes ``[fallback]``.
    Too long an input loses its prefix's oldest tokens (after the ``bos``), counted in
    ``truncated``.
    """
    shared = min(common_prefix(prompt_ids, whole) for whole in whole_ids)
    shared = min(shared, min(len(whole) for whole in whole_ids) - 1)
    prefix = list(whole_ids[0][:shared])
    continuations = tuple(tuple(whole[shared:]) for whole in whole_ids)
    head = [bos] if bos is not None else []
    if not head and not prefix:
        head = [fallback]
    truncated = 0
    if max_positions:
        longest = len(head) + len(prefix) + max(len(c) for c in continuations)
        if longest > max_positions:
            truncated = min(len(prefix), longest - max_positions)
            prefix = prefix[truncated:]
            if not head and not prefix:
                head = [fallback]
    return ChoiceRequest(tuple(head + prefix), continuations, truncated)


def encode_requests(tokenizer: Any, items: Sequence[tuple[str, Sequence[str]]], *, bos: int | None = None,
                    fallback: int = 0, max_positions: int | None = None) -> list[ChoiceRequest]:
    """:class:`ChoiceRequest` of ``(prompt, choices)`` items, tokenized in one call, without special tokens.

    ``bos`` is prepended unless the prompt's own tokens begin with it (a chat template's).
    """
    texts: list[str] = []
    for prompt, choices in items:
        texts.append(prompt)
        texts += [prompt + choice for choice in choices]
    encoded = iter(tokenizer(texts, add_special_tokens=False)["input_ids"])
    requests = []
    for _, choices in items:
        prompt_ids = list(next(encoded))
        wholes = [list(next(encoded)) for _ in choices]
        head = bos if bos is not None and prompt_ids[:1] != [bos] else None
        requests.append(build_request(prompt_ids, wholes, bos=head, fallback=fallback, max_positions=max_positions))
    return requests


class LikelihoodScorer:
    """Scores :class:`ChoiceRequest` batches with one model (see the module docstring)."""

    def __init__(self, model: Any, batch_size: int, pad_id: int = 0, prefix_stats: bool = False,
                 tree: bool | None = None, head_budget: int = HEAD_BUDGET) -> None:
        self.model = model
        implementation = getattr(getattr(model, "config", None), "_attn_implementation", None)
        #: choices side by side in one row per prompt (a 4D mask), where the attention takes one
        self.tree = implementation in ("sdpa", "eager") if tree is None else tree
        self.batch_size = batch_size
        self.pad_id = pad_id
        self.prefix_stats = prefix_stats
        self.head = Head(model, head_budget)
        self.vocab = self.head.vocab
        self.device = input_device(model)
        #: called with the size of every block of logits computed (tests bound the largest)
        self.observe: Callable[[int], None] | None = None

    def batches(self, requests: Sequence[ChoiceRequest]) -> list[list[int]]:
        """Request indices batched longest prefix first, within the batch size, the logit budget and
        :data:`PASS_TOKENS` (a single request longer than that runs alone)."""
        order = sorted(range(len(requests)), key=lambda i: (-len(requests[i].prefix), i))
        batches: list[list[int]] = []
        current: list[int] = []
        rows = width = prefix_width = 0
        for index in order:
            request = requests[index]
            more_rows = rows + len(request.continuations)
            more_width = max(width, max(len(c) for c in request.continuations))
            more_prefix = max(prefix_width, len(request.prefix))
            cost = more_rows * more_width * self.vocab
            if self.prefix_stats:
                cost = max(cost, (len(current) + 1) * more_prefix * self.vocab)
            tokens = (len(current) + 1) * more_prefix
            if current and (len(current) >= self.batch_size or cost > LOGIT_BUDGET or tokens > PASS_TOKENS):
                batches.append(current)
                current, rows, width, prefix_width = [], 0, 0, 0
                more_rows, more_width = len(request.continuations), max(len(c) for c in request.continuations)
                more_prefix = len(request.prefix)
            current.append(index)
            rows, width, prefix_width = more_rows, more_width, more_prefix
        if current:
            batches.append(current)
        return batches

    def score(self, requests: Sequence[ChoiceRequest], done: Callable[[list[int], list[ChoiceScores]], None]
              | None = None) -> list[ChoiceScores]:
        """Scores of every request, in request order; ``done(indices, scores)`` after each batch."""
        results: list[ChoiceScores | None] = [None] * len(requests)
        shared = self.shared_prefix(requests)
        if shared:
            base = self._base(requests[0].prefix[:shared])
            batches = [list(range(i, min(i + self.batch_size, len(requests))))
                       for i in range(0, len(requests), self.batch_size)]
        for batch in batches if shared else self.batches(requests):
            if shared:
                scored = [self._score_after(base, shared, requests[i]) for i in batch]
            else:
                scored = self.score_batch([requests[i] for i in batch])
            for i, result in zip(batch, scored):
                results[i] = result
            if done is not None:
                done(batch, scored)
        return results  # type: ignore[return-value]

    def shared_prefix(self, requests: Sequence[ChoiceRequest]) -> int:
        """Tokens every request's prefix begins with, where that is worth a pass of its own (else 0).

        An instruction every question repeats (a list of 119 labels to choose from) runs once for
        the whole call; each question continues from a copy of its cache, unpadded, so a
        sliding-window layer sees exactly what it sees in a pass over that question alone.
        """
        if self.prefix_stats or len(requests) < 2:
            return 0
        first = requests[0].prefix
        shared = min(min(common_prefix(first, r.prefix) for r in requests), min(len(r.prefix) for r in requests) - 1)
        return shared if shared >= SHARED_MIN else 0

    @torch.inference_mode()
    def _base(self, tokens: Sequence[int]) -> Any:
        ids = torch.tensor([list(tokens)], device=self.device)
        cache = new_cache(self.model)
        self.head.run(ids, torch.ones_like(ids), torch.arange(len(tokens), device=self.device).unsqueeze(0), cache)
        return cache

    @torch.inference_mode()
    def _score_after(self, base: Any, shared: int, request: ChoiceRequest) -> ChoiceScores:
        """One request continued from a copy of the shared prefix's cache."""
        cache = copy.deepcopy(base)
        total = len(request.prefix)
        ids = torch.tensor([list(request.prefix[shared:])], device=self.device)
        mask = torch.ones((1, total), dtype=torch.long, device=self.device)
        positions = torch.arange(shared, total, device=self.device).unsqueeze(0)
        states = self.head.run(ids, mask, positions, cache, last_only=True)
        return self._continue([request], states[:, -1, :], cache, mask, [None], [None])[0]

    @torch.inference_mode()
    def score_batch(self, requests: Sequence[ChoiceRequest]) -> list[ChoiceScores]:
        head, device = self.head, self.device
        ids, mask, positions = left_padded([r.prefix for r in requests], self.pad_id, device)
        cache = new_cache(self.model)
        states = head.run(ids, mask, positions, cache, last_only=not self.prefix_stats)
        prefix_sums: list[float | None] = [None] * len(requests)
        prefix_counts: list[int | None] = [None] * len(requests)
        if self.prefix_stats:
            valid = (mask[:, 1:] * mask[:, :-1]).bool()
            row_of = torch.arange(len(requests), device=valid.device).unsqueeze(1).expand_as(valid)[valid]
            picked = head.picked(states[:, :-1][valid], torch.arange(int(valid.sum())), ids[:, 1:][valid],
                                 self.observe)
            sums = torch.zeros(len(requests)).index_add_(0, row_of.cpu(), picked)
            prefix_sums = [float(s) for s in sums]
            prefix_counts = [int(c) for c in valid.sum(-1).cpu()]
        last = states[:, -1, :]
        del states
        return self._continue(requests, last, cache, mask, prefix_sums, prefix_counts)

    def _continue(self, requests: Sequence[ChoiceRequest], last: torch.Tensor, cache: Any, mask: torch.Tensor,
                  prefix_sums: Sequence[float | None], prefix_counts: Sequence[int | None]) -> list[ChoiceScores]:
        """Every choice scored after its prompt: the first token from ``last``, the rest against ``cache``."""
        owners: list[int] = []
        rows: list[tuple[int, ...]] = []
        for b, request in enumerate(requests):
            for continuation in request.continuations:
                owners.append(b)
                rows.append(continuation)
        first = torch.tensor([row[0] for row in rows])
        parts = None
        if max(len(row) for row in rows) > 1:
            if self.tree:
                parts = self._continue_tree(requests, cache, mask)
            if parts is None:
                parts = self._continue_repeated(rows, owners, cache, mask)
        if parts is None:
            states, index, targets, row_of = last, torch.tensor(owners), first, torch.arange(len(rows))
        else:  # one head call for the prompts' last positions and the continuations' (one weight read)
            rest, rest_targets, rest_rows = parts
            states = torch.cat([last.to(rest.device), rest])
            index = torch.cat([torch.tensor(owners), torch.arange(len(rest)) + len(last)])
            targets = torch.cat([first, rest_targets.cpu()])
            row_of = torch.cat([torch.arange(len(rows)), rest_rows.cpu()])
        picked = self.head.picked(states, index, targets, self.observe)
        totals = torch.zeros(len(rows)).index_add_(0, row_of, picked).tolist()
        results = []
        row = 0
        for b, request in enumerate(requests):
            n = len(request.continuations)
            results.append(ChoiceScores(tuple(totals[row:row + n]), tuple(len(c) for c in request.continuations),
                                        prefix_sums[b], prefix_counts[b]))
            row += n
        return results

    def _continue_repeated(self, rows: Sequence[tuple[int, ...]], owners: Sequence[int], cache: Any,
                           mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Every choice in its own row, against its prompt's cache rows repeated: the generic way.

        Returns the hidden states (or logits) of every continuation token but the last, the
        token each predicts and the choice it belongs to.
        """
        device = self.device
        width = max(len(row) for row in rows) - 1
        cont_ids, cont_mask = right_padded([row[:-1] for row in rows], self.pad_id, width, device)
        owner = torch.tensor(owners, device=device)
        cache.batch_select_indices(torch.tensor(owners))  # CPU indices: a model spread over GPUs has layers on each
        full_mask = torch.cat([mask[owner], cont_mask], dim=1)
        positions = mask.sum(-1)[owner].unsqueeze(1) + torch.arange(width, device=device).unsqueeze(0)
        states = self.head.run(cont_ids, full_mask, positions, cache)
        targets, target_mask = right_padded([row[1:] for row in rows], self.pad_id, width, states.device)
        keep = target_mask.bool()
        row_of = torch.arange(len(rows), device=keep.device).unsqueeze(1).expand_as(keep)[keep]
        return states[keep.to(states.device)], targets[keep], row_of

    def _continue_tree(self, requests: Sequence[ChoiceRequest], cache: Any, mask: torch.Tensor
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """All choices of a prompt in one row after its cache (:mod:`clue_models_llm.tree_masks`).

        Returns what :meth:`_continue_repeated` returns, or ``None`` where this model's cache
        layers or attention take no such mask; the cache is then untouched (a refused mask fails
        before the first layer).
        """
        from clue_models_llm import tree_masks

        tree = tree_masks.layout([r.continuations for r in requests], mask.sum(-1).tolist(), self.pad_id)
        dtype = self.model.dtype if self.model.dtype.is_floating_point else torch.float32
        attention = tree_masks.masks(tree, mask, cache, _text_config(self.model), dtype)
        if attention is None:
            return None
        device = self.device
        if isinstance(attention, dict):
            attention = {kind: part.to(device) for kind, part in attention.items()}
            if not _takes_mask_dict(self.model):
                return None
        else:
            attention = attention.to(device)
        states = self.head.run(tree.ids.to(device), attention, tree.positions.to(device), cache)
        real = tree.choice >= 0
        return states[real.to(states.device)], tree.targets[real], tree.choice[real]


def _text_config(model: Any) -> Any:
    config = model.config
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def _takes_mask_dict(model: Any) -> bool:
    """Whether the decoder's forward takes one mask per layer kind (transformers' hybrid models do)."""
    import inspect

    decoder = model.get_decoder() if hasattr(model, "get_decoder") else model
    try:
        source = inspect.getsource(type(decoder).forward)
    except (OSError, TypeError):
        return False
    return "isinstance(causal_mask_mapping := attention_mask, dict)" in source


@torch.inference_mode()
def score_separately(model: Any, request: ChoiceRequest) -> ChoiceScores:
    """The reference: every ``prefix + continuation`` in its own unpadded pass, without a cache."""
    device = input_device(model)
    logprobs, tokens = [], []
    prefix_sum = prefix_count = None
    for continuation in request.continuations:
        sequence = torch.tensor([list(request.prefix) + list(continuation)], device=device)
        logits = model(input_ids=sequence).logits.float()
        all_logprobs = torch.log_softmax(logits[0, :-1], dim=-1)
        picked = all_logprobs.gather(-1, sequence[0, 1:].unsqueeze(-1)).squeeze(-1)
        n = len(continuation)
        logprobs.append(float(picked[-n:].sum()))
        tokens.append(n)
        prefix_sum = float(picked[:-n].sum())
        prefix_count = len(request.prefix) - 1
    return ChoiceScores(tuple(logprobs), tuple(tokens), prefix_sum, prefix_count)
