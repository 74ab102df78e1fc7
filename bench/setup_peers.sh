#!/usr/bin/env bash
# Create bench/.venv with the peer frameworks at pinned versions, plus
# openprogram itself (editable), so `python bench/run.py` can compare them
# in one process run. Peers never become project dependencies.
#
# Usage: bash bench/setup_peers.sh            (idempotent; re-run after a pin bump)
#        PYTHON=python3.11 bash bench/setup_peers.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
venv="$here/.venv"
python="${PYTHON:-python3}"

# Pinned peers. pydantic-ai-slim is the pydantic_ai package without the
# provider SDKs; FunctionModel/TestModel ship in it, which is all we use.
peers=(
  "pydantic-ai-slim==2.68.0"
  "openai-agents==0.24.0"
  "langchain-core==1.8.3"
  "langgraph==1.2.24"
  "langgraph-prebuilt==1.1.3"  # create_react_agent lives here
)

start=$(date +%s)
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "${peers[@]}"

if "$venv/bin/python" -m pip install --quiet -e "$repo"; then
  echo "openprogram: installed editable from $repo"
else
  # The package is written concurrently with the benchmarks and may not
  # install yet: put its runtime dependencies (pyproject.toml) in, and the
  # harness imports it from the work tree, or says why it cannot.
  echo "openprogram: editable install failed; bench imports it from the work tree" >&2
  "$venv/bin/python" -m pip install --quiet "pydantic>=2.7,<3" "docstring-parser>=0.16" \
    "httpx>=0.27,<1" "jsonschema>=4.20"
fi

echo "bench venv ready in $(( $(date +%s) - start ))s: $venv"
"$venv/bin/python" -m pip list 2>/dev/null \
  | grep -iE '^(pydantic|pydantic-ai-slim|openai-agents|langchain-core|langgraph|langgraph-prebuilt|openprogram) '
