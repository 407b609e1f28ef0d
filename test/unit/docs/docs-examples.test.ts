/**
 * The README and docs/ stay true to what Ebb serves: every `ebb …` example names a command and flags
 * that `ebb <command> --help` lists, every HTTP example names a route (and query parameters) of the
 * OpenAPI document Ebb serves, and every curl body is one the route accepts; every relative link
 * resolves inside the clone (anchors included); the README's test commands are exactly the ones CI
 * runs (.ci/run); and each row of the indexes (docs/errors.md, docs/environment.md) links to pages
 * that name it.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { openApiDocument } from "../../../shared/api/openapi-document.ts";
import { ROUTES, type RouteContract } from "../../../shared/api/route-contracts.ts";
import { runCli } from "../../../shared/cli/main.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
/** Every TypeScript file under `folders`, relative to the root. */
const sourceFiles = (folders: readonly string[]): string[] =>
  folders.flatMap((folder) =>
    readdirSync(path.join(root, folder), { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".ts") && !name.includes("node_modules"))
      .map((name) => `${folder}/${name}`),
  );

/** The documents: the README and every page of docs/. */
const DOCS = ["README.md", ...readdirSync(path.join(root, "docs")).map((name) => `docs/${name}`)].filter(
  (file) => file.endsWith(".md"),
);

/** Shell code of a document: its fenced `sh` blocks (continuation lines joined) and inline code spans. */
function codeOf(doc: string): { shell: string[]; inline: string[] } {
  const shell = [...doc.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)].flatMap((block) =>
    commandLines(block[1]!.replace(/\\\n\s*/g, " ")),
  );
  const prose = doc.replace(/```[\s\S]*?```/g, "");
  const inline = [...prose.matchAll(/`([^`]+)`/g)].map((span) => span[1]!.replace(/\s*\n\s*/g, " "));
  return { shell, inline };
}

/** Lines of shell code, a line that opens a single-quoted string joined with the lines up to its end. */
function commandLines(code: string): string[] {
  const lines: string[] = [];
  let open = "";
  for (const line of code.split("\n")) {
    open = open === "" ? line : `${open} ${line.trim()}`;
    if ((open.match(/'/g) ?? []).length % 2 === 0) {
      lines.push(open);
      open = "";
    }
  }
  return open === "" ? lines : [...lines, open];
}

/** Each `ebb …` command line in `code`: the words after `ebb`, up to a pipe, comment or `)`. */
function ebbCommands(code: string): string[] {
  return [...code.matchAll(/(?:^|[\s($])(?:npx )?ebb((?: +[^\s#;)&|]+| +\|(?= ?\w))*)/g)]
    .map((match) => match[1]!.trim())
    .filter((words) => words.length > 0);
}

/** Words of a command line; a quoted argument, a placeholder or an ellipsis is one `ARG`. */
function words(line: string): string[] {
  return line
    .replace(/"[^"]*"|'[^']*'/g, " ARG ")
    .replace(/<[^>]*>|\[[^\]]*\]/g, " ARG ")
    .split(/\s+/)
    .filter((word) => word !== "" && word !== "|" && word !== "…");
}

interface Help {
  readonly commands: ReadonlySet<string>;
  readonly options: ReadonlySet<string>;
  /** The options that take a value (`--endpoint <url>`): the word after one is not a command. */
  readonly valued: ReadonlySet<string>;
}

const helps = new Map<string, Promise<Help>>();

/** `ebb <path> --help`, parsed: its subcommands and its options. */
function help(commandPath: readonly string[]): Promise<Help> {
  const key = commandPath.join(" ");
  let known = helps.get(key);
  if (!known) {
    known = (async () => {
      let text = "";
      const io = { out: (t: string) => void (text += t), err: (t: string) => void (text += t) };
      await runCli([...commandPath, "--help"], io);
      const sections = new Map<string, string>();
      for (const match of text.matchAll(/\n(\w+):\n([\s\S]*?)(?=\n\w+:\n|$)/g))
        sections.set(match[1]!, match[2]!);
      const commands = new Set(
        [...(sections.get("Commands") ?? "").matchAll(/^ {2}([\w-]+)/gm)].map((m) => m[1]!),
      );
      const options = new Set([...(sections.get("Options") ?? "").matchAll(/--[\w-]+/g)].map((m) => m[0]));
      const valued = new Set(
        [...(sections.get("Options") ?? "").matchAll(/(--[\w-]+) </g)].map((m) => m[1]!),
      );
      return { commands, options, valued };
    })();
    helps.set(key, known);
  }
  return known;
}

/** What is wrong with an `ebb` command line, checked against the CLI's own help; undefined if nothing. */
async function cliProblem(line: string): Promise<string | undefined> {
  const global = await help([]);
  const commandPath: string[] = [];
  let current = global;
  let skipValue = false;
  for (const word of words(line)) {
    if (skipValue) {
      skipValue = false;
      continue;
    }
    if (word.startsWith("-")) {
      const flag = word.replace(/=.*$/, "");
      if (!current.options.has(flag) && !global.options.has(flag))
        return `ebb ${commandPath.join(" ")} has no option ${flag}`;
      skipValue = !word.includes("=") && (current.valued.has(flag) || global.valued.has(flag));
      continue;
    }
    // `scan|history|changes`: alternatives, each a subcommand of the same command.
    const alternatives = word.split("|");
    if (alternatives.every((name) => current.commands.has(name))) {
      commandPath.push(alternatives[0]!);
      current = await help(commandPath);
    } else if (commandPath.length === 0) {
      return `ebb has no command ${word}`;
    } else if (current.commands.size > 0 && commandPath.length === 1 && !/^[A-Z$]/.test(word)) {
      // A command with subcommands takes a subcommand first (`ebb pipelines create`, `ebb table scan`).
      if (!current.commands.has(word)) return `ebb ${commandPath.join(" ")} has no command ${word}`;
    }
  }
  return undefined;
}

type Method = RouteContract["method"];

/** An HTTP example: method, path (query string included) and, for curl, its body. */
interface HttpExample {
  readonly method: Method;
  readonly target: string;
  readonly body?: string;
}

function httpExamples(doc: string): HttpExample[] {
  const { shell, inline } = codeOf(doc);
  const examples: HttpExample[] = [];
  for (const line of shell.filter((l) => /\bcurl\b/.test(l))) {
    const url = /\$EBB_ENDPOINT(\/[^"'\s]*)/.exec(line)?.[1];
    if (!url) continue;
    const body = /-d '([^']*)'/.exec(line)?.[1];
    const method = (/-X (\w+)/.exec(line)?.[1] ?? (body ? "POST" : "GET")) as Method;
    examples.push({ method, target: url, ...(body === undefined ? {} : { body }) });
  }
  for (const span of inline) {
    const match = /^(GET|POST|PUT|DELETE) ((?:\/api\/|…\/)\S*)/.exec(span);
    if (match) examples.push({ method: match[1] as Method, target: match[2]! });
  }
  return examples;
}

/** The document's operation an example names, or what is wrong with it. */
function routeProblem(example: HttpExample): string | undefined {
  const paths = openApiDocument()["paths"] as Record<
    string,
    Record<string, { parameters?: { name: string; in: string }[] }>
  >;
  const [pathPart, query = ""] = example.target.split("?");
  const segments = pathPart!.split("/").filter((s) => s !== "");
  const suffix = segments[0] === "…";
  const wanted = suffix ? segments.slice(1) : segments;
  const isParameter = (s: string) => /^(\{.*\}|<.*>|\$\w+|\$\{\w+\}|"\$\w+")$/.test(s);
  const matches = Object.keys(paths).filter((route) => {
    const parts = route.split("/").filter((s) => s !== "");
    const compared = suffix ? parts.slice(-wanted.length) : parts;
    if (compared.length !== wanted.length) return false;
    return compared.every(
      (part, i) => part === wanted[i] || (part.startsWith("{") && isParameter(wanted[i]!)),
    );
  });
  const operations = matches.flatMap((route) => {
    const operation = paths[route]![example.method.toLowerCase()];
    return operation ? [{ route, operation }] : [];
  });
  if (operations.length === 0) return `no ${example.method} ${example.target} in the OpenAPI document`;
  const names = query
    .split("&")
    .map((pair) => pair.split("=")[0]!)
    .filter((name) => name !== "");
  for (const name of names)
    if (
      !operations.some(({ operation }) =>
        operation.parameters?.some((p) => p.in === "query" && p.name === name),
      )
    )
      return `${example.method} ${pathPart} has no query parameter ${name}`;
  if (example.body !== undefined) {
    const contract = Object.values(ROUTES as Record<string, RouteContract>).find(
      (route) => route.method === example.method && operations.some((o) => o.route === route.path),
    )!;
    const parsed = contract.body.safeParse(JSON.parse(example.body));
    if (!parsed.success) return `${example.method} ${pathPart} refuses the body: ${parsed.error.message}`;
  }
  return undefined;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function linkProblems(file: string): string[] {
  const doc = read(file).replace(/```[\s\S]*?```/g, "");
  const problems: string[] = [];
  for (const [, target] of doc.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target!)) continue;
    const [linked = "", fragment] = target!.split("#");
    const resolved =
      linked === "" ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), linked));
    if (resolved.startsWith("..")) {
      problems.push(`${file}: ${target} leaves the clone`);
      continue;
    }
    if (!existsSync(path.join(root, resolved))) {
      problems.push(`${file}: ${target} does not exist`);
      continue;
    }
    if (fragment !== undefined && resolved.endsWith(".md")) {
      const anchors = [...read(resolved).matchAll(/^#+ (.+)$/gm)].map((m) => anchor(m[1]!));
      if (!anchors.includes(fragment)) problems.push(`${file}: ${target} names no heading of ${resolved}`);
    }
  }
  return problems;
}

describe("the README and docs/", () => {
  beforeAll(async () => {
    await help([]);
  });

  it.each(DOCS)("%s: every `ebb` example is a command and flags the CLI has", async (file) => {
    const { shell, inline } = codeOf(read(file));
    const lines = [...shell, ...inline].flatMap(ebbCommands);
    const problems = (await Promise.all(lines.map(async (line) => [line, await cliProblem(line)] as const)))
      .filter(([, problem]) => problem !== undefined)
      .map(([line, problem]) => `ebb ${line}: ${problem}`);
    expect(problems).toEqual([]);
  });

  it.each(DOCS)(
    "%s: every HTTP example is a route of the OpenAPI document, with a body it accepts",
    (file) => {
      const problems = httpExamples(read(file)).flatMap((example) => routeProblem(example) ?? []);
      expect(problems).toEqual([]);
    },
  );

  it.each(DOCS)("%s: every relative link resolves inside the clone", (file) => {
    expect(linkProblems(file)).toEqual([]);
  });

  it("the README's test commands are exactly the ones CI runs", () => {
    // A CI line's command, without what runs it in the background or notes its failure.
    const ci = read(".ci/run")
      .split("\n")
      .flatMap((line) => /^npm (test|run test:[\w-]+)/.exec(line)?.[0] ?? []);
    const readme = codeOf(read("README.md")).shell.filter((line) => /^npm (test|run test:)/.test(line));
    expect(readme).toEqual(ci);
    expect(ci.length).toBeGreaterThan(0);
  });

  it.each(["docs/errors.md", "docs/environment.md"])(
    "%s: each row's name is on every page the row links to",
    (index) => {
      const rows = [...read(index).matchAll(/^\| `([A-Z0-9_.]+)` +\|(.*)\|$/gm)];
      expect(rows.length).toBeGreaterThan(0);
      const problems = rows.flatMap(([, name, cells]) =>
        [...cells!.matchAll(/\]\(([\w-]+\.md)\)/g)]
          .filter(([, page]) => !read(`docs/${page}`).includes(name!))
          .map(([, page]) => `${name} is not on ${page}`),
      );
      expect(problems).toEqual([]);
    },
  );

  it("docs/errors.md has a row for every error code Ebb raises", () => {
    const documented = new Set(
      [...read("docs/errors.md").matchAll(/^\| `([A-Z0-9_.]+)` +\|/gm)].map((m) => m[1]),
    );
    const raised = new Set(
      sourceFiles(["shared", "functions", "infra"]).flatMap((file) =>
        [...read(file).matchAll(/errorCode(?: =|:) "([A-Z0-9_.]+)"/g)].map((m) => m[1]!),
      ),
    );
    expect(raised.size).toBeGreaterThan(50);
    expect([...raised].filter((code) => !documented.has(code)).sort()).toEqual([]);
  });

  it("catches a wrong example: an unknown command or flag, route or body field", async () => {
    expect(await cliProblem("rewind ID --point ARG --dry-run")).toBeUndefined();
    expect(await cliProblem("rewind ID --no-such-flag")).toMatch(/no option --no-such-flag/);
    expect(await cliProblem("rewinds ID")).toMatch(/no command rewinds/);
    expect(await cliProblem("pipelines destroy ID")).toMatch(/no command destroy/);
    expect(routeProblem({ method: "GET", target: "/api/2.0/pipelines/<id>/rewinds" })).toMatch(/no GET/);
    expect(routeProblem({ method: "GET", target: "/api/2.0/pipelines?max_result=2" })).toMatch(/max_result/);
    expect(
      routeProblem({ method: "POST", target: "/api/2.0/pipelines/$id/updates", body: '{"rewind_spek": {}}' }),
    ).toMatch(/refuses the body/);
  });
});
