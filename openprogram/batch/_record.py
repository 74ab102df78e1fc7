"""What both backends share: planning (keys, resume), and recording finished items.

The output file is JSON Lines, one object per finished item, appended and
flushed as each item finishes, so a crash loses at most the line being
written::

    {"key": "9f2c...", "index": 3, "ok": true, "output": "...", "error": null, "duration_s": 1.2}

A re-run with the same file skips every input whose key has an ``ok`` record
(the last record of a key wins) and runs the others again, failed ones included.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel

from openprogram.batch import _jsonl
from openprogram.batch._types import BatchResult, ItemError, ItemResult, Progress
from openprogram.events import digest
from openprogram.exceptions import UserError

__all__ = ["Pending", "Plan", "Recorder", "make_plan"]

logger = logging.getLogger("openprogram.batch")

KeyFn = Callable[[Any], str]


@dataclass(frozen=True, slots=True)
class Pending:
    """An input still to run."""

    index: int
    item: Any
    key: str | None


@dataclass(slots=True)
class Plan:
    """The inputs split into those to run and those resumed from the output file."""

    items: list[Any]
    todo: list[Pending]
    done: dict[int, ItemResult]
    torn: bool = False
    """Whether the output file has lines torn by a crash (removed before appending)."""


def make_plan(
    inputs: Sequence[Any], *, key: KeyFn | None, output: Path | None, unpack: bool
) -> Plan:
    """Check the inputs, compute their keys, and take finished ones from ``output``.

    Raises:
        UserError: An input cannot be unpacked, has no key, or two inputs share a key;
            or the output file has a line that is neither a record nor torn by a crash.
    """
    items = list(inputs)
    if unpack:
        for index, item in enumerate(items):
            if not isinstance(item, Mapping | list | tuple):
                raise UserError(
                    f"batch.map(unpack=True): input #{index} ({item!r:.60}) is a "
                    f"{type(item).__name__}; with unpack=True every input must be a mapping "
                    "(called as fn(**item)) or a list/tuple (fn(*item))"
                )
    keys = _keys(items, key) if key is not None or output is not None else [None] * len(items)
    finished, torn = _read(output) if output is not None and output.exists() else ({}, [])
    plan = Plan(items=items, todo=[], done={}, torn=bool(torn))
    for index, (item, item_key) in enumerate(zip(items, keys, strict=True)):
        record = finished.get(item_key) if item_key is not None else None
        if record is not None and record.get("ok") is True:
            plan.done[index] = ItemResult(
                index=index,
                input=item,
                key=item_key,
                output=record.get("output"),
                duration_s=float(record.get("duration_s") or 0.0),
                resumed=True,
            )
        else:
            plan.todo.append(Pending(index, item, item_key))
    return plan


def _keys(items: list[Any], key: KeyFn | None) -> list[str | None]:
    keys: list[str | None] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        value = key(item) if key is not None else _default_key(index, item)
        if not isinstance(value, str) or not value:
            raise UserError(
                f"batch.map(key=...) returned {value!r:.60} for input #{index}; "
                "a key must be a non-empty string"
            )
        if value in seen:
            raise UserError(
                f"batch.map: inputs #{seen[value]} and #{index} have the same resume key "
                f"{value!r}; keys must be unique so a re-run knows which items are done. "
                "Make the inputs distinct (e.g. add a sample number) or pass key= that "
                "tells them apart"
            )
        seen[value] = index
        keys.append(value)
    return keys


def _default_key(index: int, item: Any) -> str:
    try:
        canonical = json.dumps(item, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        raise UserError(
            f"batch.map(output=...): input #{index} ({item!r:.60}) is not JSON-serializable, "
            "so it has no default resume key; pass key=lambda item: ... returning a "
            "unique string per input"
        ) from None
    return digest(canonical)


def _read(path: Path) -> tuple[dict[str, dict[str, Any]], list[int]]:
    """Records of ``path`` by key (the last one of a key wins), and its torn lines."""
    found = _jsonl.read(path)
    if found.broken is not None:
        number, why = found.broken
        raise UserError(
            f"{path}:{number}: not a batch record ({why}); this file was not written by "
            "openprogram.batch, or was edited: fix or remove that line, or pass another "
            "output= path"
        )
    if found.torn:
        numbers = ", ".join(map(str, found.torn))
        logger.warning(
            "%s: ignoring %d line(s) torn by a crash mid-write (line %s); their items run "
            "again and the lines are removed from the file",
            path,
            len(found.torn),
            numbers,
        )
    return found.records, found.torn


class Recorder:
    """Turns finished items into results: writes the output file, reports progress."""

    def __init__(
        self,
        plan: Plan,
        *,
        output: Path | None,
        on_progress: Callable[[Progress], object] | None,
    ) -> None:
        self._plan = plan
        self._on_progress = on_progress
        self._started = time.monotonic()
        self._file: IO[bytes] | None = None
        if output is not None:
            if plan.torn:
                _jsonl.repair(output)
            self._file = output.open("ab")
            if output.stat().st_size and not _ends_with_newline(output):
                self._file.write(b"\n")  # a complete last record missing its newline
        self.results: dict[int, ItemResult] = dict(plan.done)
        self._failed = 0

    def record(
        self, pending: Pending, output: Any, error: ItemError | None, duration_s: float
    ) -> ItemResult:
        """Record one finished item (write its line, report progress) and return its result."""
        if self._file is not None:
            error = self._write(pending, output, error, duration_s)
        result = ItemResult(
            index=pending.index,
            input=pending.item,
            key=pending.key,
            output=output if error is None else None,
            error=error,
            duration_s=duration_s,
        )
        self.results[pending.index] = result
        self._failed += error is not None
        if self._on_progress is not None:
            self._report(result)
        return result

    def _write(
        self, pending: Pending, output: Any, error: ItemError | None, duration_s: float
    ) -> ItemError | None:
        assert self._file is not None
        record = _record(pending, output, error, duration_s)
        try:
            line = _jsonl.encode(record, _jsonable)
        except (TypeError, ValueError, RecursionError) as exc:
            if error is None:
                # The output alone, or (nested right at the limit) inside its record.
                problem = _output_problem(output)
                if problem is None and not isinstance(exc, UnicodeEncodeError):
                    problem = exc
                if problem is not None:
                    # Unwritable means unresumable: this item's failure, not the batch's.
                    error = ItemError.of(_unwritable(pending, output, problem))
                    record = _record(pending, None, error, duration_s)
            # What is left is a lone surrogate in the key or the error text: written as a
            # \u escape, it reads back exactly.
            line = _jsonl.encode(record, _jsonable, ascii_only=True)
        self._file.write(line)
        self._file.flush()
        return error

    def _report(self, last: ItemResult) -> None:
        assert self._on_progress is not None
        done = len(self.results)
        progress = Progress(
            total=len(self._plan.items),
            done=done,
            succeeded=done - self._failed,
            failed=self._failed,
            resumed=len(self._plan.done),
            elapsed_s=time.monotonic() - self._started,
            last=last,
        )
        try:
            self._on_progress(progress)
        except Exception:  # a broken progress display must not stop the batch: log it
            logger.exception("batch on_progress callback %r raised; ignored", self._on_progress)

    def close(self) -> BatchResult:
        """Close the output file and return the batch's result (one item per input)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        items = tuple(self.results[index] for index in sorted(self.results))
        return BatchResult(items=items, elapsed_s=time.monotonic() - self._started)


def _record(
    pending: Pending, output: Any, error: ItemError | None, duration_s: float
) -> dict[str, Any]:
    return {
        "key": pending.key,
        "index": pending.index,
        "ok": error is None,
        "output": output if error is None else None,
        "error": dataclasses.asdict(error) if error is not None else None,
        "duration_s": round(duration_s, 6),
    }


def _output_problem(output: Any) -> BaseException | None:
    try:
        _jsonl.encode(output, _jsonable)
    except (TypeError, ValueError, RecursionError) as exc:
        return exc
    return None


def _unwritable(pending: Pending, output: Any, problem: BaseException) -> Exception:
    kind = TypeError if isinstance(problem, TypeError) else ValueError
    return kind(
        f"the output of input #{pending.index} ({type(output).__name__}) cannot be written "
        f"to the output file as JSON: {_jsonl.unwritable_reason(problem)}; return JSON-able "
        "values (str, finite numbers, lists, dicts, pydantic models, dataclasses)"
    )


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"
