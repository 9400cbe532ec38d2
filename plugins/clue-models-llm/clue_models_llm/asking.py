"""Requests answered from the result cache first, the rest by the backend, each answer committed as it arrives.

Every request is keyed (by the learner: the model's identity, the settings that change
answers, the request itself); identical requests in one call are asked once. What the
backend reports through ``done`` goes to the cache in one transaction per report, so a
killed run keeps every finished batch and its rerun asks only for the rest. Each committed
report also moves the call's progress (:class:`clue_core.plugin.Progress`: a bar on a
terminal, a line every ~15 s in a log), counted in examples, cached ones included.

Each reported entry is checked with the same rule the cache applies when it reads one
(:mod:`clue_models_llm.entries`) before it is kept: a backend that reports a NaN or positive
log-probability, the wrong number of scores, a text that is not text or an index it was
not asked for is one line naming it, and nothing of that answer is cached or predicted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from clue_core.plugin import ClueError, Progress
from clue_models_llm.backend import Backend, GenerateOptions, ScoreRequest
from clue_models_llm.cache import ResultCache
from clue_models_llm.entries import generation_ok, likelihood_ok

#: ``key(request) -> cache key`` (the learner's: it knows the identity and the settings).
Keyer = Callable[[Mapping[str, Any]], str]


class Asker:
    """One task's way to its backend: ``likelihoods`` and ``generations``, cached."""

    def __init__(self, backend: Backend, cache: ResultCache, key: Keyer, echo: Callable[[str], None],
                 name: str, *, label: str = "", shown: bool = True, split: Callable[[], str] = str) -> None:
        self.backend = backend
        self.cache = cache
        self.key = key
        self.echo = echo
        self.name = name
        #: what the progress lines begin with (``[task] model``), and whether this process shows them
        self.label = label or name
        self.shown = shown
        #: the split being answered (``context.split``: ``dev``, ``test 1.1``), named in every progress line
        self.split = split

    def likelihoods(self, requests: Sequence[ScoreRequest], ppl: bool) -> list[dict[str, Any]]:
        """The likelihood entry of every request (see :mod:`clue_models_llm.backend`), in order."""
        keys = [self.key({"kind": "loglikelihood", "prompt": r.prompt, "choices": list(r.choices), "ppl": ppl})
                for r in requests]
        sizes = dict(zip(keys, (len(r.choices) for r in requests)))
        results = self.cache.get_many(keys, lambda key, entry: likelihood_ok(entry, sizes[key], ppl))
        missing = first_missing(keys, results)
        self.echo(f"{self.name}: scoring {self._of(len(requests), 'example')} by likelihood "
                  f"({len(requests) - len(missing)} cached)")
        if missing:
            asked = [requests[i] for i in missing]
            with self._progress(keys, missing, "scoring", "examples") as progress:
                self.backend.score_choices(asked, ppl=ppl, done=self._storer(
                    results, [keys[i] for i in missing], "score_choices",
                    lambda j, entry: likelihood_ok(entry, len(asked[j].choices), ppl),
                    "one finite log-probability <= 0 and one token count per choice"
                    + (", and the prompt's own" if ppl else ""), progress))
        return self._all(keys, results, "score_choices")

    def generations(self, prompts: Sequence[str], options: GenerateOptions) -> list[dict[str, Any]]:
        """What the model writes after each prompt (generation entries), in order.

        Greedy answers do not depend on the seed, so they are keyed without it (a rerun with
        another seed reuses them); sampled ones are keyed by it.
        """
        seed = options.seed if options.temperature > 0 else None
        keys = [self.key({"kind": "generate", "prompt": prompt, "seed": seed}) for prompt in prompts]
        results = self.cache.get_many(keys, lambda key, entry: generation_ok(entry))
        missing = first_missing(keys, results)
        self.echo(f"{self.name}: generating {self._of(len(prompts), 'answer')} "
                  f"({len(prompts) - len(missing)} cached)")
        if missing:
            with self._progress(keys, missing, "generating", "answers") as progress:
                self.backend.generate([prompts[i] for i in missing], options, done=self._storer(
                    results, [keys[i] for i in missing], "generate", lambda j, entry: generation_ok(entry),
                    "text, tokens and finish", progress))
        return self._all(keys, results, "generate")

    def _all(self, keys: Sequence[str], results: Mapping[str, Any], method: str) -> list[dict[str, Any]]:
        """Every request's entry; a backend that left some unanswered is its bug, said as such."""
        unanswered = sum(1 for key in dict.fromkeys(keys) if key not in results)
        if unanswered:
            raise RuntimeError(f"{type(self.backend).__name__}.{method} reported no answer for {unanswered} of "
                               f"{len(set(keys))} requests")
        return [results[key] for key in keys]

    def _of(self, count: int, unit: str) -> str:
        """``16 dev examples``, ``1 test 1.1 example``: the count, named by its split when one is known."""
        split = self.split()
        return plural(count, unit) if not split else plural(count, unit).replace(" ", f" {split} ", 1)

    def _progress(self, keys: Sequence[str], missing: Sequence[int], doing: str, unit: str) -> Progress:
        """The progress of one backend call: every distinct request, those cached counted as done."""
        total = len(set(keys))
        split = self.split()
        return Progress(total, f"{self.label}: {doing}{f' {split}' if split else ''}", unit,
                        done=total - len(missing), shown=self.shown)

    def _storer(self, results: dict[str, Any], keys: Sequence[str], method: str, valid: Callable[[int, Any], bool],
                shape: str, progress: Progress | None = None) -> Callable[[Mapping[int, dict[str, Any]]], None]:
        """``done`` for a backend call over the requests of ``keys``: keep what arrived and commit it at once.

        An entry ``valid`` refuses, or an index outside the call, is the backend's fault: the
        report's good entries are kept, then one line names the backend and the request.
        ``progress`` moves by the requests newly answered, once they are committed.
        """
        answered: set[int] = set()

        def store(entries: Mapping[int, dict[str, Any]]) -> None:
            keyed: dict[str, Any] = {}
            fresh: set[int] = set()
            fault = None
            for index, entry in entries.items():
                if not (isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(keys)):
                    fault = fault or f"answered request {index!r}, but it was asked {plural(len(keys), 'request')}"
                elif not valid(index, entry):
                    fault = fault or (f"answered request {index} with an entry of the wrong shape (expected {shape}; "
                                      f"got {_brief(entry)})")
                else:
                    keyed[keys[index]] = entry
                    fresh.add(index)
            results.update(keyed)
            self.cache.put_many(keyed)
            if progress is not None:
                progress.update(len(fresh - answered))
            answered.update(fresh)
            if fault:
                raise ClueError(f"{self.name}: {type(self.backend).__name__}.{method} {fault}; that answer is not "
                                f"cached")

        return store


def first_missing(keys: Sequence[str], results: Mapping[str, Any]) -> list[int]:
    """Indices of the requests to compute: not cached, and each distinct request once."""
    seen: set[str] = set()
    missing = []
    for index, key in enumerate(keys):
        if key not in results and key not in seen:
            seen.add(key)
            missing.append(index)
    return missing


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _brief(entry: Any) -> str:
    """An entry as a message shows it: its JSON, cut short."""
    text = repr(entry) if not isinstance(entry, Mapping) else repr(dict(entry))
    return text if len(text) <= 120 else text[:117] + "..."
