import { open } from "node:fs/promises";

/**
 * Counting a JSON or CSV file's records: its lines holding anything but whitespace. Newlines are
 * found natively (`indexOf`); only the end of each line is looked at, back to its last
 * non-whitespace byte, so no strings are made. A file on disk is read through a buffer of its own
 * size at most, never whole: a 1 GB file takes no more memory than a 1 MB one.
 */

const NEWLINE = 0x0a;

/** Bytes read at a time from a file being counted. */
const READ_BYTES = 1024 * 1024;

/** Buffers of READ_BYTES kept for the next file (files are counted a few at a time). */
const SPARE_BUFFERS: Buffer[] = [];

/** Non-blank lines fed in pieces: a line may span two pieces. */
export class LineCounter {
  #lines = 0;
  /** The line being read has held something but whitespace so far. */
  #open = false;

  add(bytes: Uint8Array): void {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let lineStart = 0;
    for (;;) {
      const newline = buffer.indexOf(NEWLINE, lineStart);
      const lineEnd = newline === -1 ? buffer.length : newline;
      if (!this.#open) this.#open = holdsContent(buffer, lineStart, lineEnd);
      if (newline === -1) return;
      if (this.#open) this.#lines += 1;
      this.#open = false;
      lineStart = newline + 1;
    }
  }

  get lines(): number {
    return this.#lines + (this.#open ? 1 : 0);
  }
}

function holdsContent(buffer: Buffer, start: number, end: number): boolean {
  for (let i = end - 1; i >= start; i--) if (!isWhitespace(buffer[i]!)) return true;
  return false;
}

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0d;
}

/** Lines of `bytes` holding anything but whitespace. */
export function countNonBlankLines(bytes: Uint8Array): number {
  const counter = new LineCounter();
  counter.add(bytes);
  return counter.lines;
}

/** Lines of the file at `file` holding anything but whitespace, read a piece at a time. */
export async function countFileNonBlankLines(file: string): Promise<number> {
  const buffer = SPARE_BUFFERS.pop() ?? Buffer.allocUnsafe(READ_BYTES);
  const handle = await open(file, "r");
  try {
    const counter = new LineCounter();
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return counter.lines;
      counter.add(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
    SPARE_BUFFERS.push(buffer);
  }
}
