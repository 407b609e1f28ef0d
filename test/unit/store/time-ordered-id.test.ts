import { describe, expect, it } from "vitest";
import {
  TimeOrderedIds,
  isTimeOrderedId,
  timeOfId,
  timeOrderedId,
} from "../../../shared/store/time-ordered-id.ts";

const fixedRandom = (value: number) => (count: number) => new Uint8Array(count).fill(value);

describe("timeOrderedId", () => {
  it("encodes the time in 10 base32 characters and reads it back", () => {
    const id = timeOrderedId(1_469_918_176_385, fixedRandom(0));
    expect(id).toBe("01ARYZ6S410000000000000000");
    expect(timeOfId(id)).toBe(1_469_918_176_385);
    expect(isTimeOrderedId(id)).toBe(true);
  });

  it("sorts as strings in time order, whatever the random part", () => {
    const times = [0, 1, 31, 32, 1_000, 1_700_000_000_000, 1_700_000_000_001, 2 ** 48 - 1];
    const ids = times.map((time, i) => timeOrderedId(time, fixedRandom(31 - i)));
    expect([...ids].sort()).toEqual(ids);
    expect(ids.map(timeOfId)).toEqual(times);
  });

  it("draws the random part from the generator", () => {
    expect(timeOrderedId(0, fixedRandom(31)).slice(10)).toBe("FZZZZZZZZZZZZZZZ");
    expect(timeOrderedId(5)).not.toBe(timeOrderedId(5));
  });

  it("refuses times it cannot encode and strings that are not ids", () => {
    expect(() => timeOrderedId(-1)).toThrow(RangeError);
    expect(() => timeOrderedId(2 ** 48)).toThrow(RangeError);
    expect(() => timeOrderedId(1.5)).toThrow(RangeError);
    expect(timeOfId("01ARYZ6S41000000000000000")).toBeUndefined();
    expect(timeOfId("01ARYZ6S41000000000000000U")).toBeUndefined();
    expect(timeOfId("01aryz6s410000000000000000")).toBeUndefined();
  });
});

describe("TimeOrderedIds", () => {
  it("keeps the order ids were made in within one millisecond, carrying across digits", () => {
    const ids = new TimeOrderedIds(fixedRandom(31));
    const made = [ids.next(1000), ids.next(1000), ids.next(1000)];
    expect(made.map((id) => id.slice(10))).toEqual([
      "FZZZZZZZZZZZZZZZ",
      "G000000000000000",
      "G000000000000001",
    ]);
    expect(made.map(timeOfId)).toEqual([1000, 1000, 1000]);
  });

  it("draws a fresh random part for a new millisecond, even an earlier one", () => {
    const ids = new TimeOrderedIds(fixedRandom(3));
    ids.next(1000);
    ids.next(1000);
    expect(ids.next(1001).slice(10)).toBe("3333333333333333");
    expect(ids.next(999).slice(10)).toBe("3333333333333333");
    expect(timeOfId(ids.next(999))).toBe(999);
  });

  it("sorts a burst of ids in the order they were made", () => {
    const ids = new TimeOrderedIds();
    const made = Array.from({ length: 200 }, (_, i) => ids.next(5_000 + Math.floor(i / 50)));
    expect([...made].sort()).toEqual(made);
  });
});
