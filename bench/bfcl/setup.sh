#!/usr/bin/env bash
# Create the BFCL benchmark's venv (outside the repo): bfcl-eval pinned and
# installed WITHOUT its dependencies (they pull in torch and model SDKs),
# only the packages its data loaders and AST/relevance checker import, and
# openprogram itself (editable, with the `local` extra, through the lock).
#
# Usage: bash bench/bfcl/setup.sh                  (idempotent)
#        OPENPROGRAM_BENCH_CACHE=/tmp/x bash bench/bfcl/setup.sh
#        PYTHON=python3.11 bash bench/bfcl/setup.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${OPENPROGRAM_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/openprogram-bench}"
venv="$cache/bfcl-venv"
python="${PYTHON:-python3}"

# What the AST checker and `bfcl_eval.utils` import (found by importing them in
# a bare venv until nothing was missing). The checker's import of
# `bfcl_eval.constants.model_config` would also pull every vendor SDK it has a
# handler for; bfcl_score.py stands in for that one module instead.
# tree-sitter pins: bfcl-eval's own (newer releases changed the Language API).
checker_deps=(
  "tree-sitter==0.21.3"
  "tree-sitter-java==0.21.0"
  "tree-sitter-javascript==0.21.4"
  "filelock"
)

start=$(date +%s)
mkdir -p "$cache"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$venv/bin/python" -m pip install --quiet --no-deps "bfcl-eval==2026.3.23"
# pip lists bfcl-eval's undeclared-here dependencies as conflicts: expected, not an error.
"$venv/bin/python" -m pip install --quiet -c "$repo/constraints.txt" "${checker_deps[@]}" 2>&1 \
  | grep -v "^bfcl-eval .* requires\|dependency resolver\|^WARNING: Location" || true
"$venv/bin/python" -m pip install --quiet -c "$repo/constraints.txt" -e "$repo[local]"

"$venv/bin/python" - "$here" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import bfcl_score
assert bfcl_score.checker_available(), "BFCL's checker does not import"
import openprogram, xllamacpp  # noqa: F401
print("imports ok: BFCL checker, xllamacpp, openprogram from", openprogram.__file__)
PY
echo "bfcl venv ready in $(( $(date +%s) - start ))s: $venv"
echo "run: $venv/bin/python $repo/bench/bfcl/run.py --per-category 5"
