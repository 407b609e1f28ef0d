import { describe, expect, it } from "vitest";
import { describeBytes } from "../../../shared/pipeline/byte-size.ts";
import { diskFailureOf, isDiskFull } from "../../../shared/engine/temp-space.ts";

describe("telling a full disk from a spill over its limit", () => {
  it("reads DuckDB's spill refusal by what it had spilled", () => {
    const refusal = (used: string, limit: string) =>
      `Out of Memory Error: failed to offload data block of size 256.0 KiB (${used}/${limit} used).\nThis limit was set by the 'max_temp_directory_size' setting.`;
    expect(diskFailureOf(refusal("38.1 MiB", "38.1 MiB"))).toBe("spill-limit");
    expect(diskFailureOf(refusal("243.9 MiB", "244.1 MiB"))).toBe("spill-limit");
    // The case: 4 MB spilled, the disk full of the batch's own files.
    expect(diskFailureOf(refusal("4.0 MiB", "244.1 MiB"))).toBe("disk-full");
    expect(diskFailureOf(refusal("1.0 GiB", "2.0 GiB"))).toBe("disk-full");
  });

  it("reads ENOSPC and DuckDB's write failures as a full disk, anything else as neither", () => {
    expect(
      diskFailureOf('IO Error: Could not write file "/tmp/x/out.parquet": No space left on device'),
    ).toBe("disk-full");
    expect(diskFailureOf("ENOSPC: no space left on device, write", "ENOSPC")).toBe("disk-full");
    expect(
      diskFailureOf("Out of Memory Error: failed to pin block of size 256.0 KiB (60.9 MiB/61.0 MiB used)"),
    ).toBe(undefined);
    expect(diskFailureOf("Binder Error: column x not found")).toBe(undefined);
    const wrapped = new Error("writing failed", {
      cause: Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" }),
    });
    expect(isDiskFull(wrapped)).toBe(true);
  });

  it("describes sizes as DuckDB does", () => {
    expect(describeBytes(512)).toBe("512 B");
    expect(describeBytes(1536)).toBe("1.5 KB");
    expect(describeBytes(30 * 1024 * 1024)).toBe("30 MB");
  });
});
