"""The Python API: ``clue-core``'s commands as functions, for notebooks and scripts.

Each function takes the same arguments as its command (a flag ``--no-train`` is
``no_train=True``, ``--set k=v`` is ``overrides={"k": v}``) and goes through the same code,
so a notebook gets the same checks, files and scores as the command line. Where the command
prints one ``error:`` line, the function raises :class:`~clue_core.errors.ClueError` with that
message. Results come back typed: :func:`run` returns the :class:`~clue_core.record.RunRecord`
of each task's run directory, read back through the kernel's one reader::

    from clue_core import api

    records = api.run([task], model="baseline", sample=True, output_dir="runs/nb")
    print(records[0].metrics.primary, records[0].metrics.dev)
    api.report(["runs/nb"], output_dir="runs/nb-report")

Heavy libraries load only inside the call that needs them, as on the command line.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clue_core.config import ArgumentError
from clue_core.errors import ClueError
from clue_core.kernel import Kernel

if TYPE_CHECKING:
    from clue_core.record import RunRecord

PathLike = str | Path


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _silent(line: str) -> None:
    pass


def _kernel(kernel: Kernel | None) -> Kernel:
    if kernel is None:
        return Kernel()
    if not isinstance(kernel, Kernel):
        raise ArgumentError(f"kernel: expected a clue_core.kernel.Kernel, got {type(kernel).__name__} {kernel!r:.60}")
    return kernel


def run(tasks: str | Sequence[str] = (), model: str | None = None, *, config: PathLike | None = None,
        sample: bool | None = None, data_dir: PathLike | None = None, output_dir: PathLike | None = None,
        seed: int | None = None, overrides: Mapping[str, Any] | Sequence[str] = (), no_train: bool = False,
        resume: bool = False, overwrite: bool = False, limit: int | None = None, first: int | None = None,
        cache_dir: PathLike | None = None, splits: str | Sequence[str] | None = None, kernel: Kernel | None = None,
        echo: Callable[[str], None] | None = _stderr) -> list[RunRecord]:
    """``clue-core run``: fine-tune (or evaluate) ``model`` on each task; the run records it wrote.

    ``echo`` receives the progress lines the command prints on stderr (``None``: none are shown).
    ``tasks`` is a name or a list of names. ``splits`` is ``--splits``: ``"dev"`` (or ``["dev"]``) predicts
    dev alone and writes no submission files; None predicts every split (a resumed run: those it started
    with). ``first`` is ``--first``: the first N examples of each split in file order (``limit`` draws N).
    Ctrl-C raises :class:`KeyboardInterrupt` whose message says what was kept (``resume=True`` continues
    it). In a distributed run only the main process gets records back; the others get an empty list.
    """
    from clue_core import runner
    from clue_core.config import names, run_request
    from clue_core.context import is_main_process
    from clue_core.errors import Interrupted
    from clue_core.record import read_run

    tasks = names("tasks", tasks)
    request = run_request(tasks=tasks, model=model, config_file=config, data_dir=data_dir, sample=sample,
                          output_dir=output_dir, seed=seed, overrides=overrides, no_train=no_train, resume=resume,
                          overwrite=overwrite, limit=limit, first=first, cache_dir=cache_dir, splits=splits,
                          command=["clue_core.api.run", *tasks])
    if echo is not None and not callable(echo):
        raise ArgumentError(f"echo: expected a function of one line (or None for silence), got "
                            f"{type(echo).__name__} {echo!r:.60}")
    try:
        results = runner.run(_kernel(kernel), request, echo=echo or _silent)
    except Interrupted as stopped:  # Ctrl-C stays Ctrl-C: `except ClueError` in a loop must not swallow it
        raise KeyboardInterrupt(str(stopped)) from None
    if not is_main_process():
        return []
    return [read_run(result.run_dir) for result in results]


def plan(tasks: str | Sequence[str] = (), model: str | None = None, *, config: PathLike | None = None,
         sample: bool | None = None, data_dir: PathLike | None = None, output_dir: PathLike | None = None,
         seed: int | None = None, overrides: Mapping[str, Any] | Sequence[str] = (), no_train: bool = False,
         resume: bool = False, overwrite: bool = False, limit: int | None = None, first: int | None = None,
         cache_dir: PathLike | None = None, splits: str | Sequence[str] | None = None, kernel: Kernel | None = None,
         override_sources: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """``clue-core run --dry-run``: what would run, with every resolved setting and its source; the
    arguments are :func:`run`'s, and ``override_sources`` names where an override came from where that
    is not ``--set`` (a sweep's ``[grid] in s.toml``), in the sources shown and in errors."""
    from clue_core import runner
    from clue_core.config import run_request

    request = run_request(tasks=tasks, model=model, config_file=config, data_dir=data_dir, sample=sample,
                          output_dir=output_dir, seed=seed, overrides=overrides, no_train=no_train, resume=resume,
                          overwrite=overwrite, limit=limit, first=first, cache_dir=cache_dir, splits=splits,
                          override_sources=override_sources)
    return runner.dry_run_plan(_kernel(kernel), request)


def evaluate(task: str, predictions: PathLike, *, data_dir: PathLike | None = None, sample: bool = False,
             split: str = "dev", allow_missing: bool = False, kernel: Kernel | None = None) -> dict[str, Any]:
    """``clue-core evaluate``: score a predictions file against gold labels, with no model.

    Returns what ``--json`` prints: ``task``, ``split``, ``examples`` and each metric. The command
    comes with the ``clue-leaderboard`` plugin; without it this raises the command's one line.
    """
    from clue_core.config import check_evaluate

    check_evaluate(task=task, predictions=predictions, data_dir=data_dir, sample=sample, split=split,
                   allow_missing=allow_missing)
    if sample and data_dir:
        raise ClueError("--sample and --data-dir exclude each other")
    kernel = _kernel(kernel)
    folder = Path(data_dir) if data_dir else None
    return _command_api(kernel, "evaluate")(kernel, task, Path(predictions), data_dir=folder, sample=sample,
                                            split=split, allow_missing=allow_missing)


def submit(run_dirs: Sequence[PathLike], output: PathLike, *, force: bool = False,
           kernel: Kernel | None = None) -> list[Any]:
    """``clue-core submit``: check each run's submission files and pack them into one zip; the checked
    files (``CheckedFile``: ``name``, ``task``, ``version``, ``path``, ``entries``), as the command lists them.

    The command comes with the ``clue-leaderboard`` plugin; without it this raises the command's one line.
    """
    from clue_core.config import check_flag, check_path, paths

    if check_path("output", output) is None:
        raise ArgumentError("output: expected the path of the zip to write (str or os.PathLike), got None")
    run_paths, force = paths("run_dirs", run_dirs), check_flag("force", force)
    if not run_paths:  # the command wants one RUN_DIR at least
        raise ArgumentError("run_dirs: expected at least one run folder, got none")
    kernel = _kernel(kernel)
    return _command_api(kernel, "submit")(kernel, run_paths, Path(output), force=force)


def _command_api(kernel: Kernel, name: str) -> Callable[..., Any]:
    """The Python function of plugin command ``name`` (its ``CommandSpec.api``), imported now.

    A command whose plugin is absent raises the line ``clue-core NAME`` prints (which plugin to
    install); one that cannot be imported names its plugin, as the command line does.
    """
    from clue_core.errors import PluginError
    from clue_core.specs import resolve

    spec = kernel.commands.get(name)
    if spec is None:
        from clue_core.commands import missing_command
        from clue_core.kernel import PLUGIN_HOMES

        stand_in = missing_command(kernel, name, PLUGIN_HOMES.get(name))
        if stand_in is not None and stand_in.callback is not None:
            stand_in.callback()  # raises the one line saying which plugin to install
        raise ClueError(f"unknown command {name!r}")
    owner = kernel.owner.get(("commands", name), "?")
    if spec.api is None:
        raise PluginError(f"plugin {owner}: command {name!r} has no Python API (its CommandSpec names no api)")
    try:
        function = resolve(spec.api)
    except (Exception, SystemExit) as exc:  # as load_command: a module that exits on import is broken too
        if kernel.strict:
            raise
        raise PluginError(f"plugin {owner}: the Python API of command {name!r} could not be loaded from "
                          f"{spec.api} ({type(exc).__name__}: {exc})") from exc
    if not callable(function):
        raise PluginError(f"plugin {owner}: {spec.api} is a {type(function).__name__}, not a function")
    return function


def report(paths: Sequence[PathLike], *, output_dir: PathLike | None = None, force: bool = False,
           kernel: Kernel | None = None) -> dict[str, Any]:
    """``clue-core report``: with ``output_dir``, write the HTML report there and return report.json's
    content; without, return the summary ``--json`` prints.

    The report is a plugin (``clue-report``): this runs its registered command, so a report
    section another plugin adds shows here too.
    """
    from clue_core.config import check_flag, check_path
    from clue_core.config import paths as path_list

    args = [str(p) for p in path_list("paths", paths)]
    check_flag("force", force)
    if check_path("output_dir", output_dir) is not None:
        args += ["-o", str(output_dir)] + (["--force"] if force else [])
        invoke_command(kernel, "report", args)
        return json.loads((Path(output_dir) / "report.json").read_text(encoding="utf-8"))
    if force:
        raise ClueError("--force goes with -o DIR")
    return json.loads(invoke_command(kernel, "report", [*args, "--json"]))


def invoke_command(kernel: Kernel | None, name: str, args: Sequence[str]) -> str:
    """Run ``clue-core NAME ARGS`` in this process and return what it printed on stdout.

    Errors are raised, not printed: the command runs strict, so a :class:`ClueError` reaches
    the caller with its one-line message.
    """
    from clue_core.cli import cli

    if not isinstance(name, str) or not name:
        raise ArgumentError(f"name: expected a command name, got {type(name).__name__} {name!r:.60}")
    if isinstance(args, (str, bytes)) or not all(isinstance(a, str) for a in args):
        raise ArgumentError(f"args: expected a list of argument texts, got {type(args).__name__} {args!r:.60}")
    kernel = _kernel(kernel)
    if name not in kernel.commands and name not in cli.commands:
        from clue_core.commands import missing_command
        from clue_core.kernel import PLUGIN_HOMES

        if missing_command(kernel, name, PLUGIN_HOMES.get(name)) is None:
            raise ClueError(f"unknown command {name!r}")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main([name, *args], prog_name="clue-core", standalone_mode=False, obj={"kernel": kernel, "strict": True})
    return out.getvalue()
