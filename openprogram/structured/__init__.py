"""Structured output: ``exec(response_format=...)`` as a pydantic model class or a JSON Schema.

A model class gives back an instance; a JSON Schema dict gives back the
validated JSON value. How the answer is obtained depends on the provider:

1. ``"native"`` — the provider declares ``native_structured_output``: the schema
   travels in ``ProviderRequest.response_format`` and the final text is the answer.
2. ``"tool"`` — otherwise, by default: a hidden submit tool whose arguments are
   the answer. It is terminal (never executed as a normal tool) and, while it is
   offered, requests ask for one call at a time.
3. ``"prompt"`` — only with ``structured_fallback="prompt"``: instructions and the
   schema in the prompt; the reply text is the answer.

Whatever the strategy, the answer is validated locally against the original
schema. A bad answer gets one repair turn that states the exact violations;
after that a ``StructuredOutputError`` subclass with a stable ``.code`` is raised.

The code follows the flow of one exec: the options (``_options``:
``response_format=``; ``_choices``: ``choices=``), what the request carries
(``_turns`` for structured output; ``_render`` writes a decision's menu),
parsing the final reply (``_parse``), and the one repair turn (``_turns``;
``_decision`` for a decision's re-ask, public as ``openprogram.decision``).
"""

from __future__ import annotations

from openprogram.structured._options import (
    SUBMIT_TOOL_NAME,
    OutputSchema,
    Strategy,
    StructuredFallback,
    choose_strategy,
    is_model_class,
    output_schema,
)
from openprogram.structured._parse import iter_json_values, parse_json_answer

__all__ = [
    "SUBMIT_TOOL_NAME",
    "OutputSchema",
    "Strategy",
    "StructuredFallback",
    "choose_strategy",
    "is_model_class",
    "iter_json_values",
    "output_schema",
    "parse_json_answer",
]
