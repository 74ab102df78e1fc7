"""The SSE parser (WHATWG HTML standard, 9.2.6 "Interpreting an event stream")."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from openprogram.providers._sse import SSEDecoder, SSEEvent


def parse(*chunks: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events = [e for c in chunks for e in decoder.feed(c)]
    return events + decoder.close()


def test_fields_comments_and_multi_line_data() -> None:
    stream = (
        b"\xef\xbb\xbf: a comment\n"
        b'event: message_start\nid: 7\ndata: {"a":\ndata:  1}\n\n'
        b"data\n\n"
        b"retry: 100\nunknown: x\ndata:no space\n\n"
    )
    assert parse(stream) == [
        SSEEvent("message_start", '{"a":\n 1}', "7"),
        SSEEvent("message", "", "7"),
        SSEEvent("message", "no space", "7"),
    ]


def test_an_event_without_data_is_not_dispatched_and_its_name_is_reset() -> None:
    assert parse(b"event: ping\n\ndata: x\n\n") == [SSEEvent("message", "x")]


def test_cr_lf_and_crlf_line_ends_mix() -> None:
    assert parse(b"data: a\r\rdata: b\n\ndata: c\r\n\r\n") == [
        SSEEvent("message", "a"),
        SSEEvent("message", "b"),
        SSEEvent("message", "c"),
    ]


def test_a_crlf_split_across_chunks_is_one_line_end() -> None:
    # "\r" ends one chunk and "\n" starts the next: still one line end, no empty line.
    assert parse(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n") == [SSEEvent("message", "a\nb")]


def test_a_trailing_partial_line_is_dropped_at_close() -> None:
    assert parse(b'data: done\n\ndata: {"cut') == [SSEEvent("message", "done")]


def test_complete_lines_without_the_final_blank_line_are_kept_at_close() -> None:
    assert parse(b"data: last\n") == [SSEEvent("message", "last")]


STREAM = (
    "\ufeffevent: a\r\ndata: héllo ☀ 𝄞\r\n\r\n: keep-alive\n\n"
    'data: {"x":\r\ndata: [1, 2]}\r\r'
    "id: 9\nevent: b\ndata: ünï\n\n"
).encode()
EXPECTED = [
    SSEEvent("a", "héllo ☀ 𝄞"),
    SSEEvent("message", '{"x":\n[1, 2]}'),
    SSEEvent("b", "ünï", "9"),
]


@given(st.sets(st.integers(min_value=1, max_value=len(STREAM) - 1), max_size=40))
def test_any_split_gives_the_same_events(cuts: set[int]) -> None:
    bounds = [0, *sorted(cuts), len(STREAM)]
    chunks = [STREAM[a:b] for a, b in itertools.pairwise(bounds)]
    assert parse(*chunks) == EXPECTED


def test_byte_by_byte() -> None:
    assert parse(*(STREAM[i : i + 1] for i in range(len(STREAM)))) == EXPECTED
