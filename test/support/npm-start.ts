import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { nodeScript } from "../../infra/local/stand-in-process.ts";

/** `npm start` (infra/local/start.ts) as a user runs it, in a process of its own, and its banner. */

const START = fileURLToPath(new URL("../../infra/local/start.ts", import.meta.url));

export interface Banner {
  readonly exports: Record<string, string>;
  readonly credentials: { accessKeyId: string; secretAccessKey: string };
  /** The API's bearer token, read from the file the banner names. */
  readonly token: string;
  /** Every line before the exports. */
  readonly lines: readonly string[];
}

export interface StartedRuntime {
  readonly child: ChildProcess;
  readonly banner: Banner;
}

/** Starts the runtime with `args` and waits for its banner. */
export async function startRuntime(args: readonly string[]): Promise<StartedRuntime> {
  const [command, nodeArgs] = nodeScript(START, args);
  const child = spawn(command, nodeArgs, { stdio: ["ignore", "pipe", "inherit"] });
  return { child, banner: await readBanner(child) };
}

/** Stops the runtime with Ctrl-C and waits until it has exited. */
export async function stopRuntime(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGINT");
  await exited;
}

/** Reads the start banner up to "Ctrl-C to stop.", and the secrets from the files it names. */
async function readBanner(started: ChildProcess): Promise<Banner> {
  const exports: Record<string, string> = {};
  const before: string[] = [];
  const lines = createInterface({ input: started.stdout! });
  const exited = new Promise<never>((_, reject) =>
    started.once("exit", (code) => reject(new Error(`npm start exited with ${code} before its banner`))),
  );
  const read = (async () => {
    for await (const line of lines) {
      const match = /^export (\w+)=(.*)$/.exec(line);
      if (match) exports[match[1]!] = match[2]!;
      else if (Object.keys(exports).length === 0) before.push(line);
      if (line === "Ctrl-C to stop.") return;
    }
  })();
  await Promise.race([read, exited]);
  lines.close();
  started.stdout!.resume();
  const fileOf = (name: string) => {
    const file = /^\$\(cat '(.+)'\)$/.exec(exports[name] ?? "")?.[1];
    if (!file) throw new Error(`the banner exports no file for ${name}: ${JSON.stringify(exports)}`);
    return readFileSync(file, "utf8").trim();
  };
  return {
    exports,
    credentials: {
      accessKeyId: exports["AWS_ACCESS_KEY_ID"]!,
      secretAccessKey: fileOf("AWS_SECRET_ACCESS_KEY"),
    },
    token: fileOf("EBB_TOKEN"),
    lines: before,
  };
}
