"""The three ways a BFCL question reaches the model.

- ``openprogram``: the framework path. A fresh ``Runtime(provider=LocalProvider(...))``
  per question runs ``exec(question, tools=[{"spec": ..., "execute": ...}],
  max_iterations=1)``: one model call, with everything the framework does
  around it (system prompt, tool specs on the wire, streaming, the local
  provider's request rewriting and its re-ask when llama.cpp cannot parse
  the reply). The calls are read from ``runtime.last_run.messages`` (the
  model's reply), so what the tool bodies do does not matter: they only
  return ``"ok"``.
- ``raw_builtin`` / ``raw_ours``: one plain Chat Completions request over
  HTTP (``httpx``, not streamed) to a llama.cpp server, with the same tool
  specs and the BFCL messages as they are.

Every client uses the same ``temperature`` (0: greedy) and ``max_tokens``;
openprogram gets them as ``exec(temperature=..., max_tokens=...)`` where this
checkout's ``exec`` has those options, else through ``LocalProvider(extra_body=...)``.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from bfcl_data import Question
from bfcl_schema import tool_spec

__all__ = ["Client", "OpenProgramClient", "Outcome", "RawClient"]


@dataclass(slots=True)
class Outcome:
    """What one question got: the calls made (name, arguments), the text, or an error."""

    calls: list[tuple[str, Any]] = field(default_factory=list)
    text: str = ""
    error: str | None = None
    seconds: float = 0.0


class Client(Protocol):
    name: str

    def ask(self, question: Question) -> Outcome: ...


def _noop(args: dict[str, Any]) -> str:
    return "ok"


class OpenProgramClient:
    """``Runtime.exec`` with ``LocalProvider`` (the embedded server, or ``base_url``)."""

    name = "openprogram"

    def __init__(
        self,
        *,
        base_url: str | None,
        temperature: float,
        max_tokens: int,
        model: str | None = None,
    ) -> None:
        from openprogram import Runtime
        from openprogram.providers.local import LocalProvider

        sampling = {"temperature": temperature, "max_tokens": max_tokens}
        # The neutral sampling options of exec (docs/providers.md) when this checkout has
        # them; before that, the only way is the provider's extra_body.
        native = {"temperature", "max_tokens"} <= inspect.signature(Runtime.exec).parameters.keys()
        self.sampling_via = "exec" if native else "extra_body"
        self._exec_options: dict[str, Any] = sampling if native else {}
        self._provider = LocalProvider(
            model, base_url=base_url, extra_body=None if native else sampling
        )

    def ask(self, question: Question) -> Outcome:
        from openprogram import Runtime
        from openprogram.exceptions import OpenProgramError
        from openprogram.messages import AssistantMessage, ToolCall

        system = "\n\n".join(m["content"] for m in question.messages if m["role"] == "system")
        user = "\n\n".join(m["content"] for m in question.messages if m["role"] == "user")
        tools = [{"spec": tool_spec(f), "execute": _noop} for f in question.functions]
        runtime = Runtime(provider=self._provider, system=system or None)
        start = time.perf_counter()
        try:
            runtime.exec(
                user,
                tools=tools,
                max_iterations=1,
                on_max_iterations="return",
                **self._exec_options,
            )
        except OpenProgramError as exc:  # LLMError and kin: counted, scored wrong
            return Outcome(
                error=f"{type(exc).__name__}: {exc}"[:500], seconds=time.perf_counter() - start
            )
        seconds = time.perf_counter() - start
        run = runtime.last_run
        replies = [m for m in (run.messages if run else ()) if isinstance(m, AssistantMessage)]
        if not replies:
            return Outcome(error="no model reply recorded", seconds=seconds)
        first = replies[0]
        calls = [(b.name, dict(b.arguments)) for b in first.content if isinstance(b, ToolCall)]
        text = "".join(getattr(b, "text", "") for b in first.content)
        return Outcome(calls=calls, text=text, seconds=seconds)


class RawClient:
    """One non-streamed Chat Completions request per question, over plain HTTP."""

    def __init__(
        self,
        name: str,
        *,
        base_url: str,
        temperature: float,
        max_tokens: int,
        cache_prompt: bool,
        model: str = "qwen2.5-coder-0.5b",
    ) -> None:
        self.name = name
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._http = httpx.Client(timeout=httpx.Timeout(600.0, connect=10.0))
        self._body = {
            "model": model,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "tool_choice": "auto",
            "stream": False,
            "cache_prompt": cache_prompt,
        }

    def close(self) -> None:
        self._http.close()

    def ask(self, question: Question) -> Outcome:
        tools = [{"type": "function", "function": tool_spec(f)} for f in question.functions]
        body = {**self._body, "messages": question.messages, "tools": tools}
        start = time.perf_counter()
        try:
            response = self._http.post(self._url, json=body)
        except httpx.HTTPError as exc:  # refused, reset, timed out: counted, scored wrong
            seconds = time.perf_counter() - start
            return Outcome(error=f"{type(exc).__name__}: {exc}", seconds=seconds)
        seconds = time.perf_counter() - start
        if response.status_code != 200:
            return Outcome(
                error=f"HTTP {response.status_code}: {response.text[:300]}", seconds=seconds
            )
        message = response.json()["choices"][0]["message"]
        calls = [
            (c["function"]["name"], c["function"].get("arguments") or {})
            for c in message.get("tool_calls") or []
        ]
        return Outcome(calls=calls, text=message.get("content") or "", seconds=seconds)
