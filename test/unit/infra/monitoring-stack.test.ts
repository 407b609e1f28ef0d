import { App, Duration, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import * as sns from "aws-cdk-lib/aws-sns";
import { describe, expect, it } from "vitest";
import { Ebb, type EbbProps } from "../../../infra/aws/ebb.ts";
import { METRIC, METRIC_NAMESPACE } from "../../../shared/control/metrics/metric-catalog.ts";

/**
 * Operating Ebb on AWS (issue 39), synthesized only: the alarms and the dashboard over Ebb's metrics,
 * the state machine's and DynamoDB's, notifying the topic the deployer gives; X-Ray active tracing on
 * every function and the state machine, with the IAM it needs; props that turn each off.
 */
function synth(props: EbbProps = {}) {
  const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
  const stack = new Stack(app, "Monitored");
  const topic = new sns.Topic(stack, "OnCall");
  const ebb = new Ebb(stack, "Ebb", typeof props.monitoring === "object" ? props : { ...props });
  return { ebb, topic, template: Template.fromStack(stack) };
}

/** The default props' synthesis, made once: two tests read it, neither changes it. */
let defaults: ReturnType<typeof synth> | undefined;
const defaultSynth = () => (defaults ??= synth());

const alarmsOf = (template: Template) =>
  Object.values(template.findResources("AWS::CloudWatch::Alarm")).map(
    (alarm) => (alarm as { Properties: Record<string, unknown> }).Properties,
  );

describe("the Ebb construct's alarms and dashboard", () => {
  it("alarms on a failed update, a blocked rewind, INTERNAL_ERROR, a source behind, failed or timed-out executions and throttling", () => {
    const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
    const stack = new Stack(app, "Monitored");
    const topic = new sns.Topic(stack, "OnCall");
    new Ebb(stack, "Ebb", {
      monitoring: { alarmTopic: topic, backlogFiles: 50, backlogAge: Duration.minutes(30) },
    });
    const template = Template.fromStack(stack);
    const alarms = alarmsOf(template);
    const onEbbMetric = (name: string, dimensions: { Name: string; Value: string }[] = []) =>
      alarms.find((alarm) => alarm["MetricName"] === name && alarm["Namespace"] === METRIC_NAMESPACE) ??
      expect.fail(`no alarm on ${name} ${JSON.stringify(dimensions)}`);

    expect(onEbbMetric(METRIC.updatesFailed.name)).toMatchObject({
      Statistic: "Sum",
      Threshold: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
      TreatMissingData: "notBreaching",
      Dimensions: [{ Name: "service", Value: "ebb" }],
    });
    expect(onEbbMetric(METRIC.rewindsIncomplete.name)).toMatchObject({ Threshold: 1 });
    const internal = onEbbMetric(METRIC.requests5xx.name)["Dimensions"] as unknown[];
    expect(internal).toHaveLength(2);
    expect(internal).toEqual(
      expect.arrayContaining([
        { Name: "service", Value: "ebb" },
        { Name: "error_code", Value: "INTERNAL_ERROR" },
      ]),
    );
    expect(onEbbMetric(METRIC.backlogFiles.name)).toMatchObject({
      Statistic: "Maximum",
      Threshold: 50,
      EvaluationPeriods: 3,
    });
    expect(onEbbMetric(METRIC.backlogRecords.name)).toMatchObject({ Threshold: 1_000_000 });
    expect(onEbbMetric(METRIC.backlogSeconds.name)).toMatchObject({
      Statistic: "Maximum",
      Threshold: 1_800,
      EvaluationPeriods: 3,
    });
    const onStates = (name: string) =>
      alarms.find((alarm) => alarm["Namespace"] === "AWS/States" && alarm["MetricName"] === name);
    expect(onStates("ExecutionsFailed")).toBeDefined();
    expect(onStates("ExecutionsTimedOut")).toBeDefined();
    const throttling = alarms.find((alarm) =>
      JSON.stringify(alarm["Metrics"] ?? "").includes("ThrottleEvents"),
    );
    const metricNames = JSON.stringify(throttling?.["Metrics"]);
    expect(metricNames.match(/ReadThrottleEvents/g)).toHaveLength(4);
    expect(metricNames.match(/WriteThrottleEvents/g)).toHaveLength(4);

    // Every alarm notifies the topic, going off and coming back.
    expect(alarms).toHaveLength(9);
    const topicRef = stack.resolve(topic.topicArn) as unknown;
    for (const alarm of alarms) {
      expect(alarm["AlarmActions"]).toEqual([topicRef]);
      expect(alarm["OKActions"]).toEqual([topicRef]);
    }
    template.resourceCountIs("AWS::CloudWatch::Dashboard", 1);
    const body = JSON.stringify(template.findResources("AWS::CloudWatch::Dashboard"));
    for (const metric of [
      METRIC.recordsIn,
      METRIC.bytesWritten,
      METRIC.updateDuration,
      METRIC.backlogFiles,
      METRIC.backlogSeconds,
    ])
      expect(body).toContain(metric.name);
  });

  it("alarms without notifying when given no topic, and creates nothing with monitoring off", () => {
    const { template } = defaultSynth();
    const alarms = alarmsOf(template);
    expect(alarms).toHaveLength(9);
    for (const alarm of alarms) expect(alarm["AlarmActions"]).toBeUndefined();

    const off = synth({ monitoring: false }).template;
    off.resourceCountIs("AWS::CloudWatch::Alarm", 0);
    off.resourceCountIs("AWS::CloudWatch::Dashboard", 0);

    const alarmsOnly = synth({ monitoring: { dashboard: false } }).template;
    alarmsOnly.resourceCountIs("AWS::CloudWatch::Dashboard", 0);
    expect(alarmsOf(alarmsOnly)).toHaveLength(9);
  });
});

describe("the Ebb construct's tracing", () => {
  it("traces every function and the state machine with X-Ray, and lets their roles write traces", () => {
    const { ebb, template } = defaultSynth();
    const functions = template.findResources("AWS::Lambda::Function");
    const ours = Object.values(functions).filter((fn) => JSON.stringify(fn).includes("ebb:entry")) as {
      Properties: { TracingConfig?: unknown; Environment?: { Variables?: Record<string, unknown> } };
    }[];
    expect(ours.length).toBe(ebb.functions.size);
    for (const fn of ours) {
      expect(fn.Properties.TracingConfig).toEqual({ Mode: "Active" });
      expect(fn.Properties.Environment?.Variables?.["POWERTOOLS_TRACE_ENABLED"]).toBeUndefined();
    }
    template.hasResourceProperties("AWS::StepFunctions::StateMachine", {
      TracingConfiguration: { Enabled: true },
    });
    // Each function's role may send its segments (X-Ray takes only Resource "*").
    const xrayWriters = Object.values(template.findResources("AWS::IAM::Policy")).filter((policy) =>
      JSON.stringify(
        (policy as { Properties: { PolicyDocument: unknown } }).Properties.PolicyDocument,
      ).includes("xray:PutTraceSegments"),
    );
    expect(xrayWriters.length).toBeGreaterThanOrEqual(ebb.functions.size + 1);
    template.hasResourceProperties("AWS::IAM::Policy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: ["xray:PutTraceSegments", "xray:PutTelemetryRecords"],
            Resource: "*",
          }),
        ]),
      },
    });
  });

  it("traces nothing with tracing off, and tells Powertools Tracer so", () => {
    const { template } = synth({ tracing: false });
    for (const fn of Object.values(template.findResources("AWS::Lambda::Function")).filter((fn) =>
      JSON.stringify(fn).includes("ebb:entry"),
    ) as {
      Properties: { TracingConfig?: unknown; Environment?: { Variables?: Record<string, unknown> } };
    }[]) {
      expect(fn.Properties.TracingConfig).toBeUndefined();
      expect(fn.Properties.Environment?.Variables?.["POWERTOOLS_TRACE_ENABLED"]).toBe("false");
    }
    template.hasResourceProperties("AWS::StepFunctions::StateMachine", {
      TracingConfiguration: { Enabled: false },
    });
    const statements = Object.values(template.findResources("AWS::IAM::Policy")).map(
      (policy) => (policy as { Properties: { PolicyDocument: unknown } }).Properties.PolicyDocument,
    );
    expect(JSON.stringify(statements)).not.toContain("xray:");
  });
});
