import { METRIC } from "./metric-catalog.ts";
import type { MetricGroup } from "./metric-points.ts";

/** One API request as its log line describes it (functions/http/api-route.ts). */
export interface RequestOutcome {
  readonly method: string;
  /** The route's template, e.g. `/api/2.0/pipelines/{pipeline_id}/updates`. */
  readonly route: string;
  readonly status: number;
  readonly durationMs: number;
  readonly errorCode?: string | undefined;
  readonly requestId: string;
}

/**
 * A request's metrics: counted and timed by route (`GET /api/2.0/pipelines`), and an error also counted
 * by its error code (errors.md) as a 4xx (the caller's) or a 5xx (Ebb's or AWS's), so the construct can
 * alarm on `INTERNAL_ERROR` alone.
 */
export function requestMetricsOf(request: RequestOutcome): MetricGroup[] {
  const properties = { request_id: request.requestId };
  const groups: MetricGroup[] = [
    {
      dimensions: { route: `${request.method} ${request.route}` },
      dimensionSets: [[], ["route"]],
      metrics: [
        { name: METRIC.requests.name, unit: METRIC.requests.unit, value: 1 },
        { name: METRIC.requestLatency.name, unit: METRIC.requestLatency.unit, value: request.durationMs },
      ],
      properties,
    },
  ];
  if (request.status >= 400) {
    const metric = request.status >= 500 ? METRIC.requests5xx : METRIC.requests4xx;
    groups.push({
      dimensions: { error_code: request.errorCode ?? `HTTP_${request.status}` },
      dimensionSets: [[], ["error_code"]],
      metrics: [{ name: metric.name, unit: metric.unit, value: 1 }],
      properties,
    });
  }
  return groups;
}
