"""`find_related`: a smaller limit gives the first results of a larger one."""

from __future__ import annotations

from pathlib import Path

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.links.related import find_related
from linkly_ls.core.store.records import make_doc_id


def test_a_smaller_limit_gives_the_first_results_of_a_larger_one(tmp_path: Path):
    """Keyword candidates are scored again by the share of key terms they hold: gathered for `limit`
    alone, the note holding every term (below notes that repeat one) was left out at small limits."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "source.md").write_text("# Heron osprey kestrel plover\n\nHeron, osprey, kestrel and plover.\n", encoding="utf-8")
    padding = " ".join(f"filler{number}" for number in range(300))
    (root / "every.md").write_text(f"# Shore notes\n\nHeron, osprey, kestrel, plover. {padding}\n", encoding="utf-8")
    for number in range(24):  # one key term, repeated: a higher BM25 than the long note that holds every term once
        term = ["heron", "osprey", "kestrel", "plover"][number % 4]
        (root / f"decoy-{number:02d}.md").write_text(f"# Decoy {number}\n\n" + f"{term} " * 30 + "\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        record = engine.catalog.get(make_doc_id(str(root / "source.md")))
        ranked = {limit: [document.doc_id for document in find_related(engine, record, None, limit, None).documents] for limit in (1, 3, 10)}
        assert ranked[10][0] == make_doc_id(str(root / "every.md"))
        assert ranked[1] == ranked[10][:1] and ranked[3] == ranked[10][:3]
    finally:
        engine.close()


def test_a_long_source_does_not_crowd_out_every_other_document(tmp_path: Path):
    """Its own chunks match its key terms best: read until they come from enough other documents."""
    root = tmp_path / "notes"
    root.mkdir()
    sections = "\n\n".join(f"## Part {number}\n\nHeron osprey kestrel plover, heron and osprey again." for number in range(600))
    (root / "long.md").write_text(f"# Heron osprey kestrel plover\n\n{sections}\n", encoding="utf-8")
    for number in range(12):
        (root / f"note-{number:02d}.md").write_text(f"# Note {number}\n\nA heron and an osprey by the shore.\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        record = engine.catalog.get(make_doc_id(str(root / "long.md")))
        found = find_related(engine, record, None, 10, None).documents
        assert len(found) == 10
        relevances = [document.relevance for document in found]
        assert relevances == sorted(relevances, reverse=True)
    finally:
        engine.close()


def test_a_document_without_text_has_nothing_related_and_snippets_show_no_page_marker(tmp_path: Path):
    from linkly_ls.core.tools import call_tool

    fixtures = Path(__file__).resolve().parents[3] / "fixtures"
    root = tmp_path / "library"
    root.mkdir()
    (root / "scan.jpg").write_bytes((fixtures / "scans" / "ocr-sample.jpg").read_bytes())  # OCR off: no text
    (root / "book.epub").write_bytes((fixtures / "books" / "sample-ebook.epub").read_bytes())
    (root / "copy.epub").write_bytes((fixtures / "books" / "sample-ebook.epub").read_bytes() + b"\0")
    config = Config(
        data_dir=tmp_path / "data", libraries=[LibraryConfig(name="lib", paths=[root])],
        limits=ExtractLimits(ocr=False), raw={"embedding": {"model": "none"}},
    )
    engine = Engine(config)
    try:
        engine.index()
        blank = call_tool(engine, "related", {"doc_id": make_doc_id(str(root / "scan.jpg"))})
        assert blank.results == [] and blank.related.mode == "none"
        assert "_Nothing related: the document has no text to relate" in blank.to_markdown()
        book = call_tool(engine, "related", {"doc_id": make_doc_id(str(root / "book.epub")), "limit": 20})
        assert book.results and not any(hit.hit.snippet.lstrip("> ").startswith("---") for hit in book.results)
        assert not any("--- chapter" in hit.hit.snippet or "--- page" in hit.hit.snippet for hit in book.results)
    finally:
        engine.close()


def test_a_chinese_section_is_related_by_its_key_terms_not_by_an_english_models_vectors(tmp_path: Path):
    """The bundled model reads English only: a Chinese note's neighbours by its vectors were unrelated."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "学习.md").write_text("# 学习笔记\n\n我们使用PostgreSQL数据库管理系统。数据库管理很重要。\n", encoding="utf-8")
    (root / "数据库.md").write_text("# 数据库管理系统\n\n关系数据库管理系统的索引和查询。\n", encoding="utf-8")
    for number in range(6):
        (root / f"astro-{number}.md").write_text(f"# Astro page {number}\n\nComponents, layouts and islands {number}.\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[root])]))
    try:
        engine.index()
        engine.vectors.run_until_complete(wait_for_model=True)
        related = find_related(engine, engine.catalog.get(make_doc_id(str(root / "学习.md"))), None, 3, None)
        assert related.mode == "keyword" and "reads English only" in related.mode_reason
        assert [document.doc_id for document in related.documents][:1] == [make_doc_id(str(root / "数据库.md"))]
    finally:
        engine.close()
