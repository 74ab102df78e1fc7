"""What can go wrong in a command, and the exit code each kind of failure gets.

| failure | exit code |
|---|---|
| ``UsageError`` (the command line), any other ``UserError`` (a bad target, arguments the function's schema rejects, no provider configured, a policy) | 2 |
| ``UserCodeError``: the user's code raised (importing it or running it), any exception, ``BaseException`` subclasses such as ``asyncio.CancelledError`` included | 1 |
| another ``OpenProgramError`` raised by the command itself, e.g. a result with no JSON form (errors the library raises through the user's code count as that code failing) | 1 |
| ``KeyboardInterrupt`` | 130 |
| ``SystemExit`` raised by the user's code (``sys.exit(n)``) | ``n`` (``None`` → 0, text → 1) |
| anything else: a bug of the command itself (reported with its traceback) | 1 |
"""  # noqa: E501 - the table reads best with one row per line

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from openprogram.exceptions import ConfigurationError, OpenProgramError, UserError

__all__ = [
    "Failure",
    "UsageError",
    "UserCodeError",
    "describe_failure",
    "error_line",
    "run_user_code",
    "safe_str",
]

T = TypeVar("T")


class UsageError(UserError):
    """The command line itself is wrong (an unknown option, a missing argument): exit 2."""

    def __init__(self, message: str, *, usage: str | None = None) -> None:
        super().__init__(message)
        self.usage = usage
        """The usage line(s) of the command that was being parsed, if any."""


class UserCodeError(Exception):
    """The user's code raised (while importing it or running it): traceback, exit 1."""

    def __init__(self, error: BaseException, where: str) -> None:
        super().__init__(f"{where}: {error_line(error)}")
        self.error = error
        """What the user's code raised."""
        self.where = where
        """What the command was doing, e.g. ``importing mypkg.flows``."""


def run_user_code(where: str, call: Callable[[], T]) -> T:
    """``call()``; whatever it raises is the user's code failing (``UserCodeError``).

    A ``ConfigurationError`` (no provider, requests blocked) keeps its exit code 2;
    ``KeyboardInterrupt`` and ``SystemExit`` pass through unchanged.
    """
    try:
        return call()
    except (ConfigurationError, KeyboardInterrupt, SystemExit):
        raise
    # Anything else the user's code raised, BaseException subclasses such as
    # asyncio.CancelledError included, is reported with its traceback and exit 1.
    except BaseException as exc:
        raise UserCodeError(exc, where) from exc


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """How one failure is reported: on stderr, in the ``--json`` error object, as the exit code."""

    kind: str
    """The error's type name, e.g. ``"ValueError"`` or ``"UsageError"``."""
    message: str
    """One line (or a few) saying what went wrong and how to fix it."""
    exit_code: int
    """The process exit code."""
    traceback_of: BaseException | None = None
    """The exception whose traceback is shown (the user's code failing, or a bug)."""
    usage: str | None = None
    """The usage line(s) of the command, for command-line mistakes."""


def describe_failure(exc: BaseException) -> Failure:
    """The report and exit code for ``exc`` (see the module docstring's table)."""
    if isinstance(exc, UserCodeError):
        cause = exc.error
        message = f"{exc.where}: {error_line(cause)}"
        return Failure(kind=type(cause).__name__, message=message, exit_code=1, traceback_of=cause)
    if isinstance(exc, UsageError):
        return Failure(kind="UsageError", message=str(exc), exit_code=2, usage=exc.usage)
    if isinstance(exc, UserError):
        return Failure(kind=type(exc).__name__, message=str(exc), exit_code=2)
    if isinstance(exc, OpenProgramError):
        return Failure(kind=type(exc).__name__, message=str(exc), exit_code=1)
    if isinstance(exc, KeyboardInterrupt):
        return Failure(kind="KeyboardInterrupt", message="interrupted", exit_code=130)
    if isinstance(exc, SystemExit):
        return _exit_failure(exc)
    message = f"internal error: {error_line(exc)}"
    return Failure(kind=type(exc).__name__, message=message, exit_code=1, traceback_of=exc)


def _exit_failure(exc: SystemExit) -> Failure:
    """``sys.exit(...)`` in the user's code: Python's own rules for the exit code."""
    code = exc.code
    status = 0 if code is None else code if isinstance(code, int) else 1
    return Failure(
        kind="SystemExit",
        message=f"the program called sys.exit({code!r}) before returning a result",
        exit_code=status,
    )


def error_line(error: BaseException) -> str:
    """``"ValueError: bad value"``, or just the type name when the error has no message."""
    text = safe_str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def safe_str(error: BaseException) -> str:
    """``str(error)``, or a note when the error's own ``__str__`` raises."""
    try:
        return str(error)
    # A user-defined __str__ that raises must not hide the failure being reported.
    except Exception as exc:  # noqa: BLE001 - any error of a user's __str__
        return f"<str() of the error raised {type(exc).__name__}>"
