import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pipelinePage } from "../../../shared/control/pipelines/pipeline-pages.ts";
import type { PipelineRecord } from "../../../shared/store/pipelines-repository.ts";

const record = (pipelineId: string, createdAt: number): PipelineRecord => ({
  pipelineId,
  name: pipelineId,
  definitionVersion: 1,
  state: "IDLE",
  rewindBlocked: false,
  createdAt,
  lastModified: createdAt,
});

/** Newest first, then by id: the repositories' order. */
const listed = (records: PipelineRecord[]) =>
  [...records].sort((a, b) => b.createdAt - a.createdAt || a.pipelineId.localeCompare(b.pipelineId));

function pageThrough(records: readonly PipelineRecord[], maxResults: number) {
  const pages: string[][] = [];
  let token: string | undefined;
  do {
    const page = pipelinePage(records, { max_results: maxResults, ...(token ? { page_token: token } : {}) });
    pages.push(page.shown.map((r) => r.pipelineId));
    token = page.nextPageToken;
  } while (token !== undefined);
  return pages;
}

describe("pipeline listing pages", () => {
  it("pages of max_results, followed to the end, hold every pipeline once in the listing's order", () => {
    const pipelines = fc.uniqueArray(
      fc.record({ id: fc.uuid(), createdAt: fc.integer({ min: 0, max: 5 }) }),
      { selector: (p) => p.id, maxLength: 30 },
    );
    fc.assert(
      fc.property(pipelines, fc.integer({ min: 1, max: 10 }), (drawn, maxResults) => {
        const records = listed(drawn.map((p) => record(p.id, p.createdAt)));
        const pages = pageThrough(records, maxResults);
        expect(pages.flat()).toEqual(records.map((r) => r.pipelineId));
        expect(pages.every((page) => page.length <= maxResults)).toBe(true);
        expect(pages.length).toBe(Math.max(1, Math.ceil(records.length / maxResults)));
      }),
    );
  });

  it("a pipeline created or deleted between two pages neither repeats nor hides the others", () => {
    const before = listed([record("a", 3), record("b", 2), record("c", 1)]);
    const first = pipelinePage(before, { max_results: 1 });
    const after = listed([record("new", 4), ...before.filter((r) => r.pipelineId !== "b")]);
    const second = pipelinePage(after, { max_results: 5, page_token: first.nextPageToken! });
    expect(first.shown.map((r) => r.pipelineId)).toEqual(["a"]);
    expect(second.shown.map((r) => r.pipelineId)).toEqual(["c"]);
    expect(second.nextPageToken).toBeUndefined();
  });

  it("without max_results, every pipeline and no token; a token it did not issue is refused", () => {
    const records = listed([record("a", 2), record("b", 1)]);
    expect(pipelinePage(records, {})).toEqual({ shown: records });
    for (const token of ["nonsense", Buffer.from('{"createdAt":"x"}').toString("base64url")])
      expect(() => pipelinePage(records, { page_token: token })).toThrow(/pass next_page_token unchanged/);
  });
});
