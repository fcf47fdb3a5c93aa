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
  links: "linkly.links",
  related: "linkly.related",
  reindex: "linkly.reindex",
} as const;

/** Document types whose indexed lines are the file's own lines (opened as `file:`). */
export const TEXT_DOC_TYPES = new Set(["md", "mdx", "txt", "html"]);

/** Formats that open as a `linkly:` text view from the explorer. */
export const VIEW_EXTENSIONS = new Set([".pdf", ".epub", ".docx", ".docm", ".dotx", ".dotm", ".pptx", ".pptm", ".ppsx", ".ppsm", ".potx", ".potm"]);

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

/** A backlink of `linkly.links`: where another document links to this one. */
export interface Backlink {
  doc_id: string;
  title: string;
  path: string;
  doc_type: string;
  line: number;
  text: string;
  target: string;
  target_line?: number | null;
  heading?: string | null;
}

/** An unlinked mention of `linkly.links` (`mentions: true`): a line of another document naming this one. */
export interface Mention {
  doc_id: string;
  title: string;
  path: string;
  doc_type: string;
  line: number;
  column: number;
  name: string;
  snippet: string;
  page?: number;
  section?: string;
}

export interface LinksResult extends Meta {
  doc_id: string;
  title: string;
  path: string;
  backlinks: Backlink[];
  mentions?: Mention[];
  mention_names?: string[];
  mentions_truncated?: boolean;
  counts: { links: number; links_within?: number; backlinks: number; broken: number; mentions?: number; mentioning_documents?: number };
}

export interface RelatedHit extends SearchHit {
  reason: string;
  shared_terms: string[];
}

export interface RelatedResult extends Meta {
  doc_id: string;
  title: string;
  section: { start_line: number; end_line: number };
  terms: string[];
  results: RelatedHit[];
  mode: string;
  mode_reason: string;
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
