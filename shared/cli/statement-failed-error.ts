/** A statement the SQL endpoint ran and answered FAILED: printed with its error class, exit 3. */
export class StatementFailedError extends Error {
  override readonly name = "StatementFailedError";
}
