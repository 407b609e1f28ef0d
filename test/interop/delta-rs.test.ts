import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable, loadSnapshot, openTableScan, type StructType } from "../../shared/delta/index.ts";
import { DuckSession } from "../../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../../shared/object-store/local-object-store.ts";
import type { ObjectStore } from "../../shared/object-store/object-store.ts";
import { withPrefix } from "../../shared/object-store/prefixed-object-store.ts";
import { testAws, testObjectStore, uniquePrefix } from "../support/aws.ts";
import {
  BIG_LOOKUPS,
  ebbView,
  type Expected,
  rowsOf,
  SHAPES,
  sortRows,
  canonicalSelect,
  writeShape,
} from "./ebb-tables.ts";
import { PIPELINE_RUNS } from "./pipeline-runs.ts";

/**
 * delta-rs (the `deltalake` Python package) reads every shape of table Ebb writes, at every
 * version Ebb can read, on a local folder and on the S3 stand-in: its rows equal Ebb's scan, its
 * history equals Ebb's history, and its `load_cdf` equals Ebb's change feed. Then the other way:
 * tables delta-rs writes are read by Ebb at every version.
 */

const run = promisify(execFile);
const PYTHON = process.env["EBB_INTEROP_PYTHON"] ?? "python3";
const READER = path.join(import.meta.dirname, "delta_rs_read.py");

describe("delta-rs reads the tables Ebb writes", () => {
  let duck: DuckSession;
  let folder: string;
  beforeAll(async () => {
    duck = await DuckSession.open();
    await duck.run("SET TimeZone = 'UTC'");
    folder = await mkdtemp(path.join(tmpdir(), "ebb-interop-"));
  });
  afterAll(async () => {
    duck?.close();
    await rm(folder, { recursive: true, force: true });
  });

  async function deltaRs(request: unknown): Promise<Record<string, DeltaRsView>> {
    const file = path.join(folder, `request-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, JSON.stringify(request));
    const { stdout } = await run(PYTHON, [READER, file], { maxBuffer: 256 * 1024 * 1024 });
    return JSON.parse(stdout) as Record<string, DeltaRsView>;
  }

  interface DeltaRsView {
    readonly versions: Record<string, unknown[][]>;
    readonly history: { version: number; timestamp: number; operation: string | undefined }[];
    readonly cdf: unknown[][] | null;
    readonly cdf_pieces: unknown[][][];
    readonly lookups: Record<string, number>;
    readonly errors: Record<string, string>;
  }

  interface Place {
    readonly store: ObjectStore;
    readonly uri: string;
    readonly storageOptions?: Record<string, string>;
  }

  /** A fresh table root on a local folder or on the S3 stand-in, with delta-rs's options for it. */
  function placeFor(where: "local folder" | "S3 stand-in", name: string): Place {
    if (where === "local folder") {
      const root = path.join(folder, name.replace(/[^a-z0-9]+/gi, "-"));
      return { store: new LocalObjectStore(root), uri: root };
    }
    const aws = testAws();
    const prefix = uniquePrefix("interop");
    return {
      store: testObjectStore(prefix),
      uri: `s3://${aws.storage.bucket}/${prefix.replace(/\/$/, "")}`,
      storageOptions: {
        AWS_ENDPOINT_URL: aws.endpoints.s3Endpoint,
        AWS_ACCESS_KEY_ID: aws.endpoints.credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: aws.endpoints.credentials.secretAccessKey,
        AWS_REGION: aws.endpoints.region,
        AWS_ALLOW_HTTP: "true",
        AWS_VIRTUAL_HOSTED_STYLE_REQUEST: "false",
      },
    };
  }

  for (const where of ["local folder", "S3 stand-in"] as const) {
    it(`agrees on rows at every version, history and change feed (${where})`, async () => {
      const started = Date.now();
      const tables: { spec: Record<string, unknown>; expected: Expected }[] = [];
      const add = async (name: string, place: Place, table: DeltaTable) => {
        try {
          const expected = await ebbView(duck, place.store, table);
          tables.push({
            expected,
            spec: {
              name,
              uri: place.uri,
              storage_options: place.storageOptions,
              versions: Object.keys(expected.versions).map(Number),
              select: expected.selects,
              lookups: name === "create and append" ? BIG_LOOKUPS : [],
              cdf: expected.cdf ? { from: expected.cdfFrom, select: expected.cdfSelect } : null,
              cdf_pieces: expected.cdfRefused?.pieces.map(({ rows: _, ...piece }) => piece) ?? [],
            },
          });
        } finally {
          await table.close();
        }
      };
      for (const shape of SHAPES) {
        const place = placeFor(where, shape.name);
        await add(shape.name, place, await writeShape(duck, place.store, shape));
      }
      for (const [label, write] of PIPELINE_RUNS) {
        const pipeline = placeFor(where, label);
        for (const [dataset, prefix] of Object.entries(await write(pipeline.store))) {
          const place = {
            ...pipeline,
            store: withPrefix(pipeline.store, prefix),
            uri: `${pipeline.uri}/${prefix.replace(/\/$/, "")}`,
          };
          await add(`${label} ${dataset}`, place, await DeltaTable.open(place.store, { duck }));
          // The rewind RESTOREd the table and the replay wrote after it.
          const operations = tables.at(-1)!.expected.history.map((h) => h.operation);
          expect(operations.indexOf("RESTORE"), `${label} ${dataset}`).toBeGreaterThan(0);
        }
      }
      // Ebb refuses the schema evolution shape's change feed across its RESTORE to before the change.
      const refusing = tables.filter((t) => t.expected.cdfRefused).map((t) => t.spec.name);
      expect(refusing).toEqual(["schema evolution, then RESTORE to before it"]);
      const ebbDone = Date.now();
      const seen = await deltaRs({ tables: tables.map((t) => t.spec) });
      for (const { spec, expected } of tables) {
        const name = String(spec.name);
        const got = seen[name]!;
        expect(got.errors, name).toEqual({});
        expect(Object.keys(got.versions).sort(), `${name} versions`).toEqual(
          Object.keys(expected.versions).sort(),
        );
        expect(Object.keys(expected.versions).length, `${name} versions`).toBeGreaterThan(0);
        if (name === "create and append") {
          expect(got.lookups).toEqual(Object.fromEntries(BIG_LOOKUPS.map((v) => [v, 1])));
        }
        for (const [version, rows] of Object.entries(expected.versions)) {
          expect(sortRows(got.versions[version]!), `${name} v${version}`).toEqual(rows);
        }
        expect(got.history, `${name} history`).toEqual(expected.history);
        if (expected.cdf) expect(sortRows(got.cdf!), `${name} change feed`).toEqual(expected.cdf);
        // Ranges before a change Ebb refuses to read across: delta-rs as of each range's end agrees.
        for (const [i, piece] of (expected.cdfRefused?.pieces ?? []).entries()) {
          const range = `${name} change feed ${piece.from} to ${piece.to}`;
          expect(sortRows(got.cdf_pieces[i]!), range).toEqual(piece.rows);
        }
      }
      console.log(
        `interop delta-rs (${where}): ${tables.length} tables; Ebb wrote and read them in ` +
          `${ebbDone - started} ms, delta-rs read them in ${Date.now() - ebbDone} ms`,
      );
    });
  }

  it("Ebb reads the tables delta-rs writes at every version", async () => {
    const uri = path.join(folder, "written-by-delta-rs");
    const steps = [
      {
        mode: "append",
        rows: [
          { id: 1, name: "a" },
          { id: 2, name: null },
        ],
      },
      { mode: "append", rows: [{ id: 3, name: "b" }] },
      {
        mode: "overwrite",
        rows: [
          { id: 4, name: "a" },
          { id: 5, name: "c" },
        ],
      },
    ];
    const written: StructType = {
      type: "struct",
      fields: [
        { name: "id", type: "long", nullable: true, metadata: {} },
        { name: "name", type: "string", nullable: true, metadata: {} },
      ],
    };
    for (const partitionBy of [[], ["name"]]) {
      const table = `${uri}-${partitionBy.length}`;
      await deltaRs({
        write: [
          {
            uri: table,
            steps,
            partition_by: partitionBy,
            schema: [
              ["id", "int64"],
              ["name", "string"],
            ],
          },
        ],
      });
      const seen = await deltaRs({
        tables: [{ name: "t", uri: table, versions: [0, 1, 2], select: canonicalSelect(written) }],
      });
      expect(seen.t!.errors).toEqual({});
      const store = new LocalObjectStore(table);
      for (const version of [0, 1, 2]) {
        const snapshot = await loadSnapshot(store, { version });
        const view = await openTableScan(store, snapshot, { duck, viewName: `theirs_${version}` });
        try {
          expect(sortRows(await rowsOf(duck, canonicalSelect(written), `theirs_${version}`))).toEqual(
            sortRows(seen.t!.versions[String(version)]!),
          );
        } finally {
          await view.close();
        }
      }
    }
  });
});
