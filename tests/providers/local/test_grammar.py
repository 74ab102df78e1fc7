"""The GBNF grammar the local provider sends: what each schema part becomes.

llama.cpp compiles and enforces it (the ``local_llm`` tests run it for real);
here the rules are checked as text, and strings against the grammar with the
small reader in ``_gbnf``.
"""

from __future__ import annotations

from typing import Any

import pytest

from openprogram.decision import DecisionMenu
from openprogram.providers.local._guards import ANSWER_GRAMMAR, answer_grammar, calls_grammar

from ._gbnf import accepts

WEATHER = {
    "name": "get_weather",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "units": {"enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}


def rules(grammar: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in grammar.strip().splitlines())


def test_auto_allows_text_and_a_list_of_calls_of_offered_tools() -> None:
    r = rules(calls_grammar([WEATHER], text=True))
    assert r["root"].endswith("| text")
    assert '"\\"get_weather\\""' in "".join(r.values())
    assert '"\\"celsius\\"" | "\\"fahrenheit\\""' in r.values()
    assert r["text"] == "[^\\[`\\x00-\\x20] [^\\x00]*"


def test_required_has_no_text_branch() -> None:
    root = rules(calls_grammar([WEATHER], text=False))["root"]
    assert "text" not in root


def test_a_required_property_comes_first_and_an_optional_one_may_follow() -> None:
    r = rules(calls_grammar([WEATHER], text=True))
    (args,) = [v for v in r.values() if v.startswith('"{" ws "\\"city\\""')]
    assert args.endswith('("," ws "\\"units\\"" ws ":" ws r0 ws)? "}"')


def test_the_number_of_calls_in_one_reply_is_capped() -> None:
    assert "{0,7}" in calls_grammar([WEATHER], text=True)


def test_recursive_refs_become_recursive_rules() -> None:
    node = {
        "name": "tree",
        "parameters": {
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "required": ["root"],
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                }
            },
        },
    }
    r = rules(calls_grammar([node], text=True))
    assert any("kids" in body for body in r.values())


def test_the_answer_grammar_cannot_open_a_call() -> None:
    assert rules(ANSWER_GRAMMAR)["root"] == "text"


def test_a_tool_without_arguments_takes_an_empty_object() -> None:
    none = {
        "name": "list_files",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    }
    r = rules(calls_grammar([none], text=True))
    assert r["empty"] == '"{" ws "}"'
    assert any('"\\"arguments\\"" ws ":" ws empty' in body for body in r.values())


# -- a decision's pick (ProviderRequest.answer_schema) -----------------------------------------

ORDER = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}},
    "required": ["order_id"],
    "additionalProperties": False,
}
REFUND = {"name": "refund", "description": "Refund the order.", "parameters": ORDER}
REPLY = {"name": "reply", "description": "Answer the customer.", "parameters": {}}
LOOKUP = {"name": "lookup_order", "parameters": ORDER}


def pick_schema() -> dict[str, Any]:
    """What ``DecisionMenu.pick_schema`` gives for a refund option and a no-argument reply."""
    return DecisionMenu.of(
        {"refund": refund, "reply": ("replied", "Answer the customer.")}
    ).pick_schema()


def refund(order_id: str) -> str:
    """Refund the order."""
    return f"refunded {order_id}"


VALID_PICKS = ['{"call": "refund", "args": {"order_id": "A-1"}}', '{"call":"reply"}']
BAD_PICKS = [
    '{"call": "cancel"}',  # no such option
    '{"call": "refund"}',  # its required args are missing
    '{"call": "reply", "args": {"order_id": "A-1"}}',  # an option without arguments
    "I would refund it.",  # prose is no pick
]


@pytest.mark.parametrize("pick", VALID_PICKS)
def test_the_answer_grammar_of_a_pick_schema_accepts_a_pick(pick: str) -> None:
    assert accepts(answer_grammar(pick_schema()), pick)


@pytest.mark.parametrize("pick", BAD_PICKS)
def test_the_answer_grammar_of_a_pick_schema_refuses_anything_else(pick: str) -> None:
    assert not accepts(answer_grammar(pick_schema()), pick)


def test_calls_with_a_pick_answer_take_calls_of_tools_and_options_or_the_pick() -> None:
    grammar = calls_grammar([LOOKUP, REFUND, REPLY], text=True, answer=pick_schema())
    assert accepts(grammar, '[{"name": "lookup_order", "arguments": {"order_id": "A-1"}}]')
    assert accepts(grammar, '[{"name": "refund", "arguments": {"order_id": "A-1"}}]')
    assert accepts(grammar, '[{"name": "reply", "arguments": {}}]')
    assert accepts(grammar, '{"name": "lookup_order", "arguments": {"order_id": "A-1"}}')
    for pick in VALID_PICKS:
        assert accepts(grammar, pick)
    for pick in BAD_PICKS:
        assert not accepts(grammar, pick)
    assert not accepts(grammar, '[{"name": "cancel", "arguments": {}}]')


def test_without_a_pick_answer_any_text_is_an_answer() -> None:
    grammar = calls_grammar([LOOKUP], text=True)
    assert accepts(grammar, "I would refund it.")
    assert accepts(grammar, '{"call": "cancel"}')
    assert not accepts(grammar, '[{"name": "cancel", "arguments": {}}]')


def test_two_tools_defining_the_same_name_each_get_their_own_definition() -> None:
    def tool(name: str, field: str) -> dict[str, Any]:
        item = {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}
        return {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {"item": {"$ref": "#/$defs/Item"}},
                "required": ["item"],
                "$defs": {"Item": item},
            },
        }

    grammar = calls_grammar([tool("stock", "sku"), tool("greet", "name")], text=True)
    assert accepts(grammar, '[{"name": "stock", "arguments": {"item": {"sku": "X-1"}}}]')
    assert accepts(grammar, '[{"name": "greet", "arguments": {"item": {"name": "Ann"}}}]')
    assert not accepts(grammar, '[{"name": "greet", "arguments": {"item": {"sku": "X-1"}}}]')
