// The "Linkly: ..." commands other than Search.

import * as path from "node:path";
import * as vscode from "vscode";
import { LinklyContentProvider, ReportProvider } from "./content";
import { bufferLine, documentFor, openAsText, revealLine } from "./navigate";
import {
  ExploreDirectory,
  ExploreResult,
  GrepMatch,
  GrepResult,
  LibrariesResult,
  Library,
  ReindexResult,
  STATUS_REQUEST,
  ServerCommands,
  ServerStatus,
  VIEW_EXTENSIONS,
} from "./protocol";
import { placeLabel } from "./provenance";
import { LinklyService } from "./service";
import { SCHEME } from "./uris";
import { counted } from "./plural";

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export async function reportErrors<T>(what: string, work: () => Promise<T>): Promise<T | undefined> {
  try {
    return await work();
  } catch (error) {
    void vscode.window.showErrorMessage(`Linkly: ${what}: ${errorText(error)}`);
    return undefined;
  }
}

// ---------------------------------------------------------------- grep

export interface GrepOptions {
  pattern?: string;
  caseInsensitive?: boolean;
}

interface MatchItem extends vscode.QuickPickItem {
  match: GrepMatch;
}

/** One line of the grep QuickPick: the line number, then the match's page and section and its text. */
export function matchItem(match: GrepMatch, docType: string): MatchItem {
  const place = placeLabel(docType, match.page, match.section);
  return { label: `${match.line}`, description: place ? `${place} │ ${match.text.trim()}` : match.text.trim(), match };
}

/** "Linkly: Grep in Document": regex matches in the active document, then jump to the chosen one. */
export async function grepInDocument(
  service: LinklyService,
  options: GrepOptions = {},
): Promise<GrepResult | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage("Linkly: open an indexed document (or its linkly: view) to grep in it.");
    return undefined;
  }
  const document = editor.document;
  const found = await reportErrors("grep", () => documentFor(service, document.uri));
  if (!found) {
    return undefined;
  }
  const selected = document.getText(editor.selection).trim();
  const pattern =
    options.pattern ??
    (await vscode.window.showInputBox({
      title: `Linkly: Grep in ${found.title}`,
      prompt: "Regular expression (Python syntax); prefix with (?i) to ignore case",
      value: selected && !selected.includes("\n") ? selected : "",
    }));
  if (!pattern) {
    return undefined;
  }
  const result = await reportErrors("grep", () =>
    service.command<GrepResult>(ServerCommands.grep, {
      pattern,
      doc_id: found.doc_id,
      context: 0,
      limit: 100,
      case_insensitive: options.caseInsensitive ?? false,
    }),
  );
  if (!result || options.pattern !== undefined) {
    return result; // called with a pattern (from code or tests): no UI
  }
  if (!result.matches.length) {
    void vscode.window.showInformationMessage(`Linkly: no match for /${pattern}/ in ${found.title}.`);
    return result;
  }
  const items = result.matches.map((match) => matchItem(match, found.doc_type));
  const lines = new Map<number, number>();
  const lineOf = async (match: GrepMatch) => {
    if (!lines.has(match.line)) {
      lines.set(match.line, await bufferLine(service, document, found.doc_id, match.line));
    }
    return lines.get(match.line)!;
  };
  const picker = vscode.window.createQuickPick<MatchItem>();
  picker.title = `/${pattern}/ in ${found.title}: ${result.total_matches} match${result.total_matches === 1 ? "" : "es"}${
    result.total_matches > result.matches.length ? ` (first ${result.matches.length})` : ""
  }`;
  picker.placeholder = "Filter the matching lines";
  picker.matchOnDescription = true;
  picker.items = items;
  picker.onDidChangeActive(async ([item]) => {
    if (item) {
      await revealLine(editor, await lineOf(item.match));
    }
  });
  picker.onDidAccept(async () => {
    const item = picker.selectedItems[0] ?? picker.activeItems[0];
    picker.hide();
    if (item) {
      const shown = await vscode.window.showTextDocument(document, editor.viewColumn);
      await revealLine(shown, await lineOf(item.match));
    }
  });
  picker.onDidHide(() => picker.dispose());
  picker.show();
  return result;
}

// ---------------------------------------------------------------- open as text

/** The file a command was invoked on: the explorer's selection, the active tab, or a file dialog. */
async function targetFile(uri?: vscode.Uri): Promise<vscode.Uri | undefined> {
  if (uri instanceof vscode.Uri) {
    return uri;
  }
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input as { uri?: unknown } | undefined;
  if (input && input.uri instanceof vscode.Uri && input.uri.scheme === "file") {
    return input.uri;
  }
  const chosen = await vscode.window.showOpenDialog({
    title: "Linkly: Open as Text",
    canSelectMany: false,
    filters: { Documents: [...VIEW_EXTENSIONS].map((extension) => extension.slice(1)) },
  });
  return chosen?.[0];
}

export async function openAsTextCommand(service: LinklyService, uri?: vscode.Uri): Promise<vscode.TextEditor | undefined> {
  const file = await targetFile(uri);
  if (!file) {
    return undefined;
  }
  if (file.scheme === SCHEME) {
    return vscode.window.showTextDocument(file, { preview: false });
  }
  return reportErrors(`cannot open ${path.basename(file.fsPath)} as text`, () => openAsText(service, file));
}

// ---------------------------------------------------------------- libraries and explore

export async function listLibraries(service: LinklyService): Promise<Library[]> {
  return (await service.command<LibrariesResult>(ServerCommands.listLibraries)).libraries;
}

interface LibraryItem extends vscode.QuickPickItem {
  library?: Library;
}

function libraryItem(library: Library): LibraryItem {
  const failed = library.failed_count ? `, ${library.failed_count} failed` : "";
  return {
    label: `$(library) ${library.name}`,
    description: `${counted(library.document_count, "document")}${failed}${library.description ? ` · ${library.description}` : ""}`,
    detail: library.paths.join("   "),
    library,
  };
}

/** "Linkly: Show Libraries": the libraries with their folders and counts; choosing one explores it. */
export async function showLibraries(service: LinklyService, reports: ReportProvider): Promise<Library[] | undefined> {
  const libraries = await reportErrors("list libraries", () => listLibraries(service));
  if (!libraries) {
    return undefined;
  }
  if (!libraries.length) {
    void vscode.window.showInformationMessage(
      "Linkly: no libraries yet. Open a folder, or add one to the `linkly.libraries` setting.",
    );
    return libraries;
  }
  void vscode.window
    .showQuickPick(libraries.map(libraryItem), {
      title: `Linkly: ${libraries.length} ${libraries.length === 1 ? "library" : "libraries"}`,
      placeHolder: "Choose a library to explore it",
      matchOnDescription: true,
      matchOnDetail: true,
    })
    .then((choice) => {
      if (choice?.library) {
        void exploreLibrary(service, reports, choice.library.name);
      }
    });
  return libraries;
}

function directoryLines(directories: ExploreDirectory[], depth: number, out: string[]): void {
  for (const directory of directories) {
    const name = depth === 0 ? directory.path : path.basename(directory.path);
    out.push(
      `${"  ".repeat(depth)}- \`${name}\`: ${counted(directory.file_count, "file")}, median ${counted(directory.median_word_count, "word")}`,
    );
    directoryLines(directory.children || [], depth + 1, out);
  }
}

export function exploreMarkdown(title: string, result: ExploreResult): string {
  const out: string[] = [`# ${title}`, ""];
  if (result.document_count !== undefined) {
    out.push(`${counted(result.document_count, "document")}${result.scope ? ` in ${result.scope}` : ""}.`, "");
  }
  out.push("## Types", "", "| type | documents |", "| --- | ---: |");
  for (const type of result.doc_types) {
    out.push(`| ${type.type} | ${type.count} |`);
  }
  out.push("", "## Folders", "");
  directoryLines(result.directories, 0, out);
  out.push("", "## Keywords", "");
  for (const keyword of result.keywords) {
    const titles = keyword.documents.map((document) => document.title).slice(0, 5).join("; ");
    out.push(`- **${keyword.keyword}** (${keyword.count}): ${titles}`);
  }
  out.push("", `_${result._meta?.now ?? ""}_`, "");
  return out.join("\n");
}

export async function exploreLibrary(
  service: LinklyService,
  reports: ReportProvider,
  library?: string,
): Promise<{ result: ExploreResult; editor: vscode.TextEditor } | undefined> {
  return reportErrors("explore", async () => {
    const result = await service.command<ExploreResult>(ServerCommands.explore, library ? { library } : {});
    const title = library ? `Library ${library}` : "All libraries";
    const editor = await reports.show(`Explore ${library ?? "all libraries"}`, exploreMarkdown(title, result));
    return { result, editor };
  });
}

/** "Linkly: Explore": document types, folders and keywords of one library or all of them. */
export async function exploreCommand(service: LinklyService, reports: ReportProvider, library?: string) {
  if (typeof library !== "string") {
    const libraries = await reportErrors("list libraries", () => listLibraries(service));
    if (!libraries) {
      return undefined;
    }
    const items: LibraryItem[] = [{ label: "$(globe) All libraries" }, ...libraries.map(libraryItem)];
    const choice =
      libraries.length > 0
        ? await vscode.window.showQuickPick(items, { title: "Linkly: Explore", placeHolder: "Which library?" })
        : items[0];
    if (!choice) {
      return undefined;
    }
    library = choice.library?.name;
  }
  return exploreLibrary(service, reports, library || undefined);
}

// ---------------------------------------------------------------- reindex

/** "Linkly: Reindex": re-index every library (or one), with a progress notification. */
export async function reindexCommand(
  service: LinklyService,
  content: LinklyContentProvider,
  library?: string,
): Promise<ReindexResult | undefined> {
  if (typeof library !== "string") {
    const libraries = await reportErrors("list libraries", () => listLibraries(service));
    if (!libraries) {
      return undefined;
    }
    const items: LibraryItem[] = [{ label: "$(sync) All libraries" }, ...libraries.map(libraryItem)];
    const choice =
      libraries.length > 1
        ? await vscode.window.showQuickPick(items, { title: "Linkly: Reindex", placeHolder: "Which library?" })
        : items[0];
    if (!choice) {
      return undefined;
    }
    library = choice.library?.name ?? "";
  }
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Linkly: re-indexing ${library || "all libraries"}…` },
    () => reportErrors("reindex", () => service.command<ReindexResult>(ServerCommands.reindex, library ? { library } : {})),
  );
  if (result) {
    const total = (key: "indexed" | "unchanged" | "failed" | "removed") =>
      result.reports.reduce((sum, report) => sum + report[key], 0);
    const failed = total("failed");
    const summary = `Linkly: ${total("indexed")} indexed, ${total("unchanged")} unchanged, ${total("removed")} removed, ${failed} failed.`;
    if (failed) {
      void vscode.window.showWarningMessage(summary, "Show Output").then((choice) => {
        if (choice) {
          service.output.show(true);
        }
      });
    } else {
      void vscode.window.showInformationMessage(summary);
    }
    content.refreshOpenDocuments();
  }
  return result;
}

// ---------------------------------------------------------------- MCP

export function mcpSnippet(url: string, flavour: "generic" | "vscode" = "generic"): string {
  const entry = { type: "http", url };
  const config = flavour === "vscode" ? { servers: { linkly: entry } } : { mcpServers: { linkly: entry } };
  return JSON.stringify(config, null, 2);
}

/** "Linkly: Copy MCP Configuration": a JSON snippet with the address of the server's MCP sidecar. */
export async function copyMcpConfiguration(service: LinklyService): Promise<string | undefined> {
  const status = await reportErrors("status", () => service.request<ServerStatus>(STATUS_REQUEST, {}));
  if (!status) {
    return undefined;
  }
  if (!status.mcp_url) {
    const enabled = vscode.workspace.getConfiguration("linkly").get<boolean>("mcp.enabled", true);
    const reason = status.mcp_error
      ? `the MCP server did not start: ${status.mcp_error}`
      : enabled
        ? "the MCP server is still starting; try again in a moment"
        : "the MCP server is turned off (setting `linkly.mcp.enabled`)";
    void vscode.window.showWarningMessage(`Linkly: ${reason}.`);
    return undefined;
  }
  const snippet = mcpSnippet(status.mcp_url);
  await vscode.env.clipboard.writeText(snippet);
  void vscode.window
    .showInformationMessage(
      `Linkly: copied the MCP configuration for ${status.mcp_url} (for .cursor/mcp.json, Claude Desktop and others).`,
      "Copy for VS Code mcp.json",
    )
    .then((choice) => {
      if (choice) {
        void vscode.env.clipboard.writeText(mcpSnippet(status.mcp_url!, "vscode"));
      }
    });
  return snippet;
}
