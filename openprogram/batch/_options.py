"""The keyword options of ``batch.map`` and ``batch.amap``, taken once and checked.

``BatchKwargs`` types the keywords for callers (``**options: Unpack[BatchKwargs]``);
``BatchOptions`` is the validated, defaulted form the backends read. A test
keeps the two field lists identical.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias, TypedDict

from openprogram._keywords import reject_unknown
from openprogram.batch._limit import RateLimitedProvider, RateLimiter
from openprogram.batch._types import Progress
from openprogram.exceptions import UserError
from openprogram.providers import PROVIDER_PREFIXES, resolve_provider
from openprogram.providers.base import Provider
from openprogram.runtime import Runtime

__all__ = ["Backend", "BatchKwargs", "BatchOptions", "ProviderSpec", "make_runtime"]

Backend: TypeAlias = Literal["local", "ray"]

ProviderSpec: TypeAlias = Provider | str | Callable[[], Provider]
"""A provider object (local only), a string like ``"openai:gpt-4o-mini"``, or a factory."""


class BatchKwargs(TypedDict, total=False):
    """Keyword options of ``batch.map`` / ``batch.amap`` (see ``BatchOptions``)."""

    backend: Backend
    concurrency: int
    rate_limit: float | RateLimiter | None
    provider: ProviderSpec | None
    runtime_options: Mapping[str, Any] | None
    output: str | os.PathLike[str] | None
    key: Callable[[Any], str] | None
    unpack: bool
    on_progress: Callable[[Progress], object] | None
    ray_address: str | None
    ray_options: Mapping[str, Any] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchOptions:
    """Validated options of one batch."""

    backend: Backend = "local"
    """``"local"`` (asyncio + threads in this process) or ``"ray"`` (Ray tasks on a cluster)."""
    concurrency: int = 8
    """Items running at once (local) or Ray tasks in flight (ray)."""
    rate_limit: float | RateLimiter | None = None
    """Model calls per second across all items, or a ``RateLimiter`` (needs ``provider``)."""
    provider: ProviderSpec | None = None
    """The items' provider; ``None`` leaves the runtime to the function (current/default)."""
    runtime_options: Mapping[str, Any] | None = None
    """Other ``Runtime(...)`` arguments for the items' runtime (``model``, ``observers``, ...)."""
    output: str | os.PathLike[str] | None = None
    """A JSONL file recording finished items; a re-run skips the ones that succeeded."""
    key: Callable[[Any], str] | None = None
    """An input's resume key (default: a hash of its JSON form)."""
    unpack: bool = False
    """Call ``fn(**item)`` for mappings and ``fn(*item)`` for lists/tuples, not ``fn(item)``."""
    on_progress: Callable[[Progress], object] | None = None
    """Called with a ``Progress`` after every finished item."""
    ray_address: str | None = None
    """``ray.init(address=...)`` when Ray is not initialized yet (ray backend)."""
    ray_options: Mapping[str, Any] | None = None
    """``.options(...)`` of every Ray task, e.g. ``{"num_cpus": 0.25}`` (ray backend)."""

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any]) -> BatchOptions:
        """Build and validate the options given to ``map``/``amap``.

        Raises:
            TypeError: An unknown keyword (the message lists the known ones).
            UserError: A value out of range or a contradictory combination.
        """
        reject_unknown(kwargs, _FIELDS, "batch.map")
        options = cls(**kwargs)
        options._validate()
        return options

    @property
    def output_path(self) -> Path | None:
        """``output`` as a path."""
        return Path(self.output) if self.output is not None else None

    @property
    def limiter(self) -> RateLimiter | None:
        """The limiter ``rate_limit`` asks for (a fresh one for a number)."""
        if self.rate_limit is None or isinstance(self.rate_limit, RateLimiter):
            return self.rate_limit
        return RateLimiter(self.rate_limit)

    def _validate(self) -> None:
        if self.backend not in ("local", "ray"):
            raise UserError(f"batch.map(backend={self.backend!r}): use 'local' or 'ray'")
        bad_concurrency = isinstance(self.concurrency, bool) or not isinstance(
            self.concurrency, int
        )
        if bad_concurrency or self.concurrency < 1:
            raise UserError(f"batch.map(concurrency={self.concurrency!r}) must be an int >= 1")
        if self.rate_limit is not None:
            if not isinstance(self.rate_limit, RateLimiter):
                RateLimiter(self.rate_limit)  # raises on a bad rate
            if self.provider is None:
                raise UserError(
                    "batch.map(rate_limit=...) needs provider=...: the limiter wraps the provider "
                    "the items' runtime calls (e.g. provider='openai:gpt-4o-mini')"
                )
        self._check_runtime()
        if self.backend == "local":
            for name in ("ray_address", "ray_options"):
                if getattr(self, name) is not None:
                    raise UserError(f"batch.map({name}=...) only applies with backend='ray'")
        elif _is_provider_object(self.provider):
            raise UserError(
                "batch.map(backend='ray', provider=<a provider object>): a provider holds HTTP "
                "clients that cannot move to Ray workers; pass a string like "
                "'openai:gpt-4o-mini' or an importable zero-argument function that builds it"
            )
        for name in ("key", "on_progress"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise UserError(f"batch.map({name}={value!r:.60}) must be a callable or None")

    def _check_runtime(self) -> None:
        provider = self.provider
        if not (provider is None or isinstance(provider, str) or callable(provider)) and not (
            _is_provider_object(provider)
        ):
            raise UserError(
                f"batch.map(provider={provider!r:.60}) is not a provider: pass a Provider, "
                "a string like 'openai:gpt-4o-mini', or a function returning a Provider"
            )
        vendor, colon, _ = provider.partition(":") if isinstance(provider, str) else ("", "", "")
        if isinstance(provider, str) and (not colon or vendor.lower() not in PROVIDER_PREFIXES):
            # Only the prefix: the provider itself is built where the items run (a Ray worker
            # may have environment variables this process lacks).
            raise UserError(
                f"batch.map(provider={provider!r}): unknown provider prefix; use one of "
                f"{', '.join(PROVIDER_PREFIXES)} followed by ':<model>' (e.g. "
                "'openai:gpt-4o-mini'), or pass a Provider or a factory"
            )
        options = self.runtime_options
        if options is None:
            return
        if not isinstance(options, Mapping):
            raise UserError("batch.map(runtime_options=...) must be a mapping of Runtime arguments")
        allowed = set(inspect.signature(Runtime).parameters) - {"provider"}
        unknown = sorted(set(options) - allowed)
        if unknown:
            raise UserError(
                f"batch.map(runtime_options=...) has unknown Runtime argument(s) {unknown}; "
                f"known: {', '.join(sorted(allowed))} (the provider goes in provider=)"
            )
        # Check the values here, where the error is one error, not one per item on Ray workers;
        # without a provider, constructing a Runtime resolves nothing.
        Runtime(**dict(options))


def _is_provider_object(value: Any) -> bool:
    return not isinstance(value, type | str) and callable(getattr(value, "stream", None))


def make_runtime(
    provider: ProviderSpec | None,
    runtime_options: Mapping[str, Any] | None,
    limiter: Any = None,
) -> Runtime | None:
    """The runtime the items run with, or ``None`` to leave it to the function.

    Args:
        provider: The provider spec (a factory is called here: in the worker, for Ray).
        runtime_options: Other ``Runtime`` arguments.
        limiter: Wraps the provider in a ``RateLimitedProvider`` when given.
    """
    if provider is None and not runtime_options:
        return None
    built = _build_provider(provider)
    if limiter is not None and built is not None:
        built = RateLimitedProvider(built, limiter)
    return Runtime(built, **dict(runtime_options or {}))


def _build_provider(spec: ProviderSpec | None) -> Provider | None:
    if spec is None:
        return None
    if isinstance(spec, str):
        return resolve_provider(spec)
    if _is_provider_object(spec):
        return spec  # type: ignore[return-value] # it has .stream: a Provider
    return spec()  # type: ignore[operator] # validated: a zero-argument factory


_FIELDS = frozenset(f.name for f in dataclasses.fields(BatchOptions))
