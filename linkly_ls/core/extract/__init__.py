"""Turn a file into an ExtractedDocument, choosing the extractor by content.

The file name gives the expected format; the first bytes give the real one.
When they disagree (a PDF saved as `.docx`, an HTML page saved as `.txt`), the
real format wins and the document carries a warning saying so.
"""

from __future__ import annotations

import importlib
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from linkly_ls.core.document import ExtractedDocument, ExtractionError
from linkly_ls.core.extract.base import READ_ERROR, ExtractLimits, cap_lines, title_from_path

if TYPE_CHECKING:
    from linkly_ls.core.extract.source import OpenedSource
    from linkly_ls.core.extract.pdf import PageReading

#: file suffix -> document type (the `type` that search results and filters use)
DOC_TYPES: dict[str, str] = {
    ".md": "md",
    ".markdown": "md",
    ".mdown": "md",
    ".mdwn": "md",
    ".mkd": "md",
    ".mkdn": "md",
    ".mkdown": "md",
    ".mdx": "mdx",
    ".txt": "txt",
    ".text": "txt",
    ".rst": "txt",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
    ".docx": "docx",
    ".docm": "docx",
    ".dotx": "docx",
    ".dotm": "docx",
    ".epub": "epub",
    ".pptx": "pptx",
    ".pptm": "pptx",
    ".ppsx": "pptx",
    ".ppsm": "pptx",
    ".potx": "pptx",
    ".potm": "pptx",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".bmp": "image",
    ".webp": "image",
    ".tif": "image",
    ".tiff": "image",
}

#: the suffixes of notes (Markdown and MDX): what wikilinks name without a suffix and links may drop
NOTE_SUFFIXES: tuple[str, ...] = tuple(suffix for suffix, kind in DOC_TYPES.items() if kind in ("md", "mdx"))

#: document type -> module in this package that extracts it
_MODULES: dict[str, str] = {
    "md": "markdown",
    "mdx": "markdown",
    "txt": "text",
    "html": "html",
    "pdf": "pdf",
    "docx": "docx",
    "epub": "epub",
    "pptx": "pptx",
    "image": "image",
}


#: version of each document type's extractor (types not named: 1). Raised when an extractor reads an
#: unchanged file differently (a new title rule, text it used to miss); the next index run reads the
#: documents an older version read again. txt 2: a file whose only line reads as a title is titled by it;
#: pdf 2: links to named destinations (LaTeX's internal links) are kept; pdf 3: the lines of a page turned
#: by 90 or 270 degrees below its turned height are kept and its links placed on their lines, a page read
#: with its fonts keeps a line that runs off the page whole, and a PDF keeps up to 50 links a page; pdf 4:
#: a page turned by /Rotate is read as it is shown, a bookmark whose destination gives a top alone
#: starts at the line there, and a link to a named destination of another PDF is kept; pdf 5: a link to
#: another PDF keeps the page or the name it leads to, a `file:` URI without either is kept, and a link
#: to a named destination keeps the name; html 2 and epub 2: a footnote written as an <aside> is kept;
#: docx 2: footnotes and endnotes are read, under headings of their own at the end, and a picture's
#: alternative text (`[image: ...]`), as pptx 3 does; md 2 and mdx 2: the front matter's `aliases`; txt 3: a
#: subsection numbered `5.21.` whose name is in lower case (`watch`) is a heading; pdf 6: one line's links to
#: one place are one link; html 3 and epub 3: links in table rows and headings, an EPUB chapter marker named
#: for the entry its first lines belong to; docx 3: text as Word shows it (insertions, content controls,
#: fields, text boxes, list numbers; not hidden text), notes numbered as shown; pptx 4: hidden and missing slides; and
#: in pdf 6, epub 3 and pptx 4, a section ends before the page marker above the next heading; md 3 and
#: mdx 3: a wikilink naming a file with its suffix (`![[diagram.png]]`) is stored under that file's name, the
#: front matter's aliases, tags and wikilinks are read; txt 4: a subsection whose name starts with a number
#: (`10.3.5 304 Not Modified`) is a heading; txt 5, md 4, mdx 4 and html 4: binary data under a text
#: file's name (an executable named .txt) fails instead of being read as mojibake; html 4 also keeps every
#: element id as an anchor and leaves out documentation generators' navigation bars and permalinks; md 5
#: and mdx 5: a heading's attribute list (`{ #id }`, `{: #id .class }`) is out of its title, the anchors
#: a note sets (`<a name="x">`, `{#id}`) are kept, code spans on a line that opens with a tag and (md)
#: indented code blocks keep their tags, entities read as their characters, a `:::warning Title` keeps
#: its title alone, a `.md` file's one-line ES imports are blanked, and so are an MDX opening tag and a
#: `{/* */}` comment that span lines; pdf 7: a first page's largest text of mostly symbols (a font mapping
#: letters to dingbats) titles no PDF; pdf 8: a scanned page whose only text is a stamp in its margin is read
#: by OCR, a block that starts one line below a full line (each line of a hanging indent, of a double-spaced
#: filing) gets no blank line, and a margin's line numbering is left out;
#: html 5 and epub 4: soft hyphens are out of words, a note's mark stands apart from the word it follows, a
#: ruby annotation's reading is left out, and (html) a site's logo in the first h1 titles no page; docx 4:
#: table rows and cells in content controls, and a text box in a cell, are read, a style based on a heading
#: style is a heading, outline level 9 is body text, the headers' and footers' texts and the comments are
#: read at the end, the Title paragraph titles the document before the core title, and a vertically merged
#: cell reads on every row it spans; pptx 5: the first slide's title titles the deck before the core
#: title, and a merged table cell is one column
EXTRACTOR_VERSIONS: dict[str, int] = {"txt": 5, "pdf": 8, "pptx": 5, "html": 5, "epub": 4, "docx": 4, "md": 5, "mdx": 5}


#: in the warning of a file whose content is another format than its name says (read as what it is)
MISNAMED_MARK = " name says; read as "


def extractor_version(path: Path) -> int:
    """The version of the extractor a file's name sends it to (1 for files of no indexed type)."""
    return EXTRACTOR_VERSIONS.get(doc_type_for(path) or "", 1)


def extractor_module(doc_type: str) -> str:
    """The module that extracts documents of `doc_type` (imported when the first one is read)."""
    return f"{__name__}.{_MODULES[doc_type]}"


def extractor_modules() -> list[str]:
    """Every extractor module, in name order."""
    return sorted({extractor_module(doc_type) for doc_type in _MODULES})


def doc_type_for(path: Path) -> str | None:
    """The document type a file name promises, or None when it is not indexed."""
    return DOC_TYPES.get(path.suffix.lower())


def is_supported(path: Path) -> bool:
    return doc_type_for(path) is not None


def sniff(path: Path) -> str | None:
    """The real format of a file from its first bytes, when they are telling."""
    with path.open("rb") as handle:
        head = handle.read(2048)
    if head.startswith(b"%PDF-") or b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith(b"\x89PNG") or head.startswith(b"\xff\xd8\xff") or head.startswith(b"BM"):
        return "image"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image"
    if head.startswith(b"PK\x03\x04"):
        return _sniff_zip(path)
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if stripped.startswith(b"<?xml") and b"?>" in stripped:
        stripped = stripped[stripped.index(b"?>") + 2 :].lstrip()
    if stripped.startswith(b"<!doctype html") or stripped.startswith(b"<html"):
        return "html"
    return None


#: ends the error of a file over `[limits] max_file_mb`: a failure the configuration, not the file, decides
SIZE_LIMIT_MARK = "([limits] max_file_mb)"
#: the marks of the errors of a size limit a user may raise: the file is tried again at each run (a size
#: and a ZIP's directory cost nothing to check), unlike a time limit, whose check would cost that time
SIZE_LIMIT_MARKS = (SIZE_LIMIT_MARK, "([limits] max_unzipped_mb)")
#: the warning of a text file of 0 bytes, indexed by its name
EMPTY_NOTE_WARNING = "empty file (0 bytes): indexed by its name, without text"
#: formats whose files are never text: one that holds UTF-8 text is read as text
BINARY_TYPES = frozenset({"pdf", "docx", "epub", "pptx", "image"})


#: the control bytes text holds: tab, line feed, form feed, carriage return, escape
_TEXT_CONTROLS = frozenset(b"\t\n\x0c\r\x1b")


def holds_text(path: Path) -> bool:
    """Whether the file's first bytes are UTF-8 text: no control bytes but tab, line breaks, form feed and
    escape (a damaged ZIP starts `PK\x03\x04`); a character cut at the end of them is fine."""
    with path.open("rb") as handle:
        head = handle.read(2048)
    if not head or any(byte < 32 and byte not in _TEXT_CONTROLS for byte in head):
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start >= len(head) - 3 and len(head) == 2048
    return True


def _sniff_zip(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            marker = archive.getinfo("mimetype") if "mimetype" in names else None
            if marker and marker.file_size < 1024 and archive.read(marker).strip() == b"application/epub+zip":
                return "epub"
    except Exception:  # noqa: BLE001 - zipfile fails in many ways on damaged archives; the named type's extractor reports it
        return None
    if "word/document.xml" in names:
        return "docx"
    if "ppt/presentation.xml" in names:
        return "pptx"
    return None


def extract_file(
    path: Path,
    limits: ExtractLimits | None = None,
    pdf_pages: PageReading | None = None,
    source: OpenedSource | None = None,
) -> ExtractedDocument:
    """Extract one file. Raises ExtractionError with a reason a person can act on.

    `pdf_pages`: a PDF's pages read beforehand (see core/pdf_split.py); used only when the file is a PDF.
    `source`: the file opened already (indexing opens a library file so, never through a link); its
    readers then read what it holds, and `path` only names it.
    """
    limits = limits or ExtractLimits()
    named_type = doc_type_for(path)
    if named_type is None:
        raise ExtractionError(f"unsupported file type {path.suffix or '(no extension)'}")
    path = source.read_path if source is not None else path
    try:
        size = path.stat().st_size
    except OSError as error:
        raise ExtractionError(f"{READ_ERROR}{error.strerror or error}") from error
    if size == 0:
        if named_type in BINARY_TYPES:  # no PDF, DOCX or image is 0 bytes: a copy cut short or a placeholder
            raise ExtractionError("empty file (0 bytes)")
        # an empty note is a note: Obsidian writes one for every unresolved link followed; it is found by
        # its name and links to it resolve
        return ExtractedDocument(
            lines=[], title=title_from_path(path), doc_type=named_type, warnings=[EMPTY_NOTE_WARNING]
        )
    if size > limits.max_file_bytes:
        raise ExtractionError(f"file is {size:,} bytes, over the {limits.max_file_bytes:,}-byte limit {SIZE_LIMIT_MARK}")
    try:
        real_type = sniff(path)
    except OSError as error:
        raise ExtractionError(f"{READ_ERROR}{error.strerror or error}") from error
    if real_type is None and named_type in BINARY_TYPES and holds_text(path):
        real_type = "txt"  # a note or a page saved under a binary format's name: read its text
    doc_type = named_type
    notes: list[str] = []
    if real_type and real_type != named_type and not (
        real_type == "html" and named_type in ("md", "mdx")
    ):
        notes.append(
            f"content is {real_type.upper()}, not what the {path.suffix}{MISNAMED_MARK}{real_type.upper()}"
        )
        doc_type = real_type
    module = importlib.import_module(extractor_module(doc_type))
    try:
        if doc_type == "pdf" and pdf_pages is not None:
            document: ExtractedDocument = module.extract(path, limits, pdf_pages)
        else:
            document = module.extract(path, limits)
    except ExtractionError:
        raise
    except MemoryError as error:
        raise ExtractionError("ran out of memory while extracting") from error
    except Exception as error:  # a parser library's own failure on a broken file
        raise ExtractionError(_describe_failure(path, doc_type, error)) from error
    if source is not None:
        source.check_unchanged()
    document.doc_type = doc_type if doc_type != "mdx" or named_type == "mdx" else named_type
    document.warnings[:0] = notes
    cap_lines(document, limits)
    return document


#: the formats kept in a ZIP container of XML parts
ZIP_TYPES = frozenset({"docx", "pptx", "epub"})


def _describe_failure(path: Path, doc_type: str, error: Exception) -> str:
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if isinstance(error, SyntaxError) and doc_type in ZIP_TYPES:  # lxml's XMLSyntaxError names no part
        from linkly_ls.core.extract.zipguard import damaged_xml_member

        member = damaged_xml_member(path)
        if member is not None:
            return f"not a readable {doc_type.upper()} file: its part {member!r} is damaged XML ({detail[:200]})"
    return f"not a readable {doc_type.upper()} file ({type(error).__name__}: {detail[:200]})"
