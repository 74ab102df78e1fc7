"""The AWS event-stream decoder against the published test vectors and arbitrary splits.

Vectors: the ``application/vnd.amazon.eventstream`` encoding test suite shipped
with the AWS SDKs (``empty_message``, ``int32_header``, ``payload_no_headers``,
``payload_one_str_header`` and the ``corrupted_*`` cases).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprogram.providers._eventstream import EventStreamDecoder, EventStreamError

from ._aws import header, message

FOO = b"{'foo':'bar'}"
VECTORS = {
    "empty_message": (
        bytes([0, 0, 0, 16, 0, 0, 0, 0, 5, 194, 72, 235, 125, 152, 200, 255]),
        {},
        b"",
    ),
    "int32_header": (
        bytes(
            [
                0,
                0,
                0,
                43,
                0,
                0,
                0,
                14,
                52,
                139,
                236,
                123,
                8,
                101,
                118,
                101,
                110,
                116,
                45,
                105,
                100,
                4,
                0,
                0,
                160,
                12,
                *FOO,
                211,
                137,
                2,
                133,
            ]
        ),
        {"event-id": 0x0000A00C},
        FOO,
    ),
    "payload_no_headers": (
        bytes([0, 0, 0, 29, 0, 0, 0, 0, 253, 82, 140, 90, *FOO, 195, 101, 57, 54]),
        {},
        FOO,
    ),
    "payload_one_str_header": (
        bytes(
            [
                0,
                0,
                0,
                61,
                0,
                0,
                0,
                32,
                7,
                253,
                131,
                150,
                12,
                *b"content-type",
                7,
                0,
                16,
                *b"application/json",
                *FOO,
                141,
                156,
                8,
                177,
            ]
        ),
        {"content-type": "application/json"},
        FOO,
    ),
}
CORRUPTED = {
    "corrupted_headers": bytes(
        [
            0,
            0,
            0,
            61,
            0,
            0,
            0,
            32,
            7,
            253,
            131,
            150,
            12,
            *b"content+type",
            7,
            0,
            16,
            *b"application/json",
            *FOO,
            141,
            156,
            8,
            177,
        ]
    ),
    "corrupted_header_len": bytes(
        [
            0,
            0,
            0,
            61,
            0,
            0,
            1,
            32,
            7,
            253,
            131,
            150,
            12,
            *b"content-type",
            7,
            0,
            16,
            *b"application/json",
            *FOO,
            141,
            156,
            8,
            177,
        ]
    ),
    "corrupted_length": bytes([1, 0, 0, 29, 0, 0, 0, 0, 253, 82, 140, 90, *FOO, 195, 101, 57, 54]),
    "corrupted_payload": bytes(
        [0, 0, 0, 29, 0, 0, 0, 0, 253, 82, 140, 90, *FOO[:-1], 141, 195, 101, 57, 54]
    ),
}


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_published_vectors_decode(name: str) -> None:
    encoded, headers, payload = VECTORS[name]
    (decoded,) = EventStreamDecoder().feed(encoded)
    assert (decoded.headers, decoded.payload) == (headers, payload)


@pytest.mark.parametrize("name", sorted(CORRUPTED))
def test_corrupted_vectors_are_rejected(name: str) -> None:
    with pytest.raises(EventStreamError):
        EventStreamDecoder().feed(CORRUPTED[name])


def test_the_test_encoder_reproduces_the_vectors() -> None:
    assert message(b"", FOO) == VECTORS["payload_no_headers"][0]
    assert (
        message(header("content-type", "application/json"), FOO)
        == (VECTORS["payload_one_str_header"][0])
    )
    assert message(header("event-id", 0xA00C), FOO) == VECTORS["int32_header"][0]


def test_every_header_type_decodes() -> None:
    raw = (
        header("t", True)
        + header("f", False)
        + header("s", "text")
        + header("b", b"\x00\x01")
        + b"\x01n\x02\x7f"
        + b"\x01h\x03\x01\x00"
        + b"\x01l\x05"
        + (2**40).to_bytes(8, "big")
        + b"\x01d\x08"
        + (1_700_000_000_000).to_bytes(8, "big")
        + b"\x01u\x09"
        + bytes(range(16))
    )
    (decoded,) = EventStreamDecoder().feed(message(raw, b"x"))
    assert decoded.headers["t"] is True
    assert decoded.headers["f"] is False
    assert decoded.headers["s"] == "text"
    assert decoded.headers["b"] == b"\x00\x01"
    assert (decoded.headers["n"], decoded.headers["h"], decoded.headers["l"]) == (127, 256, 2**40)
    assert decoded.headers["d"] == 1_700_000_000_000
    assert str(decoded.headers["u"]) == "00010203-0405-0607-0809-0a0b0c0d0e0f"


@given(st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=30))
def test_messages_survive_any_split(sizes: list[int]) -> None:
    stream = b"".join(message(header(":event-type", f"e{i}"), b'{"i": %d}' % i) for i in range(5))
    decoder, got, pos = EventStreamDecoder(), [], 0
    for size in sizes * 50:
        if pos >= len(stream):
            break
        got.extend(decoder.feed(stream[pos : pos + size]))
        pos += size
    got.extend(decoder.feed(stream[pos:]))
    assert [m.headers[":event-type"] for m in got] == [f"e{i}" for i in range(5)]
    assert decoder.pending == 0
