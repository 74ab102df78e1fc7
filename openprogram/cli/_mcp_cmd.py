"""``openprogram mcp serve``: serve openprogram tools to MCP clients, over stdio or HTTP.

The tools and the policy come from the same flags as ``openprogram tools``
(``--module``/``--registry``/``--entry-points``; ``--toolset``, ``--deny``, …
or ``--policy``), so ``openprogram tools`` with the same flags shows what is
served and why the rest is hidden; the channel ``mcp`` is always in force
besides any ``--source``. Tools that ``requires_approval`` are listed only to
clients that can ask their user (MCP elicitation).

``--stdio`` (the default) serves the one client that started this process;
``--http PORT`` serves streamable HTTP at ``http://HOST:PORT/PATH`` (host
``127.0.0.1``, path ``/mcp`` unless ``--host``/``--path`` say otherwise;
port ``0`` picks a free one) until interrupted. What the server says about
itself (the served tools, the URL) goes to stderr; with ``--stdio``, stdout
carries the protocol only, and what the user's modules print goes to stderr.

Agentic functions run their bodies on ``--model`` (as for ``openprogram run``:
default ``$OPENPROGRAM_MODEL``, else the embedded local model); serving one
with no model available is a configuration error (exit 2).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from openprogram.cli._command import Command
from openprogram.cli._model import choose_model
from openprogram.cli._output import stdout_to_stderr
from openprogram.cli._tools_cmd import (
    add_policy_arguments,
    add_registry_arguments,
    policy_from_args,
    tool_source_from_args,
)
from openprogram.exceptions import ConfigurationError
from openprogram.runtime import MODEL_ENV_VAR, Runtime
from openprogram.tools import Tool

__all__ = ["MCP", "mcp_serve_command"]

_DEFAULT_HOST = "127.0.0.1"
_DEFAULT_PATH = "/mcp"


def _arguments(mcp: argparse.ArgumentParser) -> None:
    """Declare ``mcp``'s one subcommand, ``serve``, and its options."""
    commands = mcp.add_subparsers(required=True, metavar="SUBCOMMAND", dest="mcp_command")
    serve = commands.add_parser(
        "serve",
        help="serve the tools of a module or registry to MCP clients (stdio or HTTP)",
        description="Serve openprogram tools to MCP clients, gated like a menu.",
    )
    add_registry_arguments(serve)
    add_policy_arguments(serve)
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument(
        "--stdio", action="store_true", help="serve the client that started us (the default)"
    )
    transport.add_argument(
        "--http", type=int, metavar="PORT", help="serve streamable HTTP on PORT (0: any free one)"
    )
    serve.add_argument("--host", help=f"with --http: the interface (default {_DEFAULT_HOST})")
    serve.add_argument("--path", help=f"with --http: the endpoint's path (default {_DEFAULT_PATH})")
    serve.add_argument(
        "--model",
        help="what agentic functions run on: a provider string or module:factory "
        f"(default: ${MODEL_ENV_VAR}, else the embedded local model)",
    )
    serve.add_argument("--name", default="openprogram", help="the server name clients see")


def mcp_serve_command(args: argparse.Namespace) -> None:
    """Run ``openprogram mcp serve`` until the client leaves (stdio) or a signal stops it (HTTP).

    Raises:
        ConfigurationError: HTTP options without ``--http``, or agentic functions and no model.
    """
    if args.http is None and (args.host is not None or args.path is not None):
        raise ConfigurationError(
            "mcp serve: --host and --path apply to --http PORT; with --stdio there is no address"
        )
    # The SDK takes about a second to import: only this command pays for it.
    from openprogram.mcp import MCPToolServer  # noqa: PLC0415

    with stdout_to_stderr(True):  # stdout may be the protocol stream: imports must not print there
        registry, policy = tool_source_from_args(args).registry, policy_from_args(args)
        server = MCPToolServer(registry, policy=policy, name=args.name)
        served = server.served()
        server.runtime = _runtime(args.model, served)
    _say(f"{len(served)} tools: {', '.join(_describe(t) for t in served) or 'none'}")
    if args.http is None:
        asyncio.run(server.serve_stdio())
        return
    asyncio.run(
        server.serve_http(
            host=args.host or _DEFAULT_HOST,
            port=args.http,
            path=args.path or _DEFAULT_PATH,
            ready=lambda url: _say(f"listening on {url}"),
        )
    )


def _runtime(model: str | None, served: tuple[Tool, ...]) -> Runtime | None:
    agentic = [tool.name for tool in served if tool.kind == "agentic"]
    if model is None and not agentic:
        return None  # nothing needs one; a tool that asks for a runtime gets the default one
    try:
        return Runtime(choose_model(model))
    except ConfigurationError as exc:
        raise ConfigurationError(
            f"mcp serve: the agentic functions {', '.join(agentic)} run their bodies on a "
            f"model: {exc}"
        ) from exc


def _describe(tool: Tool) -> str:
    notes = ["agentic"] if tool.kind == "agentic" else []
    notes += ["asks approval"] if tool.requires_approval else []
    return f"{tool.name} ({', '.join(notes)})" if notes else tool.name


def _say(text: str) -> None:
    print(f"openprogram mcp serve: {text}", file=sys.stderr, flush=True)


MCP = Command(
    name="mcp",
    help="Model Context Protocol: serve tools to MCP clients",
    description="Model Context Protocol: 'openprogram mcp serve' serves openprogram tools to "
    "MCP clients, over stdio or streamable HTTP.",
    add_arguments=_arguments,
    run=mcp_serve_command,
    json_output=False,  # with --stdio, stdout is the protocol stream
)
"""``openprogram mcp serve ...``."""
