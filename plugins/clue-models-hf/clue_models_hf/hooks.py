"""Hook implementations of clue-models-hf; must stay cheap to import (specs only).

Three kinds of model names come from here:

* ``hf:<hub id or local directory>``: the family; any Hugging Face encoder, or a model
  directory a previous run saved (it holds ``clue_model.json``);
* ``hf:bert-base-chinese``, ``hf:hfl/rbt3``, ...: the catalogue, the same factory with the
  part after ``hf:`` as argument, listed with size class, parameters and the size
  class's recommendations (``catalogue.SIZE_RULES``);
* ``hf-tiny``: the offline backbone, randomly initialised from a small configuration with
  a character vocabulary built from the training texts; it never downloads anything.

Two commands come from here too: ``clue-core pretrain`` (masked-LM pre-training) and
``clue-core corpus`` (stats and split of a pre-training corpus); their click code is
imported only when they run (``pretrain_cli``).
"""

from __future__ import annotations

from clue_core.plugin import CLASSIFICATION, MULTIPLE_CHOICE, SPAN, CommandSpec, ModelSpec, hookimpl
from clue_models_hf.catalogue import CATALOGUE, recommendations
from clue_models_hf.ner_tags import ENTITY_SPANS
from clue_models_hf.settings import COMMON, TINY

#: KgCLUE's kind, named by its string (kbqa_encoding, which trains it, imports the encoders' code).
KBQA_TRIPLE = "kbqa_triple"
FAMILY = "hf"
TINY_NAME = "hf-tiny"
FACTORY = "clue_models_hf.factory:create"
TINY_FACTORY = "clue_models_hf.factory:create_tiny"
#: Encoder parameters of the offline backbone with a 3,000-character vocabulary.
TINY_PARAMETERS = 296_128
#: The example kinds an encoder with an Auto head learns (open questions need a generator);
#: entity spans is CLUENER2020's kind, kbqa_triple KgCLUE's (ranking a knowledge base's candidate
#: triples), each declared by its task plugin and named here by its string.
KINDS = (CLASSIFICATION, SPAN, MULTIPLE_CHOICE, ENTITY_SPANS, KBQA_TRIPLE)


@hookimpl
def clue_models() -> list[ModelSpec]:
    specs = [
        ModelSpec(FAMILY, FACTORY, KINDS,
                  "any Hugging Face encoder, hf:<hub id or save_pretrained directory>, fine-tuned with Accelerate",
                  family=True, settings=COMMON),
        ModelSpec(TINY_NAME, TINY_FACTORY, KINDS,
                  "offline backbone: tiny random BERT with a character vocabulary from the training texts",
                  size_class="toy", parameters=TINY_PARAMETERS, settings=COMMON + TINY,
                  recommendations=recommendations("toy")),
    ]
    specs.extend(
        ModelSpec(f"{FAMILY}:{entry.hub_id}", FACTORY, KINDS, entry.description,
                  size_class=entry.size_class, parameters=entry.parameters, settings=COMMON,
                  recommendations=recommendations(entry.size_class))
        for entry in CATALOGUE
    )
    return specs


COMMANDS = (
    CommandSpec("pretrain", "Pre-train an encoder (whole-word masked-LM) on a CLUECorpus2020-style folder.",
                "clue_models_hf.pretrain_cli:pretrain"),
    CommandSpec("corpus", "Pre-training corpus tools: stats of a folder, split a big text file into <= 4 MB files.",
                "clue_models_hf.pretrain_cli:corpus"),
)


@hookimpl
def clue_commands() -> list[CommandSpec]:
    return list(COMMANDS)
