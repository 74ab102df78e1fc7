"""docs/gates.md documents every layer and law (its examples run in tests/test_docs.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hypothesis import find, settings

from openprogram.gates import GateContext, Policy
from openprogram.testing.strategies import policies_for
from openprogram.tools import Tool

DOC = Path(__file__).resolve().parent.parent / "docs" / "gates.md"


def test_the_page_documents_every_layer_and_law() -> None:
    text = DOC.read_text(encoding="utf-8")
    for layer in (
        "L2 expose",
        "L2b toolset",
        "L3 channel",
        "L4 availability",
        "L5 veto",
        "L6 defer",
    ):
        assert f'"{layer}"' in text
    for law in range(1, 9):
        assert f"\n{law}. " in text


_SECTION = "## Property-testing your own gating rules"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _rules_module() -> dict[str, Any]:
    """The section's example, run as the test module it says it is (its own imports only)."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split(_SECTION, 1)[1].split("\n## ", 1)[0]
    [block] = _BLOCK.findall(section)
    namespace: dict[str, Any] = {"__name__": "docs_gates_rules"}
    # Defined, not yet run: the calls at the end are for readers pasting it into a session.
    exec(block.split("\ntest_", 1)[0], namespace)
    return namespace


def test_the_documented_rules_are_tests_that_pass() -> None:
    module = _rules_module()
    tests = [value for name, value in module.items() if name.startswith("test_")]
    assert len(tests) == 3
    for test in tests:
        test()


def test_the_documented_rules_catch_a_broken_rule() -> None:
    """A can_use rule that forgets enclosing channels breaks the documented property.

    The documented strategy reaches a policy showing it (found deterministically here,
    where the test itself draws at random).
    """
    module = _rules_module()
    app = module["app"]

    def restart_service(service: str) -> str:
        """Restart a service."""
        return ""

    def from_the_command_line(ctx: GateContext) -> bool:
        return ctx.source == "cli"  # forgets the channels of enclosing execs

    broken = Tool(name="restart_service", fn=restart_service, can_use=from_the_command_line)
    app.register(broken, replace=True)
    rule = module["test_only_the_command_line_may_restart_a_service"].hypothesis.inner_test

    def breaks(policy: Policy) -> bool:
        try:
            rule(policy)
        except AssertionError:
            return True
        return False

    strategy = policies_for(app, sources=["chat", "web", "cli"])
    once = settings(derandomize=True, database=None, max_examples=2000)
    found = find(strategy, breaks, settings=once)
    assert found.source == "cli"
    assert found.sources != {"cli"}
