// Linkly for VS Code: a client of the linkly-ls language server.

import * as vscode from "vscode";
import {
  copyMcpConfiguration,
  exploreCommand,
  grepInDocument,
  GrepOptions,
  openAsTextCommand,
  reindexCommand,
  showLibraries,
} from "./commands";
import { LinklyContentProvider, REPORT_SCHEME, ReportProvider } from "./content";
import { neighbourOptions, showNeighbours } from "./links";
import { documentFor } from "./navigate";
import { STATUS_REQUEST, SearchResult, ServerStatus } from "./protocol";
import { SearchPicker, SearchState, searchDocuments } from "./search";
import { findServer, ServerCommand, ServerSettings } from "./server";
import { LinklyService } from "./service";
import { StatusBar } from "./status";
import { SCHEME, docUri } from "./uris";

const RESTART_DELAY_MS = 300;

/** What `activate` returns: the extension's functions, for tests and other extensions. */
export interface LinklyApi {
  readonly service: LinklyService;
  /** resolves once the server is running (rejects with the reason it cannot run) */
  ready(): Promise<void>;
  status(): Promise<ServerStatus>;
  /** polls `linkly/status` until the first indexing run is over */
  waitForIndex(timeoutMs?: number): Promise<ServerStatus>;
  search(query: string, limit?: number): Promise<SearchResult>;
  /** the state of the open "Linkly: Search" QuickPick */
  searchState(): SearchState | undefined;
  readonly onDidUpdateSearch: vscode.Event<SearchState>;
  statusBarText(): string;
  docUri(docId: string, filePath?: string): vscode.Uri;
  viewUriForFile(file: vscode.Uri): Promise<vscode.Uri>;
  findServer(settings: ServerSettings): ServerCommand;
  grep(options: GrepOptions): ReturnType<typeof grepInDocument>;
}

let activeService: LinklyService | undefined;

export function activate(context: vscode.ExtensionContext): LinklyApi {
  const output = vscode.window.createOutputChannel("Linkly", { log: true });
  const service = (activeService = new LinklyService(output));
  const content = new LinklyContentProvider(service);
  const reports = new ReportProvider();
  const statusBar = new StatusBar(service);
  const picker = new SearchPicker(service);
  context.subscriptions.push(
    output,
    service,
    content,
    reports,
    statusBar,
    picker,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, content),
    vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, reports),
  );

  const register = (id: string, run: (...args: any[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
  register("linkly.openSearch", (query?: unknown) => {
    picker.show(typeof query === "string" ? query : "");
  });
  register("linkly.grepDocument", (options?: unknown) =>
    grepInDocument(service, options && typeof options === "object" ? (options as GrepOptions) : {}),
  );
  register("linkly.openAsText", (uri?: vscode.Uri) => openAsTextCommand(service, uri));
  register("linkly.showLibraries", () => showLibraries(service, reports));
  register("linkly.openExplore", (library?: unknown) =>
    exploreCommand(service, reports, typeof library === "string" ? library : undefined),
  );
  register("linkly.reindexLibraries", (library?: unknown) =>
    reindexCommand(service, content, typeof library === "string" ? library : undefined),
  );
  register("linkly.showRelated", (options?: unknown) => showNeighbours(service, "related", neighbourOptions(options)));
  register("linkly.showBacklinks", () => showNeighbours(service, "backlinks"));
  register("linkly.showUnlinkedMentions", () => showNeighbours(service, "mentions"));
  register("linkly.copyMcpConfig", () => copyMcpConfiguration(service));
  register("linkly.restartServer", () => service.restart());
  register("linkly.showOutput", () => output.show(true));

  // restart the server when its settings change (a burst of changes restarts once)
  let restartTimer: ReturnType<typeof setTimeout> | undefined;
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration("linkly")) {
        return;
      }
      if (restartTimer) {
        clearTimeout(restartTimer);
      }
      restartTimer = setTimeout(() => {
        output.appendLine("[linkly] settings changed: restarting the server");
        void service.restart();
      }, RESTART_DELAY_MS);
    }),
    { dispose: () => restartTimer && clearTimeout(restartTimer) },
  );

  void service.start();

  const status = () => service.request<ServerStatus>(STATUS_REQUEST, {});
  return {
    service,
    ready: async () => {
      await service.ready();
    },
    status,
    waitForIndex: async (timeoutMs = 120_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = await status();
        if (!current.indexing && current.writer) {
          return current;
        }
        if (Date.now() > deadline) {
          throw new Error(`indexing did not finish in ${timeoutMs} ms: ${JSON.stringify(current)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },
    search: (query, limit) => searchDocuments(service, query, undefined, limit),
    searchState: () => picker.state,
    onDidUpdateSearch: picker.onDidUpdate,
    statusBarText: () => statusBar.text,
    docUri,
    viewUriForFile: async (file) => {
      const found = await documentFor(service, file);
      return docUri(found.doc_id, file.fsPath);
    },
    findServer,
    grep: (options) => grepInDocument(service, options),
  };
}

export function deactivate(): Thenable<void> | undefined {
  const service = activeService;
  activeService = undefined;
  return service?.stop(); // shutdown and exit, so the server never outlives the editor
}
