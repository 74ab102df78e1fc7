"""Malformed GGUF files: every one is refused with ``GGUFError``, never another exception.

The files are built by the format's description (``test_requant.build_gguf``),
then broken on purpose: cut short, a key that is not UTF-8, arrays nested
thousands deep, counts that run past the end.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openprogram.providers.local._embedded._gguf import GGML_Q5_0, GGUFError, Layout, read_layout
from openprogram.providers.local._embedded._requant import requantize

from .test_requant import RAMP, build_gguf, q5_0_blocks


def _string(raw: bytes) -> bytes:
    return struct.pack("<Q", len(raw)) + raw


def _header(n_tensors: int, kv: list[bytes]) -> bytes:
    return struct.pack("<4sIQQ", b"GGUF", 3, n_tensors, len(kv)) + b"".join(kv)


def _requantized(tmp_path: Path, data: bytes) -> int:
    (tmp_path / "in.gguf").write_bytes(data)
    return requantize(tmp_path / "in.gguf", tmp_path / "out.gguf")


SMALL = build_gguf(
    [("blk.0.ffn_up.weight", (32, 2), GGML_Q5_0, q5_0_blocks([0.5, -0.25], [RAMP, RAMP]))]
)


def test_a_key_that_is_not_utf8_is_a_gguf_error(tmp_path: Path) -> None:
    data = _header(0, [_string(b"general.\xff\xfename") + struct.pack("<IB", 0, 1)])
    with pytest.raises(GGUFError, match=r"metadata key at byte 24 is not UTF-8"):
        read_layout(data)
    with pytest.raises(GGUFError, match="not UTF-8"):
        _requantized(tmp_path, data)


def test_arrays_nested_thousands_deep_are_a_gguf_error() -> None:
    nested = struct.pack("<IQ", 9, 1) * 5000 + struct.pack("<IQ", 0, 0)
    data = _header(0, [_string(b"deep") + struct.pack("<I", 9) + nested])
    with pytest.raises(GGUFError, match=r"'deep' nests arrays more than \d+ deep"):
        read_layout(data)


def test_arrays_of_arrays_within_the_limit_are_read() -> None:
    inner = struct.pack("<IQ", 4, 2) + struct.pack("<2I", 7, 8)  # two uint32
    strings = struct.pack("<IQ", 8, 2) + _string(b"a") + _string(b"bc")
    value = struct.pack("<I", 9) + struct.pack("<IQ", 9, 2) + inner + strings
    data = _header(0, [_string(b"nested") + value])
    assert read_layout(data).metadata == (24, len(data))


def test_a_valid_file_without_tensors_is_copied(tmp_path: Path) -> None:
    data = build_gguf([])
    assert _requantized(tmp_path, data) == 0
    out = (tmp_path / "out.gguf").read_bytes()
    assert read_layout(out).tensors == ()
    start, end = read_layout(data).metadata
    assert out[start:end] == data[start:end]


def test_an_empty_file_is_a_gguf_error(tmp_path: Path) -> None:
    with pytest.raises(GGUFError, match="empty"):
        _requantized(tmp_path, b"")


def test_metadata_claimed_past_the_end_is_a_gguf_error(tmp_path: Path) -> None:
    # No tensors, and one array of 10^6 uint64 values in a 60-byte file.
    data = _header(0, [_string(b"big") + struct.pack("<IIQ", 9, 10, 10**6)])
    with pytest.raises(GGUFError, match="the array 'big' at byte 39 runs past the end"):
        read_layout(data)
    with pytest.raises(GGUFError, match="runs past the end"):
        _requantized(tmp_path, data)


def test_a_tensor_with_absurdly_many_dimensions_is_a_gguf_error() -> None:
    data = _header(1, []) + _string(b"t") + struct.pack("<I", 2**31)
    with pytest.raises(GGUFError, match="claims 2147483648 dimensions"):
        read_layout(data)


def test_every_truncation_of_a_file_is_a_gguf_error(tmp_path: Path) -> None:
    header_end = read_layout(SMALL).data_start
    for size in range(header_end):
        with pytest.raises(GGUFError):
            _requantized(tmp_path, SMALL[:size])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, len(SMALL) - 1), st.integers(0, 255)), min_size=1, max_size=4)
)
def test_a_damaged_header_is_read_or_refused_with_a_gguf_error(
    changes: list[tuple[int, int]],
) -> None:
    data = bytearray(SMALL)
    for at, value in changes:
        data[at] = value
    read = _read(bytes(data))
    if isinstance(read, GGUFError):
        assert "byte" in str(read) or "GGUF" in str(read)  # it says where, or what it is not
    else:
        assert read.metadata[0] == 24 <= read.metadata[1] <= len(data)


def _read(data: bytes) -> Layout | GGUFError:
    try:
        return read_layout(data)
    except GGUFError as err:
        return err
