"""PowerPoint PPTX with python-pptx: one section per slide.

Each slide starts with `--- slide N ---`, then its title (the outline entry,
"Slide N" when the slide has none), the text of its shapes top-to-bottom and
left-to-right (groups opened, tables as `cell | cell` rows, chart titles), and
the speaker notes under a `Notes:` line.
"""

from __future__ import annotations

import re
from pathlib import Path
from collections.abc import Iterable, Iterator

from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
from pptx.exc import PackageNotFoundError
from pptx.opc.package import PartFactory
from pptx.package import Package as PptxPackage
from pptx.parts.presentation import PresentationPart
from pptx.presentation import Presentation
from pptx.shapes.base import BaseShape
from pptx.slide import Slide

from linkly_ls.core.document import ExtractedDocument, ExtractionError, Heading, LineBuilder
from linkly_ls.core.extract.base import ExtractLimits, alt_text, title_from_path
from linkly_ls.core.extract.zipguard import check_zip

_TITLE_PLACEHOLDERS = frozenset({PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE, PP_PLACEHOLDER.VERTICAL_TITLE})
_GENERIC_TITLE = re.compile(r"^(untitled|title|slide \d+|powerpoint presentation|presentation\d*)$", re.I)
_MAX_GROUP_DEPTH = 20
#: a slide element's `show` when the slide is left out of the slide show
_HIDDEN = frozenset({"0", "false"})
_FURNITURE = frozenset({PP_PLACEHOLDER.SLIDE_NUMBER, PP_PLACEHOLDER.DATE})


def extract(path: Path, limits: ExtractLimits) -> ExtractedDocument:
    check_zip(path, limits, "PPTX")
    presentation = _open(path)
    builder = LineBuilder()
    first_title: str | None = None
    cover_title = ""
    warnings: list[str] = []
    for number, slide in enumerate(_slides(presentation, warnings), start=1):
        builder.page(f"--- slide {number} ---")
        if slide is None:
            builder.headings.append(Heading(level=1, title=f"Slide {number}", line=builder.page_starts[-1]))
            builder.text("[this slide is missing from the file]")
            continue
        title_shape = _title_shape(slide)
        title = _shape_text(title_shape).strip() if title_shape is not None else ""
        if title:
            first_title = first_title or " ".join(title.split())
            cover_title = cover_title or (first_title if number == 1 else "")
        if title:
            builder.heading(title, 1)
        else:  # the marker line itself carries the slide number
            builder.headings.append(Heading(level=1, title=f"Slide {number}", line=builder.page_starts[-1]))
        if slide._element.get("show") in _HIDDEN:
            builder.text("[hidden slide]")
        for shape in _reading_order(slide.shapes):
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            _write_shape(shape, builder, depth=0)
        notes = _notes(slide)
        if notes:
            builder.blank()
            builder.text("Notes:")
            builder.text(notes)
    lines, outline = builder.finish()
    return ExtractedDocument(
        lines=lines,
        title=cover_title or _title(presentation, first_title, path),
        doc_type="pptx",
        outline=outline,
        page_starts=builder.page_starts,
        warnings=warnings,
    )


def _slides(presentation: Presentation, warnings: list[str]) -> Iterator[Slide | None]:
    """The slides in the presentation's order; None for one whose part the file lacks (python-pptx's
    iteration raised KeyError and the whole deck was lost), which `warnings` names."""
    listed = presentation._element.sldIdLst  # not `presentation.slides`: it renames every slide part first
    for number, slide_id in enumerate(listed.sldId_lst if listed is not None else [], start=1):
        try:
            yield presentation.part.related_slide(slide_id.rId)
        except KeyError:
            warnings.append(f"slide {number} is missing from the file (the presentation lists it, its part is gone)")
            yield None


#: the main parts of PowerPoint's shows and templates with macros, which python-pptx does not map to a
#: presentation part by itself (it does the others)
for _content_type in (
    "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml",
    "application/vnd.ms-powerpoint.template.macroEnabled.main+xml",
):
    PartFactory.part_type_for.setdefault(_content_type, PresentationPart)


def _open(path: Path) -> Presentation:
    """The deck, also when saved as a show (`.ppsx`), a template (`.potx`) or with macros (`.pptm`):
    python-pptx reads those parts, but `pptx.Presentation` refuses all but `.pptx` and `.pptm`."""
    try:
        part = PptxPackage.open(str(path)).main_document_part
        if not isinstance(part, PresentationPart):
            raise ValueError(f"its main part is {part.content_type}, not a presentation")
        return part.presentation
    except (PackageNotFoundError, KeyError, ValueError) as error:
        raise ExtractionError(f"not a readable PPTX file: {error}") from error


def _title_shape(slide: Slide) -> BaseShape | None:
    """The slide's title placeholder. python-pptx takes the placeholder of index 0 whatever its type, and
    a bare `<p:ph/>` is index 0 of type "object": a slide's body list was read as its title (601
    characters, and the deck's title with it)."""
    try:
        shape = slide.shapes.title
        kind = shape.placeholder_format.type if shape is not None else None
    except (KeyError, ValueError, AttributeError):
        return None
    if kind not in _TITLE_PLACEHOLDERS:
        return None
    return shape if getattr(shape, "has_text_frame", False) else None


def _reading_order(shapes: Iterable[BaseShape]) -> list[BaseShape]:
    """Top to bottom, then left to right; shapes without a position keep their order at the end."""
    return sorted(
        shapes,
        key=lambda shape: (
            shape.top is None,
            (shape.top or 0) // 100_000,  # rows ~0.1 inch apart read as one row
            shape.left or 0,
        ),
    )


def _write_shape(shape: BaseShape, builder: LineBuilder, depth: int) -> None:
    if shape.is_placeholder and shape.placeholder_format.type in _FURNITURE:
        return
    if getattr(shape, "shape_type", None) == MSO_SHAPE_TYPE.GROUP and depth < _MAX_GROUP_DEPTH:
        for inner in _reading_order(shape.shapes):
            _write_shape(inner, builder, depth + 1)
        return
    if getattr(shape, "has_table", False):
        builder.blank()
        for row in shape.table.rows:
            cells = [" ".join(cell.text.split()) for cell in row.cells if not cell.is_spanned]  # a merged-away cell is no column
            if any(cells):
                builder.text(" | ".join(cells))
        builder.blank()
        return
    if getattr(shape, "has_chart", False):
        chart = shape.chart
        if chart.has_title and chart.chart_title.has_text_frame:
            builder.text(chart.chart_title.text_frame.text)
        return
    text = _shape_text(shape)
    if text.strip():
        builder.blank()
        builder.text(text)
    elif getattr(shape, "shape_type", None) == MSO_SHAPE_TYPE.PICTURE:
        described = alt_text(shape._element.xpath("./p:nvPicPr/p:cNvPr/@descr"))
        if described:
            builder.blank()
            builder.text(described)


def _shape_text(shape: BaseShape) -> str:
    if not getattr(shape, "has_text_frame", False):
        return ""
    return shape.text_frame.text.replace("\v", "\n")


def _notes(slide: Slide) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return frame.text.strip() if frame is not None else ""


def _title(presentation: Presentation, first_title: str | None, path: Path) -> str:
    """For a deck whose first slide has no title: the core title (the first slide's wins over it: a
    template's leftover, `HQ Master Template 2023`, titled every deck made from it), else the first
    slide title, else the file name."""
    core_title = " ".join((presentation.core_properties.title or "").split())
    if core_title and not _GENERIC_TITLE.match(core_title):
        return core_title
    return first_title or title_from_path(path)
