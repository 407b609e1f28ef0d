import { randomBytes } from "node:crypto";

/**
 * Time-ordered ids (for updates and events): 10 characters of the epoch milliseconds and 16 random
 * characters, both in Crockford's base32 (ULID's layout). Ids sort by creation time as plain strings,
 * so a DynamoDB sort key on them lists oldest or newest first, and the time can be read back out.
 */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;
const ID_PATTERN = new RegExp(`^[${ALPHABET}]{${TIME_CHARS + RANDOM_CHARS}}$`);
/** The largest time 10 base32 characters hold (the year 10889). */
const MAX_TIME = 2 ** 48 - 1;

/** Random bytes; injectable for tests. */
export type RandomSource = (count: number) => Uint8Array;

/** A new id for `timeMs`. */
export function timeOrderedId(timeMs: number, random: RandomSource = randomBytes): string {
  return (
    encodeTime(timeMs) +
    freshRandomDigits(random)
      .map((d) => ALPHABET[d])
      .join("")
  );
}

/**
 * Ids that also keep the order in which they were made within one millisecond (ULID's monotonic
 * mode): the second id of a millisecond is the first plus one in its random part. Events appended in
 * one millisecond therefore read back in the order they were appended.
 */
export class TimeOrderedIds {
  private lastTime = -1;
  private lastDigits: number[] = [];

  constructor(private readonly random: RandomSource = randomBytes) {}

  next(timeMs: number): string {
    const time = encodeTime(timeMs);
    this.lastDigits = timeMs === this.lastTime ? increment(this.lastDigits) : freshRandomDigits(this.random);
    this.lastTime = timeMs;
    return time + this.lastDigits.map((d) => ALPHABET[d]).join("");
  }
}

export function isTimeOrderedId(id: string): boolean {
  return ID_PATTERN.test(id);
}

/** The epoch milliseconds an id was made for, or undefined if it is not a time-ordered id. */
export function timeOfId(id: string): number | undefined {
  if (!isTimeOrderedId(id)) return undefined;
  let time = 0;
  for (const char of id.slice(0, TIME_CHARS)) time = time * 32 + ALPHABET.indexOf(char);
  return time;
}

function encodeTime(timeMs: number): string {
  if (!Number.isInteger(timeMs) || timeMs < 0 || timeMs > MAX_TIME) {
    throw new RangeError(`time ${timeMs} cannot be encoded`);
  }
  let time = "";
  for (let rest = timeMs, i = 0; i < TIME_CHARS; i++, rest = Math.floor(rest / 32))
    time = ALPHABET[rest % 32] + time;
  return time;
}

/**
 * 16 random base32 digits. The first is kept below 16, which leaves 2^75 increments of headroom, so
 * `increment` can never overflow within a millisecond.
 */
function freshRandomDigits(random: RandomSource): number[] {
  const bytes = random(RANDOM_CHARS);
  return Array.from({ length: RANDOM_CHARS }, (_, i) => (bytes[i] ?? 0) % (i === 0 ? 16 : 32));
}

function increment(digits: readonly number[]): number[] {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    const digit = (next[i] ?? 0) + 1;
    next[i] = digit % 32;
    if (digit < 32) break;
  }
  return next;
}
