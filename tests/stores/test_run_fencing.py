"""A durable run's writes are fenced by its lease, on every shared store.

A holder that stalled past ``lease_s`` (its lease expired, and another
process took the run and went on) fails loudly on its next write, whichever
write it is, instead of writing over the new holder's journal.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from openprogram import OpenProgramError
from openprogram.stores import RunStatus, Step

from .conftest import StoreFactory


def _step(data: str) -> Step:
    return Step(key="1", kind="reply", fingerprint="ab", data=data)


@pytest.mark.parametrize(
    ("fresh", "status"),
    [(False, None), (False, "finished"), (True, None), (True, "finished")],
    ids=["stored-run-steps", "stored-run-last-write", "fresh-run-steps", "fresh-run-last-write"],
)
def test_a_holder_whose_run_lease_expired_cannot_write_over_the_next_holder(
    store_factory: StoreFactory, fresh: bool, status: RunStatus | None
) -> None:
    stalled, other = store_factory(lease_s=0.3), store_factory(lease_s=0.3)

    async def stall_then_write() -> None:
        async with stalled.open_run("r1", content='"hi"', options="{}", fresh=fresh):
            if fresh:
                await stalled.record_steps("r1", [_step('"first"')])  # creates and leases it
            # Frozen (this loop runs nothing, so it cannot renew the lease) while the
            # lease expires and another holder takes the run and writes.
            taker = threading.Thread(target=asyncio.run, args=(took_over(),))
            taker.start()
            taker.join()
            await stalled.record_steps("r1", [_step('"late"')], status=status)

    async def took_over() -> None:
        async with other.open_run("r1", content='"hi"', options="{}"):
            await other.record_steps("r1", [_step('"new"')])

    with pytest.raises(OpenProgramError, match="no longer holds run 'r1'"):
        asyncio.run(stall_then_write())
    stored = asyncio.run(other.load_run("r1"))
    assert stored is not None
    assert [s.data for s in stored.steps] == ['"new"']
    assert stored.record.status == "running"
