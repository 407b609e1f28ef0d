#!/usr/bin/env bash
# Installs the Spark engine's local runtime: a Python virtual environment with pyspark and delta-spark
# pinned to the EMR Serverless release the AWS construct deploys (requirements.txt), and the jars
# pyspark loads with spark.jars (Delta Lake, the S3A connector), fetched by Maven into a folder keyed by
# the pom's hash, so a new pin fetches anew. Idempotent; prints the two paths the local runtime reads
# (EBB_SPARK_PYTHON, EBB_SPARK_JARS) as shell assignments.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.ebb/spark-engine-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r functions/spark/requirements.txt

jars=.ebb/spark-engine-jars/$(sha256sum functions/spark/pom.xml | cut -c 1-16)
if [ ! -f "$jars/.complete" ]; then
  rm -rf "$jars" && mkdir -p "$jars"
  mvn -B -q -f functions/spark/pom.xml dependency:copy-dependencies \
    -DoutputDirectory="$PWD/$jars" -DexcludeTransitive=true >&2
  touch "$jars/.complete"
fi
echo "EBB_SPARK_PYTHON=$PWD/$venv/bin/python"
echo "EBB_SPARK_JARS=$PWD/$jars"
