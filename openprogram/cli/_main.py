"""``main``: parse the command line, run the command, report the outcome with its exit code."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from openprogram.cli._errors import describe_failure
from openprogram.cli._json import dumps_result
from openprogram.cli._output import one_object_stdout, report_failure
from openprogram.cli._parser import Shown, parse_command_line, wants_json

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code.

    With ``--json`` stdout holds exactly one JSON object whatever happens (see
    ``docs/cli.md``); when stdout is the process's own, it stays pointed at stderr
    after this returns, so that nothing printed later (a thread, an ``atexit``
    handler) follows the object: call it as the last thing a process does.

    Args:
        argv: The arguments after the program name (default ``sys.argv[1:]``).
    """
    words = list(sys.argv[1:] if argv is None else argv)
    as_json = wants_json(words)
    with one_object_stdout(as_json) as out:
        code, text = _outcome(words, as_json=as_json)
        if as_json:
            out.write(text + "\n")
            out.flush()
    return code


def _outcome(words: Sequence[str], *, as_json: bool) -> tuple[int, str]:
    """Run the command; return the exit code and, with ``as_json``, the one object's text."""
    try:
        command, args = parse_command_line(words)
        result = command.run(args)
        return 0, dumps_result({} if result is None else result) if as_json else ""
    except Shown as shown:
        if not as_json:
            sys.stdout.write(shown.text)
        return 0, dumps_result(shown.obj)
    # Every failure, BaseException subclasses included (SystemExit from the user's code,
    # CancelledError, KeyboardInterrupt), gets a report and an exit code: --json keeps its
    # promise of one object, and the table in _errors says which code.
    except BaseException as exc:  # noqa: BLE001 - reported and given an exit code, never lost
        failure = describe_failure(exc)
        return failure.exit_code, report_failure(failure, as_json=as_json)
