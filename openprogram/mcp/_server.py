"""``MCPToolServer``: openprogram tools served to any MCP client, gates and approval applied.

The served list is resolved like an exec's menu: the policy's gates (L2-L5;
deferred tools are served too, since an MCP client loads tools its own way),
with the channel ``"mcp"`` always in force, so ``unsafe_in="mcp"`` keeps a
tool off every MCP server. Tools that ``requires_approval`` are listed only to
clients that can ask their user (form elicitation, see ``_consent``). The list
is resolved again for every request, so availability predicates are current.

A call runs through openprogram's own executor (``run_tools``): the name must
be in the served list, the arguments are validated, approval, timeouts and
result truncation apply, and the result text becomes the MCP result (an error
result when the call failed). Agentic functions run their body on the
server's ``runtime`` (its model), made current for the call.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from openprogram import __version__
from openprogram.context import use_current_runtime
from openprogram.events import Observer
from openprogram.exceptions import UserError
from openprogram.gates import Policy, resolve
from openprogram.mcp import _sdk
from openprogram.mcp._consent import Consent, can_ask, needs_approval
from openprogram.mcp._http import serve_app
from openprogram.messages import ToolCall, ToolResultMessage
from openprogram.registry import Registry, default_registry
from openprogram.runtime import Approval, Runtime, run_tools
from openprogram.tools import Tool, ToolLike, to_tools

__all__ = ["MCP_SOURCE", "MCPToolServer"]

MCP_SOURCE = "mcp"
"""The channel in force for every served tool: ``unsafe_in="mcp"`` hides a tool from MCP."""


class MCPToolServer:
    """Serves openprogram tools over MCP (stdio or streamable HTTP) with the official SDK.

    Args:
        tools: A ``Registry`` or a list of tools (anything ``exec(tools=...)`` takes);
            default: the default registry.
        policy: The gates to apply (``toolset``, ``allow``, ``deny``, ``source``, ...);
            ``"mcp"`` is added to its sources.
        name: The server name clients see.
        runtime: What agentic functions (and tools taking a ``runtime``) run on; ``None``:
            the current or default runtime, as for any Python call.
        deps: Given to tools as ``ToolContext.deps`` and to ``can_use`` predicates.
        observers: Receive the trace events of the served calls.

    Raises:
        UserError: ``tools`` is not a registry or a list, ``policy`` not a ``Policy``, or its
            toolset is unknown.
        ConfigurationError: The ``mcp`` SDK is not installed.

    Example:
        >>> from openprogram import Registry, function
        >>> registry = Registry()
        >>> @function(registry=registry)
        ... def add(a: int, b: int) -> int:
        ...     "Add two integers."
        ...     return a + b
        >>> [tool.name for tool in MCPToolServer(registry).served()]
        ['add']
    """

    def __init__(
        self,
        tools: Registry | Sequence[ToolLike] | None = None,
        *,
        policy: Policy | None = None,
        name: str = "openprogram",
        runtime: Runtime | None = None,
        deps: Any = None,
        observers: Sequence[Observer] = (),
    ) -> None:
        _sdk.require_sdk("openprogram.mcp.MCPToolServer")
        self._tools = _tool_source(tools)
        if policy is not None and not isinstance(policy, Policy):
            raise UserError(
                "MCPToolServer(policy=...): expected an openprogram.gates.Policy, "
                f"got {policy!r:.80}"
            )
        if not isinstance(name, str) or not name:
            raise UserError(f"MCPToolServer(name=...): expected a non-empty string, got {name!r}")
        self.policy = Policy(source=MCP_SOURCE).narrow(policy or Policy())
        """The policy the served list is resolved with (``"mcp"`` among its sources)."""
        self.name = name
        """The server name clients see."""
        self.runtime = runtime
        """What agentic functions run on (``None``: the current or default runtime)."""
        self.deps = deps
        """Given to tools as ``ToolContext.deps``."""
        self.observers = tuple(observers)
        """Receive the trace events of the served calls."""
        self._consent = Consent()
        self.served()  # an unknown toolset fails here, not at the first request
        self.sdk_server: Any = _sdk.Server(
            name,
            version=__version__,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        """The SDK's low-level ``Server`` (to embed it, e.g. ``.streamable_http_app()``)."""

    def __repr__(self) -> str:
        return f"MCPToolServer({self.name!r}, {self.policy!r})"

    def served(self, *, elicitation: bool = True) -> tuple[Tool, ...]:
        """The tools a client sees, in registration order.

        Args:
            elicitation: Whether the client can be asked for approval; without it, tools
                that ``requires_approval`` are left out.
        """
        resolution = resolve(self._tools, self.policy, deps=self.deps)
        if resolution.deferred:  # served like the others: load them
            loaded = self.policy.loaded | set(resolution.deferred_names)
            resolution = resolve(self._tools, self.policy.replace(loaded=loaded), deps=self.deps)
        return tuple(t for t in resolution.offered if elicitation or not t.requires_approval)

    async def serve_stdio(self) -> None:
        """Serve one client over this process's stdin and stdout, until it disconnects.

        While serving, what tools print goes to stderr, so it cannot corrupt the
        protocol stream.
        """
        async with _sdk.stdio_server() as (read, write):
            # The SDK points file descriptor 1 at stderr while it serves, but text left in
            # sys.stdout's buffer would reach the protocol stream once it restores it.
            with contextlib.redirect_stdout(sys.stderr):
                options = self.sdk_server.create_initialization_options()
                await self.sdk_server.run(read, write, options)

    async def serve_http(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        ready: Callable[[str], object] | None = None,
    ) -> None:
        """Serve streamable HTTP at ``http://host:port/path`` until interrupted (SIGINT/SIGTERM).

        Args:
            host: The interface to listen on (``127.0.0.1``: this machine only, with the
                SDK's DNS-rebinding protection).
            port: The port; ``0`` picks a free one (``ready`` says which).
            path: The MCP endpoint's path.
            ready: Called with the endpoint's URL once the server accepts connections.
        """
        app = self.sdk_server.streamable_http_app(streamable_http_path=path, host=host)
        await serve_app(app, host=host, port=port, path=path, ready=ready)

    # -- the handlers ------------------------------------------------------------------------

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        tools = [_listed(tool) for tool in self.served(elicitation=can_ask(ctx))]
        return _sdk.types.ListToolsResult(tools=tools)

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        arguments = dict(params.arguments or {})
        menu = self.served(elicitation=can_ask(ctx))
        tool = next((t for t in menu if t.name == params.name), None)
        approval = None
        if tool is not None and (why := needs_approval(tool, arguments)):
            decided = await self._consent.decide(ctx, params, tool, arguments, why)
            if isinstance(decided, _sdk.types.InputRequiredResult):
                return decided  # the 2026-07-28 way: the client asks, then calls again
            approval = _answered(decided)
        call = ToolCall(f"mcp-{ctx.request_id}", params.name, arguments)
        with self._current_runtime():
            [result] = await run_tools(
                [call], menu, deps=self.deps, approval=approval, observers=self.observers
            )
        return _call_result(result)

    def _current_runtime(self) -> contextlib.AbstractContextManager[object]:
        if self.runtime is None:
            return contextlib.nullcontext()
        return use_current_runtime(self.runtime)


def _answered(verdict: str | None) -> Approval:
    """The approval hook of one call whose user already answered (``None``: approved)."""

    async def approval(call: ToolCall) -> str | None:
        return verdict

    return approval


def _tool_source(tools: Registry | Sequence[ToolLike] | None) -> Registry | list[Tool]:
    if tools is None:
        return default_registry
    if isinstance(tools, Registry):
        return tools
    if isinstance(tools, str | bytes) or not isinstance(tools, Sequence):
        raise UserError(
            "MCPToolServer(tools=...): give a Registry or a list of tools, "
            f"got {type(tools).__name__}"
        )
    return to_tools(tools)


def _listed(tool: Tool) -> Any:
    return _sdk.types.Tool(
        name=tool.name,
        title=tool.label,
        description=tool.description,
        input_schema=dict(tool.parameters),
    )


def _call_result(result: ToolResultMessage) -> Any:
    text = _sdk.types.TextContent(type="text", text=result.content)
    return _sdk.types.CallToolResult(content=[text], is_error=result.is_error)
