"""A decision's options shown to the local model as functions it can call.

With ``exec(choices=...)`` the final reply must be a pick, ``{"call": name,
"args": {...}}`` (``ProviderRequest.answer_schema`` holds its schema). This
small model picks far better when the options look like what it was trained
on (functions) than when they are a menu in the prompt. So each option
becomes a function in the prompt and the grammar; a reply that calls one
(and no real tool) becomes the pick's text, which the decision layer reads
as usual.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from openprogram.messages import AssistantMessage, TextContent, ThinkingContent

__all__ = ["Pick", "as_pick", "pick_functions", "picks_of"]

_NO_ARGS: Mapping[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class Pick:
    """One option of a decision, as a function."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    """JSON Schema of the option's ``"args"``."""


def picks_of(schema: Mapping[str, Any] | None, taken: Iterable[str] = ()) -> tuple[Pick, ...]:
    """The options of a pick schema (``DecisionMenu.pick_schema``), minus names in ``taken``.

    An option named like an offered tool stays a menu entry only: as a function
    it could not be told apart from the tool.
    """
    if not schema or not isinstance(schema.get("anyOf"), list):
        return ()
    taken = set(taken)
    picks = []
    for option in schema["anyOf"]:
        props = option.get("properties") if isinstance(option, Mapping) else None
        call = props.get("call") if isinstance(props, Mapping) else None
        name = call.get("const") if isinstance(call, Mapping) else None
        if not isinstance(props, Mapping) or not isinstance(name, str) or name in taken:
            continue
        description = str(option.get("description") or "")
        picks.append(Pick(name, description, _with_defs(props.get("args") or _NO_ARGS, schema)))
    return tuple(picks)


def _with_defs(args: Mapping[str, Any], schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """``args`` with the pick schema's ``$defs`` if it refers to them: a function stands alone."""
    defs = schema.get("$defs")
    if not defs or "$ref" not in json.dumps(args):
        return args
    return {**args, "$defs": defs}


def pick_functions(picks: Sequence[Pick]) -> list[dict[str, Any]]:
    """Chat Completions function objects for ``picks``."""
    return [
        {"name": p.name, "description": p.description, "parameters": dict(p.parameters)}
        for p in picks
    ]


def as_pick(
    message: AssistantMessage, calls: Sequence[tuple[str, dict[str, Any]]], picks: Sequence[Pick]
) -> tuple[AssistantMessage | None, list[tuple[str, dict[str, Any]]]]:
    """Split a reply's calls: real tool calls, or else its first pick as a text answer.

    Returns:
        ``(answer, [])`` when the reply called options only: ``answer`` is the
        reply with its text set to the pick; otherwise ``(None, real_calls)``
        (picks beside real calls are dropped: the model picks again after
        seeing the results).
    """
    names = {p.name for p in picks}
    real = [c for c in calls if c[0] not in names]
    if real or not calls:
        return None, real
    name, args = calls[0]
    pick = {"call": name, "args": args} if args else {"call": name}
    thinking = [b for b in message.content if isinstance(b, ThinkingContent)]
    text = TextContent(json.dumps(pick, ensure_ascii=False))
    return replace(message, content=(*thinking, text), stop_reason="stop"), []
