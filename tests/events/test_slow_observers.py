"""A slow or stuck observer cannot stall the event loop or hold an exec past its deadline.

Observers run on the run tree's delivery thread (``openprogram.events._delivery``).
The tests block an observer on an event the test releases at the end, and
check what happened while it was stuck: no timing is measured; a generous
join only keeps a regression from hanging the suite.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from openprogram import Runtime, function
from openprogram.events import AgentEnd, Event
from openprogram.otel import OpenTelemetryObserver
from openprogram.testing import ScriptedProvider, call

GUARD_S = 60.0  # only bounds a hang on a regression; nothing is timed


@function(register_globally=False)
def ping() -> str:
    """Answer pong."""
    return "pong"


class Stuck:
    """An observer that blocks on its first event until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.seen: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.entered.set()
        self.release.wait(GUARD_S)
        self.seen.append(event)


def _in_thread(fn: Any) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def body() -> None:
        try:
            out["value"] = fn()
        except Exception as exc:  # noqa: BLE001 - the test inspects whatever happened
            out["error"] = exc

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread, out


def test_an_exec_with_a_deadline_returns_while_its_observer_is_stuck() -> None:
    stuck = Stuck()
    rt = Runtime(ScriptedProvider([call("ping"), "done"]), observers=[stuck])
    thread, out = _in_thread(lambda: rt.exec("go", tools=[ping], timeout_s=3.0))
    thread.join(GUARD_S)
    still_stuck = not stuck.release.is_set() and stuck.seen == []
    stuck.release.set()
    assert not thread.is_alive()
    assert out == {"value": "done"}
    assert still_stuck  # the exec ended before its observer saw a single event
    assert rt.last_run is not None


def test_the_stuck_observer_still_gets_every_event_afterwards() -> None:
    stuck = Stuck()
    rt = Runtime(ScriptedProvider([call("ping"), "done"]), observers=[stuck])
    assert rt.exec("go", tools=[ping], timeout_s=3.0) == "done"
    stuck.release.set()
    assert rt.last_run is not None
    expected = list(rt.last_run.events)
    give_up = time.monotonic() + GUARD_S
    while len(stuck.seen) < len(expected) and time.monotonic() < give_up:
        time.sleep(0.01)  # the delivery thread works through the backlog on its own
    assert stuck.seen == expected  # all of them, in order


def test_without_a_deadline_observers_have_seen_everything_when_exec_returns() -> None:
    seen: list[Event] = []

    def slowish(event: Event) -> None:
        threading.Event().wait(0.01)
        seen.append(event)

    rt = Runtime(ScriptedProvider([call("ping"), "done"]), observers=[slowish])
    assert rt.exec("go", tools=[ping]) == "done"
    assert rt.last_run is not None
    assert seen == list(rt.last_run.events)
    assert isinstance(seen[-1], AgentEnd)


def test_a_stuck_observer_does_not_stall_other_runs_on_the_loop() -> None:
    stuck = Stuck()
    slow_rt = Runtime(ScriptedProvider(["slow done"]), observers=[stuck])
    fast_rt = Runtime(ScriptedProvider([call("ping"), "fast done"]))

    async def main() -> list[str]:
        slow = asyncio.create_task(slow_rt.async_exec("a", tools=[], timeout_s=30.0))
        while not stuck.entered.is_set():
            await asyncio.sleep(0.001)
        fast = await fast_rt.async_exec("b", tools=[ping])  # runs while the observer is stuck
        assert not stuck.release.is_set()
        stuck.release.set()
        return [fast, await slow]

    thread, out = _in_thread(lambda: asyncio.run(main()))
    thread.join(GUARD_S)
    stuck.release.set()
    assert out == {"value": ["fast done", "slow done"]}


class StuckExporter(SpanExporter):
    """A synchronous exporter that blocks until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.release.wait(GUARD_S)
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.release.set()


def test_a_stuck_synchronous_otel_exporter_does_not_hold_the_exec() -> None:
    exporter = StuckExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(exporter))
    rt = Runtime(
        ScriptedProvider([call("ping"), "done"]), observers=[OpenTelemetryObserver(tracer)]
    )
    thread, out = _in_thread(lambda: rt.exec("go", tools=[ping], timeout_s=3.0))
    thread.join(GUARD_S)
    exported_before = list(exporter.spans)
    exporter.release.set()
    assert out == {"value": "done"}
    assert exported_before == []  # returned while the exporter was still stuck
    tracer.shutdown()
