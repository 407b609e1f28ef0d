import { DefinitionError } from "../pipeline/errors.ts";
import { formatLocation, type ProjectLocation } from "./errors.ts";

/**
 * A problem the validator finds in a definition built from a project names a definition path
 * (`datasets[1].flows[0].sql`), which the project's author never wrote: this puts the file, line and
 * column of the statement in front of it, keeping the issue's code.
 */
export function locateDefinitionError(
  error: unknown,
  locate: (path: string) => ProjectLocation | undefined,
): unknown {
  if (!(error instanceof DefinitionError)) return error;
  return new DefinitionError(
    error.issues.map((issue) => {
      const at = locate(issue.path);
      return at === undefined ? issue : { ...issue, path: `${formatLocation(at)} (${issue.path})` };
    }),
    { cause: error },
  );
}
