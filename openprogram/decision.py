"""Next-step decisions: the model's closing reply picks one option (seed 000).

``runtime.exec(prompt, choices=options)`` lets the model work first (tools as
usual); its final reply must end with ``{"call": name, "args": {...}}``
naming one option. ``make(prompt, options)`` is the same without the work
phase. Options come as a dict ``{name: handler}`` or a list; a handler is

- a function (a ``Tool`` or ``@agentic_function`` too): its arguments schema
  comes from the same generator as tools, the runtime is injected, and its
  return value is the result;
- a ``(function, "description")`` pair;
- a plain value, returned as is, or a ``(value, "description")`` pair;
- a ``("description", schema)`` pair, where ``schema`` is a JSON Schema object
  or a pydantic model class: the result is ``{"decision": name, **fields}``.

A bad pick (none found, unknown option, invalid arguments) gets one re-ask
that says exactly what was wrong; a second bad pick raises ``DecisionError``.
"""

from __future__ import annotations

import enum
import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from openprogram import _threads
from openprogram._structured.render import render_params
from openprogram.context import resolve_runtime, use_current_runtime
from openprogram.exceptions import (
    ConfigurationError,
    DecisionError,
    InvalidSchemaError,
    UserError,
    ValidationFailedError,
)
from openprogram.messages import AssistantMessage, UserMessage
from openprogram.schema import ArgumentsError, FunctionSchema, derive_schema, json_schema_violations
from openprogram.structured import OutputSchema, is_model_class, iter_json_values, output_schema
from openprogram.tools import Tool, ToolContext, to_tool

__all__ = [
    "Choice",
    "ChoiceKind",
    "DecisionMenu",
    "DecisionTurns",
    "Picked",
    "Reask",
    "async_make",
    "make",
]

ChoiceKind: TypeAlias = Literal["function", "value", "schema"]
"""What picking an option does: run a function, return a value, or return fields."""

_NO_ARGS: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
_MAX_NAME = 128


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    """One option of a decision, normalised from whatever form it was given in."""

    name: str
    """What the model writes in ``"call"``."""
    description: str
    """One line telling the model what the option means (may be empty)."""
    kind: ChoiceKind
    """``"function"``, ``"value"`` or ``"schema"``."""
    parameters: Mapping[str, Any] = field(default_factory=lambda: dict(_NO_ARGS))
    """JSON Schema object of the option's ``"args"``."""
    value: Any = field(default=None, repr=False)
    """The value returned when a value option is picked."""
    fn: Callable[..., Any] | None = field(default=None, repr=False)
    """The plain function run when a function option is picked."""
    function_schema: FunctionSchema | None = field(default=None, repr=False)
    """Validates and converts the arguments of ``fn``."""
    tool: Tool | None = field(default=None, repr=False)
    """The tool run when the option was given as a ``Tool`` or agentic function."""
    output: OutputSchema | None = field(default=None, repr=False)
    """Validates the fields of a schema option."""


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


class _BadPick(Exception):
    def __init__(self, problem: str) -> None:
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
        entries: list[tuple[str | None, Any, str]]
        if isinstance(options, Mapping):
            entries = [(_key_name(k), h, f"choices[{k!r}]") for k, h in options.items()]
        elif isinstance(options, list | tuple):
            entries = [(None, h, f"choices[{i}]") for i, h in enumerate(options)]
        else:
            raise UserError(
                f"choices={options!r:.80} is not a set of options: pass a dict {{name: handler}} "
                "or a list of functions, values, (handler, 'description') or "
                "('description', schema)"
            )
        if not entries:
            raise UserError("choices= is empty: give at least one option to pick from")
        choices = tuple(_choice(name, handler, where) for name, handler, where in entries)
        _check_unique(choices)
        return cls(choices)

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

    def pick(self, text: str) -> Picked:
        """Find and validate the pick in a reply.

        Raises:
            _BadPick: With ``.problem`` saying what was wrong (internal to the turns).
        """
        name, args = _parse_pick(text)
        choice = self.get(name)
        if choice is None:
            options = ", ".join(repr(n) for n in self.names)
            raise _BadPick(f"unknown option {name!r}; the options are {options}")
        return Picked(choice, _validate(choice, args))

    async def run(self, picked: Picked, runtime: Any) -> Any:
        """Carry out a pick: run the function, or return the value or the fields.

        Args:
            picked: A valid pick from ``pick``.
            runtime: The runtime to inject and to make current while a function runs.
        """
        choice = picked.choice
        if choice.kind == "value":
            return choice.value
        if choice.kind == "schema":
            return {"decision": choice.name, **picked.arguments}
        with use_current_runtime(runtime):
            if choice.tool is not None:
                return await _run_tool(choice, choice.tool, picked.arguments, runtime)
            return await _run_function(choice, picked.arguments, runtime)


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
        except _BadPick as exc:
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


def make(prompt: str, options: Any, runtime: Any = None) -> Any:
    """Ask the model to pick one option right away (no tools, no work phase).

    Args:
        prompt: What to decide.
        options: The options, in any form ``exec(choices=...)`` accepts.
        runtime: The runtime to ask; defaults to the current, then the default runtime.

    Returns:
        The picked function's return value, the picked value, or the schema
        option's ``{"decision": name, **fields}``.

    Raises:
        DecisionError: The model did not pick a valid option, even after one re-ask.
        ConfigurationError: No runtime was given, current or set as default.
    """
    return _runtime(runtime).exec(prompt, tools=[], choices=options)


async def async_make(prompt: str, options: Any, runtime: Any = None) -> Any:
    """``make`` for async code."""
    return await _runtime(runtime).async_exec(prompt, tools=[], choices=options)


def _runtime(runtime: Any) -> Any:
    found = resolve_runtime(runtime)
    if found is None:
        raise ConfigurationError(
            "no runtime to decide with: pass runtime=Runtime(...), use `with runtime:`, "
            "or call openprogram.set_default_runtime(...)"
        )
    return found


# -- normalising options ---------------------------------------------------------------------


def _choice(name: str | None, handler: Any, where: str) -> Choice:
    if _is_schema_pair(handler):
        description, schema = handler
        return _schema_choice(name, schema, description, where)
    description = ""
    if isinstance(handler, tuple) and len(handler) == 2 and isinstance(handler[1], str):
        handler, description = handler
    if callable(handler) and not inspect.isclass(handler):
        return _function_choice(name, handler, description)
    return Choice(
        name=name if name is not None else _value_name(handler, where),
        description=_one_line(description),
        kind="value",
        value=handler,
    )


def _function_choice(name: str | None, fn: Callable[..., Any], description: str) -> Choice:
    if isinstance(fn, Tool) or hasattr(fn, "__openprogram_tool__") or hasattr(fn, "execute"):
        tool = to_tool(fn)
        return Choice(
            name=name or tool.name,
            description=_one_line(description or tool.description),
            kind="function",
            parameters=tool.parameters,
            tool=tool,
        )
    schema = derive_schema(fn)
    return Choice(
        name=name or schema.name,
        description=_one_line(description or schema.description),
        kind="function",
        parameters=schema.parameters,
        fn=fn,
        function_schema=schema,
    )


def _schema_choice(name: str | None, schema: Any, description: str, where: str) -> Choice:
    try:
        output = output_schema(schema, where=where)
    except InvalidSchemaError as exc:
        raise UserError(str(exc)) from exc
    if output.wrapped:
        raise UserError(
            f'{where}: a schema option needs an object schema ({{"type": "object", ...}}): '
            "its fields come back with the decision"
        )
    if "decision" in (output.schema.get("properties") or {}):
        raise UserError(
            f"{where}: a schema option cannot have a field named 'decision' (it is reserved)"
        )
    title = output.schema.get("title")
    if name is None and not isinstance(title, str):
        raise UserError(f"{where}: a schema option needs a name: give the options as a dict")
    return Choice(
        name=name if name is not None else str(title),
        description=_one_line(description),
        kind="schema",
        parameters=output.schema,
        output=output,
    )


def _is_schema_pair(handler: Any) -> bool:
    if not (isinstance(handler, tuple) and len(handler) == 2 and isinstance(handler[0], str)):
        return False
    return is_model_class(handler[1]) or isinstance(handler[1], Mapping)


def _value_name(value: Any, where: str) -> str:
    if isinstance(value, str):
        return _key_name(value)
    if isinstance(value, bool | int | float) or value is None:
        return json.dumps(value)
    if isinstance(value, enum.Enum):
        return value.name
    raise UserError(
        f"{where} ({value!r:.60}) has no name the model could write: give the options as a "
        "dict {name: value}"
    )


def _key_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_NAME or "\n" in name:
        raise UserError(
            f"option name {name!r:.80} is not usable: use a non-empty one-line string of at most "
            f"{_MAX_NAME} characters"
        )
    return name


def _check_unique(choices: tuple[Choice, ...]) -> None:
    names = [c.name for c in choices]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(
            f"choices= has options with the same name: {', '.join(map(repr, dupes))}; "
            "give the options as a dict to name them apart"
        )


# -- parsing and validating a pick -----------------------------------------------------------


def _parse_pick(text: str) -> tuple[str, dict[str, Any]]:
    picks = [v for v in iter_json_values(text, "{") if isinstance(v, dict) and "call" in v]
    if not picks:
        raise _BadPick('no pick was found: the reply must end with a JSON object {"call": ...}')
    pick = picks[-1]
    name = pick["call"]
    if not isinstance(name, str):
        raise _BadPick(f'"call" must be the option name as a string, got {json.dumps(name)}')
    args = pick.get("args", pick.get("arguments"))
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise _BadPick(
            f'"args" of option {name!r} must be a JSON object of arguments, got {json.dumps(args)}'
        )
    return name, args


def _validate(choice: Choice, args: dict[str, Any]) -> Mapping[str, Any]:
    if choice.function_schema is not None:
        try:
            return choice.function_schema.validate(args)
        except ArgumentsError as exc:
            raise _BadPick(_invalid(choice, exc.violations)) from exc
    if choice.output is not None:
        try:
            value = choice.output.validate(args)
        except ValidationFailedError as exc:
            raise _BadPick(_invalid(choice, exc.violations)) from exc
        return value.model_dump() if choice.output.model is not None else dict(value)
    if choice.kind == "value" and args:
        raise _BadPick(
            f"option {choice.name!r} takes no arguments, got {', '.join(map(repr, args))}"
        )
    violations = json_schema_violations(dict(choice.parameters), args)
    if violations:
        raise _BadPick(_invalid(choice, violations))
    return args


def _invalid(choice: Choice, violations: Any) -> str:
    lines = "\n".join(f"- {v}" for v in violations)
    return f"invalid arguments for option {choice.name!r}:\n{lines}"


# -- running a pick --------------------------------------------------------------------------


async def _run_function(choice: Choice, arguments: Mapping[str, Any], runtime: Any) -> Any:
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
            tool_name=choice.name,
            runtime=runtime,
            deps=getattr(runtime, "deps", None),
        )
    if schema.is_async:
        return await fn(**kwargs)
    value = await _threads.run_in_thread(fn, **kwargs)
    return await value if inspect.isawaitable(value) else value


async def _run_tool(choice: Choice, tool: Tool, arguments: Mapping[str, Any], runtime: Any) -> Any:
    context = ToolContext(
        call_id="decision",
        tool_name=tool.name,
        runtime=runtime,
        deps=getattr(runtime, "deps", None),
    )
    result = await tool.execute(arguments, context)
    if result.is_error:
        raise DecisionError(
            f"option {choice.name!r} was picked, but running tool {tool.name!r} failed: "
            f"{result.content}",
            problem=result.content,
        )
    return result.value


def _one_line(text: str) -> str:
    first_paragraph = text.strip().split("\n\n", 1)[0]
    return " ".join(first_paragraph.split())


def _quoted(name: str) -> str:
    return name if name.isidentifier() else json.dumps(name)
