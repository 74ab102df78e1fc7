#!/usr/bin/env bash
# Type-check tests/typing's user-style programs against the package as users install it:
# build the wheel, install it (without dependencies) into a throw-away target directory,
# and run the typing tests with mypy finding openprogram there (which also proves the
# wheel ships py.typed: without it mypy refuses the package). Then install this checkout
# editable (pip install -e .) into a throw-away venv and type-check a program from outside
# it: mypy must find the package (setuptools' import hook would hide it; pyproject.toml's
# package-dir makes the install a plain .pth file). Used by .ci/run.
#
#   bash scripts/typing_check.sh            # with python3; PYTHON=/path/to/python to choose
set -euo pipefail
cd "$(dirname "$0")/.."
py="${PYTHON:-python3}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -m pip wheel --quiet --no-deps --wheel-dir "$tmp/dist" .
"$py" -m pip install --quiet --no-deps --target "$tmp/site" "$tmp"/dist/openprogram_ai-*.whl
OPENPROGRAM_TYPING_SITE="$tmp/site" "$py" -m pytest -q -p no:cacheprovider tests/typing

# The venv sees this python's packages (mypy, pydantic, ...); only openprogram is installed.
"$py" -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --no-deps -e .
mkdir "$tmp/user"
cat > "$tmp/user/program.py" <<'PY'
from openprogram import Runtime

answer: str = Runtime("openai:gpt-4o-mini").exec("Say hello", tools=[])
PY
(cd "$tmp/user" && env -u PYTHONPATH "$tmp/venv/bin/python" -m mypy --strict \
    --cache-dir "$tmp/mypy-cache" program.py)
