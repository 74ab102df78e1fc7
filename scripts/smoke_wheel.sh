#!/usr/bin/env bash
# Build the wheel, install it (not editable) into a fresh venv with the locked runtime
# dependencies only, and check that the installed package works as users get it.
#
#   bash scripts/smoke_wheel.sh [VENV_DIR]     # keeps the venv when VENV_DIR is given
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
venv=${1:-$tmp/venv}
python3 -m pip wheel --quiet --no-deps -w "$tmp/dist" .
wheel=$(ls "$tmp"/dist/openprogram_ai-*.whl)
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet -c constraints.txt "$wheel"
cd "$tmp"  # away from the source tree, so only the installed copy can be imported
"$venv/bin/python" - <<'PY'
import importlib.metadata as metadata
import importlib.resources as resources
import pathlib
import sys

import openprogram
from openprogram import Runtime, ToolResultMessage, function
from openprogram.testing import ScriptedProvider, call

where = pathlib.Path(openprogram.__file__).resolve()
assert pathlib.Path(sys.prefix).resolve() in where.parents, f"imported from {where}"
dist = metadata.distribution("openprogram-ai")
assert dist.version == openprogram.__version__, (dist.version, openprogram.__version__)
assert dist.metadata["License-Expression"] == "Apache-2.0", dist.metadata["License-Expression"]
assert any(str(f).endswith("LICENSE") for f in dist.files or ()), "LICENSE not in the wheel"
assert resources.files("openprogram").joinpath("py.typed").is_file(), "py.typed missing"
template = resources.files("openprogram.providers.local").joinpath("chat_template.jinja")
assert template.is_file(), "the local model's chat template is missing"


@function
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


rt = Runtime(provider=ScriptedProvider([call("add", a=2, b=3), "5"]))
assert rt.exec("2 + 3?", tools=[add]) == "5"
results = [m for m in rt.last_run.messages if isinstance(m, ToolResultMessage)]
assert [r.content for r in results] == ["5"], results  # the tool ran and its result went back
print(f"wheel smoke test passed: openprogram-ai {dist.version} from {where.parent}")
PY
