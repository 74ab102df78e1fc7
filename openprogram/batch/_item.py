"""Running one item: call the function (async on the loop, sync on a worker thread).

Shared by the local backend and the Ray workers. An item's exception becomes
its ``ItemError``; only cancellation and interpreter exits go up.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from openprogram import _threads
from openprogram.batch._types import ItemError
from openprogram.context import use_current_runtime

__all__ = ["ByName", "Outcome", "by_name", "run_item"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What running an item produced (plain data: it may come back from a Ray worker)."""

    output: Any
    error: ItemError | None
    duration_s: float


@dataclass(frozen=True, slots=True)
class ByName:
    """A module-level function sent to another process as its import path."""

    module: str
    qualname: str

    def resolve(self) -> Callable[..., Any]:
        """Import the module and look the function up."""
        target: Any = importlib.import_module(self.module)
        for part in self.qualname.split("."):
            target = getattr(target, part)
        return target  # type: ignore[no-any-return]


def by_name(fn: Callable[..., Any]) -> ByName | None:
    """``fn``'s import path when importing it gives back ``fn`` itself, else ``None``.

    Agentic functions are objects wrapping the function, so plain pickling
    would copy them (tool, schema and all); by name, the worker imports the
    module as any program would, decorators and registration included.
    """
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<locals>" in qualname:
        return None
    try:
        found = ByName(module, qualname).resolve()
    except (ImportError, AttributeError):
        return None
    return ByName(module, qualname) if found is fn else None


def _is_async(fn: Callable[..., Any]) -> bool:
    # An @agentic_function is an object wrapping the function (functools.update_wrapper).
    return inspect.iscoroutinefunction(inspect.unwrap(fn)) or inspect.iscoroutinefunction(fn)


async def run_item(fn: Callable[..., Any], item: Any, *, unpack: bool, runtime: Any) -> Outcome:
    """Call ``fn`` on ``item`` (with ``runtime`` current, if given) and time it."""
    args, kwargs = _arguments(item, unpack)
    started = time.monotonic()
    try:
        with _current(runtime):
            if _is_async(fn):
                value = fn(*args, **kwargs)
            else:  # a sync body blocks (its exec runs a loop of its own): keep it off this loop
                value = await _threads.run_in_thread(fn, *args, **kwargs)
            if inspect.isawaitable(value):
                value = await value
    except Exception as exc:  # noqa: BLE001 - one failing item never loses the others
        return Outcome(None, ItemError.of(exc), time.monotonic() - started)
    return Outcome(value, None, time.monotonic() - started)


def _arguments(item: Any, unpack: bool) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if not unpack:
        return (item,), {}
    if isinstance(item, Mapping):
        return (), dict(item)
    return tuple(item), {}


@contextlib.contextmanager
def _current(runtime: Any) -> Iterator[None]:
    if runtime is None:
        yield
    else:
        with use_current_runtime(runtime):
            yield
