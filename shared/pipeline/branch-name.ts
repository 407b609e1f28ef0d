/**
 * A branch's name (docs/branches.md "Name"): a folder name and a part of a checkpoint key. The API's
 * checks, the OpenAPI document and the UI's form all read it here.
 */
export const BRANCH_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** The rule in words, for a refusal's message. */
export const BRANCH_NAME_RULE =
  'use 1 to 63 lower-case letters, digits, "-" or "_", starting with a letter or digit (e.g. "fix-1")';

export function isBranchName(name: string): boolean {
  return BRANCH_NAME.test(name);
}
