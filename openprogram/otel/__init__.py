"""OpenTelemetry traces of runs: an observer that turns the event tree into GenAI spans.

Install the extra (``pip install 'openprogram-ai[otel]'``) and add the observer::

    from openprogram.otel import OpenTelemetryObserver
    rt = Runtime(provider, observers=[OpenTelemetryObserver()])

Spans follow the OpenTelemetry GenAI semantic conventions (``SEMCONV_VERSION``):

- one ``invoke_agent [agent name]`` span (kind ``INTERNAL``) per exec, from
  ``AgentInvoked`` to ``AgentEnd``;
- one ``chat {model}`` span (kind ``CLIENT``) per model call, with provider,
  model, finish reason and token usage;
- one ``execute_tool {name}`` span (kind ``INTERNAL``) per tool call, from
  ``ToolCallStarted`` to its terminal event.

A nested exec (an agentic function's body) becomes a child of the tool span of
the call that started it, so the span tree mirrors the exec tree. Exec and tool
spans are made *current* while they run, so an exec started inside your own
span joins it, and spans your code opens in a tool body nest under that tool.

Data policy: spans carry what events carry. Argument, result and message texts
appear (``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``,
``gen_ai.input.messages``, ``gen_ai.output.messages``) only when the runtime was
made with ``Runtime(trace_payloads=True)``; otherwise hashes and sizes only.
See ``docs/observability.md``.
"""

from __future__ import annotations

from openprogram.otel._attributes import PROVIDER_NAMES, SEMCONV_VERSION
from openprogram.otel._observer import OpenTelemetryObserver

__all__ = ["PROVIDER_NAMES", "SEMCONV_VERSION", "OpenTelemetryObserver"]
