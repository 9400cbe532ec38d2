"""hf-tiny runs on a full disk, and the modes of the weight files it writes.

safetensors reports a full disk as ``SafetensorError("... I/O error: No space left on
device (os error 28)")`` and ``torch.save`` as an obscure ``RuntimeError``; neither is an
``OSError``, so the faults are injected at those libraries' own writers
(``safetensors.torch.serialize_file``, ``torch.save``) exactly as they fail.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import safetensors.torch
import torch
from safetensors import SafetensorError

from clue_models_hf import saving

from .conftest import invoke

pytestmark = pytest.mark.slow

FULL = "Error while serializing: I/O error: No space left on device (os error 28)"
RUN = ("run", "tnews", "--model", "hf-tiny", "--sample", "--set", "progress=false", "--set", "epochs=2")


def serialize_failing_for(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """safetensors' writer fails as on a full disk for files called ``name``."""
    real = safetensors.torch.serialize_file

    def serialize(tensors, filename, *args, **kwargs):
        if Path(filename).name == name:
            raise SafetensorError(FULL)
        return real(tensors, filename, *args, **kwargs)

    monkeypatch.setattr(safetensors.torch, "serialize_file", serialize)


def error_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in output, output
    return lines[0]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "clue-home"))
    return tmp_path / "clue-home"


@pytest.mark.parametrize("name, where", [("weights.safetensors", "training/.best.tmp/weights.safetensors"),
                                         ("model.safetensors", "model/model.safetensors")])
def test_a_full_disk_while_saving_weights_is_one_line_and_leaves_nothing(tmp_path, home, monkeypatch, name, where):
    out = tmp_path / "out"
    serialize_failing_for(monkeypatch, name)
    result = invoke(*RUN, "-o", out)
    assert result.exit_code == 2, result.output
    line = error_line(result.output)
    assert line.startswith(f"error: tnews: cannot write the run: {out / '.tnews.staging' / where}: "
                           "No space left on device (the disk is full: free some space")
    assert not out.exists()  # the staging folder, not resumable, is gone with the folder the run made


def test_a_full_disk_while_checkpointing_is_one_line_and_leaves_nothing(tmp_path, home, monkeypatch):
    real = torch.save

    def save(obj, f, *args, **kwargs):
        if str(f).endswith("optimizer.bin"):
            Path(f).write_bytes(b"PK\x03\x04 half")  # what torch.save leaves when the disk fills up
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 576 vs 534")
        return real(obj, f, *args, **kwargs)

    def probe(directory: Path) -> OSError:
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(directory))

    monkeypatch.setattr(torch, "save", save)
    monkeypatch.setattr(saving, "probe_write", probe)  # the disk is full: a probe write fails too
    out = tmp_path / "out"
    result = invoke(*RUN, "--set", "save_every=1", "-o", out)
    assert result.exit_code == 2, result.output
    line = error_line(result.output)
    checkpoint = out / ".tnews.staging" / "training" / "checkpoints" / "step-00000001"
    assert line.startswith(f"error: tnews: cannot write the run: {checkpoint}: No space left on device")
    assert not out.exists()


def test_a_torch_error_that_is_no_disk_fault_is_left_alone(tmp_path):
    error = RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 576 vs 534")
    assert saving.as_disk_fault(error, tmp_path) is None  # this disk has room: not a disk fault
    assert saving.as_disk_fault(ValueError("bad tensor"), tmp_path) is None
    fault = saving.as_disk_fault(SafetensorError(FULL), tmp_path / "w.safetensors")
    assert (fault.errno, fault.filename) == (errno.ENOSPC, str(tmp_path / "w.safetensors"))
    assert list(tmp_path.iterdir()) == []  # the probe leaves nothing


@pytest.fixture(params=[0o022, 0o027], ids=["umask-022", "umask-027"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def test_weight_files_get_the_mode_the_umask_asks_for(tmp_path, home, umask):
    out = tmp_path / "out"
    result = invoke(*RUN, "--set", "save_every=1", "-o", out)
    assert result.exit_code == 0, result.output
    run = out / "tnews"
    weights = [run / "model" / "model.safetensors", run / "training" / "best" / "weights.safetensors",
               *sorted((run / "training" / "checkpoints").glob("*/*.safetensors"))]
    assert len(weights) > 2
    for path in weights:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root to mount a tmpfs")
def test_a_real_full_disk_during_training_is_one_line_and_leaves_nothing(tmp_path, home):
    """The fault sweep's case: a 300 KB tmpfs as output, in a mount namespace that ends with the process."""
    small = tmp_path / "small"
    small.mkdir()
    script = (f"mount -t tmpfs -o size=300k tmpfs {small} && "
              f"{sys.executable} -m clue_core {' '.join(RUN)} -o {small}/runs; code=$?; ls -A {small}; exit $code")
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot create a mount namespace here")
    result = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "CLUE_HOME": str(home)})
    assert result.returncode == 2, (result.stdout, result.stderr)
    line = error_line(result.stderr)
    assert f"{small}/runs/.tnews.staging/" in line and "No space left on device" in line
    assert result.stdout.strip() == ""  # nothing left on the full disk
