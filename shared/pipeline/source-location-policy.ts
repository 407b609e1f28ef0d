import { controlCharacterIndex } from "./control-characters.ts";
import { LocalPathNotAllowedError, PathControlCharacterError, S3LocationRequiredError } from "./errors.ts";
import type { PipelineDefinition } from "./definition-schema.ts";

/**
 * Which locations a source may read (and a definition file may come from). On AWS there are no local
 * roots and only `s3://` locations pass; the local runtime names the folders of this machine it may
 * read (its landing area and each `--allow-local-path`). A path under a root passes only if it does
 * not climb out of it: roots and paths are compared segment by segment, after the caller resolved
 * symbolic links where the folder exists. Control characters never pass.
 */

/** Throws the coded error for `location`, naming `field`, or returns when it may be read. */
export function checkSourceLocation(location: string, localRoots: readonly string[], field = "path"): void {
  const control = controlCharacterIndex(location);
  if (control >= 0) throw new PathControlCharacterError(field, location, control);
  if (!location.startsWith("/")) return; // s3:// (its shape is the definition schema's to check)
  if (localRoots.length === 0) throw new S3LocationRequiredError(field, location);
  if (!localRoots.some((root) => isWithin(location, root)))
    throw new LocalPathNotAllowedError(field, location, localRoots);
}

/** Every source path of a definition, checked with its field path (`datasets[0].flows[1].source.path`). */
export function checkDefinitionLocations(
  definition: PipelineDefinition,
  localRoots: readonly string[],
): void {
  definition.datasets.forEach((dataset, d) => {
    if (!("flows" in dataset)) return;
    dataset.flows.forEach((flow, f) => {
      if ("path" in flow.source)
        checkSourceLocation(flow.source.path, localRoots, `datasets[${d}].flows[${f}].source.path`);
    });
  });
}

function isWithin(location: string, root: string): boolean {
  const segments = (p: string) => p.split("/").filter((s) => s !== "" && s !== ".");
  const inner = segments(location);
  const outer = segments(root);
  if (inner.includes("..")) return false;
  return outer.length <= inner.length && outer.every((segment, i) => inner[i] === segment);
}
