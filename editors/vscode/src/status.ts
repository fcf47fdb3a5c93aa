// The status bar item: "starting" (the server's own `state`), indexing progress (from `$/progress`,
// and `linkly/status` polled while indexing), embedding with its time left, then the document count
// and the MCP address; the tooltip has each library's documents, skipped, failed and vectors.

import * as vscode from "vscode";
import { STATUS_REQUEST, ServerStatus } from "./protocol";
import { LinklyService, ProgressEvent } from "./service";
import { counted } from "./plural";

const BUSY_POLL_MS = 1500;
const IDLE_POLL_MS = 15000;
const STARTING_POLL_MS = 300;

export class StatusBar implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  /** the last `linkly/status` answer */
  status: ServerStatus | undefined;
  private progress: { title: string; message?: string; percentage?: number } | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly updates = new vscode.EventEmitter<ServerStatus | undefined>();
  readonly onDidUpdate = this.updates.event;

  constructor(private readonly service: LinklyService) {
    this.item = vscode.window.createStatusBarItem("linkly.status", vscode.StatusBarAlignment.Left, 10);
    this.item.name = "Linkly";
    this.item.command = "linkly.openSearch";
    this.disposables.push(
      this.item,
      this.updates,
      service.onDidChangeState(() => {
        this.progress = undefined;
        this.status = undefined;
        this.render();
        this.schedule(0);
      }),
      service.onProgress((event) => this.onProgress(event)),
    );
    this.render();
    this.item.show();
  }

  get text(): string {
    return this.item.text;
  }

  private onProgress({ value }: ProgressEvent): void {
    if (value.kind === "begin") {
      this.progress = { title: value.title, message: value.message, percentage: value.percentage };
    } else if (value.kind === "report" && this.progress) {
      this.progress.message = value.message ?? this.progress.message;
      this.progress.percentage = value.percentage ?? this.progress.percentage;
    } else if (value.kind === "end") {
      this.progress = undefined;
      this.schedule(0);
    }
    this.render();
  }

  private schedule(delay: number): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    if (!this.disposed) {
      this.timer = setTimeout(() => void this.poll(), delay);
    }
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    const client = this.service.running;
    if (!client) {
      return; // polling resumes on the next state change
    }
    try {
      this.status = await client.sendRequest<ServerStatus>(STATUS_REQUEST, {});
    } catch {
      this.status = undefined;
    }
    this.render();
    this.updates.fire(this.status);
    const mcpPending = !!this.status && !this.status.mcp_url && !this.status.mcp_error && this.mcpEnabled();
    const starting = !this.status || this.status.state === "starting";
    const busy = starting || this.status?.state !== "ready" || !!this.progress || mcpPending;
    this.schedule(starting ? STARTING_POLL_MS : busy ? BUSY_POLL_MS : IDLE_POLL_MS);
  }

  private mcpEnabled(): boolean {
    return vscode.workspace.getConfiguration("linkly").get<boolean>("mcp.enabled", true);
  }

  render(): void {
    const item = this.item;
    const state = this.service.state;
    const tooltip = new vscode.MarkdownString(undefined, true);
    item.backgroundColor = undefined;
    if (state === "failed") {
      item.text = "$(error) Linkly";
      item.command = "linkly.showOutput";
      item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
      tooltip.appendText(this.service.error || "The linkly language server is not running.");
      tooltip.appendMarkdown("\n\nClick to show the Linkly output.");
      item.tooltip = tooltip;
      return;
    }
    item.command = "linkly.openSearch";
    if (state !== "running") {
      item.text = "$(sync~spin) Linkly: starting";
      item.tooltip = "Starting the linkly language server";
      return;
    }
    const status = this.status;
    if (status?.state === "failed") {
      // the server runs but could not open its index (a `linkly.dataDir` that is a file, a read-only folder)
      item.text = "$(error) Linkly: no index";
      item.command = "linkly.showOutput";
      item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
      tooltip.appendText(status.error || "The index could not be opened.");
      item.tooltip = tooltip;
      return;
    }
    if (status?.state === "starting") {
      item.text = "$(sync~spin) Linkly: opening the index";
      item.tooltip = "linkly-ls is opening its index";
      return;
    }
    if (this.progress || status?.indexing) {
      const percentage = this.progress?.percentage;
      item.text = `$(sync~spin) Linkly: indexing${percentage !== undefined ? ` ${percentage}%` : "…"}`;
      tooltip.appendText(
        [this.progress?.title, this.progress?.message].filter(Boolean).join(": ") || "Indexing your libraries",
      );
      if (status) {
        tooltip.appendMarkdown(`\n\n${counted(status.documents, "document")} indexed so far`);
      }
      item.tooltip = tooltip;
      return;
    }
    if (!status) {
      item.text = "$(library) Linkly";
      item.tooltip = "Linkly: click to search";
      return;
    }
    const mcp = status.mcp_url ? ` · MCP ${new URL(status.mcp_url).host}` : "";
    const embedding = status.state === "embedding" && status.embedding ? ` · vectors ${vectorProgress(status)}` : "";
    item.text = `$(library) Linkly: ${counted(status.documents, "doc")}${embedding}${mcp}`;
    tooltip.appendMarkdown(
      `**linkly-ls ${status.version}**: ${counted(status.documents, "document")} in ${counted(status.libraries, "library", "libraries")}\n\n`,
    );
    tooltip.appendMarkdown(`Index: \`${status.data_dir ?? "?"}\`\n\n`);
    if (status.library_details?.length) {
      tooltip.appendMarkdown("| library | documents | skipped | failed | OCR pending | vectors |\n|---|---|---|---|---|---|\n");
      for (const library of status.library_details) {
        const vectors = library.vector_coverage === null ? "off" : `${Math.round(library.vector_coverage * 100)}%`;
        tooltip.appendMarkdown(
          `| ${library.name} | ${library.document_count} | ${library.skipped_count} | ${library.failed_count} | ` +
            `${library.ocr_pending_count} | ${vectors} |\n`,
        );
      }
      tooltip.appendMarkdown("\n");
    }
    if (status.activity_description) {
      tooltip.appendMarkdown(`Writer${status.writer_pid ? ` (pid ${status.writer_pid})` : ""}: ${status.activity_description}\n\n`);
    }
    if (status.mcp_url) {
      tooltip.appendMarkdown(`MCP server: \`${status.mcp_url}\` ([copy configuration](command:linkly.copyMcpConfig))\n\n`);
    } else if (status.mcp_error) {
      tooltip.appendMarkdown(`MCP server did not start: ${status.mcp_error}\n\n`);
    }
    if (!status.writer) {
      tooltip.appendMarkdown("Another linkly process keeps this index current.\n\n");
    }
    tooltip.appendMarkdown("Click to search.");
    tooltip.isTrusted = { enabledCommands: ["linkly.copyMcpConfig"] };
    item.tooltip = tooltip;
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) {
      clearTimeout(this.timer);
    }
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}

/** `120/400 documents, about 3 min left` */
export function vectorProgress(status: ServerStatus): string {
  const embedding = status.embedding;
  if (!embedding) {
    return "";
  }
  const left = embedding.eta_seconds === null ? "" : `, about ${formatDuration(embedding.eta_seconds)} left`;
  return `${embedding.documents_done}/${embedding.documents_total}${left}`;
}

function formatDuration(seconds: number): string {
  if (seconds < 90) {
    return `${Math.max(1, Math.round(seconds))} s`;
  }
  return seconds < 5400 ? `${Math.round(seconds / 60)} min` : `${(seconds / 3600).toFixed(1)} h`;
}
