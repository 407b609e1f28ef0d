/**
 * What `POST /api/2.0/tables/{name}/onset` answers (the onset finder, rewind-points/onset-finder.ts):
 * the last good fields only when a commit precedes the first bad one. `RewindPoint` is a rewind
 * point as `GET …/rewind-points` lists it (the control plane's view, the client's reading of it).
 */
export interface OnsetAnswer<RewindPoint> {
  readonly found: boolean;
  readonly starting_version: number;
  readonly first_bad_version?: number;
  readonly first_bad_commit_time?: string;
  readonly last_good_version?: number;
  readonly last_good_commit_time?: string;
  readonly rewind_timestamp?: string;
  /** The pipeline that owns the table, when one does. */
  readonly pipeline_id?: string;
  /** That pipeline's newest live rewind point from before the onset, when it has one. */
  readonly rewind_point?: RewindPoint;
}
