"""A GBNF grammar that lets the local model answer in text or call offered tools, and nothing else.

llama.cpp constrains sampling with a GBNF grammar sent in the request's
``grammar`` field. The grammar built here has two branches:

- **calls**: a JSON list of ``{"name": ..., "arguments": {...}}`` objects (one
  object alone is accepted too), where ``name`` is one of the offered tools and
  ``arguments`` follows that tool's JSON Schema; the reply ends after the list;
- **text**: anything that does not start with ``[`` or a code fence (a reply
  starting with ``{`` is text to the grammar, so that a JSON answer stays
  possible; the provider reads it as calls if it is calls).

So a reply can no longer name a tool that does not exist or break the call
format: the first character decides, and from then on only well-formed output
can be sampled. The schema subset covered is what tool schemas use: objects
(properties, required), arrays, strings, numbers, integers, booleans, null,
``enum``/``const``, ``anyOf``/``oneOf``, type lists and local ``$ref``\\s; a
schema part outside it (``pattern``, numeric bounds) constrains less, never more.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ANSWER_GRAMMAR", "MAX_CALLS", "answer_grammar", "calls_grammar"]

MAX_CALLS = 8
"""Most calls in one reply, unless the caller says otherwise (``calls_grammar(max_calls=)``)."""

_BASE = r"""
ws ::= [ \t\n]{0,8}
string ::= "\"" char* "\""
char ::= [^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
integer ::= "-"? ([0-9] | [1-9] [0-9]{1,15})
number ::= integer ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
empty ::= "{" ws "}"
object ::= "{" ws (string ws ":" ws value ws ("," ws string ws ":" ws value ws)*)? "}"
array ::= "[" ws (value ws ("," ws value ws)*)? "]"
text ::= [^\[`\x00-\x20] [^\x00]*
"""

ANSWER_GRAMMAR = "root ::= text\ntext ::= [^\\[{`\\x00-\\x20] [^\\x00]*\n"
"""A plain answer only: it cannot open a call, nor write one as JSON text (no leading ``{``).
Asked for an answer after repeating a call, this model wrote the call as its answer."""


def _literal(value: Any) -> str:
    """A GBNF string literal matching ``value`` written as compact JSON."""
    return json.dumps(json.dumps(value, ensure_ascii=False), ensure_ascii=False)


class _Builder:
    """Turns JSON Schemas into GBNF rules, naming each rule once."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.rules: dict[str, str] = {}
        self._defs = defs
        self._refs: dict[str, str] = {}

    def use_defs(self, defs: Mapping[str, Any]) -> None:
        """Resolve ``$ref``\\s against ``defs`` from now on (the next tool's own definitions).

        The rules made for references are forgotten too: two tools may each define
        an ``Item``, and one's rule must not constrain the other's arguments.
        """
        self._defs = defs
        self._refs = {}

    def rule(self, body: str) -> str:
        name = f"r{len(self.rules)}"
        self.rules[name] = body
        return name

    def schema(self, schema: Any) -> str:
        """The name of a rule (or a primitive's rule) matching ``schema``."""
        if not isinstance(schema, Mapping) or not schema:
            return "value"
        if "$ref" in schema:
            return self._ref(str(schema["$ref"]))
        if "const" in schema:
            return self.rule(_literal(schema["const"]))
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self.rule(" | ".join(_literal(v) for v in schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return self.rule(" | ".join(self.schema(s) for s in schema[key]))
        kind = schema.get("type")
        if isinstance(kind, list):
            return self.rule(" | ".join(self.schema({**schema, "type": k}) for k in kind))
        return self._typed(kind, schema)

    def _typed(self, kind: Any, schema: Mapping[str, Any]) -> str:
        if kind == "object" or (kind is None and "properties" in schema):
            return self._object(schema)
        if kind == "array":
            item = self.schema(schema.get("items"))
            return self.rule(f'"[" ws ({item} ws ("," ws {item} ws)*)? "]"')
        simple = {"string": "string", "integer": "integer", "number": "number"}
        if kind in simple:
            return simple[kind]
        return {"boolean": "boolean", "null": "null"}.get(str(kind), "value")

    def _object(self, schema: Mapping[str, Any]) -> str:
        props: Mapping[str, Any] = schema.get("properties") or {}
        if not props:
            # No arguments: an empty object (the model otherwise echoes the schema itself).
            return "object" if schema.get("additionalProperties") not in (False, None) else "empty"
        required = [p for p in props if p in set(schema.get("required") or ())]
        optional = [p for p in props if p not in required]
        pairs = {p: f'{_literal(p)} ws ":" ws {self.schema(props[p])} ws' for p in props}
        head = ' "," ws '.join(pairs[p] for p in required)
        tail = " ".join(f'("," ws {pairs[p]})?' for p in optional)
        if required:
            return self.rule(f'"{{" ws {head} {tail} "}}"')
        # No required property: the first one present needs no comma before it.
        starts = [
            " ".join([pairs[p], *(f'("," ws {pairs[q]})?' for q in optional[i + 1 :])])
            for i, p in enumerate(optional)
        ]
        return self.rule(f'"{{" ws ({" | ".join(f"({s})" for s in starts)})? "}}"')

    def _ref(self, ref: str) -> str:
        if ref not in self._refs:
            name = ref.rsplit("/", 1)[-1]
            target = self._defs.get(name)
            self._refs[ref] = rule = self.rule("value")  # reserve first: refs may recurse
            self.rules[rule] = self.schema(target) if target is not None else "value"
        return self._refs[ref]


def answer_grammar(schema: Mapping[str, Any]) -> str:
    """The GBNF grammar for a reply that is one JSON value following ``schema``."""
    builder = _Builder(_defs(schema))
    root = builder.schema(schema)
    return _grammar(f"root ::= {root}", builder)


def calls_grammar(
    tools: Sequence[Mapping[str, Any]],
    *,
    text: bool,
    answer: Mapping[str, Any] | None = None,
    max_calls: int = MAX_CALLS,
) -> str:
    """The GBNF grammar for a reply: calls of ``tools``, or (if ``text``) an answer.

    Args:
        tools: Chat Completions function objects (``name``, ``parameters``).
        text: Whether an answer is allowed (``tool_choice="auto"``).
        answer: JSON Schema the answer must follow (a decision's pick); ``None``: plain text.
        max_calls: The most calls one reply may hold (a greedy model can repeat a call).
    """
    builder = _Builder({})
    alternatives = []
    for tool in tools:
        params = tool.get("parameters") or {}
        builder.use_defs(_defs(params))
        args = builder.schema(params)
        head = f'"{{" ws "\\"name\\"" ws ":" ws {_literal(tool["name"])} ws "," ws'
        alternatives.append(f'{head} "\\"arguments\\"" ws ":" ws {args} ws "}}"')
    call = builder.rule(" | ".join(f"({a})" for a in alternatives))
    listed = f'"[" ws {call} ws ("," ws {call} ws){{0,{max_calls - 1}}} "]"'
    lines = f'{call} ("\\n" {call}){{0,{max_calls - 1}}}'
    calls = builder.rule(f"{listed} | {lines}")
    fenced = f'"```" "json"? "\\n" {calls} "\\n```"'
    if not text:
        final = lines
    elif answer is not None:
        builder.use_defs(_defs(answer))
        # Call objects one per line stay calls, as under "text": only a reply that
        # is no call must follow the answer's schema.
        final = f"{lines} | {builder.schema(answer)}"
    else:
        # A reply starting with "{" is text to the grammar (a JSON answer, say); the
        # provider still reads it as calls if it is calls.
        final = "text"
    return _grammar(f"root ::= {listed} | {fenced} | {final}", builder)


def _defs(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {**schema.get("$defs", {}), **schema.get("definitions", {})}


def _grammar(root: str, builder: _Builder) -> str:
    rules = "\n".join(f"{name} ::= {body}" for name, body in builder.rules.items())
    return f"{root}\n{rules}{_BASE}"
