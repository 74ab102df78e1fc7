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
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from openprogram.durable import normal_message
from openprogram.messages import (
    AssistantContent,
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from openprogram.providers._wire import message_events
from openprogram.providers.base import (
    Provider,
    ProviderEvent,
    ProviderRequest,
    RequestSent,
    ResponseDone,
)

__all__ = [
    "RecordingProvider",
    "ReplayMissError",
    "ReplayProvider",
    "normalize_request",
    "record",
    "replay",
]

_FORMAT = "openprogram.recording"
_VERSION = 1


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
            "key": _key(normalized),
            "request": normalized,
            "response": message_to_json(message),
        }
        with self._lock:  # nested sync execs record from worker threads
            self._turns.append(turn)
            document = {
                "format": _FORMAT,
                "version": _VERSION,
                "provider": self._provider.name,
                "model": self._provider.model,
                "native_structured_output": self._provider.native_structured_output,
                "turns": self._turns,
            }
            _write_atomically(self._path, document)


class ReplayProvider:
    """Answers requests from a recording, offline (see module docs).

    Attributes:
        requests: Every request received, in order.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = Path(path)
        document = _load(self._path)
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
        key = _key(normalized)
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
        scored = [(_common_prefix(normalized, t["request"]), t) for t in self._turns]
        _, closest = max(scored, key=lambda pair: pair[0])
        where, recorded, got = _difference(closest["request"], normalized)
        return (
            f"{head}. The closest recorded request differs at {where}: recorded "
            f"{_short(recorded)}, got {_short(got)}. If the program changed on purpose, "
            "record it again with openprogram.testing.record(provider, path)"
        )


# -- normalization --------------------------------------------------------------------------


def normalize_request(request: ProviderRequest) -> dict[str, Any]:
    """The provider-neutral, id-independent form of a request that recordings are keyed by."""
    ids: dict[str, str] = {}

    def call_id(raw: str) -> str:
        return ids.setdefault(raw, f"call_{len(ids) + 1}")

    fmt = request.response_format
    return {
        "model": request.model,
        "system": request.system,
        "messages": [normal_message(m, call_id) for m in request.messages],
        "tools": [
            {
                "name": t.get("name"),
                "description": t.get("description"),
                "parameters": t.get("parameters"),
            }
            for t in request.tools
        ],
        "tool_choice": request.tool_choice
        if isinstance(request.tool_choice, str)
        else dict(request.tool_choice),
        "parallel_tool_calls": request.parallel_tool_calls,
        "response_format": None
        if fmt is None
        else {"name": fmt.name, "schema": dict(fmt.schema), "strict": fmt.strict},
        # Sampling options only when set, so recordings made before they existed still match.
        **{
            name: getattr(request, name)
            for name in ("temperature", "max_tokens", "seed")
            if getattr(request, name) is not None
        },
    }


def _key(normalized: Mapping[str, Any]) -> str:
    canonical = json.dumps(normalized, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


# -- messages as JSON -----------------------------------------------------------------------


def message_to_json(message: AssistantMessage) -> dict[str, Any]:
    """An ``AssistantMessage`` as plain JSON (provider data kept for faithful replay)."""
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolCall):
            item: dict[str, Any] = {
                "type": "tool_call",
                "id": block.id,
                "name": block.name,
                "arguments": dict(block.arguments),
            }
            if block.arguments_error is not None:
                item["arguments_error"] = block.arguments_error
        else:
            kind = "thinking" if isinstance(block, ThinkingContent) else "text"
            item = {"type": kind, "text": block.text}
        if block.provider_meta:
            item["provider_meta"] = dict(block.provider_meta)
        blocks.append(item)
    usage = message.usage
    return {
        "content": blocks,
        "stop_reason": message.stop_reason,
        "error": message.error,
        "model": message.model,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cached_tokens": usage.cached_tokens,
        },
    }


def message_from_json(data: Mapping[str, Any]) -> AssistantMessage:
    """The inverse of ``message_to_json``."""
    blocks: list[AssistantContent] = []
    for item in data.get("content") or []:
        meta = item.get("provider_meta")
        if item["type"] == "tool_call":
            blocks.append(
                ToolCall(
                    item["id"],
                    item["name"],
                    item.get("arguments") or {},
                    item.get("arguments_error"),
                    provider_meta=meta,
                )
            )
        elif item["type"] == "thinking":
            blocks.append(ThinkingContent(item.get("text") or "", provider_meta=meta))
        else:
            blocks.append(TextContent(item.get("text") or "", provider_meta=meta))
    return AssistantMessage(
        tuple(blocks),
        stop_reason=data.get("stop_reason") or "stop",
        usage=Usage(**(data.get("usage") or {})),
        error=data.get("error"),
        model=data.get("model"),
    )


# -- files and diffs ------------------------------------------------------------------------


def _write_atomically(path: Path, document: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(document, out, ensure_ascii=False, indent=1, default=str)
            out.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _load(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(
            f"no recording at {path}: make one with openprogram.testing.record(provider, path)"
        ) from None
    if not isinstance(document, dict) or document.get("format") != _FORMAT:
        raise ValueError(f'{path} is not an openprogram recording (no "format": {_FORMAT!r})')
    if document.get("version") != _VERSION:
        raise ValueError(
            f"{path} has recording version {document.get('version')!r}; "
            f"this openprogram reads version {_VERSION}: record it again"
        )
    return document


def _common_prefix(a: Any, b: Any) -> int:
    """How many leading messages two normalized requests share (for the closest match)."""
    same = 0
    for left, right in zip(a["messages"], b["messages"], strict=False):
        if left != right:
            break
        same += 1
    return same * 2 + int(a["tools"] == b["tools"]) + int(a["system"] == b["system"])


def _difference(recorded: Any, got: Any, where: str = "request") -> tuple[str, Any, Any]:
    if isinstance(recorded, dict) and isinstance(got, dict):
        for key in [*recorded, *(k for k in got if k not in recorded)]:
            if recorded.get(key) != got.get(key):
                return _difference(recorded.get(key), got.get(key), f"{where}.{key}")
    if isinstance(recorded, list) and isinstance(got, list):
        for index, (left, right) in enumerate(zip(recorded, got, strict=False)):
            if left != right:
                return _difference(left, right, f"{where}[{index}]")
        if len(recorded) != len(got):
            return f"{where} (length)", len(recorded), len(got)
    return where, recorded, got


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 120 else f"{text[:117]}..."
