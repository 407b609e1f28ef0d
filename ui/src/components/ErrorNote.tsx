import { EbbApiError } from "../api/client.ts";

/** An API refusal as the user reads it: the message first, the error code beside it for searching. */
export function ErrorNote({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const code = error instanceof EbbApiError ? error.errorCode : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="note note-bad" role="alert">
      {title && <strong>{title} </strong>}
      {message}
      {code && <code className="error-code">{code}</code>}
    </div>
  );
}
