"""Every import path the documentation shows still works.

Moving a module must not break a user's import: each ``from openprogram... import
...`` and ``import openprogram...`` line in ``docs/*.md`` and ``README.md``, each
``::: openprogram...`` API-reference directive, each dotted ``openprogram.x.y``
reference in backticks, and each name in ``openprogram.__all__`` must resolve.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import openprogram

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]

_FROM_IMPORT = re.compile(
    r"^[ \t]*(?:>>> |\.\.\. )?from (openprogram[\w.]*) import (\([^)]*\)|[^\n#]+)", re.M
)
_PLAIN_IMPORT = re.compile(r"^[ \t]*(?:>>> |\.\.\. )?import (openprogram[\w.]*)", re.M)
_DIRECTIVE = re.compile(r"^::: (openprogram[\w.]*)", re.M)
_REFERENCE = re.compile(r"`(openprogram(?:\.\w+)+)")
# span attribute and event names the OpenTelemetry observer emits
# (``openprogram.tool.progress``) read like paths but are not imports
_OTEL_SOURCE = "\n".join(
    p.read_text(encoding="utf-8") for p in (ROOT / "openprogram" / "otel").glob("*.py")
)


PACKAGE = Path(openprogram.__file__).resolve().parent


def _strays() -> list[str]:
    """Loaded ``openprogram`` modules whose file is outside the package under test.

    An editable install elsewhere (another checkout) would quietly serve a module
    this checkout no longer has, and the import would seem to work.
    """
    return [
        f"{name} from {module.__file__}"
        for name, module in list(sys.modules.items())
        if name.split(".")[0] == "openprogram"
        and getattr(module, "__file__", None)
        and not Path(module.__file__).resolve().is_relative_to(PACKAGE)
    ]


def _text() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in DOC_FILES}


def _imports() -> list[tuple[str, str, str]]:
    """(file, module, name) for each name imported in the docs; name '' for a plain import."""
    found: list[tuple[str, str, str]] = []
    for file, text in _text().items():
        for module, names in _FROM_IMPORT.findall(text):
            for part in names.strip("() \n").split(","):
                name = part.split("#")[0].split(" as ")[0].strip()
                if name:
                    found.append((file, module, name))
        found += [(file, module, "") for module in _PLAIN_IMPORT.findall(text)]
        found += [(file, module, "") for module in _DIRECTIVE.findall(text)]
    return found


def _references() -> list[tuple[str, str]]:
    return [(file, ref) for file, text in _text().items() for ref in _REFERENCE.findall(text)]


def _resolve(dotted: str) -> Any:
    """The object a dotted path names: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            target = getattr(target, attribute)
        return target
    raise ModuleNotFoundError(dotted)


def _is_telemetry_name(dotted: str) -> bool:
    head, _, _ = dotted.rpartition(".")
    return f'"{dotted}"' in _OTEL_SOURCE or f'"{head}.{{' in _OTEL_SOURCE


def test_the_docs_show_imports() -> None:
    # guards the regexes: a format change that finds nothing would pass every test below
    assert len(_imports()) > 50
    assert len(_references()) > 10


@pytest.mark.parametrize(("file", "module", "name"), _imports())
def test_documented_import_resolves(file: str, module: str, name: str) -> None:
    statement = f"from {module} import {name}" if name else f"import {module}"
    try:
        exec(statement, {})  # the statement a user copies from the page
    except ImportError as error:
        pytest.fail(f"{file}: `{statement}` fails: {error}")
    assert not _strays(), f"{file}: `{statement}` loads another checkout's modules"


@pytest.mark.parametrize(("file", "reference"), _references())
def test_documented_reference_resolves(file: str, reference: str) -> None:
    if _is_telemetry_name(reference):
        return
    try:
        _resolve(reference)
    except (ImportError, AttributeError) as error:
        pytest.fail(f"{file}: `{reference}` does not resolve: {error}")
    assert not _strays(), f"{file}: `{reference}` loads another checkout's modules"


@pytest.mark.parametrize("name", openprogram.__all__)
def test_every_top_level_name_imports(name: str) -> None:
    namespace: dict[str, Any] = {}
    exec(f"from openprogram import {name}", namespace)  # the statement a user writes
    assert namespace[name] is getattr(openprogram, name)
