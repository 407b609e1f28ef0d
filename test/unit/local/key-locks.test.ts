import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { KeyLocks } from "../../../infra/local/key-locks.ts";

describe("KeyLocks", () => {
  it("runs the tasks on one key one at a time, in arrival order", async () => {
    const locks = new KeyLocks();
    const events: string[] = [];
    let running = 0;
    const task = (name: string, ms: number) =>
      locks.exclusive("k", async () => {
        running++;
        expect(running).toBe(1);
        events.push(`start ${name}`);
        await sleep(ms);
        events.push(`end ${name}`);
        running--;
      });
    await Promise.all([task("a", 20), task("b", 1), task("c", 5)]);
    expect(events).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
  });

  it("runs tasks on different keys side by side, and a failed task does not block the next", async () => {
    const locks = new KeyLocks();
    const events: string[] = [];
    const slow = locks.exclusive("x", async () => {
      await sleep(20);
      events.push("x");
    });
    await locks.exclusive("y", async () => {
      events.push("y");
    });
    await slow;
    expect(events).toEqual(["y", "x"]);
    await expect(locks.exclusive("x", () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await locks.exclusive("x", async () => "after")).toBe("after");
  });

  it("lets readers wait for the writes queued before them, on a key or under a prefix", async () => {
    const locks = new KeyLocks();
    let written = false;
    void locks.exclusive("bucket/t/_delta_log/1.json", async () => {
      await sleep(20);
      written = true;
    });
    await locks.settledUnder("bucket/t/");
    expect(written).toBe(true);
    await locks.settled("bucket/other"); // nothing queued: settles at once
  });
});
