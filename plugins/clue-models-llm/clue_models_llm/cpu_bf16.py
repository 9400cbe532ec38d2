"""Whether this CPU computes bf16 natively, what ``dtype=auto`` of ``llm:`` becomes here (no torch at import),
and the ``bf16-mixed`` mode it becomes (:func:`to_mixed`: torch imported only there).

On a CPU with AVX-512 BF16 or AMX a bf16 matmul runs at 2-3x the fp32 rate, so ``dtype=auto``
loads ``llm:`` as bf16-mixed there when the checkpoint is stored in bfloat16 (its weights are then
exactly the file's): the weights and matmuls in bf16, everything else float32, which keeps the
log-likelihoods closer to float32's than ``dtype=bfloat16`` (every tensor bf16) at the same speed;
elsewhere torch emulates bf16 far below the fp32 rate, so auto stays float32.
The answer comes from the CPU's flags in ``/proc/cpuinfo`` (cheap: ``--dry-run`` shows it without
importing torch) and, where torch is already imported (the model is loading) or
there is no ``/proc/cpuinfo`` (macOS, Windows), from torch's own probes: a torch build that does not
use the instructions gets no bf16 from auto, whatever the CPU has. Two sources never resolve auto
to bf16: ``llm-tiny`` (its outputs are the tests' and goldens' references, the same on every CPU) and
``llm:<file>.gguf`` (the dequantised reference for exactness, compared against llama.cpp).
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The /proc/cpuinfo flags of native bf16 arithmetic (x86): AVX-512 BF16 and AMX's bf16 tiles.
FLAGS = ("avx512_bf16", "amx_bf16")
CPUINFO = Path("/proc/cpuinfo")
#: torch's probes (``torch.cpu``), the ones clue-models-hf's training asks too.
TORCH_PROBES = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
#: The ``dtype`` value of the mixed mode (what ``dtype=auto`` becomes on a CPU with native bf16).
MIXED = "bf16-mixed"


@dataclass(frozen=True)
class Bf16:
    """The verdict and its reason, worded to follow ``auto:`` in ``--dry-run``."""

    native: bool
    why: str


def cpu_flags(text: str) -> set[str]:
    """Every flag on the ``flags`` lines of a /proc/cpuinfo text (x86; one line per logical CPU)."""
    found: set[str] = set()
    for line in text.splitlines():
        name, colon, value = line.partition(":")
        if colon and name.strip() == "flags":
            found.update(value.split())
    return found


def torch_probe() -> bool | None:
    """torch's own answer (``None`` where this torch has neither probe); imports torch."""
    import torch

    probes = [getattr(torch.cpu, name, None) for name in TORCH_PROBES]
    answers = [bool(probe()) for probe in probes if probe is not None]
    return any(answers) if answers else None


def detect(cpuinfo: str | None = None, *, system: str | None = None,
           probe: Callable[[], bool | None] | None = None) -> Bf16:
    """Native bf16 on this CPU? ``cpuinfo`` (the file's text), ``system`` and ``probe`` replace the machine's
    (tests); torch is asked only where it is already imported or there are no flags to read."""
    system = system or platform.system()
    if probe is None:
        probe = torch_probe if "torch" in sys.modules else None
    text = cpuinfo
    if text is None and system == "Linux":
        try:
            text = CPUINFO.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = None
    if text is None:
        where = f"{system}: no /proc/cpuinfo" if system != "Linux" else f"no readable {CPUINFO}"
        answer = (probe or torch_probe)()
        if answer:
            return Bf16(True, f"torch finds native bf16 on this CPU ({where})")
        return Bf16(False, f"no native bf16 found ({where}, and torch's check says no)")
    flags = [flag for flag in FLAGS if flag in cpu_flags(text)]
    if not flags:
        return Bf16(False, f"no native bf16 on this CPU (neither {' nor '.join(FLAGS)} in its flags)")
    if probe is not None and probe() is False:
        return Bf16(False, f"this CPU has {', '.join(flags)}, but this torch build does not use it")
    return Bf16(True, f"this CPU has native bf16 ({', '.join(flags)})")


def reference_source(source: str | None) -> str | None:
    """Why ``source`` keeps float32 under auto (llm-tiny, a GGUF file), or ``None``."""
    if source is None:
        return "llm-tiny stays float32 (the reference outputs, the same on every CPU)"
    if source.lower().endswith(".gguf"):
        return "llm:<file>.gguf stays float32 (the dequantised reference for exactness)"
    return None


def stored_dtype(config: Mapping[str, Any]) -> str | None:
    """The dtype a checkpoint's config.json says its weights are stored in (``dtype``, the older
    ``torch_dtype``, or a multimodal model's ``text_config``), as transformers' own ``dtype="auto"`` reads it."""
    for holder in (config, config.get("text_config")):
        if isinstance(holder, Mapping):
            for key in ("dtype", "torch_dtype"):
                value = holder.get(key)
                if isinstance(value, str) and value:
                    return value.removeprefix("torch.")
    return None


def checkpoint_config(source: str, revision: str = "", *, download: bool = False) -> Mapping[str, Any] | None:
    """A folder's or hub id's config.json (``download``: fetched as loading would, else only a cached copy);
    ``None`` where there is none to read (loading then says why in its own words)."""
    import json

    folder = Path(source).expanduser()
    try:
        path: Any = folder / "config.json" if folder.is_dir() else None
    except OSError:  # a name too long for the file system: not a folder (loading says so)
        return None
    if path is None:
        try:
            from huggingface_hub import hf_hub_download, try_to_load_from_cache

            path = (hf_hub_download(source, "config.json", revision=revision or None) if download
                    else try_to_load_from_cache(source, "config.json", revision=revision or None))
        except Exception:  # no network, no such repository, a malformed id: loading names the problem
            return None
        if not isinstance(path, str):
            return None
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return config if isinstance(config, dict) else None


def auto_on_cpu(source: str | None, revision: str = "", *, download: bool = False,
                bf16: Bf16 | None = None) -> tuple[str | None, str]:
    """``(dtype name, reason)`` that ``dtype=auto`` resolves to on the CPU for ``source``; the name is ``None``
    where only loading can tell (a hub checkpoint not cached yet, asked without ``download``).

    bf16-mixed (:data:`MIXED`) needs native bf16 *and* a checkpoint stored in bfloat16 (most current LLMs):
    its weights are then exactly what the file holds. A checkpoint stored in float32 (a model trained here, an
    older one) keeps float32: rounding its weights to bf16 changed the sample answers of a small fine-tuned model.
    """
    reason = reference_source(source)
    if reason or source is None:
        return "float32", reason or ""
    bf16 = bf16 or detect()
    if not bf16.native:
        return "float32", bf16.why
    config = checkpoint_config(source, revision, download=download)
    if config is None:
        if not download:
            return None, f"{bf16.why}: {MIXED} if the checkpoint is stored in bfloat16 (read when it loads)"
        return "float32", f"{bf16.why}, but no config.json says the checkpoint's dtype"
    stored = stored_dtype(config)
    if stored == "bfloat16":
        return MIXED, f"{bf16.why}, and the checkpoint is stored in bfloat16"
    return "float32", f"{bf16.why}, but the checkpoint is stored in {stored or 'an unnamed dtype'}"


def _maybe_gpu() -> bool:
    """A CUDA GPU may be visible (the driver's devices exist); then only torch can say what auto is."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    return Path("/dev/nvidia0").exists() or ("torch" in sys.modules and _cuda())


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def explain(model: str, argument: str | None, values: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    """``--dry-run``: ``dtype=auto`` as it will load here, with why (the kernel's ``ModelSpec.explain``).

    ``model`` is the spec's name (``llm``, ``llm-tiny``, a catalogue name ``llm:<hub id>``), ``argument``
    a family's text after ``llm:``: together they name the source the backend loads.
    """
    if values.get("dtype") != "auto" or values.get("device_map"):
        return {}
    if _maybe_gpu():
        return {"dtype": ("auto", "auto: a CUDA GPU: bfloat16 where it has bf16, else float16 (when it loads)")}
    source = None if model == "llm-tiny" else argument or model.partition(":")[2] or model
    name, why = auto_on_cpu(source, str(values.get("revision") or ""))
    return {"dtype": (name or "auto", f"auto: {why}")}


# -- bf16-mixed: bf16 weights, float32 activations ---------------------------------------------------------

_CLASSES: dict[type, type] = {}


def _mixed_class(cls: type, forward: Callable[..., Any], **more: Any) -> type:
    """``cls`` with ``forward`` replaced (one subclass per class, made once): the module keeps its attributes,
    ``isinstance`` checks still hold, and the class name says what it computes."""
    if cls not in _CLASSES:
        _CLASSES[cls] = type(f"Bf16Mixed{cls.__name__}", (cls,), {"forward": forward, "bf16_mixed": True, **more})
    return _CLASSES[cls]


def _linear_forward(self: Any, hidden: Any) -> Any:
    """fp32 in, fp32 out: the input rounded to bf16 for oneDNN's bf16 kernel (fp32 accumulation inside),
    its result widened back; the bias (kept fp32) added after, in fp32."""
    import torch
    from torch.nn import functional

    out = functional.linear(hidden.to(self.weight.dtype), self.weight).to(torch.float32)
    return out if self.bias is None else out + self.bias


def _embedding_forward(self: Any, ids: Any) -> Any:
    """The bf16 rows widened to fp32; a scaled embedding (Gemma's ``embed_scale``) scaled in fp32, by the
    exact Python number where the module keeps one (its buffer may have been made in bf16 at load)."""
    import torch
    from torch.nn import functional

    out = functional.embedding(ids, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.sparse).to(torch.float32)
    scale = getattr(self, "scalar_embed_scale", None)
    if scale is None and isinstance(getattr(self, "embed_scale", None), torch.Tensor):
        scale = self.embed_scale.to(torch.float32)
    return out if scale is None else out * scale


def _other_embedding_forward(self: Any, ids: Any) -> Any:
    """An embedding class of unknown arithmetic: its own forward, the result widened to fp32."""
    import torch

    return super(type(self), self).forward(ids).to(torch.float32)


def _compute_dtype(self: Any) -> Any:
    """What the model computes in (float32), not its first parameter's dtype (bf16): masks built from
    ``model.dtype`` must match the float32 attention scores."""
    import torch

    return torch.float32


def to_mixed(model: Any) -> Any:
    """Turn a loaded model (float32 or bf16) into bf16-mixed, in place, and return it.

    Why: with every tensor in bf16 (``dtype=bfloat16``) the residual stream, norms and softmax
    round to 8 bits of mantissa at every layer, and gemma-3-270m's choice log-likelihoods moved
    0.083 on average from float32's; the matmuls are what native bf16 speeds up. So the weights of
    every ``Linear`` and ``Embedding`` (nearly all the memory) are stored in bf16, once — a float32
    copy is not kept — and everything else (norm weights, biases, buffers, the residual, attention,
    softmax) stays float32: each Linear takes its float32 input, rounds it to bf16, multiplies
    (fp32 accumulation inside oneDNN) and returns float32. It is what ``torch.autocast`` does for
    matmuls without autocast's cast of the fp32 weights at every call. Tied weights (Gemma's head is
    its embedding) are one tensor, converted once.
    """
    import torch
    from torch import nn

    from clue_core.plugin import ClueError

    for module in model.modules():
        if isinstance(module, (nn.Linear, nn.Embedding)) and "forward" in vars(module):
            raise ClueError(f"dtype={MIXED}: {type(module).__name__} {module!r:.60} has its forward replaced (by "
                            f"device_map's hooks?); use dtype=bfloat16 or float32 with it")
        mixed = getattr(module, "bf16_mixed", False)
        if isinstance(module, nn.Linear) and not mixed and type(module).forward is not nn.Linear.forward:
            # a quantised or adapter layer (bitsandbytes, peft) computes its own way: F.linear would be wrong
            raise ClueError(f"dtype={MIXED}: this model's {type(module).__name__} layers compute their own way, not "
                            f"as a plain Linear; use dtype=bfloat16 or float32 with it")
    for module in model.modules():
        if isinstance(module, nn.Linear) and not getattr(module, "bf16_mixed", False):
            module.__class__ = _mixed_class(type(module), _linear_forward)
        elif isinstance(module, nn.Embedding) and not getattr(module, "bf16_mixed", False):
            plain = type(module).forward is nn.Embedding.forward or hasattr(module, "scalar_embed_scale")
            module.__class__ = _mixed_class(type(module), _embedding_forward if plain else _other_embedding_forward)
        else:
            continue
        module.weight.data = module.weight.data.to(torch.bfloat16)
    for module in model.modules():
        for name, param in module.named_parameters(recurse=False):
            if param.is_floating_point() and not (name == "weight" and getattr(module, "bf16_mixed", False)):
                param.data = param.data.to(torch.float32)
        for name, buffer in module.named_buffers(recurse=False):
            if buffer.is_floating_point():
                setattr(module, name, buffer.to(torch.float32))
        if isinstance(getattr(type(module), "dtype", None), property) and not getattr(module, "bf16_mixed", False):
            module.__class__ = _mixed_class(type(module), type(module).forward, dtype=property(_compute_dtype))
    return model


def is_mixed(model: Any) -> bool:
    """Whether :func:`to_mixed` turned ``model`` into bf16-mixed."""
    return bool(getattr(model, "bf16_mixed", False))
