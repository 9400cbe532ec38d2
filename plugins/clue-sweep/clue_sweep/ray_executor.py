"""The Ray executor: each trial a Ray task, on a cluster (``--address``) or a local one the sweep starts.

Ray is what ML clusters already run (``ray start --head``, its Slurm and Kubernetes deployments),
so the same sweep file runs on a laptop or a cluster. A trial declares what it needs
(``[resources] cpus``, ``gpus``) and Ray places it; Ray gives a task the GPUs it reserved
(``CUDA_VISIBLE_DEVICES``), and the trial sets its own thread count as the local executor does,
so both give the same results. The function that runs is the one the local workers run
(:func:`clue_sweep.worker.run_trial`). Run folders are written where the trial runs: on a
cluster the sweep's folder must be on a file system every node mounts at the same path.

A cluster the sweep started (no ``--address``) is shut down when the sweep ends, on success,
error or Ctrl-C alike; one it connected to is only disconnected from. Ray is imported only here,
and its absence is one line saying what to install.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

from clue_core.plugin import ClueError
from clue_sweep import interrupts
from clue_sweep.spec import Resources
from clue_sweep.worker import run_trial

Done = Callable[[dict[str, Any]], None]

#: The environment a trial reads (data cache, Hugging Face offline switches), passed to every Ray worker.
PASSED_ENV = ("CLUE_HOME", "CLUE_DISABLE_PLUGINS", "HF_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
              "HF_DATASETS_OFFLINE", "PYTHONPATH")
#: Seconds the running trials get to stop after Ctrl-C before Ray is shut down under them.
GRACE = 60.0


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ClueError("--executor ray needs Ray: pip install 'clue-core[ray]'") from None
    return ray


#: Seconds to wait for the cluster's address to answer before the sweep gives up on it.
PROBE_TIMEOUT = 10.0


def check_address(address: str) -> None:
    """Refuse, in one line and within seconds, an address where nothing answers.

    ``ray.init`` itself retries an unreachable head for minutes, printing warnings, so a typo in
    ``--address`` would look like a hang. ``auto`` (the cluster this machine belongs to) is left
    to Ray.
    """
    import socket

    if address in ("auto", "local"):
        return
    where = address.removeprefix("ray://")
    host, _, port = where.rpartition(":")
    if not host or not port.isdigit():
        raise ClueError(f"--address {address!r}: expected host:port (or ray://host:port, or auto)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT).close()
    except OSError as exc:
        raise ClueError(f"cannot connect to the Ray cluster at {address}: {exc.strerror or exc} "
                        "(is 'ray start --head' running there?)") from None


@contextlib.contextmanager
def connected(address: str | None, workers: int, resources: Resources, echo: Callable[[str], None]) -> Iterator[Any]:
    """Ray, connected to ``address`` or to a local cluster of ``workers`` × ``cpus`` CPUs started here."""
    ray = import_ray()
    env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
    options: dict[str, Any] = {"runtime_env": {"env_vars": env}, "log_to_driver": False,
                               "configure_logging": False}
    if address:
        echo(f"[sweep] connecting to the Ray cluster at {address}")
        try:
            ray.init(address=address, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ClueError(f"cannot connect to the Ray cluster at {address}: {str(exc).splitlines()[0]}") from None
    else:
        cpus = workers * resources.cpus
        echo(f"[sweep] starting a local Ray cluster ({cpus} CPUs{', ' if resources.gpus else ''}"
             f"{'GPUs as found' if resources.gpus else ''}); it stops when the sweep ends")
        ray.init(num_cpus=cpus, include_dashboard=False, **options)
    try:
        yield ray
    finally:
        ray.shutdown()  # stops a cluster started here; disconnects from one given by --address


def run_ray(payloads: list[dict[str, Any]], *, address: str | None, workers: int, resources: Resources,
            done: Done, echo: Callable[[str], None]) -> None:
    """Submit every trial as a Ray task; ``done`` gets each result as it finishes.

    Ctrl-C cancels the trials not started and interrupts the running ones (Ray raises
    KeyboardInterrupt in them, so the kernel keeps their staging folders), then re-raises.
    """
    if not payloads:
        return
    with connected(address, workers, resources, echo) as ray:
        remote = ray.remote(num_cpus=resources.cpus, num_gpus=resources.gpus, max_retries=0)(run_trial)
        refs = {remote.remote(payload): payload["id"] for payload in payloads}  # Ray says when each ends, not starts
        try:
            _collect(ray, refs, done, timeout=None)
        except KeyboardInterrupt:
            for ref in refs:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=False)
            with contextlib.suppress(KeyboardInterrupt):
                _collect(ray, refs, done, timeout=GRACE)
            raise


def _collect(ray: Any, refs: dict[Any, str], done: Done, timeout: float | None) -> None:
    """Hand each finished trial to ``done`` until none is left (or ``timeout`` seconds pass)."""
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    while refs and (deadline is None or time.monotonic() < deadline):
        if deadline is None and interrupts.requested():  # a Ctrl-C whose KeyboardInterrupt was lost
            raise KeyboardInterrupt
        ready, _ = ray.wait(list(refs), num_returns=1, timeout=1.0)
        for ref in ready:
            trial = refs.pop(ref)
            try:
                done(ray.get(ref))
            except ray.exceptions.TaskCancelledError:  # cancelled before it started (a running one returns
                continue                               # its own "interrupted"): the summary keeps it pending
            except ray.exceptions.RayError as exc:  # a worker that died, an object that was lost
                done(_result(trial, "failed", f"Ray: {str(exc).strip().splitlines()[0]}"))


def _result(trial: str, status: str, error: str) -> dict[str, Any]:
    return {"id": trial, "status": status, "error": error, "primary": None, "primary_metric": None, "seconds": None}
