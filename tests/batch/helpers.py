"""Functions and provider factories the batch tests send to Ray workers.

They live at module level in an importable module (``tests.batch.helpers``):
Ray workers import them by name, exactly as they would a user's package.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from openprogram.decorators import agentic_function
from openprogram.messages import UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.runtime import Runtime
from openprogram.testing import FunctionProvider, model_requests_allowed


def _shout(request: ProviderRequest) -> str:
    message = request.messages[-1]
    assert isinstance(message, UserMessage)
    if "boom" in message.text:
        raise RuntimeError(f"the model choked on {message.text!r}")
    return message.text.upper()


def shouting_provider() -> FunctionProvider:
    """A provider answering every prompt in capitals (a prompt with "boom" raises)."""
    return FunctionProvider(_shout, name="shouter", model="caps-1")


@agentic_function(register_globally=False)
async def shout(text: str, runtime: Runtime) -> str:
    """Shout the text through the model.

    Args:
        text: What to shout.
    """
    return str(await runtime.async_exec(text, tools=[]))


@agentic_function(register_globally=False)
def shout_sync(text: str, runtime: Runtime) -> str:
    """Shout the text through the model (sync body).

    Args:
        text: What to shout.
    """
    return str(runtime.exec(text, tools=[]))


def greet(name: str, punctuation: str = "!") -> str:
    """A plain function of two arguments (for unpack=True)."""
    return f"hello {name}{punctuation}"


def where(item: Any) -> int:
    """The worker process an item ran in."""
    time.sleep(0.05)  # keep both workers busy so both get items
    return os.getpid()


async def slow_echo(item: Any) -> Any:
    """Echo after a short async sleep."""
    await asyncio.sleep(0.01)
    return item


def _clock(request: ProviderRequest) -> str:
    return repr(time.time())


def clock_provider() -> FunctionProvider:
    """A provider answering with the wall-clock time at which it answered."""
    return FunctionProvider(_clock, name="clock")


@agentic_function(register_globally=False)
def stamp(item: int, runtime: Runtime) -> float:
    """Return when the model answered.

    Args:
        item: Ignored.
    """
    return float(runtime.exec(f"time for {item}?", tools=[]))


def crash(item: str) -> str:
    """Kill the worker process on "die" (a lost worker, not an exception)."""
    if item == "die":
        os._exit(1)
    return item


def requests_allowed(item: Any) -> bool:
    """Whether real model requests are allowed where the item runs."""
    return model_requests_allowed()
