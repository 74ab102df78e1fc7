"""Import paths for the reliability scripts: the work tree and the shared test helpers.

The scripts reuse ``tests/stress`` (fault catalogue, soak loop) and
``tests/providers`` (the loopback wire server), which import each other as
``stress`` and ``providers``, as pytest does with ``tests/`` on ``sys.path``.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def prepare() -> None:
    """Put the work tree and ``tests/`` first on ``sys.path``."""
    for path in (REPO_ROOT / "tests", REPO_ROOT):
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))
