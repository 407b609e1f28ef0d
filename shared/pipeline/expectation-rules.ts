import type { PipelineDefinition } from "./definition-schema.ts";
import { DEFINITION_ISSUE_CODES, type DefinitionIssue } from "./errors.ts";
import type { SqlAnalysis } from "./sql-references.ts";

/**
 * The rules on a dataset's `expectations` the schema alone cannot state: names unique in the dataset
 * (as Databricks requires; SQL names fold case) and each condition exactly one SQL expression with no
 * subquery, so it reads the row and nothing else. Whether its columns exist is known only from the
 * flow's output, when a batch runs (engine/expectations.ts refuses an unknown column there).
 */
export async function expectationIssues(
  definition: PipelineDefinition,
  analyzeCondition: (condition: string) => Promise<SqlAnalysis>,
): Promise<DefinitionIssue[]> {
  const issues: DefinitionIssue[] = [];
  for (const [d, dataset] of definition.datasets.entries()) {
    if (dataset.type === "view" || !dataset.expectations) continue;
    const seen = new Map<string, number>();
    for (const [e, expectation] of dataset.expectations.entries()) {
      const path = `datasets[${d}].expectations[${e}]`;
      const first = seen.get(expectation.name.toLowerCase());
      if (first !== undefined) {
        issues.push({
          path: `${path}.name`,
          code: DEFINITION_ISSUE_CODES.expectationNameNotUnique,
          message: `dataset "${dataset.name}" has two expectations named "${expectation.name}" (expectations[${first}] and expectations[${e}]): expectation names must be unique in a dataset; rename one`,
        });
      } else {
        seen.set(expectation.name.toLowerCase(), e);
      }
      const analysis = await analyzeCondition(expectation.condition);
      if (!analysis.ok) {
        issues.push({
          path: `${path}.condition`,
          code: DEFINITION_ISSUE_CODES.expectationConditionInvalid,
          message: `expectation "${expectation.name}" of dataset "${dataset.name}" is not a SQL boolean expression over the dataset's columns (e.g. "amount > 0"): ${analysis.message}`,
        });
      }
    }
  }
  return issues;
}
