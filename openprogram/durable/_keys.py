"""Positions in a run tree as journal keys: ``(1, 0, 0, 2, 1)`` is ``"1.0/0/2.1"``.

A position is the frame's ``path`` (``openprogram.context``): a top-level exec
is ``()``; call ``k`` of the reply to model turn ``t`` of exec ``P`` is
``P + (t, k)``; the ``i``-th exec started inside a call is ``call + (i,)``.
So the numbers come in threes, turn, call, exec: a key's length says what it
names (a multiple of 3: an exec; one more: a model turn of it; two more: a
call). The text writes a turn and its call as ``t.k`` and an exec index after
a ``/``: ``"1.0/0/2.1"`` is call 1 of turn 2 of the first exec started inside
call 0 of turn 1 of the root exec; ``"1.0/0/2"`` is that turn; ``""`` the root.
"""

from __future__ import annotations

from typing import Literal

from openprogram.exceptions import UserError

__all__ = ["idempotency_key", "key_kind", "parse_path", "path_text"]


def path_text(path: tuple[int, ...]) -> str:
    """The text of a position (``"1.0/0/2.1"``; ``""`` for the root exec)."""
    parts: list[str] = []
    for index, number in enumerate(path):
        place = index % 3
        if place == 0:
            parts.append(f"/{number}" if index else str(number))
        elif place == 1:
            parts.append(f".{number}")
        else:
            parts.append(f"/{number}")
    return "".join(parts)


def parse_path(text: str) -> tuple[int, ...]:
    """The position a text names (the inverse of ``path_text``).

    Raises:
        UserError: The text is not a position (the message shows the form).
    """
    if not text:
        return ()
    numbers: list[int] = []
    try:
        for group in text.split("/"):
            numbers.extend(int(part) for part in group.split("."))
    except ValueError:
        raise UserError(_not_a_path(text)) from None
    if path_text(tuple(numbers)) != text:
        raise UserError(_not_a_path(text))
    return tuple(numbers)


def key_kind(path: tuple[int, ...]) -> Literal["exec", "turn", "call"]:
    """What a position names, by its length."""
    return ("exec", "turn", "call")[len(path) % 3]


def idempotency_key(run_id: str, key: str) -> str:
    """``ToolContext.idempotency_key`` of the call at ``key`` (its path as text) of a run."""
    return f"{run_id}:{key}"


def _not_a_path(text: str) -> str:
    return (
        f"{text!r} is not a position in a run tree: write a call as turn.call, with the "
        "exec index inside a call after a '/', e.g. '1.0' or '1.0/0/2.1' (a PendingCall's path)"
    )
