"""``import openprogram`` loads only what defining tools needs; the rest loads on first use.

Each check runs in a fresh interpreter (a subprocess), since this one has
long since imported everything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Modules only running a tool or a model needs: asyncio brings ssl, socket and
# subprocess; httpx the connection stack; pydantic_core its core-schema module
# (about a sixth of what `import openprogram` used to cost); importlib.metadata
# the email parser.
NOT_AT_IMPORT = (
    "asyncio",
    "httpx",
    "importlib.metadata",
    "openprogram.events",
    "openprogram.runtime",
    "pydantic",
    "pydantic_core",
    "pydantic_core.core_schema",
    "ssl",
)


def run(code: str) -> str:
    """Run ``code`` in a fresh interpreter with this checkout first on the path."""
    env = {k: v for k, v in os.environ.items() if k != "OPENPROGRAM_MODEL"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def loaded_after(code: str) -> set[str]:
    """The modules loaded once ``code`` ran."""
    return set(json.loads(run(f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))")))


def test_import_openprogram_loads_no_runtime_network_or_validation_stack() -> None:
    loaded = loaded_after("import openprogram")
    assert sorted(loaded & set(NOT_AT_IMPORT)) == []


def test_decorating_a_function_loads_none_of_them_either() -> None:
    loaded = loaded_after(
        "from openprogram import function, Registry\n"
        "@function(registry=Registry())\n"
        "def add(a: int, b: int = 2) -> int:\n"
        "    '''Add two integers.'''\n"
        "    return a + b\n"
        "assert add(1) == 3"
    )
    assert sorted(loaded & {"asyncio", "httpx", "ssl", "openprogram.runtime"}) == []


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("Runtime", "openprogram.runtime"),
        ("run_tools", "openprogram.runtime"),
        ("Policy", "openprogram.gates"),
        ("UserMessage", "openprogram.messages"),
        ("OpenAIProvider", "openprogram.providers"),
    ],
)
def test_a_name_loaded_on_first_use_is_the_modules_own(name: str, module: str) -> None:
    out = run(
        "import importlib, openprogram\n"
        f"print(getattr(openprogram, {name!r}) is getattr(importlib.import_module({module!r}), "
        f"{name!r}))"
    )
    assert out.strip() == "True"


def test_subpackages_are_reachable_as_attributes_after_a_bare_import() -> None:
    out = run("import openprogram\nprint(openprogram.runtime.Runtime is openprogram.Runtime)")
    assert out.strip() == "True"


def test_an_agentic_function_called_first_thing_gets_the_default_runtime() -> None:
    # Nothing has loaded the runtime yet: the default runtime must still be there.
    out = run(
        "from openprogram import agentic_function\n"
        "@agentic_function\n"
        "def which(runtime) -> str:\n"
        "    '''Which runtime runs me.'''\n"
        "    return type(runtime).__name__\n"
        "print(which())"
    )
    assert out.strip() == "Runtime"


def test_running_a_tool_first_thing_works() -> None:
    out = run(
        "import asyncio\n"
        "from openprogram import function\n"
        "@function(register_globally=False)\n"
        "def add(a: int, b: int) -> int:\n"
        "    '''Add two integers.'''\n"
        "    return a + b\n"
        "print(asyncio.run(add.execute({'a': 1, 'b': 2})).content)"
    )
    assert out.strip() == "3"
