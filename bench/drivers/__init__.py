"""One driver module per framework, all with the same small surface.

A benchmark names what to measure; a driver knows how its framework does it,
idiomatically and with that framework's own fake/test model. Drivers import
their framework at module top, so loading one is also the import check.

Every driver module provides (see :class:`Driver`):

- ``IMPORT_TOP``, ``IMPORT_LOOP``: import statements timed by ``bench_import``;
- ``tool_schema(fn)``: decorate ``fn`` and return the model-facing JSON Schema;
- ``validated_call(fn)``: the async path a model's call takes (validate + run);
- ``make_agent(tools, script)``: an :class:`Agent` whose fake model replays
  ``script`` on every run.

``minimal`` is the hand-written baseline loop; it implements only
``make_agent``.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, cast

from ._script import Script

NAMES: tuple[str, ...] = ("openprogram", "pydantic_ai", "openai_agents", "langgraph", "minimal")
"""Framework keys, in table-column order; ``openprogram`` is the reference."""

LABELS: dict[str, str] = {
    "openprogram": "openprogram",
    "pydantic_ai": "pydantic-ai",
    "openai_agents": "openai-agents",
    "langgraph": "langchain/langgraph",
    "minimal": "minimal loop",
}
"""Column headers."""

PEERS: tuple[str, ...] = ("pydantic_ai", "openai_agents", "langgraph")
"""The peer frameworks (installed only in ``bench/.venv``)."""


class Agent(Protocol):
    """A framework's agent wired to a scripted fake model."""

    async def run(self) -> str:
        """Run the whole script once and return the final text."""
        ...

    def menu_bytes(self) -> int | None:
        """JSON size of the tool menu in the last model request, if known."""
        ...

    def reported_prompt_bytes(self) -> int | None:
        """Prompt size the framework itself reports for its last request, if any."""
        ...


class Driver(Protocol):
    """What each ``drivers/<name>_driver.py`` module provides."""

    IMPORT_TOP: str
    IMPORT_LOOP: str

    def tool_schema(self, fn: Callable[..., Any]) -> dict[str, Any]:
        """Decorate ``fn`` as a tool and return its parameters' JSON Schema."""
        ...

    def validated_call(self, fn: Callable[..., Any]) -> Callable[[dict[str, Any]], Awaitable[Any]]:
        """Return the framework's validate-and-run path for ``fn``."""
        ...

    def make_agent(self, tools: Sequence[Callable[..., Any]], script: Script) -> Agent:
        """Return an agent offering ``tools`` whose fake model replays ``script``."""
        ...


def load(name: str) -> Driver:
    """Import a framework's driver (and so the framework).

    Args:
        name: One of :data:`NAMES`.

    Raises:
        ImportError: The framework (or openprogram's contract API) is missing.
    """
    # Relative to this package: ``drivers`` from the scripts, ``bench.drivers`` from the root.
    return cast(Driver, importlib.import_module(f".{name}_driver", __name__))
