"""PPTX: one section per slide, slide titles as the outline, tables, groups, charts, notes."""

from __future__ import annotations

import random
import re
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from linkly_ls.core.document import ExtractionError
from linkly_ls.core.extract import extract_file
from linkly_ls.core.extract.base import ExtractLimits

DECK = "slides/ApacheCon 2008 - Apache Performance Tuning.pptx"
LUNCH_DECK = Path(__file__).resolve().parents[3] / "fixtures" / "slides" / "rust ownership - lunch and learn.pptx"


def rewritten_deck(target: Path, edit: Callable[[str, bytes], bytes | None], added: dict[str, bytes] | None = None) -> Path:
    """A copy of the lunch-and-learn deck whose members `edit(name, data)` rewrites (None leaves one out),
    with the members of `added` besides."""
    with zipfile.ZipFile(LUNCH_DECK) as original, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as copy:
        for item in original.infolist():
            data = edit(item.filename, original.read(item.filename))
            if data is not None:
                copy.writestr(item, data)
        for name, data in (added or {}).items():
            copy.writestr(name, data)
    return target


def slide_lines(document, number: int) -> list[str]:
    start = document.page_starts[number - 1]
    end = document.page_starts[number] - 1 if number < len(document.page_starts) else len(document.lines)
    return document.lines[start - 1 : end]


def test_every_slide_is_a_section_with_a_title(extracted, check):
    document = extracted(DECK)
    assert document.title == "Apache Performance Tuning"
    assert len(document.page_starts) == 48
    assert len(document.outline) == 48 and all(node.level == 1 for node in document.outline)
    titles = [node.title for node in document.outline]
    assert titles[0] == "Apache Performance Tuning"
    assert titles[3] == "The Silver Bullet" and titles[6] == "No Silver Bullet"
    assert titles[1] == "Slide 2"  # untitled slide
    for number, start in enumerate(document.page_starts, start=1):
        assert document.lines[start - 1] == f"--- slide {number} ---"
    for node, start in zip(document.outline, document.page_starts):
        assert start <= node.start_line <= start + 1
    check.outline_points_at_titles(document)
    check.well_formed(document)


def test_speaker_notes_follow_the_slide_text(extracted):
    document = extracted(DECK)
    first = slide_lines(document, 1)
    notes = first.index("Notes:")
    assert first[notes + 1] == "Hello crowd, welcome. Introduce self."
    assert "Part 1: Scaling Up" in first[:notes]
    third = slide_lines(document, 3)
    assert "This is a slashdotting." in third[third.index("Notes:") :]


def test_tables_groups_and_charts(extracted):
    document = extracted("slides/AutoGen overview.pptx")
    assert document.title == "AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation"
    table = slide_lines(document, 3)
    assert "ColA | ColB | ColC | ColD | ColE | ColF" in table
    assert "7 | 8 | 9 | 1b92870d-e3b5-4e65-8153-919f4ff45592 | 11 | 12" in table
    assert "a3f6004b-6f4f-4ea8-bee3-3741f4dc385f" in slide_lines(document, 4)  # the chart's title
    group = slide_lines(document, 5)
    assert "This is a nested shape with content in 2 shapes" in group and "Sub comment 2" in group


def test_generic_core_title_and_an_untyped_placeholder_are_no_title(extracted):
    """The deck's core title is generic, and its first slide's index-0 placeholder is a bare `<p:ph/>`
    (an object placeholder holding a 601-character list), which python-pptx calls the title."""
    document = extracted("slides/GSFC Sciences and Exploration Directorate.pptx")
    assert document.title == "GSFC Sciences and Exploration Directorate"
    assert document.outline[0].title == "Slide 1"
    assert any(line.startswith("Code 600: Sciences and Exploration Directorate (SED)") for line in slide_lines(document, 1))


def test_slide_titles_from_a_converted_deck(extracted):
    document = extracted("slides/rust ownership - lunch and learn.pptx")
    assert [node.title for node in document.outline][2:5] == ["Ownership Rules", "Variable Scope", "The String Type"]


def test_unzipped_size_limit(corpus):
    with pytest.raises(ExtractionError, match="max_unzipped_mb"):
        extract_file(corpus / DECK, replace(ExtractLimits(), max_unzipped_bytes=100_000))


def test_a_pictures_alternative_text_is_a_line_of_its_own(extracted):
    lines = extracted("slides/AutoGen overview.pptx").lines
    assert "[image: The first page of the AutoGen ArXiv paper. 44bf7d06-5e7a-4a40-a2e1-a2e42ef28c8a]" in lines
    draft = extracted("documents/drafts/AutoGen paper draft.docx").lines
    assert any(line.startswith("[image: 图形用户界面, 文本") for line in draft)


def test_a_slide_missing_from_the_file_loses_only_itself_and_a_hidden_slide_says_so(tmp_path):
    def damage(name: str, data: bytes) -> bytes | None:
        if name == "ppt/_rels/presentation.xml.rels":  # slide 2's part and its relationship are gone
            return re.sub(rb'<Relationship Id="rId3" [^>]*slides/slide2.xml" */>', b"", data)
        if name.startswith(("ppt/slides/slide2.xml", "ppt/slides/_rels/slide2.xml")):
            return None
        return data.replace(b"<p:sld ", b'<p:sld show="0" ', 1) if name == "ppt/slides/slide3.xml" else data

    damaged = rewritten_deck(tmp_path / "damaged.pptx", damage)
    document = extract_file(damaged)
    intact = extract_file(LUNCH_DECK)
    assert document.warnings == ["slide 2 is missing from the file (the presentation lists it, its part is gone)"]
    assert len(document.page_starts) == len(intact.page_starts)
    assert slide_lines(document, 2) == ["--- slide 2 ---", "[this slide is missing from the file]", ""]
    assert slide_lines(document, 3)[:3] == ["--- slide 3 ---", "Ownership Rules", "[hidden slide]"]
    assert slide_lines(document, 4) == slide_lines(intact, 4)


@pytest.mark.parametrize(
    ("suffix", "content_type"),
    [
        (".ppsx", "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml"),
        (".potx", "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml"),
        (".pptm", "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml"),
        (".ppsm", "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml"),
        (".potm", "application/vnd.ms-powerpoint.template.macroEnabled.main+xml"),
    ],
)
def test_a_show_a_template_or_a_deck_with_macros_is_read_as_a_pptx(tmp_path, suffix, content_type):
    """A deck sent to a client as a show (`.ppsx`) was an unsupported type."""
    main = b"application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
    saved = rewritten_deck(
        tmp_path / f"deck{suffix}", lambda name, data: data.replace(main, content_type.encode()) if name == "[Content_Types].xml" else data
    )
    assert extract_file(saved).lines == extract_file(LUNCH_DECK).lines


def test_a_deck_over_the_unpacked_limit_by_its_media_is_not_called_a_zip_bomb(tmp_path):
    """A town-hall deck with a video read as "possibly a zip bomb"."""
    video = random.Random(7).randbytes(600_000)  # compressed already, as a video is
    with_video = rewritten_deck(tmp_path / "town hall.pptx", lambda name, data: data, {"ppt/media/media1.mp4": video})
    limits = replace(ExtractLimits(), max_unzipped_bytes=500_000)
    with pytest.raises(ExtractionError, match=r"max_unzipped_mb\); its pictures, videos and embedded files \(600,000 bytes\)") as raised:
        extract_file(with_video, limits)
    assert "zip bomb" not in str(raised.value)
    with pytest.raises(ExtractionError, match="possibly a zip bomb"):
        extract_file(LUNCH_DECK, replace(ExtractLimits(), max_unzipped_bytes=10_000))
    zeros = rewritten_deck(tmp_path / "zeros.pptx", lambda name, data: data, {"ppt/media/zeros.bin": bytes(600_000)})
    with pytest.raises(ExtractionError, match="possibly a zip bomb"):
        extract_file(zeros, limits)


def test_the_first_slides_title_wins_over_a_templates_leftover_core_title(tmp_path):
    def retitle(name: str, data: bytes) -> bytes:
        if name != "docProps/core.xml":
            return data
        data = re.sub(rb"<dc:title>.*?</dc:title>|<dc:title/>", b"", data)
        return data.replace(b"</cp:coreProperties>", b"<dc:title>HQ Master Template 2023</dc:title></cp:coreProperties>")

    saved = rewritten_deck(tmp_path / "kickoff.pptx", retitle)
    assert b"HQ Master Template 2023" in zipfile.ZipFile(saved).read("docProps/core.xml")
    assert extract_file(saved).title == "What Is Ownership?"


def test_a_merged_table_cell_is_one_column_not_empty_ones(tmp_path):
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Capex"
    table = slide.shapes.add_table(2, 3, Inches(1), Inches(2), Inches(6), Inches(1)).table
    table.cell(0, 0).text, table.cell(0, 1).text, table.cell(0, 2).text = "Item", "2026", "2027"
    table.cell(1, 0).text, table.cell(1, 1).text = "Capex (NOK m)", "Front-loaded: NOK 12.7m over three years"
    table.cell(1, 1).merge(table.cell(1, 2))
    deck.save(tmp_path / "capex.pptx")
    lines = extract_file(tmp_path / "capex.pptx").lines
    assert "Capex (NOK m) | Front-loaded: NOK 12.7m over three years" in lines
