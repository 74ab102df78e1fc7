"""Record a run's model turns to a JSON file, and replay them offline.

``record(provider, path)`` wraps any provider: every completed model turn is
written to ``path`` together with the request that produced it, normalized so
that it does not depend on the wire format, call ids, or image bytes.
``replay(path)`` is a provider that answers each request with the reply
recorded for the same normalized request, with no network. One real run thus
becomes a deterministic test::

    rt = Runtime(record(resolve_provider("openai:gpt-4o-mini"), "trip.json"))
    rt.exec("Plan a weekend in Paris.", tools=[get_weather])   # once, with a key

    rt = Runtime(replay("trip.json"))                          # in the test suite
    assert "Paris" in rt.exec("Plan a weekend in Paris.", tools=[get_weather])

A request is matched on model, system prompt, messages (tool call ids
renumbered in order of appearance, images by SHA-256), tool specs,
``tool_choice``, ``parallel_tool_calls``, ``response_format`` and the sampling
options (``temperature``, ``max_tokens``, ``seed``) that were set. Identical
requests get their recorded replies in order, the last one repeating. Tools
must behave the same when replayed (their results are part of the next
request); a request that was never recorded raises ``ReplayMissError`` saying
where it first differs from the closest recorded one.

The normalized form lives in ``_normalize``, the file format in ``_recording_file``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from openprogram.messages import AssistantMessage
from openprogram.providers._wire import message_events
from openprogram.providers.base import (
    Provider,
    ProviderEvent,
    ProviderRequest,
    RequestSent,
    ResponseDone,
)
from openprogram.testing._normalize import (
    closest_difference,
    normalize_request,
    request_key,
)
from openprogram.testing._recording_file import (
    FORMAT,
    VERSION,
    load,
    message_from_json,
    message_to_json,
    write_atomically,
)

__all__ = [
    "RecordingProvider",
    "ReplayMissError",
    "ReplayProvider",
    "record",
    "replay",
]


class ReplayMissError(AssertionError):
    """A replayed run made a request that was not recorded (the program changed)."""


def record(provider: Provider, path: str | os.PathLike[str]) -> RecordingProvider:
    """Wrap ``provider`` so every completed model turn is saved to ``path`` (overwritten)."""
    return RecordingProvider(provider, path)


def replay(path: str | os.PathLike[str]) -> ReplayProvider:
    """A provider answering from the turns recorded in ``path``, offline."""
    return ReplayProvider(path)


class RecordingProvider:
    """A provider wrapper that saves each request and its final reply (see module docs).

    Args:
        provider: The provider that really answers.
        path: The JSON file to write; rewritten after every turn, so a crash keeps
            the turns so far.
    """

    def __init__(self, provider: Provider, path: str | os.PathLike[str]) -> None:
        self._provider = provider
        self._path = Path(path)
        self._lock = threading.Lock()
        self._turns: list[dict[str, Any]] = []

    @property
    def name(self) -> str:
        """The wrapped provider's id."""
        return self._provider.name

    @property
    def model(self) -> str | None:
        """The wrapped provider's default model."""
        return self._provider.model

    @property
    def native_structured_output(self) -> bool:
        """As the wrapped provider."""
        return self._provider.native_structured_output

    @property
    def path(self) -> Path:
        """Where the recording is written."""
        return self._path

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """Pass the wrapped provider's events through, saving the final reply."""
        async for event in self._provider.stream(request):
            if isinstance(event, ResponseDone):
                self._save(request, event.message)
            yield event

    async def aclose(self) -> None:
        """Close the wrapped provider, if it can be closed."""
        close = getattr(self._provider, "aclose", None)
        if close is not None:
            await close()

    async def __aenter__(self) -> RecordingProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _save(self, request: ProviderRequest, message: AssistantMessage) -> None:
        normalized = normalize_request(request)
        turn = {
            "key": request_key(normalized),
            "request": normalized,
            "response": message_to_json(message),
        }
        with self._lock:  # nested sync execs record from worker threads
            self._turns.append(turn)
            document = {
                "format": FORMAT,
                "version": VERSION,
                "provider": self._provider.name,
                "model": self._provider.model,
                "native_structured_output": self._provider.native_structured_output,
                "turns": self._turns,
            }
            write_atomically(self._path, document)


class ReplayProvider:
    """Answers requests from a recording, offline (see module docs).

    Attributes:
        requests: Every request received, in order.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = Path(path)
        document = load(self._path)
        self._name = str(document.get("provider") or "replay")
        self._model = document.get("model")
        self._native = bool(document.get("native_structured_output", True))
        self._turns: list[dict[str, Any]] = list(document["turns"])
        self._by_key: dict[str, list[dict[str, Any]]] = {}
        for turn in self._turns:
            self._by_key.setdefault(turn["key"], []).append(turn)
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()
        self.requests: list[ProviderRequest] = []

    @property
    def name(self) -> str:
        """The recorded provider's id."""
        return self._name

    @property
    def model(self) -> str | None:
        """The recorded provider's default model."""
        return self._model if isinstance(self._model, str) else None

    @property
    def native_structured_output(self) -> bool:
        """As the recorded provider declared."""
        return self._native

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """Stream the recorded reply for ``request``.

        Raises:
            ReplayMissError: No recorded turn has this normalized request.
        """
        normalized = normalize_request(request)
        with self._lock:
            self.requests.append(request)
        message = self._next(normalized)
        yield RequestSent(attempt=1, prompt_size_bytes=len(json.dumps(normalized)))
        for event in message_events(message):
            yield event
        yield ResponseDone(message)

    async def aclose(self) -> None:
        """Nothing to close (offline); present so it can stand in for a real provider."""

    async def __aenter__(self) -> ReplayProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _next(self, normalized: dict[str, Any]) -> AssistantMessage:
        key = request_key(normalized)
        with self._lock:
            turns = self._by_key.get(key)
            if not turns:
                raise ReplayMissError(self._miss(normalized))
            index = self._served.get(key, 0)
            self._served[key] = index + 1
        return message_from_json(turns[min(index, len(turns) - 1)]["response"])

    def _miss(self, normalized: dict[str, Any]) -> str:
        head = (
            f"{self._path}: no recorded model turn matches this request "
            f"(model {normalized['model']!r}, {len(normalized['messages'])} messages)"
        )
        if not self._turns:
            return f"{head}; the recording is empty"
        where, recorded, got = closest_difference(normalized, [t["request"] for t in self._turns])
        return (
            f"{head}. The closest recorded request differs at {where}: recorded "
            f"{_short(recorded)}, got {_short(got)}. If the program changed on purpose, "
            "record it again with openprogram.testing.record(provider, path)"
        )


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 120 else f"{text[:117]}..."
