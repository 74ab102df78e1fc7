"""A griffe extension for the API reference: ``Example:`` sections render as doctest examples.

Our docstrings (Google style) title their doctests ``Example:``; griffe's Google
parser knows only the plural ``Examples:`` and would otherwise render the
singular as an admonition of plain Markdown, where ``>>> [x]`` lines read as
link references. The source stays as written; only the reference's copy changes.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_SINGULAR = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)


class ExamplesSection(griffe.Extension):
    """Rename ``Example:`` section titles to ``Examples:`` in every loaded docstring."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite the object's docstring title before it is parsed."""
        if obj.docstring is not None:
            obj.docstring.value = _SINGULAR.sub(r"\1Examples:", obj.docstring.value)
