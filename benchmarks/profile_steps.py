"""What ``benchmarks/bf16_profile.py`` finds in a profiled run (a helper, not a script).

:class:`Profiled`, a ``torch.profiler`` run summarised per step (phases, ops, dtype
conversions), and :class:`Census`, every op of one step in the dtype it computes in.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

PRECISIONS = ("no", "bf16")
LABEL = {"no": "fp32", "bf16": "bf16"}
ARMS = ("clue", "plain")
COLUMNS = [(arm, precision) for arm in ARMS for precision in PRECISIONS]
#: the ops that do a step's matmul FLOPs (attention too: BERT's SDPA runs its math kernel, bmm, in training)
MATMUL_OPS = ("aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm",
              "aten::_scaled_dot_product_flash_attention_for_cpu",
              "aten::_scaled_dot_product_flash_attention_for_cpu_backward")
CASTS = ("aten::to", "aten::_to_copy", "aten::copy_")
#: step phases, by the annotation an op sits under (the outermost one wins)
PHASES = {
    "clue::collate": "collate",
    "clue::forward": "forward",
    "clue::backward": "backward",
    "clue::clip_grad_norm": "clip_grad_norm",
    "Optimizer.step#AdamW.step": "optimizer step",
    "Optimizer.zero_grad#AdamW.zero_grad": "zero_grad",
}
PHASE_ORDER = ("collate", "forward", "backward", "clip_grad_norm", "optimizer step", "zero_grad", "rest of the loop")
#: the assumed k of the estimate (bf16 matmul time = fp32 matmul time / k); inf: bf16 matmuls cost nothing
SHORT = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float64: "fp64", torch.float16: "fp16"}


# ---- what one profiled run found -----------------------------------------------------------------------


@dataclass
class Profiled:
    """The profiled steps of one arm in one precision; every figure is per step."""

    steps: int
    #: unprofiled run: median seconds of a step after the warm-up
    step_seconds: float
    #: profiled: wall ms of a step, and ms per phase
    wall_ms: float = 0.0
    phase_ms: dict[str, float] = field(default_factory=dict)
    #: aten op -> (calls, self ms)
    ops: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: (phase, source dtype) -> (calls, elements) of aten::_to_copy
    conversions: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    aten_calls: float = 0.0

    @property
    def self_ms(self) -> float:
        return sum(ms for _, ms in self.ops.values())

    def ms(self, names: Iterator[str] | tuple[str, ...]) -> float:
        return sum(self.ops.get(name, (0.0, 0.0))[1] for name in names)

    def calls(self, name: str) -> float:
        return self.ops.get(name, (0.0, 0.0))[0]


def _ancestors(event: Any) -> Iterator[Any]:
    node = event.cpu_parent
    while node is not None:
        yield node
        node = node.cpu_parent


def _phase(event: Any) -> str:
    """The outermost annotated phase an event sits in (itself included)."""
    found = PHASES.get(event.name, "rest of the loop")
    for node in _ancestors(event):
        found = PHASES.get(node.name, found)
    return found


def _elements(shape: Any) -> int:
    count = 1
    for size in shape or ():
        count *= int(size)
    return count


def summarise(prof: Any, steps: int, step_seconds: float) -> Profiled:
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CPU]
    result = Profiled(steps, step_seconds)
    result.wall_ms = statistics.fmean(e.cpu_time_total for e in events if e.name.startswith("ProfilerStep")) / 1000
    phases: dict[str, float] = defaultdict(float)
    ops: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    conversions: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for event in events:
        if event.name in PHASES and not any(node.name in PHASES for node in _ancestors(event)):
            phases[PHASES[event.name]] += event.cpu_time_total / 1000
        if not event.name.startswith("aten::"):  # annotations, ProfilerStep
            continue
        result.aten_calls += 1
        ops[event.name][0] += 1
        ops[event.name][1] += event.self_cpu_time_total / 1000
        if event.name == "aten::_to_copy":
            source = {"float": "fp32", "c10::BFloat16": "bf16", "double": "fp64"}.get(
                (event.input_dtypes or ["-"])[0] or "-", "other")
            key = (_phase(event), source)
            conversions[key][0] += 1
            conversions[key][1] += _elements((event.input_shapes or [[]])[0])
    result.phase_ms = {name: ms / steps for name, ms in phases.items()}
    result.phase_ms["rest of the loop"] = result.wall_ms - sum(result.phase_ms.values())
    result.ops = {name: (calls / steps, ms / steps) for name, (calls, ms) in ops.items()}
    result.conversions = {key: (calls / steps, n / steps) for key, (calls, n) in conversions.items()}
    result.aten_calls /= steps
    return result


#: matmuls the census skips (their result: zeros of the right shape and dtype); op -> output shape
SKIPPED: dict[str, Callable[..., tuple[int, ...]]] = {
    "mm": lambda a, b, *_: (a.shape[0], b.shape[1]),
    "addmm": lambda bias, a, b, *_: (a.shape[0], b.shape[1]),
    "bmm": lambda a, b, *_: (a.shape[0], a.shape[1], b.shape[2]),
}


class Census(TorchDispatchMode):
    """Every aten op of one step in the dtype it computes in (seen below autocast and autograd).

    It counts while ``counting`` is set. It only counts ops, so it skips the matmuls
    (:data:`SKIPPED`: zeros of the right shape and dtype instead); emulated bf16 matmuls
    would take minutes per step at BERT-base size, and nothing in a BERT step branches on
    their values.
    """

    def __init__(self) -> None:
        super().__init__()
        self.counting = False
        #: (op, dtype of its first floating tensor input) -> calls
        self.ops: Counter[tuple[str, str]] = Counter()
        #: (from, to) -> [calls, elements] of dtype conversions (_to_copy, and copy_ across dtypes)
        self.conversions: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        if name in SKIPPED and not kwargs and func._overloadname == "default":
            out = torch.zeros(SKIPPED[name](*args), dtype=args[1].dtype)
        else:
            out = func(*args, **kwargs)
        if not self.counting:
            return out
        tensors = [a for a in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
        floating = [t for t in tensors if t.is_floating_point()]
        self.ops[(name, SHORT.get(floating[0].dtype, str(floating[0].dtype)) if floating else "-")] += 1
        pair = None
        if name == "_to_copy" and isinstance(out, torch.Tensor) and tensors and tensors[0].dtype != out.dtype:
            pair = (tensors[0], out)
        elif name == "copy_" and len(tensors) >= 2 and tensors[0].dtype != tensors[1].dtype:
            pair = (tensors[1], tensors[0])
        if pair and pair[0].is_floating_point() and pair[1].is_floating_point():
            key = (SHORT.get(pair[0].dtype, str(pair[0].dtype)), SHORT.get(pair[1].dtype, str(pair[1].dtype)))
            self.conversions[key][0] += 1
            self.conversions[key][1] += out.numel() if isinstance(out, torch.Tensor) else 0
        return out
