"""llama.cpp through llama-cpp-python's low-level API: one model, one context, one sequence, logits on request.

Imported only by :meth:`~clue_models_llm.backends.llamacpp.LlamaCppBackend.load` (it imports
``llama_cpp`` and numpy at its top). The high-level ``Llama`` class is not used: its
``eval`` keeps a score row for every position (``logits_all``) or only the last one, and
its log-probabilities go through the echo path, which sorts the 262k-entry vocabulary in
Python. Here a batch asks llama.cpp for the logits of exactly the positions a choice needs
(``llama_batch.logits`` per token), and each row is read one at a time (1 MB for a 262k
vocabulary) and reduced to the one log-probability wanted.

Why one sequence, decoded the same way for every request. llama.cpp's CPU kernels do not
give the same logits for a token whatever batch it was computed in: how a call's tokens
fall into the matrix kernels' tiles changes the sums (on gemma-3-270m Q4_K_M a position's
logits moved by up to 1.0 between a 22-token call and a 5 + 17 split). So each request is
computed as if alone: its prompt from position 0 in calls of ``n_batch`` tokens, then each
choice's tokens in a call of their own after the prompt's cache (the choice before it
trimmed off). A choice's log-likelihood is then a function of its prompt, its tokens and
``n_batch`` only — never of the questions scored before it or of its sibling choices — and
equals what ``Llama(logits_all=True).eval(prompt); .eval(choice)`` computes.
"""

from __future__ import annotations

import ctypes
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import llama_cpp
import numpy as np

from clue_core.plugin import ClueError

#: Metadata keys read for the description (the rest of a GGUF's metadata is not needed).
TEMPLATE_KEY = "tokenizer.chat_template"


class Engine:
    """A GGUF model loaded by llama.cpp with one context; raises one :class:`ClueError` line when it cannot."""

    def __init__(self, path: str, *, n_ctx: int, n_batch: int, n_threads: int) -> None:
        _quiet()
        llama_cpp.llama_backend_init()
        params = llama_cpp.llama_model_default_params()
        self.model = llama_cpp.llama_model_load_from_file(path.encode(), params)
        if not self.model:
            raise ClueError(f"{path}: llama.cpp cannot load this GGUF file (an architecture or tensor type this "
                            f"llama.cpp {llama_cpp.__version__} does not know, or a damaged file)")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self.train_ctx = int(llama_cpp.llama_model_n_ctx_train(self.model))
        context = llama_cpp.llama_context_default_params()
        context.n_ctx = n_ctx or self.train_ctx
        context.n_batch = context.n_ubatch = n_batch
        context.n_seq_max = 1
        context.n_threads = context.n_threads_batch = n_threads
        context.swa_full = True  # a sliding-window cache that keeps every position can be trimmed back
        # what auto picks on a CPU, fixed: flash attention's sums differ from the other path's, and a run's answers
        # must not change with what llama.cpp's auto decides
        context.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
        self.ctx = llama_cpp.llama_init_from_model(self.model, context)
        if not self.ctx:
            llama_cpp.llama_model_free(self.model)
            self.model = None
            raise ClueError(f"{path}: llama.cpp could not create a context of n_ctx={context.n_ctx} tokens "
                            f"(not enough memory?); set a smaller n_ctx")
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.n_ctx = int(llama_cpp.llama_n_ctx(self.ctx))
        # llama.cpp clamps the batch to the context (and asserts, killing the process, on a call over it)
        self.n_batch = min(n_batch, int(llama_cpp.llama_n_batch(self.ctx)), int(llama_cpp.llama_n_ubatch(self.ctx)))
        self.batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self.filled = 0  # positions of sequence 0 in the cache
        self.metadata = self._metadata((TEMPLATE_KEY, "general.architecture", "general.name"))

    def set_threads(self, threads: int) -> None:
        """Compute with ``threads`` from now on (a later task of the run may set another count)."""
        llama_cpp.llama_set_n_threads(self.ctx, threads, threads)

    def system_info(self) -> str:
        """llama.cpp's system info: the features of the CPU backend it loaded (a portable build picks one variant
        per CPU at start), e.g. ``CPU : SSE3 = 1 | … | AVX512 = 1 | … | REPACK = 1 |``."""
        return llama_cpp.llama_print_system_info().decode("utf-8", errors="replace").strip()

    def describe(self) -> str:
        """llama.cpp's one-line description of the model (architecture, size, quantisation)."""
        buffer = ctypes.create_string_buffer(256)
        llama_cpp.llama_model_desc(self.model, buffer, len(buffer))
        return buffer.value.decode("utf-8", errors="replace")

    def close(self) -> None:
        """Free the context, the batch and the model (in that order)."""
        if getattr(self, "ctx", None):
            llama_cpp.llama_batch_free(self.batch)
            llama_cpp.llama_free(self.ctx)
            self.ctx = None
        if getattr(self, "model", None):
            llama_cpp.llama_model_free(self.model)
            self.model = None

    # -- the vocabulary ---------------------------------------------------------------------

    def tokenize(self, text: str) -> list[int]:
        """The tokens of ``text``, special tokens' text read as those tokens, no BOS added (as transformers'
        ``tokenizer(text, add_special_tokens=False)``)."""
        data = text.encode("utf-8")
        size = len(data) + 16
        while True:
            out = (llama_cpp.llama_token * size)()
            count = llama_cpp.llama_tokenize(self.vocab, data, len(data), out, size, False, True)
            if count >= 0:
                return list(out[:count])
            size = -count

    def detokenize(self, ids: Sequence[int]) -> str:
        """The text of ``ids`` with special tokens written out; bytes of a character cut in two are U+FFFD."""
        pieces = bytearray()
        buffer = ctypes.create_string_buffer(256)
        for token in ids:
            count = llama_cpp.llama_token_to_piece(self.vocab, int(token), buffer, len(buffer), 0, True)
            pieces += buffer.raw[:count]
        return pieces.decode("utf-8", errors="replace")

    def special(self) -> dict[str, Any]:
        """BOS (where the vocabulary adds one), every end-of-generation token id, and the tokens' text."""
        bos = int(llama_cpp.llama_vocab_bos(self.vocab))
        adds = bool(llama_cpp.llama_vocab_get_add_bos(self.vocab)) and bos >= 0
        eog = [t for t in (int(llama_cpp.llama_vocab_eos(self.vocab)), int(llama_cpp.llama_vocab_eot(self.vocab)))
               if t >= 0]
        eog += [t for t in range(self.n_vocab) if t not in eog and llama_cpp.llama_vocab_is_eog(self.vocab, t)]
        text = {name: self.detokenize([token]) if token >= 0 else None
                for name, token in (("bos_token", bos), ("eos_token", int(llama_cpp.llama_vocab_eos(self.vocab))))}
        return {"bos": bos if adds else None, "eos_ids": eog, "text": text}

    def _metadata(self, keys: Iterable[str]) -> dict[str, str]:
        found = {}
        for key in keys:
            size = 1 << 16
            while True:
                buffer = ctypes.create_string_buffer(size)
                count = llama_cpp.llama_model_meta_val_str(self.model, key.encode(), buffer, size)
                if count < size:
                    break
                size = count + 1
            if count >= 0:
                found[key] = buffer.value.decode("utf-8", errors="replace")
        return found

    # -- computing --------------------------------------------------------------------------

    def trim(self, keep: int) -> None:
        """Forget every position from ``keep`` on (``0``: the whole sequence)."""
        if keep == 0:
            llama_cpp.llama_memory_clear(self.memory, True)
        elif keep < self.filled and not llama_cpp.llama_memory_seq_rm(self.memory, 0, keep, -1):
            raise ClueError("llama.cpp could not trim its cache (a model whose cache cannot be cut back)")
        self.filled = min(self.filled, keep)

    def decode(self, tokens: Sequence[int], wanted: Sequence[bool]) -> list[int]:
        """Run ``tokens`` after the cache in one call; the batch rows of the ``wanted`` positions' logits."""
        count = len(tokens)
        if not 0 < count <= self.n_batch:
            raise ValueError(f"decode takes 1 to {self.n_batch} tokens, not {count}")
        if self.filled + count > self.n_ctx:
            raise ClueError(f"llama.cpp: {self.filled + count} positions do not fit n_ctx={self.n_ctx}")
        batch = self.batch
        batch.n_tokens = count
        rows = []
        for i, (token, want) in enumerate(zip(tokens, wanted)):
            batch.token[i] = int(token)
            batch.pos[i] = self.filled + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = bool(want)
            if want:
                rows.append(i)
        status = llama_cpp.llama_decode(self.ctx, batch)
        if status != 0:
            raise ClueError(f"llama.cpp's llama_decode failed (status {status}) on {count} tokens after "
                            f"{self.filled}")
        self.filled += count
        return rows

    def logprobs(self, row: int) -> np.ndarray:
        """Log-softmax (float64) of one batch row's logits, copied out of llama.cpp's buffer."""
        pointer = llama_cpp.llama_get_logits_ith(self.ctx, row)
        if not pointer:
            raise ClueError(f"llama.cpp returned no logits for batch row {row}")
        logits = np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).astype(np.float64)
        top = logits.max()
        return logits - (top + np.log(np.exp(logits - top).sum()))

    def logits(self, row: int) -> np.ndarray:
        """One batch row's raw logits (float32, a copy)."""
        pointer = llama_cpp.llama_get_logits_ith(self.ctx, row)
        if not pointer:
            raise ClueError(f"llama.cpp returned no logits for batch row {row}")
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).copy()


def _quiet() -> None:
    """llama.cpp logs every tensor it loads and warns about what it fixes itself: only errors reach stderr.

    llama-cpp-python 0.3.36's own filter reads ggml's log levels by an older numbering (its
    ``ERROR`` is today's ``WARN``), so its ``verbose=False`` still prints warnings; this callback
    replaces it, process-wide, and is kept alive here.
    """
    global _CALLBACK
    if _CALLBACK is not None:
        return
    last = [0]

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        if level != _CONTINUED:
            last[0] = level
        if last[0] == _ERROR:
            sys.stderr.write(text.decode("utf-8", errors="replace"))

    _CALLBACK = callback
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))


#: ggml's ``GGML_LOG_LEVEL_ERROR`` and ``GGML_LOG_LEVEL_CONT`` (ggml.h: none, debug, info, warn, error, cont).
_ERROR, _CONTINUED = 4, 5
_CALLBACK: Any = None


class TemplateTokenizer:
    """What the learner reads of a tokenizer for chat prompts: the GGUF's chat template, rendered with jinja2
    as transformers renders one (trimmed blocks, ``raise_exception``, ``tojson``), tokens from llama.cpp."""

    def __init__(self, engine: Engine, template: str | None, special: Mapping[str, str | None]) -> None:
        self.engine = engine
        self.chat_template = template
        self.special = dict(special)
        self._compiled: Any = None

    def __call__(self, texts: str | Sequence[str], add_special_tokens: bool = False) -> dict[str, Any]:
        """``{"input_ids": ...}`` as transformers' tokenizers answer, without special tokens added."""
        if isinstance(texts, str):
            return {"input_ids": self.engine.tokenize(texts)}
        return {"input_ids": [self.engine.tokenize(text) for text in texts]}

    def decode(self, ids: Sequence[int], **_: Any) -> str:
        return self.engine.detokenize(ids)

    def apply_chat_template(self, messages: Sequence[Mapping[str, Any]], *, tokenize: bool = False,
                            add_generation_prompt: bool = True, **more: Any) -> str:
        if not self.chat_template:
            raise ClueError("this GGUF file has no chat template (tokenizer.chat_template)")
        if self._compiled is None:
            self._compiled = _compile(self.chat_template)
        return self._compiled.render(messages=list(messages), add_generation_prompt=add_generation_prompt,
                                     **self.special, **more)


def _compile(template: str) -> Any:
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise ClueError(f"the GGUF file's chat template refused the messages: {message}")

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                extensions=[jinja2.ext.loopcontrols])
    environment.filters["tojson"] = lambda value, indent=None: json.dumps(value, ensure_ascii=False, indent=indent)
    environment.globals["raise_exception"] = raise_exception
    return environment.from_string(template)


class Decoder:
    """Greedy (or seeded sampling) generation for one prompt at a time, by ``llm:``'s rules
    (:class:`clue_models_llm.generation.Generator`, restated without torch): tokens inside
    ``<think>…</think>`` count against ``thinking_tokens`` and the block is closed for the model
    (``</think>`` written into its output) when they are spent; the answer gets ``max_new_tokens``
    and ends at an end-of-generation token or at a stop string found after its first non-blank
    character. A context that fills up ends the answer as ``length``."""

    def __init__(self, engine: Engine, options: Any, eos_ids: Sequence[int]) -> None:
        from clue_models_llm.extract import THINK_CLOSE

        self.engine = engine
        self.options = options
        self.eos_ids = frozenset(eos_ids)
        self.close_ids = engine.tokenize(f"\n{THINK_CLOSE}\n\n")

    def run(self, prompt: Sequence[int], *, thinking: bool, seed: int) -> dict[str, Any]:
        """The generation entry of one prompt (text without end-of-generation tokens, as ``llm:``)."""
        engine, options = self.engine, self.options
        engine.trim(0)
        row = 0
        for start in range(0, len(prompt), engine.n_batch):
            part = prompt[start:start + engine.n_batch]
            last = start + len(part) == len(prompt)
            rows = engine.decode(part, [last and i == len(part) - 1 for i in range(len(part))])
            row = rows[-1] if rows else row
        state = _State(thinking=thinking)
        random = np.random.default_rng(seed) if options.temperature > 0 else None
        while True:
            token = self._choose(engine.logits(row), state, random)
            if not self._step(state, token):
                break
            if engine.filled + 1 > engine.n_ctx:
                state.finish = "length"
                break
            row = engine.decode([token], [True])[0]
        text = engine.detokenize([t for t in state.ids if t not in self.eos_ids])
        return {"text": text, "tokens": len(state.ids), "finish": state.finish, "thinking_tokens": state.think_count}

    def _choose(self, logits: np.ndarray, state: _State, random: np.random.Generator | None) -> int:
        if random is None:
            picked = int(np.argmax(logits))
        else:
            scaled = logits.astype(np.float64) / self.options.temperature
            scaled = np.exp(scaled - scaled.max())
            picked = int(random.choice(len(scaled), p=scaled / scaled.sum()))
        if state.thinking and not state.closing and state.think_count >= self.options.thinking_tokens:
            state.closing = True
            state.forced = list(self.close_ids)
        return state.forced.pop(0) if state.forced else picked

    def _step(self, state: _State, token: int) -> bool:
        """Take ``token``; whether the answer goes on (``Generator._step``'s rules)."""
        from clue_models_llm.extract import THINK_CLOSE, THINK_OPEN, cut_at_stop

        state.ids.append(token)
        if token in self.eos_ids:
            state.finish = "eos"
            return False
        text = self.engine.detokenize(state.ids)
        opening = text.lstrip()
        if not state.thinking and THINK_CLOSE not in text and opening.startswith(THINK_OPEN):
            state.thinking = True
        elif opening and THINK_OPEN.startswith(opening) and not state.closing:
            return True  # "<thi…": a think tag spelled in several tokens, not yet an answer
        if state.thinking:
            state.think_count += 1
            if THINK_CLOSE in text or (state.closing and not state.forced):
                state.thinking = False
            return True
        state.answer_count += 1
        answer = text.rpartition(THINK_CLOSE)[2]
        stops = self.options.stops
        if stops and cut_at_stop(answer, stops) != answer:
            state.finish = "stop"
            return False
        if state.answer_count >= self.options.max_new_tokens:
            state.finish = "length"
            return False
        return True


@dataclass
class _State:
    """One answer being written: its tokens and where it stands."""

    thinking: bool
    ids: list[int] = field(default_factory=list)
    forced: list[int] = field(default_factory=list)
    closing: bool = False
    think_count: int = 0
    answer_count: int = 0
    finish: str = ""
