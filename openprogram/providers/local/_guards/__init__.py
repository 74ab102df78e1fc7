"""What the guards of ``.._pipeline`` are made of: each works around one quirk.

The grammar a reply must follow, the reader of call lists, the loop watch,
decision options as functions, the one-token call-share probe, the meter of a
reply stopped early, and the reply stage that runs them on a streamed reply.
"""

from openprogram.providers.local._guards._calls import (
    Broken,
    CallScanner,
    ParsedCalls,
    fresh_calls,
    opens_calls,
    read_calls,
    shape_reply,
    trailing_calls,
)
from openprogram.providers.local._guards._grammar import (
    ANSWER_GRAMMAR,
    MAX_CALLS,
    answer_grammar,
    calls_grammar,
)
from openprogram.providers.local._guards._loops import (
    COPIES,
    ECHO,
    ECHOES,
    LoopWatch,
    loop_cut,
    whole_cut,
)
from openprogram.providers.local._guards._meter import Meter, timings_usage
from openprogram.providers.local._guards._odds import CALL_THRESHOLD, call_share, probe_body
from openprogram.providers.local._guards._picks import Pick, as_pick, pick_functions, picks_of
from openprogram.providers.local._guards._reply import BrokenReply, shaped

__all__ = [
    "ANSWER_GRAMMAR",
    "CALL_THRESHOLD",
    "COPIES",
    "ECHO",
    "ECHOES",
    "MAX_CALLS",
    "Broken",
    "BrokenReply",
    "CallScanner",
    "LoopWatch",
    "Meter",
    "ParsedCalls",
    "Pick",
    "answer_grammar",
    "as_pick",
    "call_share",
    "calls_grammar",
    "fresh_calls",
    "loop_cut",
    "opens_calls",
    "pick_functions",
    "picks_of",
    "probe_body",
    "read_calls",
    "shape_reply",
    "shaped",
    "timings_usage",
    "trailing_calls",
    "whole_cut",
]
