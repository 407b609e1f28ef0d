/**
 * SQL text as both of Ebb's DuckDB parsers read it, the validating one (sql-references.ts) and the
 * sandbox's: Spark's `window` quoted, a condition's shape, the pipeline's namespace made bare.
 */
export { quoteWindowKeyword } from "./window-keyword.ts";
export { conditionShapeProblem } from "./condition-shape.ts";
export { unqualify, type Namespace } from "./bare-names.ts";
