import { z } from "zod";
import type { FlowDefinition } from "../../pipeline/definition-schema.ts";

/**
 * What a flow's operator state depends on (semantics.md "Replay": a definition whose state does not
 * match the restored state is refused). Kept in every state version's meta; a definition with another
 * signature cannot continue from that state. The watermark's delay is not part of it: changing the
 * delay only moves when state is let go.
 */
export const signatureSchema = z.object({
  watermarkColumn: z.string().nullable(),
  dedupKeys: z.array(z.string()).nullable(),
  withinWatermark: z.boolean(),
  /** A stream-stream join: the joined stream and both event-time columns (absent before joins). */
  join: z
    .object({ stream: z.string(), leftTime: z.string().nullable(), rightTime: z.string().nullable() })
    .nullable()
    .default(null),
});
export type OperatorSignature = z.infer<typeof signatureSchema>;

export function operatorSignature(flow: FlowDefinition): OperatorSignature {
  return {
    watermarkColumn: flow.watermark?.column ?? null,
    dedupKeys: flow.drop_duplicates ? [...flow.drop_duplicates.keys] : null,
    withinWatermark: flow.drop_duplicates?.within_watermark ?? false,
    join: flow.join
      ? {
          stream: flow.join.stream,
          leftTime: flow.watermark?.column ?? null,
          rightTime: flow.join.watermark?.column ?? null,
        }
      : null,
  };
}

/**
 * Whether a state with signature `stored` can be continued by `wanted`. Adding a watermark where the
 * state had none is fine (nothing was kept by event time); dropping or changing one is not, nor is any
 * change of the dedup keys.
 */
export function sameSignature(stored: OperatorSignature, wanted: OperatorSignature): boolean {
  const keys = JSON.stringify(stored.dedupKeys) === JSON.stringify(wanted.dedupKeys);
  const mark =
    stored.watermarkColumn === wanted.watermarkColumn ||
    (stored.watermarkColumn === null && !stored.withinWatermark);
  const join = JSON.stringify(stored.join) === JSON.stringify(wanted.join);
  return keys && mark && join && stored.withinWatermark === wanted.withinWatermark;
}

export function describeSignature(signature: OperatorSignature): string {
  const parts = [
    signature.dedupKeys
      ? `deduplication by (${signature.dedupKeys.join(", ")})${signature.withinWatermark ? " within the watermark" : ""}`
      : "no deduplication",
    signature.watermarkColumn ? `a watermark on ${signature.watermarkColumn}` : "no watermark",
    ...(signature.join
      ? [
          `a stream-stream join with ${signature.join.stream} on ${signature.join.leftTime} and ${signature.join.rightTime}`,
        ]
      : []),
  ];
  return parts.join(" and ");
}
