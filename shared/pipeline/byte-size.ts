/**
 * Sizes as users write them: Spark's byte strings (`maxBytesPerTrigger: "10g"`, `512m`) and DuckDB's
 * (`1GB`, `512 MiB`), or a number of bytes. Units are powers of 1,024, as in both.
 */

const UNIT_BYTES: Readonly<Record<string, number>> = {
  b: 1,
  k: 1024,
  m: 1024 ** 2,
  g: 1024 ** 3,
  t: 1024 ** 4,
};

const SIZE = /^\s*(\d+(?:\.\d+)?)\s*([bkmgt])?(?:i?b)?\s*$/i;

/** Bytes of `10g`, `128MB`, `1.5 GiB`, `4096`; undefined when the text is not a size. */
export function parseByteSize(text: string): number | undefined {
  const match = SIZE.exec(text);
  if (!match) return undefined;
  const unit = UNIT_BYTES[(match[2] ?? "b").toLowerCase()]!;
  return Math.floor(Number(match[1]) * unit);
}

const UNITS = ["B", "KB", "MB", "GB", "TB"] as const;

/** `265 MB` (powers of 1,024), for messages. */
export function describeBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${Number(value.toFixed(digits))} ${UNITS[unit]}`;
}
