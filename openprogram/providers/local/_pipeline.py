"""The local model's guards, in the order one model call meets them (``PIPELINE``).

Each guard works around one way the small embedded model, or llama.cpp's
server, goes wrong; a model's profile (``ModelProfile.guards``) says which
run. ``PIPELINE`` lists them with the stage that runs them:

- ``request``: ``prepare``, before anything is sent;
- ``body``: ``BODY_STEPS``, applied in order by ``LocalWire`` to every body (the
  steps tagged ``None`` always run: the functions go to the chat template as
  its ``functions`` argument, never as ``tools``, and the provider reads the
  calls itself);
- ``reply``: ``_guards.shaped``, on the reply as it streams in;
- ``recovery``: ``reask`` and the provider, after a broken or failed reply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from openprogram.exceptions import UserError
from openprogram.messages import ToolResultMessage
from openprogram.providers._wire import forced_tool_name
from openprogram.providers.base import ProviderRequest
from openprogram.providers.local._guards import (
    ANSWER_GRAMMAR,
    Meter,
    Pick,
    answer_grammar,
    calls_grammar,
    picks_of,
)
from openprogram.providers.local._profile import Guard, ModelProfile, profile_for

__all__ = [
    "BODY_STEPS",
    "PIPELINE",
    "BodyContext",
    "GuardStep",
    "LocalRequest",
    "adapt_request",
    "answer_only",
    "as_local",
    "body_fields",
    "prepare",
    "reask",
    "request_picks",
    "shown_tools",
]


@dataclass(frozen=True, slots=True)
class GuardStep:
    """One guard of the pipeline."""

    guard: Guard
    """Its name, as ``ModelProfile.guards`` lists it."""
    stage: Literal["request", "body", "reply", "recovery"]
    """Where it runs (module docstring)."""
    does: str
    """What it does, in one line."""


PIPELINE: tuple[GuardStep, ...] = (
    GuardStep(
        "forced_tool",
        "request",
        'a forced tool is sent as "required" with only that tool; "none" without functions',
    ),
    GuardStep(
        "decision_picks",
        "request",
        "a decision's options are listed as functions (once a tool result is in, with tools)",
    ),
    GuardStep(
        "call_share_probe",
        "request",
        "opt-in (call_threshold): one token first; a model unsure it should call answers",
    ),
    GuardStep("prompt_cache", "body", "cache_prompt: the next turn reuses the server's cache"),
    GuardStep("dry_sampler", "body", "llama.cpp's DRY sampler against verbatim loops"),
    GuardStep(
        "echo_stops",
        "body",
        "once a result is in, stop where the reply starts copying the template's request",
    ),
    GuardStep("grammar", "body", "a reply is plain text or calls of offered tools, nothing else"),
    GuardStep(
        "cache_reuse",
        "body",
        "a plain-answer request moves the cached conversation into place (n_cache_reuse)",
    ),
    GuardStep("repeat_stop", "reply", "a streamed calls reply stops at a call that repeats one"),
    GuardStep("loop_stop", "reply", "an answer stuck in a verbatim loop is stopped and cut"),
    GuardStep("trailing_calls", "reply", "calls in a fenced list closing an answer are calls"),
    GuardStep(
        "drop_repeats",
        "reply",
        "calls already made are dropped; a reply with nothing else is broken",
    ),
    GuardStep(
        "reask",
        "recovery",
        "a cut reply is asked again with a larger limit, another broken one for an answer",
    ),
    GuardStep(
        "unparsed_call",
        "recovery",
        "a call llama.cpp could not parse (HTTP 500) is asked again for an answer",
    ),
    GuardStep(
        "restart_server",
        "recovery",
        "an unreachable embedded server is restarted and the request sent once more",
    ),
)
"""Every guard, in the order one model call meets them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalRequest(ProviderRequest):
    """A request with the pipeline's adjustments for one attempt."""

    min_max_tokens: int | None = None
    """Raise the output limit to at least this many tokens (a re-ask of a cut reply)."""
    answer_only: bool = False
    """Ask for a plain answer: the function list is left out of the prompt."""
    picks: tuple[Pick, ...] = ()
    """The decision options shown as functions (``request_picks``), worked out once per
    request by ``prepare``: the body lists them and the reply is read against them."""
    meter: Meter | None = field(default=None, compare=False, repr=False)
    """Where the stream parser notes what the reply has cost so far (``_guards._meter``)."""
    profile: ModelProfile = field(default_factory=lambda: profile_for(None), compare=False)
    """The model's profile: its limits, stops and which guards run."""


def adapt_request(request: ProviderRequest) -> ProviderRequest:
    """Rewrite the tool choice the way llama.cpp's server can follow (guard ``forced_tool``).

    Raises:
        UserError: A forced tool is not among ``request.tools``.
    """
    name = forced_tool_name(request.tool_choice)
    if name is not None:
        only = tuple(spec for spec in request.tools if spec.get("name") == name)
        if not only:
            offered = ", ".join(str(s.get("name")) for s in request.tools) or "none"
            raise UserError(
                f"tool_choice forces {name!r}, which is not offered (offered: {offered})"
            )
        return replace(request, tools=only, tool_choice="required")
    if request.tool_choice == "none" and request.tools:
        return replace(request, tools=(), tool_choice="auto")
    return request


def prepare(request: ProviderRequest, model: str) -> LocalRequest:
    """``request`` for the embedded model ``model``: the request stage (``forced_tool``,
    ``decision_picks``; the provider runs ``call_share_probe``)."""
    if profile_for(model).runs("forced_tool"):
        request = adapt_request(request)
    return as_local(request, model)


def as_local(request: ProviderRequest, model: str) -> LocalRequest:
    """``request`` as a ``LocalRequest`` for ``model``, its decision's options worked out."""
    values = {f.name: getattr(request, f.name) for f in fields(ProviderRequest)}
    sent = LocalRequest(**{**values, "model": model}, meter=Meter(), profile=profile_for(model))
    return replace(sent, picks=request_picks(sent))


def request_picks(request: LocalRequest) -> tuple[Pick, ...]:
    """The decision options shown as functions for ``request`` (guard ``decision_picks``)."""
    if not request.profile.runs("decision_picks"):
        return ()
    if request.response_format is not None or request.tool_choice != "auto":
        return ()  # a forced call must be a real tool
    if request.tools and not _has_result(request):
        # Work first: offered as functions on the first turn, the options let this model
        # pick before it looked anything up (refund an order it never checked).
        return ()
    return picks_of(request.answer_schema, (str(spec.get("name")) for spec in request.tools))


def answer_only(request: ProviderRequest) -> bool:
    """Whether ``request`` asks for a plain answer (its function list left out)."""
    return isinstance(request, LocalRequest) and request.answer_only


def shown_tools(request: ProviderRequest) -> tuple[Any, ...]:
    """The tool specs the model sees for ``request`` (none when it is asked for an answer)."""
    return () if answer_only(request) else tuple(request.tools)


def _has_result(request: ProviderRequest) -> bool:
    return any(isinstance(m, ToolResultMessage) for m in request.messages)


# -- building the body --------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class BodyContext:
    """What the body steps need besides the request."""

    stream: bool
    """Whether the reply is streamed."""
    max_tokens: int | None
    """The output limit every request carries (``extra_body``), if any."""
    stops: tuple[str, ...]
    """The user's own stop strings (``extra_body``)."""
    functions: tuple[Mapping[str, Any], ...]
    """The functions the model sees: the shown tools, then the decision's options."""


Step = Callable[[dict[str, Any], LocalRequest, BodyContext], None]


def _prompt_cache(body: dict[str, Any], request: LocalRequest, ctx: BodyContext) -> None:
    body["cache_prompt"] = True


def _dry_sampler(body: dict[str, Any], request: LocalRequest, ctx: BodyContext) -> None:
    body["dry_multiplier"] = request.profile.dry_multiplier


def _token_timings(body: dict[str, Any], request: LocalRequest, ctx: BodyContext) -> None:
    if ctx.stream:
        body["timings_per_token"] = True  # the figures of a reply stopped early (_meter)


def _output_limit(body: dict[str, Any], request: LocalRequest, ctx: BodyContext) -> None:
    limit = body.get("max_tokens", ctx.max_tokens)
    floor = request.min_max_tokens
    if floor is not None and isinstance(limit, int):
        limit = max(limit, floor)  # the re-ask of a cut reply gets more room
    if limit is not None:
        body["max_tokens"] = limit


def _stops(body: dict[str, Any], request: LocalRequest, ctx: BodyContext) -> None:
    echoes = request.profile.echo_stops if request.profile.runs("echo_stops") else ()
    stops = [*echoes, *ctx.stops] if _has_result(request) else list(ctx.stops)
    if stops:
        body["stop"] = stops


def _functions(body: dict[str, Any], request: LocalRequest, ctx: BodyContext) -> None:
    if ctx.functions:
        body["chat_template_kwargs"] = {"functions": list(ctx.functions)}


def _grammar(body: dict[str, Any], request: LocalRequest, ctx: BodyContext) -> None:
    if request.response_format is not None:
        return  # llama.cpp constrains the reply to the format itself
    answer = request.answer_schema
    if ctx.functions:
        auto = request.tool_choice == "auto"
        body["grammar"] = calls_grammar(
            ctx.functions, text=auto, answer=answer, max_calls=request.profile.max_calls
        )
    elif answer is not None:
        body["grammar"] = answer_grammar(answer)  # a decision's pick, and nothing else
    elif request.answer_only:
        # Without the function list this model answers; with it, it keeps calling.
        body["grammar"] = ANSWER_GRAMMAR


def _cache_reuse(body: dict[str, Any], request: LocalRequest, ctx: BodyContext) -> None:
    if request.answer_only:
        body["n_cache_reuse"] = request.profile.reuse_chunk  # extra_body, laid over it, wins


BODY_STEPS: tuple[tuple[Guard | None, Step], ...] = (
    ("prompt_cache", _prompt_cache),
    ("dry_sampler", _dry_sampler),
    (None, _token_timings),
    (None, _output_limit),
    (None, _stops),  # the user's stops, and the echo stops if guard echo_stops runs
    (None, _functions),
    ("grammar", _grammar),
    ("cache_reuse", _cache_reuse),
)
"""The steps that add llama.cpp's fields to a Chat Completions body, in order, each with
the guard that must run for it to apply (``None``: always)."""


def body_fields(body: dict[str, Any], request: LocalRequest, ctx: BodyContext) -> dict[str, Any]:
    """``body`` with the steps of ``BODY_STEPS`` whose guards run applied, in order."""
    for guard, step in BODY_STEPS:
        if guard is None or request.profile.runs(guard):
            step(body, request, ctx)
    return body


# -- after a broken reply -----------------------------------------------------------------


def reask(sent: LocalRequest, *, cut: bool, limit: int | None) -> LocalRequest | None:
    """The request to send instead of one whose reply broke, or ``None`` to give up.

    Args:
        sent: The request whose reply broke.
        cut: Whether that reply was cut at the output limit.
        limit: The output limit every request carries, if any.
    """
    if not sent.profile.runs("reask"):
        return None
    if cut and limit is not None and sent.min_max_tokens is None:
        return replace(sent, min_max_tokens=limit * sent.profile.cut_growth)
    if sent.answer_only or sent.tool_choice != "auto":
        return None  # a forced call cannot become an answer
    # Leaving only the functions it did not repeat works worse: with a result in, the
    # model then calls an unrelated tool instead of answering. In a decision the re-ask
    # allows a pick only: its options as functions once a result is in (``_picks``), so it
    # can still pick; before that, the pick written as text.
    return replace(sent, answer_only=True)
