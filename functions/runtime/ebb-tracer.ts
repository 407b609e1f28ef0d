import { Tracer } from "@aws-lambda-powertools/tracer";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";

/**
 * Ebb's one tracer (Powertools Tracer, AWS X-Ray): each handler's invocation a segment (the middy
 * middleware in api-route.ts and task-handler.ts) and each AWS SDK call a subsegment (`traced`). It
 * traces only on Lambda with active tracing (the construct turns it on); on the local runtime, which
 * is not Lambda, every call below is a no-op. `POWERTOOLS_TRACE_ENABLED=false` turns it off.
 */
export const tracer = new Tracer({ serviceName: "ebb" });

/** An AWS SDK v3 client whose calls show in the trace. */
export function traced<Client>(client: Client): Client {
  return tracer.captureAWSv3Client(client);
}

/**
 * The middy middleware that makes each invocation a traced segment. Responses are not recorded: an
 * answer may hold a table's rows, and a trace, like the log, holds none.
 */
export function traceHandler() {
  return captureLambdaHandler(tracer, { captureResponse: false });
}
