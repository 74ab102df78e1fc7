"""The GBNF grammar the local provider sends: what each schema part becomes.

llama.cpp compiles and enforces it (the ``local_llm`` tests run it for real);
here the rules are checked as text.
"""

from __future__ import annotations

from openprogram.providers.local._grammar import ANSWER_GRAMMAR, calls_grammar

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
