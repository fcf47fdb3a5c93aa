#!/usr/bin/env node
// Runs the extension in a real VS Code: code-server (VS Code 1.139 server + web workbench)
// on 127.0.0.1, shown in headless Chromium driven by playwright-core. Offline apart from
// package registries (npm for code-server and Node 24, Debian for chromium).
//
//   node test/run-code-server.mjs --mode tests [--python PY]
//       the mocha suite (out/test/index.js) in the extension host, through the
//       workbench's test payload (needs --vscode-option enable-smoke-test-driver)
//   node test/run-code-server.mjs --mode ui --screenshot docs/vscode-outline.png [--python PY]
//       the normal workbench: "Linkly: Search" from F1, a PDF opened from the explorer's
//       context menu as its linkly: view, the Outline view, a screenshot
//
// Build first (`node esbuild.mjs`). PY is a Python with linkly-ls installed (default:
// $LINKLY_PYTHON, else the repository's .venv/bin/python, else python3). Each run gets a
// fresh workspace (a PDF with bookmarks, Markdown notes, linked notes, a man page), index, HOME and user data in
// a temporary folder. Exit status 0 when everything passed.

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { format } from "node:util";
import { ensureAll, MISSING_TOOL_EXIT, MissingTool } from "./toolchain.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const EXTENSION_DIR = path.resolve(HERE, "..");
const REPO = path.resolve(EXTENSION_DIR, "..", "..");
const FIXTURES = path.join(REPO, "fixtures");
const BROWSER_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-dev-shm-usage",
  "--disable-quic",
  "--no-first-run",
  "--disable-sync",
];

function parseArgs(argv) {
  const options = { mode: "tests", timeout: 240, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === "--mode") options.mode = value();
    else if (arg === "--python") options.python = value();
    else if (arg === "--screenshot") options.screenshot = path.resolve(value());
    else if (arg === "--timeout") options.timeout = Number(value());
    else if (arg === "--vsix") options.vsix = path.resolve(value());
    else if (arg === "--keep") options.keep = true;
    else throw new Error(`unknown argument ${arg}`);
  }
  if (!["tests", "ui"].includes(options.mode)) throw new Error(`--mode is tests or ui, not ${options.mode}`);
  if (options.mode === "ui" && !options.screenshot) throw new Error("--mode ui needs --screenshot PATH");
  return options;
}

function log(message) {
  process.stderr.write(`[run-code-server] ${message}\n`);
}

function defaultPython() {
  if (process.env.LINKLY_PYTHON) return process.env.LINKLY_PYTHON;
  const venv = path.join(REPO, ".venv", "bin", "python");
  return fs.existsSync(venv) ? venv : "python3";
}

function checkPython(python) {
  const result = spawnSync(python, ["-c", "import linkly_ls.lsp.server"], { encoding: "utf8" });
  if (result.status !== 0) {
    throw new MissingTool(
      `${python} cannot import linkly_ls (${(result.stderr || result.error?.message || "").trim().split("\n").pop()}); ` +
        "pass --python with the interpreter that has linkly-ls installed (pip install -e .)",
    );
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A fresh workspace, user data, HOME and index under one temporary folder. */
function makeSandbox(python) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "linkly-vscode-"));
  const dirs = {
    root,
    workspace: path.join(root, "workspace"),
    userData: path.join(root, "user-data"),
    extensions: path.join(root, "extensions"),
    home: path.join(root, "home"),
    tmp: path.join(root, "tmp"),
    data: path.join(root, "linkly-data"),
    report: path.join(root, "test-report.jsonl"),
  };
  for (const dir of [dirs.userData, dirs.extensions, dirs.home, dirs.tmp, dirs.data]) fs.mkdirSync(dir, { recursive: true });
  const papers = path.join(dirs.workspace, "papers");
  const notes = path.join(dirs.workspace, "notes");
  fs.mkdirSync(papers, { recursive: true });
  fs.mkdirSync(notes, { recursive: true });
  fs.mkdirSync(path.join(dirs.workspace, ".vscode"));
  fs.copyFileSync(path.join(FIXTURES, "papers", "pdflatex-outline.pdf"), path.join(papers, "pdflatex-outline.pdf"));
  // a new version of a paper, outside the workspace: copied over a PDF whose view is open (extension.test.ts)
  fs.mkdirSync(path.join(root, "extra"));
  fs.copyFileSync(path.join(FIXTURES, "papers", "multicolumn.pdf"), path.join(root, "extra", "multicolumn.pdf"));
  fs.mkdirSync(path.join(dirs.workspace, "reference"));
  fs.copyFileSync(path.join(FIXTURES, "reference", "ls.1.txt"), path.join(dirs.workspace, "reference", "ls.1.txt"));
  fs.cpSync(path.join(FIXTURES, "linked-notes"), path.join(dirs.workspace, "linked"), { recursive: true });
  const rust = path.join(FIXTURES, "notes", "rust");
  for (const name of fs.readdirSync(rust).filter((file) => file.endsWith(".md")).sort()) {
    fs.copyFileSync(path.join(rust, name), path.join(notes, name));
  }
  fs.writeFileSync(
    path.join(dirs.workspace, ".vscode", "settings.json"),
    JSON.stringify(
      {
        "linkly.server.python": python,
        "linkly.dataDir": dirs.data,
        "linkly.embeddingModel": "none",
        "linkly.mcp.port": 0,
      },
      null,
      2,
    ),
  );
  fs.mkdirSync(path.join(dirs.userData, "User"), { recursive: true });
  fs.writeFileSync(
    path.join(dirs.userData, "User", "settings.json"),
    JSON.stringify(
      {
        "chat.disableAIFeatures": true,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "workbench.enableExperiments": false,
        "workbench.welcomePage.walkthroughs.openOnInstall": false,
        "security.workspace.trust.enabled": false,
        "git.enabled": false,
        "window.restoreWindows": "none",
        "files.hotExit": "off",
        "editor.stickyScroll.enabled": false,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "chat.commandCenter.enabled": false,
      },
      null,
      2,
    ),
  );
  return dirs;
}

function startCodeServer(tools, dirs, port, smokeTestDriver) {
  const args = [
    tools.entry,
    "--bind-addr",
    `127.0.0.1:${port}`,
    "--auth",
    "none",
    "--config",
    path.join(dirs.root, "code-server.yaml"),
    "--user-data-dir",
    dirs.userData,
    "--extensions-dir",
    dirs.extensions,
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    "--disable-getting-started-override",
    "--ignore-last-opened",
  ];
  if (smokeTestDriver) args.push("--vscode-option", "enable-smoke-test-driver");
  fs.writeFileSync(path.join(dirs.root, "code-server.yaml"), "auth: none\ncert: false\n");
  const env = {
    ...process.env,
    HOME: dirs.home,
    XDG_CONFIG_HOME: path.join(dirs.home, ".config"),
    XDG_DATA_HOME: path.join(dirs.home, ".local", "share"),
    XDG_CACHE_HOME: path.join(dirs.home, ".cache"),
    XDG_STATE_HOME: path.join(dirs.home, ".local", "state"),
    TMPDIR: dirs.tmp,
    EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: "http://127.0.0.1:9/gallery" }),
    // the linkly server (started by the extension host) reads no user config or index
    LINKLY_CONFIG: path.join(dirs.root, "no-linkly-config.toml"),
    LINKLY_DATA_DIR: dirs.data,
    LINKLY_VSCODE_TEST_REPORT: dirs.report,
    PASSWORD: "",
  };
  delete env.ELECTRON_RUN_AS_NODE;
  const logFile = fs.openSync(path.join(dirs.root, "code-server.log"), "a");
  // detached: a new session and process group (like setsid), so the whole tree
  // (server, extension host, linkly-ls) is killed together
  const child = spawn(tools.node, args, { cwd: dirs.workspace, env, detached: true, stdio: ["ignore", logFile, logFile] });
  fs.closeSync(logFile);
  return child;
}

/** Install the packaged extension into the sandbox, as a user would (`--install-extension x.vsix`). */
function installVsix(tools, dirs, vsix) {
  const file = vsix || path.join(EXTENSION_DIR, "linkly-vscode.vsix");
  if (!fs.existsSync(file)) {
    throw new MissingTool(`${file} is missing: package it first (npx vsce package --no-dependencies -o linkly-vscode.vsix)`);
  }
  const result = spawnSync(
    tools.node,
    [tools.entry, "--user-data-dir", dirs.userData, "--extensions-dir", dirs.extensions, "--install-extension", file, "--force"],
    { encoding: "utf8", env: { ...process.env, HOME: dirs.home, XDG_CONFIG_HOME: path.join(dirs.home, ".config"), XDG_DATA_HOME: path.join(dirs.home, ".local", "share") }, timeout: 120_000 },
  );
  if (result.status !== 0) {
    throw new Error(`installing ${file} failed:\n${result.stdout}${result.stderr}`);
  }
  log(`installed ${path.basename(file)}: ${result.stdout.trim().split("\n").pop()}`);
}

async function waitForHttp(url, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`code-server exited early with status ${child.exitCode}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`code-server did not answer ${url} within ${timeoutMs} ms`);
}

function killGroup(child) {
  if (!child || child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
      resolve();
    }, 5000);
    child.once("exit", () => {
      clearTimeout(timer);
      // the extension host and linkly-ls are in the same group: make sure they are gone too
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
      resolve();
    });
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}

async function launchBrowser(chromiumPath) {
  let playwright;
  try {
    playwright = await import("playwright-core");
  } catch (error) {
    throw new MissingTool(`playwright-core is not installed (run npm ci in editors/vscode): ${error.message}`);
  }
  const chromium = playwright.chromium ?? playwright.default.chromium;
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: BROWSER_FLAGS });
}

function printReport(file) {
  if (!fs.existsSync(file)) return { passed: 0, failed: 0, seen: false };
  let passed = 0;
  let failed = 0;
  for (const line of fs.readFileSync(file, "utf8").split("\n").filter(Boolean)) {
    const entry = JSON.parse(line);
    if (entry.event === "pass") {
      passed++;
      console.log(`  ✓ ${entry.title} (${entry.ms ?? 0} ms)`);
    } else if (entry.event === "fail") {
      failed++;
      console.log(`  ✗ ${entry.title}\n${entry.error.replace(/^/gm, "      ")}`);
    }
  }
  return { passed, failed, seen: true };
}

async function runExtensionTests(page, base, dirs, timeoutMs) {
  const host = new URL(base).host;
  const payload = [
    ["extensionDevelopmentPath", `vscode-remote://${host}${EXTENSION_DIR}`],
    ["extensionTestsPath", `vscode-remote://${host}${path.join(EXTENSION_DIR, "out", "test", "index.js")}`],
  ];
  let resolveExit;
  const exited = new Promise((resolve) => (resolveExit = resolve));
  await page.exposeFunction("codeAutomationLog", (type, args) => {
    const text = Array.isArray(args) ? format(...args) : String(args);
    process.stdout.write(`[workbench ${type}] ${text}\n`);
  });
  await page.exposeFunction("codeAutomationExit", (code) => resolveExit(code));
  const url = `${base}/?folder=${encodeURIComponent(dirs.workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  log(`opening ${url}`);
  await page.goto(url);
  const code = await Promise.race([
    exited,
    new Promise((resolve) => setTimeout(() => resolve("timeout"), timeoutMs)),
  ]);
  return code;
}

// ------------------------------------------------------------------ UI smoke test

async function runPalette(page, text) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible", timeout: 15_000 });
  await input.fill(`>${text}`);
  const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: text }).first();
  await row.waitFor({ state: "visible", timeout: 15_000 });
  await page.keyboard.press("Enter");
}

async function runUiSmokeTest(page, base, dirs, screenshot) {
  const steps = [];
  const step = (text) => {
    steps.push(text);
    log(`ui: ${text}`);
  };
  await page.goto(`${base}/?folder=${encodeURIComponent(dirs.workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
  step("workbench loaded");

  const statusItem = page.locator(".statusbar-item", { hasText: /Linkly: [1-9]\d* docs/ }).first();
  await statusItem.waitFor({ state: "visible", timeout: 120_000 });
  step(`status bar: ${(await statusItem.innerText()).trim()}`);

  // "Linkly: Search" from the command palette, typed key by key (debounced, cancelled as you type)
  await runPalette(page, "Linkly: Search");
  await page.locator(".quick-input-widget .quick-input-title", { hasText: "Linkly: Search" }).waitFor({ timeout: 15_000 });
  const searchInput = page.locator(".quick-input-widget input.input");
  await searchInput.pressSequentially("Huardest gefburn", { delay: 40 });
  const hit = page.locator(".quick-input-widget .monaco-list-row", { hasText: "pdflatex-outline.pdf" }).first();
  await hit.waitFor({ state: "visible", timeout: 20_000 });
  step("Linkly: Search listed the PDF");
  await page.keyboard.press("Escape");

  // the PDF from the explorer's context menu: "Open as Text"
  const folderRow = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "papers" }).first();
  await folderRow.waitFor({ state: "visible", timeout: 20_000 });
  await folderRow.click();
  const pdfRow = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "pdflatex-outline.pdf" }).first();
  await pdfRow.waitFor({ state: "visible", timeout: 10_000 });
  await pdfRow.click({ button: "right" });
  const menuItem = page.locator(".monaco-menu .action-item", { hasText: "Open as Text" }).first();
  await menuItem.waitFor({ state: "visible", timeout: 10_000 });
  await menuItem.hover(); // VS Code's menus act on the focused item; a synthetic click can miss it
  await page.keyboard.press("Enter");
  const tab = page.locator(".tabs-container .tab", { hasText: "pdflatex-outline.pdf.txt" }).first();
  await tab.waitFor({ state: "visible", timeout: 20_000 });
  step("explorer → Open as Text opened the linkly: view");

  // the Outline view with the PDF's bookmarks; the folders section is folded so that all
  // nine entries fit (the list renders only the rows it shows)
  const foldersHeader = page.locator(".pane-header", { hasText: /^\s*workspace/i }).first();
  if ((await foldersHeader.getAttribute("aria-expanded")) === "true") {
    await foldersHeader.click();
  }
  await runPalette(page, "Explorer: Focus on Outline View");
  const outlinePane = page.locator(".pane", { has: page.locator(".pane-header", { hasText: /outline/i }) }).first();
  const outlineRows = outlinePane.locator(".monaco-list-row");
  await outlineRows.nth(8).waitFor({ state: "visible", timeout: 20_000 });
  const names = (await outlineRows.locator(".label-name").allInnerTexts()).map((text) => text.trim());
  step(`outline: ${names.join(", ")}`);
  const expected = ["Foo", "Bar", "Baz", "Foo", "Bar", "Baz", "Foo", "Bar", "Baz"];
  if (JSON.stringify(names) !== JSON.stringify(expected)) {
    throw new Error(`the Outline view shows ${JSON.stringify(names)}, expected ${JSON.stringify(expected)}`);
  }

  // clicking the second "Foo" moves the cursor to its section
  await outlineRows.nth(3).click();
  const position = page.locator(".statusbar-item", { hasText: /Ln \d+, Col \d+/ }).first();
  await page.waitForFunction(
    () => /Ln (6[0-9]|7[0-9]),/.test(document.querySelector(".statusbar")?.textContent || ""),
    undefined,
    { timeout: 10_000 },
  );
  step(`outline click moved the cursor: ${(await position.innerText()).trim()}`);
  await page.mouse.move(5, 5);
  await page.waitForTimeout(500);
  fs.mkdirSync(path.dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot });
  step(`screenshot: ${screenshot}`);
  return steps;
}

// ------------------------------------------------------------------ main

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const python = options.python || defaultPython();
  checkPython(python);
  if (!fs.existsSync(path.join(EXTENSION_DIR, "out", "extension.js"))) {
    throw new MissingTool("out/extension.js is missing: build first with `node esbuild.mjs` in editors/vscode");
  }
  if (options.mode === "tests" && !fs.existsSync(path.join(EXTENSION_DIR, "out", "test", "index.js"))) {
    throw new MissingTool("out/test/index.js is missing: build first with `node esbuild.mjs` in editors/vscode");
  }
  const tools = ensureAll();
  const dirs = makeSandbox(python);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  log(`sandbox ${dirs.root}; code-server on ${base}`);
  let child;
  let browser;
  let status = 1;
  let page;
  try {
    if (options.mode === "ui") {
      installVsix(tools, dirs, options.vsix);
    }
    child = startCodeServer(tools, dirs, port, options.mode === "tests");
    await waitForHttp(`${base}/healthz`, child, 60_000);
    log(`code-server is up (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    browser = await launchBrowser(tools.chromium);
    const context = await browser.newContext({ viewport: { width: 1400, height: 860 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    page = await context.newPage();
    page.on("pageerror", (error) => log(`page error: ${error.message}`));
    if (options.mode === "tests") {
      const code = await runExtensionTests(page, base, dirs, options.timeout * 1000);
      const report = printReport(dirs.report);
      if (code === "timeout") {
        log(`no result from the extension host within ${options.timeout} s`);
        await page.screenshot({ path: path.join(dirs.root, "timeout.png") }).catch(() => undefined);
        status = 1;
      } else {
        status = code === 0 && report.failed === 0 && report.passed > 0 ? 0 : 1;
      }
      console.log(
        `extension-host tests: ${report.passed} passed, ${report.failed} failed (codeAutomationExit: ${code})`,
      );
    } else {
      await runUiSmokeTest(page, base, dirs, options.screenshot);
      console.log("UI smoke test: 1 passed, 0 failed");
      status = 0;
    }
  } catch (error) {
    log(`error: ${error.stack || error}`);
    if (page) {
      const shot = path.join(dirs.root, "failure.png");
      await page.screenshot({ path: shot }).catch(() => undefined);
      log(`screenshot of the failure: ${shot}`);
    }
    status = 1;
  } finally {
    await browser?.close().catch(() => undefined);
    await killGroup(child);
    if (status !== 0) {
      const serverLog = path.join(dirs.root, "code-server.log");
      if (fs.existsSync(serverLog)) {
        const lines = fs.readFileSync(serverLog, "utf8").trim().split("\n");
        log(`last lines of ${serverLog}:\n${lines.slice(-40).join("\n")}`);
      }
    }
    if (options.keep || status !== 0) {
      log(`kept ${dirs.root}`);
    } else {
      fs.rmSync(dirs.root, { recursive: true, force: true });
    }
    log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return status;
}

main().then(
  (status) => process.exit(status),
  (error) => {
    console.error(error instanceof MissingTool ? `error: ${error.message}` : error.stack || String(error));
    process.exit(error instanceof MissingTool ? MISSING_TOOL_EXIT : 1);
  },
);
