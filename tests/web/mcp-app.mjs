// folio's MCP App view under the MCP Apps package's own host. The
// TypeScript SDK's client connects to folio declaring the extension
// (io.modelcontextprotocol/ui), finds the view the search tool names,
// reads it, and calls search; a host page in Debian's chromium renders the
// view in a sandboxed iframe through the package's AppBridge (bundled here
// by esbuild), hands it the tool's input and result, and forwards the
// view's own tool calls to folio through the same client. Prints what it
// saw as one JSON line; tests/mcp/test_web.py asserts. Arguments: a JSON
// object with url, library, query, artifacts, plain (true: connect
// without declaring the extension, and only list), and pdf ({library,
// query}: a search whose first hit is a PDF's, its page then shown by the
// view through the host's resources/read).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { fileURLToPath } from "node:url";

const args = JSON.parse(process.argv[2]);
const MIME = "text/html;profile=mcp-app";
const seen = { calls_from_view: [], reads_from_view: [] };

const client = new Client(
  { name: "folio-app-host-test", version: "1" },
  args.plain ? {} : { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [MIME] } } } },
);
await client.connect(new StreamableHTTPClientTransport(new URL(args.url + "/mcp")));
seen.server_extensions = client.getServerCapabilities()?.extensions ?? null;
const { tools } = await client.listTools();
seen.tool_views = Object.fromEntries(tools.filter((t) => t._meta?.ui).map((t) => [t.name, t._meta.ui.resourceUri]));
const { resources } = await client.listResources();
seen.ui_resources = resources.filter((r) => r.uri.startsWith("ui://")).map((r) => ({ uri: r.uri, mimeType: r.mimeType }));
if (args.plain) {
  await client.close();
  console.log(JSON.stringify(seen));
  process.exit(0);
}

const viewUri = seen.tool_views.search;
const read = await client.readResource({ uri: viewUri });
const view = read.contents[0];
seen.view_mime = view.mimeType;
seen.view_bytes = Buffer.byteLength(view.text);
const input = { library: args.library, query: args.query, top_k: 5 };
const result = await client.callTool({ name: "search", arguments: input });

// The package's host side, bundled for the browser.
const bundled = await build({
  stdin: {
    contents: 'import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge"; window.AppBridge = AppBridge; window.PostMessageTransport = PostMessageTransport;',
    resolveDir: fileURLToPath(new URL(".", import.meta.url)),
  },
  bundle: true,
  format: "iife",
  write: false,
  minify: true,
});
const hostScript = bundled.outputFiles[0].text;

const errors = [];
const browser = await chromium.launch({ executablePath: process.env.FOLIO_CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  const page = await browser.newPage();
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("crash", () => errors.push("the page crashed"));
  // The view's calls reach folio through the host: here, the test's client.
  await page.exposeFunction("folioCallTool", async (params) => {
    seen.calls_from_view.push(params.name);
    return client.callTool(params);
  });
  await page.exposeFunction("folioReadResource", async (params) => {
    seen.reads_from_view.push(params.uri);
    return client.readResource(params);
  });
  await page.route("http://host.test/**", (route) => {
    const path = new URL(route.request().url()).pathname;
    if (path === "/host.js") return route.fulfill({ contentType: "text/javascript", body: hostScript });
    return route.fulfill({ contentType: "text/html", body: '<!doctype html><html lang="en"><head><title>host</title><script src="/host.js"></script></head><body><iframe id="view" title="folio" sandbox="allow-scripts" style="width:100%;height:600px;border:0"></iframe></body></html>' });
  });
  await page.goto("http://host.test/");
  seen.initialized = await page.evaluate(async ({ html, input, result }) => {
    const frame = document.getElementById("view");
    const bridge = new window.AppBridge(null, { name: "folio-test-host", version: "1" }, { serverTools: {}, serverResources: {} });
    bridge.oncalltool = (params) => window.folioCallTool(params);
    bridge.onreadresource = (params) => window.folioReadResource(params);
    const initialized = new Promise((resolve) => { bridge.oninitialized = () => resolve(true); });
    // Listening before the view loads, as a host does: the view asks to
    // initialize as soon as its script runs.
    await bridge.connect(new window.PostMessageTransport(frame.contentWindow, frame.contentWindow));
    frame.srcdoc = html;
    await initialized;
    await bridge.sendToolInput({ arguments: input });
    await bridge.sendToolResult(result);
    window.bridge = bridge;
    return true;
  }, { html: view.text, input, result });
  const frame = page.frameLocator("#view");
  await frame.locator("li").first().waitFor();
  seen.hits = await frame.locator("li strong").allTextContents();
  seen.citations = await frame.locator("li .cite").allTextContents();
  await frame.getByRole("button", { name: "Open the passage" }).first().click();
  await frame.locator("mark").first().waitFor();
  seen.marked = await frame.locator("mark").first().textContent();
  await page.screenshot({ path: `${args.artifacts}/mcp-app.png`, fullPage: true });
  if (args.pdf) {
    // A PDF's hits: the view offers the cited page, read through the host.
    const found = await client.callTool({ name: "search", arguments: { library: args.pdf.library, query: args.pdf.query, top_k: 3 } });
    await page.evaluate(async (result) => window.bridge.sendToolResult(result), found);
    const show = frame.getByRole("button", { name: /^Show page / }).first();
    await show.waitFor();
    seen.page_button = await show.textContent();
    await show.click();
    const image = frame.locator("img.page").first();
    await image.waitFor();
    await frame.locator("img.page").first().evaluate((img) => img.decode());
    seen.page_image = await image.evaluate((img) => ({ width: img.naturalWidth, height: img.naturalHeight, alt: img.alt }));
    await page.screenshot({ path: `${args.artifacts}/mcp-app-page.png`, fullPage: true });
  }
  seen.errors = errors;
} catch (e) {
  seen.failure = String((e && e.stack) || e);
  seen.errors = errors;
} finally {
  await browser.close();
  await client.close();
}
console.log(JSON.stringify(seen));
