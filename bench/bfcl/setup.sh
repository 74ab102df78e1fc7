#!/usr/bin/env bash
# A venv holding bfcl-eval's data and checker only: its declared dependencies pull in
# torch and every vendor SDK, none of which the AST checker needs (run.py stubs the one
# module that imports them). openprogram runs from your own environment.
set -euo pipefail
VENV="${1:-/tmp/bfcl-venv}"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --no-deps 'bfcl-eval==2026.3.23'
echo "bfcl-eval ready in $VENV: python bench/bfcl/run.py --venv $VENV"
