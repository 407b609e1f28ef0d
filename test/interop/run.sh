#!/usr/bin/env bash
# The interop suite: other engines read the Delta tables Ebb writes, and Ebb reads theirs.
# Creates its Python virtual environment (pinned packages) on first use, then runs the vitest suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.ebb/interop-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r test/interop/requirements.txt
export EBB_INTEROP_PYTHON="$PWD/$venv/bin/python"
exec npx vitest run --config test/interop/vitest.config.ts "$@"
