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

/** A new id for `timeMs`; `random` is injectable for tests (16 values in 0..31 are used). */
export function timeOrderedId(timeMs: number, random: (count: number) => Uint8Array = randomBytes): string {
  if (!Number.isInteger(timeMs) || timeMs < 0 || timeMs > MAX_TIME)
    throw new RangeError(`time ${timeMs} cannot be encoded`);
  let time = "";
  for (let rest = timeMs, i = 0; i < TIME_CHARS; i++, rest = Math.floor(rest / 32))
    time = ALPHABET[rest % 32] + time;
  const bytes = random(RANDOM_CHARS);
  let tail = "";
  for (let i = 0; i < RANDOM_CHARS; i++) tail += ALPHABET[(bytes[i] ?? 0) % 32];
  return time + tail;
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
