"""Tools and scripts the benchmarks hand to every framework alike.

The script vocabulary itself (``Call``, ``Turn``, ``Script``, ``menu_bytes``)
lives in the drivers package, which needs nothing else from here; it is
re-exported for the benchmarks.
"""

from __future__ import annotations

import importlib.util
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from drivers._script import Call, Script, Turn, menu_bytes

__all__ = [
    "ADD_ARGS",
    "FINAL_TEXT",
    "Call",
    "Script",
    "Turn",
    "add",
    "add_async",
    "generated_tools",
    "menu_bytes",
    "parallel_script",
    "sleep_ms",
    "tool_loop_script",
]

ADD_ARGS: dict[str, Any] = {"a": 1, "b": 2}
"""Arguments the fake models send to ``add``."""

FINAL_TEXT = "done"
"""The text every scripted run ends with."""


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers, as a coroutine.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


def sleep_ms(ms: int) -> str:
    """Block the calling thread for a while, like a slow sync API would.

    Args:
        ms: How long to sleep, in milliseconds.
    """
    time.sleep(ms / 1000)
    return "slept"


def tool_loop_script(tool_name: str, calls: int) -> Script:
    """Return a script of ``calls`` one-call turns, then the final text.

    Args:
        tool_name: Name of the tool every turn calls with ``ADD_ARGS``.
        calls: Number of tool-calling turns.
    """
    turn = (Call(tool_name, ADD_ARGS),)
    return (*([turn] * calls), FINAL_TEXT)


def parallel_script(tool_name: str, width: int, args: dict[str, Any]) -> Script:
    """Return a script of one turn with ``width`` parallel calls, then text.

    Args:
        tool_name: Tool every call of the batch names.
        width: Number of calls in the batch.
        args: Arguments of each call.
    """
    return (tuple(Call(tool_name, args) for _ in range(width)), FINAL_TEXT)


_GENERATED_TOOL = '''
def {name}(city: str, days: int, metric: bool = True) -> str:
    """Weather forecast number {index} for a city.

    Args:
        city: City name, e.g. "Paris".
        days: How many days ahead, 1 to 14.
        metric: Report in metric units.
    """
    return city
'''


def generated_tools(count: int, prefix: str) -> list[Callable[..., str]]:
    """Return ``count`` distinct functions with typed params and docstrings.

    They are written to a real module file and imported, so frameworks that
    read source code (or cache per code object) see ordinary functions.

    Args:
        count: How many functions.
        prefix: Name prefix, unique per batch (names are ``{prefix}_{i}``).
    """
    names = [f"{prefix}_{index}" for index in range(count)]
    source = "".join(
        _GENERATED_TOOL.format(name=name, index=index) for index, name in enumerate(names)
    )
    path = Path(tempfile.mkdtemp(prefix="openprogram-bench-")) / f"{prefix}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"bench_generated_{prefix}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [getattr(module, name) for name in names]
