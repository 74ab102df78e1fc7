"""Read the header of a GGUF file: its metadata section and its tensor table.

Only what the requantiser needs: where the key-value section starts and ends
(it is copied unchanged), the ``general.alignment`` value, and each tensor's
name, shape, type and data offset. Every way a file can be malformed (cut
short, a string that is not UTF-8, nesting deeper than the format allows, a
count or length running past the end) raises ``GGUFError``, saying at which
byte.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

__all__ = ["GGML_Q4_0", "GGML_Q5_0", "GGUFError", "Layout", "TensorInfo", "align", "read_layout"]

GGML_Q4_0 = 2
"""ggml's type number of Q4_0 blocks."""
GGML_Q5_0 = 6
"""ggml's type number of Q5_0 blocks."""

_HEADER = struct.Struct("<4sIQQ")  # magic, version, tensor count, key-value count
_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
"""Byte sizes of GGUF's fixed-size value types (8 is a string, 9 an array)."""
_STRING, _ARRAY, _UINT32 = 8, 9, 4
_MAX_NESTING = 64
"""Arrays of arrays deeper than this are refused (real files nest one level, if at all)."""
_MAX_DIMS = 8
"""More dimensions than this are refused (ggml tensors have at most 4)."""
_DEFAULT_ALIGNMENT = 32


class GGUFError(ValueError):
    """The file is not a GGUF file this reader understands (the message says where)."""


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """One tensor's entry in a GGUF file's header."""

    name: str
    """The tensor's name, e.g. ``"blk.0.ffn_up.weight"``."""
    dims: tuple[int, ...]
    """Its shape, innermost (row length) first, as GGUF stores it."""
    kind: int
    """The ggml type number (``2`` Q4_0, ``6`` Q5_0, ...)."""
    offset: int
    """Where its data starts, from the start of the data section."""


@dataclass(frozen=True, slots=True)
class Layout:
    """Where the parts of a GGUF file are."""

    version: int
    """The GGUF version (2 or 3)."""
    alignment: int
    """The alignment of the data section and of each tensor's data, in bytes."""
    metadata: tuple[int, int]
    """Start and end of the key-value section, whose bytes are copied unchanged."""
    count: int
    """How many key-value pairs it holds."""
    tensors: tuple[TensorInfo, ...]
    """The tensor table, in file order."""
    data_start: int
    """Where the data section starts in the file."""


def read_layout(data: bytes | memoryview) -> Layout:
    """The header of the GGUF file ``data`` (version 2 or 3).

    Raises:
        GGUFError: ``data`` is not such a file, or its header is cut short or malformed.
    """
    reader = _Reader(memoryview(data))
    magic, version, n_tensors, n_kv = reader.unpack(_HEADER, "the file header")
    if magic != b"GGUF" or version not in (2, 3):
        raise GGUFError(f"not a GGUF v2/v3 file (magic {bytes(magic)!r}, version {version})")
    start, alignment = reader.pos, _DEFAULT_ALIGNMENT
    for _ in range(n_kv):
        key = reader.string("a metadata key")
        (kind,) = reader.unpack(_U32, f"the type of {key!r}")
        if key == "general.alignment" and kind == _UINT32:
            (alignment,) = reader.unpack(_U32, "general.alignment", advance=False)
        reader.skip_value(kind, key)
    end = reader.pos
    tensors = tuple(reader.tensor() for _ in range(n_tensors))
    if alignment <= 0:
        raise GGUFError(
            f"general.alignment is {alignment}: a GGUF alignment is a positive byte count"
        )
    return Layout(version, alignment, (start, end), n_kv, tensors, align(reader.pos, alignment))


def align(position: int, alignment: int) -> int:
    """``position`` rounded up to a multiple of ``alignment``."""
    return -(-position // alignment) * alignment


_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_ARRAY_HEAD = struct.Struct("<IQ")  # item type, item count
_TENSOR_TAIL = struct.Struct("<IQ")  # type, offset


class _Reader:
    """A position in the header, and reads that refuse to run past the end."""

    def __init__(self, view: memoryview) -> None:
        self.view = view
        self.pos = 0

    def unpack(self, shape: struct.Struct, what: str, *, advance: bool = True) -> tuple[Any, ...]:
        if self.pos + shape.size > len(self.view):
            raise GGUFError(f"the GGUF header is cut short in {what} (byte {self.pos})")
        values: tuple[Any, ...] = shape.unpack_from(self.view, self.pos)
        if advance:
            self.pos += shape.size
        return values

    def string(self, what: str) -> str:
        at = self.pos
        (length,) = self.unpack(_U64, what)
        self.skip(length, what, at)
        try:
            return bytes(self.view[self.pos - length : self.pos]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise GGUFError(f"{what} at byte {at} is not UTF-8 ({exc.reason})") from None

    def skip(self, size: int, what: str, at: int) -> None:
        if size > len(self.view) - self.pos:
            raise GGUFError(f"{what} at byte {at} runs past the end of the file")
        self.pos += size

    def skip_value(self, kind: int, key: str) -> None:
        """Skip one value of type ``kind``; arrays of arrays without recursion."""
        pending = [(kind, 1)]  # (item type, items left), innermost last
        while pending:
            kind, left = pending.pop()
            if left == 0:
                continue
            pending.append((kind, left - 1))
            self._skip_one(kind, key, pending)

    def _skip_one(self, kind: int, key: str, pending: list[tuple[int, int]]) -> None:
        at = self.pos
        size = _SCALAR_SIZES.get(kind)
        if size is not None:
            self.skip(size, f"the value of {key!r}", at)
        elif kind == _STRING:
            self.string(f"a string in {key!r}")
        elif kind == _ARRAY:
            item, count = self.unpack(_ARRAY_HEAD, f"the array {key!r}")
            item_size = _SCALAR_SIZES.get(item)
            if item_size is not None:  # a flat array of numbers: skipped in one step
                self.skip(item_size * count, f"the array {key!r}", at)
            elif len(pending) >= _MAX_NESTING:
                raise GGUFError(f"{key!r} nests arrays more than {_MAX_NESTING} deep (byte {at})")
            else:
                pending.append((item, count))
        else:
            raise GGUFError(f"unknown GGUF value type {kind} in {key!r} at byte {at}")

    def tensor(self) -> TensorInfo:
        at = self.pos
        name = self.string("a tensor name")
        (n_dims,) = self.unpack(_U32, f"tensor {name!r}")
        if n_dims > _MAX_DIMS:
            raise GGUFError(f"tensor {name!r} at byte {at} claims {n_dims} dimensions")
        dims = self.unpack(struct.Struct(f"<{n_dims}Q"), f"tensor {name!r}")
        kind, offset = self.unpack(_TENSOR_TAIL, f"tensor {name!r}")
        return TensorInfo(name, tuple(dims), kind, offset)
