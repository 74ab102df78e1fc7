"""search_tools() and catalog_text(): exact selection, keyword scoring, the catalog lines."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprogram.exceptions import UserError
from openprogram.gates import catalog_text, search_tools
from openprogram.registry import LazyTool
from openprogram.testing.strategies import tool_lists
from openprogram.tools import Tool


def _run(args: Any) -> str:
    return "ok"


def _tool(name: str, description: str = "", **options: Any) -> Tool:
    return Tool(name=name, description=description or name, execute=_run, **options)


TOOLS = [
    _tool("get_weather", "Current weather for a city.\n\nUses the met office."),
    _tool("find_hotels", "Search hotels in a city by price.", summary="Hotels near a place"),
    _tool("book_flight", "Book a flight between two airports."),
    _tool("weatherHistory", "Past temperatures and rain."),
    _tool("send_mail", "Send an e-mail."),
]


def _names(tools: list[Tool]) -> list[str]:
    return [t.name for t in tools]


def test_select_loads_exact_names_in_the_order_given() -> None:
    assert _names(search_tools("select:send_mail,get_weather", TOOLS)) == [
        "send_mail",
        "get_weather",
    ]
    assert _names(search_tools("  SELECT: book_flight , nope,book_flight ", TOOLS)) == [
        "book_flight"
    ]
    assert search_tools("select:", TOOLS) == []


def test_select_is_not_capped_by_max_results() -> None:
    query = "select:" + ",".join(_names(TOOLS))
    assert _names(search_tools(query, TOOLS, max_results=1)) == _names(TOOLS)


def test_keywords_rank_name_above_summary_above_description() -> None:
    assert _names(search_tools("weather", TOOLS)) == ["get_weather", "weatherHistory"]
    assert _names(search_tools("hotels", TOOLS)) == ["find_hotels"]
    assert _names(search_tools("city", TOOLS)) == ["get_weather", "find_hotels"]
    assert _names(search_tools("near", TOOLS)) == ["find_hotels"]  # summary only
    assert _names(search_tools("history of weather", TOOLS))[0] == "weatherHistory"


def test_an_exact_name_query_comes_first() -> None:
    tools = [_tool("mail_log", "Everything about send mail."), _tool("send_mail", "Send it.")]
    assert _names(search_tools("send_mail", tools))[0] == "send_mail"


def test_prefixes_of_three_letters_or_more_match() -> None:
    assert _names(search_tools("hot", TOOLS)) == ["find_hotels"]
    assert search_tools("ho", TOOLS) == []


def test_common_words_do_not_match() -> None:
    assert search_tools("of the", TOOLS) == []
    assert _names(search_tools("a flight to the airports", TOOLS)) == ["book_flight"]
    tools = [_tool("to", "A tool named like a stop word.")]
    assert search_tools("to", tools) == tools


def test_no_words_or_no_match_find_nothing() -> None:
    assert search_tools("", TOOLS) == []
    assert search_tools("  !!! ", TOOLS) == []
    assert search_tools("submarine", TOOLS) == []


def test_max_results_caps_keyword_matches_and_must_be_positive() -> None:
    assert len(search_tools("a city the", TOOLS, max_results=2)) == 2
    for bad in (0, -1, True, 2.5):
        with pytest.raises(UserError, match="max_results must be a positive integer"):
            search_tools("weather", TOOLS, max_results=bad)  # type: ignore[arg-type]


def test_search_reads_lazy_card_metadata_without_importing() -> None:
    card = LazyTool(
        name="geo", target="search_test_never_imported:tool", description="Geocode an address."
    )
    assert search_tools("address", [card]) == [card]
    assert search_tools("select:geo", [card]) == [card]
    assert "search_test_never_imported" not in sys.modules
    assert not card.is_loaded


@given(tool_lists(), st.text(max_size=20), st.integers(min_value=1, max_value=6))
def test_search_is_deterministic_and_finds_only_given_tools(
    tools: list[Tool], query: str, limit: int
) -> None:
    found = search_tools(query, tools, limit)
    assert found == search_tools(query, list(tools), limit)
    assert all(any(t is g for g in tools) for t in found)
    assert len(found) == len({t.name for t in found}) <= limit


def test_catalog_text_is_one_instruction_then_one_line_per_tool() -> None:
    text = catalog_text(TOOLS[:2])
    first, *lines = text.split("\n")
    assert "tool_search" in first
    assert "select:" in first
    assert lines == [
        "- get_weather: Current weather for a city.",
        "- find_hotels: Hotels near a place",
    ]
    assert catalog_text([]) == ""


def test_catalog_lines_are_single_lines_and_cut_when_long() -> None:
    long = _tool("essay", "word " * 100)
    spread = _tool("spread", summary="one\ntwo   three")
    lines = catalog_text([long, spread]).split("\n")[1:]
    assert len(lines) == 2
    assert len(lines[0]) <= 2 + 160
    assert lines[0].endswith("…")
    assert lines[1] == "- spread: one two three"
