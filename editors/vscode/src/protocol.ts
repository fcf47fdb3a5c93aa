// Shapes of the linkly-ls answers this extension reads (see linkly_ls/lsp/ and the tools' contract).

export const READ_REQUEST = "linkly/read";
export const STATUS_REQUEST = "linkly/status";
export const URI_FOR_PATH_REQUEST = "linkly/uriForPath";

/** `workspace/executeCommand` commands of the server; each takes one object argument. */
export const ServerCommands = {
  search: "linkly.search",
  grep: "linkly.grep",
  outline: "linkly.outline",
  read: "linkly.read",
  listLibraries: "linkly.listLibraries",
  explore: "linkly.explore",
  findPaths: "linkly.findPaths",
  reindex: "linkly.reindex",
} as const;

/** Document types whose indexed lines are the file's own lines (opened as `file:`). */
export const TEXT_DOC_TYPES = new Set(["md", "mdx", "txt", "html"]);

/** Formats that open as a `linkly:` text view from the explorer. */
export const VIEW_EXTENSIONS = new Set([".pdf", ".epub", ".docx", ".pptx"]);

export interface Meta {
  _meta?: { now: string };
}

export interface SearchHit {
  doc_id: string;
  title: string;
  path: string;
  relevance: number;
  word_count: number;
  total_lines: number;
  has_outline: boolean;
  modified_at: string;
  keywords: string[];
  snippet: string;
  doc_type: string;
  library: string;
  line: number;
  passage?: { start_line: number; end_line: number };
  stale?: boolean;
  /** PDF page, EPUB chapter or PPTX slide of `line` (absent for formats without pages) */
  page?: number;
  /** heading path of the section holding `line` ("6 Scripts > 6.5 Summary"; absent without an outline) */
  section?: string;
}

export interface SearchResult extends Meta {
  results: SearchHit[];
  mode?: string;
  mode_reason?: string;
  miss?: boolean;
  guidance?: string[];
  /** why nothing can match at all (an empty index) */
  notice?: string;
}

export interface GrepMatch {
  line: number;
  end_line?: number;
  text: string;
  before: string[];
  after: string[];
  page?: number;
  section?: string;
}

export interface GrepResult extends Meta {
  doc_id: string;
  title: string;
  pattern: string;
  total_matches: number;
  total_lines: number;
  matches: GrepMatch[];
  next_offset: number | null;
}

export interface Library {
  name: string;
  description: string;
  paths: string[];
  document_count: number;
  failed_count: number;
}

export interface LibrariesResult extends Meta {
  libraries: Library[];
}

export interface ExploreDirectory {
  path: string;
  file_count: number;
  median_word_count: number;
  children: ExploreDirectory[];
}

export interface ExploreResult extends Meta {
  scope?: string;
  document_count?: number;
  doc_types: { type: string; count: number }[];
  directories: ExploreDirectory[];
  keywords: { keyword: string; count: number; documents: { doc_id: string; title: string }[] }[];
}

export interface IndexReport {
  library: string;
  indexed: number;
  unchanged: number;
  failed: number;
  removed: number;
  seconds: number;
  errors: { path: string; message: string }[];
}

export interface ReindexResult extends Meta {
  reports: IndexReport[];
}

export interface ReadResult {
  uri: string;
  location_uri: string;
  doc_id: string;
  title: string;
  path: string;
  doc_type: string;
  library: string;
  text: string;
  offset: number;
  line_count: number;
  total_lines: number;
  next_offset: number | null;
  warnings: string[];
  text_missing_reason?: string;
}

export interface UriForPathResult {
  uri: string;
  doc_id: string;
  title: string;
  doc_type: string;
}

export interface LibraryStatus {
  name: string;
  document_count: number;
  skipped_count: number;
  skipped: Record<string, number>;
  failed_count: number;
  ocr_pending_count: number;
  vector_coverage: number | null;
}

export interface ServerStatus {
  version: string;
  /** "starting" until the index is open and the server knows whether it writes it */
  state: "starting" | "indexing" | "embedding" | "ready" | "failed";
  documents: number;
  libraries: number;
  data_dir: string | null;
  indexing: boolean;
  writer: boolean;
  mcp_url: string | null;
  mcp_error: string | null;
  error: string | null;
  skipped?: number;
  failed?: number;
  ocr_pending?: number;
  vector_coverage?: number | null;
  embedding?: { documents_done: number; documents_total: number; eta_seconds: number | null } | null;
  writer_pid?: number | null;
  activity?: string;
  activity_description?: string | null;
  library_details?: LibraryStatus[];
}
