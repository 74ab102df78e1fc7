"""What the command prints when things go wrong, and the one-JSON-object rule of ``--json``.

With ``--json`` stdout carries exactly one JSON object, whatever happens:
``{"output": ...}`` (plus run facts) or ``{"error": ...}``. Everything else
printed while the command runs, by the user's code or by libraries (even
from C code or child processes: the file descriptor is redirected, not just
``sys.stdout``), goes to stderr.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Iterator
from typing import Any

__all__ = ["UserCodeError", "print_error", "stdout_to_stderr"]


class UserCodeError(Exception):
    """The user's code raised (while importing it or running it): traceback, exit 1."""

    def __init__(self, error: BaseException, where: str) -> None:
        super().__init__(f"{where}: {type(error).__name__}: {error}")
        self.error = error
        """What the user's code raised."""
        self.where = where
        """What the command was doing, e.g. ``importing mypkg.flows``."""


@contextlib.contextmanager
def stdout_to_stderr(enabled: bool) -> Iterator[None]:
    """Send everything written to stdout to stderr inside the block (``--json``)."""
    if not enabled:
        yield
        return
    saved = _redirect_fd()
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        if saved is not None:
            sys.stderr.flush()
            os.dup2(saved, 1)
            os.close(saved)


def _redirect_fd() -> int | None:
    """Point file descriptor 1 at stderr when ``sys.stdout`` is it; returns the saved one."""
    try:
        if sys.stdout.fileno() != 1:
            return None
    except (AttributeError, OSError, ValueError):  # a captured or replaced stdout (tests)
        return None
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    return saved


def print_error(
    kind: str, message: str, code: int, *, as_json: bool, error: BaseException | None = None
) -> int:
    """Report a failure on stderr (with the traceback of ``error``), and as JSON on stdout."""
    text = ""
    if error is not None:
        text = "".join(traceback.format_exception(error))
        sys.stderr.write(text)
    print(f"error: {message}", file=sys.stderr)
    if as_json:
        body: dict[str, Any] = {"type": kind, "message": message, "exit_code": code}
        if text:
            body["traceback"] = text
        print(json.dumps({"error": body}))
    return code
