import { readFile, stat } from "node:fs/promises";
import path from "node:path";

/**
 * The web UI's built files (`ui/dist`, from `npm run build:ui`) as the local runtime serves them at
 * `/`. Static assets carry no secret, so they are served without the bearer token; every `/api/` route
 * still needs it. A path that is no file is the single-page app's own route (`/tables/demo.sales.orders`:
 * a table's name has dots, so an extension says nothing) and gets `index.html`; only a missing asset —
 * under Vite's `assets/` or at the top level, like `/favicon.ico` — is a 404.
 */

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".woff2": "font/woff2",
};

export interface UiAsset {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer | string;
}

/** Hashed file names (Vite's `assets/…-<hash>.js`) never change content, so browsers keep them. */
const IMMUTABLE = "public, max-age=31536000, immutable";

export async function readUiAsset(root: string, urlPath: string): Promise<UiAsset> {
  const relative = path.posix.normalize(decodeURIComponent(urlPath)).replace(/^\/+/, "");
  const file = path.join(root, relative);
  if (relative.startsWith("..") || !file.startsWith(path.resolve(root))) return notFound();
  if (relative !== "" && (await isFile(file))) {
    return {
      status: 200,
      headers: {
        "content-type": CONTENT_TYPES[path.extname(file)] ?? "application/octet-stream",
        "cache-control": relative.startsWith("assets/") ? IMMUTABLE : "no-cache",
      },
      body: await readFile(file),
    };
  }
  if (isAssetPath(relative)) return notFound();
  const index = path.join(root, "index.html");
  if (!(await isFile(index))) {
    return {
      status: 404,
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: "The web UI is not built: run `npm run build:ui` (npm start does it), then reload.\n",
    };
  }
  return {
    status: 200,
    headers: {
      "content-type": CONTENT_TYPES[".html"]!,
      "cache-control": "no-cache",
      // The app loads only its own scripts and talks only to this origin.
      "content-security-policy":
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    },
    body: await readFile(index),
  };
}

/** Where the build puts files: Vite's `assets/` folder and the top level (`index.html`, `favicon.ico`). */
function isAssetPath(relative: string): boolean {
  return relative.startsWith("assets/") || (!relative.includes("/") && path.extname(relative) !== "");
}

function notFound(): UiAsset {
  return { status: 404, headers: { "content-type": "text/plain; charset=utf-8" }, body: "not found\n" };
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
}
