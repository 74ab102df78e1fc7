"""Load a program from ``examples/`` by path (``examples`` is not an installed package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` once, as module ``example_<name>``."""
    module_name = f"example_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
