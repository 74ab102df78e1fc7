"""Tools registered in the default registry when ``openprogram tools --module _cli_tools`` runs."""

from __future__ import annotations

from openprogram import function


@function(toolset=("files",))
def read_note(path: str) -> str:
    """Read a note.

    Args:
        path: Relative path of the note.
    """
    return path


@function(toolset=("files",), unsafe_in=("telegram",))
def delete_note(path: str) -> str:
    """Delete a note.

    Args:
        path: Relative path of the note.
    """
    return path


@function(defer=True)
def book_hotel(city: str) -> str:
    """Book a hotel room.

    Args:
        city: Where.
    """
    return city


@function(expose=False)
def internal_helper() -> str:
    """Python-only helper, never offered to a model."""
    return "ok"
