"""Read an EPUB's title, spine documents and table of contents.

ebooklib is tried first. Real EPUBs break it (Debian's live-manual lists
manifest hrefs with `#fragment`s, and `read_epub` raises KeyError), so the
fallback reads the ZIP directly: META-INF/container.xml -> OPF -> manifest,
spine, and the NCX or EPUB 3 nav document. Both readers give paths in one
namespace (relative to the OPF folder) so the caller does not care which ran.
"""

from __future__ import annotations

import posixpath
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from ebooklib import ITEM_DOCUMENT, ITEM_NAVIGATION, epub
from lxml import etree

from linkly_ls.core.extract.html_render import visible_words

_XML_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=True)
_OPS_NS = "http://www.idpf.org/2007/ops"
_HTML_TYPES = ("application/xhtml+xml", "text/html", "application/x-dtbook+xml")


@dataclass
class TocEntry:
    level: int
    title: str
    href: str  # document path relative to the OPF folder, possibly with "#fragment"


@dataclass
class Chapter:
    href: str
    data: bytes


@dataclass
class EpubPackage:
    title: str | None
    chapters: list[Chapter] = field(default_factory=list)
    toc: list[TocEntry] = field(default_factory=list)
    #: files the spine lists that the ZIP does not hold (a damaged or cut copy)
    missing: list[str] = field(default_factory=list)


class EpubFormatError(Exception):
    """The ZIP is sound but its EPUB structure (container, OPF) is missing or broken."""


def read_with_ebooklib(path: Path) -> EpubPackage:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        book = epub.read_epub(str(path), options={"ignore_ncx": False})
    titles = book.get_metadata("DC", "title")
    package = EpubPackage(title=_clean(titles[0][0]) if titles else None)
    for idref, _linear in book.spine:
        item = book.get_item_with_id(idref)
        if item is not None and item.get_type() in (ITEM_DOCUMENT, ITEM_NAVIGATION):
            package.chapters.append(Chapter(href=posixpath.normpath(unquote(item.file_name)), data=item.get_content()))
    package.toc = _flatten_ebooklib_toc(book.toc, level=1)
    return package


def _flatten_ebooklib_toc(nodes, level: int) -> list[TocEntry]:
    entries: list[TocEntry] = []
    for node in nodes:
        if isinstance(node, tuple) and len(node) == 2:
            section, children = node
            entries.append(TocEntry(level, _clean(getattr(section, "title", "")), _href(getattr(section, "href", ""))))
            entries.extend(_flatten_ebooklib_toc(children, level + 1))
        elif isinstance(node, list):
            entries.extend(_flatten_ebooklib_toc(node, level))
        else:
            entries.append(TocEntry(level, _clean(getattr(node, "title", "")), _href(getattr(node, "href", ""))))
    return entries


def read_from_zip(archive: zipfile.ZipFile) -> EpubPackage:
    """Parse container, OPF, spine and NCX/nav without ebooklib (tolerates fragments in manifest hrefs)."""
    names = set(archive.namelist())
    container = _parse(archive, "META-INF/container.xml", names)
    rootfile = next((el.get("full-path") for el in container.iter() if _local(el) == "rootfile"), None)
    if not rootfile or rootfile not in names:
        raise EpubFormatError("META-INF/container.xml does not name a package (OPF) file that exists")
    opf = _parse(archive, rootfile, names)
    opf_dir = posixpath.dirname(rootfile)

    title = next((_clean("".join(el.itertext())) for el in opf.iter() if _local(el) == "title"), None)
    manifest: dict[str, tuple[str, str, str]] = {}
    spine_ids: list[str] = []
    ncx_id: str | None = None
    for element in opf.iter():
        name = _local(element)
        if name == "item" and element.get("id") and element.get("href"):
            href = posixpath.normpath(unquote(element.get("href").split("#", 1)[0]))
            manifest[element.get("id")] = (href, element.get("media-type", ""), element.get("properties", ""))
        elif name == "itemref" and element.get("idref"):
            spine_ids.append(element.get("idref"))
        elif name == "spine":
            ncx_id = element.get("toc")

    package = EpubPackage(title=title or None)
    seen: set[str] = set()
    for idref in spine_ids:
        href, media_type, _props = manifest.get(idref, ("", "", ""))
        member = _member(opf_dir, href)
        if href and member not in names and href not in package.missing:
            package.missing.append(href)
        if href in seen or member not in names:
            continue  # several manifest items may name one file with different #fragments
        if media_type in _HTML_TYPES or href.endswith((".xhtml", ".html", ".htm")):
            seen.add(href)
            package.chapters.append(Chapter(href=href, data=archive.read(member)))

    ncx = manifest.get(ncx_id or "") or next((m for m in manifest.values() if m[1] == "application/x-dtbncx+xml"), None)
    nav = next((m for m in manifest.values() if "nav" in m[2].split()), None)
    if ncx is not None:
        package.toc = _read_ncx(archive, opf_dir, ncx[0], names)
    if not package.toc and nav is not None:
        package.toc = _read_nav(archive, opf_dir, nav[0], names)
    return package


def _read_ncx(archive: zipfile.ZipFile, opf_dir: str, href: str, names: set[str]) -> list[TocEntry]:
    try:
        root = _parse(archive, _member(opf_dir, href), names)
    except EpubFormatError:
        return []
    base = posixpath.dirname(href)
    nav_map = next((el for el in root.iter() if _local(el) == "navMap"), None)
    entries: list[TocEntry] = []

    def visit(parent, level: int) -> None:
        for point in parent:
            if _local(point) != "navPoint":
                continue
            label = next((el for el in point.iter() if _local(el) == "text"), None)
            content = next((el for el in point if _local(el) == "content"), None)
            title = _clean("".join(label.itertext())) if label is not None else ""
            target = _join(base, content.get("src", "")) if content is not None else ""
            entries.append(TocEntry(level, title, target))
            visit(point, level + 1)

    if nav_map is not None:
        visit(nav_map, 1)
    return entries


def _read_nav(archive: zipfile.ZipFile, opf_dir: str, href: str, names: set[str]) -> list[TocEntry]:
    try:
        root = _parse(archive, _member(opf_dir, href), names)
    except EpubFormatError:
        return []
    base = posixpath.dirname(href)
    navs = [el for el in root.iter() if _local(el) == "nav"]
    toc_nav = next((el for el in navs if el.get(f"{{{_OPS_NS}}}type") == "toc"), navs[0] if navs else None)
    entries: list[TocEntry] = []

    def visit(list_element, level: int) -> None:
        for item in list_element:
            if _local(item) != "li":
                continue
            link = next((el for el in item if _local(el) in ("a", "span")), None)
            if link is not None:
                entries.append(TocEntry(level, _clean("".join(link.itertext())), _join(base, link.get("href", ""))))
            for child in item:
                if _local(child) in ("ol", "ul"):
                    visit(child, level + 1)

    if toc_nav is not None:
        top = next((el for el in toc_nav.iter() if _local(el) in ("ol", "ul")), None)
        if top is not None:
            visit(top, 1)
    return entries


#: the algorithms of font obfuscation (IDPF's and Adobe's), which hides fonts, not text
_FONT_OBFUSCATION = frozenset({"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"})
_TEXT_SUFFIXES = (".xhtml", ".html", ".htm", ".xml", ".ncx", ".opf")


def encrypted_documents(archive: zipfile.ZipFile) -> list[str]:
    """The text files `META-INF/encryption.xml` says are encrypted (DRM), not counting obfuscated fonts."""
    try:
        root = _parse(archive, "META-INF/encryption.xml", set(archive.namelist()))
    except (EpubFormatError, etree.XMLSyntaxError):  # none, or unreadable: the chapters tell
        return []
    encrypted: list[str] = []
    for data in root.iter():
        if _local(data) != "EncryptedData":
            continue
        method = next((child for child in data.iter() if _local(child) == "EncryptionMethod"), None)
        if method is not None and method.get("Algorithm") in _FONT_OBFUSCATION:
            continue
        for reference in data.iter():
            uri = reference.get("URI") if _local(reference) == "CipherReference" else None
            if uri and uri.lower().endswith(_TEXT_SUFFIXES):
                encrypted.append(uri)
    return encrypted


def _parse(archive: zipfile.ZipFile, member: str, names: set[str]):
    if member not in names:
        raise EpubFormatError(f"{member} is missing from the EPUB")
    root = etree.fromstring(archive.read(member), _XML_PARSER)
    if root is None:
        raise EpubFormatError(f"{member} is not readable XML")
    return root


def _member(opf_dir: str, href: str) -> str:
    return posixpath.join(opf_dir, href) if opf_dir else href


def _join(base: str, href: str) -> str:
    path, _, fragment = unquote(href).partition("#")
    joined = posixpath.normpath(posixpath.join(base, path)) if path else ""
    return f"{joined}#{fragment}" if fragment else joined


def _href(href: str) -> str:
    return _join("", href or "")


def _local(element) -> str:
    tag = element.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _clean(text: str) -> str:
    return visible_words(text or "")
