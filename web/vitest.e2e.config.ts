import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The end-to-end suite (web/e2e, run by `make webe2e`): real processes and
// a real browser, so long timeouts, and one file at a time so that the
// servers and browsers of different files do not compete for the CPU.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  test: {
    include: ["e2e/**/*.e2e.ts"],
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    fileParallelism: false,
  },
});
