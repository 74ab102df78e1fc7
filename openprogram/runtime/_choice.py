"""What each model request offers: its tools, its ``tool_choice``, parallel calls — decided here.

The rules, each with its reason, in the order they apply (a later one wins):

1. The exec's ``tool_choice`` binds its first model call. After it,
   ``"required"`` and a forced name revert to ``"auto"``: a model that must
   call a tool on every call could never give its final answer. ``"none"``
   binds every call of the exec: the caller asked for no tool calls at all.
   Nested execs start from their own ``tool_choice`` (it is not inherited).
2. A repair turn of structured output may force a choice for its one call
   (the hidden submit tool): it asks for nothing but the answer.
3. When the run tree's budget is too low for another tool round, the call is
   ``"none"`` and the model is told to answer now (``_spend``): a tool round
   it cannot afford would end the exec with ``BudgetExceeded`` instead of an
   answer.
4. The extra call of ``on_max_iterations="finish"`` is ``"none"``: it exists
   to get an answer from what the model already has.
5. With structured output's hidden submit tool, the submit tool joins the
   offered tools and parallel calls are off, so a reply submits one answer;
   under ``"none"`` the caller's tools are withheld and the submit tool is
   forced, because submitting is then the only way to answer.

``parallel_tool_calls`` is the exec's, except under rule 5. A reply that
calls tools although its request said ``"none"`` gets each call answered
with an error result, never run (``Request.withdrawn``). How a choice is put
on the wire is each provider's own business (the local model's provider, for
one, emulates a forced name and ``"none"`` by filtering the tools it sends);
it never widens what was decided here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from openprogram.providers.base import ToolChoice, ToolSpec

if TYPE_CHECKING:
    from openprogram.runtime._run import RunState

__all__ = ["NONE_SKIP", "Request", "decide"]

NONE_SKIP = (
    "Not run: tool calls are disabled in this exec (tool_choice='none'). "
    "Answer in text from what you have."
)
"""The result of a call made although the request said ``tool_choice="none"``."""


@dataclass(frozen=True, slots=True)
class Request:
    """The tool side of one model request."""

    tools: tuple[ToolSpec, ...]
    """The schemas offered."""
    tool_choice: ToolChoice
    """What the model may (or must) call."""
    parallel_tool_calls: bool
    """Whether one reply may make several calls."""
    withdrawn: str | None
    """Under ``"none"``: the text answering any call the reply still makes; else ``None``."""


def decide(
    run: RunState,
    *,
    forced: ToolChoice | None = None,
    low: str | None = None,
    finishing: bool = False,
) -> Request:
    """The tools, choice and parallelism of the model call ``run`` is about to make.

    Args:
        run: The exec (``run.iterations`` already counts this call).
        forced: The choice a repair turn asks for (rule 2).
        low: Why the budget withdraws the tools (rule 3), from ``_spend.charge_model_call``.
        finishing: This is ``on_max_iterations="finish"``'s extra call (rule 4).
    """
    asked = run.options.tool_choice
    choice: ToolChoice = asked if run.iterations == 1 or asked == "none" else "auto"  # rule 1
    if forced is not None:
        choice = forced  # rule 2
    if low is not None or finishing:
        choice = "none"  # rules 3 and 4
    withdrawn = (low or NONE_SKIP) if choice == "none" else None
    tools, parallel = run.scope.menu.core.specs, run.options.parallel_tool_calls
    submit = run.finale.submit_spec if run.finale is not None else None
    if submit is not None:  # rule 5
        if choice == "none":
            forced_submit: ToolChoice = {"type": "function", "name": submit["name"]}
            return Request((submit,), forced_submit, False, withdrawn)
        return Request((*tools, submit), choice, False, withdrawn)
    return Request(tools, choice, parallel, withdrawn)
