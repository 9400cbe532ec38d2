"""A small CLUECorpus2020-style corpus made from the bundled classic samples' texts.

Four sub-corpora named like CLUECorpus2020's, two files each, one sentence per line and a
blank line between documents (documents of 2 to 5 sentences). The same call always writes
the same bytes.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from tests.conftest import REPO_ROOT

SAMPLES = REPO_ROOT / "plugins" / "clue-tasks-classic" / "clue_tasks_classic" / "samples"
SOURCES = {  # sub-corpus: (task, fields)
    "news2016zh_corpus": ("tnews", ("sentence",)),
    "comments2019zh_corpus": ("afqmc", ("sentence1", "sentence2")),
    "wiki2019zh_corpus": ("csl", ("abst",)),
    "webText2019zh_corpus": ("iflytek", ("sentence",)),
}


def sample_sentences(task: str, fields: tuple[str, ...]) -> list[str]:
    sentences: list[str] = []
    for split in ("train", "dev", "test"):
        path = SAMPLES / task / f"{split}.json"
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            for name in fields:
                text = str(record.get(name) or "")
                sentences.extend(s for s in re.split(r"(?<=[。！？])", text) if s.strip())
    return sentences


def write_corpus(root: Path, repeat: int = 1) -> Path:
    """The corpus under ``root``; ``repeat`` copies the texts (more sequences for training tests)."""
    rng = random.Random(0)
    for corpus, (task, fields) in SOURCES.items():
        sentences = sample_sentences(task, fields) * repeat
        documents, i = [], 0
        while i < len(sentences):
            n = rng.randint(2, 5)
            documents.append(sentences[i:i + n])
            i += n
        folder = root / corpus
        folder.mkdir(parents=True, exist_ok=True)
        half = len(documents) // 2
        for number, part in enumerate((documents[:half], documents[half:])):
            text = "\n\n".join("\n".join(doc) for doc in part) + "\n"
            (folder / f"{corpus[:4]}_{number:04d}.txt").write_text(text, encoding="utf-8")
    return root
