import { expect, it } from "vitest";
import { parseWith } from "../../../shared/api/request-body.ts";
import { editPipelineBody } from "../../../shared/api/request-schemas.ts";
import { editPipeline } from "../../../shared/control/pipelines/pipeline-commands.ts";
import { StoreUnavailableError } from "../../../shared/object-store/errors.ts";
import type { EventLogRepository } from "../../../shared/store/event-log-repository.ts";
import { memoryWrite } from "../../../shared/store/memory-store-writes.ts";
import { jsonLines, memoryPorts, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { scenarioPipeline } from "../rewind/pipeline-definitions.ts";

/**
 * An edit's warning events are written with the edit, all or none: when the event log cannot take
 * them, the edit is not stored either, so retrying it gives the warning again (before, the edit was
 * stored and its warning lost with the failed event write, and a retry had nothing left to warn of).
 */

/** The memory event log, whose writes fail while `down` (as a transaction fails: nothing is made). */
function flakyEvents(events: EventLogRepository, state: { down: boolean }): EventLogRepository {
  const unavailable = () => new StoreUnavailableError("the event log is unavailable (injected)");
  return {
    query: (...args) => events.query(...args),
    get: (...args) => events.get(...args),
    append: async (event) => {
      if (state.down) throw unavailable();
      return events.append(event);
    },
    appendAll: async (batch) => {
      if (state.down) throw unavailable();
      return events.appendAll(batch);
    },
    appendWrites: (batch) => [
      ...events.appendWrites(batch),
      ...(state.down && batch.length > 0
        ? [
            memoryWrite({
              check: () => {
                throw unavailable();
              },
              apply: () => {},
            }),
          ]
        : []),
    ],
  };
}

it("stores no edit without its warning event; the retried edit warns", async () => {
  const state = { down: false };
  const h = new RewindHarness({
    ports: (clock) => {
      const ports = memoryPorts(clock);
      return { ...ports, events: flakyEvents(ports.events, state) };
    },
  });
  const pipeline = scenarioPipeline(h.landingUri);
  await h.deploy(pipeline);
  await h.land("1.json", jsonLines(1, 3));
  await h.run();

  // `ingest` (which has read the file) now writes `cleaned`'s sibling `raw_v2` instead of `raw`.
  const [raw, ...rest] = pipeline.datasets;
  const ingest = raw!.flows![0]!;
  const moved = [
    { ...raw!, flows: [{ ...ingest, name: "ingest_again" }] },
    { name: "raw_v2", type: "streaming_table", flows: [ingest] },
    ...rest,
  ];
  const body = parseWith(editPipelineBody, { definition: { datasets: moved } });
  const warnings = async () => (await h.eventsOf("warning")).map((e) => e.details);

  state.down = true;
  await expect(editPipeline(h.plane, h.pipelineId, body)).rejects.toBeInstanceOf(StoreUnavailableError);
  expect((await h.pipelines.get(h.pipelineId))?.definitionVersion).toBe(1);
  state.down = false;
  expect(await warnings()).toEqual([]);

  const edited = await editPipeline(h.plane, h.pipelineId, body);
  expect(edited.definition_version).toBe(2);
  expect(edited.warnings).toContainEqual(expect.objectContaining({ flow: "ingest", to_dataset: "raw_v2" }));
  expect(await warnings()).toContainEqual({
    flow_moved: { flow: "ingest", from_dataset: "raw", to_dataset: "raw_v2" },
  });
});
