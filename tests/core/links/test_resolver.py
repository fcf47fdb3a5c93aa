"""Resolving stored links against the index: targets, headings, statuses, backlinks, updates."""

import os

import pymupdf

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.links.resolver import LinkResolver


def resolved(engine, relative):
    return LinkResolver(engine.catalog).links_of(engine.catalog.get(engine.doc(relative)))


def test_each_link_of_a_note_gets_its_status_target_and_line(notes):
    by_target = {link.target: link for link in resolved(notes, "index.md")}
    guide = by_target["guide.md#install-it"]
    assert (guide.status, guide.doc_id, guide.heading, guide.target_line) == ("ok", notes.doc("guide.md"), "Install it", 5)
    assert by_target["Guide"].status == "ambiguous"
    assert by_target["Guide"].candidates == [str(notes.root / "guide.md"), str(notes.root / "sub/guide.md")]
    assert by_target["missing note"].status == "missing"
    assert (by_target["sub/"].status, by_target["sub/"].doc_id) == ("ok", notes.doc("sub/index.md"))
    assert by_target["guide.md#nope"].status == "missing_heading"
    assert by_target["https://example.com"].status == "external"
    assert by_target["/docs/x/"].status == "site"
    assert by_target["tool.py"].status == "unindexed"
    book = by_target["book.html#ch-2"]  # an mdBook-style link to the Markdown source
    assert (book.status, book.doc_id, book.target_line) == ("ok", notes.doc("book.md"), 5)
    assert [link.broken for link in by_target.values()].count(True) == 3
    broken = LinkResolver(notes.catalog).broken_links(notes.catalog.get(notes.doc("index.md")))
    assert [link.target for link in broken] == [link.target for link in by_target.values() if link.broken]


def test_wikilink_headings_and_explicit_anchors_resolve(notes):
    links = resolved(notes, "book.md")
    assert [(link.status, link.heading, link.target_line) for link in links] == [
        ("ok", "Wind", 5),
        ("ok", "Custom", 9),
    ]
    sub = {link.target: link for link in resolved(notes, "sub/index.md")}
    assert sub["guide#Install it"].status == "ambiguous"
    assert (sub["Home"].status, sub["Home"].doc_id) == ("ok", notes.doc("index.md"))


def test_backlinks_are_the_links_that_resolve_to_the_document(notes):
    """The ambiguous `[[Guide]]` of index.md is no backlink of either guide."""
    resolver = LinkResolver(notes.catalog)
    guide = resolver.backlinks(notes.catalog.get(notes.doc("guide.md")))
    assert [(link.source_id, link.line, link.target) for link in guide] == [
        (notes.doc("book.md"), 7, "guide.md#my-anchor"),
        (notes.doc("index.md"), 3, "guide.md#install-it"),
        (notes.doc("index.md"), 3, "guide.md#nope"),
    ]
    home = resolver.backlinks(notes.catalog.get(notes.doc("index.md")))
    assert {link.source_id for link in home} == {notes.doc("guide.md"), notes.doc("sub/index.md")}


def test_links_follow_their_document_and_their_targets_incrementally(notes):
    (notes.root / "sub/guide.md").unlink()  # the wikilink is no longer ambiguous
    (notes.root / "guide.md").write_text("# Guide\n\nNo links any more.\n", encoding="utf-8")
    notes.index()
    assert notes.catalog.links_from(notes.doc("guide.md")) == []
    assert notes.catalog.links_from(notes.doc("sub/guide.md")) == []
    by_target = {link.target: link for link in resolved(notes, "index.md")}
    assert (by_target["Guide"].status, by_target["Guide"].doc_id) == ("ok", notes.doc("guide.md"))
    assert by_target["guide.md#install-it"].status == "missing_heading"
    (notes.root / "missing note.md").write_text("# Missing note\n", encoding="utf-8")
    notes.index()
    assert {link.target: link for link in resolved(notes, "index.md")}["missing note"].status == "ok"


def test_links_survive_reopening_the_index(notes, tmp_path):
    notes.close()
    reopened = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[notes.root])]))
    try:
        assert len(reopened.catalog.links_from(notes.doc("index.md"))) == 9
    finally:
        reopened.close()


def test_the_documents_a_note_links_to_are_those_its_resolved_links_reach(notes):
    record = notes.catalog.get(notes.doc("index.md"))
    reached = {link.doc_id for link in resolved(notes, "index.md") if link.doc_id}
    assert LinkResolver(notes.catalog).linked_documents(record) == reached
    assert reached >= {notes.doc("guide.md"), notes.doc("sub/index.md"), notes.doc("book.md")}


def _manual_and_guide(folder):
    """manual.pdf: three pages, bookmarks "1 Basics" (page 1), "2 Data" and under it "2.1 Arrays" (page 2),
    "3 Plots" (page 3); guide.pdf: links into it, as Texinfo's and LaTeX's manuals link each other."""
    manual = pymupdf.open()
    for headings in (["1 Basics"], ["2 Data", "2.1 Arrays"], ["3 Plots"]):
        page = manual.new_page()
        for place, heading in enumerate(headings):
            page.insert_text((72, 100 + 200 * place), heading, fontsize=14)
            page.insert_text((72, 130 + 200 * place), f"what {heading} is about", fontsize=10)
    arrays = {"kind": pymupdf.LINK_GOTO, "to": pymupdf.Point(72, 280)}
    manual.set_toc([[1, "1 Basics", 1], [1, "2 Data", 2], [2, "2.1 Arrays", 2, arrays], [1, "3 Plots", 3]])
    # LaTeX-style names: the third section's, which the manual's own first page links to, and an unnumbered
    # part's on page 2, which nothing in the manual links to
    destinations = manual.get_new_xref()
    manual.update_object(
        destinations,
        f"<< /section.3 [{manual[2].xref} 0 R /XYZ 72 {manual[2].rect.height - 80} 0] "
        f"/section*.2 [{manual[1].xref} 0 R /XYZ 72 {manual[1].rect.height - 280} 0] >>",
    )
    manual.xref_set_key(manual.pdf_catalog(), "Dests", f"{destinations} 0 R")
    manual[0].insert_link({"kind": pymupdf.LINK_NAMED, "from": pymupdf.Rect(72, 120, 200, 134), "nameddest": "section.3"})
    manual.save(folder / "manual.pdf")
    guide = pymupdf.open()
    page = guide.new_page()
    for row, text in enumerate(["see the plots", "see arrays", "see section seven", "see section three", "see the aside"]):
        page.insert_text((72, 100 + 40 * row), text, fontsize=12)
    page.insert_link({"kind": pymupdf.LINK_GOTOR, "from": pymupdf.Rect(72, 90, 200, 104), "file": "manual.pdf", "page": 2,
                      "to": pymupdf.Point(0, 0)})
    annotations = []
    for row, name in ((1, "Arrays"), (2, "section.7"), (3, "section.3"), (4, "section*.2")):
        bottom = guide[0].rect.height - 90 - 40 * row
        annotation = guide.get_new_xref()
        guide.update_object(annotation, f"<< /Type /Annot /Subtype /Link /Rect [72 {bottom} 200 {bottom + 14}] "
                                        f"/A << /S /GoToR /F (manual.pdf) /D ({name}) >> >>")
        annotations.append(f"{annotation} 0 R")
    existing = guide.xref_get_key(page.xref, "Annots")[1][1:-1]
    guide.xref_set_key(page.xref, "Annots", f"[{existing} {' '.join(annotations)}]")
    guide.save(folder / "guide.pdf")


def test_a_link_into_another_pdf_leads_to_its_page_or_to_the_heading_its_destination_names(tmp_path):
    """A named destination is found where the target's own links to that name lead, else by the heading
    of that name, numbered or not, else on the page the target file names it for (`section*.2`); a name
    the file lacks (`section.7`) leads to the start of the file."""
    folder = tmp_path / "pdfs"
    folder.mkdir()
    _manual_and_guide(folder)
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="pdfs", paths=[folder])]))
    try:
        engine.index()
        manual = engine.catalog.by_path(str(folder / "manual.pdf"))
        guide = engine.catalog.by_path(str(folder / "guide.pdf"))
        links = {link.target: link for link in LinkResolver(engine.catalog).links_of(guide)}
        lines = engine.catalog.lines(manual.doc_id)
        assert set(links) == {
            "manual.pdf#page=3", "manual.pdf#nameddest=Arrays", "manual.pdf#nameddest=section.7",
            "manual.pdf#nameddest=section.3", "manual.pdf#nameddest=section*.2",
        }
        assert all((link.status, link.doc_id) == ("ok", manual.doc_id) for link in links.values())
        plots = links["manual.pdf#page=3"]
        assert (plots.heading, plots.target_line) == ("3 Plots", manual.page_starts[2])
        assert lines[plots.target_line - 1 : plots.target_line + 1] == [
            "--- page 3 ---", "3 Plots"
        ]
        arrays = links["manual.pdf#nameddest=Arrays"]
        assert (arrays.heading, lines[arrays.target_line - 1]) == ("2.1 Arrays", "2.1 Arrays")
        third = links["manual.pdf#nameddest=section.3"]
        assert (third.heading, lines[third.target_line - 1]) == ("3 Plots", "3 Plots")
        aside = links["manual.pdf#nameddest=section*.2"]
        assert (aside.target_line, aside.heading) == (manual.page_starts[1], "2 Data")
        assert lines[aside.target_line - 1] == "--- page 2 ---"
        unnamed = links["manual.pdf#nameddest=section.7"]
        assert (unnamed.target_line, unnamed.heading) == (1, None)
    finally:
        engine.close()


def test_a_notes_link_into_a_pdf_finds_a_heading_by_its_title_without_number_and_flags_one_it_lacks(tmp_path):
    """`[[manual.pdf#Arrays]]` (completion offers "2.1 Arrays") led to page 1 when the number was left out,
    and a heading the PDF lacks led there too as `ok`: no diagnostic told of the typo."""
    folder = tmp_path / "pdfs"
    folder.mkdir()
    _manual_and_guide(folder)
    (folder / "reading.md").write_text(
        "# Reading\n\n[[manual.pdf#Arrays]] and [[manual.pdf#3 Plots]]\n\n[third](manual.pdf#section.3)\n\n"
        "[[manual.pdf#Arays]] and [gone](manual.pdf#Removed%20part) and [[manual.pdf#page=2]]\n",
        encoding="utf-8",
    )
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="pdfs", paths=[folder])]))
    try:
        engine.index()
        manual = engine.catalog.by_path(str(folder / "manual.pdf"))
        note = engine.catalog.by_path(str(folder / "reading.md"))
        links = {link.target: link for link in LinkResolver(engine.catalog).links_of(note)}
        found = {target: (link.status, link.heading) for target, link in links.items()}
        assert found == {
            "manual.pdf#Arrays": ("ok", "2.1 Arrays"),
            "manual.pdf#3 Plots": ("ok", "3 Plots"),
            "manual.pdf#section.3": ("ok", "3 Plots"),
            "manual.pdf#Arays": ("missing_heading", None),
            "manual.pdf#Removed%20part": ("missing_heading", None),
            "manual.pdf#page=2": ("ok", "2 Data"),
        }
        assert all(link.doc_id == manual.doc_id for link in links.values())
        assert "no heading or anchor #Arays in" in links["manual.pdf#Arays"].problem()
    finally:
        engine.close()


def test_a_chapter_destination_above_its_bookmarked_title_leads_to_that_chapter(tmp_path):
    """LaTeX puts a chapter's destination at its "Chapter 2" label, a line or two above the title the
    bookmark starts at: the link leads to that chapter, not to the end of the one before. A destination
    on a sentence just above a heading stays in its own section."""
    folder = tmp_path / "book"
    folder.mkdir()
    book = pymupdf.open()
    contents = book.new_page()
    contents.insert_text((72, 100), "2 First steps", fontsize=12)
    contents.insert_text((72, 140), "the last remark", fontsize=12)
    first = book.new_page()
    first.insert_text((72, 100), "Getting started", fontsize=16)
    first.insert_text((72, 130), "Why packages matter to everyone.", fontsize=10)
    second = book.new_page()
    second.insert_text((72, 100), "Chapter 2", fontsize=12)
    second.insert_text((72, 140), "First steps", fontsize=16)
    second.insert_text((72, 170), "Choose the package to work on.", fontsize=10)
    title = {"kind": pymupdf.LINK_GOTO, "to": pymupdf.Point(72, 125)}
    book.set_toc([[1, "Getting started", 2], [1, "First steps", 3, title]])
    height = second.rect.height
    destinations = book.get_new_xref()
    book.update_object(
        destinations,
        f"<< /chapter.2 [{book[2].xref} 0 R /XYZ 72 {height - 88} 0] /remark [{book[1].xref} 0 R /XYZ 72 {height - 118} 0] >>",
    )
    book.xref_set_key(book.pdf_catalog(), "Dests", f"{destinations} 0 R")
    book[0].insert_link({"kind": pymupdf.LINK_NAMED, "from": pymupdf.Rect(72, 88, 200, 102), "nameddest": "chapter.2"})
    book[0].insert_link({"kind": pymupdf.LINK_NAMED, "from": pymupdf.Rect(72, 128, 200, 142), "nameddest": "remark"})
    book.save(folder / "book.pdf")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="book", paths=[folder])]))
    try:
        engine.index()
        record = engine.catalog.by_path(str(folder / "book.pdf"))
        links = {link.target: link for link in LinkResolver(engine.catalog).links_of(record)}
        lines = engine.catalog.lines(record.doc_id)
        chapter = links["#nameddest=chapter.2"]
        assert lines[chapter.target_line - 1] == "Chapter 2" and chapter.heading == "First steps"
        assert lines[chapter.heading_line - 1] == "First steps"
        remark = links["#nameddest=remark"]
        assert lines[remark.target_line - 1] == "Why packages matter to everyone." and remark.heading == "Getting started"
    finally:
        engine.close()


def test_a_link_typed_composed_reaches_a_file_named_decomposed_and_back(tmp_path):
    """macOS writes `Noël à Besançon.md` decomposed (NFD); a link typed elsewhere is composed (NFC)."""
    import unicodedata

    from linkly_ls.core.store.records import make_doc_id

    root = tmp_path / "notes"
    root.mkdir()
    target = root / unicodedata.normalize("NFD", "Noël à Besançon.md")
    target.write_text("# Noël à Besançon\n\n## Marché\n\nchâtaignes\n", encoding="utf-8")
    source = root / "index.md"
    source.write_text("[Noël](Noël%20à%20Besançon.md#marché) and [[Noël à Besançon]]\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[root])]))
    try:
        engine.index()
        links = LinkResolver(engine.catalog).links_of(engine.catalog.get(make_doc_id(str(source))))
        assert [(link.status, link.doc_id) for link in links] == [("ok", make_doc_id(str(target)))] * 2
        back = LinkResolver(engine.catalog).backlinks(engine.catalog.get(make_doc_id(str(target))))
        assert len(back) == 2
    finally:
        engine.close()


def test_a_wikilink_two_libraries_answer_leads_into_the_sources_own_library(tmp_path):
    """Two vaults indexed in one data dir each hold `projects.md`: `[[projects]]` is not ambiguous."""
    from linkly_ls.core.store.records import make_doc_id

    vaults = {name: tmp_path / name for name in ("mine", "other")}
    for name, root in vaults.items():
        (root / "sub").mkdir(parents=True)
        (root / "projects.md").write_text(f"# Projects of {name}\n\n## Plans\n", encoding="utf-8")
        (root / "sub" / "index.md").write_text("[[projects#plans]] and [[only-here]]\n", encoding="utf-8")
    (vaults["other"] / "only-here.md").write_text("# Only here\n", encoding="utf-8")
    libraries = [LibraryConfig(name=name, paths=[root]) for name, root in vaults.items()]
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=libraries))
    try:
        engine.index()
        resolver = LinkResolver(engine.catalog)
        for name, root in vaults.items():
            links = resolver.links_of(engine.catalog.get(make_doc_id(str(root / "sub" / "index.md"))))
            assert [(link.status, link.path) for link in links] == [
                ("ok", str(root / "projects.md")),
                ("ok", str(vaults["other"] / "only-here.md")),  # a name only another library holds still leads there
            ], name
        assert resolver.named("projects", str(vaults["mine"] / "new.md")).path == str(vaults["mine"] / "projects.md")
    finally:
        engine.close()


def test_a_wikilink_may_name_a_note_by_an_alias_of_its_front_matter(tmp_path):
    """Obsidian's `aliases:`: `[[Home]]` leads to the note that says it is also called Home."""
    from linkly_ls.core.store.records import make_doc_id

    root = tmp_path / "vault"
    root.mkdir()
    (root / "vault-home.md").write_text("---\ntitle: Vault home\naliases: [Home, \"Start page\"]\n---\n# Vault home\n\n## Today\n", encoding="utf-8")
    (root / "edge.md").write_text("---\naliases:\n  - Edgy\n  - Sharp one\n---\n# Edge cases\n", encoding="utf-8")
    (root / "index.md").write_text("[[Home]] [[start page#today]] [[Edgy]] [[sharp one]] [[Nobody]]\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="v", paths=[root])]))
    try:
        engine.index()
        resolver = LinkResolver(engine.catalog)
        links = resolver.links_of(engine.catalog.get(make_doc_id(str(root / "index.md"))))
        assert [(link.status, link.path and link.path.rsplit("/", 1)[-1]) for link in links] == [
            ("ok", "vault-home.md"), ("ok", "vault-home.md"), ("ok", "edge.md"), ("ok", "edge.md"), ("missing", None)
        ]
        assert links[1].target_line == 7, "the heading of the note its alias names"
        back = resolver.backlinks(engine.catalog.get(make_doc_id(str(root / "edge.md"))))
        assert [link.target for link in back] == ["Edgy", "sharp one"]
        (root / "edge.md").write_text("# Edge cases\n", encoding="utf-8")  # the aliases are taken out
        engine.index()
        assert [link.status for link in LinkResolver(engine.catalog).links_of(engine.catalog.get(make_doc_id(str(root / "index.md"))))][2:4] == ["missing", "missing"]
    finally:
        engine.close()


def test_a_path_outside_every_library_is_not_looked_for_but_by_the_editors_server(notes, tmp_path):
    """Whoever may ask the tools cannot learn which files exist elsewhere on the machine."""
    exists = tmp_path / "outside-exists.txt"
    exists.write_text("x", encoding="utf-8")
    note = notes.root / "outward.md"
    there = os.path.relpath(exists, notes.root)
    absent = os.path.relpath(tmp_path / "outside-absent.txt", notes.root)
    note.write_text(f"# Out\n\n[a]({there}) [b]({absent}) [c](tool.py)\n", encoding="utf-8")
    notes.index()
    record = notes.catalog.get(notes.doc("outward.md"))
    by_tools = [link.status for link in LinkResolver(notes.catalog).links_of(record)]
    by_editor = [link.status for link in LinkResolver(notes.catalog, look_outside=True).links_of(record)]
    assert by_tools == ["outside", "outside", "unindexed"]
    assert by_editor == ["unindexed", "missing", "unindexed"]
