"""A send or a run cancelled while it takes its lease leaves no lease behind.

A store takes a conversation's turn or a run through a lease row. On a store
whose transactions run on a worker thread (``DBOSStore``), a caller cancelled
while its take is in flight used to get its ``CancelledError`` while the thread
went on and committed the lease, which nobody then freed: the next send or run
waited for the lease to expire (``lease_s``). Each test cancels at many
moments (one of them inside the take) and then checks that the next send, or
the next attempt of the run, starts at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from openprogram import Runtime
from openprogram.stores import RunStore
from openprogram.testing import FunctionProvider

from .conftest import StoreFactory

MOMENTS = [i * 0.0003 for i in range(40)]
"""Delays after which a send or run is cancelled: from before its take to after it."""

LEASE_S = 60.0
"""Long enough that waiting for a lost lease to expire fails the test's deadline."""


def _model(request: Any) -> str:
    return "ok"


async def _cancel_after(delay: float, started: Any) -> None:
    task = asyncio.ensure_future(started)
    await asyncio.sleep(delay)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


def test_a_send_cancelled_while_it_takes_the_turn_leaves_the_turn_free(
    store_factory: StoreFactory,
) -> None:
    chat = Runtime(FunctionProvider(_model), store=store_factory(lease_s=LEASE_S)).conversation(
        "c1"
    )

    async def sends() -> None:
        for delay in MOMENTS:
            await _cancel_after(delay, chat.asend("hi"))
            await asyncio.wait_for(chat.asend("next"), timeout=10)

    asyncio.run(sends())


def test_a_run_cancelled_while_it_takes_the_run_leaves_the_run_free(
    store_factory: StoreFactory,
) -> None:
    store = store_factory(lease_s=LEASE_S)
    assert isinstance(store, RunStore)
    runtime = Runtime(FunctionProvider(_model), store=store)

    async def runs() -> None:
        await runtime.async_exec("start", run_id="r1")  # stored: the next ones take its lease
        for delay in MOMENTS:
            await _cancel_after(delay, runtime.async_exec("start", run_id="r1"))
            again = runtime.async_exec("start", run_id="r1")
            assert await asyncio.wait_for(again, timeout=10) == "ok"

    asyncio.run(runs())
