"""Every error openprogram raises on purpose.

The hierarchy::

    OpenProgramError
    ├── UserError (ValueError)              the caller used the API wrongly
    │   ├── SchemaError (TypeError)         a decorated signature cannot become a tool
    │   └── ConfigurationError              no/ill-configured provider, missing extra
    │       └── ModelRequestsBlocked        a real model request while they are blocked (tests)
    ├── ToolError                           raised by a tool body on purpose: text for the model
    ├── LLMError                            a provider call failed (after retries)
    ├── MaxIterationsExceeded (RuntimeError)
    ├── BudgetExceeded (RuntimeError)       the run tree spent a limit of its Budget
    ├── RunPaused                           the run waits for a person (resume it)
    ├── JournalDivergence                   a re-run asks what its journal did not record
    ├── DecisionError (ValueError)          the model never picked a valid option
    └── StructuredOutputError (ValueError)  the structured answer never validated
        ├── InvalidSchemaError              .code == "invalid_schema"
        ├── InvalidJSONError                .code == "invalid_json"
        ├── ValidationFailedError           .code == "validation_failed"
        ├── MissingSubmissionError          .code == "missing_submission"
        ├── RefusalError                    .code == "refusal"
        └── UnsupportedStructuredOutputError .code == "unsupported"

Tool-side failures (bad arguments, exceptions in a body, timeouts) never raise
out of the loop: they become error results the model can read and act on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Literal

if TYPE_CHECKING:
    from openprogram._pause import PendingCall
    from openprogram.budget import BudgetUsage

__all__ = [
    "BudgetExceeded",
    "ConfigurationError",
    "DecisionError",
    "InvalidJSONError",
    "InvalidSchemaError",
    "JournalDivergence",
    "LLMError",
    "LLMErrorReason",
    "MaxIterationsExceeded",
    "MissingSubmissionError",
    "ModelRequestsBlocked",
    "OpenProgramError",
    "RefusalError",
    "RunFailed",
    "RunPaused",
    "SchemaError",
    "StructuredOutputError",
    "ToolError",
    "UnsupportedStructuredOutputError",
    "UserError",
    "ValidationFailedError",
]


class OpenProgramError(Exception):
    """Base class of every error openprogram raises on purpose."""


class UserError(OpenProgramError, ValueError):
    """The API was used wrongly: the message says what, where and how to fix it."""


class SchemaError(UserError, TypeError):
    """A function cannot become a tool; lists every problem of its signature at once.

    Attributes:
        qualname: Qualified name of the offending function.
        problems: One line per problem, in signature order.
    """

    def __init__(self, qualname: str, problems: Sequence[str]) -> None:
        self.qualname = qualname
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        super().__init__(f"cannot derive a tool schema for {qualname} ({count} {noun}):\n{lines}")


class ConfigurationError(UserError):
    """openprogram is not configured to do what was asked (provider, extras, env)."""


class ModelRequestsBlocked(ConfigurationError):
    """A real provider was asked to send a request while model requests are blocked.

    Raised before anything is sent or started; the message names the provider, where
    the request would have gone, and how to allow it. See ``openprogram.testing``.
    """


class ToolError(OpenProgramError):
    """Raised by a tool body to send the model an error text on purpose.

    The loop turns it into an error result carrying exactly ``str(error)``;
    unlike other exceptions, no type name is prefixed.
    """


LLMErrorReason = Literal[
    "transport",
    "rate_limit",
    "auth",
    "invalid_request",
    "context_length",
    "content_filter",
    "server",
    "timeout",
]


class LLMError(OpenProgramError):
    """A provider call failed, after any retries it was entitled to.

    Attributes:
        reason: What kind of failure it was (see ``LLMErrorReason``).
        retryable: Whether trying again later could succeed.
        http_status: The HTTP status, if the failure had one.
        retry_after_s: The server's ``Retry-After`` in seconds, if it sent one.
        attempts: How many requests were made in all.
        provider: Provider id, e.g. ``"openai"``.
        model: Model id the request named.
        provider_message: The provider's own error message, verbatim.
        body_excerpt: The start of a reply body that was not the wire format (keys
            scrubbed, at most 200 characters). It may hold the model's answer, so it is
            kept out of the message and out of events unless ``trace_payloads=True``.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: LLMErrorReason,
        retryable: bool = False,
        http_status: int | None = None,
        retry_after_s: float | None = None,
        attempts: int = 1,
        provider: str | None = None,
        model: str | None = None,
        provider_message: str | None = None,
        body_excerpt: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason: LLMErrorReason = reason
        self.retryable = retryable
        self.http_status = http_status
        self.retry_after_s = retry_after_s
        self.attempts = attempts
        self.provider = provider
        self.model = model
        self.provider_message = provider_message
        self.body_excerpt = body_excerpt

    def __str__(self) -> str:
        where = ":".join(x for x in (self.provider, self.model) if x)
        status = f" HTTP {self.http_status}" if self.http_status is not None else ""
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        head = f"[{where}] " if where else ""
        return f"{head}{self.reason}{status}{tries}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"LLMError({self.message!r}, reason={self.reason!r}, retryable={self.retryable}, "
            f"http_status={self.http_status}, attempts={self.attempts}, "
            f"provider={self.provider!r}, model={self.model!r})"
        )


class MaxIterationsExceeded(OpenProgramError, RuntimeError):
    """The loop hit its iteration cap with ``on_max_iterations="raise"``."""


class BudgetExceeded(OpenProgramError, RuntimeError):
    """A run tree spent one of the limits of its ``Budget``.

    Raised by the exec that hit the limit; inside a tool body it becomes that
    tool's error result, so the model of the enclosing exec can still answer.

    Attributes:
        limit: Which limit: ``"model_calls"``, ``"tool_calls"``, ``"agentic_calls"``,
            ``"tokens"``, ``"seconds"`` or ``"threads"``.
        used: How much of it the tree had spent.
        allowed: The limit's value.
        usage: What the whole tree had spent, every limit (``openprogram.BudgetUsage``).
    """

    def __init__(
        self, message: str, *, limit: str, used: float, allowed: float, usage: BudgetUsage
    ) -> None:
        super().__init__(message)
        self.limit = limit
        self.used = used
        self.allowed = allowed
        self.usage = usage


class RunPaused(OpenProgramError):
    """The run waits for a person: an approval hook returned ``PAUSE``.

    Raised by the outermost exec once the other calls of the paused calls'
    batches have finished and been journaled; nothing holds a thread or a
    process while the run waits. Go on with ``runtime.resume(run_id,
    approve=[...], deny={...})`` in any process sharing the store.

    Attributes:
        run_id: The paused run.
        pending: The calls it waits on, in run-tree order (``PendingCall``).
    """

    def __init__(self, message: str, *, run_id: str, pending: Sequence[PendingCall]) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.pending = tuple(pending)


class RunFailed(OpenProgramError):
    """A run taken by a worker raised (``runtime.result``); the run is recorded as failed.

    Attributes:
        run_id: The run.
        error: What it raised, as its record holds it (type and message).
    """

    def __init__(self, message: str, *, run_id: str, error: str | None) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.error = error


class JournalDivergence(OpenProgramError):
    """A re-run of a journaled run asked for something its journal did not record.

    Raised before anything runs live: the program, its content or its options
    changed since the run was journaled (another request at a recorded model
    turn, another call at a recorded position). The message says what differs.

    Attributes:
        run_id: The run whose journal disagrees.
        path: Where in the run tree (docs/durable.md, "Keys"), e.g. ``"1.0/0/2"``.
    """

    def __init__(self, message: str, *, run_id: str, path: str) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.path = path


class DecisionError(OpenProgramError, ValueError):
    """The model did not pick a valid option, even after one re-ask (or the pick was refused).

    Attributes:
        problem: What was wrong with the last pick, e.g. ``unknown option 'x'``;
            ``"aborted"`` when the model call was aborted before a pick came back.
        reply: The model's last reply text, if there was one.
    """

    def __init__(self, message: str, *, problem: str = "", reply: str | None = None) -> None:
        super().__init__(message)
        self.problem = problem or message
        self.reply = reply


class StructuredOutputError(OpenProgramError, ValueError):
    """The structured answer could not be obtained; ``.code`` is stable for programs.

    Raised as this base class (``code == "structured_output"``) when the model
    call was aborted before an answer came back.

    Attributes:
        violations: One ``"path: message"`` line per problem found (may be empty).
        raw: The model's last answer as text, if there was one.
    """

    code: ClassVar[str] = "structured_output"

    def __init__(
        self, message: str, *, violations: Sequence[str] = (), raw: str | None = None
    ) -> None:
        super().__init__(message)
        self.violations = tuple(violations)
        self.raw = raw


class InvalidSchemaError(StructuredOutputError):
    """The requested ``response_format`` is not a usable schema."""

    code: ClassVar[str] = "invalid_schema"


class InvalidJSONError(StructuredOutputError):
    """The model's answer was not parseable JSON."""

    code: ClassVar[str] = "invalid_json"


class ValidationFailedError(StructuredOutputError):
    """The model's JSON did not validate against the schema, even after a repair turn."""

    code: ClassVar[str] = "validation_failed"


class MissingSubmissionError(StructuredOutputError):
    """The model finished without submitting a structured answer."""

    code: ClassVar[str] = "missing_submission"


class RefusalError(StructuredOutputError):
    """The model refused to produce the structured answer."""

    code: ClassVar[str] = "refusal"


class UnsupportedStructuredOutputError(StructuredOutputError):
    """No strategy for structured output is available with this provider and options."""

    code: ClassVar[str] = "unsupported"
