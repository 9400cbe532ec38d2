"""Well-known Chinese-capable causal LMs, listed by ``clue-core list models``.

Pure data, imported by ``hooks.py``: nothing here may import torch or transformers.
Every entry is the family ``llm:<hub id>`` with a size class, a parameter count from the
model card and what the model needs by default (instruction-tuned models are asked
through their chat template; Qwen3's thinking is off unless ``--set thinking=true``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    hub_id: str
    size_class: str
    parameters: int
    description: str
    recommendations: Mapping[str, Any] = field(default_factory=dict)


CHAT = {"chat": True}

CATALOGUE: tuple[CatalogueEntry, ...] = (
    CatalogueEntry("Qwen/Qwen2.5-0.5B", "small", 494_000_000, "Qwen2.5 0.5B base model (24 layers, 896 hidden)"),
    CatalogueEntry("Qwen/Qwen2.5-0.5B-Instruct", "small", 494_000_000, "Qwen2.5 0.5B, instruction-tuned (chat)",
                   CHAT),
    CatalogueEntry("Qwen/Qwen2.5-7B-Instruct", "large", 7_620_000_000, "Qwen2.5 7B, instruction-tuned (chat)",
                   CHAT),
    CatalogueEntry("Qwen/Qwen3-0.6B", "small", 600_000_000,
                   "Qwen3 0.6B reasoning model (chat; thinking switch, off by default)", {**CHAT, "thinking": False}),
    CatalogueEntry("Qwen/Qwen3-8B", "large", 8_200_000_000,
                   "Qwen3 8B reasoning model (chat; thinking switch, off by default)", {**CHAT, "thinking": False}),
)


def recommendations(entry: CatalogueEntry) -> Mapping[str, Mapping[str, Any]]:
    """A ModelSpec's ``recommendations``: the entry's defaults, for every example kind."""
    return {"*": dict(entry.recommendations)} if entry.recommendations else {}
