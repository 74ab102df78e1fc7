"""The examples in the runtime's and the fakes' docstrings run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "openprogram.runtime._run_tools",
    "openprogram.budget",
    "openprogram.runtime._runtime",
    "openprogram.runtime._tree",
    "openprogram.decorators._agentic",
    "openprogram.testing",
    "openprogram.testing._fakes",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0
    assert failed == 0
