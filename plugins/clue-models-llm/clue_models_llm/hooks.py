"""Hook implementations of clue-models-llm; must stay cheap to import (specs only).

Every model name is built from the backends' declarations (``BACKEND`` next to each backend
class, :func:`clue_models_llm.backend.declared`): reading them imports the backend modules,
whose tops import nothing heavy (torch, transformers, vLLM and the OpenAI SDK are imported
inside their methods). Model names from here:

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
kind, so no task name appears in this plugin; a kind it does not know (entity spans, KBQA
triples) is asked and read through the task's own functions (:mod:`clue_models_llm.generic`).
"""

from __future__ import annotations

from clue_core.plugin import CLASSIFICATION, MULTIPLE_CHOICE, SPAN, ModelSpec, hookimpl
from clue_models_llm.backend import BackendInfo, declared, factory_name
from clue_models_llm.catalogue import recommendations
from clue_models_llm.kinds import GENERIC_KINDS, OPEN_QUESTION

CATEGORY = "llm"
#: The factory every model name of this plugin is built by, bound to its family (``create.vllm``).
FACTORY = "clue_models_llm.factory:create.{}"
#: What ``--dry-run`` asks for ``dtype=auto`` as it will load on this machine.
EXPLAIN_DTYPE = "clue_models_llm.cpu_bf16:explain"
#: Every kind: choices are scored or answers generated; open questions are answered turn by turn; the
#: generic kinds (NER's entity spans, KgCLUE's triples) generated and read by the task's own parse.
KINDS = (CLASSIFICATION, SPAN, MULTIPLE_CHOICE, OPEN_QUESTION, *GENERIC_KINDS)


@hookimpl
def clue_models() -> list[ModelSpec]:
    """One model name per backend declaration (families first, then named models, then catalogue entries)."""
    infos = declared()
    specs = [ModelSpec(info.family, _factory(info), KINDS, info.description, family=True, category=CATEGORY,
                       trains=False, settings=info.settings, explain=_explain(info)) for info in infos if info.argument]
    specs += [ModelSpec(info.family, _factory(info), KINDS, info.description, size_class=info.size_class,
                        category=CATEGORY, trains=False, settings=info.settings, explain=_explain(info))
              for info in infos if not info.argument]
    specs += [ModelSpec(f"{info.family}:{entry.hub_id}", _factory(info), KINDS, entry.description,
                        size_class=entry.size_class, parameters=entry.parameters, category=CATEGORY, trains=False,
                        settings=info.settings, recommendations=recommendations(entry), explain=_explain(info))
              for info in infos for entry in info.catalogue]
    return specs


def _explain(info: BackendInfo) -> str | None:
    """The transformers backend's models resolve ``dtype=auto`` by the machine (:mod:`clue_models_llm.cpu_bf16`)."""
    return EXPLAIN_DTYPE if info.family in ("llm", "llm-tiny") else None


def _factory(info: BackendInfo) -> str:
    return FACTORY.format(factory_name(info.family))
