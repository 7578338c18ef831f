import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { describeE2E, launchBrowser, openPage, startOrigin, startServer, tokens, type AgentsServer, type StaticOrigin } from "./harness";

// A page of another origin calls the API: allowed with --cors-origin,
// blocked by the browser without it.
describeE2E("a page from another origin", () => {
  let origin: StaticOrigin;
  let browser: Browser;
  const servers: AgentsServer[] = [];

  beforeAll(async () => {
    [origin, browser] = await Promise.all([startOrigin(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all(servers.map((s) => s.stop()));
    await origin?.close();
  });

  // The page lists the agents of the server in its query, with the token
  // the query may carry, and says what it got.
  const page = `<!doctype html><title>elsewhere</title><pre id="out">…</pre><script type="module">
    const q = new URLSearchParams(location.search);
    const headers = q.get("token") ? { Authorization: "Bearer " + q.get("token") } : {};
    const out = document.getElementById("out");
    try {
      const res = await fetch(q.get("api") + "/v1/agents", { headers });
      const body = await res.json();
      out.textContent = res.status + " " + body.agents.map((a) => a.slug).sort().join(",");
    } catch (err) {
      out.textContent = "blocked: " + err.name;
    }
  </script>`;

  async function call(server: AgentsServer, token?: string): Promise<string> {
    origin.set("/index.html", page);
    const query = new URLSearchParams({ api: server.url, ...(token ? { token } : {}) });
    const p = await openPage(browser, `${origin.url}/index.html?${query}`);
    const out = p.locator("#out");
    await expect.poll(() => out.textContent(), { timeout: 15_000 }).not.toBe("…");
    const text = (await out.textContent()) ?? "";
    await p.close();
    return text;
  }

  test("calls the API of a server that allows its origin, with a token", async () => {
    const server = await startServer({ corsOrigins: [origin.url], tokens: [tokens.alice] });
    servers.push(server);
    expect(await call(server, tokens.alice.token)).toBe("200 asker,boss,chat,counter,guard,researcher,slow");
  });

  test("is blocked by a server that does not allow its origin", async () => {
    const server = await startServer();
    servers.push(server);
    expect(await call(server)).toBe("blocked: TypeError");
  });
});
