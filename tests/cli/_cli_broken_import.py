"""A user module whose own import fails: a dependency it needs is missing."""

from __future__ import annotations

import openprogram_no_such_dependency_xyz  # noqa: F401 - the failure under test


def target() -> str:
    return "never"
