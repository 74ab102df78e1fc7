#!/usr/bin/env bash
# Type-check tests/typing's user-style programs against the package as users install it:
# build the wheel, install it (without dependencies) into a throw-away target directory,
# and run the typing tests with mypy finding openprogram there (which also proves the
# wheel ships py.typed: without it mypy refuses the package). Used by .ci/run.
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
