// Prints an HTML page to PDF in Debian's chromium (Playwright's library):
// a PDF as a browser makes it, with its text shaped and laid out (right to
// left text in visual order). Argument: a JSON object {html, path}.
import { chromium } from "playwright-core";

const { html, path } = JSON.parse(process.argv[2]);
const browser = await chromium.launch({
  executablePath: process.env.FOLIO_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox"],
});
try {
  const page = await browser.newPage();
  await page.setContent(html);
  await page.pdf({ path, format: "A4" });
} finally {
  await browser.close();
}
