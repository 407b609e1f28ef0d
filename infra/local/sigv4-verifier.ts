import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/**
 * Signature Version 4 checked on the server side, so the local stand-ins refuse what AWS refuses: a
 * request without a signature, with an unknown key, or signed with the wrong secret. It recomputes the
 * signature from the request as received (AWS General Reference, "Create a signed AWS API request"):
 *
 * 1. Take the credential scope, the signed header names and the signature from the `Authorization`
 *    header (or, for a presigned URL, from the `X-Amz-*` query parameters).
 * 2. Refuse an unknown access key, another service's scope, or a time more than 15 minutes off.
 * 3. Build the canonical request from the method, the path, the sorted query, the signed headers and
 *    the payload hash; hash it into the string to sign; sign it with the key derived from the secret.
 * 4. Compare with the signature sent, in constant time.
 *
 * The payload hash is the one the client states (`x-amz-content-sha256`, which S3 requires), else
 * the SHA-256 of the body the caller passes. Chunk signatures of streamed uploads are not checked:
 * the seed signature already proves the key.
 */

export interface SigV4Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

export interface SignedRequest {
  readonly method: string;
  /** The request target as received: path and query, still percent-encoded. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The body, for services whose clients do not send `x-amz-content-sha256`. */
  readonly body?: Buffer;
}

export type SigV4Verdict =
  { readonly ok: true } | { readonly ok: false; readonly code: SigV4RefusalCode; readonly message: string };

export type SigV4RefusalCode =
  | "MissingAuthenticationToken"
  | "IncompleteSignature"
  | "InvalidAccessKeyId"
  | "SignatureDoesNotMatch"
  | "RequestTimeTooSkewed";

/** As AWS: a signed request is good for 15 minutes either side of the server's clock. */
const MAX_SKEW_MS = 15 * 60 * 1000;
const ALGORITHM = "AWS4-HMAC-SHA256";

interface Signature {
  readonly accessKeyId: string;
  /** `<yyyymmdd>/<region>/<service>/aws4_request` */
  readonly scope: string;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
  readonly amzDate: string | undefined;
  /** Query parameters that are part of the signature itself, left out of the canonical query. */
  readonly excludedQuery: string | undefined;
  readonly presigned: boolean;
}

export function verifySigV4(
  request: SignedRequest,
  credentials: SigV4Credentials,
  service: string,
  now: Date = new Date(),
): SigV4Verdict {
  const [rawPath = "/", rawQuery = ""] = splitOnce(request.url, "?");
  const query = parseQuery(rawQuery);
  const parsed = readSignature(request.headers, query, now);
  if (parsed === undefined)
    return refuse(
      "MissingAuthenticationToken",
      "the request is not signed: sign it with Signature Version 4 using the credentials the local runtime printed (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)",
    );
  if (typeof parsed === "string") return refuse("IncompleteSignature", parsed);
  if (parsed.accessKeyId !== credentials.accessKeyId)
    return refuse(
      "InvalidAccessKeyId",
      `the access key ${parsed.accessKeyId} is not this local runtime's; use the AWS_ACCESS_KEY_ID it printed`,
    );
  const [date, , scopeService, terminator] = parsed.scope.split("/");
  if (scopeService !== service || terminator !== "aws4_request")
    return refuse(
      "IncompleteSignature",
      `the credential scope ${parsed.scope} is not for the ${service} service`,
    );
  const signedAt = parseAmzDate(parsed.amzDate ?? "");
  if (signedAt === undefined || !parsed.amzDate?.startsWith(date ?? "-"))
    return refuse("IncompleteSignature", "the request has no X-Amz-Date matching its credential scope");
  if (!parsed.presigned && Math.abs(now.getTime() - signedAt.getTime()) > MAX_SKEW_MS)
    return refuse(
      "RequestTimeTooSkewed",
      "the request was signed more than 15 minutes from now; check the clock",
    );
  if (!parsed.signedHeaders.includes("host"))
    return refuse("IncompleteSignature", "the signature must cover the Host header");

  const canonicalHeaders = parsed.signedHeaders
    .map((name) => `${name}:${headerValue(request.headers, name)}\n`)
    .join("");
  const canonicalQuery = query
    .filter(([name]) => name !== parsed.excludedQuery)
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
  const payloadHash =
    headerValue(request.headers, "x-amz-content-sha256") ||
    (parsed.presigned ? "UNSIGNED-PAYLOAD" : sha256Hex(request.body ?? Buffer.alloc(0)));
  const signingKey = [date, parsed.scope.split("/")[1], service, "aws4_request"].reduce<Buffer>(
    (key, part) => hmac(key, part ?? ""),
    Buffer.from(`AWS4${credentials.secretAccessKey}`, "utf8"),
  );
  // S3 signs the path as sent; other services normalise it. Either form proves the secret.
  const matches = canonicalPaths(rawPath).some((canonicalPath) => {
    const canonicalRequest = [
      request.method,
      canonicalPath,
      canonicalQuery,
      canonicalHeaders,
      parsed.signedHeaders.join(";"),
      payloadHash,
    ].join("\n");
    const stringToSign = [ALGORITHM, parsed.amzDate, parsed.scope, sha256Hex(canonicalRequest)].join("\n");
    const expected = Buffer.from(hmac(signingKey, stringToSign).toString("hex"));
    const sent = Buffer.from(parsed.signature);
    return expected.length === sent.length && timingSafeEqual(expected, sent);
  });
  return matches
    ? { ok: true }
    : refuse(
        "SignatureDoesNotMatch",
        "the request signature does not match: sign with the AWS_SECRET_ACCESS_KEY the local runtime printed",
      );
}

/** The signature's parts; undefined when the request is not signed at all, a reason when it is malformed. */
function readSignature(
  headers: IncomingHttpHeaders,
  query: readonly (readonly [string, string])[],
  now: Date,
): Signature | string | undefined {
  const authorization = headers.authorization;
  const queryValue = (name: string) => query.find(([key]) => key === name)?.[1];
  if (authorization !== undefined) {
    if (!authorization.startsWith(`${ALGORITHM} `)) return `the Authorization header is not ${ALGORITHM}`;
    const fields = Object.fromEntries(
      authorization
        .slice(ALGORITHM.length + 1)
        .split(",")
        .map((part) => splitOnce(part.trim(), "=")),
    );
    const credential = fields["Credential"];
    const signedHeaders = fields["SignedHeaders"];
    const signature = fields["Signature"];
    if (!credential || !signedHeaders || !signature)
      return "the Authorization header needs Credential, SignedHeaders and Signature";
    return {
      ...splitCredential(credential),
      signedHeaders: signedHeaders.split(";"),
      signature,
      amzDate: headerValue(headers, "x-amz-date") || undefined,
      excludedQuery: undefined,
      presigned: false,
    };
  }
  if (queryValue("X-Amz-Algorithm") === undefined) return undefined;
  const credential = queryValue("X-Amz-Credential");
  const signedHeaders = queryValue("X-Amz-SignedHeaders");
  const signature = queryValue("X-Amz-Signature");
  if (queryValue("X-Amz-Algorithm") !== ALGORITHM || !credential || !signedHeaders || !signature)
    return `a presigned URL needs X-Amz-Algorithm=${ALGORITHM}, X-Amz-Credential, X-Amz-SignedHeaders and X-Amz-Signature`;
  const amzDate = queryValue("X-Amz-Date");
  const expires = Number(queryValue("X-Amz-Expires"));
  const signedAt = parseAmzDate(amzDate ?? "");
  if (signedAt && Number.isFinite(expires) && now.getTime() > signedAt.getTime() + expires * 1000)
    return "the presigned URL has expired";
  return {
    ...splitCredential(credential),
    signedHeaders: signedHeaders.split(";"),
    signature,
    amzDate,
    excludedQuery: "X-Amz-Signature",
    presigned: true,
  };
}

function splitCredential(credential: string): { accessKeyId: string; scope: string } {
  const [accessKeyId = "", scope = ""] = splitOnce(credential, "/");
  return { accessKeyId, scope };
}

/** The path as the client encoded it, and re-encoded segment by segment (S3's rule). */
function canonicalPaths(rawPath: string): string[] {
  const reencoded = rawPath
    .split("/")
    .map((segment) => uriEncode(safeDecode(segment)))
    .join("/");
  return reencoded === rawPath ? [rawPath] : [rawPath, reencoded];
}

function parseQuery(rawQuery: string): (readonly [string, string])[] {
  if (rawQuery === "") return [];
  return rawQuery.split("&").map((pair) => {
    const [name = "", value = ""] = splitOnce(pair, "=");
    return [safeDecode(name), safeDecode(value)] as const;
  });
}

/** A signed header's value: repeated headers joined with commas, trimmed, inner runs of spaces collapsed. */
function headerValue(headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name];
  const joined = Array.isArray(value) ? value.join(",") : (value ?? "");
  return joined.trim().replace(/\s+/g, " ");
}

/** RFC 3986 unreserved characters stay; every other byte is %XX (upper case). */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function parseAmzDate(text: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  return new Date(Date.UTC(y!, mo! - 1, d!, h!, mi!, s!));
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at + separator.length)];
}

const hmac = (key: Buffer, data: string): Buffer => createHmac("sha256", key).update(data, "utf8").digest();
const sha256Hex = (data: string | Buffer): string => createHash("sha256").update(data).digest("hex");

function refuse(code: SigV4RefusalCode, message: string): SigV4Verdict {
  return { ok: false, code, message };
}
