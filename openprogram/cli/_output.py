"""Where the command's output goes: the one-JSON-object rule of ``--json``, and error reports.

With ``--json`` stdout carries exactly one JSON object, whatever happens. From
the moment the command starts, everything else written to stdout, by the
user's code or by libraries (even from C code or child processes: file
descriptor 1 is redirected, not just ``sys.stdout``), goes to stderr, and it
stays so until the process ends: a thread still printing after the function
returned, or an ``atexit`` handler, cannot add text after the object. The
object itself is written to a private copy of the original stdout, which is
closed right after it, so a reader sees the end of stdout as soon as the
object is complete.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Iterator
from typing import Any, TextIO

from openprogram.cli._errors import Failure

__all__ = ["one_object_stdout", "report_failure", "stdout_to_stderr"]


@contextlib.contextmanager
def one_object_stdout(enabled: bool) -> Iterator[TextIO]:
    """Yield the stream the command's JSON object goes to; with ``enabled`` nothing else does.

    Without ``enabled`` this is plain ``sys.stdout``. With it, writes to stdout go
    to stderr inside the block and, when stdout is the process's file descriptor 1,
    after it too (see the module docstring).
    """
    if not enabled:
        yield sys.stdout
        return
    original = sys.stdout
    private = _take_stdout()
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield private if private is not None else original
    finally:
        if private is not None:
            private.close()  # the reader's end of stdout: nothing can follow the object


def _take_stdout() -> TextIO | None:
    """Point file descriptor 1 at stderr for good; return a stream on the original stdout.

    ``None`` when ``sys.stdout`` is not file descriptor 1 (a test's captured stdout):
    then only ``sys.stdout`` is redirected, for the block.
    """
    try:
        if sys.stdout.fileno() != 1:
            return None
    except (AttributeError, OSError, ValueError):  # a captured or replaced stdout (tests)
        return None
    sys.stdout.flush()
    private = os.dup(1)
    os.dup2(2, 1)
    return os.fdopen(private, "w", encoding="utf-8")


@contextlib.contextmanager
def stdout_to_stderr(enabled: bool) -> Iterator[None]:
    """Send what is written to stdout to stderr inside the block only (then restore it).

    For a command whose stdout is a protocol stream (``mcp serve --stdio``): what
    the user's modules print while they are imported must not reach it.
    """
    if not enabled:
        yield
        return
    saved = None
    with contextlib.suppress(AttributeError, OSError, ValueError):  # a test's captured stdout
        if sys.stdout.fileno() == 1:
            sys.stdout.flush()
            saved = os.dup(1)
            os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        if saved is not None:
            sys.stderr.flush()
            os.dup2(saved, 1)
            os.close(saved)


def report_failure(failure: Failure, *, as_json: bool) -> str:
    """Write ``failure`` on stderr (traceback, usage, ``error: ...``); return its JSON object.

    The JSON text is ``{"error": {"type", "message", "exit_code"}}``, plus
    ``"traceback"`` when the user's code raised (or the command has a bug) and
    ``"usage"`` for a mistake in the command line.
    """
    trace = ""
    if failure.traceback_of is not None:
        trace = "".join(traceback.format_exception(failure.traceback_of))
        sys.stderr.write(trace)
    if failure.usage:
        sys.stderr.write(failure.usage)
    print(f"error: {failure.message}", file=sys.stderr)
    sys.stderr.flush()
    body: dict[str, Any] = {
        "type": failure.kind,
        "message": failure.message,
        "exit_code": failure.exit_code,
    }
    if trace:
        body["traceback"] = trace
    if failure.usage:
        body["usage"] = failure.usage
    return json.dumps({"error": body}) if as_json else ""
