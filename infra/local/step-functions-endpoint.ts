import http from "node:http";
import type { AddressInfo } from "node:net";
import { LOOPBACK } from "./loopback-port.ts";
import type { LocalStepFunctions } from "./local-step-functions.ts";
import { verifySigV4, type SigV4Credentials } from "./sigv4-verifier.ts";

/**
 * The Step Functions API on loopback (the AWS JSON 1.0 protocol: `POST /` with
 * `X-Amz-Target: AWSStepFunctions.<Operation>`), so the handlers' SDK calls — StartExecution,
 * StopExecution, DescribeExecution — are the same calls they make on AWS, pointed here by
 * `AWS_ENDPOINT_URL_SFN`. As on AWS, a request not signed (Signature Version 4) with the runtime's
 * credentials is refused with 403.
 */
export async function serveStepFunctions(
  machine: LocalStepFunctions,
  credentials: SigV4Credentials,
): Promise<{ endpoint: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const answer = (status: number, body: unknown) => {
        response.writeHead(status, { "content-type": "application/x-amz-json-1.0" });
        response.end(JSON.stringify(body));
      };
      const body = Buffer.concat(chunks);
      const verdict = verifySigV4(
        { method: request.method ?? "POST", url: request.url ?? "/", headers: request.headers, body },
        credentials,
        "states",
      );
      if (!verdict.ok) return answer(403, { __type: verdict.code, message: verdict.message });
      try {
        const operation = String(request.headers["x-amz-target"] ?? "").replace(/^AWSStepFunctions\./, "");
        const input = JSON.parse(body.toString("utf8") || "{}") as Record<string, unknown>;
        answer(200, operate(machine, operation, input));
      } catch (error) {
        const { name, message } = error as Error;
        answer(400, { __type: name, message });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, LOOPBACK, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${LOOPBACK}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const seconds = (date: Date | undefined) => (date === undefined ? undefined : date.getTime() / 1000);

function operate(machine: LocalStepFunctions, operation: string, input: Record<string, unknown>): unknown {
  switch (operation) {
    case "StartExecution": {
      if (input["stateMachineArn"] !== machine.stateMachineArn)
        throw named("StateMachineDoesNotExist", `no state machine ${String(input["stateMachineArn"])}`);
      const started = machine.start(String(input["name"]), JSON.parse(String(input["input"] ?? "{}")));
      return { executionArn: started.executionArn, startDate: seconds(started.startDate) };
    }
    case "StopExecution":
      return { stopDate: seconds(machine.stop(String(input["executionArn"]))) };
    case "DescribeExecution": {
      const execution = machine.describe(String(input["executionArn"]));
      return {
        ...execution,
        startDate: seconds(execution.startDate),
        stopDate: seconds(execution.stopDate),
        output: execution.output === undefined ? undefined : JSON.stringify(execution.output),
      };
    }
    default:
      throw named(
        "UnknownOperationException",
        `the local Step Functions serves StartExecution, StopExecution and DescribeExecution, not ${operation}`,
      );
  }
}

function named(name: string, message: string): Error {
  return Object.assign(new Error(message), { name });
}
