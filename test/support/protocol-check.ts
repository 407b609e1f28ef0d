import { createS3Client, type AwsEndpoints } from "../../shared/store/aws-clients.ts";
import type { ObjectStore } from "../../shared/object-store/object-store.ts";
import { S3ObjectStore } from "../../shared/object-store/s3-object-store.ts";
import { validateTables, type TableViolations } from "./delta-protocol/index.ts";

/**
 * The protocol validator applied to what the test run writes: every Delta table in Ebb's bucket at
 * the end of the run (global-setup.ts), and every table in the in-memory stores a test wrote to, after
 * that test (protocol-check-setup.ts). A violation fails the run, or the test, naming the table, the
 * version and the rule.
 */

const exempt = new WeakSet<ObjectStore>();

/**
 * Leaves `store` out of the after-test check: for a test that breaks a log on purpose (a corrupt
 * line, a stale hint, an older writer's statistics) to prove Ebb reads it safely.
 */
export function exemptFromProtocolCheck<S extends ObjectStore>(store: S): S {
  exempt.add(store);
  return store;
}

/** Throws naming each violation in `store`'s tables (none for an exempt store). */
export async function assertTablesConform(store: ObjectStore, where: string): Promise<void> {
  if (exempt.has(store)) return;
  const found = await validateTables(store);
  if (found.length > 0) throw new Error(describeViolations(found, where));
}

/** The same over every table in `bucket`. */
export async function assertBucketTablesConform(endpoints: AwsEndpoints, bucket: string): Promise<void> {
  const client = createS3Client(endpoints);
  try {
    await assertTablesConform(new S3ObjectStore({ client, bucket }), `bucket ${bucket}`);
  } finally {
    client.destroy();
  }
}

function describeViolations(found: readonly TableViolations[], where: string): string {
  const lines = found.flatMap(({ table, violations }) =>
    violations.map(
      (v) =>
        `  ${table || "(root)"}${v.version === undefined ? "" : ` v${v.version}`}: [${v.rule}] ${v.message}`,
    ),
  );
  const shown = lines.slice(0, 50);
  if (lines.length > shown.length) shown.push(`  ... and ${lines.length - shown.length} more`);
  return `Delta tables in ${where} break PROTOCOL.md:\n${shown.join("\n")}`;
}
