import { describe, expect, it } from "vitest";
import { UiSessions } from "../../../infra/local/ui-sessions.ts";

describe("the local API's token check", () => {
  const token = "a".repeat(32);
  const sessions = new UiSessions(token);

  it("refuses a token of the right length with a non-ASCII character (no throw, so 401 not 500)", () => {
    for (const given of [`${"a".repeat(31)}é`, `${"a".repeat(31)}\u{1F600}`.slice(0, 32), "ä".repeat(32)]) {
      expect(given.length).toBe(32);
      expect(sessions.authorized({ authorization: `Bearer ${given}` })).toBe(false);
      expect(sessions.open(given)).toBeUndefined();
    }
  });

  it("accepts the token", () => {
    expect(sessions.authorized({ authorization: `Bearer ${token}` })).toBe(true);
  });
});
