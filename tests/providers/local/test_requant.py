"""The faster copy of the model file: Q5_0 matrices requantized to Q4_0, on small GGUF files.

``build_gguf`` writes GGUF v3 files by the format's description, independently
of the reader under test.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from openprogram.providers.local._embedded._gguf import GGML_Q4_0, GGML_Q5_0, GGUFError, read_layout
from openprogram.providers.local._embedded._requant import requantize

GGML_F32 = 0
ALIGN = 32


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def build_gguf(
    tensors: list[tuple[str, tuple[int, ...], int, bytes]], *, alignment: int = ALIGN
) -> bytes:
    """A GGUF v3 file: a few metadata values (a string array among them) and ``tensors``."""
    kv = [
        _string("general.architecture") + struct.pack("<I", 8) + _string("qwen2"),
        _string("general.alignment") + struct.pack("<II", 4, alignment),
        _string("tokenizer.ggml.tokens")
        + struct.pack("<IIQ", 9, 8, 3)
        + b"".join(_string(t) for t in ("a", "bc", "<|im_end|>")),
        _string("qwen2.context_length") + struct.pack("<IQ", 10, 8192),
        _string("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 2) + struct.pack("<2f", 1, 2),
    ]
    header = struct.pack("<4sIQQ", b"GGUF", 3, len(tensors), len(kv)) + b"".join(kv)
    infos, data, offset = b"", b"", 0
    for name, dims, kind, payload in tensors:
        infos += _string(name) + struct.pack(f"<I{len(dims)}Q", len(dims), *dims)
        infos += struct.pack("<IQ", kind, offset)
        padded = payload + b"\0" * (-len(payload) % alignment)
        data += padded
        offset += len(padded)
    head = header + infos
    return head + b"\0" * (-len(head) % alignment) + data


def q5_0_blocks(scales: list[float], levels: list[list[int]]) -> bytes:
    """Q5_0 blocks: an fp16 scale, the fifth bits, then the low nibbles (levels -16..15)."""
    out = b""
    for scale, block in zip(scales, levels, strict=True):
        unsigned = [level + 16 for level in block]
        fifth = sum(((u >> 4) & 1) << j for j, u in enumerate(unsigned))
        nibbles = bytes((unsigned[j] & 15) | ((unsigned[j + 16] & 15) << 4) for j in range(16))
        out += np.float16(scale).tobytes() + struct.pack("<I", fifth) + nibbles
    return out


def q4_0_values(raw: bytes) -> list[list[float]]:
    """Decode Q4_0 blocks: an fp16 scale, then nibbles (value j low, value j+16 high), minus 8."""
    blocks = []
    for at in range(0, len(raw), 18):
        (scale,) = np.frombuffer(raw[at : at + 2], dtype=np.float16)
        nibbles = raw[at + 2 : at + 18]
        levels = [b & 15 for b in nibbles] + [b >> 4 for b in nibbles]
        blocks.append([float(scale) * (level - 8) for level in levels])
    return blocks


def tensor_bytes(data: bytes, name: str) -> tuple[int, bytes]:
    layout = read_layout(data)
    infos = sorted(layout.tensors, key=lambda t: t.offset)
    for index, info in enumerate(infos):
        if info.name == name:
            end = infos[index + 1].offset if index + 1 < len(infos) else len(data)
            return info.kind, data[layout.data_start + info.offset : layout.data_start + end]
    raise AssertionError(name)


RAMP = list(range(-16, 16))  # every Q5_0 level once


def test_a_q5_0_matrix_becomes_q4_0_and_everything_else_is_copied(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    levels = [RAMP] + [[int(v) for v in rng.integers(-16, 16, 32)] for _ in range(3)]
    scales = [1.0, 0.01, -0.003, 0.25]
    norm = struct.pack("<64f", *np.linspace(-1, 1, 64))
    embed = q5_0_blocks([0.5, 0.5], levels[:2])
    source = build_gguf(
        [
            ("token_embd.weight", (32, 2), GGML_Q5_0, embed),
            ("blk.0.attn_norm.weight", (64,), GGML_F32, norm),
            ("blk.0.ffn_up.weight", (64, 2), GGML_Q5_0, q5_0_blocks(scales, levels)),
        ]
    )
    (tmp_path / "in.gguf").write_bytes(source)
    converted = requantize(tmp_path / "in.gguf", tmp_path / "out.gguf")
    out = (tmp_path / "out.gguf").read_bytes()

    assert converted == 1
    layout = read_layout(out)
    assert [(t.name, t.dims) for t in layout.tensors] == [
        (t.name, t.dims) for t in read_layout(source).tensors
    ]
    assert all(t.offset % ALIGN == 0 for t in layout.tensors)
    assert layout.data_start % ALIGN == 0
    start, end = read_layout(source).metadata
    assert out[layout.metadata[0] : layout.metadata[1]] == source[start:end]  # metadata as is
    kind, raw = tensor_bytes(out, "token_embd.weight")
    assert (kind, raw[: len(embed)]) == (GGML_Q5_0, embed)  # looked up, not multiplied: kept
    assert tensor_bytes(out, "blk.0.attn_norm.weight")[1][: len(norm)] == norm

    kind, raw = tensor_bytes(out, "blk.0.ffn_up.weight")
    assert kind == GGML_Q4_0
    for scale, block, decoded in zip(scales, levels, q4_0_values(raw[: 4 * 18]), strict=True):
        original = [float(np.float16(scale)) * level for level in block]
        assert squared_error(decoded, original) <= squared_error(reference(original), original)


def reference(values: list[float]) -> list[float]:
    """llama.cpp's Q4_0 reference rounding: largest magnitude at level -8, round half up."""
    extreme = max(values, key=abs)
    scale = float(np.float16(extreme / -8))
    inverse = -8 / extreme if extreme else 0.0
    return [scale * (min(15, int(np.floor(v * inverse + 8.5))) - 8) for v in values]


def squared_error(got: list[float], want: list[float]) -> float:
    return sum((g - w) ** 2 for g, w in zip(got, want, strict=True))


def test_the_fit_is_never_worse_than_the_reference_rounding_and_often_better(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(3)
    levels = [[int(v) for v in rng.integers(-16, 16, 32)] for _ in range(200)]
    levels += [[int(v) for v in np.clip(rng.normal(0, 5, 32), -16, 15)] for _ in range(200)]
    scales = [float(np.float16(s)) for s in rng.uniform(-0.05, 0.05, len(levels))]
    rows = len(levels) // 8
    source = build_gguf(
        [("blk.1.ffn_down.weight", (256, rows), GGML_Q5_0, q5_0_blocks(scales, levels))]
    )
    (tmp_path / "in.gguf").write_bytes(source)
    requantize(tmp_path / "in.gguf", tmp_path / "out.gguf")
    _, raw = tensor_bytes((tmp_path / "out.gguf").read_bytes(), "blk.1.ffn_down.weight")
    better = 0
    for scale, block, decoded in zip(scales, levels, q4_0_values(raw), strict=True):
        original = [scale * level for level in block]
        fit, plain = squared_error(decoded, original), squared_error(reference(original), original)
        assert fit <= plain * (1 + 1e-3)  # the fitted scale is rounded to fp16 too
        better += fit < plain * 0.99
    assert better > len(levels) // 2


def test_the_value_of_largest_magnitude_is_kept_when_that_fits_best(tmp_path: Path) -> None:
    # Levels -16 and 14 only: the grid with -16 at level -8 (scale 2) holds both exactly.
    block = [-16, 14] * 16
    source = build_gguf([("blk.0.attn_q.weight", (32,), GGML_Q5_0, q5_0_blocks([0.5], [block]))])
    (tmp_path / "in.gguf").write_bytes(source)
    requantize(tmp_path / "in.gguf", tmp_path / "out.gguf")
    _, raw = tensor_bytes((tmp_path / "out.gguf").read_bytes(), "blk.0.attn_q.weight")
    assert q4_0_values(raw[:18]) == [[0.5 * level for level in block]]


def test_an_all_zero_block_stays_zero(tmp_path: Path) -> None:
    source = build_gguf([("blk.0.attn_k.weight", (32,), GGML_Q5_0, q5_0_blocks([0.0], [RAMP]))])
    (tmp_path / "in.gguf").write_bytes(source)
    requantize(tmp_path / "in.gguf", tmp_path / "out.gguf")
    _, raw = tensor_bytes((tmp_path / "out.gguf").read_bytes(), "blk.0.attn_k.weight")
    assert q4_0_values(raw[:18]) == [[0.0] * 32]


def test_the_copy_is_the_same_bytes_every_time(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    levels = [[int(v) for v in rng.integers(-16, 16, 32)] for _ in range(64)]
    scales = [float(s) for s in rng.normal(0, 0.02, 64)]
    source = build_gguf(
        [("blk.3.ffn_gate.weight", (256, 8), GGML_Q5_0, q5_0_blocks(scales, levels))]
    )
    (tmp_path / "in.gguf").write_bytes(source)
    requantize(tmp_path / "in.gguf", tmp_path / "a.gguf")
    requantize(tmp_path / "in.gguf", tmp_path / "b.gguf")
    assert (tmp_path / "a.gguf").read_bytes() == (tmp_path / "b.gguf").read_bytes()


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"GGML" + bytes(40), "not a GGUF"),
        (build_gguf([])[:30], "cut short"),
    ],
    ids=["magic", "truncated"],
)
def test_a_file_that_is_not_gguf_is_refused_saying_why(data: bytes, says: str) -> None:
    with pytest.raises(GGUFError, match=says):
        read_layout(data)


def test_a_q5_0_tensor_whose_data_is_cut_short_is_refused(tmp_path: Path) -> None:
    whole = build_gguf([("blk.0.attn_q.weight", (32, 4), GGML_Q5_0, q5_0_blocks([1.0], [RAMP]))])
    (tmp_path / "in.gguf").write_bytes(whole)
    with pytest.raises(GGUFError, match=r"blk\.0\.attn_q\.weight: its data is cut short"):
        requantize(tmp_path / "in.gguf", tmp_path / "out.gguf")
