"""The links table: written and replaced with its document, dropped with it, found by target."""

from linkly_ls.core.store.records import LinkRecord


def link(line: int, target: str, path: str | None = None, name: str | None = None) -> LinkRecord:
    return LinkRecord(line, 0, 5, "inline", target, "text", path, name, "", None)


def test_links_are_replaced_with_their_document_and_dropped_with_it(catalog, make_record):
    source, other = make_record("/n/a.md"), make_record("/n/b.md")
    catalog.put_documents(
        [(source, ["x"]), (other, ["y"])],
        {source.doc_id: [link(1, "b.md", path="/n/b.md"), link(2, "[[b]]", name="b")]},
    )
    assert [item.target for item in catalog.links_from(source.doc_id)] == ["b.md", "[[b]]"]
    assert catalog.link_count(source.doc_id) == 2 and catalog.link_count(other.doc_id) == 0
    assert [(doc_id, item.line) for doc_id, item in catalog.links_to(["/n/b.md"], ["b"])] == [
        (source.doc_id, 1),
        (source.doc_id, 2),
    ]
    catalog.put_document(source, ["x"])  # read again without links
    assert catalog.links_from(source.doc_id) == []
    catalog.put_documents([(source, ["x"])], {source.doc_id: [link(4, "b.md", path="/n/b.md")]})
    catalog.remove_document(source.doc_id)
    assert catalog.links_to(["/n/b.md"], []) == []


def test_documents_are_found_by_path_and_by_name_key(catalog, make_record):
    catalog.put_documents([(make_record("/n/My Note.md", title="A Title"), ["x"]), (make_record("/m/my note.txt"), ["y"])])
    assert [row[1] for row in catalog.documents_named("my note")] == ["/m/my note.txt", "/n/My Note.md"]
    assert [row[1] for row in catalog.documents_named("a title")] == ["/n/My Note.md"]
    assert set(catalog.documents_at(["/n/My Note.md", "/none.md"])) == {"/n/My Note.md"}


def test_a_link_placed_in_its_own_document_reads_back_with_its_path_without_storing_it(catalog, make_record):
    manual, note = make_record("/n/manual.pdf"), make_record("/n/note.md")
    placed = LinkRecord(3, 0, 0, "pdf", "#page=2", "", "/n/manual.pdf", None, "page=2", 40)
    outside = link(5, "https://example.org")
    catalog.put_documents([(manual, ["x"]), (note, ["y"])], {manual.doc_id: [placed, outside], note.doc_id: [link(1, "manual.pdf", path="/n/manual.pdf")]})
    stored = catalog.connect().execute("SELECT target_path FROM links WHERE source_id = ? ORDER BY ordinal", (manual.doc_id,))
    assert [row[0] for row in stored] == [None, None]
    assert catalog.links_from(manual.doc_id) == [placed, outside]
    assert catalog.links_from(manual.doc_id, 5) == [outside] and catalog.links_from(manual.doc_id, 4) == []
    assert [(doc_id, item.line, item.target_path) for doc_id, item in catalog.links_to(["/n/manual.pdf"], [])] == sorted(
        [(manual.doc_id, 3, "/n/manual.pdf"), (note.doc_id, 1, "/n/manual.pdf")]
    )
    into = [(doc_id, item.line) for doc_id, item in catalog.links_to(["/n/manual.pdf"], [], placed_between=(41, 90))]
    assert into == [(note.doc_id, 1)], "the placed link leads to line 40, outside the lines asked for"
    catalog.connect().execute("UPDATE links SET target_path = '/n/manual.pdf' WHERE target_line = 40")  # as older versions wrote it
    assert catalog.links_from(manual.doc_id) == [placed, outside]
    assert len(catalog.links_to(["/n/manual.pdf"], [])) == 2
