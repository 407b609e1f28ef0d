/**
 * `ebb table restore` of a pipeline's own table, refused unless forced: a RESTORE moves the table
 * back but leaves its flows' checkpoints where they were, ahead of it, so the flows never write the
 * rows in between again (they are lost until a rewind). `ebb rewind` restores the table and moves its
 * flows back together.
 */
export class PipelineTableRestoreError extends Error {
  override readonly name = "PipelineTableRestoreError";
  readonly errorCode = "PIPELINE_TABLE_RESTORE_REFUSED";

  constructor(
    readonly location: string,
    readonly table: string,
  ) {
    super(
      `${location} is pipeline table ${table}: a RESTORE would leave its flows' checkpoints ahead of ` +
        `the table, and the rows in between would not be written again. Rewind the pipeline instead ` +
        `(\`ebb rewind <pipeline-id> --datasets ${table} --timestamp …\` restores the table and its ` +
        `flows together), or pass --force to restore the table alone`,
    );
  }
}
