"""The Ray backend: one Ray task per item, at most ``concurrency`` in flight.

Ray is imported only here, and only when a batch asks for it. The driver (this
process) submits tasks, records each finished item as it comes back (output
file, progress) and submits the next, so a failed or lost task costs one item.

What crosses to the workers: the function by import path when it is a
module-level name (the worker imports its module, as any program would; see
``by_name``), else pickled by Ray; the provider as a string or a factory (built
in the worker, once per batch per worker process); ``runtime_options`` pickled;
whether real model requests are allowed (``model_requests_allowed()`` on the
driver when the batch starts: a ``block_model_requests()`` around
``batch.map`` holds in the workers too, whatever their own environment says).
A rate limit lives in one Ray actor that every worker reserves its slots from.
"""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from openprogram.batch._item import ByName, Outcome, by_name, run_item
from openprogram.batch._limit import RateLimiter
from openprogram.batch._options import BatchOptions, ProviderSpec, make_runtime
from openprogram.batch._record import Pending, Recorder, make_plan
from openprogram.batch._types import BatchResult, ItemError
from openprogram.exceptions import ConfigurationError, UserError
from openprogram.providers._allow import allow_model_requests, model_requests_allowed

__all__ = ["run_ray"]

_MISSING_RAY = (
    "batch.map(backend='ray') needs Ray: pip install 'openprogram-ai[ray]' "
    "(on the driver and on every node of the cluster)"
)


@dataclass(frozen=True, slots=True)
class _Setup:
    """What every task of one batch needs besides its item (sent to the cluster once)."""

    batch_id: str
    fn: ByName | Callable[..., Any]
    provider: ProviderSpec | None
    runtime_options: Mapping[str, Any] | None
    unpack: bool
    limiter: Any  # a Ray actor handle of RateLimiter, or None
    model_requests: bool  # the driver's model_requests_allowed() when the batch started


def run_ray(fn: Callable[..., Any], inputs: Iterable[Any], options: BatchOptions) -> BatchResult:
    """Run ``fn`` over ``inputs`` as Ray tasks and return every item's result."""
    try:
        # The optional extra, imported only by the backend that uses it (by name: Ray's own
        # modules are not part of what mypy checks here).
        ray: Any = importlib.import_module("ray")
    except ImportError as exc:
        raise ConfigurationError(_MISSING_RAY) from exc
    plan = make_plan(
        list(inputs), key=options.key, output=options.output_path, unpack=options.unpack
    )
    allowed = model_requests_allowed()  # before Ray starts: a bad variable fails at once
    recorder = Recorder(plan, output=options.output_path, on_progress=options.on_progress)
    started_here, limiter = False, None
    try:
        started_here = _connect(ray, options.ray_address)
        if options.rate_limit is not None and plan.todo:
            limiter = _limiter_actor(ray, options.limiter)
        setup = _ship(
            ray,
            _Setup(
                batch_id=os.urandom(8).hex(),
                fn=by_name(fn) or fn,
                provider=options.provider,
                runtime_options=options.runtime_options,
                unpack=options.unpack,
                limiter=limiter,
                model_requests=allowed,
            ),
        )
        task = ray.remote(_task)
        if options.ray_options:
            task = task.options(**options.ray_options)
        _drive(
            ray, task, setup, iter(plan.todo), recorder=recorder, concurrency=options.concurrency
        )
    finally:
        result = recorder.close()
        if limiter is not None:
            ray.kill(limiter)
        if started_here:
            ray.shutdown()
    return result


def _ship(ray: Any, setup: _Setup) -> Any:
    """Put what every task needs into the object store once; say what cannot travel."""
    try:
        return ray.put(setup)
    except Exception as exc:  # Ray wraps pickling failures in several types: all mean the same
        raise UserError(
            f"batch.map(backend='ray') cannot send the function, provider or runtime_options to "
            f"the workers ({type(exc).__name__}: {exc}); define the function and the provider "
            "factory at module level in a module the workers can import, and keep "
            "runtime_options to plain values and importable functions"
        ) from exc


def _connect(ray: Any, address: str | None) -> bool:
    """Initialize Ray unless the caller did; return whether this call did it."""
    if ray.is_initialized():
        if address is not None:
            raise UserError(
                f"batch.map(ray_address={address!r}): Ray is already initialized in this "
                "process; drop ray_address= to use that connection, or call ray.shutdown() first"
            )
        return False
    ray.init(address=address)
    return True


def _limiter_actor(ray: Any, limiter: RateLimiter | None) -> Any:
    assert limiter is not None
    actor = ray.remote(RateLimiter).options(num_cpus=0)  # bookkeeping only: takes no CPU slot
    return actor.remote(limiter.rate, burst=limiter.burst)


def _drive(
    ray: Any,
    task: Any,
    setup: Any,
    todo: Iterator[Pending],
    *,
    recorder: Recorder,
    concurrency: int,
) -> None:
    in_flight: dict[Any, Pending] = {}

    def submit() -> None:
        pending = next(todo, None)
        if pending is not None:
            in_flight[task.remote(setup, pending.item)] = pending

    for _ in range(concurrency):
        submit()
    while in_flight:
        ready, _ = ray.wait(list(in_flight), num_returns=1)
        for ref in ready:
            pending = in_flight.pop(ref)
            try:
                outcome = ray.get(ref)
            except Exception as exc:  # noqa: BLE001 - a lost worker or task fails that item only
                outcome = Outcome(None, ItemError.of(exc), 0.0)
            recorder.record(pending, outcome.output, outcome.error, outcome.duration_s)
            submit()


# -- in the worker --------------------------------------------------------------------------

_RUNTIMES: dict[str, Any] = {}
"""Runtime per batch id in this worker process (built on the batch's first task here)."""

_KEEP = 4


class _ActorLimiter:
    """Waits for a slot reserved from the batch's limiter actor."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    async def acquire(self) -> None:
        delay = await self._handle.reserve.remote()
        if delay > 0:
            await asyncio.sleep(delay)


def _task(setup: _Setup, item: Any) -> Outcome:
    """Run one item in a Ray worker, under the driver's model-request setting."""
    with allow_model_requests(setup.model_requests):
        return _run_task(setup, item)


def _run_task(setup: _Setup, item: Any) -> Outcome:
    """Run one item; every failure comes back as the item's error."""
    shipped = setup.fn
    if isinstance(shipped, ByName):
        try:
            fn = shipped.resolve()
        except Exception as exc:  # noqa: BLE001 - reported as the item's error, with the fix
            return Outcome(None, ItemError.of(_not_importable(shipped, exc)), 0.0)
    else:
        fn = shipped
    try:
        runtime = _runtime(setup)
    except Exception as exc:  # noqa: BLE001 - e.g. a provider string that does not resolve
        return Outcome(None, ItemError.of(exc), 0.0)
    return asyncio.run(run_item(fn, item, unpack=setup.unpack, runtime=runtime))


def _not_importable(fn: ByName, exc: Exception) -> ConfigurationError:
    return ConfigurationError(
        f"cannot import {fn.module}.{fn.qualname} on the Ray worker ({type(exc).__name__}: "
        f"{exc}); the function's module must be importable on every node: install your "
        "package there, or ship it with ray.init(runtime_env={'py_modules': [...]}) or "
        "runtime_env={'working_dir': ...}"
    )


def _runtime(setup: _Setup) -> Any:
    runtime = _RUNTIMES.get(setup.batch_id)
    if runtime is None and (setup.provider is not None or setup.runtime_options):
        limiter = _ActorLimiter(setup.limiter) if setup.limiter is not None else None
        runtime = make_runtime(setup.provider, setup.runtime_options, limiter)
        if len(_RUNTIMES) >= _KEEP:
            _RUNTIMES.pop(next(iter(_RUNTIMES)))  # the oldest batch's runtime
        _RUNTIMES[setup.batch_id] = runtime
    return runtime
