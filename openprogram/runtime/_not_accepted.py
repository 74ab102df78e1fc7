"""``NotAccepted[Never]``: the type no value has, added to exec's keyword types for short errors.

Each keyword option of ``exec`` (and ``async_exec``, ``stream``, ``send``,
``conversation``) is typed ``<its type> | NotAccepted[Never]``, and the last
overloads of ``exec`` type any other keyword ``NotAccepted[Never]`` (see
``_unmatched.py``). No value fits ``NotAccepted[Never]``, so what a call may
pass is unchanged; but with its argument erased (``NotAccepted[Any]``) every
value fits it, and mypy, finding no overload that takes a call, checks the
call against the first overload whose erased parameters fit it and reports
each argument that does not fit, on its own line, instead of listing every
overload with all of its keywords. Every overload carries the same keyword
types, so an argument typed ``Any`` never makes the answer ``Any``.
"""

from __future__ import annotations

from typing import Never, Protocol, TypeAlias, TypeVar

__all__ = ["NotAccepted", "Refused"]

_Size_co = TypeVar("_Size_co", bound=int, covariant=True)


class NotAccepted(Protocol[_Size_co]):
    """``NotAccepted[Never]`` is a type no value has: a value's ``__sizeof__`` returns an int."""

    def __sizeof__(self) -> _Size_co: ...


Refused: TypeAlias = NotAccepted[Never]
"""The type of a keyword no call may pass, and the part of every keyword's type no value fits."""
