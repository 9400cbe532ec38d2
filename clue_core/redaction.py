"""The run's secrets, and the one place they are taken out of whatever clue-core writes or prints.

A secret is a value the run treats as one: the value of a ``secret`` setting, and the value of
each environment variable a backend falls back to for a credential (a setting declared with
``secret`` and ``env``, the variable a ``secret_env`` setting names, such as ``api_key_env`` →
``$OPENAI_API_KEY``, the Hugging Face hub's own token variables, and any variable whose name ends
in ``_KEY``, ``_TOKEN``, ``_SECRET`` or ``_PASSWORD``: a checker that reads the process's environment
finds more than the declared ones). A variable found by its name alone is registered only where its
value looks like a credential (:func:`credential_value`): not a path (``SSL_KEY=/etc/ssl/site.key``
names a key file; hidden, every path under ``/etc/ssl`` printed as ``***``), not a number, not one
plain word (``MY_TOKEN=accuracy`` hid a metric's name in every table and key of ``metrics.json``);
declared ones are registered whatever they hold. Registered values form one process-wide set; every
occurrence of any of them is replaced by :data:`MARKER` (overlapping ones as one, so no part of
either shows), ordinary data too — a secret that also turns up in a data file or an answer is hidden
there as well, the price of hiding it wherever a checker or model may have copied it:

* in every file written through :mod:`clue_core.atomic` (``write_json``, ``write_jsonl`` and
  ``atomic_open``: manifests, predictions, metrics, leaderboard files, sweep summaries, a plugin's
  own files), whatever put the value there — a model's answer, a checker's reason, a plugin;
* in every line the command line prints (stdout and stderr while a command runs, so warnings,
  progress, a plugin command's output and ``error:`` lines too) and in the lines a run echoes;
* in the LLM result cache (:mod:`clue_models_llm.cache`) before an entry is stored.

A value shorter than :data:`MIN_LENGTH` characters is never registered: ``"1"`` or ``"abc"``
replaced everywhere would mangle ordinary text (scores, ids, words) and hide nothing that could
not be guessed. A secret *setting* keeps its older, stricter rule besides: its own run's files and
lines hide it at any length (:meth:`clue_core.settings.ResolvedSettings.scrub`).

Each value is also matched in the forms other writers give it (JSON-escaped with and without
``ensure_ascii``, ``repr``, HTML- and URL-escaped), so a secret holding ``"``, ``/`` or Chinese
characters is caught however it was serialised; longer forms are matched first. While the
registry is empty every helper returns its input untouched: the predictions writer, which is
hot, pays nothing in a run without secrets (and about 1% of its time with some).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

#: What replaces a secret, in files and in printed lines (``settings.REDACTED`` is the same text).
MARKER = "***"
#: The shortest value registered as a secret (see the module docstring for why).
MIN_LENGTH = 8
#: Environment variables a library reads credentials from by itself (the Hugging Face hub, which the
#: hf and llm plugins download through), with no setting of any plugin to declare them.
LIBRARY_SECRETS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
#: How the name of any other credential variable ends (``GITHUB_TOKEN``, ``ZHIPU_API_KEY``): a process
#: whose environment a plugin's subprocess could read (a checker's ``/proc/<pid>/environ``) hides them too.
CREDENTIAL_NAMES = ("KEY", "TOKEN", "SECRET", "PASSWORD")

_lock = threading.Lock()
_values: set[str] = set()
_forms: tuple[str, ...] = ()
_pattern: re.Pattern[str] | None = None
_bytes_pattern: re.Pattern[bytes] | None = None


def forms(value: str) -> set[str]:
    """``value`` as other writers may have serialised it: raw, JSON (both ways), repr, HTML, URL."""
    import html  # here, not at start-up: html imports its entity tables (~1 ms of clue-core list)

    found = {value, json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1], repr(value)[1:-1],
             html.escape(value), urllib.parse.quote(value, safe=""), urllib.parse.quote(value),  # a path's '/' kept
             urllib.parse.quote_plus(value)}  # a query string or form (a blank as '+')
    return {form for form in found if len(form) >= MIN_LENGTH}


def register(value: Any) -> bool:
    """Treat ``value`` as a secret from now on, in this process; ``False`` where it is too short."""
    text = "" if value is None else str(value)
    # a key pasted into a file with its newline: the server gets what the client strips, so both count
    fresh = {t for t in (text, text.strip()) if len(t) >= MIN_LENGTH}
    if not fresh:
        return False
    global _forms, _pattern, _bytes_pattern
    with _lock:
        if fresh <= _values:
            return True
        _values.update(fresh)
        every = {form for secret in _values for form in forms(secret)}
        _forms = tuple(sorted(every, key=lambda form: (-len(form), form)))  # longest first: none cut short
        _pattern = re.compile("|".join(map(re.escape, _forms)))
        _bytes_pattern = re.compile(b"|".join(re.escape(form.encode("utf-8")) for form in _forms))
    return True


def register_env(name: str) -> bool:
    """Treat the value of environment variable ``name`` as a secret (if it is set and long enough)."""
    return bool(name) and register(os.environ.get(name))


def register_declared(settings: Iterable[Any]) -> None:
    """The secrets declarations point at before any value is resolved: each ``secret`` setting's
    ``env`` variable and the variable a ``secret_env`` setting names by default (``OPENAI_API_KEY``),
    so a process that only reads runs (a report, a sweep) hides them too."""
    for setting in settings:
        if setting.secret and setting.env:
            register_env(setting.env)
        if setting.secret_env and isinstance(setting.default, str):
            register_env(setting.default)


def register_settings(declared: Mapping[str, Any], values: Mapping[str, Any]) -> None:
    """The secrets of one task's resolved settings: each secret value, its ``env`` fallback, and the
    variable each ``secret_env`` setting names (``--set judge.api_key_env=ZHIPU_KEY``: ``$ZHIPU_KEY``)."""
    for name, setting in declared.items():
        value = values.get(name)
        if setting.secret:
            register(value)
            if setting.env:
                register_env(setting.env)
        if setting.secret_env and isinstance(value, str):
            register_env(value)


def credential_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential (``AWS_SECRET_ACCESS_KEY``,
    ``GITHUB_TOKEN``; not ``TOKENIZERS_PARALLELISM`` or ``KEYBOARD``)."""
    upper = name.upper()
    return any(upper == word or upper.endswith("_" + word) for word in CREDENTIAL_NAMES)


def credential_value(value: str) -> bool:
    """Whether the value of a variable found by its name alone (:func:`credential_name`) looks like a
    credential: not a path (``SSL_KEY=/etc/ssl/site.key`` names a key file, and hiding it would turn
    every path below it into ``***``), not a number or a boolean, not one plain word (``SORT_KEY=
    priority``, ``MY_TOKEN=accuracy``: a metric's name in every table). A declared secret is not asked."""
    text = value.strip()
    if len(text) < MIN_LENGTH or _PLAIN_VALUE.fullmatch(text):
        return False
    with contextlib.suppress(ValueError):
        float(text)
        return False
    with contextlib.suppress(OSError, ValueError):
        if os.path.exists(text):
            return False
    return True


#: An undeclared ``*_KEY`` value that is no credential: a path, or a word of one case's letters (up to 19 of
#: them: a longer run of letters is more likely a generated token than a word).
_PLAIN_VALUE = re.compile(r"(?:[/~]|\.{1,2}[/\\]|[A-Za-z]:[/\\]).*|[a-z]{1,19}|[A-Z]{1,19}", re.DOTALL)


def register_kernel(kernel: Any) -> None:
    """Every declaration of every loaded plugin (tasks, models, metrics), :data:`LIBRARY_SECRETS` and
    every variable of the environment whose name ends like a credential's (:data:`CREDENTIAL_NAMES`)."""
    for name in LIBRARY_SECRETS:
        register_env(name)
    for name, value in list(os.environ.items()):
        if credential_name(name) and credential_value(value):
            register(value)
    for registry in (kernel.tasks, kernel.models, kernel.metrics):
        for spec in registry.values():
            for group in ("settings", "decode_settings", "reader_settings"):
                register_declared(getattr(spec, group, ()))


def active() -> bool:
    """Whether any secret is registered (every helper is the identity until one is)."""
    return _pattern is not None


def reset() -> None:
    """Forget every secret (for tests: the registry lives as long as the process)."""
    global _forms, _pattern, _bytes_pattern
    with _lock:
        _values.clear()
        _pattern, _bytes_pattern = None, None  # before the forms: a writer that sees a pattern sees its forms
        _forms = ()


def holds(text: str) -> bool:
    """Whether ``text`` holds a secret in any form: substring searches, ten times a regex's speed, for
    the writers to skip the redaction of a text (a batch of prediction lines) that needs none."""
    return any(form in text for form in _forms)


def redact_text(text: str) -> str:
    """``text`` with every secret replaced by :data:`MARKER`."""
    pattern = _pattern
    return text if pattern is None else _sub(pattern, text, MARKER)


def _spans(pattern: re.Pattern[Any], text: Any) -> Iterator[tuple[int, int]]:
    """Where ``text`` holds secrets, overlapping ones joined: ``abcdefgh`` and ``efghijkl`` both
    registered, ``abcdefghijkl`` is one span (a plain ``sub`` left ``***ijkl``, half the second key)."""
    match = pattern.search(text)
    while match is not None:
        start, end = match.span()
        match = pattern.search(text, start + 1)
        while match is not None and match.start() < end:
            end = max(end, match.end())
            match = pattern.search(text, match.start() + 1)
        yield start, end


def _sub(pattern: re.Pattern[Any], text: Any, marker: Any) -> Any:
    """``text`` (str or bytes) with each span of :func:`_spans` replaced by ``marker``."""
    out, position = [], 0
    for start, end in _spans(pattern, text):
        out += [text[position:start], marker]
        position = end
    if not out:
        return text
    out.append(text[position:])
    return text[:0].join(out)


def redact_bytes(data: bytes) -> bytes:
    """``data`` (UTF-8 text, or anything) with the UTF-8 bytes of every secret replaced."""
    pattern = _bytes_pattern
    return data if pattern is None else _sub(pattern, data, MARKER.encode())


def redact(data: Any) -> Any:
    """``data`` with every secret replaced: texts, mapping keys and values, list and tuple items (as
    lists), and a number whose digits are a secret (as the marker); the same object with none."""
    pattern = _pattern
    return data if pattern is None else _walk(data, pattern)


def _walk(data: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(data, str):
        return _sub(pattern, data, MARKER)
    if isinstance(data, Mapping):
        return {_walk(key, pattern): _walk(value, pattern) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [_walk(value, pattern) for value in data]
    if isinstance(data, (int, float)) and not isinstance(data, bool) and pattern.search(repr(data)):
        return MARKER
    return data


def json_text(text: str, data: Any, dump: Callable[[Any], str]) -> str:
    """``text`` (``dump(data)``) without a secret, still valid JSON where a value held it.

    The serialised text is searched (JSON's escaping of a secret is one of its forms, so a value
    holding one shows); only then are the values redacted and dumped again, so the marker lands
    inside a string, never across JSON's own punctuation. A match left after that spans the
    punctuation itself (a "secret" like ``a", "b``) and is replaced in the text as a last resort.
    """
    pattern = _pattern
    if pattern is None or not holds(text):
        return text
    return _sub(pattern, dump(_walk(data, pattern)), MARKER)


class RedactingStream:
    """A text stream (``sys.stdout``, a file being written) whose writes have every secret replaced.

    Each ``write`` is redacted whole; a secret split over two writes is caught too, because a write
    that does not end a line holds back up to the longest form's length less one character until
    the next write or ``flush`` (a stream that wants every character at once — a progress bar —
    flushes). Writes from several threads (a run's request workers) are taken one at a time.
    Everything else is the wrapped stream's; there is no ``buffer``, so nothing writes past the
    redaction.
    """

    buffer = None

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._pending = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            return self._write(text)

    def _write(self, text: str) -> int:
        pattern, forms = _pattern, _forms
        if pattern is None or not isinstance(text, str):
            if self._pending:
                self._stream.write(self._pending)
                self._pending = ""
            return self._stream.write(text)
        data = self._pending + text
        if data.endswith(("\n", "\r")):  # a whole line (print, echo, a progress bar's): nothing held back
            self._pending = ""
            self._stream.write(_sub(pattern, data, MARKER))
            return len(text)
        safe = max(0, len(data) - (len(forms[0]) - 1))  # from here on a secret could go on in the next write
        out, position, cut = [], 0, safe
        for start, end in _spans(pattern, data):
            if end > safe:  # a secret overlapping this one may go on in the next write: hold it all back
                cut = min(start, safe)
                break
            out += [data[position:start], MARKER]
            position = end
        out.append(data[position:cut])
        self._pending = data[cut:]
        self._stream.write("".join(out))
        return len(text)

    def flush(self) -> None:
        with self._lock:
            if self._pending:
                self._stream.write(redact_text(self._pending))
                self._pending = ""
        self._stream.flush()

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_output() -> Iterator[None]:
    """Redact everything written to ``sys.stdout`` and ``sys.stderr`` meanwhile, and the message of
    an exception that leaves (a traceback printed afterwards quotes it): what a command prints."""
    if isinstance(sys.stdout, RedactingStream) or isinstance(sys.stderr, RedactingStream):
        yield
        return
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingStream(stdout), RedactingStream(stderr)
    try:
        yield
    except BaseException as exc:
        redact_exception(exc)
        raise
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = stdout, stderr


def redact_exception(exc: BaseException) -> None:
    """Redact the arguments of ``exc`` and of the exceptions it was raised from, in place (and a
    ``message`` attribute: click's usage errors print that, not their arguments)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and active():
        seen.add(id(current))
        with contextlib.suppress(Exception):
            current.args = tuple(redact(arg) if isinstance(arg, str) else arg for arg in current.args)
            if isinstance(getattr(current, "message", None), str):
                current.message = redact_text(current.message)  # type: ignore[attr-defined]
        current = current.__cause__ or current.__context__
