"""The examples in the docstrings of the registry, gates and strategies modules run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "openprogram.registry._registry",
    "openprogram.gates._policy",
    "openprogram.gates._search",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} lost its examples"
    assert result.failed == 0
