"""Paths and process plumbing shared by every benchmark script.

The peer frameworks live only in ``bench/.venv`` (made by ``setup_peers.sh``),
so a script started with another interpreter re-executes itself there.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
VENV_DIR = BENCH_DIR / ".venv"
VENV_PYTHON = VENV_DIR / "bin" / "python"
RESULTS_DIR = BENCH_DIR / "results"


def use_bench_venv() -> None:
    """Re-execute the running script with the bench venv's interpreter.

    Does nothing when already inside the venv, or when the venv does not exist
    yet (peers are then reported as not importable, with a hint).
    """
    if not VENV_PYTHON.exists() or Path(sys.prefix).resolve() == VENV_DIR.resolve():
        return
    os.execv(VENV_PYTHON, [str(VENV_PYTHON), *sys.argv])


def prepare_environment() -> None:
    """Set up imports for this process and every child it starts.

    - openprogram is imported from this work tree, installed editable or not:
      the package is written concurrently with the benchmarks, and until its
      editable install works the work tree goes on ``sys.path`` (and on
      ``PYTHONPATH`` for children).
    - Bytecode is cached under ``bench/.venv/pycache`` for everyone: this
      machine sets ``PYTHONDONTWRITEBYTECODE``, which would make every import
      of the work tree (but not of pip-installed peers, compiled at install)
      recompile from source, and the prefix keeps ``__pycache__`` directories
      out of the work tree.
    """
    root = str(REPO_ROOT)
    if root not in sys.path:
        sys.path.insert(0, root)
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, *paths) if p)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    if VENV_DIR.exists():
        prefix = str(VENV_DIR / "pycache")
        os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = prefix


def venv_hint() -> str:
    """Return a one-line hint when the bench venv is missing, else ``""``."""
    if VENV_PYTHON.exists():
        return ""
    return "bench/.venv missing: run `bash bench/setup_peers.sh` to install the peers"
