"""Deferred loading (L6): the catalog text and ``search_tools``, which ``tool_search`` uses.

Deferred tools cost the model one catalog line each instead of a schema. The
model calls ``tool_search`` to load the few it needs: ``"select:a,b"`` loads
exact names, anything else is scored by keywords over name, summary and
description. Search reads card metadata only. The runtime's ``tool_search``
tool adds the matches to ``Policy.loaded``, so the next resolution offers them
(importing lazy cards then) and their schemas join the next request.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence

from openprogram.exceptions import UserError
from openprogram.tools import Tool

__all__ = [
    "CATALOG_LINE_CHARS",
    "SELECT_PREFIX",
    "TOOL_SEARCH_NAME",
    "catalog_text",
    "search_tools",
]

TOOL_SEARCH_NAME = "tool_search"
"""Name of the tool that loads deferred tools."""
SELECT_PREFIX = "select:"
"""A query starting with this loads the comma-separated names that follow, exactly."""
CATALOG_LINE_CHARS = 160
"""Longest catalog line; longer one-liners are cut."""

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = frozenset(
    # one readable line of words; a list literal would take 23 lines
    "a an and are at be by for from how i in is it me my of on or the to what with".split()  # noqa: SIM905
)
"""Query words that carry no meaning for search (a query equal to a tool name still matches)."""
_MIN_PARTIAL = 3
"""Shortest query word that may match a longer word by prefix (``"hot"`` -> ``"hotels"``)."""

_Index = tuple[str, frozenset[str], frozenset[str], frozenset[str]]
_indexes: weakref.WeakKeyDictionary[Tool, tuple[str, str, _Index]] = weakref.WeakKeyDictionary()


def search_tools(query: str, tools: Sequence[Tool], max_results: int = 5) -> list[Tool]:
    """The tools of ``tools`` matching ``query``, best first (ties keep the given order).

    ``"select:a,b"`` returns exactly the named tools that exist, in that
    order, whatever ``max_results``. Otherwise each query word (common words
    like "a" or "of" aside) scores a tool by where it occurs — name (most),
    summary, description (least) — whole words above prefixes; a query equal
    to a tool's name puts it first; tools scoring nothing are left out. Only
    metadata is read: nothing is imported.

    Example:
        >>> from openprogram.tools import Tool
        >>> run = lambda args: None
        >>> ts = [Tool(name="get_weather", description="Current weather.", execute=run),
        ...       Tool(name="find_hotels", description="Hotels in a city.", execute=run)]
        >>> [t.name for t in search_tools("hotel", ts)]
        ['find_hotels']
        >>> [t.name for t in search_tools("select:get_weather", ts)]
        ['get_weather']

    Raises:
        UserError: ``max_results`` is not a positive integer.
    """
    if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
        raise UserError(
            f"search_tools: max_results must be a positive integer, got {max_results!r}"
        )
    text = query.strip()
    if text[: len(SELECT_PREFIX)].lower() == SELECT_PREFIX:
        return _select(text[len(SELECT_PREFIX) :], tools)
    terms = _words(text) - _STOP_WORDS
    if not text:
        return []
    whole = text.lower()
    scored = []
    for position, tool in enumerate(tools):
        score = _score(_index(tool), whole, terms)
        if score > 0:
            scored.append((-score, position, tool))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [tool for _, _, tool in scored[:max_results]]


def catalog_text(tools: Sequence[Tool]) -> str:
    """The system-prompt catalog of deferred tools: one instruction, then one line per tool.

    Returns ``""`` when there are no deferred tools.
    """
    if not tools:
        return ""
    lines = "\n".join(f"- {_catalog_line(tool)}" for tool in tools)
    return (
        "Deferred tools: these tools exist but their schemas are not loaded yet. Before calling "
        f'one, call {TOOL_SEARCH_NAME} with query "select:<name>[,<name>...]" (or keywords) to '
        f"load it.\n{lines}"
    )


def _select_names(text: str) -> list[str]:
    return list(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))


def _select(text: str, tools: Sequence[Tool]) -> list[Tool]:
    by_name = {tool.name: tool for tool in tools}
    return [by_name[name] for name in _select_names(text) if name in by_name]


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(_CAMEL.sub(r"\1 \2", text).lower()))


def _index(tool: Tool) -> _Index:
    summary, description = tool.summary or "", tool.description
    cached = _indexes.get(tool)
    if cached is not None and cached[0] == summary and cached[1] == description:
        return cached[2]
    index = (tool.name.lower(), _words(tool.name), _words(summary), _words(description))
    _indexes[tool] = (summary, description, index)
    return index


def _score(index: _Index, whole: str, terms: frozenset[str]) -> int:
    name, name_words, summary_words, description_words = index
    score = 100 if whole == name else 0
    for term in terms:
        partial = len(term) >= _MIN_PARTIAL
        if term in name_words:
            score += 10
        elif partial and term in name:
            score += 5
        score += _field_score(term, summary_words, 4, partial)
        score += _field_score(term, description_words, 2, partial)
    return score


def _field_score(term: str, words: frozenset[str], weight: int, partial: bool) -> int:
    if term in words:
        return weight
    if partial and any(word.startswith(term) for word in words):
        return weight // 2
    return 0


def _catalog_line(tool: Tool) -> str:
    line = " ".join(tool.one_liner.split())
    if len(line) > CATALOG_LINE_CHARS:
        line = line[: CATALOG_LINE_CHARS - 1].rstrip() + "…"
    return line
