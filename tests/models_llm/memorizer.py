"""A fixture model that has memorised the samples' answers, so tests can demand real accuracy.

A random model's answers cannot be extracted, so "it runs" would be met by all-zero
metrics. This model is a genuine Llama (saved with ``save_pretrained``, loaded back as
``llm:<folder>``) trained in-process until it answers every sample dev example of the
given tasks: its transformer layers keep their random weights (queries and keys scaled up
so attention is sharp and the features depend on word order, which CLUEWSC's minimal
pairs need), and its separate output layer is fitted to the answers' tokens with L-BFGS,
a convex problem that converges in a second or two. The prompts are rendered by the
plugin's own renderer, zero-shot and without chat, so a run with default settings asks
exactly what was memorised; each answer ends in a newline (the default stop string).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from clue_core import data
from clue_core.kernel import Kernel
from clue_core.reading import read_split
from clue_models_llm.prompts import Renderer
from clue_models_llm.tiny import build_tokenizer, tiny_config

ALL_TASKS = ("afqmc", "tnews", "iflytek", "ocnli", "cmnli", "cluewsc2020", "csl", "cmrc2018", "drcd", "chid", "c3")
SHAPE = {"tiny_hidden_size": 64, "tiny_num_layers": 2, "tiny_num_heads": 2, "tiny_intermediate_size": 128}
#: How much sharper than at initialisation the attention is.
ATTENTION_SCALE = 4.0


def sample_pairs(kernel: Kernel, tasks: Sequence[str], split: str = "dev") -> list[tuple[str, str]]:
    """``(prompt, answer)`` of every sample example of ``tasks``, as the plugin renders them."""
    pairs = []
    for name in tasks:
        task = kernel.task(name)
        examples = read_split(task, data.resolve_task_data(task, sample=True), split).examples
        renderer = Renderer(task)
        pairs += [(renderer.render(example).prompt, renderer.answer(example)) for example in examples]
    return pairs


def train_memorizer(pairs: Sequence[tuple[str, str]], folder: Path, seed: int = 0) -> dict[str, Any]:
    """Build, fit and save the model; returns what the fit reached (accuracy, smallest probability)."""
    from transformers import LlamaForCausalLM

    texts = [prompt + answer + "\n" for prompt, answer in pairs]
    tokenizer = build_tokenizer(texts)
    config = tiny_config(len(tokenizer), SHAPE)
    config.tie_word_embeddings = False
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    features, targets = [], []
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.q_proj.weight.mul_(ATTENTION_SCALE)
            layer.self_attn.k_proj.weight.mul_(ATTENTION_SCALE)
        for prompt, answer in pairs:
            prompt_ids = tokenizer(prompt, add_special_tokens=False).input_ids
            answer_ids = tokenizer(answer + "\n", add_special_tokens=False).input_ids
            hidden = model.model(input_ids=torch.tensor([prompt_ids + answer_ids])).last_hidden_state[0]
            features.append(hidden[len(prompt_ids) - 1:len(prompt_ids) + len(answer_ids) - 1])
            targets += answer_ids
    x, y = torch.cat(features), torch.tensor(targets)
    weight = torch.zeros_like(model.lm_head.weight, requires_grad=True)
    optimizer = torch.optim.LBFGS([weight], lr=1, max_iter=300, history_size=20, line_search_fn="strong_wolfe",
                                  tolerance_grad=1e-10, tolerance_change=1e-12)

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(x @ weight.T, y)
        loss.backward()
        return loss

    for _ in range(5):
        optimizer.step(closure)
        with torch.no_grad():
            logits = x @ weight.T
            accuracy = float((logits.argmax(-1) == y).float().mean())
            smallest = float(torch.softmax(logits, -1).gather(1, y[:, None]).min())
        if accuracy == 1.0 and smallest > 0.9:
            break
    with torch.no_grad():
        model.lm_head.weight.copy_(weight)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return {"points": len(y), "accuracy": accuracy, "smallest_probability": smallest}
