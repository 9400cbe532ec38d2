"""``llm:<file>.gguf`` refuses a bad file in one line naming it, before any model is built;
its identity is the SHA-256 of its bytes, so a file changed in place is a different model.

The files are small GGUF files written here with the ``gguf`` package (no model in them).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from clue_core.plugin import ClueError
from clue_models_llm import gguf_loading, loading
from clue_models_llm.gguf_file import check_gguf
from tests.models_llm.test_llm_faults import one_line_error


def write_gguf(path: Path, architecture: str = "llama", rows: int = 64) -> Path:
    import gguf

    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_block_count(1)
    writer.add_token_list([f"t{i}" for i in range(rows)])
    writer.add_tensor("token_embd.weight", np.arange(rows * 16, dtype=np.float32).reshape(rows, 16))
    writer.add_tensor("output_norm.weight", np.ones(16, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_whole_file_is_summarised(tmp_path) -> None:
    path = write_gguf(tmp_path / "m.gguf")
    summary = check_gguf(path)
    assert summary.architecture == "llama" and summary.tensors == 2
    assert summary.needed == summary.size == path.stat().st_size


@pytest.mark.parametrize("cut", [10, 30, 200, -1])
def test_a_file_cut_short_is_named(tmp_path, cut) -> None:
    whole = write_gguf(tmp_path / "whole.gguf").read_bytes()
    path = tmp_path / "cut.gguf"
    path.write_bytes(whole[:cut] if cut > 0 else whole[:-1])
    with pytest.raises(ClueError) as caught:
        check_gguf(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert ("cut short" in message) or ("not a GGUF file" in message and cut < 24), message


def test_other_files_are_refused_by_name(tmp_path) -> None:
    text = tmp_path / "notes.gguf"
    text.write_text("these are not the weights you are looking for\n" * 3)
    with pytest.raises(ClueError, match=r"notes\.gguf: not a GGUF file \(it starts with b'thes'"):
        check_gguf(text)
    with pytest.raises(ClueError, match=r"missing\.gguf: no such GGUF file"):
        check_gguf(tmp_path / "missing.gguf")
    with pytest.raises(ClueError, match=r"rwkv\.gguf: architecture 'rwkv6' is not one transformers builds"):
        check_gguf(write_gguf(tmp_path / "rwkv.gguf", architecture="rwkv6"))


@pytest.mark.parametrize("kind", ["missing", "text", "cut"])
def test_the_cli_refuses_a_bad_gguf_in_one_line(run_cli, tmp_path, kind) -> None:
    path = tmp_path / f"{kind}.gguf"
    if kind == "text":
        path.write_text("{}" * 40)
    elif kind == "cut":
        whole = write_gguf(tmp_path / "whole.gguf").read_bytes()
        path.write_bytes(whole[: len(whole) - 8])
    out = tmp_path / "runs"
    result = run_cli("run", "afqmc", "--model", f"llm:{path}", "--sample", "-o", out)
    line = one_line_error(result, str(path))
    assert {"missing": "no such GGUF file", "text": "not a GGUF file", "cut": "cut short"}[kind] in line
    assert not (out / "afqmc").exists()


def test_identity_is_the_files_sha256_and_changes_with_it(tmp_path) -> None:
    path = write_gguf(tmp_path / "m.gguf")
    first = gguf_loading.identity(str(path))
    assert first == {"source": "gguf", "path": str(path.resolve()),
                     "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    before = loading.fingerprint(str(path))
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # one weight's byte: same size, same header
    path.write_bytes(bytes(data))
    second = gguf_loading.identity(str(path))
    assert second["sha256"] == hashlib.sha256(bytes(data)).hexdigest() != first["sha256"]
    assert loading.fingerprint(str(path)) != before  # the loaded-model memo is keyed by it: not reused
