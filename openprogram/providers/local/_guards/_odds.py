"""How likely the local model is to call a function now: one token, read before the reply.

On the BFCL questions the 0.5B model called an unrelated function for about
half of the requests no offered function can serve. Its first token says how
sure it is: asked for one token with its probabilities (no grammar), the
share of call openers (``[``, a code fence, ``{``) was, over 20 questions per
category, 0.00-0.78 (median 0.17) where no function fits, 0.54-0.92 (median
0.82) on single-function questions and 0.42-0.93 (median 0.80) on
pick-one-of-several. So below a threshold (``LocalProvider(call_threshold=)``)
the provider asks for a plain answer instead (the function list left out).
It is off by default: the README tour's request ("Help me plan a trip to
Paris." with ``plan_trip``) scored 0.55, inside the irrelevant range, so
0.6 answered it without planning. The probe costs one generated token: its
prompt is the reply's prompt, which llama.cpp then finds in its cache. It is a
real model call, so its tokens are added to the reply's usage; it is sent with
the provider's read timeout and within the exec's deadline, like the reply
(``LocalWire.call_share``).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["CALL_THRESHOLD", "call_share", "probe_body"]

CALL_THRESHOLD = 0.6
"""The threshold measured on BFCL (irrelevance 13/20 -> 16/20); the option's suggested value."""

_TOP = 20
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
