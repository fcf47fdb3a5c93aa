"""A file moved or copied within a library takes its stored document instead of being read again."""

from __future__ import annotations

import shutil

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.links.resolver import LinkResolver


@pytest.fixture
def library(tmp_path):
    root = tmp_path / "lib"
    notes = root / "notes"
    notes.mkdir(parents=True)
    (notes / "alpha.md").write_text("# Alpha\n\nSee [beta](beta.md#details) and [[beta]].\n", encoding="utf-8")
    (notes / "beta.md").write_text("# Beta\n\n## Details\n\nquince jam\n", encoding="utf-8")
    (notes / "plain-note.md").write_text("no heading here, only words about quince\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="lib", paths=[root])], raw={"embedding": {"model": "none"}}))
    engine.index()
    engine.root = root
    yield engine
    engine.close()


def test_a_moved_folder_is_not_read_again_and_its_links_and_names_follow(library, monkeypatch):
    root = library.root
    shutil.move(root / "notes", root / "archive")
    (root / "archive" / "plain-note.md").rename(root / "archive" / "renamed-note.md")

    def no_reading(*arguments, **keywords):
        raise AssertionError("a moved file was read again")

    monkeypatch.setattr("linkly_ls.core.indexing.preparation.extract_file", no_reading)
    [report] = library.index()
    assert report.indexed == 3 and report.removed == 3 and report.failed == 0
    catalog = library.catalog
    assert sorted(catalog.paths()) == [str(root / "archive" / name) for name in ("alpha.md", "beta.md", "renamed-note.md")]
    renamed = catalog.by_path(str(root / "archive" / "renamed-note.md"))
    assert renamed.title == "renamed-note" and "plain-note" not in renamed.keywords, "its keywords name it too"
    alpha = catalog.by_path(str(root / "archive" / "alpha.md"))
    links = LinkResolver(catalog).links_of(alpha)
    assert [(link.status, link.path) for link in links] == [("ok", str(root / "archive" / "beta.md"))] * 2
    hits = library.keyword.search("quince", 10)
    assert {catalog.get(hit.doc_id).path for hit in hits} == {str(root / "archive" / "beta.md"), str(root / "archive" / "renamed-note.md")}


def test_a_copy_beside_its_original_takes_the_stored_document_too(library, monkeypatch):
    root = library.root
    shutil.copy(root / "notes" / "beta.md", root / "notes" / "beta copy.md")
    monkeypatch.setattr("linkly_ls.core.indexing.preparation.extract_file", lambda *a, **k: (_ for _ in ()).throw(AssertionError("read")))
    [report] = library.index()
    assert report.indexed == 1 and report.unchanged == 3
    copy = library.catalog.by_path(str(root / "notes" / "beta copy.md"))
    assert copy.title == "Beta" and [node.title for node in copy.outline[0].children] == ["Details"]


def test_a_file_of_the_same_size_but_other_content_is_read(library):
    root = library.root
    (root / "notes" / "other.md").write_text("# Zeta\n\n## Details\n\nquince tea\n", encoding="utf-8")  # beta.md's size
    assert (root / "notes" / "other.md").stat().st_size == (root / "notes" / "beta.md").stat().st_size
    [report] = library.index()
    assert report.indexed == 1 and library.catalog.by_path(str(root / "notes" / "other.md")).title == "Zeta"


def test_an_id_handed_out_before_a_move_still_reaches_the_document(library):
    """An id is the hash of the path: after `mv`, the id an agent or a note kept was "not an indexed document"."""
    from linkly_ls.core.store.records import make_doc_id
    from linkly_ls.core.tools import call_tool

    root = library.root
    old_id = make_doc_id(str(root / "notes" / "beta.md"))
    shutil.move(root / "notes", root / "archive")
    library.index()
    read = call_tool(library, "read", {"doc_id": old_id}).to_json()
    assert read["doc_id"] == make_doc_id(str(root / "archive" / "beta.md")) and read["lines"][0]["text"] == "# Beta"
    shutil.move(root / "archive", root / "shelf")
    library.index()
    assert call_tool(library, "outline", {"doc_ids": [old_id]}).to_json()["documents"][0]["path"] == str(root / "shelf" / "beta.md")


def test_an_id_of_before_a_move_is_forgotten_with_the_document_and_its_library(library):
    """The redirect outlived the moved file: a new, unrelated file at that path was opened by the old id."""
    from linkly_ls.core.errors import ToolError
    from linkly_ls.core.store.records import make_doc_id
    from linkly_ls.core.tools import call_tool

    root = library.root
    old_id = make_doc_id(str(root / "notes" / "beta.md"))
    shutil.move(root / "notes" / "beta.md", root / "notes" / "gamma.md")
    library.index()
    assert library.catalog.moved_to(old_id) == make_doc_id(str(root / "notes" / "gamma.md"))
    (root / "notes" / "gamma.md").unlink()
    library.index()
    (root / "notes" / "gamma.md").write_text("# Another client\n\nunrelated intake\n", encoding="utf-8")
    library.index()
    assert library.catalog.moved_to(old_id) is None
    with pytest.raises(ToolError):
        call_tool(library, "read", {"doc_id": old_id})
    shutil.move(root / "notes" / "alpha.md", root / "notes" / "delta.md")
    library.index()
    assert library.catalog.moved_to(make_doc_id(str(root / "notes" / "alpha.md"))) is not None
    library.catalog.remove_library("lib")
    db = library.catalog.connect()
    assert db.execute("SELECT count(*) FROM moved").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM links").fetchone()[0] == 0
