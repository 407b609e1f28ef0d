import { useQuery } from "@tanstack/react-query";
import { ebb } from "../api/client.ts";
import type { DatasetSpec, EventInfo } from "../api/types.ts";
import { formatCount } from "../format.ts";
import { summarizeDataQuality } from "./data-quality.ts";

/** Pages of an update's flow_progress events read at most (each batch or refresh writes one). */
const MAX_PAGES = 20;

/**
 * Per dataset, the expectations of an update (the one selected, the latest by default) with the rows
 * that passed and failed each and what a failure does, summed over the update's flow_progress events.
 */
export function DataQuality(props: {
  pipelineId: string;
  updateId: string | undefined;
  specs: readonly DatasetSpec[];
  running: boolean;
}) {
  const { pipelineId, updateId } = props;
  const events = useQuery({
    // The end of a run is part of the key: the events its last batches wrote are read once more when
    // it stops, even if the last poll while it ran came before them.
    queryKey: ["pipeline", pipelineId, "data-quality", updateId, props.running],
    enabled: updateId !== undefined,
    refetchInterval: props.running ? 2000 : false,
    queryFn: async () => {
      const all: EventInfo[] = [];
      let page_token: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const answer = await ebb.events(pipelineId, {
          filter: `origin.update_id = '${updateId!}' AND event_type = 'flow_progress'`,
          max_results: 250,
          ...(page_token ? { page_token } : {}),
        });
        all.push(...answer.events);
        page_token = answer.next_page_token;
        if (!page_token) break;
      }
      return summarizeDataQuality(all);
    },
  });
  const summary = events.data;
  if (!summary || summary.length === 0) return null;
  const action = (dataset: string, name: string) =>
    props.specs.find((d) => d.name === dataset)?.expectations?.find((e) => e.name === name)?.on_violation ??
    "warn";
  return (
    <section className="scroll" aria-label="Data quality">
      <h2>Data quality</h2>
      <table className="grid grid-compact data-quality">
        <caption className="sr-only">Expectations of the selected update</caption>
        <thead>
          <tr>
            <th>Dataset</th>
            <th>Expectation</th>
            <th>On violation</th>
            <th className="num">Passed</th>
            <th className="num">Failed</th>
            <th className="num">Failed %</th>
          </tr>
        </thead>
        <tbody>
          {summary.map((e) => {
            const total = e.passed + e.failed;
            return (
              <tr key={`${e.dataset}/${e.name}`} data-expectation={`${e.dataset}.${e.name}`}>
                <td>{e.dataset}</td>
                <td className="mono">{e.name}</td>
                <td>{action(e.dataset, e.name)}</td>
                <td className="num">{formatCount(e.passed)}</td>
                <td className="num">{formatCount(e.failed)}</td>
                <td className="num">{total === 0 ? "—" : `${((100 * e.failed) / total).toFixed(1)}%`}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
