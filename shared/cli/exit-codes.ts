/**
 * Exit codes scripts can rely on: 2 for a command line it cannot run (a missing file, a destructive
 * command nobody confirmed), 3 when the API refused the request (its error_code is printed), 4 when an
 * update it followed ended FAILED or CANCELED.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, refused: 3, updateFailed: 4 } as const;
