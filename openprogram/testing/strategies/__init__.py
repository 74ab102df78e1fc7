"""Hypothesis strategies for tools, policies and registries: property-test your own gating rules.

Every strategy draws from a small, shared vocabulary (tool names, toolsets,
channel sources, environment variables) so that drawn policies actually
mention drawn tools; pass your own vocabulary to aim them at your program.
Predicates drawn here (``check_fn``, ``can_use``) are deterministic objects
with a readable ``repr``, so a failing example shrinks to something you can
read. Needs ``hypothesis`` (a dev dependency).

Example — "the shell tool is never offered to a chat channel", checked for
every policy a caller could pass::

    from hypothesis import given
    from openprogram.gates import Policy, resolve
    from openprogram.testing.strategies import policies_for

    @given(policies_for(my_registry, sources=["chat", "cli"]))
    def test_no_shell_in_chat(policy):
        if "chat" in policy.sources:
            assert "shell" not in resolve(my_registry, policy).offered_names

``from_json_schema(schema)`` draws valid JSON values for a JSON Schema (the
tool parameters and response formats openprogram derives), e.g. to fuzz a
tool's body with arguments a model could send.

Strategies: ``from_json_schema``, ``tool_names``, ``check_fns``, ``can_use_predicates``, ``tools``,
``lazy_tools``, ``tool_lists``, ``environments``, ``policies``,
``policies_for``, ``registries``, ``scenarios``.
"""

from __future__ import annotations

from openprogram.testing.strategies._gate_parts import (
    Always,
    Raises,
    Scenario,
    SourceIn,
    describe,
)
from openprogram.testing.strategies._json_schema import from_json_schema
from openprogram.testing.strategies._policies import environments, policies, policies_for
from openprogram.testing.strategies._scenarios import registries, scenarios
from openprogram.testing.strategies._tools import (
    BROKEN_TARGET,
    SAMPLE_TARGET,
    can_use_predicates,
    check_fns,
    lazy_tools,
    sample_tool,
    tool_lists,
    tool_names,
    tools,
)
from openprogram.testing.strategies._vocabulary import (
    DEFAULT_ENV_VARS,
    DEFAULT_NAMES,
    DEFAULT_SOURCES,
    DEFAULT_TOOLSETS,
)

__all__ = [
    "BROKEN_TARGET",
    "DEFAULT_ENV_VARS",
    "DEFAULT_NAMES",
    "DEFAULT_SOURCES",
    "DEFAULT_TOOLSETS",
    "SAMPLE_TARGET",
    "Always",
    "Raises",
    "Scenario",
    "SourceIn",
    "can_use_predicates",
    "check_fns",
    "describe",
    "environments",
    "from_json_schema",
    "lazy_tools",
    "policies",
    "policies_for",
    "registries",
    "sample_tool",
    "scenarios",
    "tool_lists",
    "tool_names",
    "tools",
]
