"""An OpenTelemetry SDK pipeline into the in-memory exporter, and span-tree helpers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from openprogram.otel import OpenTelemetryObserver


@dataclass
class Traced:
    """The observer under test and what it exported."""

    observer: OpenTelemetryObserver
    exporter: InMemorySpanExporter
    provider: TracerProvider

    @property
    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.spans if span.name == name]

    def settled(self, *names: str, within_s: float = 10.0) -> None:
        """Wait until a span of each name has ended.

        An exec that times out does not wait for its observers past the deadline: their
        last events (the spans' ends) are delivered off the loop a moment later.
        """
        stop = time.monotonic() + within_s
        while not all(self.named(name) for name in names) and time.monotonic() < stop:
            time.sleep(0.01)

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"expected one {name!r} span, got {[s.name for s in self.spans]}"
        return found[0]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        """Direct children of ``parent``, in start order."""
        assert parent.context is not None
        kids = [
            span
            for span in self.spans
            if span.parent is not None and span.parent.span_id == parent.context.span_id
        ]
        return sorted(kids, key=lambda span: span.start_time or 0)

    def tree(self, root: ReadableSpan) -> list[object]:
        """``[name, [child trees...]]`` of ``root``, children in start order."""
        return [root.name, [self.tree(child) for child in self.children(root)]]

    def roots(self) -> list[ReadableSpan]:
        return [span for span in self.spans if span.parent is None]


@pytest.fixture
def traced() -> Iterator[Traced]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield Traced(observer=OpenTelemetryObserver(provider), exporter=exporter, provider=provider)
    provider.shutdown()
