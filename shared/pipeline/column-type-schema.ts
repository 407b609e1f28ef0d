import { z } from "zod";
import { columnTypeProblem } from "./column-type.ts";

/** A declared column type: parsed as a DuckDB type here, so no other text reaches the engine's SQL. */
export const columnTypeSchema = z.string().superRefine((value, ctx) => {
  const problem = columnTypeProblem(value);
  if (problem !== undefined) {
    ctx.addIssue({
      code: "custom",
      message: `${JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)} is not a column type: ${problem}`,
    });
  }
});
