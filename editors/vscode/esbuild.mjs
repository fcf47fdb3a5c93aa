// Bundles the extension (out/extension.js) and the extension-host test suite (out/test/index.js).
//   node esbuild.mjs               development build (source maps)
//   node esbuild.mjs --production  minified extension only, for `vsce package`
import * as esbuild from "esbuild";
import fs from "node:fs";

const production = process.argv.includes("--production");
const common = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"],
  sourcemap: !production,
  minify: production,
  logLevel: "warning",
};

await esbuild.build({ ...common, entryPoints: ["src/extension.ts"], outfile: "out/extension.js" });
if (production) {
  fs.rmSync("out/extension.js.map", { force: true });
}
if (!production) {
  await esbuild.build({
    ...common,
    entryPoints: ["test/suite/index.ts"],
    outfile: "out/test/index.js",
    // mocha is loaded from node_modules in the extension host
    external: ["vscode", "mocha"],
  });
}
