#!/usr/bin/env bash
# Refresh constraints.txt: resolve every extra afresh in a throw-away venv, run the
# suite against what was resolved, and write the exact versions only if it passed.
#
#   bash scripts/refresh_lock.sh            # resolve today's newest versions
#   bash scripts/refresh_lock.sh 'hypothesis<6.170'   # ...with extra requirements
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
py="$tmp/venv/bin/python"
"$py" -m pip install --quiet --upgrade pip
"$py" -m pip install --quiet -e '.[dev,local,otel,ray,mcp,dbos]' "$@"
"$py" -m ruff check openprogram tests bench examples scripts
"$py" -m mypy
"$py" -m pytest
{
  echo "# The toolchain lock: exact versions of everything the extras pull in, used by"
  echo "# the README's commands and .ci/run (pip install -c constraints.txt ...)."
  echo "# Refresh with: bash scripts/refresh_lock.sh   (resolves, tests, then rewrites this file)"
  echo "# Python $("$py" -c 'import platform; print(platform.python_version())'), written $(date -u +%Y-%m-%d)."
  "$py" -m pip freeze --exclude-editable | grep -v -i '^openprogram'
} > constraints.txt
echo "constraints.txt updated: $(grep -vc '^#' constraints.txt) pins"
