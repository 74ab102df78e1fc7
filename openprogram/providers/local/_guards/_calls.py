"""Read the local model's reply: a plain answer, or a JSON list of calls (see ``_grammar``).

The provider sends no ``tools`` field to llama.cpp (the template lists the
functions from a template argument instead) and parses the reply here, so it
decides what a malformed reply becomes rather than getting an HTTP 500:

- the first visible character decides: ``[``, ``{`` or a code fence opens
  calls, anything else is an answer, streamed as it comes;
- calls are a JSON list (or objects one per line or comma-separated, or either
  in a fence); closing brackets left over after the last call are ignored; an
  identical call repeated in one reply runs once;
- a reply that opened calls but is not a whole list of calls of offered
  tools (it was cut at the token limit, say) is *broken*: the provider asks again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from openprogram.messages import AssistantMessage, Message, TextContent, ThinkingContent, ToolCall
from openprogram.providers._reply import new_call_id

__all__ = [
    "Broken",
    "CallScanner",
    "ParsedCalls",
    "fresh_calls",
    "opens_calls",
    "read_calls",
    "shape_reply",
    "trailing_calls",
]


def opens_calls(text: str) -> bool | None:
    """Whether a reply starting with ``text`` may be calls (``None``: not known yet).

    ``[`` and a code fence open calls; so may ``{`` (a bare call object), which
    is also how a JSON answer starts: ``read_calls`` tells them apart at the end.
    """
    head = text.lstrip()
    if not head:
        return None
    return head.startswith(("[", "{", "`"))


@dataclass(frozen=True, slots=True)
class ParsedCalls:
    """Calls read from a reply, in order, duplicates dropped."""

    calls: tuple[tuple[str, dict[str, Any]], ...]


@dataclass(frozen=True, slots=True)
class Broken:
    """A reply that opened calls but is not a list of calls of offered tools."""

    why: str


class CallScanner:
    """Finds each call object as soon as its closing brace streams in.

    Lets the provider stop a reply early: this model, decoding greedily, can
    repeat one call until the limit, and every token costs time on a CPU.
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._depth = 0
        self._level: int | None = None  # depth at which call objects open
        self._start = 0
        self._string = False
        self._escape = False
        self._pos = 0

    @property
    def consumed(self) -> int:
        """How many characters were fed so far."""
        return self._pos

    def feed(self, text: str) -> list[tuple[str, dict[str, Any]]]:
        """The calls completed by ``text``, as ``(name, arguments)``; malformed ones skipped."""
        found: list[tuple[str, dict[str, Any]]] = []
        for char in text:
            self._text.append(char)
            if self._string:
                if self._escape:
                    self._escape = False
                elif char == "\\":
                    self._escape = True
                elif char == '"':
                    self._string = False
            elif char == '"':
                self._string = True
            elif char in "[{":
                if self._level is None:
                    self._level = self._depth + (1 if char == "[" else 0)
                if char == "{" and self._depth == self._level:
                    self._start = self._pos
                self._depth += 1
            elif char in "]}":
                self._depth -= 1
                if char == "}" and self._depth == self._level:
                    found.extend(_one_call("".join(self._text[self._start : self._pos + 1])))
            self._pos += 1
        return found


def _one_call(text: str) -> list[tuple[str, dict[str, Any]]]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return []
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        arguments = value.get("arguments", {})
        if isinstance(arguments, dict):
            return [(value["name"], arguments)]
    return []


def _unfence(text: str) -> str:
    body = text.strip()
    if body.startswith("```"):
        body = body[3:]
        body = body[4:] if body.startswith("json") else body
        body = body.removesuffix("```")
    return body.strip()


def _objects(body: str) -> list[Any] | str:
    """The JSON values of ``body``: one list, or objects one after another; or why not.

    Closing brackets after the last value are left over from a list the model
    never opened (seen: call objects separated by commas, then a stray ``}``).
    """
    decoder = json.JSONDecoder()
    values: list[Any] = []
    pos = 0
    while pos < len(body):
        if values and not body[pos:].strip(" \t\r\n]}"):
            break
        try:
            value, end = decoder.raw_decode(body, pos)
        except json.JSONDecodeError as exc:
            return f"not valid JSON ({exc.msg} at char {exc.pos})"
        values.extend(value if isinstance(value, list) else [value])
        pos = end
        while pos < len(body) and body[pos] in " \t\r\n,":
            pos += 1
    return values


def read_calls(text: str, offered: Collection[str]) -> ParsedCalls | Broken | None:
    """Parse a calls reply; every call must name an offered tool and carry an object.

    Returns ``None`` for a reply that starts with ``{`` but is not call objects
    (a JSON answer, or a decision's ``{"call": ...}`` pick): it is text. A reply
    that opens with a call object of an offered tool is calls, broken if the
    rest does not parse (cut at the limit, say), never text.
    """
    body = _unfence(text)
    values = _objects(body)
    named = not isinstance(values, str) and all(isinstance(v, dict) and "name" in v for v in values)
    if text.lstrip().startswith("{") and not named and not _opens_call(body, offered):
        return None
    if isinstance(values, str):
        return Broken(values)
    calls: list[tuple[str, dict[str, Any]]] = []
    for value in values:
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            return Broken(f"a call is not an object with a name: {json.dumps(value)[:200]}")
        name, arguments = value["name"], value.get("arguments", {})
        if name not in offered:
            return Broken(f"{name!r} is not an offered function")
        if not isinstance(arguments, dict):
            return Broken(f"the arguments of {name!r} are not an object")
        if (name, arguments) not in calls:
            calls.append((name, arguments))
    if not calls:
        return Broken("the list holds no call")
    return ParsedCalls(tuple(calls))


_CALL_HEAD = re.compile(r'\{\s*"name"\s*:\s*"([^"\\]+)"\s*,\s*"arguments"\s*:')


def _opens_call(body: str, offered: Collection[str]) -> bool:
    """Whether ``body`` opens with a call object of an offered tool: calls, even if broken."""
    head = _CALL_HEAD.match(body)
    return head is not None and head.group(1) in offered


def _key(name: str, arguments: Mapping[str, Any], required: Mapping[str, Sequence[str]]) -> str:
    keys = required.get(name) or sorted(arguments)
    return json.dumps([name, [arguments.get(k) for k in keys]], sort_keys=True, default=str)


def fresh_calls(
    calls: Sequence[tuple[str, dict[str, Any]]],
    history: Iterable[Message],
    tools: Iterable[Mapping[str, Any]],
) -> list[tuple[str, dict[str, Any]]]:
    """``calls`` without those that repeat a call already made in ``history``.

    With the functions listed after a result, this small model tends to call
    the same function again (with the same city, say) instead of answering. A
    call repeats an earlier one when it names the same tool with the same values
    of the tool's required arguments (of all its arguments, if none is required).
    """
    required: dict[str, list[str]] = {}
    for spec in tools:
        params = spec.get("parameters") or {}
        required[str(spec.get("name"))] = [str(k) for k in params.get("required") or ()]
    made = {
        _key(c.name, c.arguments, required)
        for m in history
        if isinstance(m, AssistantMessage)
        for c in m.tool_calls
    }
    return [(n, a) for n, a in calls if _key(n, a, required) not in made]


def shape_reply(
    message: AssistantMessage, calls: Iterable[tuple[str, dict[str, Any]]], prose: str = ""
) -> AssistantMessage:
    """``message`` with its text replaced by ``prose`` (if any) and ``calls`` (thinking kept)."""
    thinking = [b for b in message.content if isinstance(b, ThinkingContent)]
    text = [TextContent(prose)] if prose.strip() else []
    blocks = [ToolCall(id=new_call_id(), name=n, arguments=a) for n, a in calls]
    return replace(message, content=(*thinking, *text, *blocks), stop_reason="tool_calls")


_TRAILING_FENCE = re.compile(r"```(?:json)?[ \t]*\n(?P<body>[\s\S]*?)\n?```\s*$")


def trailing_calls(text: str, offered: Collection[str]) -> tuple[str, ParsedCalls] | None:
    """Calls a plain answer ends with, as a fenced JSON block: ``(prose before it, calls)``.

    A larger model often introduces its calls ("To plan a trip, call plan_trip:")
    and then writes them in a fence. Only a fence that closes the reply and
    holds nothing but calls of offered functions counts; anything else is text.
    """
    found = _TRAILING_FENCE.search(text)
    if found is None:
        return None
    parsed = read_calls(found.group("body"), offered)
    if not isinstance(parsed, ParsedCalls):
        return None
    return text[: found.start()].rstrip(), parsed
