"""Measure the embedded local model: first-run cost, tool-call accuracy, latency, speed, RAM.

Usage::

    python scripts/probe_local.py                 # uses the normal cache dir
    python scripts/probe_local.py --cold          # joins the weights into a fresh temp cache
    python scripts/probe_local.py --json out.json

Goes through ``LocalProvider`` (non-streaming), so the numbers include the
provider's quirk handling (a forced tool sent as ``required``, the one re-ask
without tools when llama.cpp cannot parse the output under ``auto``).

Accuracy counts a prompt as right when the first call names the expected tool
and every expected argument matches (strings: case-insensitive substring;
numbers: equal). The prompts mix direct requests with indirect ones ("Do I
need an umbrella ...") that a 0.5B model often gets wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from openprogram.exceptions import LLMError
from openprogram.messages import AssistantMessage, ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest, ResponseDone, RetryScheduled, ToolSpec
from openprogram.providers.local import LOCAL_MODEL, LOCAL_MODELS, LocalProvider, ensure_server
from openprogram.providers.local._embedded import default_supervisor, ensure_weights


def _tool(name: str, description: str, props: dict[str, Any], required: list[str]) -> ToolSpec:
    schema = {"type": "object", "properties": props, "required": required}
    return {"name": name, "description": description, "parameters": schema}


TOOLS: tuple[ToolSpec, ...] = (
    _tool(
        "get_weather",
        "Current weather for a city.",
        {
            "city": {"type": "string", "description": 'City name, e.g. "Paris".'},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        ["city"],
    ),
    _tool(
        "add", "Add two integers.", {"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"]
    ),
    _tool(
        "convert_currency",
        "Convert an amount of money between currencies.",
        {
            "amount": {"type": "number"},
            "from_currency": {"type": "string", "description": "ISO code, e.g. USD"},
            "to_currency": {"type": "string", "description": "ISO code, e.g. EUR"},
        },
        ["amount", "from_currency", "to_currency"],
    ),
    _tool(
        "find_hotels",
        "Find hotels in a city.",
        {"city": {"type": "string"}, "max_price": {"type": "number"}},
        ["city"],
    ),
)

# (prompt, expected tool, expected arguments, direct?)
CASES: list[tuple[str, str, dict[str, Any], bool]] = [
    ("What's the weather in Paris?", "get_weather", {"city": "paris"}, True),
    ("Is it raining in London right now?", "get_weather", {"city": "london"}, True),
    ("How hot is it in Tokyo today, in fahrenheit?", "get_weather", {"city": "tokyo"}, False),
    ("Weather for Berlin please.", "get_weather", {"city": "berlin"}, True),
    ("Do I need an umbrella in Seattle today?", "get_weather", {"city": "seattle"}, False),
    ("What is 17 plus 25?", "add", {"a": 17, "b": 25}, True),
    ("Add 1234 and 4321.", "add", {"a": 1234, "b": 4321}, True),
    ("Compute 8 + 99.", "add", {"a": 8, "b": 99}, True),
    ("What's the sum of 300 and 45?", "add", {"a": 300, "b": 45}, True),
    ("Convert 100 USD to EUR.", "convert_currency", {"amount": 100, "from_currency": "usd"}, True),
    ("How many Japanese yen is 50 US dollars?", "convert_currency", {"amount": 50}, False),
    ("Change 20 GBP into USD.", "convert_currency", {"amount": 20, "to_currency": "usd"}, True),
    ("Find me a hotel in Rome.", "find_hotels", {"city": "rome"}, True),
    ("Hotels in Madrid under 120 per night?", "find_hotels", {"city": "madrid"}, True),
    ("I need somewhere to stay in Lisbon.", "find_hotels", {"city": "lisbon"}, False),
    ("Any cheap hotels in Prague below 80?", "find_hotels", {"city": "prague"}, True),
    ("What's the temperature in Sydney?", "get_weather", {"city": "sydney"}, True),
    ("Please add 7 and 5.", "add", {"a": 7, "b": 5}, True),
    ("Weather in New York in celsius.", "get_weather", {"city": "new york"}, True),
    ("Convert 75.5 EUR to CHF.", "convert_currency", {"amount": 75.5, "to_currency": "chf"}, True),
    ("Search hotels in Vienna.", "find_hotels", {"city": "vienna"}, True),
    ("Is it sunny in Cairo?", "get_weather", {"city": "cairo"}, True),
]
OFF_TOPIC = [
    "Tell me a joke about cats.",
    "Who wrote Hamlet?",
    "Write a haiku about autumn.",
    "Explain recursion in one sentence.",
    "Translate 'good morning' to French.",
    "Write a Python function that reverses a string.",
]


@dataclass
class Outcome:
    """One request's result."""

    seconds: float
    message: AssistantMessage | None
    fallback: bool = False
    error: str | None = None


@dataclass
class Report:
    """Everything measured, printable and JSON-serializable."""

    figures: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


async def ask(provider: LocalProvider, *messages: Any, tool_choice: Any = "auto") -> Outcome:
    history = tuple(UserMessage(m) if isinstance(m, str) else m for m in messages)
    request = ProviderRequest(
        model=None, system=None, messages=history, tools=TOOLS, tool_choice=tool_choice
    )
    started, fallback, message = time.monotonic(), False, None
    try:
        async for event in provider.stream(request):
            fallback = fallback or isinstance(event, RetryScheduled)
            if isinstance(event, ResponseDone):
                message = event.message
    except LLMError as err:
        return Outcome(time.monotonic() - started, None, fallback, str(err))
    return Outcome(time.monotonic() - started, message, fallback)


def judge(outcome: Outcome, tool: str, expected: dict[str, Any]) -> str | None:
    """``None`` when right, else why not."""
    if outcome.message is None:
        return f"error: {outcome.error}"
    calls = outcome.message.tool_calls
    if not calls:
        return f"no call, text {outcome.message.text[:60]!r}"
    call = calls[0]
    if call.name != tool:
        return f"called {call.name}({dict(call.arguments)})"
    for key, want in expected.items():
        got = call.arguments.get(key)
        if isinstance(want, str):
            if not isinstance(got, str) or want not in got.lower():
                return f"{key}={got!r}"
        elif not isinstance(got, int | float) or float(got) != float(want):
            return f"{key}={got!r}"
    return None


async def accuracy(provider: LocalProvider, report: Report) -> list[float]:
    latencies: list[float] = []
    for mode in ("auto", "required"):
        right = direct_right = fallbacks = 0
        for prompt, tool, expected, direct in CASES:
            outcome = await ask(provider, prompt, tool_choice=mode)
            latencies.append(outcome.seconds)
            fallbacks += outcome.fallback
            why = judge(outcome, tool, expected)
            if why is None:
                right += 1
                direct_right += direct
            else:
                report.failures.append(f"[{mode}] {prompt} -> {why}")
        direct_total = sum(1 for case in CASES if case[3])
        report.figures[f"accuracy_{mode}"] = f"{right}/{len(CASES)}"
        report.figures[f"accuracy_{mode}_direct"] = f"{direct_right}/{direct_total}"
        report.figures[f"fallbacks_{mode}"] = fallbacks
    return latencies


async def follow_ups(provider: LocalProvider, report: Report) -> None:
    """After a tool result, does the model answer in text using it?"""
    cases = [
        ("What's the weather in Paris?", "get_weather", {"city": "Paris"}, "Sunny, 21 C", "21"),
        ("What is 17 plus 25?", "add", {"a": 17, "b": 25}, "42", "42"),
        (
            "Find me a hotel in Rome.",
            "find_hotels",
            {"city": "Rome"},
            '["Hotel Artemide"]',
            "artemide",
        ),
        ("Convert 100 USD to EUR.", "convert_currency", {"amount": 100}, "92.3 EUR", "92"),
    ]
    right = 0
    for prompt, tool, args, result, expect in cases:
        first = await ask(provider, prompt, tool_choice={"type": "function", "name": tool})
        if first.message is None or not first.message.tool_calls:
            report.failures.append(f"[follow-up] {prompt} -> no forced call")
            continue
        call = first.message.tool_calls[0]
        answer = ToolResultMessage(call_id=call.id, tool_name=call.name, content=result)
        outcome = await ask(provider, prompt, first.message, answer)
        text = outcome.message.text if outcome.message else ""
        if outcome.message and not outcome.message.tool_calls and expect in text.lower():
            right += 1
        else:
            report.failures.append(f"[follow-up] {prompt} args={args} -> {text[:60]!r}")
    report.figures["follow_up_text_answers"] = f"{right}/{len(cases)}"


async def off_topic(provider: LocalProvider, report: Report) -> None:
    counts = {"text": 0, "call": 0, "fallback": 0, "error": 0}
    for prompt in OFF_TOPIC:
        outcome = await ask(provider, prompt)
        if outcome.message is None:
            counts["error"] += 1
        elif outcome.message.tool_calls:
            counts["call"] += 1
        else:
            counts["text"] += 1
        counts["fallback"] += outcome.fallback
    report.figures["off_topic"] = {"prompts": len(OFF_TOPIC), **counts}


def speed(base_url: str) -> float:
    """Generation tokens per second on a plain text prompt, from llama.cpp's own timings."""
    body = {
        "messages": [{"role": "user", "content": "Write a 120-word story about a lighthouse."}],
        "max_tokens": 160,
    }
    data = httpx.post(f"{base_url}/chat/completions", json=body, timeout=600).json()
    return float(data.get("timings", {}).get("predicted_per_second", 0.0))


def child_rss_mib() -> float | None:
    pid = default_supervisor().pid
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    kib = int(status.split("VmRSS:")[1].split()[0])
    return round(kib / 1024, 1)


async def main_async() -> Report:
    report = Report()
    started = time.monotonic()
    weights = await asyncio.to_thread(ensure_weights, LOCAL_MODELS[LOCAL_MODEL])
    report.figures["weights_ready_s"] = round(time.monotonic() - started, 2)
    report.figures["weights"] = str(weights)
    started = time.monotonic()
    base_url = await asyncio.to_thread(ensure_server)
    report.figures["server_start_s"] = round(time.monotonic() - started, 2)
    report.figures["threads"] = os.environ.get("OPENPROGRAM_LOCAL_THREADS", "default")
    async with LocalProvider(stream=False, timeout=600) as provider:
        latencies = await accuracy(provider, report)
        await follow_ups(provider, report)
        await off_topic(provider, report)
    ordered = sorted(latencies)
    report.figures["latency_s"] = {
        "median": round(statistics.median(ordered), 2),
        "p90": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
        "max": round(ordered[-1], 2),
    }
    report.figures["generation_tok_per_s"] = round(speed(base_url), 1)
    report.figures["server_rss_mib"] = child_rss_mib()
    report.figures["load_average"] = os.getloadavg()
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="join the weights into a fresh cache")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as fresh:
        if args.cold:
            os.environ["OPENPROGRAM_CACHE_DIR"] = fresh
        report = asyncio.run(main_async())
        default_supervisor().stop()
    for key, value in report.figures.items():
        print(f"{key:>26}: {value}")
    if report.failures:
        print("\nmisses:")
        for line in report.failures:
            print(f"  {line}")
    if args.json:
        payload = {"figures": report.figures, "misses": report.failures}
        args.json.write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
