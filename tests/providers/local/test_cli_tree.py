"""How the CLI's live tree shows the local provider's re-asks: quietly, as the routine they are.

The demo runs on a scripted llama.cpp server on 127.0.0.1, through the CLI's own
runner (``openprogram.cli._run_cmd.execute``, what ``openprogram demo`` calls).
A reply that repeats a call already made is asked again for an answer; that is
the demo's normal path on the embedded model, so the tree says "asked again"
and keeps "! provider error" for calls that really failed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openprogram.cli._demo import plan_trip
from openprogram.cli._run_cmd import execute
from openprogram.exceptions import LLMError

from .._server import Reply, WireServer
from ._llama import completion, provider

# model_requests: fake llama.cpp servers on 127.0.0.1, talked to on purpose (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]


def calls(name: str, **arguments: Any) -> Reply:
    return Reply(body=completion(json.dumps([{"name": name, "arguments": arguments}])))


def test_a_re_ask_is_a_quiet_asked_again_line(
    wire: WireServer, capsys: pytest.CaptureFixture[str]
) -> None:
    wire.push(
        calls("research_destination", city="Paris"),
        calls("get_weather", city="Paris"),
        calls("get_weather", city="Paris"),  # the repeat: asked again for an answer
        Reply(body=completion("Paris: sunny, 21 degrees celsius.")),
        Reply(body=completion("Walk along the Seine, then a picnic.")),
    )
    summary = execute(
        provider(wire),
        lambda rt: plan_trip("Paris", runtime=rt),
        as_json=False,
        trace_payloads=False,
    )
    assert summary["output"] == "Walk along the Seine, then a picnic."
    lines = capsys.readouterr().out.splitlines()
    (again,) = [line for line in lines if "asked again" in line]
    assert again.strip().startswith("↻ asked again: ")
    assert "it repeats calls already made" in again  # why, not only that it happened
    assert not any("provider error" in line or "!" in line for line in lines)
    # It sits in the inner exec, between the weather call and that exec's reply.
    weather = next(i for i, line in enumerate(lines) if "✓ get_weather done" in line)
    assert lines.index(again) > weather
    assert len(again) - len(again.lstrip()) == len(lines[weather]) - len(lines[weather].lstrip())


def test_a_call_that_fails_is_still_a_provider_error(
    wire: WireServer, capsys: pytest.CaptureFixture[str]
) -> None:
    down = {"error": {"message": "the model server is overloaded"}}
    wire.push(Reply(503, down), Reply(503, down))  # one retry, then the run fails
    with pytest.raises(LLMError, match="overloaded"):
        execute(
            provider(wire, max_retries=1),
            lambda rt: plan_trip("Paris", runtime=rt),
            as_json=False,
            trace_payloads=False,
        )
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    retried, failed = [line for line in lines if line.startswith(("↻", "!"))]
    assert retried.startswith("↻ asked again: ")
    assert "overloaded" in retried
    assert failed.startswith("! provider error (")
    assert "overloaded" in failed
