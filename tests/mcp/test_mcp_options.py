"""``register_server`` options, name mapping and the missing-SDK error (no server needed)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from typing import Any, get_type_hints

import pytest

from openprogram.exceptions import ConfigurationError, UserError
from openprogram.mcp import ServerKwargs, ServerOptions, register_server
from openprogram.mcp._names import map_names
from openprogram.registry import Registry
from openprogram.tools import TOOL_NAME_PATTERN

STDIO = {"command": [sys.executable, "server.py"]}
HTTP = {"url": "http://127.0.0.1:9/mcp"}


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, "give exactly one of command="),
        ({**STDIO, **HTTP}, "give exactly one of command="),
        ({**HTTP, "env": {"A": "1"}}, "env= and cwd= apply to stdio servers"),
        ({**HTTP, "cwd": "/tmp"}, "env= and cwd= apply to stdio servers"),
        ({**STDIO, "headers": {"A": "1"}}, "headers= apply to HTTP servers"),
        ({"url": "ftp://example.org/mcp"}, "url must be an http(s) URL"),
        ({"command": []}, "command must be a program and its arguments"),
        ({"command": ""}, "command must be a program and its arguments"),
        ({**STDIO, "timeout": 0}, "timeout must be a number of seconds > 0 or None"),
        ({**STDIO, "connect_timeout": None}, "connect_timeout must be a number of seconds > 0,"),
        ({**STDIO, "reconnect_attempts": -1}, "reconnect_attempts must be an integer >= 0"),
        ({**STDIO, "reconnect_attempts": True}, "reconnect_attempts must be an integer >= 0"),
        ({**STDIO, "requires_approval": "yes"}, "requires_approval must be True, False or"),
        ({**STDIO, "prefix": "my tools."}, "invalid prefix 'my tools.'"),
        ({**STDIO, "prefix": "p" * 33}, "use at most 32 letters"),
    ],
)
def test_invalid_options_are_refused_before_anything_starts(
    options: dict[str, Any], expected: str
) -> None:
    before = threading.active_count()
    with pytest.raises(UserError, match="register_server") as info:
        register_server(Registry(), "srv", **options)
    assert expected in str(info.value)
    assert threading.active_count() == before


@pytest.mark.parametrize("name", ["", "two words", "a.b", "x" * 65, "none", 7])
def test_invalid_server_names_are_refused(name: Any) -> None:
    with pytest.raises(UserError, match="invalid server name"):
        register_server(Registry(), name, **STDIO)  # type: ignore[arg-type]


def test_unknown_options_and_a_non_registry_are_refused() -> None:
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['retries'\]; known options:"):
        register_server(Registry(), "srv", retries=3, **STDIO)  # type: ignore[call-arg]
    with pytest.raises(UserError, match="first argument must be an openprogram Registry"):
        register_server({}, "srv", **STDIO)  # type: ignore[arg-type]


def test_server_kwargs_and_server_options_list_the_same_fields() -> None:
    assert list(get_type_hints(ServerKwargs)) == list(ServerOptions.__dataclass_fields__)


def test_names_are_prefixed_made_valid_and_unique() -> None:
    mapped = map_names(["read", "files/read", "files.read", "files_read", "x" * 80, ""], "fs_")
    assert mapped["read"] == "fs_read"
    assert mapped["files/read"] == "fs_files_read"
    assert mapped["files.read"].startswith("fs_files_read_")  # a clash gets a hash suffix
    assert mapped["files_read"].startswith("fs_files_read_")
    assert len(set(mapped.values())) == len(mapped)
    assert all(TOOL_NAME_PATTERN.match(name) for name in mapped.values())
    assert len(mapped["x" * 80]) == 64
    assert map_names(["files.read", "files/read"], "fs_") == map_names(
        ["files.read", "files/read"], "fs_"
    )  # stable across listings


def test_no_prefix_keeps_valid_names_as_they_are() -> None:
    assert map_names(["search", "get-page"], "") == {"search": "search", "get-page": "get-page"}


_WITHOUT_SDK = textwrap.dedent(
    """
    import sys
    sys.modules["mcp"] = None  # makes "import mcp" fail, as when the extra is missing
    import openprogram.mcp
    from openprogram.exceptions import ConfigurationError
    from openprogram.registry import Registry
    try:
        openprogram.mcp.register_server(Registry(), "srv", command=["server"])
    except ConfigurationError as exc:
        print(exc)
    """
)


def test_without_the_sdk_the_package_imports_and_registration_says_how_to_install() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_SDK], capture_output=True, text=True, check=True
    )
    assert "openprogram.mcp.register_server needs the official MCP SDK, version 2" in done.stdout
    assert "pip install 'openprogram-ai[mcp]'" in done.stdout
    assert issubclass(ConfigurationError, UserError)
