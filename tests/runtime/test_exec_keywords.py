"""The keywords of exec's last overloads (runtime/_unmatched.py) are exactly exec's options.

Those overloads re-list every keyword for mypy's sake (a TypedDict cannot
also take unknown keywords); a keyword added to ``CommonExecKwargs`` and
forgotten there would make mypy refuse it after a typo elsewhere in the call,
and one typed differently would make mypy answer ``Any`` for calls that pass
an ``Any`` value to it. The typing examples check what mypy then says
(tests/typing/examples/bad_keywords.py).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any, ForwardRef

import pytest

from openprogram.runtime import ExecOptions
from openprogram.runtime._options import CommonExecKwargs
from openprogram.runtime._unmatched import keywords_with_choices, keywords_without_choices

ANSWER_KEYWORDS = {"choices", "response_format"}


def _annotation(hint: Any) -> str:
    return hint.__forward_arg__ if isinstance(hint, ForwardRef) else str(hint)


@pytest.mark.parametrize("keywords", [keywords_without_choices, keywords_with_choices])
def test_the_last_overloads_take_every_option_typed_as_exec_does(
    keywords: Callable[..., None],
) -> None:
    parameters = inspect.signature(keywords).parameters
    named = {n: p for n, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    expected = {n: _annotation(h) for n, h in CommonExecKwargs.__annotations__.items()}
    assert {n: p.annotation for n, p in named.items() if n not in ANSWER_KEYWORDS} == expected
    assert set(named) == {f.name for f in dataclasses.fields(ExecOptions)}
    defaults = {f.name: f.default for f in dataclasses.fields(ExecOptions)}
    assert all(p.default == defaults[n] for n, p in named.items() if p.default is not p.empty)
    others = [p for p in parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert [p.annotation for p in others] == ["Refused"]


def test_every_exec_option_type_leaves_room_for_no_value() -> None:
    """Each option's type includes ``Refused``, so a wrong value is reported by keyword."""
    for name, hint in CommonExecKwargs.__annotations__.items():
        assert "| Refused" in _annotation(hint), name
