// Lets packages written for Node 22 run on the Node 20 of Debian 12: the
// MCP conformance suite imports `globSync` from `fs` (Node >= 22). Loaded
// with `node --import ./node22.mjs`; it redirects that package's `fs`
// imports to `fs22.mjs`, which is `node:fs` plus `globSync`.
import { register } from "node:module";

register("./node22-hooks.mjs", import.meta.url);
