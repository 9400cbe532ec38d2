"""Hook implementations of clue-models-llm; must stay cheap to import (specs only).

Model names from here:

* ``llm:<hub id or local folder>``: the family; any causal LM transformers can load
  (``AutoModelForCausalLM``), evaluated without training, by likelihood or generation;
* ``llm:Qwen/Qwen2.5-0.5B-Instruct``, ...: the catalogue, the same factory with size class,
  parameters and what the model needs (``chat``) as recommendations;
* ``openai:<model>``: the same prompts, scoring modes, predictions and cache for a model
  behind any OpenAI-compatible server (vLLM, SGLang, llama.cpp, ``transformers serve``, a
  hosted API), ``--set base_url=…``;
* ``vllm:<hub id or local folder>``: the same prompts, cache and predictions as ``llm:``, the
  model served by vLLM's offline engine in this process (a GPU, ``clue-models-llm[vllm]``);
* ``answers:<file>``: answers recorded elsewhere (a closed API, another team's run,
  SuperCLUE's published answers), read from a file and scored like a model's;
* ``llm-tiny``: an offline tiny random Llama with a character tokenizer built here, for the
  demo, the tests and speed benchmarks; it never downloads anything.

Prompts belong to the tasks (``TaskSpec.prompt``): the model renders them by example
kind, so no task name appears in this plugin.
"""

from __future__ import annotations

from clue_core.plugin import CLASSIFICATION, MULTIPLE_CHOICE, SPAN, ModelSpec, hookimpl
from clue_models_llm.catalogue import CATALOGUE, recommendations
from clue_models_llm.kinds import OPEN_QUESTION
from clue_models_llm.recorded_settings import RECORDED
from clue_models_llm.settings import COMMON, SERVER, TINY
from clue_models_llm.vllm_settings import VLLM

FAMILY = "llm"
TINY_NAME = "llm-tiny"
CATEGORY = "llm"
FACTORY = "clue_models_llm.factory:create"
TINY_FACTORY = "clue_models_llm.factory:create_tiny"
SERVER_FAMILY = "openai"
SERVER_FACTORY = "clue_models_llm.factory:create_server"
VLLM_FAMILY = "vllm"
VLLM_FACTORY = "clue_models_llm.factory:create_vllm"
RECORDED_FAMILY = "answers"
RECORDED_FACTORY = "clue_models_llm.factory:create_recorded"
#: Every kind: choices are scored or answers generated; open questions are answered turn by turn.
KINDS = (CLASSIFICATION, SPAN, MULTIPLE_CHOICE, OPEN_QUESTION)


@hookimpl
def clue_models() -> list[ModelSpec]:
    specs = [
        ModelSpec(FAMILY, FACTORY, KINDS,
                  "any causal LM (transformers), llm:<hub id or local folder>: likelihood or generation, "
                  "zero- or few-shot, no training", family=True, category=CATEGORY, trains=False, settings=COMMON),
        ModelSpec(SERVER_FAMILY, SERVER_FACTORY, KINDS,
                  "a model behind any OpenAI-compatible server (vLLM, SGLang, llama.cpp, transformers serve, hosted "
                  "APIs), openai:<served name> --set base_url=…: likelihood (completions echo + logprobs) or "
                  "generation, concurrent, retried, cached", family=True, category=CATEGORY, trains=False,
                  settings=SERVER),
        ModelSpec(VLLM_FAMILY, VLLM_FACTORY, KINDS,
                  "any causal LM vLLM serves, vllm:<hub id or local folder>, in vLLM's offline engine (a GPU; pip "
                  "install 'clue-models-llm[vllm]'): the prompts, cache and predictions of llm:, likelihood through "
                  "prompt log-probabilities with prefix caching", family=True, category=CATEGORY, trains=False,
                  settings=VLLM),
        ModelSpec(RECORDED_FAMILY, RECORDED_FACTORY, KINDS,
                  "answers recorded elsewhere, answers:<JSON Lines or JSON array file> --set answer_field=<field>: "
                  "matched by id or prompt text, read as generated answers, missing ones counted and scored as "
                  "wrong", family=True, category=CATEGORY, trains=False, settings=RECORDED),
        ModelSpec(TINY_NAME, TINY_FACTORY, KINDS,
                  "offline tiny random Llama with a character tokenizer built from the task's texts",
                  size_class="toy", category=CATEGORY, trains=False, settings=COMMON + TINY),
    ]
    specs.extend(
        ModelSpec(f"{FAMILY}:{entry.hub_id}", FACTORY, KINDS, entry.description, size_class=entry.size_class,
                  parameters=entry.parameters, category=CATEGORY, trains=False, settings=COMMON,
                  recommendations=recommendations(entry))
        for entry in CATALOGUE
    )
    return specs
