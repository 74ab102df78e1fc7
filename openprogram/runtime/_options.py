"""The keyword options of ``exec``, ``async_exec`` and ``stream``, taken once.

``ExecKwargs`` types the keywords for callers (``**options: Unpack[ExecKwargs]``);
``ExecOptions`` is the validated, defaulted form the loop reads. A test keeps
the two field lists identical. ``CommonExecKwargs`` is every keyword except
``choices`` and ``response_format``, which decide the type of the answer and
so are spelled out in ``exec``'s overloads; a new option goes there.
``PickKwargs`` and ``FormatKwargs`` are the rest of the keywords of the
overloads that type the answer by ``choices`` or by ``response_format``.
``check_runtime_arguments`` and ``check_sampling`` check ``Runtime(...)``'s own
arguments (the sampling ones are defaults of these options).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypedDict

from openprogram._keywords import reject_unknown
from openprogram.budget import Budget
from openprogram.exceptions import UserError
from openprogram.messages import AssistantMessage, Message, ToolResultMessage, UserMessage
from openprogram.providers.base import ToolChoice
from openprogram.runtime._not_accepted import Refused
from openprogram.structured import StructuredFallback

__all__ = [
    "MAX_ITERATIONS_CAP",
    "CommonExecKwargs",
    "ExecKwargs",
    "ExecOptions",
    "FormatKwargs",
    "OnMaxIterations",
    "PickKwargs",
    "check_runtime_arguments",
    "check_sampling",
    "checked_history",
]

MAX_ITERATIONS_CAP = 50
"""Hard cap on model calls per exec, whatever ``max_iterations`` asks (docs/concepts.md)."""

OnMaxIterations: TypeAlias = Literal["return", "raise", "finish"]

_CHOICE_WORDS = ("auto", "required", "none")


class CommonExecKwargs(TypedDict, total=False):
    """Keywords of ``exec`` that leave the answer's type alone (see ``ExecOptions``).

    Each type includes ``Refused``, which no value has: it makes mypy report
    a value of the wrong type as one error naming the keyword
    (``_not_accepted.py`` says how).
    """

    tools: Sequence[Any] | Refused | None
    toolset: str | Refused | None
    tools_source: str | Refused | None
    tools_allow: Iterable[str] | Refused | None
    tools_deny: Iterable[str] | Refused | None
    tool_choice: ToolChoice | Refused
    parallel_tool_calls: bool | Refused
    max_iterations: int | Refused
    structured_fallback: StructuredFallback | Refused
    timeout_s: float | Refused | None
    model: str | Refused | None
    on_max_iterations: OnMaxIterations | Refused
    budget: Budget | Refused | None
    temperature: float | Refused | None
    max_tokens: int | Refused | None
    seed: int | Refused | None
    history: Sequence[Message] | Refused | None
    run_id: str | Refused | None


class PickKwargs(CommonExecKwargs, total=False):
    """Keywords of an ``exec`` whose answer is typed by ``choices``."""

    response_format: None


class FormatKwargs(CommonExecKwargs, total=False):
    """Keywords of an ``exec`` whose answer is typed by ``response_format``."""

    choices: None


class ExecKwargs(CommonExecKwargs, total=False):
    """Keyword options of ``Runtime.exec`` / ``async_exec`` / ``stream`` (see ``ExecOptions``)."""

    choices: Any
    response_format: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecOptions:
    """Validated options of one exec (docs/concepts.md, "The tool loop")."""

    tools: Sequence[Any] | None = None
    """Tool-likes offered to the model (then gated); ``None``: inherit or use the registry."""
    toolset: str | None = None
    """A toolset preset name; ``"none"`` makes a pure reasoning call."""
    tools_source: str | None = None
    """The channel the request came from (hides tools ``unsafe_in`` it)."""
    tools_allow: Iterable[str] | None = None
    """Caps the menu to these names."""
    tools_deny: Iterable[str] | None = None
    """Removes these names (wins over everything)."""
    tool_choice: ToolChoice = "auto"
    """``"auto"``, ``"required"``, ``"none"`` or ``{"type": "function", "name": X}``."""
    parallel_tool_calls: bool = True
    """``False`` asks for one call per reply and runs batches sequentially."""
    max_iterations: int = 20
    """Model calls allowed, clamped to ``[1, 50]``."""
    choices: Any = None
    """Next-step decision options: the final reply picks one (``openprogram.decision``)."""
    response_format: Any = None
    """A type (model, dataclass, ``list[int]``, ...) or a JSON Schema: the answer, validated."""
    structured_fallback: StructuredFallback = "tool"
    """No native structured output: ``"tool"`` (hidden submit tool), ``"prompt"`` or ``None``."""
    timeout_s: float | None = None
    """Bound on the whole exec: model calls, retries and tools."""
    model: str | None = None
    """Overrides the runtime's and the provider's model."""
    on_max_iterations: OnMaxIterations = "return"
    """What to do when the cap is reached: ``"return"``, ``"raise"`` or ``"finish"``."""
    budget: Budget | None = None
    """Tightens the run tree's budget for this exec and every exec nested in it."""
    temperature: float | None = None
    """Sampling temperature of this exec's model calls; overrides ``Runtime(temperature=)``."""
    max_tokens: int | None = None
    """Cap on tokens generated per model call; overrides ``Runtime(max_tokens=)``."""
    seed: int | None = None
    """Sampling seed of this exec's model calls; overrides ``Runtime(seed=)``."""
    history: Sequence[Message] | None = None
    """Messages the run continues from (e.g. ``runtime.last_run.messages``): the model
    sees them, then ``content``; ``last_run.messages`` holds both."""
    run_id: str | None = None
    """The durable run this exec is (with a store): a new run under this id, or the run
    of that id again, its finished steps taken from its journal (docs/durable.md)."""

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any]) -> ExecOptions:
        """Build and validate the options given to ``exec``.

        Raises:
            TypeError: An unknown keyword (the message lists the known ones).
            UserError: A value out of range or a contradictory combination.
        """
        reject_unknown(kwargs, _FIELDS, "exec")
        history = kwargs.get("history")
        if history is not None:
            kwargs = {**kwargs, "history": checked_history(history)}
        options = cls(**kwargs)
        options._validate()
        return options

    @property
    def cap(self) -> int:
        """The effective number of model calls allowed: ``max(1, min(50, max_iterations))``."""
        return max(1, min(MAX_ITERATIONS_CAP, self.max_iterations))

    @property
    def forced_name(self) -> str | None:
        """The tool name ``tool_choice`` forces, if it forces one."""
        if isinstance(self.tool_choice, Mapping):
            name = self.tool_choice.get("name")
            return name if isinstance(name, str) else None
        return None

    def _validate(self) -> None:
        if self.tools is not None and self.toolset is not None:
            raise UserError(
                f"exec(tools=..., toolset={self.toolset!r}): pass one or the other — tools= is "
                "an explicit list, toolset= picks a preset from the registry"
            )
        if not isinstance(self.parallel_tool_calls, bool):
            raise UserError(
                f"exec(parallel_tool_calls={self.parallel_tool_calls!r}) must be True or False "
                "(a bool, not a string or number)"
            )
        if isinstance(self.max_iterations, bool) or not isinstance(self.max_iterations, int):
            raise UserError(f"exec(max_iterations=...) must be an int, got {self.max_iterations!r}")
        if self.on_max_iterations not in ("return", "raise", "finish"):
            raise UserError(
                f"exec(on_max_iterations={self.on_max_iterations!r}): "
                "use 'return', 'raise' or 'finish'"
            )
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise UserError(
                f"exec(timeout_s={self.timeout_s!r}) must be a positive number of seconds"
            )
        if self.run_id is not None and not _is_run_id(self.run_id):
            raise UserError(
                f"exec(run_id={self.run_id!r:.80}): a run id is a string of 1 to 200 printable "
                "characters without spaces, e.g. 'refund-4711' (or None for a generated one)"
            )
        if self.budget is not None and not isinstance(self.budget, Budget):
            raise UserError(
                f"exec(budget={self.budget!r:.80}) must be an openprogram.Budget or None, "
                "e.g. budget=Budget(model_calls=20)"
            )
        _check_tool_choice(self.tool_choice)
        check_sampling("exec", self.temperature, self.max_tokens, self.seed)
        self._check_finale()

    def _check_finale(self) -> None:
        if self.choices is not None and self.response_format is not None:
            raise UserError(
                "exec(choices=..., response_format=...): pass one or the other — choices= ends "
                "with a picked option, response_format= with a validated structured answer"
            )
        if self.structured_fallback not in ("tool", "prompt", None):
            raise UserError(
                f"exec(structured_fallback={self.structured_fallback!r}): use 'tool' (default, a "
                "hidden submit tool), 'prompt' (instructions in the prompt) or None (native only)"
            )
        if self.structured_fallback != "tool" and self.response_format is None:
            raise UserError(
                f"exec(structured_fallback={self.structured_fallback!r}) only applies with "
                "response_format=...; pass a response format or drop structured_fallback"
            )


def checked_history(history: Any) -> tuple[Message, ...]:
    """``history`` as a tuple of messages, each tool result answering a call before it.

    Raises:
        UserError: Not a sequence of messages, or a result whose call is not in it
            (the message names the index).
    """
    if isinstance(history, str | bytes | Mapping) or not isinstance(history, Iterable):
        raise UserError(
            f"exec(history={history!r:.60}) must be a sequence of messages, e.g. "
            "runtime.last_run.messages or openprogram.messages.load_messages(text)"
        )
    messages = tuple(history)
    calls: set[str] = set()
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            calls.update(c.id for c in message.tool_calls)
        elif isinstance(message, ToolResultMessage):
            if message.call_id not in calls:
                raise UserError(
                    f"exec(history=...): history[{index}] is the result of call "
                    f"{message.call_id!r}, which no earlier reply in the history made; "
                    "trim a history only before a user message (openprogram.messages."
                    "trim_history), so each result keeps its call"
                )
        elif not isinstance(message, UserMessage):
            raise UserError(
                f"exec(history=...): history[{index}] ({message!r:.60}) is not a message: "
                "use UserMessage, AssistantMessage and ToolResultMessage"
            )
    return messages


def _is_run_id(value: Any) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= 200
        and value.isprintable()
        and not any(c.isspace() for c in value)
    )


def _check_tool_choice(choice: Any) -> None:
    if isinstance(choice, str) and choice in _CHOICE_WORDS:
        return
    if isinstance(choice, Mapping) and choice.get("type") == "function":
        name = choice.get("name")
        if isinstance(name, str) and name:
            return
    raise UserError(
        f"exec(tool_choice={choice!r}) is not a tool choice: use 'auto', 'required', 'none' "
        "or {'type': 'function', 'name': 'tool_name'}"
    )


def check_sampling(
    where: str, temperature: float | None, max_tokens: int | None, seed: int | None
) -> None:
    """Reject sampling options of the wrong type or range (``where``: ``"exec"``, ``"Runtime"``).

    Raises:
        UserError: What was wrong, and what to pass instead.
    """
    if temperature is not None and (
        isinstance(temperature, bool)
        or not isinstance(temperature, int | float)
        or not temperature >= 0
    ):
        raise UserError(f"{where}(temperature={temperature!r}): use a number >= 0, or None")
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
    ):
        raise UserError(f"{where}(max_tokens={max_tokens!r}): use an int >= 1, or None")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise UserError(f"{where}(seed={seed!r}): use an int, or None")


def check_runtime_arguments(  # noqa: PLR0917 - one check per constructor argument, in its order
    provider: Any,
    observers: Any,
    max_retries: Any,
    approval: Any,
    on_stream: Any,
    max_depth: Any,
    budget: Any,
) -> None:
    """Reject arguments of ``Runtime(...)`` of the wrong kind (sampling: ``check_sampling``).

    Raises:
        TypeError: A provider, observer or hook that is not callable as one.
        UserError: A count or budget out of its range or of the wrong type.
    """
    if (
        provider is not None
        and not isinstance(provider, str)
        and not callable(getattr(provider, "stream", None))
    ):
        raise TypeError(
            f"Runtime(provider={provider!r:.80}) is not a provider: pass an object with "
            ".stream(request) (openprogram.providers.base.Provider), a string like "
            "'openai:gpt-4o-mini', or None"
        )
    if isinstance(observers, str) or not all(callable(o) for o in observers):
        raise TypeError("Runtime(observers=...) must be a sequence of callables taking an event")
    if max_retries is not None and (not isinstance(max_retries, int) or max_retries < 0):
        raise UserError(f"Runtime(max_retries={max_retries!r}) must be None or an int >= 0")
    for name, value in (("approval", approval), ("on_stream", on_stream)):
        if value is not None and not callable(value):
            raise TypeError(f"Runtime({name}={value!r:.60}) must be a callable or None")
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
        raise UserError(f"Runtime(max_depth={max_depth!r}) must be an int >= 1")
    if budget is not None and not isinstance(budget, Budget):
        raise UserError(f"Runtime(budget={budget!r:.80}) must be an openprogram.Budget or None")


_FIELDS = frozenset(f.name for f in dataclasses.fields(ExecOptions))
