"""docs/mcp.md runs as written, and leaves no server behind even when a block fails.

Blocks run in order in one namespace, like a reader pasting them into one
session. A block under ``<!-- no-run: reason -->`` (the HTTP example needs a
server the test cannot provide) is only compiled, the convention of
``tests/test_docs.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

from openprogram.mcp import close_all

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
_BLOCK = re.compile(r"(<!-- no-run: [^>]+-->\n)?^```python\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[int, bool, str]]:
    """``(line of the first source line, runs, source)`` of every python block."""
    text = DOC.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start(2)) + 1, m.group(1) is None, m.group(2))
        for m in _BLOCK.finditer(text)
    ]


def test_the_doc_keeps_its_examples() -> None:
    found = blocks()
    assert len(found) >= 7
    assert [runs for _, runs, _ in found].count(False) == 1  # only the HTTP example


def test_every_example_runs() -> None:
    namespace: dict[str, object] = {"__name__": "docs_mcp"}
    try:
        for line, runs, source in blocks():
            # Padded so that a traceback points at the line of docs/mcp.md itself.
            code = compile("\n" * (line - 1) + source, str(DOC), "exec", dont_inherit=True)
            if runs:
                exec(code, namespace)
    finally:
        close_all()  # a failing block must not leave its server running
    weather = namespace["weather"]
    assert getattr(weather, "closed", False), "the page's last example closes its server"
