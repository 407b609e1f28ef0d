import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as actions from "aws-cdk-lib/aws-cloudwatch-actions";
import type * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import type * as sns from "aws-cdk-lib/aws-sns";
import type * as sfn from "aws-cdk-lib/aws-stepfunctions";
import { Construct } from "constructs";
import { METRIC, METRIC_NAMESPACE, METRIC_SERVICE } from "../../shared/control/metrics/metric-catalog.ts";

/**
 * Ebb's alarms and dashboard (operations.md "Alarms"): over the metrics the functions write as
 * embedded-metric-format lines (shared/control/metrics), the state machine's and DynamoDB's own. Each
 * alarm fires on the first sign (one failed update, one internal error) and, given a topic, notifies
 * it on ALARM and on OK. Alarms and dashboard need no IAM of Ebb's: CloudWatch reads the metrics and
 * publishes to the topic itself (a topic encrypted with a customer key must let CloudWatch use it).
 */

export interface EbbMonitoringOptions {
  /** Where the alarms notify, on ALARM and back to OK. @default none: the alarms only show in CloudWatch */
  readonly alarmTopic?: sns.ITopic;
  /** @default true */
  readonly alarms?: boolean;
  /** @default true */
  readonly dashboard?: boolean;
  /** The dashboard's name. @default CloudFormation's */
  readonly dashboardName?: string;
  /**
   * A source falls behind when a flow's backlog stays at or above this for 15 minutes: auto_loader
   * files listed and not yet read, Kafka records past the flow's offsets. @default 1,000 files, 1,000,000 records
   */
  readonly backlogFiles?: number;
  readonly backlogRecords?: number;
  /**
   * A source falls behind when the oldest data a flow left in it stays at least this old for 15
   * minutes: the oldest listed file an auto_loader flow has not read, a Kinesis flow's
   * MillisBehindLatest. @default Duration.hours(1)
   */
  readonly backlogAge?: Duration;
}

export interface EbbMonitoringProps extends EbbMonitoringOptions {
  readonly stateMachine: sfn.StateMachine;
  readonly tables: readonly dynamodb.ITable[];
}

export class EbbMonitoring extends Construct {
  /** The alarms, by construct id (none with `alarms: false`). */
  readonly alarms = new Map<string, cloudwatch.Alarm>();
  readonly dashboard?: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: EbbMonitoringProps) {
    super(scope, id);
    const { stateMachine } = props;
    const throttles = throttlesOf(props.tables);
    const sfnOptions = { period: FIVE_MINUTES, statistic: "Sum" };

    if (props.alarms !== false) {
      const alarm = (
        alarmId: string,
        description: string,
        metric: cloudwatch.IMetric,
        periods = 1,
        threshold = 1,
      ) => {
        const created = new cloudwatch.Alarm(this, alarmId, {
          alarmDescription: description,
          metric,
          threshold,
          evaluationPeriods: periods,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          // No metric is no news: an idle Ebb writes none.
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        });
        if (props.alarmTopic) {
          created.addAlarmAction(new actions.SnsAction(props.alarmTopic));
          created.addOkAction(new actions.SnsAction(props.alarmTopic));
        }
        this.alarms.set(alarmId, created);
      };
      alarm(
        "UpdateFailed",
        "An Ebb update FAILED: its error and failed flow are in the pipeline's event log (GET /api/2.0/pipelines/{id}/events)",
        ebbMetric(METRIC.updatesFailed, "Sum"),
      );
      alarm(
        "RewindIncomplete",
        "An Ebb rewind failed part-way: its pipeline is rewind-blocked (PIPELINE_REWIND_INCOMPLETE) until a rewind succeeds (rewind.md)",
        ebbMetric(METRIC.rewindsIncomplete, "Sum"),
      );
      alarm(
        "ApiInternalError",
        "Ebb's API answered INTERNAL_ERROR (a bug in Ebb): the function's log has the request's line with its stack (request_id)",
        ebbMetric(METRIC.requests5xx, "Sum", { error_code: "INTERNAL_ERROR" }),
      );
      alarm(
        "SourceBacklogFiles",
        "An auto_loader flow has fallen behind its source: files wait unread for 15 minutes (BacklogFiles)",
        ebbMetric(METRIC.backlogFiles, "Maximum"),
        3,
        props.backlogFiles ?? 1_000,
      );
      alarm(
        "SourceBacklogRecords",
        "A Kafka flow has fallen behind its topic for 15 minutes (BacklogRecords)",
        ebbMetric(METRIC.backlogRecords, "Maximum"),
        3,
        props.backlogRecords ?? 1_000_000,
      );
      alarm(
        "SourceBacklogAge",
        "A flow has fallen behind its source for 15 minutes: the oldest data it has not read (an auto_loader file, a Kinesis shard's MillisBehindLatest) is older than the threshold (BacklogSeconds)",
        ebbMetric(METRIC.backlogSeconds, "Maximum"),
        3,
        (props.backlogAge ?? Duration.hours(1)).toSeconds(),
      );
      alarm(
        "ExecutionsFailed",
        "An execution of Ebb's update state machine failed (the update's FailUpdate did not run)",
        stateMachine.metricFailed(sfnOptions),
      );
      alarm(
        "ExecutionsTimedOut",
        "An execution of Ebb's update state machine timed out (24 hours)",
        stateMachine.metricTimedOut(sfnOptions),
      );
      alarm("DynamoDbThrottled", "Ebb's DynamoDB tables throttled reads or writes", throttles);
    }

    if (props.dashboard !== false) {
      const dashboard = new cloudwatch.Dashboard(this, "Dashboard", {
        ...(props.dashboardName !== undefined ? { dashboardName: props.dashboardName } : {}),
        defaultInterval: Duration.hours(3),
      });
      const graph = (title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = []) =>
        new cloudwatch.GraphWidget({ title, left, right, width: 8, height: 6 });
      dashboard.addWidgets(
        graph("Updates", [
          ebbMetric(METRIC.updatesCompleted, "Sum"),
          ebbMetric(METRIC.updatesFailed, "Sum"),
          ebbMetric(METRIC.updatesCanceled, "Sum"),
          ebbMetric(METRIC.rewinds, "Sum"),
        ]),
        graph(
          "Update duration",
          ["p50", "p90", "Maximum"].map((statistic) => ebbMetric(METRIC.updateDuration, statistic)),
        ),
        graph("Records by flow", [bySearch(METRIC.recordsIn.name), bySearch(METRIC.recordsOut.name)]),
      );
      dashboard.addWidgets(
        graph(
          "Records",
          [ebbMetric(METRIC.recordsIn, "Sum"), ebbMetric(METRIC.recordsOut, "Sum")],
          [ebbMetric(METRIC.bytesWritten, "Sum")],
        ),
        graph("Rows dropped", [
          ebbMetric(METRIC.rowsDroppedByExpectations, "Sum"),
          ebbMetric(METRIC.rowsDroppedByWatermark, "Sum"),
          ebbMetric(METRIC.recordsQuarantined, "Sum"),
        ]),
        graph(
          "Source backlog",
          [ebbMetric(METRIC.backlogFiles, "Maximum"), ebbMetric(METRIC.backlogRecords, "Maximum")],
          [ebbMetric(METRIC.backlogSeconds, "Maximum")],
        ),
      );
      dashboard.addWidgets(
        graph(
          "API requests",
          [
            ebbMetric(METRIC.requests, "Sum"),
            ebbMetric(METRIC.requests4xx, "Sum"),
            ebbMetric(METRIC.requests5xx, "Sum"),
          ],
          [ebbMetric(METRIC.requestLatency, "p90")],
        ),
        graph("State machine", [
          stateMachine.metricStarted(sfnOptions),
          stateMachine.metricSucceeded(sfnOptions),
          stateMachine.metricFailed(sfnOptions),
          stateMachine.metricTimedOut(sfnOptions),
        ]),
        graph("DynamoDB throttles", [throttles]),
      );
      if (this.alarms.size > 0)
        dashboard.addWidgets(
          new cloudwatch.AlarmStatusWidget({ title: "Alarms", alarms: [...this.alarms.values()], width: 24 }),
        );
      this.dashboard = dashboard;
    }
  }
}

const FIVE_MINUTES = Duration.minutes(5);

/** An Ebb metric over every pipeline (the `service` dimension set), or by one more dimension. */
function ebbMetric(
  metric: { readonly name: string },
  statistic: string,
  dimensions: Readonly<Record<string, string>> = {},
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRIC_NAMESPACE,
    metricName: metric.name,
    dimensionsMap: { service: METRIC_SERVICE, ...dimensions },
    statistic,
    period: FIVE_MINUTES,
  });
}

/** A metric for each pipeline's flow, as many as there are (a CloudWatch search). */
function bySearch(name: string): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({
    expression: `SEARCH('{${METRIC_NAMESPACE},service,pipeline_id,flow} MetricName="${name}"', 'Sum', 300)`,
    label: name,
    usingMetrics: {},
    period: FIVE_MINUTES,
  });
}

/** Read and write throttle events of every table, summed. */
function throttlesOf(tables: readonly dynamodb.ITable[]): cloudwatch.MathExpression {
  const usingMetrics: Record<string, cloudwatch.IMetric> = {};
  tables.forEach((table, i) => {
    for (const kind of ["Read", "Write"]) {
      usingMetrics[`${kind.toLowerCase()}${i}`] = table.metric(`${kind}ThrottleEvents`, {
        statistic: "Sum",
        period: FIVE_MINUTES,
      });
    }
  });
  return new cloudwatch.MathExpression({
    // SUM over the list: a table with no throttles (no data) does not blank the others'.
    expression: `SUM([${Object.keys(usingMetrics).join(", ")}])`,
    usingMetrics,
    label: "Throttled requests",
    period: FIVE_MINUTES,
  });
}
