#!/usr/bin/env bash
# Installs the Databricks clients the client-compatibility suite drives, and schemathesis, into .clients/ (kept out of
# git): the Python SDK in a virtual environment, pinned by test/clients/python/requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ ! -x .clients/python/bin/python ]; then
  python3 -m venv .clients/python
fi
.clients/python/bin/pip install --quiet --disable-pip-version-check -r test/clients/python/requirements.txt

# schemathesis, for the API fuzz run against the OpenAPI document, in a virtual environment of its own.
if [ ! -x .clients/schemathesis/bin/schemathesis ]; then
  python3 -m venv .clients/schemathesis
fi
.clients/schemathesis/bin/pip install --quiet --disable-pip-version-check -r test/clients/schemathesis/requirements.txt
