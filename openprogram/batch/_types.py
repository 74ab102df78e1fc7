"""The values a batch hands back: per-item results, progress, the whole batch's result."""

from __future__ import annotations

import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from openprogram.exceptions import OpenProgramError

__all__ = ["BatchError", "BatchResult", "ItemError", "ItemResult", "Progress"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemError:
    """Why one item failed (plain text, so it crosses processes and lands in the JSONL file)."""

    type: str
    """Qualified name of the exception class, e.g. ``"openprogram.exceptions.LLMError"``."""
    message: str
    """``str(exception)``."""
    traceback: str
    """The formatted traceback (where the item ran: this process or a Ray worker)."""

    @classmethod
    def of(cls, exc: BaseException) -> ItemError:
        """Describe ``exc``."""
        kind = type(exc)
        module = "" if kind.__module__ == "builtins" else f"{kind.__module__}."
        text = "".join(traceback.format_exception(exc))
        return cls(type=module + kind.__qualname__, message=str(exc), traceback=text)

    def __str__(self) -> str:
        return f"{self.type}: {self.message}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemResult:
    """What happened to one input."""

    index: int
    """Position of the input in ``inputs``."""
    input: Any
    """The input itself."""
    key: str | None
    """Its resume key (``None`` when the batch has no ``output`` file and no ``key=``)."""
    output: Any = None
    """What the function returned (``None`` when it failed); for a resumed item, its JSON form."""
    error: ItemError | None = None
    """Why it failed, or ``None``."""
    duration_s: float = 0.0
    """Wall time of the call (for a resumed item: of the run that produced it)."""
    resumed: bool = False
    """``True`` when read from the output file instead of run again."""

    @property
    def ok(self) -> bool:
        """Whether the item succeeded."""
        return self.error is None


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    """Where a batch stands; handed to ``on_progress`` after every finished item."""

    total: int
    """Number of inputs."""
    done: int
    """Items finished so far (resumed ones included)."""
    succeeded: int
    """Finished items that succeeded (resumed ones included)."""
    failed: int
    """Finished items that failed."""
    resumed: int
    """Items taken from the output file without running."""
    elapsed_s: float
    """Seconds since the batch started."""
    last: ItemResult
    """The item that just finished."""

    @property
    def rate(self) -> float:
        """Items run per second so far (resumed items excluded)."""
        ran = self.done - self.resumed
        return ran / self.elapsed_s if self.elapsed_s > 0 else 0.0


class BatchError(OpenProgramError, RuntimeError):
    """Some items of a batch failed and all their outputs were asked for.

    Attributes:
        failed: The failed items.
    """

    def __init__(self, failed: Sequence[ItemResult], total: int) -> None:
        shown = "; ".join(f"#{item.index}: {item.error}" for item in failed[:3])
        more = f" (and {len(failed) - 3} more)" if len(failed) > 3 else ""
        super().__init__(
            f"{len(failed)} of {total} batch items failed: {shown}{more}. Inspect "
            "BatchResult.failed for each error, or read the outputs item by item "
            "(BatchResult.items) to keep the ones that succeeded"
        )
        self.failed = tuple(failed)


@dataclass(frozen=True, slots=True)
class BatchResult(Sequence[ItemResult]):
    """Every input's result, in input order; a sequence of ``ItemResult``."""

    items: tuple[ItemResult, ...]
    """One result per input, in input order."""
    elapsed_s: float
    """Wall time of the batch."""

    @overload
    def __getitem__(self, index: int) -> ItemResult: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[ItemResult]: ...
    def __getitem__(self, index: int | slice) -> ItemResult | Sequence[ItemResult]:
        return self.items[index]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[ItemResult]:
        return iter(self.items)

    @property
    def ok(self) -> bool:
        """Whether every item succeeded."""
        return all(item.ok for item in self.items)

    @property
    def succeeded(self) -> tuple[ItemResult, ...]:
        """The items that succeeded (resumed ones included)."""
        return tuple(item for item in self.items if item.ok)

    @property
    def failed(self) -> tuple[ItemResult, ...]:
        """The items that failed."""
        return tuple(item for item in self.items if not item.ok)

    @property
    def outputs(self) -> list[Any]:
        """Every item's output, in input order.

        Raises:
            BatchError: Some items failed (it lists them); read ``items`` to keep the rest.
        """
        failed = self.failed
        if failed:
            raise BatchError(failed, len(self.items))
        return [item.output for item in self.items]
