#!/usr/bin/env bash
# Installs the peer suite's Spark: pyspark[pipelines] (its `spark-pipelines` CLI) in a virtual
# environment of its own, from the pinned requirements. Idempotent: run.sh calls it first.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.ebb/sdp-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r test/sdp-peer/requirements.txt
