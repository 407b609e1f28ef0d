#!/usr/bin/env bash
# The peer suite: pipeline projects run on Spark Declarative Pipelines (`spark-pipelines run`,
# pyspark 4.3) or a plain Spark SQL reference, and on Ebb over the same files; every table compared row for row.
# Installs SDP on first use (setup.sh), then runs the vitest suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash test/sdp-peer/setup.sh
export EBB_SDP_VENV="$PWD/.ebb/sdp-venv"
exec npx vitest run --config test/sdp-peer/vitest.config.ts "$@"
