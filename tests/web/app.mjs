// Drives folio's web app in a real browser (Debian's chromium through
// Playwright's library) and prints what it saw as one JSON line; the
// assertions are tests/mcp/test_web.py's. Arguments: a JSON object with
//   url        the server's base URL
//   query      what to search
//   library    the library to search in
//   format     a format to filter by (the facet offered)
//   passage    a phrase of the hit's cited passage
//   key        an access key to sign in with (keys mode), or absent
//   login      {name, password}: signs in at the identity provider (OAuth
//              mode) through the page's link and the provider's form; with
//              wait_seconds, searches again that long after signing in;
//              with sign_out, signs out at the end
//   add        {library, path}: a file to add through the page first
//   entity     an entity of the library to open the card of
//   upload     {library, file}: a file to upload through the page
//   admin      {create: {name, libraries}, revoke}: keys an admin makes and revokes
//   artifacts  a folder for screenshots
//   width      the viewport's width (default 1280)
//   top_k      hits asked for (default the page's 10)
//   more       true: the next pages are fetched with "More results" until
//              none is offered (their document ids are read)
//   watches    true: the server watches folders (their rows are read)
//   pdf        {library, file, query}: a PDF uploaded through the page, found
//              with the pdf filter and its cited page shown as an image
import { chromium } from "playwright-core";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const args = JSON.parse(process.argv[2]);
const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

const browser = await chromium.launch({
  executablePath: process.env.FOLIO_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox"],
});
const seen = { errors: [], console: [] };
try {
  const context = await browser.newContext({ viewport: { width: args.width ?? 1280, height: 900 } });
  const page = await context.newPage();
  page.on("pageerror", (e) => seen.errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") seen.console.push(m.text()); });

  // Accessibility, as axe-core reports it on the view shown (injected
  // through the browser's protocol: the page's own policy refuses inline
  // scripts).
  const audit = async () => {
    await page.evaluate(axeSource);
    return page.evaluate(async () => {
      const result = await window.axe.run(document, { resultTypes: ["violations"] });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
    });
  };

  const started = Date.now();
  await page.goto(args.url + "/");
  if (args.key) {
    await page.getByLabel("Access key", { exact: true }).waitFor();
    seen.signin_shown = true;
    seen.cookie_before = (await context.cookies()).length;
    await page.getByLabel("Access key", { exact: true }).fill(args.key);
    await page.getByRole("button", { name: "Sign in" }).click();
  }
  if (args.login) {
    const link = page.getByRole("link", { name: "Sign in with the identity provider" });
    await link.waitFor();
    seen.signin_shown = true;
    seen.cookie_before = (await context.cookies()).length;
    seen.violations_signin = await audit();
    await page.screenshot({ path: `${args.artifacts}/signin.png`, fullPage: true });
    await link.click();
    // The provider's own login page.
    await page.getByLabel("Name").waitFor();
    seen.provider_origin = new URL(page.url()).origin;
    await page.getByLabel("Name").fill(args.login.name);
    await page.getByLabel("Password").fill(args.login.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.origin === new URL(args.url).origin && url.pathname === "/");
    seen.back_at = page.url();
    seen.signed_in_at = Date.now();
  }
  await page.locator("#library-rows tr").first().waitFor();
  seen.libraries_ms = Date.now() - started;
  // Every panel of the home view has its answer (history, audit, activity
  // come after the libraries): which are shown is read from here on.
  await page.locator('main[aria-busy="false"]').waitFor({ state: "attached" });
  seen.who = await page.locator("#who").textContent();
  seen.libraries = await page.locator("#library-rows th").allTextContents();
  // Each library's row, once its languages and schema are filled in.
  await page.waitForFunction(() => [...document.querySelectorAll("#library-rows td.schema")].every((c) => c.textContent !== "…"));
  seen.library_rows = await page.locator("#library-rows tr").evaluateAll((rows) =>
    rows.map((r) => [...r.querySelectorAll("th, td")].map((c) => c.textContent)));
  seen.cookies = (await context.cookies()).map((c) => ({ name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite }));
  seen.script_sees_cookie = await page.evaluate(() => /folio_(key|session|signin)/.test(document.cookie));
  seen.history_visible = await page.locator("#history").isVisible();

  seen.add_visible = await page.locator("#add").isVisible();
  seen.activity_visible = await page.locator("#activity").isVisible();
  if (args.watches) {
    await page.locator("#watch-rows tr").first().waitFor();
    seen.watches = await page.locator("#watch-rows tr").evaluateAll((rows) => rows.map((r) => ({
      cells: [...r.cells].slice(0, 5).map((c) => c.textContent),
      failing: [...r.cells[5].querySelectorAll("li")].map((li) => li.textContent),
    })));
  }
  seen.keys_visible = await page.locator("#keys").isVisible();
  if (args.admin) {
    await page.locator("#key-rows tr").first().waitFor();
    seen.keys_before = await page.locator("#key-rows th").allTextContents();
    // The calls of the last hour, a bar a minute.
    await page.locator("#history-summary").filter({ hasText: "call(s)" }).waitFor();
    seen.history_summary = await page.locator("#history-summary").textContent();
    seen.history_bars = await page.locator("#history-chart g").evaluateAll((bars) =>
      bars.map((b) => ({ minute: b.dataset.minute, calls: Number(b.dataset.calls), errors: Number(b.dataset.errors) })));
    // The audit log's newest lines, as the page loaded them.
    seen.audit_visible = await page.locator("#audit").isVisible();
    seen.audit_rows = await page.locator("#audit-rows tr").evaluateAll((rows) =>
      rows.map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent)));
    const form = page.locator("#key-form");
    await form.getByLabel("Name").fill(args.admin.create.name);
    await form.getByLabel("Libraries (comma-separated; empty: every library)").fill(args.admin.create.libraries);
    await page.getByRole("button", { name: "Create key" }).click();
    await page.locator("#new-key").waitFor();
    seen.new_key = await page.locator("#new-key-value").inputValue();
    await page.locator("#key-rows th", { hasText: args.admin.create.name }).waitFor();
    await page.getByRole("button", { name: `Revoke ${args.admin.revoke}` }).click();
    await page.locator("#status", { hasText: "revoked" }).waitFor();
    seen.keys_after = await page.locator("#key-rows th").allTextContents();
    await page.screenshot({ path: `${args.artifacts}/keys.png`, fullPage: true });
  }
  if (args.add) {
    const form = page.locator("#add-form");
    await form.getByLabel("Into library").fill(args.add.library);
    await form.getByLabel("File or folder on the server").fill(args.add.path);
    await form.getByRole("button", { name: "Add", exact: true }).click();
    await page.locator("#status", { hasText: "indexed" }).waitFor();
    seen.add_status = await page.locator("#status").textContent();
    // The add ran as a background job, listed under Activity.
    seen.jobs = await page.locator("#job-rows tr").evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
    seen.libraries_after_add = await page.locator("#library-rows th").allTextContents();
  }
  if (args.upload) {
    const form = page.locator("#upload-form");
    await form.getByLabel("Into library").fill(args.upload.library);
    await form.getByLabel("File from this computer").setInputFiles(args.upload.file);
    await form.getByRole("button", { name: "Upload" }).click();
    await page.locator("#status", { hasText: "chunk(s) in" }).waitFor();
    seen.upload_status = await page.locator("#status").textContent();
    seen.libraries_after_upload = await page.locator("#library-rows th").allTextContents();
  }
  await page.getByLabel("Library", { exact: true }).selectOption(args.library);
  if (args.entity) {
    // The library's entities, and one's card with its graph.
    const chip = page.locator("#entity-list button", { hasText: args.entity }).first();
    await chip.waitFor();
    seen.entities = await page.locator("#entity-list button").allTextContents();
    await chip.click();
    await page.locator("#entity-title", { hasText: args.entity }).waitFor();
    seen.entity_title = await page.locator("#entity-title").textContent();
    seen.entity_summary = await page.locator("#entity-summary").textContent();
    seen.entity_related = await page.locator("#entity-related button").allTextContents();
    seen.entity_evidence = await page.locator("#entity-evidence li .preview").allTextContents();
    seen.entity_graph_nodes = await page.locator("#entity-graph svg g.node").count();
    seen.entity_graph_label = await page.locator("#entity-graph svg title").textContent();
    seen.focused_entity = await page.evaluate(() => document.activeElement?.id);
    await page.screenshot({ path: `${args.artifacts}/entity.png`, fullPage: true });
    seen.violations_entity = await audit();
    await page.getByRole("button", { name: "Back", exact: true }).click();
  }
  // The format facet fills in from the library.
  await page.locator(`#format option[value="${args.format}"]`).waitFor({ state: "attached" });
  seen.formats = await page.locator("#format option").evaluateAll((o) => o.map((x) => x.value).filter(Boolean));
  await page.getByLabel("Format").selectOption(args.format);
  await page.getByLabel("Question or words").fill(args.query);
  if (args.top_k) await page.getByLabel("Hits").fill(String(args.top_k));
  const searchStarted = Date.now();
  await page.getByRole("button", { name: "Search" }).click();
  await page.locator("#hits li").first().waitFor();
  seen.search_ms = Date.now() - searchStarted;
  seen.hits = await page.locator("#hits li a").allTextContents();
  seen.citations = await page.locator("#hits .cite").allTextContents();
  await page.screenshot({ path: `${args.artifacts}/search.png`, fullPage: true });
  if (args.more) {
    const ids = () => page.locator("#hits li a").evaluateAll((links) => links.map((a) => a.dataset.document));
    seen.pages = [await ids()];
    while (await page.locator("#more").isVisible()) {
      const shown = seen.pages.flat().length;
      await page.getByRole("button", { name: "More results" }).click();
      await page.waitForFunction((n) => document.querySelectorAll("#hits li").length > n
        || document.getElementById("more").hidden, shown);
      const added = (await ids()).slice(shown);
      seen.pages.push(added);
      if (added.length) seen.more_focused = await page.evaluate(() => document.activeElement?.dataset.hit);
    }
  }

  // Keyboard: the first hit is reached and opened with the keyboard.
  await page.locator("#hits li a").first().focus();
  await page.keyboard.press("Enter");
  await page.locator("#cited").waitFor();
  seen.cited = await page.locator("#cited").textContent();
  seen.document_title = await page.locator("#document-title").textContent();
  seen.boundaries = await page.locator("#document-text .boundary").allTextContents();
  seen.cited_visible = await page.locator("#cited").isVisible();
  seen.focused = await page.evaluate(() => document.activeElement?.id);
  seen.opened_document = await page.locator("#hits li a").first().evaluate((a) => a.dataset.document);
  seen.document_entities = await page.locator("#document-entities button").allTextContents();
  seen.document_tables = await page.locator("#document-text table").evaluateAll((tables) => tables.map((t) => ({
    head: [...t.querySelectorAll("thead tr")].map((r) => [...r.children].map((c) => c.textContent)),
    body: [...t.querySelectorAll("tbody tr")].map((r) => [...r.children].map((c) => c.textContent)),
  })));
  await page.screenshot({ path: `${args.artifacts}/document.png`, fullPage: true });
  seen.first_render_ms = Date.now() - started;

  // Accessibility, as axe-core reports it, on the document view and the
  // search view.
  seen.violations_document = await audit();
  await page.getByRole("button", { name: "Back to results" }).click();
  seen.violations_search = await audit();
  // Wider than the viewport: the elements that stick out, named.
  seen.overflows = await page.evaluate(() => {
    if (document.documentElement.scrollWidth <= window.innerWidth) return false;
    const out = [...document.querySelectorAll("body *")].filter((e) => !e.parentElement.closest(".scroll")
      && e.getBoundingClientRect().right > window.innerWidth + 1);
    return [`${document.documentElement.scrollWidth} px`, ...out.slice(0, 5).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`)];
  });

  if (args.pdf) {
    // A PDF uploaded, found, and its cited page shown as an image.
    const form = page.locator("#upload-form");
    await form.getByLabel("Into library").fill(args.pdf.library);
    await form.getByLabel("File from this computer").setInputFiles(args.pdf.file);
    await form.getByRole("button", { name: "Upload" }).click();
    await page.locator("#status", { hasText: `chunk(s) in ${args.pdf.library}` }).waitFor();
    await page.getByLabel("Library", { exact: true }).selectOption(args.pdf.library);
    await page.locator('#format option[value="pdf"]').waitFor({ state: "attached" });
    await page.getByLabel("Format").selectOption("pdf");
    await page.getByLabel("Question or words").fill(args.pdf.query);
    await page.getByRole("button", { name: "Search" }).click();
    // The hits of this search (the last search's are replaced).
    await page.locator("#hits .cite", { hasText: ".pdf" }).first().waitFor();
    seen.pdf_citations = await page.locator("#hits .cite").allTextContents();
    await page.locator("#hits li a").first().click();
    await page.locator("#cited").waitFor();
    const show = page.locator("#page-show");
    seen.page_button = await show.textContent();
    await show.click();
    const image = page.locator("#page-image");
    await page.waitForFunction(() => {
      const img = document.getElementById("page-image");
      return img.complete && img.naturalWidth > 0 && !document.getElementById("page-view").hidden;
    });
    const shown = async () => image.evaluate((img) => ({
      width: img.naturalWidth, height: img.naturalHeight, marks: Number(img.dataset.marks),
      page: Number(img.dataset.page), alt: img.alt, src: img.src.slice(img.src.indexOf(",") + 1),
    }));
    seen.page = await shown();
    seen.page_caption = await page.locator("#page-caption").textContent();
    await page.screenshot({ path: `${args.artifacts}/page.png`, fullPage: true });
    seen.violations_page = await audit();
    await page.locator("#page-next").click();
    await page.waitForFunction(() => document.getElementById("page-image").dataset.page === "2");
    seen.next_page = await shown();
    seen.next_page.src = seen.next_page.src.length;
    seen.previous_visible = await page.locator("#page-previous").isVisible();
    await page.getByRole("button", { name: "Back to results" }).click();
  }

  seen.console_before_forged = [...seen.console];
  // A forged request: another site's form post to /mcp carries no app
  // header, so the cookie is no credential.
  seen.forged_status = await page.evaluate(async () => {
    const response = await fetch("/mcp", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "forged", version: "1" } } }),
    });
    return response.status;
  });
  // A write the key may not make, sent as the page would: refused.
  if (args.key || args.login) seen.write_status = await page.evaluate(async () => {
    const form = new FormData();
    form.append("library", "docs");
    form.append("file", new Blob(["# Forged\n\nwords"]), "forged.md");
    const response = await fetch("/app/upload", { method: "POST", headers: { "X-Folio-App": "1" }, body: form });
    return response.status;
  });
  if (args.login?.wait_seconds) {
    // That long after signing in, the same search from the page: the server
    // renews the token, or the page asks to sign in again.
    await page.waitForTimeout(Math.max(0, args.login.wait_seconds * 1000 - (Date.now() - seen.signed_in_at)));
    await page.getByLabel("Question or words").fill(args.query);
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForFunction(() => document.getElementById("status").textContent !== "Searching…");
    seen.signin_later = await page.locator("#signin").isVisible();
    seen.hits_later = await page.locator("#search").isVisible() ? await page.locator("#hits li a").allTextContents() : [];
    seen.status_later = await page.locator("#status").textContent();
  }
  if (args.login?.sign_out) {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("link", { name: "Sign in with the identity provider" }).waitFor();
    seen.signed_out_cookies = (await context.cookies()).map((c) => c.name);
    seen.signed_out_libraries_visible = await page.locator("#libraries").isVisible();
    seen.after_sign_out_status = await page.evaluate(async () => (await fetch("/mcp", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "X-Folio-App": "1" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "after", version: "1" } } }),
    })).status);
  }
} catch (e) {
  seen.failure = String(e && e.stack || e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
