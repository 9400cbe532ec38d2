"""A hub id without network fails fast: one request to the hub endpoint, then one clear line.

The endpoint is a local socket (``HF_ENDPOINT``) that counts the connections made to it and
closes each without answering, as a dead network does; nothing here measures time.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from clue_core.plugin import ClueError
from clue_models_hf import loading
from clue_models_hf.factory import create

from .conftest import FAST
from .toy import NAME, TASK, toy_kernel


class SilentEndpoint:
    """A listening socket that accepts connections, counts them and closes them unanswered."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() (close alone may not)
        self.server.close()
        self._thread.join(timeout=5)


@pytest.fixture
def silent_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[SilentEndpoint]:
    """``HF_ENDPOINT`` is the silent socket, for the probe and (read at import) for the hub client,
    so any request transformers would make is counted too."""
    from huggingface_hub import constants

    endpoint = SilentEndpoint()
    monkeypatch.setenv("HF_ENDPOINT", endpoint.url)
    monkeypatch.setattr(constants, "ENDPOINT", endpoint.url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                        endpoint.url + "/{repo_id}/resolve/{revision}/{filename}")
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(loading, "_PROBED", {})
    yield endpoint
    endpoint.close()


@pytest.fixture
def empty_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The Hugging Face cache, as the hub client and transformers look it up, in a fresh folder."""
    from huggingface_hub import constants

    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


def test_an_unreachable_hub_is_one_request_and_one_clear_error(silent_hub, empty_cache) -> None:
    with pytest.raises(ClueError) as caught:
        create("someone/not-cached-model", TASK, FAST)
    message = str(caught.value)
    assert "'someone/not-cached-model'" in message and silent_hub.url in message
    assert "unreachable" in message and "\n" not in message
    assert silent_hub.accepted == 1
    # a second model in the same process does not ask again
    with pytest.raises(ClueError):
        create("someone/another-model", TASK, FAST)
    assert silent_hub.accepted == 1


def test_a_closed_port_is_refused_at_once(monkeypatch, empty_cache, tmp_path) -> None:
    probe = socket.create_server(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setattr(loading, "_PROBED", {})
    calls = []
    connect = socket.create_connection

    def counting(*args, **kwargs):
        calls.append(args[0])
        return connect(*args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", counting)
    with pytest.raises(ClueError, match=f"http://127.0.0.1:{port} is unreachable"):
        create("someone/not-cached-model", TASK, FAST)
    assert calls == [("127.0.0.1", port)]


def test_the_command_line_exits_with_one_line_and_writes_nothing(run_cli, silent_hub, empty_cache,
                                                                 tmp_path) -> None:
    out = tmp_path / "runs"
    result = run_cli("run", NAME, "--model", "hf:someone/not-cached-model", "--data-dir", tmp_path, "-o", out,
                     kernel=toy_kernel())
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "someone/not-cached-model" in errors[0] and silent_hub.url in errors[0]
    assert "Traceback" not in result.output and "Retrying" not in result.output
    assert silent_hub.accepted == 1
    assert not out.exists()


def cache_checkpoint(cache: Path, repo_id: str) -> None:
    """A tiny BERT laid out in the cache as the hub client stores a downloaded repository."""
    from transformers import BertModel

    from clue_models_hf import tiny

    revision = "0" * 40
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / revision
    tokenizer = tiny.build_tokenizer(["甲乙丙丁天地玄黄"])
    BertModel(tiny.tiny_config(len(tokenizer), {"tiny_hidden_size": 32, "tiny_num_layers": 1}, 64)) \
        .save_pretrained(snapshot)
    tokenizer.save_pretrained(snapshot)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)


@pytest.mark.slow
def test_a_cached_model_loads_from_the_cache_without_more_requests(silent_hub, empty_cache, capsys) -> None:
    cache_checkpoint(empty_cache, "someone/cached-model")
    learner = create("someone/cached-model", TASK, FAST)
    assert learner.local_only
    assert "loading someone/cached-model from the local cache" in capsys.readouterr().err
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE
    learner._build([])
    assert learner.model.config.num_labels == 2
    assert silent_hub.accepted == 1  # the probe; the loading itself never asked the hub
    assert constants.HF_HUB_OFFLINE is before  # offline only while loading


def test_offline_mode_asks_nobody(monkeypatch, silent_hub, empty_cache) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ClueError, match="HF_HUB_OFFLINE is set"):
        create("someone/not-cached-model", TASK, FAST)
    assert silent_hub.accepted == 0


def test_a_local_directory_never_probes_the_hub(silent_hub, tmp_path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text(json.dumps({"model_type": "bert"}))
    create(str(tmp_path / "model"), TASK, FAST)
    assert silent_hub.accepted == 0
