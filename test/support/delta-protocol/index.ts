/**
 * A checker of the Delta logs Ebb writes against PROTOCOL.md, independent of Ebb's own Delta code:
 * `validateLog` is the pure core over a log's files, `validateTables` reads every table in an object
 * store. The test run applies it to every table the tests write (protocol-check.ts).
 */
export type { CheckpointContent } from "./checkpoint-rules.ts";
export { findTables, validateTables, type TableViolations } from "./table-validator.ts";
export { validateLog, type LogContents } from "./validate-log.ts";
export { RULES, type Rule, type Violation } from "./violations.ts";
