"""A faster copy of a GGUF model for llama.cpp's CPU code: its Q5_0 matrices as Q4_0.

The default model's file (Qwen2.5-Coder-0.5B, "Q4_K_M") holds most of its
weight matrices as Q5_0: their rows of 896 values do not split into the
256-value blocks the K-quants need. llama.cpp's prebuilt CPU code has no fast
path for Q5_0, while it rearranges Q4_0 matrices at load into an interleaved
layout its AVX2 kernels multiply much faster ("repack"). ``requantize`` writes
a copy of a GGUF file with every Q5_0 matrix but the token embedding (a table
lookup, not a product) refitted as Q4_0 (``_fit_q4_0``: the least-squares fit
among 21 grids); every other tensor and all the metadata are copied byte for
byte. The opt-in model ``"qwen2.5-coder-0.5b-q4_0"`` is served from that copy.

Q5_0 stores 32 values as one fp16 scale ``d`` and 5-bit integers ``q`` in
-16..15 (``x = d * q``); Q4_0 as one fp16 scale and 4-bit integers in -8..7.
The copy has half the levels of the original, so the model's replies change
(``bench/local-model/NOTES.md`` has the accuracy and speed measured on it).

Only numpy is needed (the ``local`` extra installs it). The result depends on
nothing but the input bytes, so its size and SHA-256 can be pinned.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, TYPE_CHECKING

from openprogram.providers.local._embedded._gguf import (
    GGML_Q4_0,
    GGML_Q5_0,
    GGUFError,
    Layout,
    TensorInfo,
    align,
    read_layout,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["requantize"]

_Q5_0_BLOCK = 22  # fp16 scale, 32 high bits, 16 bytes of low nibbles
_Q4_0_BLOCK = 18  # fp16 scale, 16 bytes of nibbles
_VALUES_PER_BLOCK = 32
_KEEP = ("token_embd",)  # looked up, not multiplied: no speed to gain, some accuracy to lose
_GRID_STEPS = (0, *range(-10, 0), *range(1, 11))  # tenths of a level off -8; 0 first
_ROWS_PER_STEP = 1 << 13
_WORKERS = max(1, min(4, os.cpu_count() or 1))
"""Slices of blocks converted at a time (bounded memory for any tensor size)."""


def requantize(source: Path, target: Path) -> int:
    """Write to ``target`` a copy of the GGUF file ``source`` with its Q5_0 matrices as Q4_0.

    Every tensor named ``token_embd.*`` keeps its type; every tensor of any
    other type than Q5_0 is copied unchanged, as is the metadata. Returns how
    many tensors were converted (0: the copy is the same model, laid out anew).

    Raises:
        GGUFError: ``source`` is not a GGUF file this reader understands.
        OSError: Reading or writing failed.
    """
    import numpy as np  # noqa: PLC0415 -- the local extra's, loaded only here

    with source.open("rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            raise GGUFError(f"{source} is empty, not a GGUF file")
        mapped = np.memmap(handle, dtype=np.uint8, mode="r")
        layout = read_layout(mapped.data)
        sizes = _data_sizes(layout, len(mapped))
        plan: list[tuple[TensorInfo, int, int]] = []  # (tensor, its new kind, its new size)
        for info in layout.tensors:
            if info.kind == GGML_Q5_0 and not info.name.startswith(_KEEP):
                plan.append((info, GGML_Q4_0, _blocks(info) * _Q4_0_BLOCK))
            else:
                plan.append((info, info.kind, sizes[info.offset]))
        with target.open("wb") as out:
            _write_header(out, mapped, layout, plan)
            for info, kind, size in plan:
                begin = layout.data_start + info.offset
                if kind == info.kind:
                    out.write(mapped[begin : begin + size].data)  # straight from the mapping
                else:
                    for piece in _q5_0_as_q4_0(mapped, begin, size // _Q4_0_BLOCK):
                        out.write(piece)
                out.write(b"\0" * (align(size, layout.alignment) - size))
            out.flush()
            os.fsync(out.fileno())
        del mapped
    return sum(1 for info, kind, _ in plan if kind != info.kind)


def _q5_0_as_q4_0(mapped: npt.NDArray[np.uint8], begin: int, blocks: int) -> Iterator[bytes]:
    """The Q4_0 bytes of ``blocks`` Q5_0 blocks at ``begin``, fitted a bounded slice at a time.

    The slices are fitted on up to ``_WORKERS`` threads (numpy releases the GIL
    in its loops) and come out in order.
    """
    import numpy as np  # noqa: PLC0415

    def fit(first: int) -> bytes:
        count = min(_ROWS_PER_STEP, blocks - first)
        start = begin + first * _Q5_0_BLOCK
        raw = np.asarray(mapped[start : start + count * _Q5_0_BLOCK]).reshape(count, _Q5_0_BLOCK)
        scale, levels = _q5_0_levels(raw)
        return _fit_q4_0(scale, levels).tobytes()

    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        yield from pool.map(fit, range(0, blocks, _ROWS_PER_STEP))


def _q5_0_levels(
    raw: npt.NDArray[np.uint8],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Each block's scale and its 32 levels (-16..15): value ``j`` is ``scale * levels[j]``."""
    import numpy as np  # noqa: PLC0415

    scale = raw[:, 0:2].copy().view(np.float16).astype(np.float64)[:, 0]
    high = raw[:, 2:6].copy().view("<u4")  # (n, 1): bit j is value j's fifth bit
    low = raw[:, 6:].astype(np.int64)
    fifth = ((high >> np.arange(32, dtype=np.uint32)) & 1).astype(np.int64) << 4  # (n, 32)
    first = (low & 0x0F) | fifth[:, :16]  # values 0..15 of the block
    second = (low >> 4) | fifth[:, 16:]  # values 16..31
    return scale, np.concatenate([first, second], axis=1) - 16


def _fit_q4_0(
    scale: npt.NDArray[np.float64], levels: npt.NDArray[np.int64]
) -> npt.NDArray[np.uint8]:
    """Q4_0 blocks for Q5_0 blocks given as ``scale * levels``: the least-squares fit.

    Like llama.cpp's rounding with an importance matrix, several grids are
    tried per block: the one through the value of largest magnitude at level
    -8 (llama.cpp's reference rounding), and the same at -7.0 ... -9.0 in steps
    of 0.1, each value rounded to its nearest level in -8..7. For each grid the
    scale that fits best is ``sum(q5 * q) / sum(q * q)``; the grid whose fit
    leaves the least squared error wins (the first on a tie). All of it is
    integer arithmetic on the Q5_0 levels (the Q5_0 scale is common to the
    block), so the choice and the bytes are the same on every machine.
    """
    import numpy as np  # noqa: PLC0415

    count = levels.shape[0]
    extreme = levels[np.arange(count), np.argmax(np.abs(levels), axis=1)]  # (n,)
    divisor = np.where(extreme == 0, 1, extreme).astype(np.float64)[:, None]
    as_float = levels.astype(np.float64)
    small = levels.astype(np.int32)
    best_q = np.zeros((count, _VALUES_PER_BLOCK), dtype=np.int32)
    best_num = np.zeros(count, dtype=np.int64)  # sum(q5 * q) of the best grid so far
    best_den = np.ones(count, dtype=np.int64)  # sum(q * q), never 0 for a grid kept
    grid = np.empty_like(as_float)
    for step in _GRID_STEPS:
        target = np.float64(-80 + step) / np.float64(10)  # the extreme's level on this grid
        np.multiply(as_float, target, out=grid)
        np.divide(grid, divisor, out=grid)
        np.rint(grid, out=grid)
        np.clip(grid, -8, 7, out=grid)
        q = grid.astype(np.int32)
        num = (small * q).sum(axis=1, dtype=np.int64)
        den = (q * q).sum(axis=1, dtype=np.int64)
        # num^2 / den > best_num^2 / best_den, compared exactly (both below 2^36).
        better = (den > 0) & (num * num * best_den > best_num * best_num * den)
        best_q = np.where(better[:, None], q, best_q)
        best_num = np.where(better, num, best_num)
        best_den = np.where(better, den, best_den)
    fitted = np.where(best_num == 0, 0.0, scale * best_num / best_den)
    out = np.empty((count, _Q4_0_BLOCK), dtype=np.uint8)
    out[:, 0:2] = fitted.astype(np.float16).view(np.uint8).reshape(-1, 2)
    nibbles = (best_q + 8).astype(np.uint8)
    out[:, 2:] = nibbles[:, :16] | (nibbles[:, 16:] << 4)
    return out


def _write_header(
    out: IO[bytes],
    source: npt.NDArray[np.uint8],
    layout: Layout,
    plan: list[tuple[TensorInfo, int, int]],
) -> None:
    start, end = layout.metadata
    out.write(struct.pack("<4sIQQ", b"GGUF", layout.version, len(plan), layout.count))
    out.write(source[start:end].tobytes())
    offset = 0
    for info, kind, size in plan:
        name = info.name.encode("utf-8")
        out.write(struct.pack("<Q", len(name)) + name)
        out.write(struct.pack(f"<I{len(info.dims)}Q", len(info.dims), *info.dims))
        out.write(struct.pack("<IQ", kind, offset))
        offset += align(size, layout.alignment)
    here = out.tell()
    out.write(b"\0" * (align(here, layout.alignment) - here))


def _blocks(info: TensorInfo) -> int:
    values = 1
    for dim in info.dims:
        values *= dim
    if not info.dims or info.dims[0] % _VALUES_PER_BLOCK:
        raise GGUFError(f"tensor {info.name}: rows of {info.dims[:1]} values are not Q5_0 blocks")
    return values // _VALUES_PER_BLOCK


def _data_sizes(layout: Layout, file_size: int) -> dict[int, int]:
    """Each tensor's data size (to the next tensor, or the file's end), by offset."""
    offsets = sorted({info.offset for info in layout.tensors})
    if not offsets:
        return {}
    ends = [*offsets[1:], file_size - layout.data_start]
    sizes = {offset: end - offset for offset, end in zip(offsets, ends, strict=True)}
    if any(size < 0 for size in sizes.values()):
        raise GGUFError("a tensor's data lies past the end of the file")
    for info in layout.tensors:
        if info.kind == GGML_Q5_0 and sizes[info.offset] < _blocks(info) * _Q5_0_BLOCK:
            raise GGUFError(f"tensor {info.name}: its data is cut short")
    return sizes
