"""Tools that ``openprogram mcp serve --module _served_tools`` serves in the CLI tests.

Imported by the server subprocess only: its decorators register into that
process's default registry. ``scripted_model`` is the ``--model`` the
agentic function runs on.
"""

from __future__ import annotations

from openprogram import Runtime, agentic_function, function
from openprogram.testing import ScriptedProvider

print("served tools imported")  # on stdout, which must not corrupt the protocol stream


@function
def add(a: int, b: int) -> int:
    """Add two integers."""
    print(f"adding {a} and {b}")  # likewise, while serving
    return a + b


@function(requires_approval=True)
def delete_file(path: str) -> str:
    """Delete a file (pretend)."""
    return f"deleted {path}"


@function
def shutdown() -> str:
    """Shut the machine down (pretend); the tests deny it."""
    return "shutting down"


@agentic_function
def summarize(text: str, runtime: Runtime) -> str:
    """Summarize a text in a few words."""
    return runtime.exec(f"Summarize: {text}", tools=[])


def scripted_model() -> ScriptedProvider:
    """The model ``summarize`` runs on: it always answers the same."""
    return ScriptedProvider(["A short summary."] * 20)
