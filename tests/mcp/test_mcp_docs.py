"""docs/mcp.md runs as written.

Blocks run in order in one namespace, in a temporary working directory, like
a reader pasting them into one session. A block under ``<!-- file: NAME -->``
is written to ``NAME`` there instead (the example server); one under
``<!-- test: compile -->`` needs a server the test cannot provide and is only
compiled.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openprogram.mcp import close_all

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
_BLOCK = re.compile(r"(?:<!-- (file|test): ([\w.]+) -->\n)?```python\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[int, str | None, str, str]]:
    """``(line, marker kind, marker value, source)`` of every python block."""
    text = DOC.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start(3)) + 1, m.group(1), m.group(2) or "", m.group(3))
        for m in _BLOCK.finditer(text)
    ]


def test_the_doc_has_its_examples() -> None:
    found = blocks()
    assert len(found) >= 7
    assert [(kind, value) for _, kind, value, _ in found if kind] == [
        ("file", "weather_server.py"),
        ("test", "compile"),
    ]


def test_every_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_mcp"}
    try:
        for line, kind, value, source in blocks():
            if kind == "file":
                (tmp_path / value).write_text(source, encoding="utf-8")
                continue
            # Padded so that tracebacks point at the line of docs/mcp.md itself.
            code = compile("\n" * (line - 1) + source, str(DOC), "exec", dont_inherit=True)
            if kind != "test":
                exec(code, namespace)
    finally:
        close_all()  # a failing block must not leave its server running
