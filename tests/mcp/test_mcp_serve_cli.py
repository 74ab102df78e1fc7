"""``python -m openprogram mcp serve`` in a real process, answered by real MCP clients.

Over stdio the client starts the server the way an MCP host's configuration
does (a command line); over HTTP the server runs on a free 127.0.0.1 port.
The clients: the SDK's own (``mcp.Client``, in both protocol eras) and
openprogram's (``register_server``), whose tools are then called like any.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from _mcp_helpers import run
from mcp import Client, StdioServerParameters, types

from openprogram import Runtime, agentic_function
from openprogram.cli import main
from openprogram.mcp import register_server
from openprogram.registry import Registry

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ENV = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}
SERVE = [
    sys.executable,
    "-m",
    "openprogram",
    "mcp",
    "serve",
    "--module",
    "_served_tools",
    "--deny",
    "shutdown",
    "--model",
    "_served_tools:scripted_model",
]


async def approve(ctx: Any, params: types.ElicitRequestFormParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={})


async def round_trip(client: Client) -> dict[str, Any]:
    """List, then call each kind of tool once."""
    listed = [tool.name for tool in (await client.list_tools()).tools]
    answers = {}
    for name, arguments in (
        ("add", {"a": 20, "b": 22}),
        ("delete_file", {"path": "/tmp/old.log"}),
        ("summarize", {"text": "a long text"}),
        ("shutdown", {}),
    ):
        result = await client.call_tool(name, arguments)
        answers[name] = (result.content[0].text, result.is_error)
    return {"listed": listed, "answers": answers, "version": client.protocol_version}


EXPECTED = {
    "add": ("42", False),
    "delete_file": ("deleted /tmp/old.log", False),
    "summarize": ("A short summary.", False),
}


@pytest.mark.parametrize(("mode", "era"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_stdio_server_answers_the_sdk_client(
    mode: str, era: str, caplog: pytest.LogCaptureFixture
) -> None:
    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], env=ENV, cwd=str(HERE))

    async def main_() -> dict[str, Any]:
        async with Client(params, mode=mode, elicitation_callback=approve) as client:
            return await round_trip(client)

    seen = anyio.run(main_)
    # The module and the add tool print: none of it reached the protocol stream.
    assert not [r.getMessage() for r in caplog.records if "JSONRPC" in r.getMessage()]
    assert seen["version"] == era
    assert seen["listed"] == ["add", "delete_file", "summarize"]  # shutdown is denied
    answers = seen["answers"]
    assert {name: answers[name] for name in EXPECTED} == EXPECTED
    text, is_error = answers["shutdown"]
    assert is_error
    assert "not available" in text


def test_stdio_server_answers_openprogram_s_own_client(registry: Registry) -> None:
    command = [*SERVE, "--source", "work"]
    with register_server(registry, "op", command=command, env=ENV, cwd=HERE) as served:
        # openprogram's client declares no elicitation: the approval tool is not listed
        assert registry.names() == ["op_add", "op_summarize"]
        assert run(registry, "op_add", a=1, b=2).content == "3"
        assert run(registry, "op_summarize", text="x").content == "A short summary."
    assert served.closed


@pytest.fixture
def http_url() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``mcp serve --http 0`` in a subprocess; its URL, read from the line it prints."""
    process = subprocess.Popen(
        [*SERVE, "--http", "0"],
        cwd=HERE,
        env={**os.environ, **ENV},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        found = re.search(r"listening on (http://\S+)", line)
        if found:
            break
    else:
        process.wait(10)
        pytest.fail(f"the server did not start: {''.join(lines)}")
    yield found.group(1), process
    if process.poll() is None:
        process.kill()
        process.wait(10)
    process.stderr.close()


def test_http_server_answers_both_clients_then_stops_on_sigterm(
    http_url: tuple[str, subprocess.Popen[str]], registry: Registry
) -> None:
    url, process = http_url
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url)
    for mode in ("auto", "legacy"):

        async def main_(mode: str = mode) -> dict[str, Any]:
            async with Client(url, mode=mode, elicitation_callback=approve) as client:
                return await round_trip(client)

        seen = anyio.run(main_)
        assert seen["listed"] == ["add", "delete_file", "summarize"]
        assert {name: seen["answers"][name] for name in EXPECTED} == EXPECTED

    with register_server(registry, "web", url=url):
        assert registry.names() == ["web_add", "web_summarize"]
        assert run(registry, "web_add", a=2, b=2).content == "4"
    process.send_signal(signal.SIGTERM)
    process.wait(20)  # stops within uvicorn's grace for open streams


def test_http_options_without_http_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "serve", "--module", "_served_tools", "--host", "0.0.0.0"]) == 2
    assert "--host and --path apply to --http PORT" in capsys.readouterr().err


def test_agentic_functions_without_any_model_are_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENPROGRAM_MODEL", raising=False)
    monkeypatch.setattr("openprogram.cli._model.default_model_string", lambda: None)
    monkeypatch.chdir(HERE)
    assert main(["mcp", "serve", "--registry", "test_mcp_serve_cli:AGENTIC"]) == 2
    err = capsys.readouterr().err
    assert "the agentic functions summarize run their bodies on a model" in err
    assert "--model" in err


AGENTIC = Registry()
"""A registry with one agentic function, for the test above (``--registry``)."""


@agentic_function(registry=AGENTIC)
def summarize(text: str, runtime: Runtime) -> str:
    """Summarize a text."""
    return runtime.exec(f"Summarize: {text}", tools=[])
