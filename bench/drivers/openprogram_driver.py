"""openprogram, through its public API only (docs/api.md).

APIs used: ``openprogram.function`` (decoration derives the schema and
registers the tool), ``Tool.execute`` (validate + run, returns a
``ToolResult``), ``Runtime.async_exec`` with ``openprogram.testing``'s
``ScriptedProvider`` and ``call``; ``ProviderRequestSent.prompt_size_bytes``
read from the run's record (``runtime.last_run.events``). No observer is
attached: like the peers' agents, ours runs with no tracing consumer (an
observer adds its delivery thread to every measured loop).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from openprogram import Runtime, function
from openprogram.testing import ScriptedProvider, call

from ._script import Script, Turn, menu_bytes

IMPORT_TOP = "import openprogram"
IMPORT_LOOP = "import openprogram, openprogram.testing"


def tool_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """Decorate with ``@function`` (registering globally) and return its schema."""
    parameters: dict[str, Any] = function(fn).spec["parameters"]
    return parameters


def validated_call(fn: Callable[..., Any]) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    """Return ``Tool.execute``: validate, run in a worker thread, wrap the result."""
    return function(fn, register_globally=False).execute


def _scripted(turn: Turn) -> Any:
    if isinstance(turn, str):
        return turn
    calls = [call(c.name, **c.args) for c in turn]
    return calls[0] if len(calls) == 1 else calls


class _OpenProgramAgent:
    def __init__(self, tools: Sequence[Callable[..., Any]], script: Script) -> None:
        self._tools = [function(fn, register_globally=False) for fn in tools]
        self._script = [_scripted(turn) for turn in script]
        self._provider: ScriptedProvider | None = None
        self.prompt_sizes: list[int] = []

    async def run(self) -> str:
        # A script is consumed as it plays, so each run gets a fresh provider
        # (and so a fresh Runtime, which is bound to its provider).
        self._provider = ScriptedProvider(list(self._script))
        runtime = Runtime(provider=self._provider)
        result = await runtime.async_exec("go", tools=self._tools, max_iterations=len(self._script))
        assert runtime.last_run is not None
        for event in runtime.last_run.events:
            size = getattr(event, "prompt_size_bytes", None)
            if size is not None:
                self.prompt_sizes.append(size)
        return str(result)

    def menu_bytes(self) -> int | None:
        if self._provider is None or not self._provider.requests:
            return None
        return menu_bytes(list(self._provider.requests[-1].tools))  # tool specs

    def reported_prompt_bytes(self) -> int | None:
        return self.prompt_sizes[-1] if self.prompt_sizes else None


def make_agent(tools: Sequence[Callable[..., Any]], script: Script) -> _OpenProgramAgent:
    """Return a Runtime-backed agent offering ``tools``, replaying ``script``.

    Raises:
        ValueError: The script is longer than openprogram's 50-call cap.
    """
    if len(script) > 50:
        raise ValueError("openprogram caps one exec at 50 model calls; split the script")
    return _OpenProgramAgent(tools, script)
