"""Development collections of other shapes, derived from ../shared/ir: title-only records, flat text, titles sought.

Usage:
    python bench/collection_shapes.py OUT_DIR [--ir DIR] [--shapes titles,flat,known] [COLLECTION ...]

Search quality that holds only on the shapes it was tuned on is not quality.
The shared collections are well-formed abstracts and articles; a user's
library is not always:

- `NAME-titles`: every other document (by a hash of its id, so the choice is
  fixed and independent of relevance) keeps only its title, as in catalogues
  and bibliographies where many records have no abstract. The queries and
  judgments are the collection's own. Only collections whose documents have
  titles get this shape.
- `NAME-flat`: documents and queries lower-cased and stripped of every
  character but letters, digits and spaces, as text exported from old
  systems often is: no sentence ends (so no sentence views, and long lines
  are cut between words), no capitals, no hyphens.
- `NAME-known`: each of up to 300 documents (by a hash of the id) is sought by
  its title, which is removed from every document: one relevant document per
  query, a sentence that states its subject in other words than its abstract,
  the shape of claims sought among abstracts. A title or a text that two
  documents share is not sought. Built without the judgments; only for
  collections whose documents have titles.
- `NAME-phrases`: each of up to 300 documents (by a hash of the id) is sought
  by two adjacent words of its text that no other document holds side by
  side, each word found in other documents too (the rarest such pair): the
  shape of a name, an address or a remembered phrase typed to find the one
  document that holds it (`Larkspur Lane`). Built without the judgments.

Writes OUT_DIR/<name>/{docs.jsonl, queries.jsonl, qrels.tsv[, excluded.tsv],
SOURCE.md} and OUT_DIR/README.md with each one's bm25s reference row (the
settings of the collections' README, computed as `long_requests.py` does),
which `bench/ir_eval.py OUT_DIR/<name>` reads. Needs `bm25s` and `PyStemmer`
(`pip install bm25s==0.3.16 PyStemmer==3.1.0`). The data is never committed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

from linkly_ls.core.search import evaluation

sys.path.insert(0, str(Path(__file__).resolve().parent))
from long_requests import bm25s_reference  # noqa: E402

SHARED_IR = Path(__file__).resolve().parents[1].parent / "shared" / "ir"
SHAPES = ("titles", "flat", "known", "phrases")
#: the collections each shape is derived from by default (titles: those whose documents have titles)
DEFAULT_SOURCES = {
    "titles": ("cranfield", "lisa", "nfcorpus"),
    "flat": ("cranfield", "medline", "lisa"),
    "known": ("cranfield", "lisa", "nfcorpus"),
    "phrases": ("cranfield", "lisa", "medline", "nfcorpus", "time"),
}
#: most documents sought by their title in the `known` shape
KNOWN_ITEMS = 300
_NOT_WORD = re.compile(r"[^\w\s]|_", re.UNICODE)


def keeps_title_only(doc_id: str) -> bool:
    """Half the documents, chosen by a hash of the id (fixed, and blind to the judgments)."""
    return hashlib.blake2b(doc_id.encode("utf-8"), digest_size=1).digest()[0] % 2 == 0


def flat(text: str) -> str:
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


def derive(collection: evaluation.Collection, shape: str) -> evaluation.Collection:
    if shape == "titles":
        docs = [
            {**doc, "text": ""} if keeps_title_only(doc["id"]) and doc.get("title", "").strip() else doc
            for doc in collection.docs
        ]
        queries = collection.queries
    elif shape == "flat":
        docs = [{**doc, "title": flat(doc.get("title", "")), "text": flat(doc["text"])} for doc in collection.docs]
        queries = [{**query, "text": flat(query["text"])} for query in collection.queries]
    elif shape == "known":
        return known_items(collection)
    elif shape == "phrases":
        return rare_phrases(collection)
    else:
        raise ValueError(f"unknown shape {shape!r}")
    return evaluation.Collection(f"{collection.name}-{shape}", docs, queries, collection.qrels, collection.excluded)


def known_items(collection: evaluation.Collection) -> evaluation.Collection:
    """Documents without their titles; up to KNOWN_ITEMS of them sought by their title."""
    parts = {doc["id"]: _title_and_text(doc) for doc in collection.docs}
    titles = Counter(title.lower() for title, _ in parts.values())
    texts = Counter(" ".join(text.split()) for _, text in parts.values())
    queries, qrels = [], {}
    for doc_id in sorted(parts, key=lambda doc_id: hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest()):
        title, text = parts[doc_id]
        unique = titles[title.lower()] == 1 and texts[" ".join(text.split())] == 1  # one answer, not dropped as a copy
        if len(queries) < KNOWN_ITEMS and unique and len(title.split()) >= 4 and len(text.split()) >= 20:
            queries.append({"id": doc_id, "text": title})
            qrels[doc_id] = {doc_id: 1}
    docs = [{"id": doc["id"], "title": "", "text": parts[doc["id"]][1]} for doc in collection.docs]
    queries.sort(key=lambda query: query["id"])
    return evaluation.Collection(f"{collection.name}-known", docs, queries, qrels, {})


_WORD = re.compile(r"[^\W\d_]{3,}")


def rare_phrases(collection: evaluation.Collection) -> evaluation.Collection:
    """Up to KNOWN_ITEMS documents, each sought by the rarest pair of adjacent words that it alone holds
    side by side, both words held by other documents too (English stop words never part of it)."""
    from linkly_ls.core.search.analysis import SNOWBALL_ENGLISH_STOPWORDS

    stop = set(SNOWBALL_ENGLISH_STOPWORDS)
    word_lists = {doc["id"]: _WORD.findall(f"{doc.get('title', '')}\n{doc['text']}") for doc in collection.docs}
    word_df: Counter[str] = Counter()
    pair_df: Counter[tuple[str, str]] = Counter()
    for words in word_lists.values():
        lowered = [word.lower() for word in words]
        word_df.update(set(lowered))
        pair_df.update(set(zip(lowered, lowered[1:])))
    queries, qrels = [], {}
    for doc_id in sorted(word_lists, key=lambda doc_id: hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest()):
        words = word_lists[doc_id]
        pairs = [
            (word_df[a.lower()] + word_df[b.lower()], a, b)
            for a, b in zip(words, words[1:])
            if pair_df[(a.lower(), b.lower())] == 1 and word_df[a.lower()] >= 2 and word_df[b.lower()] >= 2
            and a.lower() not in stop and b.lower() not in stop and a.lower() != b.lower()
        ]
        if pairs and len(queries) < KNOWN_ITEMS:
            _, a, b = min(pairs)
            queries.append({"id": doc_id, "text": f"{a} {b}"})
            qrels[doc_id] = {doc_id: 1}
    queries.sort(key=lambda query: query["id"])
    return evaluation.Collection(f"{collection.name}-phrases", collection.docs, queries, qrels, {})


def _title_and_text(doc: dict) -> tuple[str, str]:
    """The title on one line, and the text without the title some collections repeat at its start."""
    title = " ".join(doc.get("title", "").split())
    return title, _without_title(doc["text"], title)


def _without_title(text: str, title: str) -> str:
    """The text without the title some collections repeat at its start."""
    flat_text = " ".join(text.split())
    return flat_text[len(title):].strip() if title and flat_text.lower().startswith(title.lower()) else text


def has_titles(collection: evaluation.Collection) -> bool:
    titled = sum(1 for doc in collection.docs if doc.get("title", "").strip())
    return titled >= 0.9 * len(collection.docs)


def write(collection: evaluation.Collection, folder: Path, source: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("docs.jsonl", collection.docs), ("queries.jsonl", collection.queries)):
        with (folder / name).open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in rows)
    (folder / "qrels.tsv").write_text(
        "".join(f"{q}\t{d}\t{g}\n" for q, grades in collection.qrels.items() for d, g in grades.items()), encoding="utf-8"
    )
    if collection.excluded:
        (folder / "excluded.tsv").write_text(
            "".join(f"{q}\t{d}\n" for q, docs in collection.excluded.items() for d in sorted(docs)), encoding="utf-8"
        )
    shape = collection.name.rsplit("-", 1)[1]
    description = {
        "titles": "every other document (by a hash of its id) reduced to its title",
        "flat": "documents and queries lower-cased, everything but letters, digits and spaces removed",
        "known": "titles removed from the documents; up to 300 documents each sought by its title",
        "phrases": "up to 300 documents each sought by the rarest two adjacent words only it holds side by side",
    }[shape]
    (folder / "SOURCE.md").write_text(f"Derived from `{source}` by `bench/collection_shapes.py`: {description}.\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write the collections into (outside the repository)")
    parser.add_argument("sources", nargs="*", help="source collection names (default: per shape, see the docstring)")
    parser.add_argument("--ir", type=Path, default=SHARED_IR, help="the labelled collections to derive from")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated: " + ",".join(SHAPES))
    args = parser.parse_intermixed_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    readme = args.out / "README.md"
    rows = {}
    if readme.exists():
        for line in readme.read_text(encoding="utf-8").splitlines():
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if line.startswith("|") and len(cells) == 4 and re.fullmatch(r"[0-9.]+", cells[1]):
                rows[cells[0]] = line
    for shape in [part.strip() for part in args.shapes.split(",") if part.strip()]:
        if shape not in SHAPES:
            parser.error(f"unknown shape {shape!r} (known: {', '.join(SHAPES)})")
        for name in args.sources or DEFAULT_SOURCES[shape]:
            source = evaluation.load_collection(args.ir / name)
            if shape in ("titles", "known") and not has_titles(source):
                print(f"{name}: its documents have no titles; no {shape} shape", file=sys.stderr)
                continue
            derived = derive(source, shape)
            write(derived, args.out / derived.name, name)
            reference = bm25s_reference(derived)
            rows[derived.name] = (f"| {derived.name} | {reference['ndcg10']:.4f} | {reference['mrr10']:.4f} | {reference['recall100']:.4f} |")
            print(f"{derived.name}: {len(derived.docs)} documents, {len(derived.queries)} queries; bm25s nDCG@10 "
                  f"{reference['ndcg10']:.4f} (the source's: {source.reference.get('ndcg10', float('nan')):.4f})", flush=True)
    readme.write_text(
        "| folder | nDCG@10 | MRR@10 | Recall@100 |\n|---|---:|---:|---:|\n" + "".join(rows[name] + "\n" for name in sorted(rows)),
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
