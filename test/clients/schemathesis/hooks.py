"""Schemathesis hooks for Ebb's API fuzz run (schemathesis.test.ts).

A refused request (4xx) must change nothing: before every call the hook notes what a request could
change (the pipelines, the seeded pipeline's settings and its updates), and a check compares it after
a refusal. Every refusal must be `{error_code, message}` (the document's Error schema says so too).
"""

import json
import os
import urllib.request

import schemathesis

BASE = os.environ["EBB_ENDPOINT"]
TOKEN = os.environ["EBB_TOKEN"]
PIPELINE = os.environ["EBB_FUZZ_PIPELINE"]


def get(path):
    request = urllib.request.Request(BASE + path, headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        return {"status": error.code}


def snapshot():
    """What a refused request could have changed, without what a running update moves on its own."""
    pipelines = sorted(p["pipeline_id"] for p in get("/api/2.0/pipelines?max_results=1000").get("statuses", []))
    pipeline = get(f"/api/2.0/pipelines/{PIPELINE}")
    updates = sorted(u["update_id"] for u in get(f"/api/2.0/pipelines/{PIPELINE}/updates?max_results=1000").get("updates", []))
    settings = {k: pipeline.get(k) for k in ("name", "spec", "definition_version")}
    return json.dumps({"pipelines": pipelines, "settings": settings, "updates": updates}, sort_keys=True)


BEFORE = {}


@schemathesis.hook
def before_call(context, case, kwargs):
    BEFORE[id(case)] = snapshot()


@schemathesis.check
def refusal_changes_nothing(ctx, response, case):
    if not 400 <= response.status_code < 500:
        return None
    body = response.json()
    if not (isinstance(body, dict) and isinstance(body.get("error_code"), str) and isinstance(body.get("message"), str)):
        raise AssertionError(f"a {response.status_code} without {{error_code, message}}: {response.text[:200]}")
    before = BEFORE.pop(id(case), None)
    if before is not None and snapshot() != before:
        raise AssertionError(f"refused with {body['error_code']} yet the pipeline changed")
    return None
