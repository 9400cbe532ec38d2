"""The PET learner (``--set method=pet``): the hf learner with a masked-LM head instead of a task head.

Everything but the model, the inputs and the batches is :class:`~clue_models_hf.learner.HFLearner`'s:
the Accelerate loop (checkpoints, ``--resume``, ``eval_every``, early stopping, best weights),
prediction over several processes, saving. What differs:

* the model is the checkpoint's ``*ForMaskedLM`` (the offline backbone: ``BertForMaskedLM``
  from its configuration), trained and predicted through :class:`~clue_models_hf.pet_scoring.PetModel`;
* examples become clozes (:mod:`clue_models_hf.pet`) and predictions carry one probability per
  label (the softmax of the labels' mean token log-probabilities), in label order;
* ``clue_model.json`` records ``"method": "pet"`` and the prompt with its verbalisers, so
  ``--model <saved dir> --no-train`` asks exactly the same cloze again.

What PET cannot do is refused when the run is planned (:meth:`PetLearner.check_plan`): a
task without a prompt or verbalisers, a checkpoint whose architecture has no masked-LM
head, a verbaliser that tokenizes to nothing or to ``[UNK]``, a ``max_length`` too short
for the prompt's own words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clue_core.plugin import ClueError, Example, TaskSpec
from clue_models_hf import encoding, loading, tiny
from clue_models_hf.learner import TINY_SOURCE, HFLearner
from clue_models_hf.pet import PET, ClozeEncoder, PetPrompt, prompt_texts, task_prompt, verbalizer_tokens


class PetLearner(HFLearner):
    """``fit`` / ``predict`` / ``save`` with PET's cloze scoring (classification tasks)."""

    def __init__(self, task: TaskSpec, source: str, values: Mapping[str, Any]) -> None:
        super().__init__(task, source, values)
        self.prompt = self._saved_prompt() or task_prompt(task, bool(self.values["pet_instruction"]))
        self.tokens: list[list[int]] = []
        self.cloze: ClozeEncoder | None = None

    def _saved_prompt(self) -> PetPrompt | None:
        """A saved PET model asks its own cloze, when that covers the task's labels."""
        if not self.saved or self.saved.get("method") != PET:
            return None
        prompt = PetPrompt.from_json(self.saved.get("pet") or {}, self.source)
        return prompt if all(label in prompt.verbalizers for label in self.labels) else None

    @property
    def forward_kind(self) -> str:
        return PET

    # ---- planning -------------------------------------------------------------------------
    def check_plan(self, splits: Mapping[str, Sequence[Example]]) -> None:
        """Refuse what PET cannot score before any task of the run trains (one line each)."""
        saved_labels = list(self.saved.get("labels") or []) if self.saved else []
        if self.saved and "train" not in splits and saved_labels != self.labels:
            raise ClueError(f"{self.source}: trained with labels {saved_labels}, but {self.task.name} has "
                            f"{self.labels}; train it on this task first")
        if self.source == TINY_SOURCE:
            texts = [t for e in splits.get("train", splits.get("dev", ()))[:1] for t in (e.text, e.text_pair) if t]
            tokenizer = tiny.build_tokenizer(texts, self.values["tiny_vocab_size"], required=prompt_texts(self.prompt))
            tokens = verbalizer_tokens(tokenizer, self.prompt, self.labels, self.source)
            ClozeEncoder(tokenizer, self.prompt, tokens, self.settings.max_length, self.task.name)
            return
        from transformers import AutoConfig

        from clue_models_hf.pet_scoring import check_mlm_architecture

        trust = self.settings.trust_remote_code
        try:
            with loading.hub_offline(self.local_only):
                config = AutoConfig.from_pretrained(self.source, trust_remote_code=trust,
                                                    local_files_only=self.local_only)
        except Exception as exc:  # transformers raises many kinds for a bad checkpoint
            raise loading._explain(self.source, exc) from None
        check_mlm_architecture(config, self.source)
        self.tokenizer = loading.load_tokenizer(self.source, trust, self.local_only)
        tokens = verbalizer_tokens(self.tokenizer, self.prompt, self.labels, self.source)
        limit = getattr(config, "max_position_embeddings", None)
        ClozeEncoder(self.tokenizer, self.prompt, tokens, min(self.settings.max_length, limit or 10**9),
                     self.task.name)

    # ---- building -------------------------------------------------------------------------
    def _build(self, texts: Sequence[str]) -> None:
        """The masked-LM model and tokenizer, then the verbaliser tokens and the cloze encoder."""
        if self.model is not None:
            return
        from accelerate.utils import set_seed

        loading.quiet_transformers()
        set_seed(self.seed)
        if self.source == TINY_SOURCE:
            from transformers import BertForMaskedLM

            self.tokenizer = tiny.build_tokenizer(texts, self.values["tiny_vocab_size"],
                                                  required=prompt_texts(self.prompt))
            self.model = BertForMaskedLM(tiny.tiny_config(len(self.tokenizer), self.values,
                                                          self.settings.max_length))
        else:
            saved_labels = list(self.saved.get("labels") or []) if self.saved else []
            if self.saved and saved_labels != self.labels and not self._will_train:
                raise ClueError(f"{self.source}: trained with labels {saved_labels}, but {self.task.name} has "
                                f"{self.labels}; train it on this task first")
            trust = self.settings.trust_remote_code
            if self.tokenizer is None:
                self.tokenizer = loading.load_tokenizer(self.source, trust, self.local_only)
            self.model = load_mlm(self.source, trust, self.local_only)
        self.tokens = verbalizer_tokens(self.tokenizer, self.prompt, self.labels, self.source)
        self.cloze = ClozeEncoder(self.tokenizer, self.prompt, self.tokens, self.max_length, self.task.name)

    def _module(self) -> Any:
        from clue_models_hf.pet_scoring import PetModel

        return PetModel(self.model, self.tokens)

    def _collator(self) -> Any:
        from clue_models_hf.pet_scoring import PetCollator

        multiple = 8 if self.settings.mixed_precision != "no" and self.accelerator.device.type == "cuda" else None
        return PetCollator(self.tokenizer.pad_token_id, multiple)

    def _encode(self, examples: Sequence[Example], with_labels: bool) -> encoding.Features:
        assert self.cloze is not None, "the model is built before anything is encoded"
        label2id = {label: i for i, label in enumerate(self.labels)} if with_labels else None
        return self.cloze.encode(examples, label2id)  # type: ignore[arg-type]

    def _record(self) -> dict[str, Any]:
        return {"method": PET, "pet": self.prompt.as_json()}

    def run_info(self) -> dict[str, Any]:
        return {**super().run_info(), "method": PET}


def load_mlm(source: str, trust_remote_code: bool, local_only: bool = False) -> Any:
    """``AutoModelForMaskedLM`` from ``source``; a head the checkpoint lacks (random weights) is refused."""
    from transformers import AutoModelForMaskedLM

    from clue_models_hf.pet_scoring import check_loaded_head, check_mlm_architecture

    loading.check_source(source)
    try:
        with loading.hub_offline(local_only):
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(source, trust_remote_code=trust_remote_code,
                                                local_files_only=local_only)
            check_mlm_architecture(config, source)
            model, info = AutoModelForMaskedLM.from_pretrained(source, config=config, output_loading_info=True,
                                                               trust_remote_code=trust_remote_code,
                                                               local_files_only=local_only)
    except ClueError:
        raise
    except Exception as exc:
        raise loading._explain(source, exc) from None
    check_loaded_head(model, list(info.get("missing_keys") or ()), source)
    return model
