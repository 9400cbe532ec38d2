"""Ctrl-C while ``clue-core run --data-dir <zip>`` unpacks the zip: one line, exit 130, nothing left;
two runs unpacking one zip at once: one unpacks, the other waits and reads the same copy.

A user's zip is unpacked into the cache (``$CLUE_HOME/extracted/<sha256>``) under the cache's lock;
interrupted half-way, the run must leave no output folder, no staging folder and no lock behind, keep
the user's zip as it was, and the next run must unpack it whole and run. The child process stops
itself mid-member (a patched read waits on stdin) so that the signal lands during the unpacking on
every machine, however fast.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEV = b'{"sentence": "ok", "label": "100"}\n' * 3

CLI_STOPPING_MID_MEMBER = textwrap.dedent(
    """
    import fcntl, os, sys, zipfile
    from clue_core.cli import cli
    from clue_data import archive

    if os.environ.get("SAY_LOCKING"):  # say so just before waiting for the cache's lock on the zip
        real_flock = fcntl.flock

        def flock(fd, operation):
            if operation == fcntl.LOCK_EX:
                print("locking", flush=True)
            return real_flock(fd, operation)

        fcntl.flock = flock

    archive.BLOCK_SIZE = 16
    real_read = zipfile.ZipExtFile.read

    def read(self, n=-1):
        if os.environ.get("STOP") and self.name.endswith("dev.json") and getattr(self, "_clue_seen", False):
            print("unpacking", flush=True)
            sys.stdin.read()  # wait here until the test interrupts us
        self._clue_seen = True
        return real_read(self, n)

    zipfile.ZipExtFile.read = read
    cli.main(sys.argv[1:], prog_name="clue-core")
    """
)


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_while_a_users_zip_unpacks_leaves_nothing_and_the_next_run_goes(tmp_path: Path) -> None:
    import zipfile

    user_zip = tmp_path / "tnews_public.zip"
    with zipfile.ZipFile(user_zip, "w") as archive:
        archive.writestr("tnews_public/train.json", DEV)
        archive.writestr("tnews_public/dev.json", DEV)
    before = user_zip.read_bytes()
    home = tmp_path / "home"
    env = {**os.environ, "CLUE_HOME": str(home), "STOP": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("CLUE_DISABLE_PLUGINS", None)
    args = ["run", "tnews", "--model", "baseline", "--data-dir", str(user_zip), "-o", str(tmp_path / "runs")]
    child = subprocess.Popen([sys.executable, "-c", CLI_STOPPING_MID_MEMBER, *args], cwd=tmp_path, env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        said = child.stdout.readline()  # returns when the child is mid-member, or has died
        assert said == "unpacking\n", child.communicate(timeout=60) if child.poll() is not None else said
        assert [p.name.startswith(".staging-") for p in (home / "extracted").iterdir()] == [True]
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 130 and err.splitlines()[-1] == "error: interrupted", (out, err)
    assert "Traceback" not in err and not (tmp_path / "runs").exists()
    assert listing(home / "extracted") == [] and listing(home / "locks") == []  # no staging, no lock
    assert user_zip.read_bytes() == before

    again = subprocess.run([sys.executable, "-m", "clue_core.cli", *args], cwd=tmp_path, env=env, text=True,
                           capture_output=True, timeout=120)
    assert again.returncode == 0, again.stderr
    (copy,) = (home / "extracted").iterdir()
    assert listing(copy) == ["tnews_public", "tnews_public/dev.json", "tnews_public/train.json"]
    assert (copy / "tnews_public" / "dev.json").read_bytes() == DEV


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX locks")
def test_two_runs_unpacking_one_zip_at_once_share_one_whole_copy(tmp_path: Path) -> None:
    """The first run stops mid-member holding the cache's lock on the zip; the second is started and
    reaches that lock; then the first goes on. Both runs end well on one complete copy, nothing else."""
    import zipfile

    user_zip = tmp_path / "tnews_public.zip"
    with zipfile.ZipFile(user_zip, "w") as archive:
        archive.writestr("tnews_public/train.json", DEV)
        archive.writestr("tnews_public/dev.json", DEV)
    home = tmp_path / "home"
    env = {**os.environ, "CLUE_HOME": str(home),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("CLUE_DISABLE_PLUGINS", None)

    def start(name: str, **extra: str) -> subprocess.Popen[str]:
        args = ["run", "tnews", "--model", "baseline", "--data-dir", str(user_zip), "-o", str(tmp_path / name)]
        return subprocess.Popen([sys.executable, "-c", CLI_STOPPING_MID_MEMBER, *args], cwd=tmp_path,
                                env={**env, **extra}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    first = start("first", STOP="1")
    second = None
    try:
        assert first.stdout.readline() == "unpacking\n", first.communicate(timeout=60)
        second = start("second", SAY_LOCKING="1")
        assert second.stdout.readline() == "locking\n", second.communicate(timeout=60)
        outputs = [first.communicate(input="go\n", timeout=120), second.communicate(timeout=120)]
    finally:
        for child in (first, second):
            if child is not None:
                child.kill()
    assert [first.returncode, second.returncode] == [0, 0], outputs
    for name in ("first", "second"):
        assert json.loads((tmp_path / name / "tnews" / "metrics.json").read_text(encoding="utf-8"))
    (copy,) = (home / "extracted").iterdir()  # one copy, no staging folder left
    assert listing(copy) == ["tnews_public", "tnews_public/dev.json", "tnews_public/train.json"]
    assert (copy / "tnews_public" / "dev.json").read_bytes() == DEV and listing(home / "locks") == []
