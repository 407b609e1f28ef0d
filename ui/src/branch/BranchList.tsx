import { BRANCH_PAGE, useBranches } from "../api/queries.ts";
import { ErrorNote } from "../components/ErrorNote.tsx";
import { RouteLink } from "../components/RouteLink.tsx";
import { formatAgo, formatTime } from "../format.ts";
import { paths } from "../routing.ts";

/**
 * A pipeline's branches (docs/branches.md), by name, a page at a time: "More branches" reads the
 * next page with the listing's own token.
 */
export function BranchList({ pipelineId }: { pipelineId: string }) {
  const branches = useBranches(pipelineId);
  const all = branches.data?.pages.flatMap((p) => p.branches) ?? [];
  if (branches.error) return <ErrorNote error={branches.error} />;
  if (!branches.data) return <p className="muted">Loading…</p>;
  return (
    <>
      {all.length === 0 ? (
        <p className="muted">
          No branches. Rehearse a rewind on a branch from the rewind page: its replay runs beside live, and
          you compare before you publish.
        </p>
      ) : (
        <div className="scroll">
          <table className="grid grid-compact" aria-label="Branches">
            <thead>
              <tr>
                <th>Branch</th>
                <th>At the point of</th>
                <th>Tables</th>
                <th>Made</th>
              </tr>
            </thead>
            <tbody>
              {all.map((b) => (
                <tr key={b.name} data-branch={b.name}>
                  <td>
                    <RouteLink to={paths.branch(pipelineId, b.name)}>{b.name}</RouteLink>
                  </td>
                  <td className="nowrap">{formatTime(b.point_timestamp)}</td>
                  <td>{b.tables.map((t) => t.name).join(", ")}</td>
                  <td className="nowrap">{formatAgo(b.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {branches.hasNextPage && (
        <div className="actions">
          <button
            type="button"
            className="button"
            disabled={branches.isFetchingNextPage}
            onClick={() => void branches.fetchNextPage()}
          >
            {branches.isFetchingNextPage ? "Loading…" : `More branches (next ${BRANCH_PAGE})`}
          </button>
        </div>
      )}
    </>
  );
}
