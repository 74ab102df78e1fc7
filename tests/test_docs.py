"""Every ```python block of every page in docs/ runs as written.

Blocks of one page run in order in one namespace, like a reader pasting them
into one session; the shipped fakes stand in for the model, so nothing needs
a network. A block preceded by ``<!-- no-run: reason -->`` (it needs a real
provider key, say) is only compiled. A page that reads
``OPENPROGRAM_TEST_POSTGRES_URL`` runs with the session's PostgreSQL server.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(p.name for p in DOCS.glob("*.md"))
_BLOCK = re.compile(r"(<!-- no-run: [^>]+-->\n)?^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(page: str) -> list[tuple[int, bool, str]]:
    """``(line number, runs, source)`` of each python block of ``page``."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start(2)) + 1, m.group(1) is None, m.group(2))
        for m in _BLOCK.finditer(text)
    ]


def test_docs_exist() -> None:
    for page in ("concepts.md", "testing.md", "gates.md", "providers.md", "decisions.md"):
        assert page in PAGES


@pytest.mark.usefixtures("clean_registry")
@pytest.mark.parametrize("page", PAGES)
def test_every_python_block_runs(
    page: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    if "OPENPROGRAM_TEST_POSTGRES_URL" in (DOCS / page).read_text(encoding="utf-8"):
        monkeypatch.setenv("OPENPROGRAM_TEST_POSTGRES_URL", request.getfixturevalue("postgres_url"))
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENPROGRAM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    namespace: dict[str, object] = {"__name__": f"docs_{page[:-3].replace('-', '_')}"}
    for line, runs, source in python_blocks(page):
        # dont_inherit: the blocks run under their own rules, not this module's __future__
        code = compile(source, f"docs/{page}:{line}", "exec", dont_inherit=True)
        if runs:
            exec(code, namespace)
