"""The command as users start it (``python -m openprogram``), and the live view's spinner."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from openprogram import AssistantMessage, Runtime, TextContent, Usage
from openprogram.cli._tree import TreeView
from openprogram.events import Event, ProviderRequestSent
from openprogram.providers import ProviderEvent, ProviderRequest, RequestSent, ResponseDone
from openprogram.testing import FunctionProvider

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def test_python_dash_m_runs_the_demo_and_prints_json() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OPENPROGRAM_MODEL", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "openprogram",
            "demo",
            "--json",
            "--model",
            "_cli_models:demo_model",
        ],
        cwd=HERE,  # the CLI imports --model targets from the current directory
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["model_calls"] == 4
    assert "Tuileries" in summary["result"]
    kinds = [json.loads(line)["kind"] for line in done.stderr.splitlines()]
    assert kinds[0] == "AgentInvoked"
    assert kinds[-1] == "AgentEnd"


def test_python_dash_m_usage_error_exits_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "openprogram", "run", "missing_colon"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "expected module:attribute" in done.stderr


class SlowProvider:
    """Like an HTTP provider: the request is sent, then the model takes a while to answer.

    (The shipped fakes compute their reply before reporting the request sent, so they
    never leave the spinner a moment to show.)
    """

    name = "slow"
    model = "slow-model"
    native_structured_output = False

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        yield RequestSent(attempt=1, prompt_size_bytes=10)
        await asyncio.sleep(0.35)  # long enough for a few 0.1 s spinner frames
        reply = AssistantMessage(content=(TextContent("done"),), usage=Usage(3, 1))
        yield ResponseDone(reply)


def test_the_spinner_shows_while_the_model_thinks() -> None:
    out = io.StringIO()
    view = TreeView(out, spinner=True)
    with view:
        Runtime(SlowProvider(), observers=[view]).exec("hi", toolset="none")
    text = out.getvalue()
    assert "model is thinking…" in text
    assert "\r\033[K" in text  # the spinner line is cleared before the next tree line
    assert text.rstrip().endswith("tokens")  # the final "■ done: ..." line


def test_no_spinner_when_not_a_terminal() -> None:
    out = io.StringIO()  # isatty() is False
    view = TreeView(out)
    with view:
        Runtime(FunctionProvider(lambda r: "done"), observers=[view]).exec("hi", toolset="none")
    assert "thinking" not in out.getvalue()
    assert "▶ exec" in out.getvalue()


class _Clock:
    """A monotonic clock the test moves by hand (the spinner and the loop both read it)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    @classmethod
    def installed(cls, monkeypatch: pytest.MonkeyPatch) -> _Clock:
        """A clock that the run loop and the tree view both read for the test's length."""
        import types

        import openprogram.cli._tree as tree_module
        import openprogram.runtime._loop as loop_module

        clock = cls()
        fake_time = types.SimpleNamespace(monotonic=clock.monotonic, time=time.time)
        monkeypatch.setattr(loop_module, "time", fake_time)
        monkeypatch.setattr(tree_module, "time", fake_time)
        return clock


class StartingProvider:
    """Like the local model on first use: seconds pass before the request goes out."""

    name = "starting"
    model = "starting-model"
    native_structured_output = False

    def __init__(self, clock: _Clock) -> None:
        self.clock = clock

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        self.clock.now += 4.4  # joining weights, starting the server
        yield RequestSent(attempt=1, prompt_size_bytes=10)
        self.clock.now += 1.0  # the model thinks for one (fake) second
        await asyncio.sleep(0.35)  # real time, for a few spinner frames
        reply = AssistantMessage(content=(TextContent("done"),), usage=Usage(3, 1))
        yield ResponseDone(reply)


def test_the_spinner_and_the_reply_line_measure_the_same_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = _Clock.installed(monkeypatch)
    out = io.StringIO()
    view = TreeView(out, spinner=True)
    with view:
        Runtime(StartingProvider(clock), observers=[view]).exec("hi", toolset="none")
    text = out.getvalue()
    shown = [float(x) for x in re.findall(r"model is thinking… +(\d+\.\d) s", text)]
    (replied,) = [float(x) for x in re.findall(r"model replied in (\d+\.\d) s", text)]
    assert shown  # the spinner ran
    assert replied == 1.0  # the server start before the request is not the model's time
    assert max(shown) <= replied


class ProbingProvider:
    """Like the local model with its call-share probe: a side request, then the reply's own."""

    name = "probing"
    model = "probing-model"
    native_structured_output = False

    def __init__(self, clock: _Clock, view_saw_probe: threading.Event) -> None:
        self.clock = clock
        self.view_saw_probe = view_saw_probe

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        yield RequestSent(attempt=1, prompt_size_bytes=10, side_request="call_share")
        # Observers run on a delivery thread: move the clock only once the view has the probe.
        await asyncio.to_thread(self.view_saw_probe.wait, 60)
        self.clock.now += 1.0  # the probe's one token
        yield RequestSent(attempt=1, prompt_size_bytes=10)
        self.clock.now += 1.0  # the reply
        await asyncio.sleep(0.35)  # real time, for a few spinner frames
        reply = AssistantMessage(content=(TextContent("done"),), usage=Usage(3, 1))
        yield ResponseDone(reply)


def test_a_side_request_and_the_reply_are_one_wait_for_the_spinner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = _Clock.installed(monkeypatch)
    saw_probe = threading.Event()

    def after_the_view(event: Event) -> None:  # observers are called in order
        if isinstance(event, ProviderRequestSent) and event.side_request is not None:
            saw_probe.set()

    out = io.StringIO()
    view = TreeView(out, spinner=True)
    with view:
        rt = Runtime(ProbingProvider(clock, saw_probe), observers=[view, after_the_view])
        rt.exec("hi", toolset="none")
    text = out.getvalue()
    shown = [float(x) for x in re.findall(r"model is thinking… +(\d+\.\d) s", text)]
    (replied,) = [float(x) for x in re.findall(r"model replied in (\d+\.\d) s", text)]
    assert replied == 2.0  # from the probe going out: the reply's latency covers it
    assert max(shown) == replied  # the spinner did not restart at the reply's request
