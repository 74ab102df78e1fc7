"""Durable runs: the journal of a run tree, its keys, fingerprints and step contents.

The runtime journals every exec of a runtime with a store (docs/durable.md):
``Journal`` is one running tree's journal, ``_keys`` writes positions in the
tree as text, ``_fingerprint`` hashes requests so a re-run can tell whether it
still asks what was recorded, ``_codec`` is what each step holds. The store
side is ``openprogram.stores.RunStore``; the runtime side (replaying replies
and calls, effects, pauses, resume) lives in ``openprogram.runtime``.
"""

from __future__ import annotations

from openprogram.durable._codec import (
    ValueCodec,
    dumps_json,
    mark_attempt,
    mark_step,
    read_reply,
    read_result,
    reply_step,
    result_step,
)
from openprogram.durable._fingerprint import (
    Fingerprint,
    Requests,
    call_print,
    explain,
    normal_message,
)
from openprogram.durable._journal import FLUSH_S, Journal
from openprogram.durable._keys import idempotency_key, key_kind, parse_path, path_text

__all__ = [
    "FLUSH_S",
    "Fingerprint",
    "Journal",
    "Requests",
    "ValueCodec",
    "call_print",
    "dumps_json",
    "explain",
    "idempotency_key",
    "key_kind",
    "mark_attempt",
    "mark_step",
    "normal_message",
    "parse_path",
    "path_text",
    "read_reply",
    "read_result",
    "reply_step",
    "result_step",
]
