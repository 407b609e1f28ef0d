/**
 * `ebb/cdk`: what a CDK app imports from the installed package — the `Ebb` construct (the whole of
 * Ebb in one construct), the stack that wraps it, and their props.
 */
export { Ebb, type EbbProps } from "./ebb.ts";
export { EbbStack } from "./ebb-stack.ts";
export type { EbbStorageProps } from "./ebb-storage.ts";
export type { EbbWebUiDomain } from "./ebb-web-ui.ts";
export type { EbbEventStreams } from "./event-stream-access.ts";
