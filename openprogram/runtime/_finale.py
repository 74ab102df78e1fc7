"""How an exec ends when it must return more than text: a decision or a structured answer.

``exec(choices=...)`` and ``exec(response_format=...)`` change three things in
the loop, all kept here: what requests carry (the menu text or schema
instructions, the hidden submit tool, the native ``response_format``), how a
final reply becomes the output (a pick carried out, an answer validated), and
the one re-ask or repair turn a bad final reply gets. An aborted reply gets
none of that: it raises (``Finale.aborted``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openprogram.exceptions import DecisionError, StructuredOutputError
from openprogram.messages import AssistantMessage, Message, TextContent, ToolCall, UserMessage
from openprogram.providers.base import Provider, ResponseFormat, ToolChoice, ToolSpec
from openprogram.runtime._options import ExecOptions
from openprogram.runtime._pick import run_pick
from openprogram.structured import choose_strategy, output_schema
from openprogram.structured._decision import DecisionMenu, DecisionTurns, Reask
from openprogram.structured._turns import Finished, Repair, StructuredTurns

if TYPE_CHECKING:
    from openprogram.runtime._run import RunState

__all__ = ["Again", "Finale", "with_instructions"]


@dataclass(frozen=True, slots=True)
class Again:
    """The final reply was bad: append ``messages`` and call the model once more."""

    messages: tuple[Message, ...]
    """The re-ask or repair messages."""
    tool_choice: ToolChoice | None = None
    """``tool_choice`` of that call, when it must be forced."""


class Finale:
    """The decision or structured-output side of one exec (``None`` when it returns text)."""

    def __init__(
        self, *, decision: DecisionTurns | None = None, structured: StructuredTurns | None = None
    ) -> None:
        """Wrap the turns of one kind (exactly one of the two is given)."""
        self.decision = decision
        self.structured = structured

    @classmethod
    def of(cls, options: ExecOptions, provider: Provider, taken: Iterable[str]) -> Finale | None:
        """The finale ``options`` ask for, normalised before any request is sent.

        Args:
            options: The exec's options (``choices`` and ``response_format`` exclude each other).
            provider: Its provider (native structured output or not).
            taken: Tool names on the menu, which the submit tool must avoid.

        Raises:
            UserError: The choices are malformed.
            StructuredOutputError: The response format is unusable or unsupported.
        """
        if options.choices is not None:
            return cls(decision=DecisionTurns(DecisionMenu.of(options.choices)))
        if options.response_format is not None:
            output = output_schema(options.response_format)
            strategy = choose_strategy(provider, options.structured_fallback)
            return cls(structured=StructuredTurns(output, strategy, taken_names=taken))
        return None

    @property
    def instructions(self) -> str | None:
        """Text added to the user's request (the menu, or how to answer)."""
        if self.decision is not None:
            return self.decision.instructions
        assert self.structured is not None
        return self.structured.instructions

    @property
    def response_format(self) -> ResponseFormat | None:
        """Native structured-output request, if that is the strategy."""
        return self.structured.response_format if self.structured is not None else None

    @property
    def answer_schema(self) -> Mapping[str, Any] | None:
        """JSON Schema of a decision's pick (``ProviderRequest.answer_schema``)."""
        return self.decision.menu.pick_schema() if self.decision is not None else None

    @property
    def submit_spec(self) -> ToolSpec | None:
        """The hidden submit tool's schema, when structured output uses one (``_choice``)."""
        return self.structured.submit_spec if self.structured is not None else None

    def submissions(self, reply: AssistantMessage) -> list[ToolCall]:
        """The calls of ``reply`` that submit the structured answer."""
        if self.structured is None or self.structured.submit_name is None:
            return []
        return self.structured.submit_calls(reply)

    def last_chance(self) -> None:
        """No re-ask or repair turn is left: the next bad final reply raises."""
        if self.decision is not None:
            self.decision.last_chance()
        if self.structured is not None:
            self.structured.last_chance()

    def aborted(self, reply: AssistantMessage) -> DecisionError | StructuredOutputError:
        """The error an aborted reply (its model call was cancelled) ends the exec with.

        The exec's result is typed, so the text so far cannot stand in for it;
        nothing of a partial reply is judged, repaired or run, even a pick or a
        submission that looks complete. ``reply=``/``raw=`` keep the text so far.
        """
        text = reply.text
        if self.decision is not None:
            return DecisionError(
                "the model call was aborted before a pick came back, so no option was run "
                f"(text so far: {text!r:.300}); ask again, or catch DecisionError",
                problem="aborted",
                reply=text,
            )
        return StructuredOutputError(
            "the model call was aborted before a structured answer came back, so nothing "
            f"was validated (text so far: {text!r:.300}); ask again, or catch "
            "StructuredOutputError",
            raw=text,
        )

    async def conclude(self, reply: AssistantMessage, run: RunState) -> Any:
        """Judge a final reply of ``run`` (submissions already separated from other calls).

        Returns:
            ``Again`` for one more model call, or the exec's output.

        Raises:
            DecisionError: The pick is still bad after the re-ask, or may not run.
            BudgetExceeded: The run tree's budget allows no more calls for the pick.
            StructuredOutputError: The answer is still bad after the repair turn.
        """
        if self.decision is not None:
            step = self.decision.judge(reply)
            if isinstance(step, Reask):
                return Again((step.message,))
            return await run_pick(self.decision.menu, step, run)
        assert self.structured is not None
        turns = self.structured
        submitted = bool(self.submissions(reply))
        verdict = turns.judge_submission(reply) if submitted else turns.judge_text(reply)
        if isinstance(verdict, Repair):
            return Again(verdict.messages, verdict.tool_choice)
        assert isinstance(verdict, Finished)
        return verdict.value


def with_instructions(message: UserMessage, finale: Finale | None) -> UserMessage:
    """The user's message with the finale's instructions appended (unchanged without any)."""
    extra = finale.instructions if finale is not None else None
    if not extra:
        return message
    if isinstance(message.content, str):
        return UserMessage(f"{message.content}\n\n{extra}")
    return UserMessage((*message.content, TextContent(f"\n\n{extra}")))
