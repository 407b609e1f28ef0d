import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * The local runtime serves the web UI's files at `/` without the token, keeps every `/api/` route
 * behind it, and trades the token for an HttpOnly session cookie that works only with the UI header.
 */
describe("the local runtime serves the web UI", () => {
  let cp: TestControlPlane;
  let assets: string;
  const at = (p: string) => `${cp.plane.endpoint}${p}`;

  beforeAll(async () => {
    assets = await mkdtemp(path.join(os.tmpdir(), "ebb-ui-assets-"));
    await mkdir(path.join(assets, "assets"));
    await writeFile(path.join(assets, "index.html"), "<!doctype html><title>Ebb</title>");
    await writeFile(path.join(assets, "assets", "app-1234.js"), "console.log(1)");
    cp = await startTestControlPlane({ uiAssets: assets });
  });
  afterAll(async () => {
    await cp?.close();
    await rm(assets, { recursive: true, force: true });
  });

  it("answers the app and its files without a token, and an app route with index.html", async () => {
    const index = await fetch(at("/"));
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toContain("text/html");
    expect(index.headers.get("content-security-policy")).toContain("default-src 'self'");
    const route = await fetch(at("/pipelines/some-id?tab=events"));
    expect(await route.text()).toContain("<title>Ebb</title>");
    const script = await fetch(at("/assets/app-1234.js"));
    expect(script.headers.get("content-type")).toContain("text/javascript");
    expect(script.headers.get("cache-control")).toContain("immutable");
    expect((await fetch(at("/assets/missing.js"))).status).toBe(404);
    expect((await fetch(at("/favicon.ico"))).status).toBe(404);
    for (const escape of ["/%2e%2e/%2e%2e/etc/passwd", "/..%2F..%2F..%2Fetc%2Fpasswd"]) {
      expect(await (await fetch(at(escape))).text()).not.toContain("root:");
    }
  });

  it("answers a table's page, whose name has dots, with the app (a reload or a pasted link)", async () => {
    for (const route of ["/tables/demo.sales.orders", "/tables/demo.sales.orders?pipeline=p-1"]) {
      const page = await fetch(at(route));
      expect(page.status, route).toBe(200);
      expect(await page.text()).toContain("<title>Ebb</title>");
    }
  });

  it("tells the app to sign in with the session, so no page load meets a missing config.json", async () => {
    const config = await fetch(at("/config.json"));
    expect(config.status).toBe(200);
    expect(await config.json()).toEqual({ signIn: { kind: "session" } });
  });

  it("keeps the API behind the token", async () => {
    expect((await fetch(at("/api/2.0/pipelines"))).status).toBe(401);
  });

  it("answers Databricks' host metadata without a token (the SDKs read it when a client starts)", async () => {
    const metadata = await fetch(at("/.well-known/databricks-config"));
    expect(metadata.status).toBe(200);
    expect(metadata.headers.get("content-type")).toBe("application/json");
    expect(await metadata.json()).toEqual({ cloud: "AWS" });
  });

  it("trades the token for a session cookie that needs the UI header, and signs out", async () => {
    const wrong = await fetch(at("/auth/session"), {
      method: "POST",
      body: JSON.stringify({ token: "nope" }),
    });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error_code: string }).error_code).toBe("UNAUTHENTICATED");

    const opened = await fetch(at("/auth/session"), {
      method: "POST",
      body: JSON.stringify({ token: cp.plane.token }),
    });
    expect(opened.status).toBe(204);
    const setCookie = opened.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const cookie = setCookie.split(";")[0]!;

    const withHeader = await fetch(at("/api/2.0/pipelines"), { headers: { cookie, "x-ebb-ui": "1" } });
    expect(withHeader.status).toBe(200);
    // A cross-site form or image sends the cookie but cannot add the header.
    expect((await fetch(at("/api/2.0/pipelines"), { headers: { cookie } })).status).toBe(401);

    const closed = await fetch(at("/auth/session"), { method: "DELETE", headers: { cookie } });
    expect(closed.status).toBe(204);
    expect(closed.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await fetch(at("/api/2.0/pipelines"), { headers: { cookie, "x-ebb-ui": "1" } })).status).toBe(
      401,
    );
  });
});
