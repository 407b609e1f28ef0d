import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/** The web UI: `npm run build:ui` writes `ui/dist`, which the local runtime serves at `/`. */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 600,
  },
  server: {
    // `npx vite ui` against a running `npm start`: EBB_ENDPOINT is where the API listens.
    proxy: {
      "/api": process.env["EBB_ENDPOINT"] ?? "http://127.0.0.1:8080",
      "/auth": process.env["EBB_ENDPOINT"] ?? "http://127.0.0.1:8080",
      "/config.json": process.env["EBB_ENDPOINT"] ?? "http://127.0.0.1:8080",
    },
  },
});
