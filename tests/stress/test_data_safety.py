"""What must never leak: keys, payloads in events, and unbounded tool output.

- API keys and ``Authorization`` values never appear in exceptions (with their
  whole chain), reprs, logs or events, for every provider, whether the key
  came from ``api_key=`` or the environment, even when the server echoes it.
- Events carry no argument, result, error or text values unless
  ``Runtime(trace_payloads=True)`` (the data policy of docs/design.md).
- A 100 MB tool result costs at most ``max_result_chars`` in the next request,
  and at most one extra copy of itself in memory, none of it kept afterwards.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import threading
import traceback
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from providers import test_errors
from providers._server import Reply, WireServer

from openprogram import LLMError, Runtime, ToolContext, ToolError, _threads, function
from openprogram.providers import (
    AnthropicProvider,
    BedrockProvider,
    GeminiProvider,
    OpenAIProvider,
    OpenAIResponsesProvider,
)
from openprogram.testing import ScriptedProvider, call, text

pytestmark = pytest.mark.model_requests  # loopback wire servers: real requests on purpose

KEY = "sk-SECRET-0123456789abcdefXYZ"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG+SECRETbPxRfiCYEXAMPLEKEY"
AWS_TOKEN = "IQoJb3JpZ2luX2VjEXAMPLE-SESSION-TOKEN-SECRET"

_PROVIDER_ENV = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "OPENPROGRAM_MODEL",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
)

PROVIDERS: dict[str, tuple[str, Callable[[str, str | None], Any]]] = {
    "openai": (
        "OPENAI_API_KEY",
        lambda url, key: OpenAIProvider(
            base_url=f"{url}/v1", api_key=key, model="m", backoff_base_s=0.001
        ),
    ),
    "openai-responses": (
        "OPENAI_API_KEY",
        lambda url, key: OpenAIResponsesProvider(
            base_url=f"{url}/v1", api_key=key, model="m", backoff_base_s=0.001
        ),
    ),
    "anthropic": (
        "ANTHROPIC_API_KEY",
        lambda url, key: AnthropicProvider(
            base_url=url, api_key=key, model="m", backoff_base_s=0.001
        ),
    ),
    "gemini": (
        "GEMINI_API_KEY",
        lambda url, key: GeminiProvider(base_url=url, api_key=key, model="m", backoff_base_s=0.001),
    ),
    "bedrock": (
        "AWS_BEARER_TOKEN_BEDROCK",
        lambda url, key: BedrockProvider(
            endpoint_url=url, api_key=key, model="m", region="us-east-1", backoff_base_s=0.001
        ),
    ),
}


def _capture_logs(caplog: pytest.LogCaptureFixture) -> None:
    """Everything openprogram logs, and everything at INFO and above from anyone.

    httpcore's own DEBUG trace prints raw response headers, so a server that
    echoes a key in a header shows up there; that trace is off unless a program
    turns it on, and is outside what openprogram emits (see docs/reliability.md).
    """
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="openprogram")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in _PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _echoing(kind: str, status: int, *secrets: str) -> Reply:
    """An error reply that echoes the secrets in its body and headers, as careless servers do."""
    reply = test_errors._error(kind, status, f"bad credentials {' '.join(secrets)} (echoed)")
    reply.headers = {"x-echo": secrets[0], "www-authenticate": f"Bearer {secrets[0]}"}
    return reply


def _everything_visible(
    err: BaseException | None,
    *,
    rt: Runtime,
    provider: Any,
    events: list[Any],
    streamed: list[Any],
    logs: str,
) -> str:
    parts = [repr(rt), repr(provider), logs]
    if err is not None:
        parts += [str(err), repr(err), "".join(traceback.format_exception(err))]
        parts += [str(getattr(err, "provider_message", "")), repr(err.args)]
    for event in events:
        parts += [repr(event), json.dumps(event.to_dict(), default=repr)]
    parts += [repr(item) for item in streamed]
    return "\n".join(parts)


@pytest.mark.parametrize("source", ["argument", "environment"])
@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_keys_never_appear_in_errors_reprs_logs_or_events(
    kind: str, source: str, clean_env: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _capture_logs(caplog)
    env_var, make = PROVIDERS[kind]
    if source == "environment":
        clean_env.setenv(env_var, KEY)
    events: list[Any] = []
    streamed: list[Any] = []
    with WireServer() as wire:
        provider = make(wire.url, KEY if source == "argument" else None)
        wire.push(_echoing(kind, 500, KEY), _echoing(kind, 401, KEY))
        rt = Runtime(provider, observers=[events.append], on_stream=streamed.append, max_retries=1)
        with pytest.raises(LLMError) as caught:
            rt.exec("hi", tools=[])
        wire.push(test_errors.CASES[kind][1]())
        assert rt.exec("hi", tools=[]) == "ok"
        sent = [s.headers for s in wire.requests]
    assert caught.value.reason == "auth"
    assert caught.value.attempts == 2
    assert any(KEY in " ".join(h.values()) for h in sent)  # the key did go out...
    visible = _everything_visible(
        caught.value, rt=rt, provider=provider, events=events, streamed=streamed, logs=caplog.text
    )
    assert KEY not in visible  # ...and shows up nowhere else
    assert "***" in str(caught.value)  # the echo was scrubbed, not dropped


def test_aws_secrets_never_appear_even_when_echoed(
    clean_env: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _capture_logs(caplog)
    clean_env.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    clean_env.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    clean_env.setenv("AWS_SESSION_TOKEN", AWS_TOKEN)
    events: list[Any] = []
    with WireServer() as wire:
        provider = BedrockProvider(endpoint_url=wire.url, model="m", region="us-east-1")
        wire.push(_echoing("bedrock", 403, AWS_SECRET, AWS_TOKEN))
        rt = Runtime(provider, observers=[events.append])
        with pytest.raises(LLMError) as caught:
            rt.exec("hi", tools=[])
        authorization = wire.requests[0].headers["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256")
    visible = _everything_visible(
        caught.value, rt=rt, provider=provider, events=events, streamed=[], logs=caplog.text
    )
    for secret in (AWS_SECRET, AWS_TOKEN, authorization):
        assert secret not in visible


# -- the data policy -----------------------------------------------------------------------

_SEARCH_PARAMS = {
    "type": "object",
    "properties": {"q": {"type": "string", "maxLength": 3}, "n": {"type": "integer", "minimum": 0}},
    "additionalProperties": False,
}


def _run_with_canaries(trace_payloads: bool, caplog: pytest.LogCaptureFixture) -> list[str]:
    """One run that puts a distinct canary through every place a value can travel."""
    rt: Runtime

    @function(register_globally=False)
    def echo(value: str, ctx: ToolContext) -> str:
        """Echo a value, reporting progress."""
        ctx.report("CANARY-progress")
        rt.steer("CANARY-steer")
        return value.replace("arg", "result")

    @function(register_globally=False)
    def broken(value: str) -> str:
        """Fail."""
        raise ValueError(f"CANARY-exception {value}")

    @function(register_globally=False)
    def refusing() -> str:
        """Refuse on purpose."""
        raise ToolError("CANARY-toolerror")

    search = {"spec": {"name": "search", "parameters": _SEARCH_PARAMS}, "execute": lambda a: "x"}

    @function(register_globally=False, requires_approval=True)
    def guarded() -> str:
        """Needs approval."""
        return "never"

    script = [
        [text("CANARY-preamble"), call("echo", value="CANARY-arg")],
        [
            call("broken", value="CANARY-badarg"),
            call("refusing"),
            call("guarded"),
            call("search", q="CANARY-toolong", n=-987654321),
        ],
        "CANARY-answer",
        "CANARY-second-answer",
    ]
    events: list[Any] = []
    rt = Runtime(
        ScriptedProvider(script),
        observers=[events.append],
        trace_payloads=trace_payloads,
        system="CANARY-system",
        approval=lambda c: "CANARY-denied" if c.name == "guarded" else None,
    )
    rt.follow_up("CANARY-followup")
    rt.exec("CANARY-user", tools=[echo, broken, refusing, guarded, search])
    texts = [json.dumps(e.to_dict(), default=repr) for e in events] + [repr(e) for e in events]
    return [*texts, caplog.text]


CANARIES = [
    "CANARY-user",
    "CANARY-arg",
    "CANARY-result",
    "CANARY-progress",
    "CANARY-badarg",
    "CANARY-exception",
    "CANARY-toolerror",
    "CANARY-denied",
    "CANARY-toolong",
    "987654321",
    "CANARY-answer",
    "CANARY-second-answer",
    "CANARY-steer",
    "CANARY-followup",
    "CANARY-preamble",
    "CANARY-system",
]


def test_events_carry_no_values_without_trace_payloads(caplog: pytest.LogCaptureFixture) -> None:
    _capture_logs(caplog)
    seen = "\n".join(_run_with_canaries(False, caplog))
    leaked = [c for c in CANARIES if c in seen]
    assert leaked == []


def test_trace_payloads_puts_the_values_in(caplog: pytest.LogCaptureFixture) -> None:
    # The control: the same scan finds what the run carries once payloads are on.
    seen = "\n".join(_run_with_canaries(True, caplog))
    carried = [
        "CANARY-user",
        "CANARY-arg",
        "CANARY-result",
        "CANARY-progress",
        "CANARY-exception",
        "CANARY-toolerror",
        "CANARY-denied",
        "CANARY-toolong",
        "987654321",
        "CANARY-answer",
        "CANARY-second-answer",
    ]
    assert [c for c in carried if c not in seen] == []


# -- truncation ------------------------------------------------------------------------------

MB = 1 << 20


def _huge_text() -> str:
    """Return 100 MB of text."""
    return "A" * (100 * MB)


def _huge_value() -> list[str]:
    """Return a small value whose JSON is 100 MB."""
    return ["B" * 1023] * (100 * 1024)


def _measure(body: Callable[[], Any], max_result_chars: int) -> tuple[int, int, str]:
    """(peak bytes above baseline, bytes still held after the run, text fed back)."""
    tool = function(body, register_globally=False, max_result_chars=max_result_chars)
    provider = ScriptedProvider([call(tool.name), "done"])
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        Runtime(provider).exec("go", tools=[tool])
        peak = tracemalloc.get_traced_memory()[1] - base
        fed_back = str(provider.requests[1].messages[-1].content)  # type: ignore[union-attr]
        del provider
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    return peak, held, fed_back


@pytest.mark.parametrize("max_result_chars", [30_000, 500])
@pytest.mark.parametrize("body", [_huge_text, _huge_value], ids=["text", "json"])
def test_a_100_mb_result_costs_max_result_chars_and_bounded_memory(
    body: Callable[[], Any], max_result_chars: int
) -> None:
    _measure(body, max_result_chars)  # warm-up: schemas and caches are built once
    peak, held, fed_back = _measure(body, max_result_chars)
    assert len(fed_back) <= max_result_chars
    assert "truncated" in fed_back
    # The body's own 100 MB string, or the one JSON copy of a value (its items are shared,
    # so the value itself is small), plus small change: never a second full copy.
    assert peak < 108 * MB, f"peak {peak / MB:.0f} MB"
    assert held < 2 * MB, f"{held / MB:.1f} MB still held after the run"


def _twenty_mb_text() -> str:
    """Return 20 MB of text."""
    return "C" * (20 * MB)


def test_a_result_is_not_kept_alive_by_a_worker_thread_that_has_not_run_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The body's worker thread may not run again before the exec ends (a busy machine).

    Here it is held right after it handed the result over, as the OS may
    hold it; whatever it still references then must not include the result.
    (In full-suite runs, this is how a 100 MB result was still held.)
    """
    handed_over, release = threading.Event(), threading.Event()
    post = _threads._post  # the worker's hand-off: it wakes the loop with the result ready

    def then_descheduled(loop: asyncio.AbstractEventLoop, done: asyncio.Future[None]) -> None:
        post(loop, done)
        if threading.current_thread().name == "openprogram-tool":
            handed_over.set()
            release.wait(30)  # hang guard: released at the end of the test in any case

    monkeypatch.setattr(_threads, "_post", then_descheduled)
    try:
        _measure(_twenty_mb_text, 500)  # warm-up
        _, held, _ = _measure(_twenty_mb_text, 500)
        assert handed_over.is_set()
    finally:
        release.set()
    assert held < 2 * MB, f"{held / MB:.1f} MB still held after the run"
