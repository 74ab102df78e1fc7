"""The documentation site builds with no warning, and the package's public surface is tidy.

``mkdocs build --strict`` renders every page and the API reference from the
docstrings, so a broken link, anchor or cross-reference, or a docstring griffe
cannot parse, fails here (about 2-5 s).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import openprogram

ROOT = Path(__file__).resolve().parent.parent


def test_mkdocs_build_strict_succeeds(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # mkdocs missing: install the dev extra (pip install -e '.[dev]'), which pins it
    assert done.returncode == 0, done.stderr[-4000:]
    reference = (site / "api" / "index.html").read_text(encoding="utf-8")
    # the reference really was generated from docstrings, not left as ':::' directives
    assert ":::" not in reference
    for name in ("openprogram.runtime.Runtime", "openprogram.testing.ScriptedProvider"):
        assert f'id="{name}"' in reference, name
    # every public method of Runtime, the ones it inherits from its mixins included
    runtime_methods = {
        name
        for cls in openprogram.Runtime.__mro__
        if cls.__module__.startswith("openprogram")
        for name in vars(cls)
        if not name.startswith("_")
    }
    assert {"exec", "async_exec", "stream", "submit"} <= runtime_methods
    missing = [
        m
        for m in sorted(runtime_methods)
        if f'id="openprogram.runtime.Runtime.{m}"' not in reference
    ]
    assert not missing, f"Runtime methods missing from the API reference: {missing}"


def _defined_public_names() -> set[str]:
    """Public names bound at module level in openprogram/__init__.py (imports and assignments)."""
    tree = ast.parse((ROOT / "openprogram" / "__init__.py").read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        # stdlib helpers (`from typing import Any`, `import importlib`) are not public API
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("openprogram"):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.If):  # `if TYPE_CHECKING:` imports of lazily loaded names
            for inner in node.body:
                if isinstance(inner, ast.ImportFrom):
                    names.update(a.asname or a.name for a in inner.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def test_all_is_sorted_and_unique() -> None:
    assert list(openprogram.__all__) == sorted(set(openprogram.__all__))


def test_every_public_name_is_in_all() -> None:
    missing = _defined_public_names() - set(openprogram.__all__)
    assert not missing, f"public names missing from openprogram.__all__: {sorted(missing)}"


def test_every_name_in_all_resolves() -> None:
    for name in openprogram.__all__:
        assert getattr(openprogram, name) is not None, name
