import { describe, expect, it } from "vitest";
import {
  buildPipelineGraph,
  downstreamClosure,
  downstreamOf,
  inRunOrder,
  upstreamClosure,
  upstreamOf,
  type DatasetEdge,
  type PipelineGraph,
} from "../../../shared/pipeline/pipeline-graph.ts";

const read = (from: string, to: string): DatasetEdge => ({ from, to, kind: "read" });
const stream = (from: string, to: string, flow: string): DatasetEdge => ({ from, to, kind: "stream", flow });

/**
 *   raw ──stream──► clean ──read──► report
 *   dims ──read──► clean
 *   clean ──stream──► audit
 *   lonely
 */
function diamond(): PipelineGraph {
  const result = buildPipelineGraph(
    ["report", "audit", "clean", "raw", "dims", "lonely"],
    [
      stream("raw", "clean", "f1"),
      read("dims", "clean"),
      read("clean", "report"),
      stream("clean", "audit", "f2"),
    ],
  );
  if (!result.ok) throw new Error("unexpected cycle");
  return result.graph;
}

describe("buildPipelineGraph", () => {
  it("puts every dataset after its upstreams, keeping definition order within a level", () => {
    expect(diamond().levels).toEqual([["raw", "dims", "lonely"], ["clean"], ["report", "audit"]]);
  });

  it("gives a dataset the level after its deepest upstream", () => {
    const result = buildPipelineGraph(["a", "b", "c"], [read("a", "b"), read("b", "c"), read("a", "c")]);
    expect(result.ok && result.graph.levels).toEqual([["a"], ["b"], ["c"]]);
  });

  it("names the datasets of a cycle in data-flow order", () => {
    const result = buildPipelineGraph(
      ["x", "a", "b", "c"],
      [read("x", "a"), read("a", "b"), read("b", "c"), read("c", "a")],
    );
    expect(result).toEqual({ ok: false, cycle: ["a", "b", "c", "a"] });
  });

  it("treats a dataset reading itself as a cycle", () => {
    expect(buildPipelineGraph(["a"], [read("a", "a")])).toEqual({ ok: false, cycle: ["a", "a"] });
  });

  it("traces a cycle from a dataset that only sits behind one", () => {
    const result = buildPipelineGraph(
      ["tail", "a", "b"],
      [read("b", "tail"), read("a", "b"), read("b", "a")],
    );
    expect(result.ok).toBe(false);
    if (!result.ok) expect(new Set(result.cycle)).toEqual(new Set(["a", "b"]));
  });
});

describe("neighbours and closures", () => {
  const graph = diamond();

  it("lists direct upstreams and downstreams once each", () => {
    expect(upstreamOf(graph, "clean").sort()).toEqual(["dims", "raw"]);
    expect(downstreamOf(graph, "clean").sort()).toEqual(["audit", "report"]);
    expect(downstreamOf(graph, "report")).toEqual([]);
  });

  it("downstreamClosure includes the start and runs upstream first", () => {
    expect(downstreamClosure(graph, ["raw"])).toEqual(["raw", "clean", "report", "audit"]);
    expect(downstreamClosure(graph, ["report", "dims"])).toEqual(["dims", "clean", "report", "audit"]);
  });

  it("upstreamClosure includes the start and runs upstream first", () => {
    expect(upstreamClosure(graph, ["report"])).toEqual(["raw", "dims", "clean", "report"]);
    expect(upstreamClosure(graph, ["lonely"])).toEqual(["lonely"]);
  });

  it("ignores names that are not datasets and sorts into run order", () => {
    expect(downstreamClosure(graph, ["nope"])).toEqual([]);
    expect(inRunOrder(graph, ["audit", "raw", "clean"])).toEqual(["raw", "clean", "audit"]);
  });
});
