// "Linkly: Search": a QuickPick that searches as you type (debounced; each new query cancels
// the request still running) and opens the chosen hit at its line.

import * as vscode from "vscode";
import { SearchHit, SearchResult, ServerCommands, TEXT_DOC_TYPES } from "./protocol";
import { LinklyService } from "./service";
import { openDocumentAt } from "./navigate";
import { placeLabel } from "./provenance";

export const DEBOUNCE_MS = 150;
export const RESULT_LIMIT = 30;

export interface HitItem extends vscode.QuickPickItem {
  hit?: SearchHit;
}

/** What the open search QuickPick shows (for tests and the UI smoke test). */
export interface SearchState {
  query: string;
  busy: boolean;
  items: HitItem[];
  error?: string;
}

const ICONS: Record<string, string> = {
  pdf: "$(file-pdf)",
  epub: "$(book)",
  docx: "$(file-text)",
  pptx: "$(preview)",
  md: "$(markdown)",
  mdx: "$(markdown)",
  html: "$(globe)",
  txt: "$(note)",
};

/** The codicon of a document type, as the result lists show it. */
export function docIcon(docType: string): string {
  return ICONS[docType] ?? "$(file)";
}

export function searchDocuments(
  service: LinklyService,
  query: string,
  token?: vscode.CancellationToken,
  limit = RESULT_LIMIT,
): Promise<SearchResult> {
  return service.command<SearchResult>(ServerCommands.search, { query, limit }, token);
}

export function hitItem(hit: SearchHit): HitItem {
  const snippet = hit.snippet.replace(/\*\*/g, "").replace(/\s+/g, " ").trim();
  const where = TEXT_DOC_TYPES.has(hit.doc_type) ? "" : " · text view";
  const place = placeLabel(hit.doc_type, hit.page, hit.section);
  return {
    label: `${docIcon(hit.doc_type)} ${hit.title}`,
    description: `${hit.library} · ${hit.doc_type} · line ${hit.line}${place ? ` · ${place}` : ""}${where}${
      hit.stale ? " · changed on disk" : ""
    }`,
    detail: snippet ? `${snippet} — ${hit.path}` : hit.path,
    alwaysShow: true, // the server ranks; the QuickPick must not filter hits by its own fuzzy match
    hit,
  };
}

function isCancellation(error: unknown): boolean {
  const code = (error as { code?: number } | undefined)?.code;
  return code === -32800 || code === -32801 || error instanceof vscode.CancellationError;
}

export class SearchPicker implements vscode.Disposable {
  /** the state of the QuickPick while one is open */
  state: SearchState | undefined;
  private readonly updates = new vscode.EventEmitter<SearchState>();
  readonly onDidUpdate = this.updates.event;

  constructor(private readonly service: LinklyService) {}

  /** Show the QuickPick (optionally with a query already typed); resolves once it is shown. */
  show(initialQuery = ""): vscode.QuickPick<HitItem> {
    const picker = vscode.window.createQuickPick<HitItem>();
    picker.title = "Linkly: Search";
    picker.placeholder = "Search your libraries: type a few words";
    picker.matchOnDescription = false;
    picker.matchOnDetail = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running: vscode.CancellationTokenSource | undefined;
    let generation = 0;
    const state: SearchState = { query: "", busy: false, items: [] };
    this.state = state;

    const publish = () => {
      picker.busy = state.busy;
      picker.items = state.items;
      this.updates.fire({ ...state });
    };

    const run = async (query: string) => {
      running?.cancel();
      running?.dispose();
      const mine = ++generation;
      if (!query.trim()) {
        state.busy = false;
        state.items = [];
        state.error = undefined;
        publish();
        return;
      }
      const source = (running = new vscode.CancellationTokenSource());
      state.busy = true;
      publish();
      try {
        const result = await searchDocuments(this.service, query.trim(), source.token);
        if (mine !== generation) {
          return;
        }
        state.error = undefined;
        // a miss lists the nearest in meaning: said first, with the server's guidance, so they do not read as hits
        const missed: HitItem[] = result.miss && result.results.length
          ? [{ label: "$(search-stop) No strong match: the nearest in meaning", detail: result.guidance?.join(" "), alwaysShow: true }]
          : [];
        state.items = result.results.length
          ? [...missed, ...result.results.map(hitItem)]
          : [
              {
                label: result.notice ? `$(info) ${result.notice}` : "$(search-stop) No matches",
                detail: result.guidance?.join(" ") || `Nothing matches "${query}".`,
                alwaysShow: true,
              },
            ];
      } catch (error) {
        if (mine !== generation || isCancellation(error)) {
          return;
        }
        state.error = error instanceof Error ? error.message : String(error);
        state.items = [{ label: "$(error) Search failed", detail: state.error, alwaysShow: true }];
      }
      state.busy = false;
      publish();
    };

    picker.onDidChangeValue((value) => {
      state.query = value;
      if (timer) {
        clearTimeout(timer);
      }
      timer = setTimeout(() => void run(value), DEBOUNCE_MS);
    });
    picker.onDidAccept(async () => {
      const hit = picker.selectedItems[0]?.hit ?? picker.activeItems[0]?.hit;
      if (!hit) {
        return;
      }
      picker.hide();
      try {
        await openDocumentAt(this.service, hit);
      } catch (error) {
        void vscode.window.showErrorMessage(`Linkly: cannot open ${hit.path}: ${error instanceof Error ? error.message : error}`);
      }
    });
    picker.onDidHide(() => {
      if (timer) {
        clearTimeout(timer);
      }
      generation++;
      running?.cancel();
      running?.dispose();
      if (this.state === state) {
        this.state = undefined;
      }
      picker.dispose();
    });
    picker.show();
    if (initialQuery) {
      picker.value = initialQuery;
      state.query = initialQuery;
      void run(initialQuery);
    }
    return picker;
  }

  dispose(): void {
    this.updates.dispose();
  }
}
