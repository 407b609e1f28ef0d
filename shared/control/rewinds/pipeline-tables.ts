import type { PipelineTables } from "../../rewind/cuts/index.ts";
import { tableDatasets } from "../../rewind/pipeline-datasets.ts";
import type { ValidatedPipeline } from "../../pipeline/validate-pipeline.ts";
import { tablePrefix } from "../../store/bucket-layout.ts";

/**
 * What the graph of pipelines needs of one pipeline (rewind/cuts/pipeline-reads.ts): its tables'
 * bucket folders, and its flows that read a Delta table by location. Both the cut across pipelines
 * and the ordered run build their order from these.
 */
export function pipelineTables(id: string, pipeline: ValidatedPipeline): PipelineTables {
  const { catalog, schema } = pipeline.definition;
  return {
    pipeline: id,
    tables: new Map(tableDatasets(pipeline).map((table) => [tablePrefix({ catalog, schema, table }), table])),
    deltaReads: pipeline.definition.datasets.flatMap((d) =>
      d.type === "streaming_table"
        ? d.flows.flatMap((f) =>
            f.source.type === "delta" ? [{ flow: f.name, location: f.source.path }] : [],
          )
        : [],
    ),
  };
}
