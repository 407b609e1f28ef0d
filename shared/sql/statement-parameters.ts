import { SqlNotSupportedError } from "./errors.ts";
import { sparkStringLiteral } from "./spark-sql-tokens.ts";

/**
 * A named parameter (`{name, value, type}` of the Statement Execution API) as the Spark literal its
 * marker becomes: the value cast to its Spark type (a STRING when none is given), or NULL.
 */

/** Spark type names a parameter may name (DECIMAL with its precision and scale). */
export const PARAMETER_TYPE =
  /^(STRING|BOOLEAN|TINYINT|BYTE|SMALLINT|SHORT|INT|INTEGER|BIGINT|LONG|FLOAT|DOUBLE|DATE|TIMESTAMP|DECIMAL(\(\s*\d+\s*(,\s*\d+\s*)?\))?)$/i;

export function parameterLiteral(value: string | null | undefined, type: string | undefined): string {
  if (type !== undefined && !PARAMETER_TYPE.test(type)) {
    throw new SqlNotSupportedError(
      `the parameter type ${JSON.stringify(type)} is not a Spark type Ebb knows`,
    );
  }
  const spark = (type ?? "STRING").toUpperCase().replace(/\s+/g, "");
  if (value === null || value === undefined) return `CAST(NULL AS ${spark})`;
  return `CAST(${sparkStringLiteral(value)} AS ${spark})`;
}
