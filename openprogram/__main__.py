"""``python -m openprogram``: the command-line interface."""

from __future__ import annotations

from openprogram.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
