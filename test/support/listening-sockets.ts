import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** A TCP socket in LISTEN state, as the kernel reports it in /proc/net/tcp{,6}. */
export interface ListeningSocket {
  readonly pid: number;
  /** `127.0.0.1`, `0.0.0.0`, `::`, `::ffff:127.0.0.1`, … */
  readonly address: string;
  readonly port: number;
}

/** The process and every process below it, from the parent links in /proc (Linux). */
export function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // "pid (comm) state ppid …": the command may hold spaces and parentheses, so read after the last ")".
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++)
    for (const [pid, parent] of parents) if (parent === tree[i] && !tree.includes(pid)) tree.push(pid);
  return tree;
}

/** Every TCP socket the given processes listen on. */
export function listeningSockets(pids: readonly number[]): ListeningSocket[] {
  const listening = new Map<string, { address: string; port: number }>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st … inode (the 10th field)
      if (fields[3] !== "0A" || !fields[1] || !fields[9]) continue;
      const [hexAddress = "", hexPort = ""] = fields[1].split(":");
      listening.set(fields[9], { address: decodeAddress(hexAddress), port: parseInt(hexPort, 16) });
    }
  }
  return pids.flatMap((pid) => {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      return [];
    }
    return fds.flatMap((fd) => {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return [];
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      const socket = inode === undefined ? undefined : listening.get(inode);
      return socket ? [{ pid, ...socket }] : [];
    });
  });
}

export function isLoopback(address: string): boolean {
  return address.startsWith("127.") || address === "::1" || address.startsWith("::ffff:127.");
}

/** /proc prints addresses as host-order 32-bit words in hex. */
function decodeAddress(hex: string): string {
  const words = (hex.match(/.{8}/g) ?? []).map((word) => Buffer.from(word, "hex").reverse().toString("hex"));
  if (words.length === 1) return [...Buffer.from(words[0]!, "hex")].join(".");
  const bytes = Buffer.from(words.join(""), "hex");
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes.readUInt16BE(10) === 0xffff)
    return `::ffff:${[...bytes.subarray(12)].join(".")}`;
  const groups = (bytes.toString("hex").match(/.{4}/g) ?? []).map((group) => group.replace(/^0+(?=.)/, ""));
  return groups
    .join(":")
    .replace(/(^|:)(0:)+0?(:|$)/, "::")
    .replace(/^:::/, "::");
}
