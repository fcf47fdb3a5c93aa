"""The keyword index: Tantivy over chunks, with per-language analysis.

Every chunk is one Tantivy document that knows its `doc_id` and line range.
Text is analysed as lowercase, accent-folded, English-stemmed words (`body`);
French and German documents also fill a field stemmed for their language;
CJK text is indexed as character bigrams (`cjk`) so a two-character word is
found even though CJK sentences have no spaces.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import tantivy
from tantivy import Occur, Query

from linkly_ls.core.errors import LinklyError
from linkly_ls.core.search.analysis import cjk_query_terms, cjk_terms, for_keywords, without_bare_markers
from linkly_ls.core.search.chunking import Chunk
from linkly_ls.core.search.live_frequencies import LiveFrequencies
from linkly_ls.core.search.query_terms import (
    ANALYZERS,
    FIELD_ANALYZERS,
    path_query_terms,
    query_term_counts,
    reading_terms,
    word_readings,
)

log = logging.getLogger("linkly_ls.search")

#: what the index holds and how it is analysed; an index written by another version is rebuilt on open
#: (2: language fields only for documents with enough text to trust their language; 3: page and slide
#: marker lines are no words of the body; 4: a word hyphenated at a line break is also read whole, and a
#: word written against CJK characters apart from them, `analysis.for_keywords`; 5: a CJK word a line
#: break split is read whole, `analysis.cjk_terms`; 6: an EPUB chapter's marker line counts its title alone)
SCHEMA_VERSION = 6
VERSION_FILE = "linkly-schema.json"
#: field -> weight of a query term matched there
#: (title 0.3 and headings 0.2, on top of the body that usually holds them too, chosen by
#: leave-one-collection-out over 0 / 0.3 / 0.6: 0.6 and 0.4 cost LISA 2 % against plain BM25)
FIELD_BOOSTS = {"body": 1.0, "body_fr": 1.0, "body_de": 1.0, "title": 0.3, "headings": 0.2, "path": 0.3, "cjk": 1.0}
LANGUAGE_FIELDS = {"fr": "body_fr", "de": "body_de"}
#: analyzer -> the fields whose terms it makes: one reading of the query per language
QUERY_READINGS = {"lk_en": ("body", "title", "headings"), "lk_fr": ("body_fr",), "lk_de": ("body_de",)}


#: fewest words of text for a document's guessed language to get its own stemmed field: a language
#: guessed from a title or a caption is often wrong, and a wrong field scores its words a second time
LANGUAGE_FIELD_MIN_WORDS = 40


def _language_is_sure(document: IndexedChunks) -> bool:
    words = 0
    for chunk in document.chunks:
        words += len(chunk.text.split())
        if words >= LANGUAGE_FIELD_MIN_WORDS:
            return True
    return False


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("doc_id", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_integer_field("chunk", stored=True)
    builder.add_integer_field("start_line", stored=True)
    builder.add_integer_field("end_line", stored=True)
    for name, analyzer in FIELD_ANALYZERS.items():
        builder.add_text_field(name, stored=False, tokenizer_name=analyzer, index_option="freq")
    builder.add_text_field("cjk", stored=False, tokenizer_name="whitespace", index_option="freq")
    return builder.build()


class IndexBusyError(LinklyError):
    """Another process holds the index writer (a `linkly watch` or server is indexing)."""


class IndexWriteError(OSError, LinklyError):
    """Tantivy could not write the index (full disk, read-only folder, I/O error); nothing was published."""


@dataclass
class ChunkHit:
    doc_id: str
    chunk: int
    start_line: int
    end_line: int
    score: float


@dataclass
class IndexedChunks:
    """What the keyword index needs to know about one document."""

    doc_id: str
    title: str
    path: str
    language: str | None
    chunks: list[Chunk]


class KeywordIndex:
    """Tantivy index in `directory`. One writer per process; any number of readers."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.schema = _schema()
        is_new = not (directory / "meta.json").exists()
        self.index = tantivy.Index(self.schema, path=str(directory), reuse=True)
        if is_new:
            self._write_version()
        #: written by another SCHEMA_VERSION: what it holds is not what this version would index
        self.outdated = self._stored_version() != SCHEMA_VERSION
        for name, analyzer in ANALYZERS.items():
            self.index.register_tokenizer(name, analyzer)
        self._writer: tantivy.IndexWriter | None = None
        self._lock = threading.Lock()
        self._meta_stamp = self._commit_stamp()

    def _get_writer(self, wait_s: float) -> tantivy.IndexWriter:
        """The writer, waiting up to `wait_s` while another process holds it."""
        deadline = time.monotonic() + wait_s
        while self._writer is None:
            try:
                writer = self.index.writer(heap_size=96_000_000, num_threads=1)
                # A process killed while committing leaves the files it wrote but never recorded; replaying the
                # same operations would write files of the same names (a segment's deletes are named by the
                # operation's number) and fail. Tantivy clears them after a commit; each writer here (one per
                # write) also clears them before it writes, which costs about 0.2 ms.
                try:
                    writer.garbage_collect_files()
                except ValueError as error:  # the write may still succeed; if it cannot, it says why
                    log.warning("the keyword index's unused files could not be removed: %s", error)
                self._writer = writer
            except ValueError as error:
                if "LockBusy" not in str(error):
                    raise
                if time.monotonic() >= deadline:
                    raise IndexBusyError(
                        "the index is being written by another linkly process (watch, serve or an editor); "
                        "try again when it has finished"
                    ) from None
                time.sleep(0.1)
        return self._writer

    def replace(self, documents: list[IndexedChunks], deleted: list[str], wait_s: float = 30.0) -> None:
        """Delete and (re)add documents, then commit: readers see all of it or none."""
        with self._lock:
            try:
                self._write(documents, deleted, wait_s)
            except ValueError as error:
                self._writer = None  # a failed writer is dead: drop it (and its lock) so a later call starts afresh
                raise IndexWriteError(self._failure(error)) from error
        self._meta_stamp = self._commit_stamp()
        self.index.reload()

    def _failure(self, error: ValueError) -> str:
        try:
            free = f"{shutil.disk_usage(self.directory).free:,} bytes free on its disk"
        except OSError:
            free = "free space unknown"
        detail = " ".join(str(error).split())[:300]
        return f"the keyword index could not be written ({free}): {detail}"

    def _write(self, documents: list[IndexedChunks], deleted: list[str], wait_s: float) -> None:
        writer = self._get_writer(wait_s)
        for doc_id in deleted:
            writer.delete_documents_by_term("doc_id", doc_id)
        for document in documents:
            writer.delete_documents_by_term("doc_id", document.doc_id)
            language_field = LANGUAGE_FIELDS.get(document.language or "") if _language_is_sure(document) else None
            title = for_keywords(document.title)
            for chunk in document.chunks:
                body = for_keywords(without_bare_markers(chunk.text))
                fields: dict[str, object] = {
                    "doc_id": document.doc_id,
                    "chunk": chunk.number,
                    "start_line": chunk.start_line,
                    "end_line": chunk.end_line,
                    "title": title,
                    "headings": for_keywords(chunk.headings),
                    "body": body,
                    "path": document.path,
                }
                if language_field:
                    fields[language_field] = body
                terms = cjk_terms(document.title) + cjk_terms(chunk.text, across_lines=True)
                if terms:
                    fields["cjk"] = " ".join(terms)
                writer.add_document(tantivy.Document(**fields))
        writer.commit()
        writer.wait_merging_threads()
        self._writer = None

    def close(self) -> None:
        with self._lock:
            self._writer = None

    def clear_for_rebuild(self, wait_s: float = 30.0) -> None:
        """Drop every chunk and stamp the index with this SCHEMA_VERSION; the caller re-adds the documents."""
        with self._lock:
            try:
                writer = self._get_writer(wait_s)
                writer.delete_all_documents()
                writer.commit()
                writer.wait_merging_threads()
                self._writer = None
            except ValueError as error:
                self._writer = None
                raise IndexWriteError(self._failure(error)) from error
            self._write_version()
        self.outdated = False
        self._meta_stamp = self._commit_stamp()
        self.index.reload()

    def _stored_version(self) -> int:
        try:
            return int(json.loads((self.directory / VERSION_FILE).read_text(encoding="utf-8"))["schema_version"])
        except (OSError, ValueError, KeyError, TypeError):
            return 1  # indexes written before the version was recorded

    def _write_version(self) -> None:
        temporary = self.directory / (VERSION_FILE + ".tmp")
        temporary.write_text(json.dumps({"schema_version": SCHEMA_VERSION}), encoding="utf-8")
        temporary.replace(self.directory / VERSION_FILE)

    def _commit_stamp(self) -> int | None:
        try:
            return (self.directory / "meta.json").stat().st_mtime_ns
        except OSError:
            return None

    def reload_if_committed(self) -> None:
        """See another process's commit now rather than at Tantivy's own poll of the folder (about 0.5 s later)."""
        stamp = self._commit_stamp()
        if stamp != self._meta_stamp:
            self._meta_stamp = stamp
            self.index.reload()

    def search(self, query: str, limit: int, allowed_doc_ids: list[str] | None = None) -> list[ChunkHit]:
        """Best chunks for a free-text query (terms OR-ed, BM25), optionally within some documents."""
        return self.search_query(self.build_query(query), limit, allowed_doc_ids)

    def search_query(
        self,
        text_query: Query | None,
        limit: int,
        allowed_doc_ids: list[str] | None = None,
        excluded_doc_ids: list[str] | None = None,
    ) -> list[ChunkHit]:
        """Best chunks for a built query, within `allowed_doc_ids` (None: all) and outside `excluded_doc_ids`."""
        self.reload_if_committed()
        if text_query is None or limit <= 0:
            return []
        if allowed_doc_ids is not None:
            if not allowed_doc_ids:
                return []
            # the filter scores 0: a matching clause would add its own score (1) to every chunk's BM25
            allowed = Query.const_score_query(Query.term_set_query(self.schema, "doc_id", allowed_doc_ids), 0.0)
            text_query = Query.boolean_query([(Occur.Must, text_query), (Occur.Must, allowed)])
        if excluded_doc_ids:
            excluded = Query.term_set_query(self.schema, "doc_id", excluded_doc_ids)
            text_query = Query.boolean_query([(Occur.Must, text_query), (Occur.MustNot, excluded)])
        searcher = self.index.searcher()
        result = searcher.search(text_query, limit=limit, count=False)
        hits: list[ChunkHit] = []
        for score, address in result.hits:
            stored = searcher.doc(address)
            hits.append(
                ChunkHit(
                    doc_id=stored.get_first("doc_id"),
                    chunk=stored.get_first("chunk"),
                    start_line=stored.get_first("start_line"),
                    end_line=stored.get_first("end_line"),
                    score=float(score),
                )
            )
        return hits

    def build_query(self, query: str, extra_english: dict[str, float] | None = None) -> Query | None:
        """The query's terms OR-ed, each weighted by how often the query repeats it (a long request that
        names its subject five times means it, as in Lucene and bm25s). English function words are
        left out while other words remain (`english_query_terms`).

        The query is read as English, French and German (each analyzer's terms in its fields) and a
        chunk scores by the reading that matches it best, not their sum: an English document whose
        language was guessed wrong from a short text would otherwise count every word twice.
        `extra_english` adds weighted English terms (query expansion).
        """
        readings: list[Query] = []
        for analyzer_name, fields in QUERY_READINGS.items():
            english = analyzer_name == "lk_en"
            weights = query_term_counts(reading_terms(query, analyzer_name))
            if english and extra_english:
                for term, weight in extra_english.items():
                    weights[term] = weights.get(term, 0.0) + weight
            clauses = self._term_clauses(fields, weights)
            if clauses:
                readings.append(Query.boolean_query(clauses))
        clauses: list[tuple[Occur, Query]] = []
        if len(readings) == 1:
            clauses.append((Occur.Should, readings[0]))
        elif readings:
            clauses.append((Occur.Should, Query.disjunction_max_query(readings)))
        clauses += self._term_clauses(("path",), query_term_counts(path_query_terms(query)))
        clauses += self._term_clauses(("cjk",), query_term_counts(cjk_query_terms(query)))
        if not clauses:
            return None
        return Query.boolean_query(clauses)

    def all_terms_query(self, text: str) -> Query | None:
        """Chunks whose body holds every indexed term of `text` (its CJK bigrams for CJK text): the
        candidates of an exact phrase, which the index cannot match itself (it keeps no positions).
        None when `text` has no indexed term (only stopwords)."""
        cjk = cjk_query_terms(text)
        field, terms = ("cjk", cjk) if cjk else ("body", ANALYZERS[FIELD_ANALYZERS["body"]].analyze(text))
        if not terms:
            return None
        return Query.boolean_query([(Occur.Must, Query.term_query(self.schema, field, term)) for term in dict.fromkeys(terms)])

    def passages_with_every_word(
        self, query: str, doc_ids: list[str], common_path_terms: frozenset[str] = frozenset(), chunks_per_document: int = 4
    ) -> dict[str, ChunkHit]:
        """Of `doc_ids`, those with a chunk that holds every word of `query` in one of its readings
        (`word_readings`: in English in its text, title, headings or path), each with its best such chunk; a word
        of `common_path_terms` (the folders the libraries live in, in every path below them) is held by a
        path only where the text holds it. Documents crowded out of a round by others' matching chunks
        are searched again without them."""
        readings = []
        for words in word_readings(query):
            held = [
                {field: terms for field, terms in fields.items() if field != "path" or not set(terms) <= common_path_terms}
                for fields in words
            ]
            if held and all(held):
                readings.append(Query.boolean_query([(Occur.Must, self._any_field(fields)) for fields in held]))
        if not readings or not doc_ids:
            return {}
        every_word = Query.boolean_query([(Occur.Should, reading) for reading in readings])
        holding: dict[str, ChunkHit] = {}
        missing = list(doc_ids)
        while missing:
            limit = chunks_per_document * len(missing)
            hits = self.search_query(every_word, limit, missing)
            for hit in hits:
                holding.setdefault(hit.doc_id, hit)
            if len(hits) < limit:
                break
            missing = [doc_id for doc_id in missing if doc_id not in holding]
        return holding

    def _any_field(self, fields: dict[str, list[str]]) -> Query:
        """A word in any of `fields` (field -> every term it must hold there)."""
        held = [
            Query.boolean_query([(Occur.Must, Query.term_query(self.schema, field, term)) for term in terms])
            for field, terms in fields.items()
        ]
        return Query.boolean_query([(Occur.Should, query) for query in held])

    def _term_clauses(self, fields: tuple[str, ...], weights: dict[str, float]) -> list[tuple[Occur, Query]]:
        clauses: list[tuple[Occur, Query]] = []
        for field in fields:
            boost = FIELD_BOOSTS[field]
            for term, weight in weights.items():
                if boost and weight > 0:
                    term_query = Query.term_query(self.schema, field, term)
                    clauses.append((Occur.Should, Query.boost_query(term_query, boost * weight)))
        return clauses

    def num_chunks(self) -> int:
        return self.index.searcher().num_docs

    def live_frequencies(self, searcher: tantivy.Searcher) -> LiveFrequencies:
        """`searcher`'s document frequencies with deleted chunks left out, for what search says of words."""
        return LiveFrequencies(searcher, self.schema)
