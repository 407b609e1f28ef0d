/** The command line was wrong: printed without a stack, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
