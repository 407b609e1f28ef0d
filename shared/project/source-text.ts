import { PROJECT_ISSUE_CODES, type ProjectIssue, type ProjectLocation } from "./errors.ts";

/**
 * One SQL file of a project with its `${name}` references replaced by the spec's `configuration`
 * values (as SDP substitutes them before parsing), keeping the way back from any offset in the
 * substituted text to the line and column the user wrote, so every later message points into the file.
 */
export interface SourceText {
  readonly file: string;
  /** The text after substitution; every offset the parser reports is into this. */
  readonly text: string;
  /** The file's line and column (1-based) of an offset into `text`. */
  locate(offset: number): ProjectLocation;
}

/** `${name}`: letters, digits, `.`, `_` and `-`, as SDP's configuration keys have them. */
const VARIABLE = /\$\{([A-Za-z0-9_.-]+)\}/g;

interface Splice {
  /** Where the replacement starts in the substituted text, and where the reference was in the file. */
  readonly at: number;
  readonly original: number;
  readonly replacedLength: number;
  readonly insertedLength: number;
}

export function substituteVariables(
  file: string,
  original: string,
  configuration: Readonly<Record<string, string>>,
): { source: SourceText; issues: ProjectIssue[] } {
  const issues: ProjectIssue[] = [];
  const splices: Splice[] = [];
  const lineStarts = lineStartsOf(original);
  const originalLocation = (offset: number): ProjectLocation => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (lineStarts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return { file, line: low + 1, column: offset - lineStarts[low]! + 1 };
  };
  let shift = 0;
  const text = original.replace(VARIABLE, (match: string, name: string, offset: number) => {
    const value = configuration[name];
    if (value === undefined) {
      issues.push({
        ...originalLocation(offset),
        code: PROJECT_ISSUE_CODES.unknownVariable,
        message: `\${${name}} is not set: add ${name} to the spec's configuration`,
      });
      return match;
    }
    splices.push({
      at: offset + shift,
      original: offset,
      replacedLength: match.length,
      insertedLength: value.length,
    });
    shift += value.length - match.length;
    return value;
  });
  const locate = (offset: number): ProjectLocation => {
    // Offsets inside a value point at its `${`; after it, the file's text resumes.
    let back = 0;
    for (const splice of splices) {
      if (offset < splice.at) break;
      if (offset < splice.at + splice.insertedLength) return originalLocation(splice.original);
      back += splice.insertedLength - splice.replacedLength;
    }
    return originalLocation(offset - back);
  };
  return { source: { file, text, locate }, issues };
}

function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  return starts;
}
