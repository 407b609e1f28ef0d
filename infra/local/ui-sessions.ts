import { randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Browser sessions of the local runtime. The UI opens at `/#token=…` (the fragment never reaches a
 * server or its log), posts the token once to `/auth/session`, and gets an HttpOnly, SameSite=Strict
 * cookie naming a random session; the token itself is never stored in the browser. A request carrying
 * the cookie must also send `x-ebb-ui: 1`: a cross-site page cannot add that header without a CORS
 * preflight, which this server never grants. Sessions live as long as the process.
 */

export const SESSION_COOKIE = "ebb_session";
export const UI_HEADER = "x-ebb-ui";

export class UiSessions {
  readonly #sessions = new Set<string>();
  constructor(private readonly token: string) {}

  /** A new session for the right token, else undefined. */
  open(token: unknown): string | undefined {
    if (typeof token !== "string" || !sameSecret(token, this.token)) return undefined;
    const id = randomBytes(24).toString("base64url");
    this.#sessions.add(id);
    return id;
  }

  close(cookieHeader: string | undefined): void {
    const id = sessionId(cookieHeader);
    if (id !== undefined) this.#sessions.delete(id);
  }

  /** Whether the request proves who it is: the bearer token, or a session cookie with the UI header. */
  authorized(headers: { authorization?: string; cookie?: string; ui?: string }): boolean {
    const bearer = /^Bearer (.+)$/i.exec(headers.authorization ?? "")?.[1];
    if (bearer !== undefined) return sameSecret(bearer, this.token);
    const id = sessionId(headers.cookie);
    return headers.ui === "1" && id !== undefined && this.#sessions.has(id);
  }
}

export function sessionCookie(id: string): string {
  return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/`;
}

export function expiredSessionCookie(): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
}

function sessionId(cookieHeader: string | undefined): string | undefined {
  for (const part of (cookieHeader ?? "").split(";")) {
    const [name, value] = part.trim().split("=", 2);
    if (name === SESSION_COOKIE && value) return value;
  }
  return undefined;
}

/** Compared as bytes: a string of the right length with a non-ASCII character has more of them. */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(expected, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}
