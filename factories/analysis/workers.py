"""Per-file audits spread over forked worker processes.

The audit of one test file (``file_audit.FileAudit``) depends only on that file and the modules
its audit consults, which is why the result cache can keep it; the same property lets several
processes compute the files of one run side by side.  Each worker is a fork of the auditor as it
stands (no parsed module is shipped); it takes the next file from a shared counter, largest
file first (a long audit started last would leave the other workers idle at the end), and
sends back the file's ``FileAudit`` as the JSON the result cache stores (``to_json``, which
``from_json`` decodes exactly).  The run then merges
these values as it merges cached ones, so its report is the one a single process prints.

Nothing is lost to a worker: a file whose audit raised anything but ``SourceError`` in a
worker, or that a worker that died never answered for, is left out of the answer, and the
caller computes it in its own process, where the same exception surfaces as it would without
workers.  Only where ``fork`` exists (not on Windows) and there are files enough to share;
elsewhere everything runs in the calling process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from factories.analysis.file_audit import FileAudit
from factories.errors import SourceError

if TYPE_CHECKING:  # ``multiprocessing`` loads where workers run: a run without them (a warm
    # pre-commit trigger) does not pay for its import
    from multiprocessing.connection import Connection

#: Fewer files than this run in the calling process: forking costs more than they take.
MIN_FILES = 4


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the OS tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def worker_count(jobs: int, files: int) -> int:
    """How many workers a run of ``files`` computed files uses with ``--jobs jobs`` (0: one
    per usable CPU): none (the calling process) where fork is missing or it would not pay."""
    wanted = usable_cpus() if jobs == 0 else jobs
    if wanted < 2 or files < MIN_FILES:
        return 0
    import multiprocessing

    return min(wanted, files) if "fork" in multiprocessing.get_all_start_methods() else 0


def audits_in_workers(
    paths: Sequence[Path],
    compute: Callable[[Path], FileAudit],
    workers: int,
    progress: Callable[[int], None] | None = None,
) -> dict[Path, FileAudit | SourceError]:
    """``compute(path)`` for each of ``paths`` in ``workers`` forked processes: the audit, or
    the ``SourceError`` it raised, by path.  Paths missing from the answer were not computed
    (see the module docstring); ``progress`` is told how many files are done after each."""
    import multiprocessing
    from multiprocessing.connection import wait

    order = sorted(range(len(paths)), key=lambda i: -_size(paths[i]))
    context = multiprocessing.get_context("fork")
    following = context.Value("i", 0)
    readers: list[Connection] = []
    processes = []
    for _ in range(workers):
        reader, writer = context.Pipe(duplex=False)
        process = context.Process(
            target=_serve, args=(paths, order, compute, following, writer), daemon=True
        )
        process.start()
        writer.close()
        readers.append(reader)
        processes.append(process)
    done: dict[Path, FileAudit | SourceError] = {}
    answered = 0
    while readers:
        for reader in wait(readers):
            try:
                kind, index, payload = reader.recv()  # type: ignore[union-attr]
            except EOFError:
                readers.remove(reader)  # type: ignore[arg-type]
                continue
            answered += 1
            if kind == "audit":
                done[paths[index]] = FileAudit.from_json(payload)
            elif kind == "source":
                done[paths[index]] = SourceError(Path(payload[0]), payload[1], payload[2])
            if progress is not None:
                progress(answered)
    for process in processes:
        process.join()
    return done


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # its audit reports it


def _serve(
    paths: Sequence[Path], order: Sequence[int], compute, following, writer: Connection
) -> None:
    """A worker's loop: the next unclaimed file (``order[k]``) until none is left."""
    while True:
        with following.get_lock():
            claimed = following.value
            following.value = claimed + 1
        if claimed >= len(order):
            break
        index = order[claimed]
        try:
            writer.send(("audit", index, compute(paths[index]).to_json()))
        except SourceError as exc:
            writer.send(("source", index, (str(exc.path), exc.line, exc.reason)))
        except Exception:  # the caller computes it again, and meets the exception there
            writer.send(("failed", index, None))
    writer.close()
