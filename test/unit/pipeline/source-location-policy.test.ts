import { describe, expect, it } from "vitest";
import { checkSourceLocation } from "../../../shared/pipeline/source-location-policy.ts";

describe("checkSourceLocation", () => {
  const roots = ["/data/landing"];
  const code = (location: string, localRoots = roots) => {
    try {
      checkSourceLocation(location, localRoots);
      return "ok";
    } catch (error) {
      return (error as { errorCode: string }).errorCode;
    }
  };

  it("accepts a root and folders below it, segment by segment", () => {
    expect(code("/data/landing")).toBe("ok");
    expect(code("/data/landing/")).toBe("ok");
    expect(code("/data/landing/orders/2026")).toBe("ok");
    expect(code("/data/landing2")).toBe("LOCAL_PATH_NOT_ALLOWED");
    expect(code("/data")).toBe("LOCAL_PATH_NOT_ALLOWED");
    expect(code("/data/landing/../secrets")).toBe("LOCAL_PATH_NOT_ALLOWED");
    expect(code("/etc")).toBe("LOCAL_PATH_NOT_ALLOWED");
  });

  it("on AWS (no roots) refuses every local path and accepts S3", () => {
    expect(code("/data/landing", [])).toBe("S3_LOCATION_REQUIRED");
    expect(code("s3://bucket/prefix/", [])).toBe("ok");
  });

  it("refuses control characters anywhere, first", () => {
    expect(code("/data/landing/a\u0000")).toBe("PATH_CONTROL_CHARACTER");
    expect(code("s3://bucket/a\u007f", [])).toBe("PATH_CONTROL_CHARACTER");
    expect(code("/etc\n", [])).toBe("PATH_CONTROL_CHARACTER");
  });
});
