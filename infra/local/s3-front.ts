import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import type S3rver from "s3rver";
import { KeyLocks } from "./key-locks.ts";
import { verifySigV4, type SigV4Credentials } from "./sigv4-verifier.ts";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Query parameters that make a PUT or DELETE act on something other than the object's bytes. */
const NOT_OBJECT_WRITE = ["acl", "tagging", "legal-hold", "retention", "partNumber", "uploadId"];

/**
 * The request handler in front of s3rver: what S3 does and s3rver does not.
 *
 * 0. Every request must be signed (Signature Version 4) with the runtime's credentials: 403 otherwise
 *    (s3rver accepts unsigned requests and never checks a V4 signature).
 * 1. Writes to one key (PutObject, CopyObject, CompleteMultipartUpload, DeleteObject) run one at a
 *    time, in arrival order; reads of the key and listings over it wait for the writes already queued,
 *    so nobody sees a half-written file.
 * 2. Inside that turn, `If-None-Match: *` and `If-Match: <etag>` are checked against the stored object:
 *    412 PreconditionFailed when they do not hold (for If-Match, also when the key is missing), and
 *    s3rver never sees the request. So of N concurrent put-if-absent writers exactly one wins.
 * 3. `Range: bytes=-N` (the last N bytes) is rewritten to `bytes=<size-N>-`: s3rver reads it as
 *    `bytes=0-N`.
 * 4. CopyObject's `x-amz-copy-source` is percent-decoded as S3 decodes it: s3rver's `decodeURI` leaves
 *    `%3D`, `%2F`, `%3A` encoded, so a copy from a key with `=` (Spark's Hive-style partition folders,
 *    which S3A renames into place) met a 404.
 * Everything else goes to s3rver unchanged. Path-style URLs only (`/<bucket>/<key>`).
 */
export function s3Front(s3rver: S3rver, credentials: SigV4Credentials): Handler {
  const forward = s3rver.callback();
  const locks = new KeyLocks();

  const pass = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    await forward(await withoutChunkSignatures(req), res);
    // Koa resolves before a streamed body is sent; the key's turn lasts until the response is out.
    if (!res.writableFinished) await finished(res).catch(() => undefined);
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const verdict = verifySigV4(
      { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers },
      credentials,
      "s3",
    );
    if (!verdict.ok) {
      req.resume();
      return sendError(res, 403, verdict.code, verdict.message);
    }
    const target = parseTarget(req.url ?? "/");
    if (!target) return pass(req, res);
    const { bucket, key, query } = target;
    if (key === undefined) {
      if (req.method === "GET") await locks.settledUnder(`${bucket}/${query.get("prefix") ?? ""}`);
      return pass(req, res);
    }
    const id = `${bucket}/${key}`;
    const copySource = req.headers["x-amz-copy-source"];
    // 4. Re-encoded so that s3rver's decodeURI gives the key S3 would (after the signature's check).
    if (typeof copySource === "string")
      req.headers["x-amz-copy-source"] = encodeURI(decodeURIComponent(copySource));
    if (isObjectWrite(req.method, query)) {
      return locks.exclusive(id, async () => {
        const refusal = await checkPreconditions(s3rver, bucket, key, req.headers);
        if (!refusal) return pass(req, res);
        req.resume(); // discard the body we will not store
        sendError(res, refusal.status, refusal.code, refusal.message, refusal.condition);
      });
    }
    if (req.method === "GET" || req.method === "HEAD") {
      await locks.settled(id);
      await rewriteSuffixRange(s3rver, bucket, key, req.headers);
    }
    return pass(req, res);
  };

  return (req, res) => {
    route(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else sendError(res, 500, "InternalError", `embedded S3 front: ${String(error)}`);
    });
  };
}

interface Target {
  readonly bucket: string;
  /** Absent for requests on the bucket itself (listing, CreateBucket, DeleteObjects). */
  readonly key: string | undefined;
  readonly query: URLSearchParams;
}

function parseTarget(rawUrl: string): Target | undefined {
  const url = new URL(rawUrl, "http://s3.local");
  const [, bucket, ...rest] = url.pathname.split("/");
  if (!bucket) return undefined;
  const key = rest.join("/");
  return {
    bucket: decodeURIComponent(bucket),
    key: key === "" ? undefined : decodeURIComponent(key),
    query: url.searchParams,
  };
}

function isObjectWrite(method: string | undefined, query: URLSearchParams): boolean {
  if (method === "PUT" || method === "DELETE") return !NOT_OBJECT_WRITE.some((name) => query.has(name));
  return method === "POST" && query.has("uploadId");
}

interface Refusal {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly condition?: string;
}

async function checkPreconditions(
  s3rver: S3rver,
  bucket: string,
  key: string,
  headers: IncomingHttpHeaders,
): Promise<Refusal | undefined> {
  const ifNoneMatch = headers["if-none-match"];
  const ifMatch = headers["if-match"];
  if (ifNoneMatch === undefined && ifMatch === undefined) return undefined;
  // A missing bucket is s3rver's NoSuchBucket to report.
  if (!(await s3rver.store.getBucket(bucket))) return undefined;
  if (ifNoneMatch !== undefined && ifNoneMatch.trim() !== "*") {
    // As S3: a write accepts only `If-None-Match: *`.
    return {
      status: 501,
      code: "NotImplemented",
      message: "A header you provided implies functionality that is not implemented",
    };
  }
  const current = await currentEtag(s3rver, bucket, key);
  const failed =
    ifNoneMatch !== undefined && current !== undefined
      ? "If-None-Match"
      : ifMatch !== undefined && (current === undefined || !etagMatches(ifMatch, current))
        ? "If-Match"
        : undefined;
  return failed
    ? {
        status: 412,
        code: "PreconditionFailed",
        message: "At least one of the pre-conditions you specified did not hold",
        condition: failed,
      }
    : undefined;
}

async function currentEtag(s3rver: S3rver, bucket: string, key: string): Promise<string | undefined> {
  const metadata = await storedMetadata(s3rver, bucket, key);
  return metadata?.etag;
}

async function storedMetadata(s3rver: S3rver, bucket: string, key: string) {
  try {
    return await s3rver.store.getMetadata(bucket, key);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** `If-Match` holds a comma-separated list of ETags (quoted or not) or `*`. */
function etagMatches(header: string, etag: string): boolean {
  const bare = (tag: string): string => tag.trim().replace(/^W\//, "").replace(/^"|"$/g, "");
  return header.split(",").some((tag) => tag.trim() === "*" || bare(tag) === bare(etag));
}

async function rewriteSuffixRange(
  s3rver: S3rver,
  bucket: string,
  key: string,
  headers: IncomingHttpHeaders,
): Promise<void> {
  const suffix = /^bytes=-(\d+)$/.exec(headers.range ?? "");
  if (!suffix) return;
  const metadata = await storedMetadata(s3rver, bucket, key);
  if (!metadata) return; // s3rver answers NoSuchKey
  const size = Number(metadata["content-length"]);
  // An empty object has no bytes to range over; s3rver would answer with a broken 206, so send it whole.
  if (size === 0) delete headers.range;
  else headers.range = `bytes=${Math.max(0, size - Number(suffix[1]))}-`;
}

function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  condition?: string,
): void {
  const requestId = randomUUID();
  const body =
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>` +
    `${condition ? `<Condition>${condition}</Condition>` : ""}<RequestId>${requestId}</RequestId></Error>`;
  res.writeHead(status, {
    "Content-Type": "application/xml",
    "Content-Length": Buffer.byteLength(body),
    "x-amz-request-id": requestId,
  });
  res.end(body);
}

/**
 * A body sent `aws-chunked` (the SDK v1 of Spark's S3A connector signs every PUT chunk by chunk over
 * HTTP), decoded: S3 stores the payload, s3rver would store the chunk framing with it.
 */
async function withoutChunkSignatures(req: IncomingMessage): Promise<IncomingMessage> {
  if (req.headers["x-amz-content-sha256"] !== "STREAMING-AWS4-HMAC-SHA256-PAYLOAD") return req;
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const framed = Buffer.concat(parts);
  const payload: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = framed.indexOf("\r\n", at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(framed.subarray(at, lineEnd).toString("latin1").split(";")[0] ?? "", 16);
    if (!(size > 0)) break;
    payload.push(framed.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  const body = Buffer.concat(payload);
  const headers: IncomingHttpHeaders = { ...req.headers, "content-length": String(body.length) };
  delete headers["content-encoding"];
  delete headers["x-amz-decoded-content-length"];
  headers["x-amz-content-sha256"] = "UNSIGNED-PAYLOAD";
  const decoded = Object.assign(Readable.from([body]), {
    headers,
    method: req.method,
    url: req.url,
    httpVersion: req.httpVersion,
    socket: req.socket,
    connection: req.socket,
  });
  return decoded as unknown as IncomingMessage;
}
