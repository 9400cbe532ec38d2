"""Write the bundled samples of clue-tasks-classic in the exact official layouts.

Run from anywhere: ``python plugins/clue-tasks-classic/tools/make_samples.py``. The
output is deterministic (fixed seed), so re-running it leaves ``git diff`` empty. The
text is ours (``sample_text.py``); only the file names, field names, id conventions and
label codes follow the official archives.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sample_text as T

ROOT = Path(__file__).resolve().parents[1] / "clue_tasks_classic" / "samples"
SEED = 2020

sys.path.insert(0, str(ROOT.parents[1]))
from clue_tasks_classic.labels import IFLYTEK_DESCRIPTIONS, TNEWS_DESCRIPTIONS  # noqa: E402


def write(path: Path, records: list[dict], *, compact: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    separators = (",", ":") if compact else (", ", ": ")
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, separators=separators) + "\n")


def shuffled(items: list, salt: int) -> list:
    items = list(items)
    random.Random(SEED + salt).shuffle(items)
    return items


def afqmc(out: Path) -> None:
    rng = random.Random(SEED)
    pairs = []
    groups = [group for group, _ in T.AFQMC_GROUPS]
    for index, (group, twin) in enumerate(T.AFQMC_GROUPS):
        other = rng.choice([g for i, g in enumerate(groups) if i not in (index, twin)])
        pairs.append((group[0], group[1], "1"))
        pairs.append((group[0], groups[twin][0], "0"))
        pairs.append((group[2], other[2], "0"))
    pairs = shuffled(pairs, 1)
    train, dev, test = pairs[:34], pairs[34:50], pairs[50:]
    write(out / "train.json", [{"sentence1": a, "sentence2": b, "label": y} for a, b, y in train])
    write(out / "dev.json", [{"sentence1": a, "sentence2": b, "label": y} for a, b, y in dev])
    write(out / "test.json", [{"id": i, "sentence1": a, "sentence2": b} for i, (a, b, _) in enumerate(test)])


def tnews(out: Path) -> None:
    parts: dict[str, list] = {"train": [], "dev": [], "test": [], "test1.0": []}
    for label, (titles, pool) in T.TNEWS_TITLES.items():
        for position, title in enumerate(titles):
            split = ["train", "train", "dev", "test", "test1.0"][position]
            keywords = pool if position % 2 == 0 else ""
            parts[split].append((label, title, keywords))
    for salt, split in enumerate(("train", "dev")):
        write(out / f"{split}.json", [
            {"label": y, "label_desc": TNEWS_DESCRIPTIONS[y], "sentence": s, "keywords": k}
            for y, s, k in shuffled(parts[split], 10 + salt)])
    for salt, split in enumerate(("test", "test1.0")):
        write(out / f"{split}.json", [{"id": i, "sentence": s, "keywords": k}
                                      for i, (_, s, k) in enumerate(shuffled(parts[split], 20 + salt))])
    write(out / "labels.json", [{"label": y, "label_desc": d} for y, d in TNEWS_DESCRIPTIONS.items()])


def iflytek(out: Path) -> None:
    parts: dict[str, list] = {"train": [], "dev": [], "test": []}
    for label, apps in T.IFLYTEK_APPS.items():
        for position, text in enumerate(apps):
            parts[["train", "train", "train", "dev", "test"][position]].append((label, text))
    for salt, split in enumerate(("train", "dev")):
        write(out / f"{split}.json", [{"label": y, "label_des": IFLYTEK_DESCRIPTIONS[y], "sentence": s}
                                      for y, s in shuffled(parts[split], 30 + salt)])
    write(out / "test.json", [{"id": i, "sentence": s} for i, (_, s) in enumerate(shuffled(parts["test"], 32))])
    write(out / "labels.json", [{"label": y, "label_des": d} for y, d in IFLYTEK_DESCRIPTIONS.items()])


NLI_ORDER = ("entailment", "neutral", "contradiction")
UNDECIDED_VOTES = ["neutral", "entailment", "neutral", "entailment", "contradiction"]


def _nli_items(premises: list, undecided: dict[int, str], indices: range) -> list:
    items = []
    for index in indices:
        premise, hypotheses = premises[index][-4], premises[index][-3:]
        items += [(index, premise, hypothesis, label) for hypothesis, label in zip(hypotheses, NLI_ORDER)]
        if index in undecided:
            items.append((index, premise, undecided[index], "-"))
    return items


def ocnli(out: Path) -> None:
    splits = {"train": range(0, 12), "dev": range(12, 17), "test": range(17, 22)}
    levels = ("easy", "medium", "hard")
    for salt, (split, indices) in enumerate(splits.items()):
        records = []
        for number, (index, premise, hypothesis, label) in enumerate(
                shuffled(_nli_items(T.OCNLI_PREMISES, T.OCNLI_UNDECIDED, indices), 40 + salt)):
            genre = T.OCNLI_PREMISES[index][0]
            if split == "test":
                records.append({"sentence1": premise, "sentence2": hypothesis, "id": number})
                continue
            if split == "train":
                votes = [None] * 5
            elif label == "-":
                votes = UNDECIDED_VOTES
            else:
                dissent = NLI_ORDER[(NLI_ORDER.index(label) + 1) % 3]
                votes = [label, label, dissent if number % 2 else label, label, label]
            record = {"level": "na" if split == "train" else levels[number % 3], "sentence1": premise,
                      "sentence2": hypothesis, "label": label}
            record.update({f"label{k}": vote for k, vote in enumerate(votes)})
            record.update({"genre": genre, "prem_id": f"{genre}_{100 + index}", "id": number})
            records.append(record)
        write(out / ("train.50k.json" if split == "train" else f"{split}.json"), records, compact=True)


def cmnli(out: Path) -> None:
    out = out / "cmnli_public"
    splits = {"train": range(0, 10), "dev": range(10, 15), "test": range(15, 20)}
    for salt, (split, indices) in enumerate(splits.items()):
        items = shuffled(_nli_items(T.CMNLI_PREMISES, T.CMNLI_UNDECIDED, indices), 50 + salt)
        if split == "test":
            records = [{"id": i, "sentence1": p, "sentence2": h} for i, (_, p, h, _) in enumerate(items)]
        else:
            records = [{"sentence1": p, "sentence2": h, "label": y} for _, p, h, y in items]
        write(out / f"{split}.json", records)


_MARK = re.compile(r"\[\[(.+?)\]\]|\(\((.+?)\)\)|\{\{(.+?)\}\}")


def _wsc_parse(marked: str) -> tuple[str, dict[str, tuple[str, int]]]:
    """Strip the [[referent]] ((other)) {{pronoun}} marks, remembering each span's offset."""
    text, spans, last = "", {}, 0
    for match in _MARK.finditer(marked):
        text += marked[last:match.start()]
        kind = ("referent", "other", "pronoun")[[g is not None for g in match.groups()].index(True)]
        span = next(g for g in match.groups() if g is not None)
        spans[kind] = (span, len(text))
        text += span
        last = match.end()
    return text + marked[last:], spans


def cluewsc2020(out: Path) -> None:
    splits = {"train": range(0, 14), "dev": range(14, 20), "test": range(20, 27), "test1.0": range(27, 34)}
    for salt, (split, indices) in enumerate(splits.items()):
        items = []
        for index in indices:
            text, spans = _wsc_parse(T.WSC_TEXTS[index])
            pronoun, pronoun_at = spans["pronoun"]
            for candidate, label in (("referent", "true"), ("other", "false")):
                noun, noun_at = spans[candidate]
                target = {"span2_index": pronoun_at, "span1_index": noun_at, "span1_text": noun,
                          "span2_text": pronoun}
                items.append((target, label, text))
        items = shuffled(items, 60 + salt)
        if split in ("train", "dev"):
            records = [{"target": t, "idx": i, "label": y, "text": x} for i, (t, y, x) in enumerate(items)]
        else:
            first = 1 if split == "test1.0" else 0  # the official test1.0 ids start at 1
            records = [{"target": t, "id": first + i, "text": x} for i, (t, _, x) in enumerate(items)]
        write(out / f"{split}.json", records)


def csl(out: Path) -> None:
    rng = random.Random(SEED + 70)
    splits = {"train": range(0, 14), "dev": range(14, 21), "test": range(21, 28)}
    for salt, (split, indices) in enumerate(splits.items()):
        items = []
        for index in indices:
            abstract, keywords, fake = T.CSL_ABSTRACTS[index]
            items.append((abstract, list(keywords), "1"))
            forged = list(keywords)
            forged[rng.randrange(len(forged))] = fake
            items.append((abstract, forged, "0"))
        items = shuffled(items, 70 + salt)
        if split == "test":
            records = [{"id": 2400 + 3 * i, "abst": a, "keyword": k} for i, (a, k, _) in enumerate(items)]
        else:
            records = [{"id": i, "abst": a, "keyword": k, "label": y} for i, (a, k, y) in enumerate(items)]
        write(out / f"{split}.json", records)


def diagnostics(out: Path) -> None:
    write(out / "diagnostics_test.json",
          [{"index": i, "premise": p, "hypothesis": h} for i, (p, h) in enumerate(T.DIAGNOSTIC_PAIRS, start=1)])


BUILDERS = {"afqmc": afqmc, "tnews": tnews, "iflytek": iflytek, "ocnli": ocnli, "cmnli": cmnli,
            "cluewsc2020": cluewsc2020, "csl": csl, "diagnostics": diagnostics}


def main() -> None:
    for name, build in BUILDERS.items():
        out = ROOT / name
        if out.exists():
            shutil.rmtree(out)
        build(out)
        files = sorted(p.relative_to(ROOT) for p in out.rglob("*.json"))
        print(name, ", ".join(f"{f} ({sum(1 for _ in (ROOT / f).open(encoding='utf-8'))})" for f in files))


if __name__ == "__main__":
    main()
