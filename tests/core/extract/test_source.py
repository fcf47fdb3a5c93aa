"""`OpenedSource`: a library file is read by the descriptor it was opened with, never through a link."""

from __future__ import annotations

import os
import sys

import pytest

from linkly_ls.core.document import ExtractionError
from linkly_ls.core.extract import extract_file, source as source_module
from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.extract.source import OpenedSource
from linkly_ls.core.indexing.preparation import prepare_file


@pytest.fixture
def library(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nzebrafish key material\n", encoding="utf-8")
    root = tmp_path / "library"
    root.mkdir()
    (root / "note.md").write_text("# Note\n\nplain words\n", encoding="utf-8")
    return root, outside


def test_a_file_swapped_for_a_link_is_not_read(library):
    root, outside = library
    (root / "race.md").symlink_to(outside / "secret.md")
    with pytest.raises(ExtractionError, match="symbolic link now"):
        OpenedSource(root / "race.md")
    prepared = prepare_file((str(root / "race.md"), None, ExtractLimits()))
    assert prepared.document is None and "symbolic link" in prepared.error


def test_a_library_reached_through_a_linked_folder_is_read(library):
    """A folder moved and left as a link (or a temporary folder under one) still reads."""
    root, outside = library
    (root / "sub").symlink_to(outside, target_is_directory=True)
    with OpenedSource(root / "sub" / "secret.md") as opened:
        assert "zebrafish key material" in extract_file(root / "sub" / "secret.md", source=opened).lines


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads by /proc/self/fd, which Linux has")
def test_the_file_opened_is_the_one_read_whatever_the_path_names_later(library):
    root, outside = library
    note = root / "note.md"
    with OpenedSource(note) as opened:
        os.replace(outside / "secret.md", note)  # the path names another file from now on
        document = extract_file(note, ExtractLimits(), source=opened)
        assert opened.content_hash() != ""
    assert document.title == "Note" and "plain words" in document.lines
    assert not any("zebrafish" in line for line in document.lines)


def test_without_descriptor_paths_a_file_replaced_while_read_is_refused(library, monkeypatch):
    monkeypatch.setattr(source_module, "_has_fd_paths", lambda: False)
    root, outside = library
    note = root / "note.md"
    with OpenedSource(note) as opened:
        assert opened.read_path == note
        os.replace(outside / "secret.md", note)
        with pytest.raises(ExtractionError, match="moved or replaced while it was read"):
            extract_file(note, ExtractLimits(), source=opened)
    with OpenedSource(note) as opened:  # unchanged since it was opened: read
        assert "zebrafish key material" in extract_file(note, ExtractLimits(), source=opened).lines


def test_a_fifo_is_not_read(library):
    root, _ = library
    fifo = root / "pipe.md"
    os.mkfifo(fifo)
    with pytest.raises(ExtractionError, match="not a regular file"):
        OpenedSource(fifo)


def test_the_name_of_the_file_read_is_the_library_files(library):
    root, _ = library
    with OpenedSource(root / "note.md") as opened:
        assert (opened.read_path.name, opened.read_path.stem, opened.read_path.suffix) == ("note.md", "note", ".md")
