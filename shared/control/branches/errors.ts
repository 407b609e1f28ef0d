import { CodedError, InvalidParameterError } from "../../errors/coded-error.ts";
import { BRANCH_NAME_RULE } from "../../pipeline/branch-name.ts";

/** A branch name that cannot be a folder and a key part (docs/branches.md "Name"). */
export class InvalidBranchNameError extends InvalidParameterError {
  override readonly name = "InvalidBranchNameError";
  constructor(branch: string) {
    super(`branch name "${branch}" is not allowed: ${BRANCH_NAME_RULE}`, { data: { branch } });
  }
}

/** The pipeline has a branch of that name already. */
export class BranchAlreadyExistsError extends CodedError {
  override readonly name = "BranchAlreadyExistsError";
  override readonly errorCode = "BRANCH_ALREADY_EXISTS";
  override readonly httpStatus = 409;
  constructor(pipelineName: string, branch: string) {
    super(
      `pipeline ${pipelineName} has a branch named "${branch}" already: pick another name, or discard it first (POST …/branches/${branch}/discard)`,
      { data: { branch } },
    );
  }
}

/** No branch of that name. */
export class BranchNotFoundError extends CodedError {
  override readonly name = "BranchNotFoundError";
  override readonly errorCode = "BRANCH_NOT_FOUND";
  override readonly httpStatus = 404;
  constructor(pipelineId: string, branch: string) {
    super(`pipeline ${pipelineId} has no branch named "${branch}": GET …/branches lists its branches`, {
      data: { branch },
    });
  }
}

/** Live wrote a table since the branch was made: publishing would throw those writes away unseen. */
export class BranchOutOfDateError extends CodedError {
  override readonly name = "BranchOutOfDateError";
  override readonly errorCode = "BRANCH_OUT_OF_DATE";
  override readonly httpStatus = 409;
  constructor(branch: string, moved: readonly { table: string; from: number | null; now: number | null }[]) {
    super(
      `branch "${branch}" cannot be published: live moved on since it was made (${moved
        .map((m) => `${m.table} version ${m.from ?? "none"} -> ${m.now ?? "none"}`)
        .join(
          ", ",
        )}); make the branch again from a newer point (discard it, then POST …/updates with rewind_spec.branch) and replay it`,
      { data: { branch, tables: moved.map((m) => m.table) } },
    );
  }
}

/**
 * A branch flow streams from one of the pipeline's tables and has not read that table's branch log to
 * its end: the branch's own commits it has not read become one RESTORE on live, which a stream cannot
 * read part of (branch-offsets.ts's offsetsOnLive).
 */
export class BranchReaderBehindError extends CodedError {
  override readonly name = "BranchReaderBehindError";
  override readonly errorCode = "BRANCH_READER_BEHIND";
  override readonly httpStatus = 409;
  constructor(branch: string, behind: readonly { flow: string; dataset: string; table: string }[]) {
    super(
      `branch "${branch}" cannot be published: ${behind
        .map((b) => `flow ${b.flow} of ${b.table} has not read its upstream to the end of the branch`)
        .join(
          "; ",
        )}; replay them on the branch first (POST …/updates with {"branch": "${branch}", "refresh_selection": [${[
        ...new Set(behind.map((b) => JSON.stringify(b.dataset))),
      ].join(", ")}]}), then publish`,
      { data: { branch, flows: behind.map((b) => b.flow) } },
    );
  }
}
