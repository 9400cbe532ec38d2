"""`clue-core download` (clue-data) as a hostile user drives it: killed half-way, run twice at once, a
full disk, a stopped server, a file:// mirror, a hostile archive. Each ends in one good cache or one
``error:`` line, and never in a half-written cache a later run would trust.

Real processes where the behaviour is about processes (a SIGKILL, two downloads at once, Ctrl-C);
the rest in-process through the CLI against a server on 127.0.0.1 the test starts and stops.
"""

from __future__ import annotations

import errno
import http.server
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from clue_core.hookspecs import hookimpl
from clue_data import download as download_module
from tests.support.data_tasks import AFQMC, AFQMC_FILES, AFQMC_ZIP, listing, registered, task_for
from tests.support.local_http import LocalServer, zip_bytes

ROOT = Path(__file__).resolve().parents[2]
POSIX = pytest.mark.skipif(sys.platform == "win32", reason="signals and fcntl locks")

# A clue-core process with the built-in plugin, clue-data and the test's afqmc (its source describes
# the archive in $ARCHIVE), as a user's would be: `clue-core download afqmc` against $CLUE_DATA_URL.
SCRIPT = """
import os, sys
from pathlib import Path
from clue_builtin import hooks as builtin
from clue_core.cli import cli
from clue_core.hookspecs import hookimpl
from clue_core.kernel import Kernel
from clue_data import hooks as data_plugin
from tests.support.data_tasks import registered, task_for

class Tasks:
    @hookimpl
    def clue_tasks(self):
        return [registered(task_for("afqmc", "afqmc_public.zip", Path(os.environ["ARCHIVE"]).read_bytes()))]

kernel = Kernel(entrypoints=False, strict=False, disabled=())
for plugin, name in [(builtin, "builtin"), (data_plugin, "clue-data"), (Tasks(), "test-tasks")]:
    kernel.register(plugin, name)
cli.main(sys.argv[1:], obj={"kernel": kernel}, prog_name="clue-core")
"""


@pytest.fixture
def kernel(isolated_kernel, monkeypatch: pytest.MonkeyPatch):
    class Tasks:
        @hookimpl
        def clue_tasks(self) -> list:
            return [registered(AFQMC)]

    isolated_kernel.register(Tasks(), "test-tasks")
    monkeypatch.setattr(download_module, "BACKOFF_SECONDS", 0.0)
    return isolated_kernel


# A few 64 KiB reads' worth, so a stalled transfer has written some of them to the .part file.
BIG_ZIP = zip_bytes({**AFQMC_FILES, "test.json": AFQMC_FILES["test.json"] + random.Random(3).randbytes(300_000)})
BIG = task_for("afqmc", "afqmc_public.zip", BIG_ZIP)


def clue_core(tmp_path: Path, home: Path, url: str, *args: str, archive: bytes = AFQMC_ZIP) -> subprocess.Popen:
    script = tmp_path / "clue_core_with_test_tasks.py"
    script.write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "archive.zip").write_bytes(archive)
    env = {**os.environ, "CLUE_HOME": str(home), "CLUE_DATA_URL": url, "PYTHONPATH": str(ROOT),
           "ARCHIVE": str(tmp_path / "archive.zip")}
    env.pop("CLUE_DISABLE_PLUGINS", None)
    return subprocess.Popen([sys.executable, str(script), *args], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


class Trickle:
    """A server that waits ``delay`` seconds, sends the first ``first`` bytes of the archive, then
    stalls (a slow mirror); ``requests`` counts the GETs it answered."""

    def __init__(self, body: bytes, first: int, delay: float = 0.0) -> None:
        stall = threading.Event()
        self.stall = stall
        self.requests = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests += 1
                time.sleep(delay)
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[:first])
                self.wfile.flush()
                stall.wait(30)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def __enter__(self) -> Trickle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stall.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def wait_for(path: Path, size: int, process: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file() and path.stat().st_size >= size:
            return
        if process.poll() is not None:
            pytest.fail(f"clue-core ended early: {process.communicate()}")
        time.sleep(0.05)
    pytest.fail(f"{path} never reached {size} bytes")


# ------------------------------------------------------------------ processes


@POSIX
def test_a_download_killed_half_way_resumes_and_leaves_no_trusted_half(run_cli, isolated_kernel, tmp_path: Path,
                                                                        monkeypatch) -> None:
    home = tmp_path / "clue-home"  # where run_cli points CLUE_HOME
    part = home / "downloads" / "afqmc_public.zip.part"
    with Trickle(BIG_ZIP, 200_000) as slow:
        process = clue_core(tmp_path, home, slow.url, "download", "afqmc", archive=BIG_ZIP)
        wait_for(part, 1, process)
        process.send_signal(signal.SIGKILL)  # no cleanup runs
        process.wait(30)
    kept = part.stat().st_size
    assert 0 < kept < len(BIG_ZIP)
    assert not (home / "data" / "afqmc").exists()  # nothing a later run would take for the data

    class Tasks:
        @hookimpl
        def clue_tasks(self) -> list:
            return [registered(BIG)]

    isolated_kernel.register(Tasks(), "test-tasks")
    with LocalServer({"afqmc_public.zip": BIG_ZIP}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        result = run_cli("download", "afqmc", kernel=isolated_kernel)
        ranges = [r.headers.get("Range") for r in server.requests]
    assert result.exit_code == 0, result.output
    assert ranges == [f"bytes={kept}-"]  # the bytes received before the kill are not fetched again
    assert (home / "data" / "afqmc" / "dev.json").read_bytes() == AFQMC_FILES["dev.json"]
    assert listing(home / "locks") == [] and not part.exists()


@POSIX
def test_ctrl_c_during_a_slow_download_is_one_line_and_keeps_the_part(tmp_path: Path) -> None:
    home = tmp_path / "home"
    part = home / "downloads" / "afqmc_public.zip.part"
    with Trickle(BIG_ZIP, 200_000) as slow:
        process = clue_core(tmp_path, home, slow.url, "download", "afqmc", archive=BIG_ZIP)
        wait_for(part, 1, process)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 130, (out, err)
    assert err.strip().splitlines()[-1] == "error: interrupted" and "Traceback" not in err, err
    assert 0 < part.stat().st_size < len(BIG_ZIP) and not (home / "data" / "afqmc").exists()
    assert listing(home / "locks") == []


@POSIX
def test_two_downloads_of_one_task_at_once_end_with_one_good_cache(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Trickle(AFQMC_ZIP, len(AFQMC_ZIP), delay=1.0) as slow:  # the second arrives while the first downloads
        processes = [clue_core(tmp_path, home, slow.url, "download", "afqmc") for _ in range(2)]
        outputs = [p.communicate(timeout=120) for p in processes]
        requests = slow.requests
    for process, (out, err) in zip(processes, outputs):
        assert process.returncode == 0, err
        assert out.strip() == f"afqmc: {home / 'data' / 'afqmc'}"
    assert requests == 1
    assert sorted(listing(home / "data" / "afqmc")) == sorted(AFQMC_FILES)
    assert listing(home / "downloads") == ["afqmc_public.zip"]
    assert listing(home / "locks") == [] and not [p for p in listing(home / "data") if p.startswith(".")]


# ------------------------------------------------------------------ in-process


@pytest.mark.parametrize("stage", ["download", "unpack"])
def test_a_full_disk_is_one_line_naming_the_cache(run_cli, kernel, tmp_path: Path, monkeypatch, stage) -> None:
    home = tmp_path / "clue-home"
    real_replace = os.replace

    def full(src, dst, *args, **kwargs):
        if (stage == "download") == str(dst).endswith(".zip"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return real_replace(src, dst, *args, **kwargs)

    with LocalServer({"afqmc_public.zip": AFQMC_ZIP}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        monkeypatch.setattr(os, "replace", full)
        result = run_cli("download", "afqmc", kernel=kernel)
    assert result.exit_code == 2
    assert result.output == f"error: cannot write to the data cache $CLUE_HOME ({home}): No space left on device\n"
    assert not (home / "data" / "afqmc").exists() and not [p for p in listing(home / "data") if p.startswith(".")]
    assert listing(home / "locks") == []
    assert "afqmc_public.zip" not in listing(home / "downloads") or stage == "unpack"


def test_a_stopped_server_is_one_line(run_cli, kernel, monkeypatch) -> None:
    server = LocalServer({"afqmc_public.zip": AFQMC_ZIP}).start()
    url = server.url
    server.stop()  # the port is closed now: connections are refused
    monkeypatch.setenv("CLUE_DATA_URL", url)
    result = run_cli("download", "afqmc", kernel=kernel)
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert result.output.startswith(f"error: download {url}afqmc_public.zip failed after 4 attempts: cannot connect")


def test_a_file_url_mirror_works(run_cli, kernel, tmp_path: Path, monkeypatch) -> None:
    mirror = tmp_path / "mirror dir"  # a space: the URL is quoted
    mirror.mkdir()
    (mirror / "afqmc_public.zip").write_bytes(AFQMC_ZIP)
    monkeypatch.setenv("CLUE_DATA_URL", mirror.as_uri())
    result = run_cli("download", "afqmc", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "clue-home" / "data" / "afqmc" / "train.json").read_bytes() == AFQMC_FILES["train.json"]


def test_a_file_url_naming_no_file_fails_at_once(run_cli, kernel, tmp_path: Path, monkeypatch) -> None:
    """A missing local file is not a flaky network: retrying it only made the user wait 7 seconds."""
    monkeypatch.setenv("CLUE_DATA_URL", (tmp_path / "nowhere").as_uri())
    monkeypatch.setattr(download_module, "BACKOFF_SECONDS", 5.0)  # a retry would show in the time taken
    started = time.monotonic()
    result = run_cli("download", "afqmc", kernel=kernel)
    assert time.monotonic() - started < 4
    url = (tmp_path / "nowhere" / "afqmc_public.zip").as_uri()
    assert result.exit_code == 2 and result.output == f"error: download {url}: No such file or directory\n"


def test_a_user_zip_escaping_its_folder_writes_nothing(run_cli, kernel, tmp_path: Path) -> None:
    """The kernel's side (a served one is test_data_cli's): ``--data-dir evil.zip`` is unpacked safely too."""
    evil = tmp_path / "afqmc_public.zip"
    evil.write_bytes(zip_bytes({"train.json": b"{}\n", "../../../escaped.txt": b"pwned"}))
    result = run_cli("run", "afqmc", "--model", "baseline", "--data-dir", evil, "-o", tmp_path / "runs", kernel=kernel)
    home = tmp_path / "clue-home"
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert "refusing entry '../../../escaped.txt': it points outside the target folder" in result.output
    assert not list(tmp_path.rglob("escaped.txt")) and not (tmp_path / "runs" / "afqmc").exists()
    assert listing(home / "extracted") == [] and listing(home / "locks") == []


@pytest.mark.parametrize("filename", ["../../escaped.zip", "sub/afqmc.zip", "..", ""])
def test_a_source_filename_that_is_no_plain_name_is_refused_before_any_request(
        run_cli, isolated_kernel, tmp_path: Path, monkeypatch, filename: str) -> None:
    """A task plugin's ``DataSource.filename`` names the file under downloads/ and the lock under locks/:
    ``../`` in it would write outside the cache."""
    task = task_for("afqmc", filename, AFQMC_ZIP)

    class Tasks:
        @hookimpl
        def clue_tasks(self) -> list:
            return [registered(task)]

    isolated_kernel.register(Tasks(), "test-tasks")
    with LocalServer({"afqmc_public.zip": AFQMC_ZIP}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        result = run_cli("download", "afqmc", kernel=isolated_kernel)
        requests = server.requests
    assert result.exit_code == 2, result.output
    assert result.output == (f"error: task afqmc: its source's filename {filename!r} is not a plain file name "
                             "(the file under the cache's downloads/)\n")
    assert requests == [] and not list(tmp_path.rglob("escaped*"))


def test_a_checksum_mismatch_is_one_line_and_keeps_nothing(run_cli, isolated_kernel, tmp_path: Path,
                                                           monkeypatch) -> None:
    tampered = task_for("afqmc", "afqmc_public.zip", AFQMC_ZIP, sha256="0" * 64)

    class Tasks:
        @hookimpl
        def clue_tasks(self) -> list:
            return [registered(tampered)]

    isolated_kernel.register(Tasks(), "test-tasks")
    monkeypatch.setattr(download_module, "BACKOFF_SECONDS", 0.0)
    with LocalServer({"afqmc_public.zip": AFQMC_ZIP}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        result = run_cli("download", "afqmc", kernel=isolated_kernel)
    home = tmp_path / "clue-home"
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert result.output.endswith(f"sha256 mismatch: expected {'0' * 64}, got {AFQMC.source.sha256}; "
                                  "the file was deleted\n")
    assert listing(home / "downloads") == listing(home / "data") == listing(home / "locks") == []


# ------------------------------------------------------------------ without clue-data


def test_info_without_a_fetcher_says_what_to_install(run_cli, monkeypatch) -> None:
    monkeypatch.setenv("CLUE_DISABLE_PLUGINS", "clue-data")
    shown = run_cli("info", "afqmc")
    assert shown.exit_code == 0, shown.output
    assert "  cached:           no (to fetch it: pip install ./plugins/clue-data)" in shown.output.splitlines()
    as_json = run_cli("info", "afqmc", "--json")
    assert as_json.exit_code == 0 and '"cached": null' in as_json.output


@pytest.mark.parametrize("args", [["--help"], ["download", "--help"], ["list", "fetchers"], ["info", "afqmc"]])
def test_help_and_listing_load_no_downloader(args: list[str], tmp_path: Path) -> None:
    code = ("import sys\nfrom clue_core.cli import cli\n"
            f"try:\n    cli.main({args!r}, prog_name='clue-core')\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('urllib.request', 'http.client', 'clue_data.download') if m in sys.modules),"
            " file=sys.stderr)")
    env = {**os.environ, "CLUE_HOME": str(tmp_path / "home")}
    env.pop("CLUE_DISABLE_PLUGINS", None)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr
