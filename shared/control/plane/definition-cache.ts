import type { ValidatedPipeline } from "../../pipeline/validate-pipeline.ts";

/**
 * Validated definitions kept per (pipeline, version): a stored version never changes, so each step of
 * an update, and each API call, validates it once per process instead of every time. Bounded, oldest
 * out first; a failed validation is not kept.
 */

/** Enough for the pipelines one Lambda instance or local runtime works on at a time. */
const CACHED_DEFINITIONS = 128;

export class DefinitionCache {
  private readonly entries = new Map<string, Promise<ValidatedPipeline>>();

  /** The validated `version` of the pipeline, from `validate` the first time. */
  get(
    pipelineId: string,
    version: number,
    validate: () => Promise<ValidatedPipeline>,
  ): Promise<ValidatedPipeline> {
    const key = `${pipelineId}\u0000${version}`;
    const cached = this.entries.get(key);
    if (cached) return cached;
    const validated = validate();
    this.entries.set(key, validated);
    validated.catch(() => this.entries.delete(key));
    if (this.entries.size > CACHED_DEFINITIONS) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
    return validated;
  }
}
