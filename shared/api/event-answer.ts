import type { PipelineEvent } from "../store/event-log-repository.ts";

/**
 * An event as the API answers it. The event log keeps an exception's JavaScript stack as text; the
 * Databricks shape (`SerializedException.stack`) is a list of `StackFrame`s, which the SDKs parse
 * field by field (the Python SDK fails on a string), so the answer carries the frames.
 */

/** Databricks' `StackFrame`. */
export interface StackFrame {
  readonly declaring_class: string;
  readonly method_name: string;
  readonly file_name: string;
  readonly line_number: number;
}

export function eventAnswer(event: PipelineEvent) {
  const { error, ...rest } = event;
  if (!error) return rest;
  const exceptions = error.exceptions.map(({ stack, ...exception }) => ({
    ...exception,
    ...(stack === undefined ? {} : { stack: stackFrames(stack) }),
  }));
  return { ...rest, error: { ...error, exceptions } };
}

/** V8's `    at Class.method (file:line:column)` and `    at file:line:column` lines, as frames. */
export function stackFrames(stack: string): StackFrame[] {
  const frames: StackFrame[] = [];
  for (const line of stack.split("\n")) {
    const at = /^\s+at (?:(.+?) \((.+?):(\d+):\d+\)|(.+?):(\d+):\d+)$/.exec(line);
    if (!at) continue;
    const callee = (at[1] ?? "").replace(/^async /, "");
    const dot = callee.lastIndexOf(".");
    frames.push({
      declaring_class: dot > 0 ? callee.slice(0, dot) : "",
      method_name: dot > 0 ? callee.slice(dot + 1) : callee,
      file_name: at[2] ?? at[4] ?? "",
      line_number: Number(at[3] ?? at[5]),
    });
  }
  return frames;
}
