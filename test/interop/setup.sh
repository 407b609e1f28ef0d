#!/usr/bin/env bash
# Installs what the interop suite drives: its Python virtual environment (pinned packages: delta-rs,
# pyspark, delta-spark) and Delta Lake's jars for Spark, fetched by Maven from Maven Central into a
# folder this script owns (Spark loads them with spark.jars, so it resolves nothing). Keyed by the
# poms' hash, so a new pin fetches anew. Idempotent: run.sh calls it first.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.ebb/interop-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r test/interop/requirements.txt

jars=.ebb/interop-jars/$(cat test/interop/spark/pom.xml test/interop/spark/s3a/pom.xml | sha256sum | cut -c 1-16)
if [ ! -f "$jars/.complete" ]; then
  rm -rf "$jars" && mkdir -p "$jars"
  mvn -B -q -f test/interop/spark/pom.xml dependency:copy-dependencies \
    -DoutputDirectory="$PWD/$jars" -DexcludeTransitive=true
  # The S3 connector with its dependencies (the SDK modules' own), for the s3a reads.
  mvn -B -q -f test/interop/spark/s3a/pom.xml dependency:copy-dependencies \
    -DoutputDirectory="$PWD/$jars" -DexcludeScope=provided
  touch "$jars/.complete"
fi
