"""Plain text: encodings, form feeds as pages, conservative heading detection, titles."""

from __future__ import annotations

from pathlib import Path

from linkly_ls.core.extract import extract_file


def test_rfc_outline_has_numbered_sections_and_no_table_of_contents_duplicates(extracted, check):
    document = extracted("reference/rfc/rfc6455.txt")
    assert document.title == "The WebSocket Protocol"
    nodes = check.flatten(document.outline)
    titles = [node.title for node in nodes]
    assert titles[:5] == ["Abstract", "Status of This Memo", "Copyright Notice", "Table of Contents", "1. Introduction"]
    assert titles.count("1. Introduction") == 1  # the table of contents lines are not headings
    by_title = {node.title: node for node in nodes}
    assert by_title["1. Introduction"].level == 1
    assert by_title["1.1. Background"].level == 2
    assert by_title["4.2.1. Reading the Client's Opening Handshake"].level == 3
    assert [child.title for child in by_title["5.5. Control Frames"].children] == [
        "5.5.1. Close",
        "5.5.2. Ping",
        "5.5.3. Pong",
    ]
    assert "11.3.1. Sec-WebSocket-Key" in titles
    assert not any("Fette & Melnikov" in title or title.startswith("RFC 6455") for title in titles)
    check.outline_points_at_titles(document)
    check.well_formed(document, source_lines=True)


def test_form_feeds_start_pages_and_lines_stay_the_files_lines(extracted, corpus):
    document = extracted("reference/rfc/rfc6455.txt")
    source = (corpus / "reference/rfc/rfc6455.txt").read_text(encoding="utf-8").split("\n")
    assert len(document.lines) == len(source) - 1
    feeds = [index + 1 for index, line in enumerate(source) if "\f" in line]
    assert len(feeds) == 71 and document.page_starts == [1] + feeds
    assert all("\f" not in line for line in document.lines)
    assert document.lines[document.page_starts[1]].startswith("RFC 6455")


def test_man_page_sections_and_title(extracted, check):
    document = extracted("reference/man/ls.1.txt")
    assert document.title == "ls - list directory contents"
    assert [(node.level, node.title) for node in check.flatten(document.outline)] == [
        (1, "NAME"),
        (1, "SYNOPSIS"),
        (1, "DESCRIPTION"),
        (1, "AUTHOR"),
        (1, "REPORTING BUGS"),
        (1, "COPYRIGHT"),
        (1, "SEE ALSO"),
    ]
    check.outline_points_at_titles(document)
    description = document.outline[2]
    assert any("--almost-all" in line for line in document.lines[description.start_line - 1 : description.end_line])


def test_chinese_chapters_and_numbered_sections(extracted, check):
    document = extracted("reference/debian/debian-reference.zh-cn.txt")
    assert document.title == "Debian 参考手册"
    nodes = {" ".join(node.title.split()): node for node in check.flatten(document.outline)}
    assert nodes["第 1 章 GNU/Linux 教程"].level == 1
    assert nodes["1.1. 控制台基础"].level == 2
    assert nodes["1.1.1. shell 提示符"].level == 3
    assert len(nodes) > 300


def test_text_without_clear_headings_gets_no_outline(extracted):
    document = extracted("reference/debian/social-contract.txt")
    assert document.outline == []
    assert any("Debian will remain 100% free" in line for line in document.lines)


def test_latin1_cp1252_and_utf16_decode(extracted):
    french = "\n".join(extracted("odd/notes-fr-latin1.txt").lines)
    assert "bibliothèque" in french and "à portée" in french and "conçu" in french
    assert "ŕ" not in french and "\ufffd" not in french
    german = "\n".join(extracted("odd/tutorial-seiten-cp1252.txt").lines)
    assert "Füge" in german and "weißt" in german and "„Datei“" in german
    utf16 = extracted("odd/windows-notes-utf16.txt")
    assert utf16.title == "Storing UTF-8 Encoded Text with Strings"
    text = "\n".join(utf16.lines)
    assert "Rust’s propensity for exposing possible errors" in text
    assert "\x00" not in text and "\r" not in text and "\ufeff" not in text


def test_front_matter_in_a_text_file_gives_the_title(extracted):
    assert extracted("odd/notes-fr-latin1.txt").title == "Styles et CSS"


def test_underlined_headings(tmp_path: Path, check):
    source = tmp_path / "notes.txt"
    source.write_text(
        "Project notes\n=============\n\nSome text here.\n\nSetup\n-----\n\nInstall it.\n\n"
        "Usage\n-----\n\nRun it.\n",
        encoding="utf-8",
    )
    document = extract_file(source)
    assert [(node.level, node.title) for node in check.flatten(document.outline)] == [
        (1, "Project notes"),
        (2, "Setup"),
        (2, "Usage"),
    ]
    check.outline_points_at_titles(document)


def test_long_single_line_is_wrapped_without_losing_words(extracted, corpus):
    document = extracted("odd/single-line-export.txt")
    assert len(document.lines) > 10
    assert all(len(line) <= 4000 for line in document.lines)
    assert any("wrapped" in warning for warning in document.warnings)
    original = (corpus / "odd/single-line-export.txt").read_text(encoding="utf-8").split()
    assert " ".join(document.lines).split() == original


def test_a_first_line_set_apart_by_a_blank_line_is_the_title_even_with_a_full_stop(tmp_path: Path):
    long_title = "Approximate solutions of the incompressible laminar boundary layer equations for a plate in shear flow ."
    for first, expected in (
        (long_title, long_title[:-2]),
        ("THE MALAWI LIBRARY ASSOCIATION, ITS SECOND ANNUAL MEETING, 26 APRIL 1980.", None),
        ("Notes from the meeting.", "Notes from the meeting"),
    ):
        path = tmp_path / "record.txt"
        path.write_text(f"{first}\n\nThe text of the record follows here, in several sentences. Another one.\n")
        assert extract_file(path).title == (expected or first.rstrip("."))


def test_a_first_line_with_a_full_stop_is_not_the_title_when_it_is_two_sentences_or_wrapped(tmp_path: Path):
    two_sentences = tmp_path / "two-sentences.txt"
    two_sentences.write_text("We met on Monday. Everyone came on time.\n\nThe minutes follow.\n")
    assert extract_file(two_sentences).title == "two-sentences"
    wrapped = tmp_path / "wrapped.txt"
    wrapped.write_text("A paragraph wrapped at a fixed width ends its first line with a stop.\nThen it goes on.\n")
    assert extract_file(wrapped).title == "wrapped"
    alone_but_two_sentences = tmp_path / "alone-but-two.txt"
    alone_but_two_sentences.write_text("We met on Monday. Everyone came on time.\n")
    assert extract_file(alone_but_two_sentences).title == "alone-but-two"
    too_long = tmp_path / "too-long.txt"
    too_long.write_text(" ".join(["word"] * 80) + ".\n")
    assert extract_file(too_long).title == "too-long"


def test_a_file_of_one_sentence_is_titled_by_it(tmp_path: Path):
    """A catalogue record without an abstract is only its title; titled by its file name instead, it
    would miss the title's weight in keyword ranking that the records with an abstract get."""
    alone = tmp_path / "alone.txt"
    alone.write_text("Only one sentence in this file.\n")
    assert extract_file(alone).title == "Only one sentence in this file"
    record = tmp_path / "record.txt"
    record.write_text("\nTHE MALAWI LIBRARY ASSOCIATION, ITS SECOND ANNUAL MEETING, 26 APRIL 1980.\n\n\n")
    assert extract_file(record).title == "THE MALAWI LIBRARY ASSOCIATION, ITS SECOND ANNUAL MEETING, 26 APRIL 1980"


def test_a_subsection_named_in_lower_case_is_a_heading_and_a_numbered_list_item_is_not():
    """The Debian maintainers' guide names its sections after files (`5.21. watch`): left out, their text
    was cited as the section before."""
    from linkly_ls.core.extract.text import find_headings

    lines = ["5. Other files", "", "5.20. TODO", "", "Text.", "", "5.21. watch", "", "The watch file.", "",
             "1. mix the flour", "", "2. add water", "", "5.22. a lower case sentence of many words here", ""]
    assert [title for _, title in find_headings(lines).values()] == ["5. Other files", "5.20. TODO", "5.21. watch"]


def test_a_subsection_whose_name_starts_with_a_number_is_a_heading_and_a_list_item_is_not():
    """RFC 2616 names its status-code sections `10.3.5 304 Not Modified`: its hits cited `10.3 Redirection`."""
    from linkly_ls.core.extract.text import find_headings

    lines = ["10.3 Redirection 3xx", "", "Text.", "", "10.3.5 304 Not Modified", "", "If the client...", "",
             "1 2 cups of flour", "", "2 300 grams of sugar", ""]
    assert [title for _, title in find_headings(lines).values()] == ["10.3 Redirection 3xx", "10.3.5 304 Not Modified"]


def test_rfc_status_codes_are_sections_of_the_outline(extracted):
    status_codes = next(node for node in extracted("reference/rfc/rfc2616.txt").outline if node.title.startswith("10 "))
    titles = [node.title for node in status_codes.children[2].children]
    assert "10.3.5 304 Not Modified" in titles and len(titles) >= 7
