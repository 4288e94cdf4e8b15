// folio's web app: an MCP client of the server it is served by. Every view
// is a tool call on /mcp, so the caller sees what its key's scopes and
// libraries allow and nothing more. No framework, no build step.

const $ = (id) => document.getElementById(id);

/** Thrown for an HTTP refusal (401 asks for a sign-in) or a tool error. */
class Refused extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** MCP over streamable HTTP, as the page's own client. */
class Mcp {
  constructor() {
    this.session = null;
    this.version = "2025-06-18";
    this.next = 1;
  }

  async post(message) {
    const headers = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      // Sent only by this page's scripts: the server takes the sign-in
      // cookie as a credential only beside it (a cross-site form cannot
      // add a header, and a cross-site script is refused by CORS).
      "X-Folio-App": "1",
    };
    if (this.session) {
      headers["Mcp-Session-Id"] = this.session;
      headers["MCP-Protocol-Version"] = this.version;
    }
    const response = await fetch("/mcp", { method: "POST", headers, body: JSON.stringify(message), credentials: "same-origin" });
    if (!response.ok && response.status !== 202) {
      let text = await response.text();
      try { text = JSON.parse(text).error?.message ?? JSON.parse(text).error ?? text; } catch { /* plain text */ }
      if (response.status === 401 && this.session) {
        this.onSessionEnded?.();
        text = `${text}: sign in again`;
      }
      throw new Refused(response.status, String(text));
    }
    const session = response.headers.get("Mcp-Session-Id");
    if (session) this.session = session;
    if (message.id === undefined) return null;
    const body = await response.text();
    const type = response.headers.get("Content-Type") || "";
    if (type.startsWith("application/json")) return JSON.parse(body);
    // An event stream: the answer is the data line carrying our id.
    for (const line of body.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (!data) continue;
      const parsed = JSON.parse(data);
      if (parsed.id === message.id) return parsed;
    }
    throw new Refused(500, "no answer in the server's response");
  }

  async request(method, params) {
    const answer = await this.post({ jsonrpc: "2.0", id: this.next++, method, params });
    if (answer.error) throw new Refused(400, answer.error.message);
    return answer.result;
  }

  async connect() {
    this.session = null;
    const result = await this.request("initialize", {
      protocolVersion: this.version,
      capabilities: {},
      clientInfo: { name: "folio-web", version: "1" },
    });
    this.version = result.protocolVersion;
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    return result;
  }

  /** A tool's structured result; a tool error is thrown with its message. */
  async call(name, args) {
    const result = await this.request("tools/call", { name, arguments: args });
    const content = result.structuredContent;
    if (result.isError) {
      const message = content?.error?.message ?? content?.message ?? result.content?.[0]?.text ?? "the tool failed";
      throw new Refused(400, message);
    }
    return content ?? JSON.parse(result.content?.[0]?.text ?? "{}");
  }
}

const mcp = new Mcp();
let lastHits = [];
// The last search's arguments and the cursor of its next page (the server
// takes a cursor only with the arguments that made it).
let lastSearch = null;
// What the caller may do (GET /app/session): the page offers no control a
// scope does not allow (the server refuses it anyway).
let scopes = [];
// An admin of every library manages keys (on a server that asks for them);
// signed in through the identity provider, reads the audit log.
let keyAdmin = false;
let tokenAdmin = false;
// Whether the server keeps an audit log this caller may read, and how the
// server knows its callers.
let auditShown = false;
let historyShown = false;
let sessionAuth = null;

function status(text, error = false) {
  const element = $("status");
  element.textContent = text;
  element.classList.toggle("error", error);
}

function element(tag, text, attributes = {}) {
  const made = document.createElement(tag);
  if (text !== undefined && text !== null) made.textContent = String(text);
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, value);
  return made;
}

function show(view) {
  for (const id of ["signin", "libraries", "activity", "keys", "history", "audit", "add", "entities", "search", "entity", "document"]) {
    $(id).hidden = !view.includes(id) || (id === "add" && !scopes.includes("ingest"))
      || (id === "activity" && !$("job-rows").childElementCount && !$("watch-rows").childElementCount)
      || (id === "keys" && !keyAdmin) || (id === "entities" && !$("entity-list").childElementCount)
      || (id === "audit" && !auditShown) || (id === "history" && !historyShown);
  }
}

const HOME = ["libraries", "activity", "keys", "history", "audit", "add", "entities", "search"];

/** The page's own requests to its routes (not MCP): JSON, with its header. */
async function route(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { "Content-Type": "application/json", "X-Folio-App": "1" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const answer = response.status === 204 ? {} : await response.json();
  if (!response.ok) throw new Error(answer.error?.message ?? `refused (${response.status})`);
  return answer;
}

async function loadKeys() {
  if (!keyAdmin) return;
  const { keys } = await route("GET", "/app/keys");
  $("key-rows").replaceChildren(...keys.map((key) => {
    const row = element("tr");
    const revoke = element("button", "Revoke", { type: "button", "aria-label": `Revoke ${key.name}` });
    revoke.addEventListener("click", () => revokeKey(key.name));
    const actions = element("td");
    actions.append(revoke);
    row.append(element("th", key.name, { scope: "row" }), element("td", key.scopes.join(", ")),
      element("td", key.libraries ? key.libraries.join(", ") : "every library"), element("td", key.expires_at ?? "never"),
      element("td", key.last_used_at ?? "—"), actions);
    return row;
  }));
}

/** Whether the caller sees the admin's views: an admin of every library,
 * or the local user of a server without keys. */
const administers = () => keyAdmin || tokenAdmin || sessionAuth === "none";

/** The audit log's newest lines, for an administrator, when the server
 * keeps one. */
async function loadAudit() {
  if (!administers()) return;
  const answer = await route("GET", "/app/audit");
  auditShown = answer.enabled;
  $("audit").hidden = !auditShown;
  if (!auditShown) return;
  $("audit-rows").replaceChildren(...answer.lines.map((line) => {
    const row = element("tr");
    row.append(element("td", (line.time ?? "").replace("T", " ").slice(0, 19)), element("td", line.caller ?? "—"),
      element("td", line.transport ?? ""), element("td", line.operation ?? ""), element("td", line.library ?? "—"),
      element("td", line.outcome ?? ""), element("td", `${line.duration_ms ?? 0} ms`, { class: "n" }));
    return row;
  }));
}

/** The calls of the last hour, a bar a minute (errors in their own
 * colour), with a sentence that says what the bars show. */
async function loadHistory() {
  if (!administers()) return;
  const { minutes } = await route("GET", "/app/history");
  const at = (m) => Math.floor(Date.parse(m.minute) / 60000);
  const byMinute = new Map(minutes.map((m) => [at(m), m]));
  const last = Math.max(Math.floor(Date.now() / 60000), ...minutes.map(at));
  const hour = Array.from({ length: 60 }, (_, i) => ({ at: last - 59 + i, ...(byMinute.get(last - 59 + i) ?? { calls: 0, errors: 0, mean_ms: 0 }) }));
  const most = Math.max(1, ...hour.map((m) => m.calls));
  const chart = $("history-chart");
  chart.replaceChildren();
  hour.forEach((m, i) => {
    const height = (m.calls / most) * 100;
    const failed = (m.errors / most) * 100;
    const bar = svg("g", { "data-minute": new Date(m.at * 60000).toISOString().slice(0, 16), "data-calls": String(m.calls), "data-errors": String(m.errors) });
    bar.append(svg("title", {}, `${new Date(m.at * 60000).toISOString().slice(11, 16)}: ${m.calls} call(s), ${m.errors} error(s), mean ${m.mean_ms} ms`));
    bar.append(svg("rect", { x: i * 10 + 1, y: 110 - height, width: 8, height, class: "calls" }));
    if (m.errors) bar.append(svg("rect", { x: i * 10 + 1, y: 110 - failed, width: 8, height: failed, class: "errors" }));
    chart.append(bar);
  });
  const calls = hour.reduce((n, m) => n + m.calls, 0);
  const errors = hour.reduce((n, m) => n + m.errors, 0);
  const busiest = hour.reduce((a, b) => (b.calls > a.calls ? b : a));
  $("history-summary").textContent = `${calls} call(s) in the last hour, ${errors} answered with an error`
    + (calls ? `; the busiest minute, ${new Date(busiest.at * 60000).toISOString().slice(11, 16)} UTC, had ${busiest.calls}.` : ".");
  historyShown = true;
  $("history").hidden = false;
}

async function createKey(event) {
  event.preventDefault();
  const form = $("key-form");
  const libraries = $("key-libraries").value.split(",").map((l) => l.trim()).filter(Boolean);
  const days = Number($("key-days").value);
  try {
    const made = await route("POST", "/app/keys", {
      name: $("key-name").value,
      scopes: [...form.querySelectorAll("input[name=scope]:checked")].map((c) => c.value),
      libraries: libraries.length ? libraries : null,
      expires_days: days > 0 ? days : null,
    });
    $("new-key-value").value = made.key;
    $("new-key").hidden = false;
    $("new-key-value").focus();
    $("new-key-value").select();
    await loadKeys();
    status(`Key ${made.name} created: copy it now, it is not shown again.`);
  } catch (e) {
    status(e.message, true);
  }
}

async function revokeKey(name) {
  try {
    await route("DELETE", `/app/keys/${encodeURIComponent(name)}`);
    await loadKeys();
    status(`Key ${name} revoked.`);
  } catch (e) {
    status(e.message, true);
  }
}

async function start() {
  try {
    const session = await (await fetch("/app/session", { headers: { "X-Folio-App": "1" }, credentials: "same-origin" })).json();
    sessionAuth = session.auth;
    $("signout").hidden = !session.signed_in || !["keys", "oauth"].includes(session.auth);
    if (!session.signed_in) {
      askToSignIn(session);
      return;
    }
    if (session.name) $("who").textContent = `signed in as ${session.name}`;
    scopes = session.scopes ?? [];
    const wholeAdmin = scopes.includes("admin") && session.libraries === null;
    keyAdmin = session.auth === "keys" && wholeAdmin;
    tokenAdmin = session.auth === "oauth" && wholeAdmin;
    const info = await mcp.connect();
    if (!session.name) $("who").textContent = `${info.serverInfo?.name ?? "folio"} ${info.serverInfo?.version ?? ""}`;
    await loadLibraries();
  } catch (e) {
    if (e instanceof Refused && e.status === 401) {
      askToSignIn({ auth: sessionAuth, signin: sessionAuth === "oauth" });
      status(e.message);
    } else {
      status(`The server could not be reached: ${e.message}`, true);
    }
  }
}

/** The home view: the libraries, then the panels that follow from them
 * (formats, entities, keys, audit, history, activity). The view is marked
 * busy until every panel has its answer, for assistive technology and for
 * anything else that waits for the page to settle. */
async function loadLibraries() {
  const home = document.querySelector("main");
  home.setAttribute("aria-busy", "true");
  try {
    await loadHome();
  } finally {
    home.setAttribute("aria-busy", "false");
  }
}

async function loadHome() {
  const listed = await mcp.call("list_libraries", {});
  const rows = $("library-rows");
  const select = $("library");
  rows.replaceChildren();
  select.replaceChildren();
  for (const library of listed.libraries) {
    const row = element("tr");
    row.append(element("th", library.library, { scope: "row" }), element("td", library.document_count, { class: "n" }),
      element("td", library.chunk_count, { class: "n" }), element("td", library.model),
      element("td", "…", { class: "languages" }), element("td", "…", { class: "schema" }));
    rows.append(row);
    select.append(element("option", library.library, { value: library.library }));
    describeLibrary(library.library, row);
  }
  show(HOME);
  status(listed.libraries.length ? "" : "No library yet: ingest documents with `folio ingest`.");
  await Promise.all([listed.libraries.length && loadFormats(), listed.libraries.length && loadEntities(),
    loadKeys().catch((e) => status(e.message, true)), loadAudit().catch((e) => status(e.message, true)),
    loadHistory().catch((e) => status(e.message, true)), loadActivity()]);
}

/** A library's languages (documents per language, most first) and its
 * record schema (its fields, and which one is the text), from
 * inspect_library, into its row. */
async function describeLibrary(name, row) {
  const [languages, schema] = [row.querySelector(".languages"), row.querySelector(".schema")];
  try {
    const stats = await mcp.call("inspect_library", { library: name });
    const counts = Object.entries(stats.languages ?? {}).sort((a, b) => b[1] - a[1]);
    languages.textContent = counts.length ? counts.map(([language, n]) => `${language} ${n}`).join(", ") : "—";
    const declared = stats.record_schema;
    schema.textContent = declared
      ? `${Object.keys(declared.fields).length} fields, text ${declared.text}` + (declared.key ? `, key ${declared.key}` : "")
      : "—";
  } catch (e) {
    languages.textContent = schema.textContent = "?";
    languages.title = e.message;
  }
}

let activityTimer = null;

/** The background jobs and watched folders the caller may see (from
 * server_info), read again every second while a job runs. */
async function loadActivity() {
  clearTimeout(activityTimer);
  let info;
  try {
    info = await mcp.call("server_info", {});
  } catch {
    return;
  }
  const jobs = info.jobs ?? [];
  const jobRows = $("job-rows");
  jobRows.replaceChildren(...jobs.map((job) => {
    const row = element("tr", null, { "data-job": job.job_id });
    const { done, total, documents, failed } = job.progress;
    const progress = element("td");
    const bar = element("progress", null, { max: String(Math.max(total, 1)), value: String(Math.min(done, Math.max(total, 1))),
      "aria-label": `${job.library}: ${done} of ${total} steps` });
    progress.append(bar, `${documents} document(s)${failed ? `, ${failed} failed` : ""}`);
    const actions = element("td");
    if ((job.status === "running") && scopes.includes("ingest")) {
      const cancel = element("button", "Cancel", { type: "button", "aria-label": `Cancel the ingest into ${job.library}` });
      cancel.addEventListener("click", async () => {
        cancel.disabled = true;
        try { await mcp.call("cancel_job", { job_id: job.job_id }); } catch (e) { status(e.message, true); }
        loadActivity();
      });
      actions.append(cancel);
    }
    row.append(element("td", job.library), element("td", job.status), progress,
      element("td", job.created_at.replace("T", " ").slice(0, 19)), actions);
    return row;
  }));
  const watchRows = $("watch-rows");
  watchRows.replaceChildren(...(info.watches ?? []).map((watch) => {
    const row = element("tr");
    const failing = element("td");
    if (watch.failing.length) {
      const list = element("ul", null, { class: "failing" });
      // Each file by its path in the folder.
      const inside = (f) => (f.startsWith(watch.folder + "/") ? f.slice(watch.folder.length + 1) : f);
      list.append(...watch.failing.slice(0, 10).map((f) => element("li", inside(f))));
      failing.append(list);
    } else {
      failing.textContent = "none";
    }
    row.append(element("td", watch.folder, { dir: "auto" }), element("td", watch.library),
      element("td", watch.last_error ? `${watch.state} (${watch.last_error})` : watch.state),
      element("td", watch.changes, { class: "n" }), element("td", watch.last_change_at?.replace("T", " ").slice(0, 19) ?? "—"), failing);
    return row;
  }));
  $("jobs-table").hidden = !jobs.length;
  $("watch-table").hidden = !(info.watches ?? []).length;
  if (!$("libraries").hidden) show(HOME);
  if (jobs.some((j) => j.status === "running" || j.status === "cancelling")) activityTimer = setTimeout(loadActivity, 1000);
  return jobs;
}

let formatsAsked = 0;

/** The entities the chosen library mentions most, as buttons to their cards. */
async function loadEntities() {
  const library = $("library").value;
  const list = $("entity-list");
  let found = [];
  try {
    found = (await mcp.call("entities", { library, limit: 20 })).entities;
  } catch {
    // A library without an entity graph shows none.
  }
  if ($("library").value !== library) return;
  list.replaceChildren(...found.map((e) => {
    const item = element("li");
    const button = element("button", `${e.name ?? e.entity} · ${e.type} · ${e.mentions}`, { type: "button" });
    button.addEventListener("click", () => openEntity(e.name ?? e.entity));
    item.append(button);
    return item;
  }));
  if (!$("libraries").hidden) show(HOME);
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes = {}, text) {
  const made = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, String(value));
  if (text !== undefined) made.textContent = text;
  return made;
}

/** An entity at the centre, its related entities around it; a line's
 * width grows with the chunks the two share. */
function drawGraph(card) {
  const related = card.related.slice(0, 12);
  const size = 360, middle = size / 2, radius = 130;
  const picture = svg("svg", { viewBox: `-60 0 ${size + 120} ${size}`, role: "img", "aria-labelledby": "entity-graph-caption" });
  picture.append(svg("title", { id: "entity-graph-caption" }, `${card.name} and ${related.length} related entities`));
  const most = Math.max(1, ...related.map((r) => r.shared_chunks));
  related.forEach((r, i) => {
    const angle = (2 * Math.PI * i) / Math.max(1, related.length) - Math.PI / 2;
    const x = middle + radius * Math.cos(angle), y = middle + radius * Math.sin(angle);
    picture.append(svg("line", { x1: middle, y1: middle, x2: x, y2: y, "stroke-width": 1 + (4 * r.shared_chunks) / most }));
    const node = svg("g", { class: "node" });
    node.append(svg("circle", { cx: x, cy: y, r: 8 }), svg("text", { x, y: y + 22, "text-anchor": "middle" }, r.entity));
    picture.append(node);
  });
  const centre = svg("g", { class: "centre" });
  centre.append(svg("circle", { cx: middle, cy: middle, r: 12 }), svg("text", { x: middle, y: middle - 18, "text-anchor": "middle" }, card.name));
  picture.append(centre);
  $("entity-graph").replaceChildren(picture);
}

async function openEntity(name) {
  status("Opening…");
  try {
    const card = await mcp.call("entity", { library: $("library").value, name });
    $("entity-title").textContent = card.name;
    const aliases = card.aliases.length ? ` · also ${card.aliases.join(", ")}` : "";
    $("entity-summary").textContent = `${card.type} · ${card.mentions} mention(s) in ${card.documents} document(s)${aliases}`;
    drawGraph(card);
    $("entity-related").replaceChildren(...card.related.map((r) => {
      const item = element("li");
      const button = element("button", `${r.entity} · ${r.shared_chunks} shared`, { type: "button" });
      button.addEventListener("click", () => openEntity(r.entity));
      item.append(button);
      return item;
    }));
    $("entity-evidence").replaceChildren(...card.evidence.map((e) => {
      const item = element("li");
      item.append(element("p", e.snippet, { class: "preview" }),
        element("p", e.page ? `${e.source} · page ${e.page}` : e.source, { class: "cite" }));
      return item;
    }));
    show(["entity"]);
    status("");
    $("entity-back").focus();
  } catch (e) {
    status(e.message, true);
  }
}

async function loadFormats() {
  // Only the answer for the library chosen last fills the list.
  const asked = ++formatsAsked;
  const options = [element("option", "any", { value: "" })];
  try {
    const facets = await mcp.call("facets", { library: $("library").value, group_by: ["format"] });
    for (const group of facets.groups) {
      const format = group.key[0];
      if (format !== null && format !== undefined) options.push(element("option", `${format} (${group.count})`, { value: format }));
    }
  } catch {
    // Facets are a refinement: search works without them.
  }
  if (asked !== formatsAsked) return;
  const select = $("format");
  const chosen = select.value;
  select.replaceChildren(...options);
  if (options.some((o) => o.value === chosen)) select.value = chosen;
}

async function search(event) {
  event.preventDefault();
  const args = {
    library: $("library").value,
    query: $("query").value,
    mode: $("mode").value,
    top_k: Number($("top-k").value) || 10,
    // A page of hits for a person: the largest response budget, so that
    // the hits asked for come in one answer (an agent's default is 40,000
    // characters, about 30 passages).
    max_output_chars: 200000,
  };
  if ($("format").value) args.filter = { format: $("format").value };
  status("Searching…");
  const started = performance.now();
  try {
    const found = await mcp.call("search", args);
    lastHits = found.hits;
    renderHits(found.hits);
    pageAfter(args, found);
    status(`${found.hits.length} hit(s) in ${Math.round(performance.now() - started)} ms`);
  } catch (e) {
    status(e.message, true);
  }
}

/** Offers the next page of a search when the server says there is one. */
function pageAfter(args, found) {
  lastSearch = found.next_cursor ? { args, cursor: found.next_cursor } : null;
  $("more").hidden = !lastSearch;
}

/** The next page of the last search, after the hits shown; the first new
 * hit takes the focus. */
async function more() {
  if (!lastSearch) return;
  const { args, cursor } = lastSearch;
  status("Searching…");
  try {
    const found = await mcp.call("search", { ...args, cursor });
    if (!found.hits.length) {
      pageAfter(args, {});
      status(`${lastHits.length} hit(s): no more`);
      return;
    }
    const first = lastHits.length;
    lastHits = lastHits.concat(found.hits);
    renderHits(lastHits);
    pageAfter(args, found);
    status(`${lastHits.length} hit(s)`);
    $("hits").querySelectorAll("a")[first]?.focus();
  } catch (e) {
    status(e.message, true);
  }
}

function citation(hit) {
  const parts = [hit.source];
  if (hit.page_start) parts.push(hit.page_end && hit.page_end !== hit.page_start ? `pages ${hit.page_start}–${hit.page_end}` : `page ${hit.page_start}`);
  if (hit.section_path?.length) parts.push(hit.section_path.join(" › "));
  return parts.join(" · ");
}

function renderHits(hits) {
  const list = $("hits");
  list.replaceChildren();
  hits.forEach((hit, index) => {
    const item = element("li");
    // Each text in its own direction (Arabic, Hebrew beside Latin).
    const link = element("a", hit.title || hit.source, { href: `#hit-${index}`, "data-hit": String(index),
      "data-document": hit.document_id, dir: "auto" });
    link.addEventListener("click", (e) => { e.preventDefault(); openHit(index); });
    item.append(link, element("p", citation(hit), { class: "cite" }), element("p", hit.preview ?? hit.text ?? "", { class: "preview", dir: "auto" }));
    list.append(item);
  });
}

async function openHit(index) {
  const hit = lastHits[index];
  status("Opening…");
  try {
    const documentInfo = await mcp.call("get_document", { document_id: hit.document_id, max_chars: 200000 });
    $("document-title").textContent = documentInfo.title || documentInfo.source;
    const meta = $("document-meta");
    meta.replaceChildren();
    for (const [name, value] of [["Source", documentInfo.source], ["Format", documentInfo.format], ["Library", documentInfo.library],
      ["Pages", documentInfo.page_count], ["Chunks", documentInfo.chunk_count], ["Cited", citation(hit)]]) {
      if (value === null || value === undefined) continue;
      meta.append(element("dt", name), element("dd", value));
    }
    // The entities it mentions, each opening its card.
    const entities = (documentInfo.entities ?? []).slice(0, 20);
    $("document-entities").replaceChildren(...entities.map((e) => {
      const item = element("li");
      const button = element("button", `${e.entity} · ${e.type} · ${e.mentions}`, { type: "button" });
      button.addEventListener("click", () => openEntity(e.entity));
      item.append(button);
      return item;
    }));
    $("document-entities-box").hidden = !entities.length;
    // The chunks around the hit, for their boundaries and pages.
    let chunks = [];
    try {
      chunks = (await mcp.call("get_chunks", { chunk_id: hit.chunk_id, before: 20, after: 20 })).chunks;
    } catch {
      // The text stands without its boundaries.
    }
    renderText(documentInfo, hit, chunks);
    offerPages(documentInfo, hit);
    show(["document"]);
    $("cited")?.scrollIntoView({ block: "center" });
    status("");
    $("back").focus();
  } catch (e) {
    status(e.message, true);
  }
}

// The PDF whose pages are shown: its id, page count, the cited chunk and
// its first page, and the page on view.
let paging = null;

/** A PDF hit offers its pages as images (the cited page first). */
function offerPages(documentInfo, hit) {
  const pdf = documentInfo.format === "pdf" && documentInfo.page_count > 0;
  paging = pdf ? { id: documentInfo.document_id, count: documentInfo.page_count, chunk: hit.chunk_index,
    cited: hit.page_start ?? 1, page: null } : null;
  $("page-controls").hidden = !pdf;
  $("page-view").hidden = true;
  $("page-image").removeAttribute("src");
  $("page-show").textContent = pdf ? `Show page ${paging.cited} as an image` : "";
  $("page-previous").hidden = $("page-next").hidden = true;
}

/** Renders page `page` of the PDF on view (server-side, with the cited
 * chunk's words marked on it) from the page resource. */
async function showPage(page) {
  if (!paging || page < 1 || page > paging.count) return;
  status(`Rendering page ${page}…`);
  const uri = `folio://document/${paging.id}/page/${page}` + (paging.chunk !== undefined && paging.chunk !== null ? `?chunk=${paging.chunk}` : "");
  try {
    const read = await mcp.request("resources/read", { uri });
    const content = read.contents[0];
    const image = $("page-image");
    image.src = `data:${content.mimeType};base64,${content.blob}`;
    const marks = content._meta?.marks?.length ?? 0;
    image.alt = `Page ${page} of ${paging.count}` + (marks ? `, the cited passage marked (${marks} words)` : "");
    image.dataset.marks = String(marks);
    image.dataset.page = String(page);
    $("page-caption").textContent = `Page ${page} of ${paging.count}` + (marks ? " · the cited passage is marked in yellow" : "");
    paging.page = page;
    $("page-view").hidden = false;
    $("page-previous").hidden = page <= 1;
    $("page-next").hidden = page >= paging.count;
    status("");
  } catch (e) {
    status(e.message, true);
  }
}

/** The document's text with the cited span marked and, before each
 * chunk near it, a marker naming the chunk and its pages. Offsets count
 * characters (code points), as the server does. */
function renderText(documentInfo, hit, chunks) {
  const characters = Array.from(documentInfo.text);
  const offset = documentInfo.offset_chars;
  const start = Math.max(0, (hit.char_start ?? 0) - offset);
  const end = Math.min(characters.length, (hit.char_end ?? 0) - offset);
  const cited = end > start;
  // A boundary inside the cited span would split its mark: left out.
  const starts = new Map(chunks
    .map((c) => [c.char_start - offset, c])
    .filter(([at]) => at >= 0 && at < characters.length && !(cited && at > start && at < end)));
  const cuts = [...new Set([0, characters.length, ...starts.keys(), ...(cited ? [start, end] : [])])].sort((a, b) => a - b);
  const text = $("document-text");
  text.replaceChildren();
  for (let i = 0; i + 1 < cuts.length; i++) {
    const [from, to] = [cuts[i], cuts[i + 1]];
    const chunk = starts.get(from);
    if (chunk) {
      const pages = chunk.page_start ? (chunk.page_end && chunk.page_end !== chunk.page_start ? ` · pages ${chunk.page_start}–${chunk.page_end}` : ` · page ${chunk.page_start}`) : "";
      text.append(element("span", `chunk ${chunk.index + 1}${pages}`, { class: "boundary", "data-chunk": String(chunk.index) }));
    }
    const piece = characters.slice(from, to).join("");
    const isCited = cited && from === start;
    const parts = splitTables(piece);
    if (parts.every((part) => typeof part === "string")) {
      text.append(isCited ? element("mark", piece, { id: "cited" }) : piece);
      continue;
    }
    // Tables drawn as tables; a cited piece holding one is a marked block.
    const holder = isCited ? element("div", null, { id: "cited", class: "cited" }) : text;
    for (const part of parts) holder.append(typeof part === "string" ? part : drawTable(part));
    if (isCited) text.append(holder);
  }
}

/** `piece` as runs of text and tables: each run of two or more whole
 * lines of a Markdown table (`| … |`) becomes its rows' cells (the
 * separator line as `null`, marking the header above it), folio's `\|`
 * escapes undone; the rest stays text, newlines and all. */
function splitTables(piece) {
  const parts = [];
  let run = [];
  const flush = (newline) => {
    if (run.length >= 2) {
      parts.push(run.map((line) => {
        const cells = line.trim().slice(1, -1).split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll("\\|", "|"));
        return cells.every((cell) => /^:?-{3,}:?$/.test(cell)) ? null : cells;
      }));
    } else if (run.length) {
      parts.push(run.join("\n") + (newline ? "\n" : ""));
    }
    run = [];
  };
  const lines = piece.split("\n");
  lines.forEach((line, i) => {
    const last = i === lines.length - 1;
    if (/^\|.*\|\s*$/.test(line)) {
      run.push(line);
      if (last) flush(false);
      return;
    }
    flush(true);
    parts.push(last ? line : line + "\n");
  });
  return parts.filter((part) => part !== "");
}

/** A table of `rows`; rows above a separator are its header. */
function drawTable(rows) {
  const table = element("table", null, { class: "doc-table" });
  const separator = rows.indexOf(null);
  const head = separator > 0 ? rows.slice(0, separator) : [];
  // Every row but the header's (rows is the body whole without one).
  const body = rows.slice(separator + 1).filter(Boolean);
  if (head.length) {
    const thead = element("thead");
    for (const cells of head) {
      const row = element("tr");
      row.append(...cells.map((cell) => element("th", cell, { scope: "col" })));
      thead.append(row);
    }
    table.append(thead);
  }
  const tbody = element("tbody");
  for (const cells of body) {
    const row = element("tr");
    row.append(...cells.map((cell) => element("td", cell)));
    tbody.append(row);
  }
  table.append(tbody);
  return table;
}

async function add(event) {
  event.preventDefault();
  const library = $("add-library").value;
  status("Adding…");
  try {
    // In the background: a large folder's progress shows under Activity.
    const started = await mcp.call("ingest", { library, paths: [$("add-path").value], background: true });
    let job = started;
    await loadActivity();
    while (job.status === "running" || job.status === "cancelling") {
      await new Promise((resolve) => setTimeout(resolve, 300));
      job = (await mcp.call("jobs", { job_id: started.job_id })).jobs[0];
    }
    await loadActivity();
    if (job.status !== "completed") {
      throw new Error(job.status === "cancelled" ? `The ingest into ${library} was cancelled.`
        : job.result?.error?.message ?? (job.errors?.join("; ") || `the ingest ${job.status}`));
    }
    const report = job.result;
    const failed = (report.items ?? []).filter((i) => i.error).map((i) => `${i.source}: ${i.error.message}`);
    await loadLibraries();
    $("library").value = library;
    await loadFormats();
    status(`${report.indexed ?? 0} indexed, ${report.skipped ?? 0} unchanged, ${report.failed ?? 0} failed${failed.length ? ` (${failed.join("; ")})` : ""}`,
      (report.failed ?? 0) > 0);
  } catch (e) {
    status(e.message, true);
  }
}

async function upload(event) {
  event.preventDefault();
  const library = $("upload-library").value;
  const form = new FormData();
  form.append("library", library);
  form.append("file", $("upload-file").files[0]);
  status("Uploading…");
  try {
    const response = await fetch("/app/upload", { method: "POST", headers: { "X-Folio-App": "1" }, body: form, credentials: "same-origin" });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error?.message ?? answer.error ?? `the upload was refused (${response.status})`);
    await loadLibraries();
    $("library").value = library;
    await Promise.all([loadFormats(), loadEntities()]);
    status(`${answer.source}: ${answer.status}, ${answer.chunk_count} chunk(s) in ${answer.library}`);
  } catch (e) {
    status(e.message, true);
  }
}

// Why a sign-in at the identity provider came back without a session
// (the server says one of these words, never the provider's own text).
const SIGN_IN_FAILURES = {
  denied: "The identity provider did not grant access.",
  expired: "The sign-in took too long or was already used: sign in again.",
  refused: "The sign-in could not be checked (it was not begun in this browser, or its token does not hold here).",
  failed: "The sign-in failed at the identity provider: try again, or ask the server's administrator.",
};

/** The sign-in this server offers: a key, or the identity provider. */
function askToSignIn(session) {
  const provider = session.auth === "oauth";
  if (session.auth !== "keys" && !(provider && session.signin)) {
    show([]);
    status(provider
      ? "This server takes its identity provider's tokens, and its web app has no sign-in (the server needs --app-client-id): use an MCP client."
      : "This server asks for a shared token, which this page cannot send: use an MCP client.", true);
    return;
  }
  $("signin-key").hidden = provider;
  $("signin-provider").hidden = !provider;
  show(["signin"]);
  (provider ? $("signin-link") : $("key")).focus();
}

async function signOut() {
  try {
    await route("DELETE", "/app/session");
  } catch (e) {
    status(e.message, true);
    return;
  }
  forgetSession();
  status("Signed out.");
  await start();
}

/** The page as before signing in: no MCP session, no name, no admin views. */
function forgetSession() {
  mcp.session = null;
  $("who").textContent = "";
  $("signout").hidden = true;
  keyAdmin = tokenAdmin = false;
}

async function signIn(event) {
  event.preventDefault();
  const response = await fetch("/app/session", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Folio-App": "1" },
    body: JSON.stringify({ key: $("key").value }),
    credentials: "same-origin",
  });
  $("key").value = "";
  if (!response.ok) {
    let message = "the key was refused";
    try { message = (await response.json()).error?.message ?? message; } catch { /* keep */ }
    status(message, true);
    return;
  }
  status("");
  await start();
}

$("search-form").addEventListener("submit", search);
$("more").addEventListener("click", more);
$("signin-form").addEventListener("submit", signIn);
$("library").addEventListener("change", () => { loadFormats(); loadEntities(); });
$("entity-back").addEventListener("click", () => { show(HOME); $("entity-list").querySelector("button")?.focus(); });
$("back").addEventListener("click", () => { show(HOME); $("hits").querySelector("a")?.focus(); });
$("page-show").addEventListener("click", () => showPage(paging?.cited ?? 1));
$("page-previous").addEventListener("click", () => showPage((paging?.page ?? 2) - 1));
$("page-next").addEventListener("click", () => showPage((paging?.page ?? 0) + 1));
$("home").addEventListener("click", (e) => { e.preventDefault(); show(HOME); });
$("add-form").addEventListener("submit", add);
$("upload-form").addEventListener("submit", upload);
$("key-form").addEventListener("submit", createKey);
$("signout").addEventListener("click", signOut);
// A credential that stops holding mid-session (a token expired with
// nothing to renew it, a key revoked): the page asks to sign in again.
mcp.onSessionEnded = () => {
  forgetSession();
  askToSignIn({ auth: sessionAuth, signin: sessionAuth === "oauth" });
};
{
  // Back from the identity provider without a session: say why, once.
  const failed = new URLSearchParams(location.search).get("signin");
  if (failed) {
    history.replaceState(null, "", "/");
    status(SIGN_IN_FAILURES[failed] ?? SIGN_IN_FAILURES.failed, true);
  }
}
start();
