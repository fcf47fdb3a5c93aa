"""Unlinked mentions: the documents that name a document in their text without linking to it.

What counts as the document's name (as in Obsidian's "unlinked mentions"): its
title and its file name without the extension (`sailing` for `sailing.md`),
unless that is a folder's index (`index`, `README`). A name needs at least
three letters or digits (two CJK characters): shorter ones match everywhere.

A mention is whole-word and case-insensitive: the name's words in order, with
anything of one to three spaces or punctuation marks between them, so the
title "What Is Ownership?" is mentioned by "what is ownership", and the file
`linked-notes.md` by "linked notes". A name is not a mention where its
neighbours are letters or digits (`sailings`, `presailing`), except in CJK
text, which has no spaces between words.

The keyword index finds the candidates: the chunks holding every indexed term
of a name. Its terms are stemmed and it keeps no positions, so the candidate
lines are then read and matched exactly. One mention is kept per line. Left
out: the document itself and its copies, every document that already links to
it (Obsidian shows those as backlinks), and a name written inside a link on
that line (it links elsewhere, or is the text of a link).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from itertools import accumulate
from dataclasses import dataclass
from typing import TYPE_CHECKING

from linkly_ls.core.search.analysis import has_cjk
from linkly_ls.core.search.phrases import span_lines, words_of, words_pattern
from linkly_ls.core.store.catalog import DocumentRecord
from linkly_ls.core.store.records import name_key

if TYPE_CHECKING:
    from linkly_ls.core.search.keyword import KeywordIndex
    from linkly_ls.core.store.catalog import Catalog

#: file names that name a folder, not a note
GENERIC_STEMS = frozenset({"index", "readme", "_index"})
#: fewest letters or digits in a name (CJK: characters)
MIN_NAME_CHARS = 3
MIN_CJK_CHARS = 2
#: candidate chunks read per name; a name found in more is reported as `truncated`
MAX_CANDIDATE_CHUNKS = 5000
#: characters of the line shown either side of a mention
SNIPPET_CONTEXT = 70
_SEPARATOR = r"(?:[^\w\n]|_){1,3}"


@dataclass(frozen=True)
class MentionName:
    """One name of the document, and the exact pattern that finds it in a line."""

    text: str
    pattern: re.Pattern[str]


@dataclass
class Mention:
    """One line of another document that names this one."""

    doc_id: str
    path: str
    line: int
    start: int
    end: int
    name: str
    text: str

    def snippet(self) -> str:
        """The line around the mention, the mention in **bold**, shortened with … at a cut."""
        first = max(0, self.start - SNIPPET_CONTEXT)
        last = min(len(self.text), self.end + SNIPPET_CONTEXT)
        head = ("…" if first > 0 else "") + self.text[first : self.start].lstrip()
        tail = self.text[self.end : last].rstrip() + ("…" if last < len(self.text) else "")
        return f"{head}**{self.text[self.start : self.end]}**{tail}"


@dataclass
class Mentions:
    names: list[str]
    mentions: list[Mention]
    #: a name was found in more candidate chunks than were read: the list may miss some
    truncated: bool

    @property
    def documents(self) -> int:
        return len({mention.doc_id for mention in self.mentions})


def mention_names(record: DocumentRecord, aliases: list[str] | None = None) -> list[MentionName]:
    """The title, then the file name without its extension, then the front matter's aliases (as Obsidian's
    unlinked mentions count them), each once and only when long enough."""
    stem = name_key(record.path)
    candidates = [record.title] + ([] if stem in GENERIC_STEMS else [stem]) + list(aliases or [])
    names: list[MentionName] = []
    seen: set[tuple[str, ...]] = set()
    for text in candidates:
        words = tuple(word.casefold() for word in words_of(text))
        cjk = has_cjk(text)
        if not words or words in seen or sum(map(len, words)) < (MIN_CJK_CHARS if cjk else MIN_NAME_CHARS):
            continue
        seen.add(words)
        names.append(MentionName(" ".join(text.split()), words_pattern(words, _SEPARATOR, cjk)))
    return names


def find_mentions(
    catalog: Catalog, keyword: KeywordIndex, record: DocumentRecord, excluded: set[str]
) -> Mentions:
    """Every unlinked mention of `record` outside the documents in `excluded`, by path and line."""
    excluded = excluded | {record.doc_id} | set(catalog.documents_with_hash(record.content_hash))
    names = mention_names(record, catalog.aliases_of(record.doc_id))
    ranges: dict[str, set[tuple[int, int]]] = defaultdict(set)
    truncated = False
    for name in names:
        query = keyword.all_terms_query(name.text)
        hits = keyword.search_query(query, MAX_CANDIDATE_CHUNKS)
        truncated = truncated or len(hits) >= MAX_CANDIDATE_CHUNKS
        for hit in hits:
            if hit.doc_id not in excluded:
                ranges[hit.doc_id].add((hit.start_line, hit.end_line))
    summaries = catalog.summaries(sorted(ranges))
    found: list[Mention] = []
    for doc_id, spans in ranges.items():
        summary = summaries.get(doc_id)
        if summary is not None:
            found.extend(_confirm(catalog, doc_id, summary.path, spans, names))
    found.sort(key=lambda mention: (mention.path, mention.line))
    return Mentions([name.text for name in names], found, truncated)


def _confirm(
    catalog: Catalog, doc_id: str, path: str, spans: set[tuple[int, int]], names: list[MentionName]
) -> list[Mention]:
    """The candidate lines of one document that really name the document, outside its links."""
    numbers, texts = _candidate_lines(catalog, doc_id, spans)
    # one search of the lines joined (a name never spans a line break) rather than one per line
    joined = "\n".join(texts)
    starts: list[int] = []
    link_spans: dict[int, list[tuple[int, int]]] | None = None
    found: dict[int, Mention] = {}
    for name in names:  # the title first: a line it names is not listed again for the file name
        for match in name.pattern.finditer(joined):
            if link_spans is None:
                starts = [0, *accumulate(len(text) + 1 for text in texts)]
                link_spans = defaultdict(list)
                for link in catalog.links_from(doc_id):
                    if link.end > link.start:
                        link_spans[link.line].append((link.start, link.end))
            index = bisect_right(starts, match.start()) - 1
            number, start, end = numbers[index], match.start() - starts[index], match.end() - starts[index]
            if number in found or _inside(start, end, link_spans[number]):
                continue
            if not _inside(start, end, _written_links(texts[index])):
                found[number] = Mention(doc_id, path, number, start, end, name.text, texts[index])
    return [found[number] for number in sorted(found)]


def _candidate_lines(catalog: Catalog, doc_id: str, spans: set[tuple[int, int]]) -> tuple[list[int], list[str]]:
    """(line numbers, their texts) of the candidate chunks, in order, each line once."""
    ordered = sorted(spans)
    lines: dict[int, str] = {}
    for (first, _), texts in zip(ordered, span_lines(catalog, doc_id, ordered)):
        lines.update(enumerate(texts, start=first))
    numbers = sorted(lines)
    return numbers, [lines[number] for number in numbers]


#: what reads as a link on a line whatever the catalog kept of it: Markdown's `[text](target)` (a site path
#: such as `/de/install/` is no document link), `<autolinks>` and bare web addresses
_WRITTEN_LINK = re.compile(r"!?\[[^\]\n]*\]\([^)\n]*\)|<[a-z][a-z0-9+.-]*:[^>\s]*>|\b(?:https?|ftp)://[^\s<>()\[\]]+", re.IGNORECASE)


def _written_links(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in _WRITTEN_LINK.finditer(text)]


def _inside(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < span_end and end > span_start for span_start, span_end in spans)
