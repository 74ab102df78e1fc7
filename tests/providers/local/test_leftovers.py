"""A writer killed mid-way leaves a temporary file; the next writer removes it, never a live one's.

Real processes join small fake parts (``test_weights``'s packages); a stand-in
for ``os.fsync`` holds a child still with every byte written and nothing yet
renamed, where the test kills it (``SIGKILL``) or lets it go on. The free
space is what a fake ``shutil.disk_usage`` computes from the files really in
the cache dir.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import IO, Any

import pytest

from openprogram.exceptions import ConfigurationError
from openprogram.providers.local._embedded import ensure_weights
from openprogram.providers.local._embedded._files import SPARE_BYTES
from openprogram.providers.local._profile import Faster, WeightsSpec

from .test_weights import (
    CHUNKS,
    _install_fake_parts,
    _leftovers,
    gguf_spec,  # noqa: F401 -- the fixture, used by name below
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX flock and SIGKILL")

_WRITER = textwrap.dedent(
    """
    import fcntl, json, os, sys
    from pathlib import Path
    from openprogram.providers.local._embedded import ensure_weights
    from openprogram.providers.local._profile import Part, WeightsSpec

    site, cache, spec_json, hold = sys.argv[1:5]
    sys.path.insert(0, site)
    raw = json.loads(spec_json)
    spec = WeightsSpec(**{**raw, "parts": tuple(Part(**p) for p in raw["parts"])})
    real_flock = fcntl.flock

    def announced_flock(fd, op):
        print("locking", flush=True)  # about to wait for the lock, or take it
        real_flock(fd, op)

    def held_fsync(fd):
        # Every byte of the join is written and nothing renamed yet: say so, then wait.
        print("writing", flush=True)
        sys.stdin.readline()

    fcntl.flock = announced_flock
    if hold == "hold":
        os.fsync = held_fsync
    print(ensure_weights(spec, Path(cache)), flush=True)
    """
)


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, WeightsSpec]:
    site = tmp_path / "site"
    site.mkdir()
    spec = _install_fake_parts(site, "fakeleftovers", CHUNKS)
    monkeypatch.syspath_prepend(str(site))
    return site, spec


@pytest.fixture
def writers() -> Iterator[list[subprocess.Popen[str]]]:
    """The writer processes a test starts; any still running at the end is killed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=60)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def _writer(
    started: list[subprocess.Popen[str]], site: Path, cache: Path, spec: WeightsSpec, *, hold: bool
) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OPENPROGRAM_LOCAL_PROGRESS": "0"}
    args = [str(site), str(cache), json.dumps(asdict(spec)), "hold" if hold else "go"]
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    started.append(proc)
    return proc


def _expect(proc: subprocess.Popen[str], line: str) -> None:
    out: IO[str] | None = proc.stdout
    assert out is not None
    assert out.readline().strip() == line


def test_a_join_killed_mid_way_leaves_a_file_the_next_join_removes(
    parts: tuple[Path, WeightsSpec], tmp_path: Path, writers: list[subprocess.Popen[str]]
) -> None:
    site, spec = parts
    cache = tmp_path / "cache"
    cache.mkdir()
    writer = _writer(writers, site, cache, spec, hold=True)
    _expect(writer, "locking")
    _expect(writer, "writing")
    os.kill(writer.pid, signal.SIGKILL)
    assert writer.wait(timeout=60) == -signal.SIGKILL
    (left,) = _leftovers(cache)
    assert left.startswith(f".model.gguf.{writer.pid}.")  # named after its writer
    assert ensure_weights(spec, cache).read_bytes() == b"".join(CHUNKS)
    assert _leftovers(cache) == []


def test_a_live_writers_file_is_left_alone_by_a_second_process(
    parts: tuple[Path, WeightsSpec], tmp_path: Path, writers: list[subprocess.Popen[str]]
) -> None:
    site, spec = parts
    cache = tmp_path / "cache"
    cache.mkdir()
    first = _writer(writers, site, cache, spec, hold=True)
    _expect(first, "locking")
    _expect(first, "writing")
    second = _writer(writers, site, cache, spec, hold=False)
    _expect(second, "locking")  # it waits for the lock the first one holds
    assert first.stdin is not None
    first.stdin.write("go on\n")
    first.stdin.flush()
    # The first one's file was still there to rename: it ends well, and so does the second.
    assert first.wait(timeout=60) == 0
    assert second.wait(timeout=60) == 0
    assert (cache / "model.gguf").read_bytes() == b"".join(CHUNKS)
    assert _leftovers(cache) == []


class _Disk:
    """A disk of ``size`` bytes holding only the files in ``folder``."""

    def __init__(self, folder: Path, size: int) -> None:
        self.folder, self.size = folder, size

    def __call__(self, path: Any) -> Any:
        used = sum(p.stat().st_size for p in self.folder.iterdir() if p.is_file())
        free = self.size - used
        return shutil._ntuple_diskusage(self.size, used, free)  # type: ignore[attr-defined]


def test_a_dead_writers_file_does_not_count_against_the_free_space(
    parts: tuple[Path, WeightsSpec], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _site, spec = parts
    cache = tmp_path / "cache"
    cache.mkdir()
    stale = cache / ".model.gguf.999999999.k3x_9qab.tmp"  # a writer long gone
    stale.write_bytes(b"x" * 500)
    monkeypatch.setattr(shutil, "disk_usage", _Disk(cache, spec.size + SPARE_BYTES + 10))
    assert ensure_weights(spec, cache).read_bytes() == b"".join(CHUNKS)
    assert not stale.exists()


def test_the_space_check_counts_the_join_and_the_faster_copy(
    parts: tuple[Path, WeightsSpec], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The copy is never made here: the space for it is missing before the join starts.
    copy = Faster(filename="model-fast.gguf", size=100_000, sha256="0" * 64)
    spec = replace(parts[1], faster=copy)
    cache = tmp_path / "cache"
    cache.mkdir()
    room = spec.size + SPARE_BYTES + copy.size // 2  # the join fits, not both
    monkeypatch.setattr(shutil, "disk_usage", _Disk(cache, room))
    with pytest.raises(ConfigurationError) as info:
        ensure_weights(spec, cache)
    assert "for the local model and model-fast.gguf" in str(info.value)
    assert "OPENPROGRAM_CACHE_DIR" in str(info.value)
    assert not (cache / spec.filename).exists()  # refused before writing anything
    assert _leftovers(cache) == []


def test_a_dead_writers_copy_is_removed_when_the_copy_is_made(
    gguf_spec: WeightsSpec,  # noqa: F811 -- the fixture imported above
    tmp_path: Path,
) -> None:
    assert gguf_spec.faster is not None
    cache = tmp_path / "cache"
    cache.mkdir()
    stale = cache / f".{gguf_spec.faster.filename}.999999999.k3x_9qab.tmp"  # killed mid-copy
    stale.write_bytes(b"half a copy")
    assert ensure_weights(gguf_spec, cache) == cache / gguf_spec.faster.filename
    assert _leftovers(cache) == []
