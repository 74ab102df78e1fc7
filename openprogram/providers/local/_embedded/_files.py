"""Files in the cache dir written safely: temporary names, renames, locks, free space.

A file is written under a temporary name, ``.<name>.<pid>.<random>.tmp``, and
renamed into place once complete, so a reader never sees half a file. A
writer that dies before the rename (``kill -9``, a power cut) leaves its
temporary file behind; the next writer of the same file removes it
(``sweep``) once it holds the file's lock. Every writer holds that lock while
it writes, and the operating system releases the lock of a process that died,
so under the lock every such file is a dead writer's: a live writer's
temporary file is never touched.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from openprogram.exceptions import ConfigurationError

if sys.platform != "win32":
    import fcntl

__all__ = ["SPARE_BYTES", "atomic_write", "check_room", "file_lock", "new_temp", "sweep"]

SPARE_BYTES = 64 * 1024 * 1024
"""Room left on the disk after a file is written."""


def new_temp(target: Path) -> tuple[int, Path]:
    """A new, empty temporary file beside ``target``, named after it and this process.

    Returns:
        Its open descriptor (write to it, then close it) and its path.
    """
    fd, name = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp"
    )
    return fd, Path(name)


def _temp_pattern(target: Path) -> re.Pattern[str]:
    """The temporary files of ``target`` and of its marker (``<name>.verified``), with or
    without a pid (files of older versions have none)."""
    return re.compile(rf"\.{re.escape(target.name)}(?:\.verified)?(?:\.\d+)?\.[a-z0-9_]+\.tmp")


def sweep(target: Path) -> list[Path]:
    """Remove the temporary files that dead writers of ``target`` left; return them.

    Call it only while holding ``target``'s ``file_lock``: then no live writer
    has one open. Without ``flock`` (Windows) nothing is removed.
    """
    if sys.platform == "win32":
        return []
    pattern = _temp_pattern(target)
    removed = []
    with contextlib.suppress(FileNotFoundError):  # no folder yet: nothing left behind
        for entry in target.parent.iterdir():
            if pattern.fullmatch(entry.name):
                entry.unlink(missing_ok=True)
                removed.append(entry)
    return removed


def check_room(folder: Path, size: int, what: str) -> None:
    """Refuse to start writing ``size`` bytes to ``folder`` without room for them.

    Raises:
        ConfigurationError: Fewer than ``size`` plus ``SPARE_BYTES`` bytes are free.
    """
    free = shutil.disk_usage(folder).free
    if free < size + SPARE_BYTES:
        raise ConfigurationError(
            f"not enough free space in {folder} for {what} "
            f"({size // 2**20} MiB needed, {free // 2**20} MiB free); "
            "set OPENPROGRAM_CACHE_DIR to a roomier directory"
        )


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    fd, tmp = new_temp(path)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def file_lock(target: Path) -> Iterator[None]:
    """Hold the exclusive lock of writing ``target`` (``.<name>.lock`` beside it) between
    processes: POSIX ``flock``, released by the system if the holder dies; elsewhere
    only the rename protects."""
    if sys.platform == "win32":
        yield
        return
    with target.with_name(f".{target.name}.lock").open("a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
