"""MCPToolServer answered by the SDK's own client, in process, in both protocol eras.

``mode="auto"`` negotiates the 2026-07-28 revision (approval questions travel
in an ``InputRequiredResult``); ``mode="legacy"`` the 2025-11-25 handshake
(an ``elicitation/create`` request during the call). The transports are
tested with real processes in ``test_mcp_serve_cli.py``.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from mcp import Client, types

from openprogram import Registry, Runtime, ToolContext, ToolError, agentic_function, function
from openprogram.events import Event, ToolCallCompleted, ToolCallStarted
from openprogram.exceptions import UserError
from openprogram.gates import Policy
from openprogram.mcp import MCP_SOURCE, MCPToolServer
from openprogram.mcp._consent import APPROVAL_KEY
from openprogram.testing import ScriptedProvider

MODES = ["auto", "legacy"]
RAN: list[str] = []


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    RAN.clear()


def tools() -> Registry:
    registry = Registry()

    @function(registry=registry, toolset="math")
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first.
            b: The second.
        """
        RAN.append("add")
        return a + b

    @function(registry=registry)
    def shutdown() -> str:
        """Shut the machine down."""
        RAN.append("shutdown")
        return "bye"

    @function(registry=registry, expose=False)
    def internal() -> str:
        """Python-only helper."""
        return "internal"

    @function(registry=registry, unsafe_in=MCP_SOURCE)
    def read_secrets() -> str:
        """Never over MCP."""
        return "secrets"

    @function(registry=registry, defer=True, toolset="math")
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    @function(registry=registry, requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file (pretend)."""
        RAN.append(f"delete {path}")
        return f"deleted {path}"

    @function(registry=registry)
    def refuse(reason: str) -> str:
        """Always refuses."""
        raise ToolError(f"refused: {reason}")

    return registry


class Talk:
    """One in-process client session; ``answer`` is what its user says to approval questions."""

    def __init__(self, server: MCPToolServer, mode: str, answer: str | None = None) -> None:
        self.server, self.mode, self.answer = server, mode, answer
        self.asked: list[str] = []

    def client(self) -> Client:
        callback = None
        if self.answer is not None:
            answer = self.answer

            async def callback(ctx: Any, params: Any) -> types.ElicitResult:
                self.asked.append(params.message)
                return types.ElicitResult(action=answer, content={} if answer == "accept" else None)

        return Client(self.server.sdk_server, mode=self.mode, elicitation_callback=callback)

    def run(self, steps: Callable[[Client], Any]) -> Any:
        async def main() -> Any:
            async with self.client() as client:
                return await steps(client)

        return anyio.run(main)

    def names(self) -> list[str]:
        async def steps(client: Client) -> list[str]:
            return [tool.name for tool in (await client.list_tools()).tools]

        result: list[str] = self.run(steps)
        return result

    def call(self, name: str, **arguments: Any) -> tuple[str, bool]:
        async def steps(client: Client) -> tuple[str, bool]:
            result = await client.call_tool(name, arguments)
            [block] = result.content
            return block.text, result.is_error

        found: tuple[str, bool] = self.run(steps)
        return found


@pytest.mark.parametrize("mode", MODES)
def test_the_served_list_is_resolved_like_a_menu(mode: str) -> None:
    registry = tools()
    server = MCPToolServer(registry, policy=Policy(deny=["shutdown"]))
    names = Talk(server, mode).names()
    # deny, expose=False, unsafe_in="mcp" and approval (this client cannot be asked) hide;
    # a deferred tool is served like the others
    assert names == ["add", "multiply", "refuse"]

    async def steps(client: Client) -> Any:
        return (await client.list_tools()).tools[0]

    add = Talk(server, mode).run(steps)
    assert add.description == registry.get("add").description  # type: ignore[union-attr]
    assert add.input_schema == registry.get("add").parameters  # type: ignore[union-attr]
    math = MCPToolServer(registry, policy=Policy(toolset="math"))
    assert Talk(math, mode).names() == ["add", "multiply"]


def test_a_tool_that_is_not_served_is_never_run() -> None:
    server = MCPToolServer(tools(), policy=Policy(deny=["shutdown"]))
    text, is_error = Talk(server, "auto").call("shutdown")
    assert is_error
    assert "'shutdown' is not available" in text
    assert RAN == []


def test_calls_run_through_the_executor_validation_and_errors_included() -> None:
    talk = Talk(MCPToolServer(tools()), "auto")
    assert talk.call("add", a=2, b=3) == ("5", False)
    text, is_error = talk.call("add", a="two", b=3)
    assert is_error
    assert "a: " in text  # every violation, as a model would read it
    assert talk.call("refuse", reason="no") == ("refused: no", True)
    assert RAN == ["add"]  # the invalid call never reached the body


@pytest.mark.parametrize("mode", MODES)
def test_approval_tools_are_listed_only_to_clients_that_can_ask(mode: str) -> None:
    server = MCPToolServer(tools())
    assert "delete_file" not in Talk(server, mode).names()
    assert "delete_file" in Talk(server, mode, answer="decline").names()
    text, is_error = Talk(server, mode).call("delete_file", path="/tmp/x")
    assert is_error
    assert "not available" in text
    assert RAN == []


@pytest.mark.parametrize("mode", MODES)
def test_an_approved_call_runs_once_and_the_question_names_the_call(mode: str) -> None:
    talk = Talk(MCPToolServer(tools()), mode, answer="accept")
    assert talk.call("delete_file", path="/tmp/x") == ("deleted /tmp/x", False)
    assert RAN == ["delete /tmp/x"]
    [question] = talk.asked
    assert "delete_file" in question
    assert '{"path": "/tmp/x"}' in question


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("answer", "reason"),
    [("decline", "declined the call"), ("cancel", "dismissed the approval request")],
)
def test_a_declined_or_dismissed_question_denies_the_call(
    mode: str, answer: str, reason: str
) -> None:
    text, is_error = Talk(MCPToolServer(tools()), mode, answer=answer).call("delete_file", path="x")
    assert is_error
    assert "denied" in text
    assert reason in text
    assert RAN == []


@pytest.mark.parametrize("mode", MODES)
def test_an_approval_rule_decides_when_to_ask_and_says_why(mode: str) -> None:
    registry = Registry()

    def risky(args: Any) -> bool | str:
        return "outside the sandbox" if not args["path"].startswith("/sandbox/") else False

    @function(registry=registry, requires_approval=risky)
    def write(path: str) -> str:
        """Write a file (pretend)."""
        return f"wrote {path}"

    talk = Talk(MCPToolServer(registry), mode, answer="accept")
    assert talk.call("write", path="/sandbox/a") == ("wrote /sandbox/a", False)
    assert talk.asked == []
    assert talk.call("write", path="/etc/passwd") == ("wrote /etc/passwd", False)
    [question] = talk.asked
    assert "write (outside the sandbox)" in question


def test_an_approval_the_server_did_not_ask_for_is_not_taken() -> None:
    """2026-07-28: an answer counts only with the request_state the server handed out."""
    accept = types.ElicitResult(action="accept", content={})

    async def steps(client: Client) -> Any:
        return await client.session.call_tool(
            "delete_file",
            {"path": "x"},
            input_responses={APPROVAL_KEY: accept},
            request_state="made-up",
            allow_input_required=True,
        )

    result = Talk(MCPToolServer(tools()), "auto", answer="accept").run(steps)
    assert isinstance(result, types.InputRequiredResult)  # asked again, not run
    assert set(result.input_requests or {}) == {APPROVAL_KEY}
    assert RAN == []


def test_agentic_functions_run_their_body_on_the_servers_runtime() -> None:
    registry = Registry()

    @agentic_function(registry=registry)
    def summarize(text: str, runtime: Runtime) -> str:
        """Summarize a text."""
        return runtime.exec(f"Summarize: {text}", tools=[])

    model = ScriptedProvider(["Short."])
    server = MCPToolServer(registry, runtime=Runtime(model))
    assert Talk(server, "auto").call("summarize", text="a long text") == ("Short.", False)
    assert model.requests[0].messages[0].content == "Summarize: a long text"


def test_deps_and_observers_reach_the_calls() -> None:
    registry = Registry()

    @function(registry=registry)
    def whoami(ctx: ToolContext) -> str:
        """The user the server runs for."""
        return str(ctx.deps["user"])

    events: list[Event] = []
    server = MCPToolServer(registry, deps={"user": "ada"}, observers=[events.append])
    assert Talk(server, "auto").call("whoami") == ("ada", False)
    assert [type(e) for e in events] == [ToolCallStarted, ToolCallCompleted]
    assert isinstance(events[0], ToolCallStarted)
    assert events[0].tool_name == "whoami"


def test_a_list_of_tools_can_be_served_too() -> None:
    @function(register_globally=False)
    def ping() -> str:
        """Answer pong."""
        return "pong"

    server = MCPToolServer([ping], name="pinger")
    assert [t.name for t in server.served()] == ["ping"]
    assert Talk(server, "legacy").call("ping") == ("pong", False)


@pytest.mark.parametrize(
    ("make", "text"),
    [
        (lambda: MCPToolServer(tools(), policy=Policy(toolset="nope")), "nope"),
        (lambda: MCPToolServer(tools(), policy={"deny": ["x"]}), "expected an openprogram"),
        (lambda: MCPToolServer("add"), "give a Registry or a list of tools"),
        (lambda: MCPToolServer(tools(), name=""), "non-empty string"),
    ],
)
def test_bad_arguments_fail_at_construction(make: Callable[[], Any], text: str) -> None:
    with pytest.raises(UserError) as info:
        make()
    assert text in str(info.value)


def test_an_address_in_use_is_a_clear_error() -> None:
    server = MCPToolServer(tools())
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(UserError) as info:
            asyncio.run(server.serve_http(port=port))
    assert f"cannot listen on 127.0.0.1:{port}" in str(info.value)
    with pytest.raises(UserError, match="port must be an integer 0-65535"):
        asyncio.run(server.serve_http(port=70000))
