// Finding the linkly language server to start.
//
// Order: `linkly.server.path` (an executable) → `linkly.server.python` when it is
// set explicitly (`<python> -m linkly_ls`) → `linkly-ls` on PATH → `python3 -m
// linkly_ls` (then `python`). An explicit setting that does not work is reported
// as such rather than silently replaced by something else on PATH.

import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export interface ServerCommand {
  command: string;
  args: string[];
  /** which rule found it, for the output channel and error messages */
  source: string;
}

export interface ServerSettings {
  path?: string;
  python?: string;
  /** the first workspace folder, for `${workspaceFolder}` in the settings */
  workspaceFolder?: string;
}

export const INSTALL_COMMANDS = "pip install linkly-ls";
export const INSTALL_FROM_CHECKOUT = "pip install -e .";

export class ServerNotFound extends Error {
  constructor(message: string) {
    super(
      `${message}\nInstall the server with \`${INSTALL_COMMANDS}\` (or \`${INSTALL_FROM_CHECKOUT}\` in a linkly-ls ` +
        "checkout), then point `linkly.server.python` at that Python, `linkly.server.path` at its `linkly-ls`, " +
        "or put `linkly-ls` on PATH.",
    );
    this.name = "ServerNotFound";
  }
}

export function expandPath(value: string, workspaceFolder?: string): string {
  let result = value.trim();
  if (workspaceFolder) {
    result = result.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  }
  result = result.replace(/\$\{userHome\}/g, os.homedir());
  if (result === "~" || result.startsWith("~/")) {
    result = path.join(os.homedir(), result.slice(1));
  }
  return result;
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    if (process.platform === "win32") {
      return true;
    }
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on PATH (with PATHEXT on Windows). */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = (env.PATH || env.Path || "").split(path.delimiter).filter(Boolean);
  const extensions = process.platform === "win32" ? (env.PATHEXT || ".EXE;.CMD;.BAT").split(";") : [""];
  for (const dir of dirs) {
    for (const extension of extensions) {
      const candidate = path.join(dir, name + extension);
      if (isExecutableFile(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/** A command named by a setting: a path (absolute, relative or with ~), or a bare name looked up on PATH. */
function resolveCommand(value: string, workspaceFolder?: string): string | undefined {
  const expanded = expandPath(value, workspaceFolder);
  if (expanded.includes("/") || expanded.includes("\\")) {
    const absolute = path.resolve(workspaceFolder || process.cwd(), expanded);
    return isExecutableFile(absolute) ? absolute : undefined;
  }
  return findOnPath(expanded);
}

/** Whether `<python> -m linkly_ls` can start: "" when it can, else why not. */
export function checkPython(python: string): string {
  // find_spec, not import: answers in milliseconds instead of loading the whole server
  const probe = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('linkly_ls.lsp.server') else 3)";
  const result = spawnSync(python, ["-c", probe], {
    encoding: "utf8",
    timeout: 30_000,
    windowsHide: true,
  });
  if (result.error) {
    return result.error.message;
  }
  if (result.status === 3) {
    return "linkly_ls is not installed in it";
  }
  if (result.status !== 0) {
    const lines = `${result.stderr || ""}`.trim().split("\n");
    return lines[lines.length - 1] || `exit status ${result.status}`;
  }
  return "";
}

export function findServer(settings: ServerSettings): ServerCommand {
  const explicitPath = (settings.path || "").trim();
  if (explicitPath) {
    const command = resolveCommand(explicitPath, settings.workspaceFolder);
    if (!command) {
      throw new ServerNotFound(
        `\`linkly.server.path\` is "${explicitPath}", which is not an executable file.`,
      );
    }
    return { command, args: [], source: "linkly.server.path" };
  }
  const explicitPython = (settings.python || "").trim();
  if (explicitPython) {
    const python = resolveCommand(explicitPython, settings.workspaceFolder);
    if (!python) {
      throw new ServerNotFound(`\`linkly.server.python\` is "${explicitPython}", which is not an executable file.`);
    }
    const problem = checkPython(python);
    if (problem) {
      throw new ServerNotFound(
        `\`linkly.server.python\` is "${explicitPython}", but \`${python} -m linkly_ls\` cannot start: ${problem}.`,
      );
    }
    return { command: python, args: ["-m", "linkly_ls"], source: "linkly.server.python" };
  }
  const onPath = findOnPath("linkly-ls");
  if (onPath) {
    return { command: onPath, args: [], source: "linkly-ls on PATH" };
  }
  const tried: string[] = [];
  for (const name of process.platform === "win32" ? ["python", "py"] : ["python3", "python"]) {
    const python = findOnPath(name);
    if (!python) {
      continue;
    }
    const problem = checkPython(python);
    if (!problem) {
      return { command: python, args: ["-m", "linkly_ls"], source: `${name} on PATH` };
    }
    tried.push(`${python}: ${problem}`);
  }
  throw new ServerNotFound(
    "Could not find the linkly language server: `linkly.server.path` is not set, there is no `linkly-ls` on PATH" +
      (tried.length ? `, and \`-m linkly_ls\` fails with ${tried.join("; ")}.` : ", and no python3 on PATH."),
  );
}
