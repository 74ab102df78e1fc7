"""The output file's lines: reading them back (torn ones tolerated), repairing, encoding.

A record is written as one ``write`` of a UTF-8 JSON object that always
starts with ``{"key": ``, followed by a newline. A process killed in the
middle of that write leaves a *torn* line: a strict prefix of a record,
possibly ending inside a multi-byte character. The next run appends after
it on a new line, so torn lines can end up anywhere in the file, not only at
its end. They are recognised by that shape wherever they are, skipped (the
item simply runs again) and removed from the file before new records are
appended; any other line that is not a record still stops the run, since the
file was then written by something else or edited.

The file is read as bytes and split on ``\\n`` only: ``str.splitlines`` would
also split at U+2028 or U+0085 inside an output, which JSON leaves unescaped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["RecordFile", "encode", "read", "repair", "unwritable_reason"]

_START = b'{"key": '


@dataclass(slots=True)
class RecordFile:
    """What reading the output file found."""

    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The records by key (the last one of a key wins)."""
    torn: list[int] = field(default_factory=list)
    """1-based numbers of the lines torn by a crash."""
    broken: tuple[int, str] | None = None
    """The first line that is neither a record nor torn, and why."""


def read(path: Path) -> RecordFile:
    """Read every line of ``path``, sorting records, torn lines and the first broken line."""
    found = RecordFile()
    for number, line in enumerate(path.read_bytes().split(b"\n"), start=1):
        if not line.strip():
            continue
        record, why, parsed = _parse(line)
        if record is not None:
            found.records[record["key"]] = record
        elif not parsed and _is_torn(line):
            found.torn.append(number)
        elif found.broken is None:
            found.broken = (number, why)
    return found


def repair(path: Path) -> None:
    """Rewrite ``path`` without its torn lines, atomically (a crash leaves either version)."""
    kept = [line for line in path.read_bytes().split(b"\n") if _parse(line)[0] is not None]
    temporary = path.with_name(f".{path.name}.repair")
    with temporary.open("wb") as handle:
        handle.write(b"".join(line + b"\n" for line in kept))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def encode(value: Any, default: Callable[[Any], Any], *, ascii_only: bool = False) -> bytes:
    """``value`` as one line of strict JSON in UTF-8, newline included.

    Raises:
        TypeError: Something in ``value`` has no JSON form.
        ValueError: A float is NaN or infinite, a reference is circular, or a string
            holds a lone surrogate (``UnicodeEncodeError``); never with ``ascii_only``
            for the last (lone surrogates are then written as ``\\u`` escapes).
        RecursionError: ``value`` is nested too deeply.
    """
    text = json.dumps(value, ensure_ascii=ascii_only, allow_nan=False, default=default)
    return text.encode("utf-8") + b"\n"


def unwritable_reason(exc: BaseException) -> str:
    """What kept a value from being written, said for a person."""
    if isinstance(exc, UnicodeEncodeError):
        text = exc.object if isinstance(exc.object, str) else ""
        near = text[max(0, exc.start - 20) : exc.end + 20]
        return (
            f"it holds a lone surrogate {text[exc.start : exc.end]!r} (near {near!r}), which "
            "UTF-8 cannot encode; such strings come from file names or bytes decoded with "
            "errors='surrogateescape': decode them with errors='replace' or keep them as bytes"
        )
    if isinstance(exc, RecursionError):
        return "it is nested too deeply for JSON"
    message = str(exc)
    if "Out of range float" in message:
        return "it holds NaN or an infinite float, which JSON cannot represent; use None instead"
    return message


def _parse(line: bytes) -> tuple[dict[str, Any] | None, str, bool]:
    """The record on ``line`` (or ``None`` and why), and whether it is JSON at all."""
    try:
        record = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        return None, str(exc), False
    if not isinstance(record, dict) or not isinstance(record.get("key"), str):
        return None, "not an object with a string 'key'", True
    return record, "", True


def _is_torn(line: bytes) -> bool:
    # Not JSON, and a prefix of a record: it stops short inside `{"key": ` or after it.
    return line.startswith(_START) or _START.startswith(line)
