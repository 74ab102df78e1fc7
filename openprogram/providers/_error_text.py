"""The text of a failed call: a hint at what to do for its reason, and no secret in it."""

from __future__ import annotations

from openprogram.exceptions import LLMError
from openprogram.providers._http import Redactor
from openprogram.providers._wire import EXCERPT_CHARS, set_message

__all__ = ["HINTS", "hinted", "scrubbed"]

HINTS = {
    "auth": "check the API key or credentials and that they may use this model",
    "rate_limit": "slow down, or raise the account's rate limit or quota",
    "context_length": "shorten the conversation or pick a model with a larger context window",
    "invalid_request": "check the model name and the request options",
    "content_filter": "the provider's content policy blocked the request",
}
"""What to do, by ``LLMError.reason``, appended to the message of an HTTP error response."""


def hinted(err: LLMError) -> LLMError:
    """``err`` with the hint for its reason appended to its message, if there is one."""
    hint = HINTS.get(err.reason)
    if hint:
        set_message(err, f"{err.message} ({hint})")
    return err


def scrubbed(err: LLMError, redact: Redactor) -> LLMError:
    """``err`` with every secret replaced in its message, provider message and body excerpt."""
    set_message(err, redact(err.message))
    if err.provider_message is not None:
        err.provider_message = redact(err.provider_message)
    if err.body_excerpt is not None:
        err.body_excerpt = redact.cut(err.body_excerpt, EXCERPT_CHARS)
    return err
