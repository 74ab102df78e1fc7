"""The refund program of the durable-run tests, its tools in the default registry, for
``openprogram resume --module _cli_refunds --model _cli_refunds:refund_model`` (imported only
by the command's own process)."""

from __future__ import annotations

from openprogram import default_registry
from openprogram.testing import FunctionProvider
from tests.durable._refunds import handle_order, issue_refund, lookup_order, model

for tool in (handle_order.tool, lookup_order, issue_refund):
    default_registry.register(tool)


def refund_model() -> FunctionProvider:
    """The fake model of the refund program."""
    return FunctionProvider(model)
