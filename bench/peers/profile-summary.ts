import { readFileSync } from "node:fs";

/**
 * `tsx bench/peers/profile-summary.ts <file.cpuprofile> [top]`: a V8 CPU profile's functions by self
 * time and by total time (a function counted once per sample however deep it recurses), in ms.
 */
interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const profile = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as Profile;
const top = Number(process.argv[3] ?? "40");
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const name = (node: ProfileNode) =>
  `${node.callFrame.functionName || "(anonymous)"} ${node.callFrame.url.split("/").slice(-2).join("/")}:${node.callFrame.lineNumber}`;
const sampled = new Map<number, number>();
profile.samples.forEach((id, i) => sampled.set(id, (sampled.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const self = new Map<string, number>();
const total = new Map<string, number>();
for (const [id, micros] of sampled) {
  const node = byId.get(id)!;
  self.set(name(node), (self.get(name(node)) ?? 0) + micros);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const key = name(byId.get(at)!);
    if (seen.has(key)) continue;
    seen.add(key);
    total.set(key, (total.get(key) ?? 0) + micros);
  }
}
const print = (title: string, times: Map<string, number>) => {
  console.log(title);
  for (const [key, micros] of [...times].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${(micros / 1000).toFixed(1).padStart(9)} ms  ${key}`);
};
print("self time", self);
print("total time", total);
