/**
 * The engines a batch can run on (`details.flow_progress.engine`). A leaf of its own: the request
 * schemas name it, and the construct that imports them must not load the SQL translator (its Wasm
 * module's top-level await cannot be required by a CommonJS CDK app).
 */
export const BATCH_ENGINES = ["duckdb", "spark"] as const;
export type BatchEngine = (typeof BATCH_ENGINES)[number];
