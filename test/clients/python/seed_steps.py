"""The seed's Python snippets (shared/seeds/databricks-rewind-and-replay.txt, "Rewind with the Python
SDK"), each run as written, with the placeholders the seed leaves to the reader filled from the
arguments, plus the SDK calls a remediation job polls and inspects with.

    python seed_steps.py STEP '{"pipeline_id": ..., ...}'

The client is configured the way the seed's snippets configure it: `WorkspaceClient()` from
DATABRICKS_HOST / DATABRICKS_TOKEN, `WorkspaceClient(profile=...)` from the profile in
DATABRICKS_CONFIG_FILE. The last line printed is `RESULT <json>`.
"""

import json
import sys
import time

from databricks.sdk import WorkspaceClient
from databricks.sdk.errors import DatabricksError
from databricks.sdk.service.pipelines import (
    GetPipelineResponse,
    GetUpdateResponse,
    ListUpdatesResponse,
    PipelineEvent,
    PipelineStateInfo,
    UpdateInfoState,
)
from databricks.sdk.service.sql import StatementResponse, StatementState

TERMINAL = {UpdateInfoState.COMPLETED, UpdateInfoState.FAILED, UpdateInfoState.CANCELED}


def rewind_point(pipeline_id, rewind_point_id, root_table):
    # "Rewind point": the authenticated REST client, as the seed writes it.
    w = WorkspaceClient()  # In a notebook, authenticates as the notebook identity.
    resp = w.api_client.do("POST", f"/api/2.0/pipelines/{pipeline_id}/updates", body={
        "cause": "USER_ACTION",
        "rewind_spec": {
            "rewind_point_id": rewind_point_id,
            "datasets": [{"identifier": root_table, "cascade": True, "reset_checkpoints": True}],
            "dry_run": False,
        },
    })
    print(resp["update_id"])
    return {"update_id": resp["update_id"]}


def dry_run_point(pipeline_id, rewind_point_id, root_table):
    # "Rehearse a rewind with a dry run": the rewind-point body with dry_run set to true.
    w = WorkspaceClient()
    resp = w.api_client.do("POST", f"/api/2.0/pipelines/{pipeline_id}/updates", body={
        "cause": "USER_ACTION",
        "rewind_spec": {
            "rewind_point_id": rewind_point_id,
            "datasets": [{"identifier": root_table, "cascade": True, "reset_checkpoints": True}],
            "dry_run": True,
        },
    })
    return {"update_id": resp["update_id"]}


def rewind_timestamp_typed(pipeline_id, rewind_timestamp, root_table, profile, dry_run=False):
    # "Timestamp": the typed RewindSpec helper (databricks-sdk 0.40 and above).
    from databricks.sdk import WorkspaceClient
    from databricks.sdk.service.pipelines import StartUpdateCause, RewindSpec, RewindDatasetSpec

    w = WorkspaceClient(profile=profile)
    resp = w.pipelines.start_update(
        pipeline_id,
        cause=StartUpdateCause.USER_ACTION,
        rewind_spec=RewindSpec(
            rewind_timestamp=rewind_timestamp,
            datasets=[RewindDatasetSpec(
                identifier=root_table,
                cascade=True,
                reset_checkpoints=True,
            )],
            dry_run=dry_run,
        ),
    )
    print(resp.update_id)
    return {"update_id": resp.update_id}


def rewind_timestamp(pipeline_id, rewind_timestamp, root_table):
    # The notebook variant: the authenticated REST client with rewind_timestamp.
    from databricks.sdk import WorkspaceClient

    w = WorkspaceClient()  # Authenticates as the notebook identity.
    w.api_client.do("POST", f"/api/2.0/pipelines/{pipeline_id}/updates", body={
        "cause": "USER_ACTION",
        "rewind_spec": {
            "rewind_timestamp": rewind_timestamp,
            "datasets": [{"identifier": root_table, "cascade": True, "reset_checkpoints": True}],
            "dry_run": False,
        },
    })
    # The snippet keeps no answer: the update it started is the newest one.
    newest = w.pipelines.list_updates(pipeline_id, max_results=1).updates[0]
    return {"update_id": newest.update_id}


def replay(pipeline_id):
    # "Replay is the next update you send with no rewind_spec".
    w = WorkspaceClient()
    return {"update_id": w.pipelines.start_update(pipeline_id).update_id}


def wait(pipeline_id, update_id, timeout_s=120):
    # Poll an update until it reaches a terminal state.
    w = WorkspaceClient()
    deadline = time.time() + timeout_s
    while True:
        got = w.pipelines.get_update(pipeline_id, update_id)
        assert isinstance(got, GetUpdateResponse), got
        if got.update.state in TERMINAL or time.time() > deadline:
            return got.update.as_dict()
        time.sleep(0.2)


def find_point(pipeline_id):
    # The newest rewind point, read from the event log (the seed's listing, through the SDK's filter).
    w = WorkspaceClient()
    events = w.pipelines.list_pipeline_events(
        pipeline_id,
        filter="event_type = 'rewind_summary' AND details.rewind_summary.dry_run = true",
        order_by=["timestamp desc"],
    )
    points = [e for e in events if isinstance(e, PipelineEvent)]
    return {"points": [{"id": e.id, "timestamp": e.timestamp} for e in points]}


def inspect(pipeline_id, page_size=2):
    # The read calls a job polls with: each answer parsed into the SDK's own dataclasses.
    w = WorkspaceClient()
    pipeline = w.pipelines.get(pipeline_id)
    assert isinstance(pipeline, GetPipelineResponse), pipeline
    listed = [p for p in w.pipelines.list_pipelines() if p.pipeline_id == pipeline_id]
    assert all(isinstance(p, PipelineStateInfo) for p in listed), listed
    updates = w.pipelines.list_updates(pipeline_id)
    assert isinstance(updates, ListUpdatesResponse), updates
    paged = list(w.pipelines.list_pipeline_events(pipeline_id, max_results=page_size))
    first_page = w.api_client.do(
        "GET", f"/api/2.0/pipelines/{pipeline_id}/events", query={"max_results": page_size}
    )
    everything = list(w.pipelines.list_pipeline_events(pipeline_id, max_results=1000))
    return {
        "pipeline": pipeline.as_dict(),
        "listed": [p.as_dict() for p in listed],
        "updates": updates.as_dict(),
        "events_paged": [e.as_dict() for e in paged],
        "first_page_has_next": bool(first_page.get("next_page_token")),
        "events_total": len(everything),
    }


def paged_listings(pipeline_id, page_size):
    # The seed's rewind-point lookup and the pipeline listing in small pages: the SDK sends the
    # filter (and max_results) again with every page_token, as it does past 25 rewind points.
    w = WorkspaceClient()
    summaries = w.pipelines.list_pipeline_events(
        pipeline_id, filter="event_type = 'rewind_summary'", max_results=page_size
    )
    pipelines = w.pipelines.list_pipelines(max_results=page_size)
    return {
        "rewind_summaries": [e.id for e in summaries],
        "pipelines": [p.pipeline_id for p in pipelines],
    }


def filtered_pipelines(pattern, page_size):
    # list_pipelines(filter=...) as a user finds pipelines by name, across pages; another filter form
    # is refused, and the SDK raises the API's error_code.
    w = WorkspaceClient()
    names = [p.name for p in w.pipelines.list_pipelines(filter=f"name LIKE '{pattern}'", max_results=page_size)]
    try:
        list(w.pipelines.list_pipelines(filter="notebook='/Users/me/etl'"))
        refused = None
    except DatabricksError as error:
        refused = error.error_code
    return {"names": sorted(names), "refused": refused}


def stop(pipeline_id):
    # Stop, and the SDK's own waiter until the pipeline is IDLE.
    w = WorkspaceClient()
    return {"pipeline": w.pipelines.stop(pipeline_id).result().as_dict()}


def sql(statement):
    # A Databricks SQL statement through the Statement Execution API, as a job runs the seed's queries.
    w = WorkspaceClient()
    resp = w.statement_execution.execute_statement(statement=statement, warehouse_id="any", wait_timeout="30s")
    assert isinstance(resp, StatementResponse), resp
    assert resp.status.state == StatementState.SUCCEEDED, resp.status
    # A script that polls reads the same answer again, and its first chunk, by the statement's id.
    again = w.statement_execution.get_statement(resp.statement_id)
    assert again.status.state == StatementState.SUCCEEDED and again.result.data_array == resp.result.data_array
    chunk = w.statement_execution.get_statement_result_chunk_n(resp.statement_id, 0)
    assert chunk.chunk_index == 0 and chunk.data_array == resp.result.data_array, chunk
    w.statement_execution.cancel_execution(resp.statement_id)
    columns = [(c.name, c.type_name.value) for c in resp.manifest.schema.columns]
    return {"columns": columns, "rows": resp.result.data_array or [], "truncated": resp.manifest.truncated}


STEPS = {
    "rewind_point": rewind_point,
    "dry_run_point": dry_run_point,
    "rewind_timestamp_typed": rewind_timestamp_typed,
    "rewind_timestamp": rewind_timestamp,
    "replay": replay,
    "wait": wait,
    "find_point": find_point,
    "inspect": inspect,
    "paged_listings": paged_listings,
    "filtered_pipelines": filtered_pipelines,
    "stop": stop,
    "sql": sql,
}

if __name__ == "__main__":
    step, args = sys.argv[1], json.loads(sys.argv[2] if len(sys.argv) > 2 else "{}")
    print("RESULT " + json.dumps(STEPS[step](**args)))
