"""Decisions, the ``choices=`` side of one exec: the menu, reading a pick, one re-ask, running it.

``DecisionMenu`` renders the options into the request and reads and runs the
model's pick; ``DecisionTurns`` judges each final reply and grants one re-ask.
The public module is ``openprogram.decision``, which re-exports these (and
``make``, a decision with no work phase, from ``_make``).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from openprogram import _threads
from openprogram._tool_types import quoted, shortened, truncate
from openprogram.context import use_current_frame, use_current_runtime
from openprogram.exceptions import DecisionError, ValidationFailedError
from openprogram.messages import AssistantMessage, UserMessage
from openprogram.schema import ArgumentsError, json_schema_violations
from openprogram.structured._choices import Choice, ChoiceKind, normalize_choices
from openprogram.structured._parse import iter_json_values
from openprogram.structured._pick_schema import pick_schema
from openprogram.structured._render import render_params
from openprogram.tools import Tool, ToolContext

__all__ = [
    "Choice",
    "ChoiceKind",
    "DecisionMenu",
    "DecisionTurns",
    "PickError",
    "Picked",
    "Reask",
]


@dataclass(frozen=True, slots=True)
class Picked:
    """A valid pick: the option and its validated arguments."""

    choice: Choice
    """The option the model picked."""
    arguments: Mapping[str, Any]
    """Arguments ready to use: converted keyword arguments, or the schema option's fields."""


@dataclass(frozen=True, slots=True)
class Reask:
    """A bad pick: send ``message`` and let the model pick again (once)."""

    message: UserMessage
    """Says what was wrong and how the pick must look."""


_MAX_PROBLEM = 2_000
"""A re-ask's problem text is capped: it quotes what the model sent."""


class PickError(ValueError):
    """A reply's pick is missing or invalid; ``.problem`` says what, for the re-ask."""

    def __init__(self, problem: str) -> None:
        problem = truncate(problem, _MAX_PROBLEM)  # it quotes the model's own strings
        super().__init__(problem)
        self.problem = problem


@dataclass(frozen=True, slots=True)
class DecisionMenu:
    """The normalised options of one decision: render, parse a pick, run it."""

    choices: tuple[Choice, ...]
    """The options, in the order given."""

    @classmethod
    def of(cls, options: Any) -> DecisionMenu:
        """Normalise ``choices=``: a dict ``{name: handler}``, a list, or a ``DecisionMenu``.

        Raises:
            UserError: The options are empty, of no known form, or have clashing names.
            SchemaError: A function option's signature cannot become a schema.
        """
        if isinstance(options, DecisionMenu):
            return options
        return cls(normalize_choices(options))

    @property
    def names(self) -> list[str]:
        """Option names, in order."""
        return [c.name for c in self.choices]

    def get(self, name: str) -> Choice | None:
        """The option called ``name``, if there is one."""
        return next((c for c in self.choices if c.name == name), None)

    def render(self) -> str:
        """The menu text added to the request: the options and the exact pick format."""
        lines = ["Options (finish your reply by picking exactly one):"]
        for choice in self.choices:
            signature, notes = render_params(choice.parameters)
            head = f"- {_quoted(choice.name)}" + (f"({signature})" if signature else "")
            lines.append(f"{head}: {choice.description}" if choice.description else head)
            lines.extend(f"    {note}" for note in notes)
        lines.append(
            'End your reply with your pick as one JSON object: {"call": "<option>", "args": {...}}'
        )
        lines.append('("args" holds the option\'s arguments; leave it out when there are none.)')
        return "\n".join(lines)

    def pick_schema(self) -> dict[str, Any]:
        """JSON Schema of a pick written as the whole reply: one object per option.

        Options' ``$defs`` sit at its root, where their ``$ref``\\s resolve (``_pick_schema``).
        """
        return pick_schema(self.choices)

    def pick(self, text: str) -> Picked:
        """Find and validate the pick in a reply.

        Raises:
            PickError: With ``.problem`` saying what was wrong.
        """
        name, args = _parse_pick(text)
        choice = self.get(name)
        if choice is None:
            options = ", ".join(repr(n) for n in self.names)
            raise PickError(f"unknown option {quoted(name)}; the options are {options}")
        return Picked(choice, _validate(choice, args))

    async def run(self, picked: Picked, runtime: Any, *, idempotency_key: str | None = None) -> Any:
        """Carry out a pick: run the function, or return the value or the fields.

        Args:
            picked: A valid pick from ``pick``.
            runtime: The runtime to inject and to make current while a function runs.
            idempotency_key: The pick's ``ToolContext.idempotency_key`` (a durable run's).
        """
        choice = picked.choice
        if choice.kind == "value":
            return choice.value
        if choice.kind == "schema":
            return {"decision": choice.name, **picked.arguments}
        # Like a tool the model called, a picked function is not part of the agentic body
        # that offered it: its execs get no agentic system prompt (an agentic pick sets its own).
        with use_current_runtime(runtime), use_current_frame(None):
            if choice.tool is not None:
                return await _run_tool(
                    choice, choice.tool, picked.arguments, runtime, idempotency_key
                )
            return await _run_function(choice, picked.arguments, runtime, idempotency_key)


class DecisionTurns:
    """The decision side of one exec: the menu text, and one re-ask on a bad pick."""

    def __init__(self, menu: DecisionMenu) -> None:
        """Prepare the turns for ``menu``."""
        self.menu = menu
        self._reasks_left = 1
        self._reasked = False

    @property
    def instructions(self) -> str:
        """Text to add to the user's request."""
        return self.menu.render()

    def last_chance(self) -> None:
        """No re-ask is left (e.g. at the iteration cap): the next bad pick raises."""
        self._reasks_left = 0

    def judge(self, message: AssistantMessage) -> Picked | Reask:
        """Judge a final reply (one that calls no tool).

        Raises:
            DecisionError: The pick is bad and the one re-ask was already spent.
        """
        text = message.text
        try:
            return self.menu.pick(text)
        except PickError as exc:
            problem = exc.problem
        names = ", ".join(repr(n) for n in self.menu.names)
        if not self._reasks_left:
            after = "even after one re-ask" if self._reasked else "and no re-ask was left"
            raise DecisionError(
                f"the model did not pick a valid option, {after}: {problem} "
                f"(options: {names}; last reply: {text!r:.300})",
                problem=problem,
                reply=text,
            )
        self._reasks_left -= 1
        self._reasked = True
        return Reask(
            UserMessage(
                f"Your pick could not be used: {problem}\nEnd your reply with one JSON object "
                f'{{"call": "<option>", "args": {{...}}}} naming one of: {names}.'
            )
        )


# -- parsing and validating a pick -----------------------------------------------------------


def _parse_pick(text: str) -> tuple[str, dict[str, Any]]:
    picks = [v for v in iter_json_values(text, "{") if isinstance(v, dict) and "call" in v]
    if not picks:
        raise PickError('no pick was found: the reply must end with a JSON object {"call": ...}')
    pick = picks[-1]
    name = pick["call"]
    if not isinstance(name, str):
        raise PickError(
            f'"call" must be the option name as a string, got {shortened(json.dumps(name))}'
        )
    args = pick.get("args", pick.get("arguments"))
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise PickError(
            f'"args" of option {quoted(name)} must be a JSON object of arguments, got '
            f"{shortened(json.dumps(args))}"
        )
    return name, args


def _validate(choice: Choice, args: dict[str, Any]) -> Mapping[str, Any]:
    if choice.function_schema is not None:
        try:
            return choice.function_schema.validate(args)
        except ArgumentsError as exc:
            raise PickError(_invalid(choice, exc.violations)) from exc
    if choice.output is not None:
        try:
            value = choice.output.validate(args)
        except ValidationFailedError as exc:
            raise PickError(_invalid(choice, exc.violations)) from exc
        return dict(choice.output.dump(value))
    if choice.kind == "value" and args:
        raise PickError(
            f"option {choice.name!r} takes no arguments, got "
            f"{shortened(', '.join(map(quoted, args)))}"
        )
    violations = json_schema_violations(dict(choice.parameters), args)
    if violations:
        raise PickError(_invalid(choice, violations))
    return args


def _invalid(choice: Choice, violations: Any) -> str:
    lines = "\n".join(f"- {v}" for v in violations)
    return f"invalid arguments for option {choice.name!r}:\n{lines}"


# -- running a pick --------------------------------------------------------------------------


async def _run_function(
    choice: Choice, arguments: Mapping[str, Any], runtime: Any, idempotency_key: str | None
) -> Any:
    schema, fn = choice.function_schema, choice.fn
    # function options always carry both
    assert schema is not None
    assert fn is not None
    kwargs = dict(arguments)
    if schema.runtime_param is not None:
        kwargs[schema.runtime_param] = runtime
    if schema.context_param is not None:
        kwargs[schema.context_param] = ToolContext(
            call_id="decision",
            tool_name=schema.name,  # the function's real name, as gates and approval saw it
            runtime=runtime,
            deps=getattr(runtime, "deps", None),
            idempotency_key=idempotency_key,
        )
    if schema.is_async:
        return await fn(**kwargs)
    value = await _threads.run_in_thread(fn, **kwargs)
    return await value if inspect.isawaitable(value) else value


async def _run_tool(
    choice: Choice,
    tool: Tool,
    arguments: Mapping[str, Any],
    runtime: Any,
    idempotency_key: str | None,
) -> Any:
    context = ToolContext(
        call_id="decision",
        tool_name=tool.name,
        runtime=runtime,
        deps=getattr(runtime, "deps", None),
        idempotency_key=idempotency_key,
    )
    result = await tool.execute(arguments, context)
    if result.is_error:
        raise DecisionError(
            f"option {choice.name!r} was picked, but running tool {tool.name!r} failed: "
            f"{result.content}",
            problem=result.content,
        )
    return result.value


def _quoted(name: str) -> str:
    return name if name.isidentifier() else json.dumps(name)
