"""The local backend: per-item results and errors, concurrency, runtime, rate limit, options."""

from __future__ import annotations

import asyncio
import dataclasses
import doctest
import itertools
import re
import sys
import threading
import time
import typing
from typing import Any

import pytest

import openprogram.batch
import openprogram.batch._limit
from openprogram import batch
from openprogram.batch import BatchError, BatchKwargs, BatchOptions, RateLimiter
from openprogram.context import get_current_runtime
from openprogram.exceptions import ConfigurationError, UserError
from openprogram.providers.base import ProviderRequest
from openprogram.runtime import Runtime
from openprogram.testing import FunctionProvider

from .helpers import greet, shout, shout_sync, shouting_provider


def test_every_item_gets_a_result_and_one_failure_loses_nothing() -> None:
    inputs = ["a", "boom", "c", "d"]
    result = batch.map(shout, inputs, provider=shouting_provider(), concurrency=2)
    assert [item.index for item in result] == [0, 1, 2, 3]
    assert [item.input for item in result] == inputs
    assert [item.output for item in result] == ["A", None, "C", "D"]
    assert [item.ok for item in result] == [True, False, True, True]
    assert not result.ok
    (failed,) = result.failed
    assert failed.error is not None
    assert failed.error.type == "RuntimeError"
    assert failed.error.message == "the model choked on 'boom'"
    assert "RuntimeError" in failed.error.traceback
    assert len(result.succeeded) == 3
    with pytest.raises(BatchError, match=r"1 of 4 batch items failed: #1: RuntimeError"):
        _ = result.outputs


def test_outputs_in_input_order_when_all_succeed() -> None:
    result = batch.map(shout_sync, ["x", "y", "z"], provider=shouting_provider())
    assert result.ok
    assert result.outputs == ["X", "Y", "Z"]
    assert len(result) == 3
    assert result[1].output == "Y"
    assert result.elapsed_s > 0


def test_items_run_with_the_batch_runtime_made_from_the_options() -> None:
    seen: list[str | None] = []

    def record(request: ProviderRequest) -> str:
        seen.append(request.model)
        return "ok"

    def check(item: int) -> Any:
        runtime = get_current_runtime()
        assert isinstance(runtime, Runtime)
        return runtime.exec(f"item {item}", tools=[])

    events: list[Any] = []
    result = batch.map(
        check,
        [1, 2],
        provider=lambda: FunctionProvider(record),
        runtime_options={"model": "m-override", "observers": [events.append]},
    )
    assert result.outputs == ["ok", "ok"]
    assert seen == ["m-override", "m-override"]
    assert sum(e.kind == "AgentEnd" for e in events) == 2


def test_without_provider_the_function_keeps_the_callers_runtime() -> None:
    with Runtime(shouting_provider()):
        result = batch.map(shout_sync, ["q"])
        async_result = batch.map(shout, ["r"])
    assert result.outputs == ["Q"]
    assert async_result.outputs == ["R"]


class Gauge:
    """Counts calls running at once."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0
        self._lock = threading.Lock()

    def enter(self) -> None:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def leave(self) -> None:
        with self._lock:
            self.now -= 1


@pytest.mark.parametrize("concurrency", [1, 3])
def test_async_items_run_at_most_concurrency_at_once(concurrency: int) -> None:
    gauge = Gauge()

    async def work(item: int) -> int:
        gauge.enter()
        await asyncio.sleep(0.01)
        gauge.leave()
        return item * 2

    result = batch.map(work, range(9), concurrency=concurrency)
    assert result.outputs == [i * 2 for i in range(9)]
    assert gauge.peak == concurrency


def test_sync_items_run_on_threads_at_most_concurrency_at_once() -> None:
    gauge = Gauge()
    loop_threads: set[int] = set()

    def work(item: int) -> int:
        gauge.enter()
        loop_threads.add(threading.get_ident())
        time.sleep(0.02)  # blocking: only threads let others run meanwhile
        gauge.leave()
        return item

    result = batch.map(work, range(8), concurrency=4)
    assert result.outputs == list(range(8))
    assert gauge.peak == 4
    assert threading.get_ident() not in loop_threads


def test_unpack_calls_with_keywords_or_positions() -> None:
    items: list[Any] = [{"name": "ann"}, ("bob", "?"), ["cy"]]
    assert batch.map(greet, items, unpack=True).outputs == [
        "hello ann!",
        "hello bob?",
        "hello cy!",
    ]
    with pytest.raises(UserError, match=r"input #1 \('dan'\) is a str; with unpack=True"):
        batch.map(greet, [{"name": "x"}, "dan"], unpack=True)


def test_amap_and_map_work_inside_a_running_loop() -> None:
    async def main() -> tuple[list[Any], list[Any]]:
        awaited = await batch.amap(shout, ["a"], provider=shouting_provider())
        blocking = batch.map(shout, ["b"], provider=shouting_provider())
        return awaited.outputs, blocking.outputs

    assert asyncio.run(main()) == (["A"], ["B"])


# -- rate limit ------------------------------------------------------------------------------


def test_the_limiter_hands_out_slots_at_the_rate_after_a_burst() -> None:
    limiter = RateLimiter(10, burst=3)
    delays = [limiter.reserve() for _ in range(5)]
    assert delays == pytest.approx([0, 0, 0, 0.1, 0.2], abs=0.01)
    assert repr(limiter) == "RateLimiter(rate=10, burst=3)"


@pytest.mark.parametrize(
    ("rate", "burst"), [(0, 1), (-1, 1), ("5", 1), (True, 1), (1, 0), (1, 1.5)]
)
def test_the_limiter_rejects_bad_settings(rate: Any, burst: Any) -> None:
    with pytest.raises(UserError):
        RateLimiter(rate, burst=burst)


def _stamping_provider(stamps: list[float]) -> FunctionProvider:
    def reply(request: ProviderRequest) -> str:
        stamps.append(time.monotonic())
        return "ok"

    return FunctionProvider(reply)


def test_rate_limit_spaces_model_calls_across_concurrent_items() -> None:
    stamps: list[float] = []
    started = time.monotonic()
    result = batch.map(
        shout, list("abcde"), provider=_stamping_provider(stamps), rate_limit=50, concurrency=5
    )
    assert result.ok
    assert len(stamps) == 5
    # 50 calls/s: the 5th call's slot is 4 x 20 ms after the first; it cannot come sooner.
    assert max(stamps) - started >= 0.08


class RecordingLimiter(RateLimiter):
    """A limiter that remembers the start time of every slot it hands out."""

    def __init__(self, rate: float) -> None:
        super().__init__(rate)
        self.slots: list[float] = []

    def reserve(self) -> float:
        now = time.monotonic()
        delay = super().reserve()
        self.slots.append(now + delay)
        return delay


def test_one_limiter_can_be_shared_by_two_batches() -> None:
    limiter = RecordingLimiter(50)
    provider = shouting_provider()

    async def main() -> None:
        await asyncio.gather(
            batch.amap(shout, ["a", "b"], provider=provider, rate_limit=limiter),
            batch.amap(shout_sync, ["c", "d"], provider=provider, rate_limit=limiter),
        )

    asyncio.run(main())
    assert len(provider.requests) == len(limiter.slots) == 4  # one slot per model call
    slots = sorted(limiter.slots)
    # 50 calls/s: a slot every 20 ms (less the microseconds between two clock reads)
    assert min(b - a for a, b in itertools.pairwise(slots)) >= 0.02 - 1e-3


# -- options ---------------------------------------------------------------------------------


def test_batch_kwargs_and_options_declare_the_same_fields() -> None:
    assert set(typing.get_type_hints(BatchKwargs)) == {
        field.name for field in dataclasses.fields(BatchOptions)
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"backend": "spark"}, "use 'local' or 'ray'"),
        ({"concurrency": 0}, "concurrency=0"),
        ({"concurrency": True}, "concurrency=True"),
        ({"rate_limit": 5}, "rate_limit=...) needs provider="),
        ({"rate_limit": 0, "provider": "openai:x"}, "not a positive number"),
        ({"ray_address": "auto"}, "only applies with backend='ray'"),
        ({"ray_options": {"num_cpus": 1}}, "only applies with backend='ray'"),
        ({"provider": 42}, "is not a provider"),
        ({"provider": "nope:model"}, "unknown provider prefix"),
        ({"provider": "openai"}, "unknown provider prefix"),
        ({"runtime_options": {"provider": "x"}}, "unknown Runtime argument"),
        ({"runtime_options": {"temprature": 1}}, "unknown Runtime argument"),
        ({"runtime_options": {"temperature": -1}}, "Runtime(temperature=-1)"),
        ({"runtime_options": {"max_depth": 0}}, "Runtime(max_depth=0) must be an int >= 1"),
        ({"key": "id"}, "must be a callable"),
        ({"backend": "ray", "provider": FunctionProvider(str)}, "cannot move to Ray workers"),
    ],
)
def test_bad_options_are_refused_before_anything_runs(
    options: dict[str, Any], message: str
) -> None:
    ran: list[int] = []
    with pytest.raises(UserError, match=re.escape(message)):
        batch.map(ran.append, [1], **options)
    assert ran == []


def test_unknown_options_and_bad_arguments_are_type_errors() -> None:
    with pytest.raises(TypeError, match=r"unknown option 'workers'"):
        batch.map(str, [1], workers=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="fn must be callable"):
        batch.map("str", [1])  # type: ignore[arg-type]
    with pytest.raises(UserError, match="not a string or a mapping"):
        batch.map(str, "abc")


def test_the_ray_backend_without_ray_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(ConfigurationError, match=r"pip install 'openprogram-ai\[ray\]'"):
        batch.map(str, [1], backend="ray")


@pytest.mark.parametrize("module", [openprogram.batch, openprogram.batch._limit])
def test_docstring_examples_run(module: Any) -> None:
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0
    assert failed == 0
