"""The structured-output side of one exec: what requests carry, how replies are judged.

The runtime's loop owns the conversation; this module only decides, per reply,
whether the structured answer is in (``Finished``) or needs one repair turn
(``Repair``), and raises the typed error when the repair turn did not help.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from openprogram.exceptions import (
    InvalidJSONError,
    MissingSubmissionError,
    RefusalError,
    StructuredOutputError,
    ValidationFailedError,
)
from openprogram.messages import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage
from openprogram.providers.base import ResponseFormat, ToolChoice
from openprogram.structured._options import SUBMIT_TOOL_NAME, OutputSchema, Strategy

__all__ = ["Finished", "Repair", "StructuredTurns"]


@dataclass(frozen=True, slots=True)
class Finished:
    """The structured answer is in and valid."""

    value: Any
    """The validated answer (a model instance, or the JSON value)."""


@dataclass(frozen=True, slots=True)
class Repair:
    """The answer was bad: append ``messages`` and call the model once more."""

    messages: tuple[Message, ...]
    """Tool results answering submit calls, or a user message stating the violations."""
    tool_choice: ToolChoice | None = None
    """``tool_choice`` for the repair call, when it must differ (forcing the submit tool)."""


class StructuredTurns:
    """What one exec's requests carry for structured output, and how its replies are judged.

    Create one per exec. ``judge_text`` takes a final reply (no tool calls to run);
    ``judge_submission`` a reply that calls the submit tool (run its other calls
    first). Each returns ``Finished`` or, once, ``Repair``; a second bad answer
    raises the matching ``StructuredOutputError``.
    """

    def __init__(
        self, output: OutputSchema, strategy: Strategy, *, taken_names: Iterable[str] = ()
    ):
        """Prepare the turns.

        Args:
            output: The normalised response format.
            strategy: From ``choose_strategy``.
            taken_names: Tool names already on the menu (the submit tool avoids them).
        """
        self.output = output
        self.strategy: Strategy = strategy
        self.submit_name = (
            _free_name(SUBMIT_TOOL_NAME, set(taken_names)) if strategy == "tool" else None
        )
        self._repairs_left = 1
        self._repaired = False

    @property
    def response_format(self) -> ResponseFormat | None:
        """What ``ProviderRequest.response_format`` carries (native strategy only)."""
        return self.output.response_format() if self.strategy == "native" else None

    @property
    def submit_spec(self) -> dict[str, Any] | None:
        """The hidden submit tool's spec (tool strategy only)."""
        if self.submit_name is None:
            return None
        return {
            "name": self.submit_name,
            "description": "Submit your final answer. Call this once, when you are done, with "
            "the answer as the arguments; this ends the task. Do not answer in plain text.",
            "parameters": self.output.wire_schema,
        }

    @property
    def instructions(self) -> str | None:
        """Text to add to the user's request (tool and prompt strategies)."""
        if self.submit_name is not None:
            return f"When you have the final answer, submit it by calling {self.submit_name}."
        if self.strategy == "prompt":
            schema = json.dumps(self.output.schema, separators=(",", ":"))
            return (
                "Answer with one JSON value that conforms to this JSON Schema, and nothing "
                f"else (no prose around it):\n{schema}"
            )
        return None

    def last_chance(self) -> None:
        """No repair turn is left (e.g. at the iteration cap): the next bad answer raises."""
        self._repairs_left = 0

    def submit_calls(self, message: AssistantMessage) -> list[ToolCall]:
        """The calls of ``message`` that are submissions."""
        return [c for c in message.tool_calls if c.name == self.submit_name]

    def judge_text(self, message: AssistantMessage) -> Finished | Repair:
        """Judge a final reply that calls no tool."""
        _check_refusal(message)
        if self.submit_name is None:
            try:
                return Finished(self.output.parse(message.text))
            except (InvalidJSONError, ValidationFailedError) as exc:
                return self._repair_or_raise(exc, (UserMessage(self._repair_text(exc)),))
        try:  # a model that answered in text instead of submitting is not punished for it
            return Finished(self.output.parse(message.text))
        except (InvalidJSONError, ValidationFailedError):
            missing = MissingSubmissionError(
                f"the model answered in text without calling {self.submit_name}",
                raw=message.text,
            )
        prod = UserMessage(
            f"You did not submit a final answer. Call {self.submit_name} now with your answer."
        )
        force: ToolChoice = {"type": "function", "name": self.submit_name}
        return self._repair_or_raise(missing, (prod,), tool_choice=force)

    def judge_submission(self, message: AssistantMessage) -> Finished | Repair:
        """Judge a reply that calls the submit tool."""
        _check_refusal(message)
        first, *extra = self.submit_calls(message)
        error: InvalidJSONError | ValidationFailedError
        if first.arguments_error is not None:
            error = InvalidJSONError(
                f"the {self.submit_name} arguments are not valid JSON: {first.arguments_error}"
            )
        else:
            raw = json.dumps(dict(first.arguments))
            try:
                return Finished(
                    self.output.validate(self.output.unwrap(dict(first.arguments)), raw=raw)
                )
            except ValidationFailedError as exc:
                error = exc
        name = self.submit_name or SUBMIT_TOOL_NAME
        results = [ToolResultMessage(first.id, name, self._repair_text(error), is_error=True)]
        results += [
            ToolResultMessage(c.id, name, "Ignored: submit exactly one answer.", is_error=True)
            for c in extra
        ]
        return self._repair_or_raise(error, tuple(results))

    def _repair_or_raise(
        self,
        error: StructuredOutputError,
        messages: tuple[Message, ...],
        tool_choice: ToolChoice | None = None,
    ) -> Repair:
        if not self._repairs_left:
            note = "after one repair turn" if self._repaired else "no repair turn was left"
            raise type(error)(
                f"{error} ({note})", violations=error.violations, raw=error.raw
            ) from error
        self._repairs_left -= 1
        self._repaired = True
        return Repair(messages, tool_choice)

    def _repair_text(self, error: StructuredOutputError) -> str:
        again = (
            f"Call {self.submit_name} again with the whole corrected answer."
            if self.submit_name is not None
            else "Reply again with the whole corrected answer as JSON only."
        )
        if isinstance(error, InvalidJSONError):
            return f"Your answer is not valid JSON: {error}. {again}"
        lines = "\n".join(f"- {v}" for v in error.violations)
        return f"Your answer does not match the required schema:\n{lines}\n{again}"


def _check_refusal(message: AssistantMessage) -> None:
    if message.stop_reason == "refusal":
        raise RefusalError(
            f"the model refused to give the structured answer: {message.text!r:.300}",
            raw=message.text,
        )


def _free_name(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name
