import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// The dev server proxies the API to a local `agents serve` so the app and
// the API share an origin, as they do when the server serves the build.
export default defineConfig({
  plugins: [react()],
  server: {
    proxy: {
      "/agents.v1.": "http://127.0.0.1:7420",
      "/v1/": "http://127.0.0.1:7420",
    },
  },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.{ts,tsx}"],
    setupFiles: ["src/test-setup.ts"],
    // The tests wait for what the app shows, never for a time: on a
    // loaded machine (CI beside other builds) rendering a page in jsdom
    // took seconds, and the defaults (5 s a test, 1 s a wait) failed
    // tests that were right.
    testTimeout: 30_000,
  },
});
