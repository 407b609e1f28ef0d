import { describe, expect, it } from "vitest";
import { UnsupportedFeatureError } from "../../../shared/delta/errors.ts";
import { assertReadable } from "../../../shared/delta/table/reader-features.ts";
import { metaData } from "./table-fixture.ts";

const metadata = (configuration: Record<string, string>) => {
  const action = metaData({ configuration });
  if (!("metaData" in action)) throw new Error("fixture");
  return action.metaData;
};

describe("reader protocol check", () => {
  it("reads version 1, version 2 without column mapping, and version 3 with supported features", () => {
    expect(() => assertReadable({ minReaderVersion: 1, minWriterVersion: 2 })).not.toThrow();
    expect(() => assertReadable({ minReaderVersion: 2, minWriterVersion: 5 }, metadata({}))).not.toThrow();
    expect(() =>
      assertReadable({
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ["timestampNtz"],
        writerFeatures: [],
      }),
    ).not.toThrow();
  });

  it("refuses by name what it does not implement", () => {
    const refuse = (protocol: Parameters<typeof assertReadable>[0], feature: RegExp, config = {}) => {
      expect(() => assertReadable(protocol, metadata(config))).toThrow(UnsupportedFeatureError);
      expect(() => assertReadable(protocol, metadata(config))).toThrow(feature);
    };
    refuse({ minReaderVersion: 99, minWriterVersion: 7 }, /readerVersion 99/);
    refuse({ minReaderVersion: 2, minWriterVersion: 5 }, /columnMapping/, {
      "delta.columnMapping.mode": "name",
    });
    refuse(
      { minReaderVersion: 3, minWriterVersion: 7, readerFeatures: ["deletionVectors"] },
      /deletionVectors/,
    );
    refuse({ minReaderVersion: 3, minWriterVersion: 7, readerFeatures: ["columnMapping"] }, /columnMapping/);
    refuse(
      { minReaderVersion: 3, minWriterVersion: 7, readerFeatures: ["someFutureFeature"] },
      /someFutureFeature/,
    );
  });
});
