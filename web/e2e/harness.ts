// The end-to-end harness: a real `agents serve` (bin/agents, built by
// `make build`) on its own home and database, answered by the offline
// model (bin/fakellm) scripted by rules.json, and Debian's Chromium driven
// through playwright-core. Tests start what they need in beforeAll and
// stop it in afterAll; every process started here is also killed when the
// test process exits, so a failed test leaves nothing running.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const repo = join(here, "..", "..");

/** Where screenshots and server logs go (gitignored). */
export const outputDir = join(here, "output");
/** The offline model's rules for the test agents. */
export const rulesFile = join(here, "rules.json");
/** The test agents: every agent file in web/e2e/agents. */
export const agentFiles = readdirSync(join(here, "agents"))
  .filter((name) => name.endsWith(".json"))
  .map((name) => join(here, "agents", name));

const bin = process.env.AGENTS_BIN_DIR ?? join(repo, "bin");
/** The browser: Debian's Chromium, never a downloaded one. */
export const chromiumPath = process.env.AGENTS_E2E_CHROMIUM ?? "/usr/bin/chromium";
/** Whether the browser tests can run here. */
export const hasChromium = existsSync(chromiumPath);

// Without Chromium the suite is skipped, loudly, unless it is required
// (CI sets AGENTS_E2E_REQUIRE=1 after installing it): there a missing
// browser is a broken machine, not a reason to pass.
if (!hasChromium) {
  const message = `${chromiumPath} is missing: the web app's end-to-end tests need Debian's chromium (apt-get install chromium)`;
  if (process.env.AGENTS_E2E_REQUIRE === "1") throw new Error(message);
  console.warn(`SKIPPED: ${message}`);
}

/** describe, or describe.skip when there is no Chromium. */
export const describeE2E = hasChromium ? describe : describe.skip;

// Every child still running when the test process ends is killed.
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

function binary(name: string): string {
  const path = join(bin, name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`make build\` first`);
  return path;
}

/** A home of its own: no config, keys or agents of the user leak in. */
function isolatedEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_DATA_HOME: join(home, "data"),
    XDG_STATE_HOME: join(home, "state"),
    XDG_CACHE_HOME: join(home, "cache"),
    TMPDIR: home,
  };
}

/** Resolves with the first line for which pick returns a value. */
function firstLine<T>(child: ChildProcess, stream: NodeJS.ReadableStream, what: string, pick: (line: string) => T | undefined, onLine?: (line: string) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => finish(new Error(`${what}: nothing within 60s`)), 60_000);
    const finish = (err?: Error, value?: T) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(value as T);
    };
    createInterface({ input: stream }).on("line", (line) => {
      onLine?.(line);
      const value = pick(line);
      if (value !== undefined) finish(undefined, value);
    });
    child.once("exit", (code, signal) => finish(new Error(`${what}: exited (${signal ?? code}) before it was ready`)));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(kill);
      children.delete(child);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** The offline model: bin/fakellm answering from a rules file. */
export class OfflineModel {
  private constructor(
    private readonly child: ChildProcess,
    /** The base URL to give --offline-model (…/v1). */
    readonly url: string,
  ) {}

  static async start(rules = rulesFile): Promise<OfflineModel> {
    const child = spawn(binary("fakellm"), ["--rules", rules, "--addr", "127.0.0.1:0", "--quiet"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.add(child);
    const url = await firstLine(child, child.stdout!, "fakellm", (line) => (line.startsWith("http") ? line.trim() : undefined));
    return new OfflineModel(child, url);
  }

  /** The chat requests it has answered, oldest first. */
  async requests(): Promise<unknown[]> {
    const res = await fetch(new URL("/fakellm/requests", this.url));
    return (await res.json()) as unknown[];
  }

  stop(): Promise<void> {
    return stopChild(this.child);
  }
}

/** A bearer token of the --auth-tokens file. */
export interface Token {
  token: string;
  owner: string;
  admin?: boolean;
}

/** Tokens for servers with auth: two owners and an admin. */
export const tokens = {
  alice: { token: "e2e-alice-token-0123456789", owner: "alice" },
  bob: { token: "e2e-bob-token-0123456789ab", owner: "bob" },
  admin: { token: "e2e-admin-token-012345678", owner: "root", admin: true },
} satisfies Record<string, Token>;

export interface ServerOptions {
  /** Agent files to load (default: every file of web/e2e/agents). */
  agentFiles?: string[];
  /** The offline model's rules (default: web/e2e/rules.json). */
  rules?: string;
  /** Turn auth on with these tokens (--auth-tokens); see `tokens`. */
  tokens?: Token[];
  /** Web origins allowed to call the API (--cors-origin). */
  corsOrigins?: string[];
  /** Serve the app from this folder (--web-dir) instead of the built-in one. */
  webDir?: string;
  /** More flags for `agents serve`. */
  args?: string[];
}

let serverCount = 0;

/**
 * A running `agents serve` with a home, a database and an offline model
 * of its own. restart() stops it and starts it again on the same port
 * and database; stop() ends it and its model and saves its log under
 * output/.
 */
export class AgentsServer {
  private child?: ChildProcess;
  private lines: string[] = [];
  private port = 0;
  /** The server's address, such as http://127.0.0.1:40123 (no slash). */
  url = "";

  private constructor(
    readonly options: ServerOptions,
    /** The server's own home (HOME, XDG directories, tokens file). */
    readonly home: string,
    /** The SQLite file, kept across restarts. */
    readonly db: string,
    readonly model: OfflineModel,
    private readonly name: string,
  ) {}

  static async start(options: ServerOptions = {}): Promise<AgentsServer> {
    const home = await mkdtemp(join(tmpdir(), "agents-e2e-"));
    const model = await OfflineModel.start(options.rules);
    const server = new AgentsServer(options, home, join(home, "agents.db"), model, `agents-${++serverCount}`);
    try {
      await server.launch();
    } catch (err) {
      await server.stop();
      throw err;
    }
    return server;
  }

  private async args(): Promise<string[]> {
    const o = this.options;
    const args = ["serve", "--port", String(this.port), "--db", this.db, "--offline-model", this.model.url, "--log-format", "json", "--shutdown-grace", "1s"];
    for (const file of o.agentFiles ?? agentFiles) args.push("--agent-file", file);
    if (o.tokens) {
      const file = join(this.home, "tokens.json");
      await writeFile(file, JSON.stringify({ tokens: o.tokens }));
      await chmod(file, 0o600);
      args.push("--auth-tokens", file);
    }
    for (const origin of o.corsOrigins ?? []) args.push("--cors-origin", origin);
    if (o.webDir) args.push("--web-dir", o.webDir);
    return [...args, ...(o.args ?? [])];
  }

  private async launch(): Promise<void> {
    const child = spawn(binary("agents"), await this.args(), {
      cwd: this.home,
      env: isolatedEnv(this.home),
      stdio: ["ignore", "inherit", "pipe"],
    });
    this.child = child;
    children.add(child);
    // `listening` says the address (with --port 0, the port it picked).
    this.url = await firstLine(
      child,
      child.stderr!,
      "agents serve",
      (line) => {
        try {
          const rec = JSON.parse(line) as { msg?: string; addr?: string };
          return rec.msg === "listening" ? rec.addr : undefined;
        } catch {
          return undefined;
        }
      },
      (line) => this.lines.push(line),
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${this.log()}`);
    });
    this.port = Number(new URL(this.url).port);
  }

  /** Stops the server gracefully and starts it again: same port, same database. */
  async restart(): Promise<void> {
    if (this.child) await stopChild(this.child);
    await this.launch();
  }

  /** The server's log so far, one JSON record a line. */
  log(): string {
    return this.lines.join("\n");
  }

  /** A plain HTTP request to the API, with a token when given. */
  request(method: string, path: string, body?: unknown, token?: Token): Promise<Response> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (token) headers.Authorization = `Bearer ${token.token}`;
    return fetch(this.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  }

  /** Stops the server and its model, saves the log under output/ and removes the home. */
  async stop(): Promise<void> {
    if (this.child) await stopChild(this.child);
    await this.model.stop();
    await mkdir(outputDir, { recursive: true });
    await writeFile(join(outputDir, `${this.name}.log`), this.log() + "\n");
    await rm(this.home, { recursive: true, force: true });
  }
}

/** Starts `agents serve` with the test agents (see ServerOptions). */
export function startServer(options?: ServerOptions): Promise<AgentsServer> {
  return AgentsServer.start(options);
}

/** Launches Debian's Chromium, headless. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
  });
}

/**
 * Starts a server (with options) and a browser before the enclosing
 * suite's tests, hands both to use, and stops them after the tests.
 */
export function withServerAndBrowser(use: (server: AgentsServer, browser: Browser) => void, options?: ServerOptions): void {
  let server: AgentsServer | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer(options), launchBrowser()]);
    use(server, browser);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
}

export interface PageOptions {
  colorScheme?: "light" | "dark";
  viewport?: { width: number; height: number };
}

const pageErrors = new WeakMap<Page, string[]>();

/**
 * Opens url in a fresh browser context (its own storage, so tests do not
 * share a sign-in) and waits for the page to load. The page's uncaught
 * errors and console errors are kept for errorsOf.
 */
export async function openPage(browser: Browser, url: string, options: PageOptions = {}): Promise<Page> {
  const context = await browser.newContext({
    colorScheme: options.colorScheme ?? "light",
    viewport: options.viewport ?? { width: 1280, height: 800 },
  });
  const page = await context.newPage();
  const errors: string[] = [];
  pageErrors.set(page, errors);
  page.on("pageerror", (err) => errors.push(err.message));
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(msg.text());
  });
  // The context goes with its page; when the browser is closing too, it
  // is gone already, and that is no error.
  page.on("close", () => void context.close().catch(() => undefined));
  await page.goto(url);
  return page;
}

/** The uncaught errors and console errors of a page opened by openPage. */
export function errorsOf(page: Page): string[] {
  return pageErrors.get(page) ?? [];
}

/** Saves a screenshot of the page as output/NAME.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(outputDir, { recursive: true });
  const path = join(outputDir, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/**
 * A second web origin serving fixed pages, for pages that call the API
 * from elsewhere (--cors-origin). set() adds or replaces a page.
 */
export class StaticOrigin {
  private readonly pages = new Map<string, string>();

  private constructor(
    private readonly server: Server,
    /** The origin, such as http://127.0.0.1:40124 (no slash). */
    readonly url: string,
  ) {}

  static async start(): Promise<StaticOrigin> {
    let origin: StaticOrigin | undefined;
    const server = createServer((req, res) => {
      const page = origin?.pages.get(new URL(req.url ?? "/", "http://x").pathname);
      if (page === undefined) {
        res.writeHead(404).end("not found");
        return;
      }
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" }).end(page);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = new StaticOrigin(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return origin;
  }

  /** Serves html at path (such as "/index.html"). */
  set(path: string, html: string): void {
    this.pages.set(path, html);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Starts a second origin (see StaticOrigin). */
export function startOrigin(): Promise<StaticOrigin> {
  return StaticOrigin.start();
}
