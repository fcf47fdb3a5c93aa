// The language client's lifecycle: find the server, start it with the `linkly` settings,
// restart it when they change, and send requests once it is running.

import * as vscode from "vscode";
import {
  CancellationToken,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
  WorkDoneProgressBegin,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from "vscode-languageclient/node";
import { ServerCommand, ServerNotFound, findServer, expandPath, INSTALL_COMMANDS } from "./server";
import { SCHEME } from "./uris";

/** languages whose files VS Code's built-in extensions already outline */
const BUILT_IN_OUTLINES = new Set(["markdown", "html"]);

export type ServiceState = "stopped" | "starting" | "running" | "failed";

export interface ProgressEvent {
  token: string | number;
  value: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;
}

function firstWorkspaceFolder(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.find((candidate) => candidate.uri.scheme === "file");
  return folder?.uri.fsPath;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The server's settings object (see linkly_ls/lsp/settings.py), from the `linkly` configuration section. */
export function serverSettings(config = vscode.workspace.getConfiguration("linkly")): Record<string, unknown> {
  const folder = firstWorkspaceFolder();
  const text = (key: string): string | undefined => {
    const value = config.get<string>(key, "");
    return typeof value === "string" && value.trim() ? value.trim() : undefined;
  };
  const dataDir = text("dataDir");
  const libraries = (config.get<unknown[]>("libraries", []) || []).map((entry) => {
    if (!entry || typeof entry !== "object") {
      return entry;
    }
    const library = { ...(entry as Record<string, unknown>) };
    const paths = library.paths;
    if (Array.isArray(paths)) {
      library.paths = paths.map((item) => (typeof item === "string" ? expandPath(item, folder) : item));
    } else if (typeof paths === "string") {
      library.paths = [expandPath(paths, folder)];
    }
    return library;
  });
  const port = config.get<number | null>("mcp.port", null);
  return {
    libraries,
    dataDir: dataDir ? expandPath(dataDir, folder) : undefined,
    embeddingModel: text("embeddingModel"),
    mcp: {
      enabled: config.get<boolean>("mcp.enabled", true),
      port: typeof port === "number" ? port : undefined,
    },
  };
}

export class LinklyService implements vscode.Disposable {
  readonly output: vscode.LogOutputChannel;
  state: ServiceState = "stopped";
  /** why the server is not running, when it failed */
  error: string | undefined;
  serverCommand: ServerCommand | undefined;

  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;
  private stopping: Promise<void> = Promise.resolve();
  private readonly stateEmitter = new vscode.EventEmitter<ServiceState>();
  readonly onDidChangeState = this.stateEmitter.event;
  private readonly progressEmitter = new vscode.EventEmitter<ProgressEvent>();
  /** `$/progress` work-done reports of the server (indexing) */
  readonly onProgress = this.progressEmitter.event;
  private readonly viewChangedEmitter = new vscode.EventEmitter<string>();
  /** a `linkly:` view the server re-indexed the document of (`workspace/textDocumentContent/refresh`) */
  readonly onViewChanged = this.viewChangedEmitter.event;

  constructor(output?: vscode.LogOutputChannel) {
    this.output = output ?? vscode.window.createOutputChannel("Linkly", { log: true });
  }

  get running(): LanguageClient | undefined {
    return this.state === "running" ? this.client : undefined;
  }

  private setState(state: ServiceState): void {
    this.state = state;
    this.stateEmitter.fire(state);
  }

  start(): Promise<LanguageClient | undefined> {
    if (!this.starting) {
      const stopping = this.stopping;
      this.starting = stopping.then(() => this.doStart());
    }
    return this.starting;
  }

  private async doStart(): Promise<LanguageClient | undefined> {
    this.error = undefined;
    this.setState("starting");
    const config = vscode.workspace.getConfiguration("linkly");
    const folder = firstWorkspaceFolder();
    let server: ServerCommand;
    try {
      server = findServer({
        path: config.get<string>("server.path", ""),
        python: config.get<string>("server.python", ""),
        workspaceFolder: folder,
      });
    } catch (error) {
      this.fail(message(error), error instanceof ServerNotFound);
      return undefined;
    }
    this.serverCommand = server;
    this.output.appendLine(`[linkly] starting ${[server.command, ...server.args].join(" ")} (found by ${server.source})`);

    const serverOptions: ServerOptions = {
      command: server.command,
      args: server.args,
      transport: TransportKind.stdio,
      options: { cwd: folder },
    };
    const clientOptions: LanguageClientOptions = {
      // linkly: views (outline of PDFs, EPUBs, ...), and the text formats linkly indexes, whose
      // open files get the server's diagnostics (why a file could not be indexed) and outline
      documentSelector: [
        { scheme: SCHEME },
        { scheme: "file", language: "markdown" },
        { scheme: "file", language: "plaintext" },
        { scheme: "file", language: "html" },
        { scheme: "file", pattern: "**/*.mdx" },
      ],
      initializationOptions: serverSettings(config),
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      middleware: {
        workspace: {
          // answer `workspace/configuration` with the same resolved object as initializationOptions
          configuration: (params, token, next) => {
            if (params.items.every((item) => item.section === "linkly")) {
              return params.items.map(() => serverSettings());
            }
            return next(params, token);
          },
        },
        // VS Code outlines Markdown and HTML itself: a second outline of the same headings
        // would show every heading twice in the Outline view and the breadcrumbs
        provideDocumentSymbols: (document, token, next) =>
          document.uri.scheme !== SCHEME && BUILT_IN_OUTLINES.has(document.languageId) ? [] : next(document, token),
        handleWorkDoneProgress: (token, value, next) => {
          this.progressEmitter.fire({ token, value });
          next(token, value);
        },
      },
    };
    const client = new LanguageClient("linkly", "Linkly", serverOptions, clientOptions);
    client.onDidChangeState((event) => {
      if (event.newState === State.Stopped && this.client === client && this.state === "running") {
        this.fail("the linkly language server stopped; see the Linkly output", false);
      } else if (event.newState === State.Running && this.client === client && this.state === "failed") {
        // the client restarted a server that stopped (a crash, the OOM killer): running again, status and all
        this.adopt(client);
        this.error = undefined;
        this.setState("running");
      }
    });
    try {
      await client.start();
    } catch (error) {
      this.fail(`linkly-ls did not start (${[server.command, ...server.args].join(" ")}): ${message(error)}`, false);
      void client.dispose(2000).catch(() => undefined);
      return undefined;
    }
    this.adopt(client);
    this.client = client;
    this.setState("running");
    return client;
  }

  /** What this extension changes in a started (or restarted) client. */
  private adopt(client: LanguageClient): void {
    // This extension serves `linkly:` through its own provider (the `linkly/read` request);
    // drop the duplicate one vscode-languageclient registers for `workspace/textDocumentContent`.
    const contentFeature = (client as unknown as { getFeature(method: string): { clear?(): void } | undefined })
      .getFeature("workspace/textDocumentContent");
    contentFeature?.clear?.();
    // so the server's asking to fetch a view again (its document re-indexed) reaches that provider, not the cleared one
    client.onRequest("workspace/textDocumentContent/refresh", (params: { uri?: string }) => {
      if (typeof params?.uri === "string") {
        this.viewChangedEmitter.fire(params.uri);
      }
      return null;
    });
  }

  private fail(reason: string, notFound: boolean): void {
    this.error = reason;
    this.output.appendLine(`[linkly] ${reason}`);
    this.setState("failed");
    const actions = notFound ? ["Copy Install Command", "Open Settings", "Show Output"] : ["Show Output"];
    void vscode.window.showErrorMessage(`Linkly: ${reason}`, ...actions).then((choice) => {
      if (choice === "Copy Install Command") {
        void vscode.env.clipboard.writeText(INSTALL_COMMANDS);
      } else if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "linkly.server");
      } else if (choice === "Show Output") {
        this.output.show(true);
      }
    });
  }

  /** The running client; waits for start-up; rejects with the reason when the server cannot run. */
  async ready(): Promise<LanguageClient> {
    const client = await this.start();
    if (!client) {
      throw new Error(this.error || "the linkly language server is not running");
    }
    return client;
  }

  /** Stop the server; a request made meanwhile starts a new one once this one is gone. */
  stop(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    const previous = this.stopping;
    this.stopping = (async () => {
      await previous;
      const client = starting ? await starting : undefined;
      if (this.client === client) {
        this.client = undefined;
      }
      if (client) {
        try {
          await client.dispose(5000);
        } catch (error) {
          this.output.appendLine(`[linkly] stopping the server: ${message(error)}`);
        }
      }
      this.setState("stopped");
    })();
    return this.stopping;
  }

  async restart(): Promise<LanguageClient | undefined> {
    await this.stop();
    return this.start();
  }

  async request<T>(method: string, params: unknown, token?: CancellationToken): Promise<T> {
    const client = await this.ready();
    // no `undefined` token argument: vscode-jsonrpc would send the params as an array [params, null]
    return token ? client.sendRequest<T>(method, params, token) : client.sendRequest<T>(method, params);
  }

  /** A server command (`linkly.search`, ...) with its one argument object; returns the tool's JSON. */
  async command<T>(command: string, argument: Record<string, unknown> = {}, token?: CancellationToken): Promise<T> {
    const client = await this.ready();
    const params = { command, arguments: [argument] };
    return (await (token
      ? client.sendRequest(ExecuteCommandRequest.type, params, token)
      : client.sendRequest(ExecuteCommandRequest.type, params))) as T;
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
    this.progressEmitter.dispose();
    this.viewChangedEmitter.dispose();
  }
}
