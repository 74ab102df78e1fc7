"""docs/providers.md: its Python examples compile, and the ones marked to run do run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "providers.md"
BLOCK = re.compile(r"(<!-- test: run -->\n)?```python\n(.*?)```", re.DOTALL)
BLOCKS = [(bool(m.group(1)), m.group(2)) for m in BLOCK.finditer(DOC.read_text())]


def test_the_doc_has_examples() -> None:
    assert len(BLOCKS) >= 3
    assert any(run for run, _ in BLOCKS)


@pytest.mark.parametrize(("run", "code"), BLOCKS)
def test_examples(run: bool, code: str, clean_env: pytest.MonkeyPatch) -> None:
    compiled = compile(code, str(DOC), "exec")
    if run:  # constructing providers touches neither the network nor the environment
        exec(compiled, {})
