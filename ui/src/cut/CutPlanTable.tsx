import type { CutRewindResult } from "../../../shared/client/ebb-client.ts";
import { formatTime, shortName } from "../format.ts";

/**
 * A cut's plan as the dry run answered it: per pipeline, upstreams first, the point it rewinds to,
 * the upstream table versions that point had read, and each of its tables' version now → restored.
 */
export function CutPlanTable({ plan }: { plan: CutRewindResult }) {
  const names = new Map(plan.pipelines.map((p) => [p.pipeline_id, p.name]));
  return (
    <div className="scroll">
      <table className="grid grid-compact" aria-label="Cut plan">
        <thead>
          <tr>
            <th className="num">#</th>
            <th>Pipeline</th>
            <th>Rewind point</th>
            <th>Reads, kept up to</th>
            <th>Tables: version now → restored</th>
          </tr>
        </thead>
        <tbody>
          {plan.pipelines.map((p, i) => (
            <tr key={p.pipeline_id} data-pipeline={p.name}>
              <td className="num">{i + 1}</td>
              <td>{p.name}</td>
              <td>
                {formatTime(p.timestamp)}
                <div className="subtle mono">{p.rewind_point_id}</div>
              </td>
              <td>
                {p.upstream_versions.length === 0
                  ? "— (the cut's upstream)"
                  : p.upstream_versions
                      .map(
                        (u) =>
                          `${names.get(u.pipeline_id) ?? u.pipeline_id}.${shortName(u.dataset)} v${u.version}`,
                      )
                      .join(", ")}
              </td>
              <td>
                <ul className="plain-list">
                  {p.datasets.map((d) => (
                    <li key={d.dataset} data-dataset={shortName(d.dataset)}>
                      {shortName(d.dataset)}:{" "}
                      {d.action === "RESTORE"
                        ? `v${d.version ?? "?"} → v${d.target_version ?? "?"}`
                        : `${d.action} (no version at the point)`}
                    </li>
                  ))}
                </ul>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
