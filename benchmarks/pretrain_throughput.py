"""Pre-training throughput: ``clue-core pretrain`` against a ``run_mlm.py``-style Trainer set-up.

Both arms train the same masked-LM model (``hf-tiny``'s BERT, or ``--model hf:<folder>``)
from the same configuration and seed on the *same packed sequences* (the ones
``clue-core pretrain`` cut from the corpus: ``[CLS]`` + ``max_length - 2`` tokens +
``[SEP]``), with the same batch size, learning rate, warmup, weight decay, number of steps
and precision:

  trainer   transformers' ``Trainer`` as ``run_mlm.py`` sets it up, at its best: the sequences
            as a dataset, ``DataCollatorForLanguageModeling`` (15%, 80/10/10),
            ``optim="adamw_torch_fused"``, no evaluation, no checkpoints, no logging
  clue      ``clue-core pretrain`` (in-process, the code the command runs), with whole-word
            masking (``--token-masking`` for single tokens), no evaluation during training
            and no checkpoints

Arms run alternately (``--repeats`` each); each arm's best pass counts, since other
processes on a shared machine only ever slow a pass down. Time is each loop's own: from
the Trainer's ``on_train_begin`` to ``on_train_end`` callbacks, and the ``train_runtime``
the clue-core loop records (evaluations and checkpoints excluded, neither happens here).
Tokens are the positions trained: steps × batch size × ``max_length`` in both arms.

    .venv/bin/python benchmarks/pretrain_throughput.py            # hf-tiny, sample-text corpus
    .venv/bin/python benchmarks/pretrain_throughput.py --corpus DIR --model hf:hfl/rbt3 --steps 50
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
GOAL = 1.2


def clue_arm(corpus: Path, out: Path, args: argparse.Namespace, steps: int, resume: bool = False
             ) -> tuple[float, dict[str, Any]]:
    """One run; ``resume`` with only ``data/`` and ``pretrain.json`` left reuses the tokenized corpus."""
    from clue_models_hf.pretrain import pretrain

    pairs = [f"max_steps={steps}", f"batch_size={args.batch_size}", f"max_length={args.max_length}",
             f"eval_every={steps + 1}", "save_every=0", "save_every_seconds=0", "progress=false",
             f"logging_steps={steps}", f"mixed_precision={args.mixed_precision}", "eval_sequences=8",
             f"whole_word_mask={'false' if args.token_masking else 'true'}", "learning_rate=1e-4"]
    metrics = pretrain(corpus, args.model, out, pairs, seed=1, resume=resume, echo=lambda line: None)
    return metrics["train_tokens"] / metrics["train_runtime"], metrics


def trainer_arm(data_dir: Path, args: argparse.Namespace, steps: int, work: Path, precision: str) -> float:
    import torch
    from transformers import (
        AutoConfig,
        AutoModelForMaskedLM,
        AutoTokenizer,
        DataCollatorForLanguageModeling,
        Trainer,
        TrainerCallback,
        TrainingArguments,
        set_seed,
    )

    from clue_models_hf.pretrain_data import TRAIN, PackedSequences, TokenCache

    tokenizer = AutoTokenizer.from_pretrained(str(data_dir / "tokenizer"))
    cache = TokenCache(data_dir)
    index = cache.read_index()
    packed = PackedSequences(cache.tokens(TRAIN), index["flag"], args.max_length, tokenizer.cls_token_id,
                             tokenizer.sep_token_id)

    class Sequences(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(packed)

        def __getitem__(self, i: int) -> dict[str, list[int]]:
            return {"input_ids": packed[i]["ids"].tolist()}

    clock: dict[str, float] = {}

    class Clock(TrainerCallback):
        def on_train_begin(self, *_a: Any, **_k: Any) -> None:
            clock["start"] = time.perf_counter()

        def on_train_end(self, *_a: Any, **_k: Any) -> None:
            clock["end"] = time.perf_counter()

    set_seed(1)
    config = AutoConfig.from_pretrained(str(data_dir.parent / "model"))
    model = AutoModelForMaskedLM.from_config(config)
    options = TrainingArguments(
        output_dir=str(work), per_device_train_batch_size=args.batch_size, max_steps=steps, learning_rate=1e-4,
        warmup_steps=round(0.01 * steps), weight_decay=0.01, optim="adamw_torch_fused", logging_strategy="no",
        save_strategy="no", eval_strategy="no", report_to=[], dataloader_num_workers=0, seed=1,
        bf16=precision == "bf16", fp16=precision == "fp16", disable_tqdm=True, use_cpu=not torch.cuda.is_available())
    trainer = Trainer(model=model, args=options, train_dataset=Sequences(),
                      data_collator=DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15),
                      callbacks=[Clock()])
    trainer.train()
    return steps * args.batch_size * args.max_length / (clock["end"] - clock["start"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="corpus folder (default: one made from the sample texts)")
    parser.add_argument("--model", default="hf-tiny")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mixed-precision", default="auto")
    parser.add_argument("--token-masking", action="store_true", help="clue arm: single-token masking")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pretrain-bench-"))
    try:
        corpus = args.corpus
        if corpus is None:
            from tests.models_hf.pretrain_samples import write_corpus

            corpus = write_corpus(work / "corpus", repeat=20)
        out = work / "clue"
        _, metrics = clue_arm(corpus, out, args, args.steps)  # warm-up; tokenizes once for every pass
        for name in ("training", "metrics.json"):
            path = out / name
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        keep = work / "keep"
        shutil.copytree(out, keep)
        clue, trainer = [], []
        for repeat in range(args.repeats):
            for arm in (("clue", "trainer") if repeat % 2 == 0 else ("trainer", "clue")):
                if arm == "clue":
                    shutil.rmtree(out)
                    shutil.copytree(keep, out)
                    rate, metrics = clue_arm(corpus, out, args, args.steps, resume=True)
                    clue.append(rate)
                else:
                    trainer.append(trainer_arm(keep / "data", args, args.steps, work / "trainer",
                                               metrics["mixed_precision"]))
                print(f"pass {repeat + 1} {arm}: {(clue if arm == 'clue' else trainer)[-1]:,.0f} tokens/s",
                      flush=True)
        best_clue, best_trainer = max(clue), max(trainer)
        print(f"model {args.model}, {args.steps} steps × batch {args.batch_size} × {args.max_length} tokens, "
              f"mixed precision {metrics['mixed_precision']}, {metrics['data']['train_sequences']} sequences")
        print(f"trainer (run_mlm.py-style): {best_trainer:,.0f} tokens/s")
        print(f"clue-core pretrain:         {best_clue:,.0f} tokens/s")
        ratio = best_clue / best_trainer
        print(f"ratio {ratio:.2f}× (goal ≥ {GOAL}×: {'met' if ratio >= GOAL else 'not met'})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
