import { startEmbeddedAws } from "../../infra/local/embedded-aws.ts";

/**
 * A process that owns embedded stand-ins and then waits to be killed: the victim of the test that
 * SIGKILLs an owner and checks nothing it started survives. Prints `{"pids":[…],"s3Directory":"…"}`.
 */
const aws = await startEmbeddedAws({ dataDir: "memory" });
console.log(JSON.stringify({ pids: aws.pids, s3Directory: aws.s3Directory }));
setInterval(() => undefined, 60_000);
