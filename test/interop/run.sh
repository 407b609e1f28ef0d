#!/usr/bin/env bash
# The interop suite: other engines read the Delta tables Ebb writes, and Ebb reads theirs.
# Creates its Python virtual environment (pinned packages) and fetches Delta Lake's jars for Spark
# on first use, then runs the vitest suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.ebb/interop-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r test/interop/requirements.txt
export EBB_INTEROP_PYTHON="$PWD/$venv/bin/python"

# Delta Lake's jars (pinned in spark/pom.xml, in step with delta-spark), copied by Maven from Maven
# Central into a folder this script owns; Spark loads them with spark.jars, so it resolves nothing.
# Keyed by the pom's hash, so a new pin fetches anew.
jars=.ebb/interop-jars/$(sha256sum test/interop/spark/pom.xml | cut -c 1-16)
if [ ! -f "$jars/.complete" ]; then
  rm -rf "$jars" && mkdir -p "$jars"
  mvn -B -q -f test/interop/spark/pom.xml dependency:copy-dependencies \
    -DoutputDirectory="$PWD/$jars" -DexcludeTransitive=true
  touch "$jars/.complete"
fi
export EBB_INTEROP_SPARK_JARS="$PWD/$jars"
exec npx vitest run --config test/interop/vitest.config.ts "$@"
