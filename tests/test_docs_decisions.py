"""Every ```python block of the decision and structured-output docs runs as written.

Blocks of one page run in order in one namespace, like a reader pasting them
into one session; the shipped fakes stand in for the model, so no network.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from openprogram import default_registry

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = ["decisions.md", "structured-output.md"]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(page: str) -> list[tuple[int, str]]:
    """``(line number, source)`` of each python block of ``page``."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in _BLOCK.finditer(text)]


@pytest.fixture
def clean_registry() -> Iterator[None]:
    """Unregister what the examples' decorators add to the shared default registry."""
    before = set(default_registry.names())
    yield
    for name in set(default_registry.names()) - before:
        default_registry.unregister(name)


@pytest.mark.usefixtures("clean_registry")
@pytest.mark.parametrize("page", PAGES)
def test_every_python_block_runs(page: str) -> None:
    blocks = python_blocks(page)
    assert len(blocks) >= 4, f"docs/{page} lost its examples"
    namespace: dict[str, object] = {"__name__": f"docs_{page.replace('-', '_')[:-3]}"}
    for line, source in blocks:
        # dont_inherit: the blocks run under their own rules, not this module's __future__
        code = compile(source, f"docs/{page}:{line}", "exec", dont_inherit=True)
        exec(code, namespace)
