/** The user answered no to a confirmation: nothing was done, exit code 1. */
export class DeclinedError extends Error {
  override readonly name = "DeclinedError";
}
