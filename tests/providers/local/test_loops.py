"""An answer that falls into a verbatim loop is stopped at its first copy.

Decoding greedily, the embedded model once repeated "Paris: sunny, 21 C" for
8,022 tokens. The local provider watches a plain-text answer: once it ends in
four copies of one passage (numbers aside) it stops reading, keeps the text up
to the end of the run's first copy and ends the reply with stop reason
``"length"``. Structured answers and decisions are left alone.

A loop with other words between its copies (the README tour's plan: breakfast,
lunch and dinner at one restaurant, each item ending in the same 230
characters) is stopped before the paragraph in which a 150-character passage
comes a third time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from typing import Any, overload

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from openprogram import Runtime
from openprogram.providers.local._guards import COPIES, ECHO, LoopWatch, loop_cut, whole_cut
from openprogram.runtime import StreamEvent, StreamTextDelta

from .._server import Reply, WireServer, sse
from ._llama import call_chunks, completion, provider, role_chunk, timings

# model_requests: fake llama.cpp servers on 127.0.0.1, talked to on purpose (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]

HEAD = "Here is the plan. "
COPY = "Paris: sunny, 21 C "
PLAN = HEAD + COPY * 200
NUMBERED = "Intro.\n" + "".join(
    f"{i}. **Paris Night Out:**\n   - Take a walk.\n" for i in range(1, 40)
)
MODES = pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def answer(text: str, stream: bool, size: int = 7) -> Reply:
    """``text`` as llama.cpp sends it: one completion, or streamed ``size`` characters at a time."""
    return call_chunks(*pieces(text, size)) if stream else Reply(body=completion(text))


def delta(text: str, predicted: int) -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": text}}],
        "timings": timings(predicted),
    }


class Lockstep(Sequence[bytes]):
    """A streamed answer whose next piece goes out only once the client has shown the last one.

    The client shows text through ``Runtime(on_stream=...)``; a client that stops
    reading is never sent more, so ``sent`` says how far it read. ``release()``
    then sends the rest without waiting: writes to a closed connection fail.
    """

    def __init__(self, text: str, size: int = 7) -> None:
        self.pieces = pieces(text, size)
        self.sent = 0
        self.shown = 0
        self.finished = threading.Event()
        self._released = False
        self._turn = threading.Condition()

    def on_stream(self, event: StreamEvent) -> None:
        if isinstance(event, StreamTextDelta):
            with self._turn:
                self.shown += len(event.text)
                self._turn.notify_all()

    def release(self) -> None:
        with self._turn:
            self._released = True
            self._turn.notify_all()

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield sse(role_chunk())
            written = 0
            for piece in self.pieces:
                self._wait_until_shown(written)
                self.sent += 1
                yield sse(delta(piece, self.sent))
                written += len(piece)
            stop = {"index": 0, "delta": {}, "finish_reason": "stop"}
            yield sse({"object": "chat.completion.chunk", "choices": [stop]}, "[DONE]")
        finally:
            self.finished.set()  # the whole answer went out, or a write failed

    def _wait_until_shown(self, written: int) -> None:
        with self._turn:  # 10 s at most: a client that hangs fails the test, not the suite
            self._turn.wait_for(lambda: self._released or self.shown >= written, 10)

    def __len__(self) -> int:
        return len(self.pieces) + 2

    @overload
    def __getitem__(self, index: int) -> bytes: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[bytes]: ...
    def __getitem__(self, index: int | slice) -> bytes | Sequence[bytes]:
        raise NotImplementedError("the server only iterates")


# -- a loop is stopped ----------------------------------------------------------------------


@MODES
def test_a_looping_answer_keeps_its_first_copy_and_ends_as_length(
    wire: WireServer, stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    wire.push(answer(PLAN, stream))
    rt = Runtime(provider(wire, stream=stream))
    with caplog.at_level(logging.INFO, logger="openprogram.providers.local"):
        result = rt.exec("Plan a weekend in Paris.")
    assert result == "Here is the plan. Paris: sunny, 21 C"
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "length"
    assert rt.last_run.text == result
    assert any("repeated one passage" in r.getMessage() for r in caplog.records)
    assert len(wire.requests) == 1  # stopped, not asked again


def test_a_streamed_loop_stops_reading_the_server(wire: WireServer) -> None:
    lockstep = Lockstep(PLAN)
    wire.push(Reply(chunks=lockstep))
    rt = Runtime(provider(wire, stream=True), on_stream=lockstep.on_stream)
    assert rt.exec("Plan a weekend in Paris.") == "Here is the plan. Paris: sunny, 21 C"
    read = lockstep.sent
    assert read * 7 < len(HEAD) + (COPIES + 2) * len(COPY)  # about four copies, not 200
    lockstep.release()  # the rest goes out to a connection the client has closed
    assert lockstep.finished.wait(10)
    assert lockstep.sent < len(lockstep.pieces)  # a write failed: the client went away


@pytest.mark.parametrize("size", [1, 3, 7, 11, 32])
def test_the_cut_does_not_depend_on_how_the_stream_was_chunked(wire: WireServer, size: int) -> None:
    wire.push(answer(PLAN, True, size))
    assert Runtime(provider(wire, stream=True)).exec("Plan.") == HEAD + COPY.rstrip()


@MODES
def test_a_numbered_list_of_one_item_is_cut_after_item_1(wire: WireServer, stream: bool) -> None:
    wire.push(answer(NUMBERED, stream, 5))
    rt = Runtime(provider(wire, stream=stream))
    assert rt.exec("Plan a night out.") == "Intro.\n1. **Paris Night Out:**\n   - Take a walk."
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "length"


SAME = (
    ' at the Parisian restaurant called "Le Parisian". This restaurant offers a variety of'
    " dishes, including traditional French cuisine, Italian cuisine, and more. You can also"
    ' try some local specialties like the "Fondue de la Chine" or the "Pancakes de la France".'
)
MEALS = [
    "2. **Afternoon:**\n   - After the morning, you can enjoy a delicious breakfast" + SAME,
    "3. **Evening:**\n   - After breakfast, you can enjoy a delicious lunch" + SAME,
    "4. **Night:**\n   - After lunch, you can enjoy a delicious dinner" + SAME,
    "5. **Optional:**\n   - If you prefer a quiet evening, you can enjoy a delicious dinner" + SAME,
]
TOUR_HEAD = "Plan a weekend in Paris:\n\n1. **Morning:**\n   - Check the weather: sunny, 21 C."
TOUR = "\n\n".join([TOUR_HEAD, *MEALS, "Enjoy your weekend in Paris!"])
"""The 0.5B's plan from the README tour (measured), shortened: the passage after each meal
is the same 230 characters."""


@MODES
@pytest.mark.parametrize("size", [1, 7, 32])
def test_a_passage_said_a_third_time_cuts_before_its_paragraph(
    wire: WireServer, stream: bool, size: int
) -> None:
    wire.push(answer(TOUR, stream, size))
    rt = Runtime(provider(wire, stream=stream))
    assert rt.exec("Plan a weekend in Paris.") == "\n\n".join([TOUR_HEAD, *MEALS[:2]])
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "length"


def test_a_streamed_echo_stops_reading_the_server(wire: WireServer) -> None:
    lockstep = Lockstep(TOUR)
    wire.push(Reply(chunks=lockstep))
    rt = Runtime(provider(wire, stream=True), on_stream=lockstep.on_stream)
    assert rt.exec("Plan a weekend in Paris.") == "\n\n".join([TOUR_HEAD, *MEALS[:2]])
    assert lockstep.sent * 7 < len("\n\n".join([TOUR_HEAD, *MEALS[:3]]))  # item 4 never read
    lockstep.release()
    assert lockstep.finished.wait(10)


@MODES
def test_a_passage_said_twice_is_kept(wire: WireServer, stream: bool) -> None:
    text = "\n\n".join([TOUR_HEAD, *MEALS[:2], "Enjoy your weekend in Paris!"])
    wire.push(answer(text, stream))
    rt = Runtime(provider(wire, stream=stream))
    assert rt.exec("Plan a weekend in Paris.") == text
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "stop"


@MODES
def test_code_that_repeats_itself_is_kept(wire: WireServer, stream: bool) -> None:
    line = "    assert plan(city).startswith('Plan a weekend in Paris:'), 'no city in the plan'\n"
    code = "```python\n" + "".join(f"def test_{i}(city):\n" + line * 2 for i in range(3))
    wire.push(answer(code, stream))
    rt = Runtime(provider(wire, stream=stream))
    assert rt.exec("Write three tests.") == code
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "stop"


# -- what is not a loop ---------------------------------------------------------------------

HONEST = (
    "Weekend weather\n\n"
    "| Day | City | Forecast |\n|" + "-" * 70 + "|\n| Sat | Paris | sunny, 21 C |\n\n"
    "Next weekend\n\n"
    "| Day | City | Forecast |\n|" + "-" * 70 + "|\n| Sat | Lyon | rain, 14 C |\n\n"
    "Pack for both:\n" + "- Bring an umbrella, just in case.\n" * 3 + "\nThree walks:\n"
    "1. Take a walk along the river Seine.\n"
    "2. Take a walk along the river Seine.\n"
    "3. Take a walk along the river Seine."
)
"""Two identical 70-dash table rules, three identical lines, three items alike but for
their numbers (the last ends the answer, where the check looks)."""


@MODES
@pytest.mark.parametrize("size", [1, 7])
def test_repeats_of_an_honest_answer_are_kept(wire: WireServer, stream: bool, size: int) -> None:
    wire.push(answer(HONEST, stream, size))
    rt = Runtime(provider(wire, stream=stream))
    assert rt.exec("Plan two weekends.") == HONEST
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "stop"


class Forecast(BaseModel):
    lines: list[str]


FORECAST = '{"lines": [' + ", ".join(['"Paris: sunny, 21 C"'] * 12) + "]}"


@pytest.mark.parametrize("schema", [Forecast, Forecast.model_json_schema()], ids=["model", "dict"])
def test_structured_output_is_not_cut(wire: WireServer, schema: Any) -> None:
    # Streamed: JSON ends in "]}", so only the watch on the stream could cut it.
    wire.push(answer(FORECAST, True))
    result = Runtime(provider(wire, stream=True)).exec("Forecast.", response_format=schema)
    lines = result.lines if isinstance(result, Forecast) else result["lines"]
    assert lines == ["Paris: sunny, 21 C"] * 12


def test_a_decision_written_out_is_not_cut(wire: WireServer) -> None:
    note = "Paris: sunny, 21 C. " * 8
    pick = '{"call": "reply", "args": {"text": "' + note + '"}}'
    wire.push(answer(pick, True))

    def reply(text: str) -> str:
        """Answer the customer."""
        return text

    choices = {"reply": reply, "wait": ("waited", "Wait for tomorrow.")}
    assert Runtime(provider(wire, stream=True)).exec("Forecast?", choices=choices) == note


# -- loop_cut itself ------------------------------------------------------------------------

WORDS = st.text(alphabet="abcdefghij klmnop.,:", min_size=0, max_size=60)
COPY_TEXT = st.text(alphabet="abcdefgh ,:", min_size=16, max_size=60)


def loops(text: str) -> bool:
    return any(loop_cut(text[:n]) is not None for n in range(len(text) + 1))


@settings(max_examples=100, deadline=None)
@given(prose=WORDS, copy=COPY_TEXT, k=st.integers(1, 9))
def test_loop_cut_keeps_the_text_and_one_copy(prose: str, copy: str, k: int) -> None:
    """Text that does not loop, then ``k`` copies: from 4 copies on it keeps the text and one."""
    copy = copy.strip() + " "
    assume(len(copy) >= 16 and not loops(prose))  # a passage long enough; prose with no loop
    assume(not any(copy[p:] == copy[:-p] for p in range(1, 16)))  # not made of a shorter piece
    before = "Intro: " + prose + "\n"
    text = before + copy * k
    if k < COPIES:
        assert loop_cut(text) is None
        return
    # Streamed, the check runs wherever a chunk ends: every such prefix cuts at the same place.
    for n in range(len(before) + COPIES * len(copy), len(text) + 1):
        assert loop_cut(text[:n]) == len(before + copy)


HEADS = st.text(alphabet=st.sampled_from("abcdefghij klmnop,:"), min_size=1, max_size=40)
SHARED = st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyz ,."), min_size=ECHO)


@settings(max_examples=100, deadline=None)
@given(
    heads=st.lists(HEADS, min_size=1, max_size=6, unique=True),
    shared=SHARED,
    size=st.integers(1, 80),
)
def test_an_echo_keeps_the_items_before_its_third_copy(
    heads: list[str], shared: str, size: int
) -> None:
    """Items whose heads differ and whose ends are one long passage: from the third on they
    go, however the answer streams; two are kept whole. (The passage does not repeat itself
    inside, as prose does not: a run of "aaaa" matches itself anywhere.)"""
    pieces16 = [shared[i : i + 16] for i in range(len(shared) - 15)]
    assume(len(set(pieces16)) == len(pieces16))
    items = [f"{i}. {head}: {shared}" for i, head in enumerate(heads, start=1)]
    text = "Plan:\n\n" + "\n\n".join(items)
    watch, cut = LoopWatch(), None
    for start in range(0, len(text), size):
        cut = watch.feed(text[start : start + size])
        if cut is not None:
            break
    else:
        cut = watch.close()
    assert cut == whole_cut(text)
    if len(items) < 3:
        assert cut is None
    else:
        assert cut == len("Plan:\n\n" + "\n\n".join(items[:2]))
