// `node:fs` with the `globSync` of Node 22, for the patterns the
// conformance suite uses (`**/<file name>` under `cwd`).
import fs from "node:fs";
import path from "node:path";

export * from "node:fs";
export default fs;

export function globSync(pattern, options = {}) {
  const cwd = options.cwd ?? process.cwd();
  const match = /^\*\*\/([^*?[\]/]+)$/.exec(pattern);
  if (!match) throw new Error(`globSync shim: unsupported pattern ${pattern}`);
  return fs
    .readdirSync(cwd, { recursive: true })
    .filter((entry) => path.basename(entry) === match[1]);
}
