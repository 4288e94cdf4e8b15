// Drives an MCP server with the official TypeScript SDK, as the hosts built
// on it (Claude Desktop, Claude Code, VS Code, Cursor) do: the SDK's own
// validation of tool listings and of structured results against each tool's
// output schema applies to every step.
//
// Reads a plan (JSON) on stdin:
//   {"transport": {"kind": "stdio", "command": "...", "args": [...], "env": {...}}
//               | {"kind": "http", "url": "http://.../mcp", "headers": {...}},
//    "steps": [{"op": "listTools"}, {"op": "callTool", "name": "...", "arguments": {...}},
//              {"op": "setLevel", "level": "debug"}, {"op": "subscribe", "uri": "..."},
//              {"op": "unsubscribe", "uri": "..."}, {"op": "readResource", "uri": "..."},
//              {"op": "listResources"}, {"op": "exec", "argv": [...], "env": {...}},
//              {"op": "waitFor", "method": "notifications/...", "uri": "...", "timeoutMs": 10000},
//              {"op": "touch", "path": "..."}, {"op": "sleep", "ms": 500}]}
// where a string argument "$N.path.to.value" stands for that value of step
// N's result (its structured content, say: "$2.structuredContent.doc_id"),
// and writes what happened (JSON) on stdout:
//   {"steps": [{"op", "ok": true, "result", "ms"} | {"op", "ok": false, "error": {"code", "message"}, "ms"}],
//    "notifications": [{"method", "params", "step"}]}
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => { text += chunk; });
  process.stdin.on("end", () => resolve(text));
}));

function transportOf(spec) {
  if (spec.kind === "stdio") {
    return new StdioClientTransport({
      command: spec.command,
      args: spec.args ?? [],
      env: { ...process.env, ...(spec.env ?? {}) },
      stderr: "ignore",
    });
  }
  return new StreamableHTTPClientTransport(new URL(spec.url), {
    requestInit: { headers: spec.headers ?? {} },
  });
}

const client = new Client({ name: "folio-ts-sdk-test", version: "1.0.0" });
const notifications = [];
let step = -1;
const waiters = [];
function heard(method, params) {
  notifications.push({ method, params, step });
  for (const waiter of [...waiters]) {
    if (waiter.matches(method, params)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }
}
for (const schema of [LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema,
  ResourceListChangedNotificationSchema]) {
  client.setNotificationHandler(schema, (n) => heard(n.method, n.params));
}

const timeout = { timeout: 600_000 };
const steps = [];

// A plan's value with each "$N.path" replaced by that value of step N's result.
function resolve(value) {
  if (typeof value === "string") {
    const reference = /^\$(\d+)\.(.+)$/.exec(value);
    if (!reference) return value;
    let found = steps[Number(reference[1])]?.result;
    for (const key of reference[2].split(".")) found = found?.[key];
    return found;
  }
  if (Array.isArray(value)) return value.map(resolve);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
  }
  return value;
}
async function perform(s) {
  switch (s.op) {
    case "listTools": {
      const tools = [];
      let cursor;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, timeout);
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return { tools };
    }
    case "callTool":
      return await client.callTool({ name: s.name, arguments: resolve(s.arguments ?? {}) }, undefined, timeout);
    case "setLevel":
      return await client.setLoggingLevel(s.level);
    case "subscribe":
      return await client.subscribeResource({ uri: resolve(s.uri) });
    case "unsubscribe":
      return await client.unsubscribeResource({ uri: resolve(s.uri) });
    case "readResource":
      return await client.readResource({ uri: resolve(s.uri) });
    case "listResources":
      return await client.listResources();
    case "exec": {
      const run = spawnSync(s.argv[0], s.argv.slice(1), {
        env: { ...process.env, ...(s.env ?? {}) }, encoding: "utf8",
      });
      return { status: run.status, stdout: run.stdout, stderr: run.stderr };
    }
    case "touch":
      writeFileSync(s.path, "");
      return {};
    case "sleep":
      await new Promise((resolve) => setTimeout(resolve, s.ms));
      return {};
    case "waitFor": {
      const uri = resolve(s.uri);
      const matches = (method, params) => method === s.method
        && (uri === undefined || params?.uri === uri);
      if (notifications.some((n) => matches(n.method, n.params) && n.step >= (s.since ?? 0))) {
        return { waited: 0 };
      }
      const started = Date.now();
      await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${s.method} within ${s.timeoutMs} ms`)),
          s.timeoutMs ?? 10_000);
        waiters.push({ matches, resolve: () => { clearTimeout(timer); resolve(); } });
      });
      return { waited: Date.now() - started };
    }
    default:
      throw new Error(`unknown op ${s.op}`);
  }
}

let connected = true;
try {
  await client.connect(transportOf(plan.transport));
} catch (e) {
  connected = false;
  steps.push({ op: "connect", ok: false, error: { code: e.code ?? null, message: String(e.message ?? e) } });
}
if (connected) {
  for (const s of plan.steps) {
    step += 1;
    const started = Date.now();
    try {
      const result = await perform(s);
      steps.push({ op: s.op, ok: true, result, ms: Date.now() - started });
    } catch (e) {
      steps.push({ op: s.op, ok: false, error: { code: e.code ?? null, message: String(e.message ?? e) },
        ms: Date.now() - started });
    }
  }
  await client.close();
}
// Exits once the report is written (a pipe takes it in parts), leaving no
// stray handle of the transport to keep the process alive.
process.stdout.write(JSON.stringify({ steps, notifications }), () => process.exit(0));
