"""@function keeps the wrapped function's parameters and return type."""

from __future__ import annotations

from typing import Any, reveal_type

from openprogram import Runtime, Tool, ToolContext, function
from openprogram.registry import Registry

registry = Registry()


@function(registry=registry)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@function
def shout(text: str, *, times: int = 1) -> str:
    """Shout."""
    return text.upper() * times


def halve(x: float) -> float:
    """Halve."""
    return x / 2


halve_tool = function(halve, name="halve", register_globally=False)


@function(register_globally=False)
async def fetch(url: str) -> bytes:
    """Fetch a URL."""
    return url.encode()


@function(register_globally=False)
def search(query: str, limit: int, runtime: Runtime) -> list[str]:
    """Search, with the injected runtime."""
    return [query] * limit


@function(register_globally=False)
def with_context(path: str, ctx: ToolContext) -> str:
    """A ToolContext is passed by the caller in Python calls, so it stays visible."""
    return path


reveal_type(add)  # R: openprogram.tools._tool.Tool[[a: int, b: int], int]
reveal_type(add(1, 2))  # R: int
reveal_type(add(a=1, b=2))  # R: int
add("one", 2)  # E: arg-type
add(1)  # E: call-arg
reveal_type(shout("hi", times=2))  # R: str
shout("hi", 2)  # E: call-arg
reveal_type(halve_tool(3.0))  # R: float
pending = fetch("x")
reveal_type(pending).close()  # R: typing.Coroutine[Any, Any, bytes]
reveal_type(search("q", 3))  # R: list[str]
# A tool's runtime is filled in (choose it with `with runtime:`), never passed.
search("q", 3, runtime=Runtime("openai:gpt-4o-mini"))  # E: call-arg
search(1, 3)  # E: arg-type
reveal_type(with_context("a", ToolContext(tool_name="with_context")))  # R: str
with_context("a")  # E: call-arg


async def use_fetch() -> bytes:
    return await fetch("https://example.com")


def total(numbers: list[int]) -> int:
    # The tool's result keeps its type under --strict (no Any to return).
    return add(numbers[0], numbers[1])


# Hand-built and coerced tools are Tool[..., Any]: any call, any result.
by_hand = Tool(name="echo", execute=lambda args: args["text"])
reveal_type(by_hand)  # R: openprogram.tools._tool.Tool[[*Any, **Any], Any]
tools: list[Tool] = [add, shout, halve_tool, by_hand]
named: dict[str, Tool[..., Any]] = {t.name: t for t in tools}
registered = registry.get("add")
obj: object = add
if isinstance(obj, Tool):
    reveal_type(obj)  # R: openprogram.tools._tool.Tool[Any, Any]
not_a_tool: Tool[[int], str] = add  # E: assignment
