// Module hooks of node22.mjs: `fs` as the conformance suite imports it.
import fs from "node:fs";

const shim = new URL("./fs22.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (fs.globSync === undefined && (specifier === "fs" || specifier === "node:fs")
      && context.parentURL?.includes("/node_modules/@modelcontextprotocol/conformance/")) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}
