"""docs/gates.md documents every layer and law (its examples run in tests/test_docs.py)."""

from __future__ import annotations

from pathlib import Path

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
