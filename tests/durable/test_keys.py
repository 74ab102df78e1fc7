"""Journal keys: positions in the run tree as text, and back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprogram import UserError
from openprogram.durable import idempotency_key, key_kind, parse_path, path_text

positions = st.lists(st.integers(0, 60), max_size=12).map(tuple)


@given(positions)
def test_a_position_reads_back_from_its_text(path: tuple[int, ...]) -> None:
    assert parse_path(path_text(path)) == path


@pytest.mark.parametrize(
    ("path", "text", "kind"),
    [
        ((), "", "exec"),
        ((1,), "1", "turn"),
        ((1, 0), "1.0", "call"),
        ((1, 0, 0), "1.0/0", "exec"),
        ((1, 0, 0, 2), "1.0/0/2", "turn"),
        ((1, 0, 0, 2, 1), "1.0/0/2.1", "call"),
    ],
)
def test_the_text_of_each_kind_of_position(path: tuple[int, ...], text: str, kind: str) -> None:
    assert path_text(path) == text
    assert key_kind(path) == kind


@pytest.mark.parametrize("text", ["1..0", "a", "1.0.0", "1/0", "1.0/", " 1"])
def test_text_that_is_no_position_is_refused(text: str) -> None:
    with pytest.raises(UserError, match="is not a position in a run tree"):
        parse_path(text)


def test_an_idempotency_key_is_the_run_and_the_call() -> None:
    assert idempotency_key("refund-1", "1.0/0/1.1") == "refund-1:1.0/0/1.1"
