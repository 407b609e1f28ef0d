#!/usr/bin/env bash
# The interop suite: other engines read the Delta tables Ebb writes, and Ebb reads theirs.
# Installs what it drives on first use (setup.sh), then runs the vitest suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash test/interop/setup.sh
export EBB_INTEROP_PYTHON="$PWD/.ebb/interop-venv/bin/python"
export EBB_INTEROP_SPARK_JARS="$PWD/.ebb/interop-jars/$(cat test/interop/spark/pom.xml test/interop/spark/s3a/pom.xml | sha256sum | cut -c 1-16)"
# The Spark engine's own Spark, pinned to the EMR Serverless release (functions/spark/setup.sh).
while IFS= read -r assignment; do export "${assignment?}"; done < <(bash functions/spark/setup.sh)
exec npx vitest run --config test/interop/vitest.config.ts "$@"
