"""What a link's raw target says, read once at index time: a path, a wikilink name, or neither.

A path is resolved relative to the source file (`../b.md#part` from
`/notes/a/x.md` is `/notes/b.md` with the fragment `part`); a wikilink keeps
its name key (the file name or title it names, casefolded); a URL with a
scheme and a site-absolute path (`/en/guide/`) keep only their raw target.
Which document a path or name really is gets decided when the link is read
(`resolver.py`), so a link written before its target exists resolves as soon
as the target is indexed; the paths a link path may mean (`path_candidates`), and
the paths a link to a document may carry (`paths_naming`), are decided here.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from urllib.parse import unquote

from linkly_ls.core.document import Link
from linkly_ls.core.extract import DOC_TYPES, NOTE_SUFFIXES
from linkly_ls.core.store.records import LinkRecord, title_key

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def is_external(target: str) -> bool:
    """A URL with a scheme (`https:`, `mailto:`) or a protocol-relative `//host` one."""
    return bool(_SCHEME.match(target)) and not re.match(r"^[a-zA-Z]:[\\/]", target) or target.startswith("//")


def is_site_path(target: str) -> bool:
    """A path from a web site's root (`/en/guide/`), which no file path on disk answers."""
    return target.startswith("/") and not target.startswith("//")


def link_records(links: list[Link], source_path: str) -> list[LinkRecord]:
    return [link_record(link, source_path) for link in links]


def link_record(link: Link, source_path: str) -> LinkRecord:
    target = link.target.strip()
    target_path: str | None = None
    target_name: str | None = None
    fragment = ""
    if link.target_line is not None:
        target_path = source_path
        fragment = target.partition("#")[2]
    elif link.kind == "wiki":
        name, _, fragment = target.partition("#")
        name = name.strip()
        if name:
            target_name = wikilink_key(name)
        else:
            target_path = source_path
    elif is_external(target) or is_site_path(target):
        pass
    else:
        path_part, _, fragment = target.partition("#")
        path_part = path_part.partition("?")[0]
        if path_part:
            joined = posixpath.join(posixpath.dirname(source_path), unquote(path_part))
            target_path = posixpath.normpath(joined)
        else:
            target_path = source_path
    return LinkRecord(
        line=link.line,
        start=link.start,
        end=link.end,
        kind=link.kind,
        target=target,
        text=link.text,
        target_path=target_path,
        target_name=target_name,
        fragment=_unquoted(fragment.strip()),
        target_line=link.target_line,
    )


def _unquoted(text: str) -> str:
    """`text` with its %-escapes decoded; most fragments have none (a PDF's thousands of `page=N`)."""
    return unquote(text) if "%" in text else text


def wikilink_key(name: str) -> str:
    """The name key of `[[name]]` (or `[[folder/name.md]]`): its last part, without a note's suffix or the
    suffix of another type linkly reads (`![[diagram.png]]`, `[[paper.pdf]]`: the file's name key)."""
    last = _last_part(name)
    if last.lower().endswith(NOTE_SUFFIXES) or wikilink_suffix(name):
        last = last[: last.rindex(".")]
    return title_key(last)


def wikilink_suffix(name: str) -> str:
    """The suffix of `[[name]]` when it names a file of a type linkly reads other than a note
    (`![[diagram.png]]`): such a link means that file, not a note of the same name."""
    suffix = posixpath.splitext(_last_part(name))[1].lower()
    return suffix if suffix in DOC_TYPES and suffix not in NOTE_SUFFIXES else ""


def is_note_path(path: str) -> bool:
    return path.lower().endswith(NOTE_SUFFIXES)


def _last_part(name: str) -> str:
    return name.partition("#")[0].replace("\\", "/").strip().rstrip("/").rsplit("/", 1)[-1]


def wikilink_folder(name: str) -> str:
    """The folder part of `[[folder/name]]` ("" without one): it narrows which same-named note is meant."""
    cleaned = name.partition("#")[0].replace("\\", "/").strip().rstrip("/")
    return cleaned.rsplit("/", 1)[0] if "/" in cleaned else ""


def heading_slug(title: str) -> str:
    """The anchor GitHub gives a heading (github-slugger; mdBook, Docusaurus and Astro alike for most):
    lower case, punctuation and symbols dropped, each space a hyphen, nothing trimmed: `## 🚀 Launch plan`
    is `#-launch-plan`, `## Straße` is `#straße`."""
    title = unicodedata.normalize("NFC", title.strip())
    return "".join(char for char in title.lower() if _in_slug(char)).replace(" ", "-")


def loose_heading_slug(title: str) -> str:
    """The same anchor case-folded and trimmed (`#launch-plan`, `#strasse`): how other renderers and hand-written
    links spell it, which a link is also understood by."""
    slug = "".join(char for char in unicodedata.normalize("NFC", title).casefold() if _in_slug(char))
    return slug.strip().replace(" ", "-")


def _in_slug(char: str) -> bool:
    """Letters, digits and the marks that complete them (`हिन्दी`'s vowel signs, as github-slugger keeps them)."""
    return char.isalnum() or char in " -_" or unicodedata.category(char).startswith("M")


#: the files a link to their folder means (`[docs](docs/)`), as static site generators serve them
INDEX_NAMES = ("index.md", "README.md", "readme.md", "index.mdx", "_index.md", "index.html")


def paths_naming(path: str) -> list[str]:
    """Every target path a link to the document at `path` may carry (see `path_candidates`)."""
    root, extension = posixpath.splitext(path)
    paths = {path}
    if extension.lower() in NOTE_SUFFIXES:
        paths |= {root, root + ".html", root + ".htm"}
    if posixpath.basename(path) in INDEX_NAMES:
        paths.add(posixpath.dirname(path))
    return sorted(paths) if path.isascii() else both_forms(sorted(paths))


def path_candidates(path: str) -> list[str]:
    """The indexed paths a link to `path` may mean, most literal first; a name with accents also as
    macOS writes it (decomposed) and as typed elsewhere (composed), which its file system takes alike."""
    candidates = [path]
    root, extension = posixpath.splitext(path)
    if extension.lower() in (".html", ".htm"):
        candidates += [root + ".md", root + ".mdx"]
    elif not extension or not extension[1:].isalpha():
        candidates += [path + ".md", path + ".mdx"]
    candidates += [posixpath.join(path, name) for name in INDEX_NAMES]
    return candidates if path.isascii() else both_forms(candidates)


def both_forms(paths: list[str]) -> list[str]:
    """Each path, then its composed (NFC) and decomposed (NFD) forms where they differ."""
    forms = (form for path in paths for form in (path, unicodedata.normalize("NFC", path), unicodedata.normalize("NFD", path)))
    return list(dict.fromkeys(forms))
