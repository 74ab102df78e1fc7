"""How likely the local model is to call a function now: one token, read before the reply.

A small model often calls an unrelated function when none of the offered
ones can serve the request. Its first token says how sure it is: asked for
one token with its probabilities (no grammar), the share of call openers
(``[``, a code fence, ``{``) is low where no function fits. Below a threshold
(``LocalProvider(call_threshold=)``) the provider asks for a plain answer
instead (the function list left out). Off by default: vague requests that
do need a call can score as low as irrelevant ones
(``bench/local-model/NOTES.md`` has the shares measured). The probe costs
one generated token: its prompt is the reply's, which llama.cpp then finds
in its cache. It is a real model call, so its tokens are added to the
reply's usage; it is sent with the provider's read timeout and within the
exec's deadline, like the reply (``LocalWire.call_share``).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["CALL_THRESHOLD", "call_share", "probe_body"]

CALL_THRESHOLD = 0.6
"""A threshold for specific requests, the value the docs suggest for ``call_threshold``."""

_TOP = 20
"""Candidates asked for: enough that the call openers among them carry their mass."""
_OPENERS = ("[", "`", "{")


def probe_body(body: dict[str, Any]) -> dict[str, Any]:
    """A reply's request body turned into the one-token probe (no grammar, no stream)."""
    probe = {k: v for k, v in body.items() if k not in ("grammar", "stream_options")}
    probe.update(stream=False, max_tokens=1, logprobs=True, top_logprobs=_TOP)
    return probe


def call_share(data: Any) -> float | None:
    """The probability mass of call openers on the probe's token, or ``None`` if unreadable."""
    try:
        top = data["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        if not top:
            return None  # no candidates (top_logprobs ignored): a share of 0 would be made up
        return sum(
            math.exp(float(t["logprob"]))
            for t in top
            if str(t["token"]).lstrip().startswith(_OPENERS)
        )
    except (KeyError, IndexError, TypeError, ValueError):
        return None
