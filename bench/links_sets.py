"""The linked-Markdown documentation sets `links_bench.py` measures, fetched from package registries.

Each set is a real documentation folder written as Markdown files that link to
each other, taken from a package at a pinned version whose archive checksum is
checked; it is unpacked once into the bench cache (never into the repository):

- `serverless`: the `docs/` folder of the npm package `serverless` 3.38.0
  (397 Markdown files: guides and provider references, inline relative links
  such as `[functions](./functions.md#configuration)` and many site URLs);
- `node-api`: the Node.js 18 API reference (`nodejs-doc`, Debian 12): 64
  long Markdown files linked almost only by reference-style links
  (`` [`fs.readFile()`][] `` with `[...]: fs.md#fsreadfilepath-options-callback`).

`hide_links` writes the copy of a set that the `related` measure indexes: every
link linkly finds is replaced by its visible text, and reference definitions
are dropped, so no target name is left in the text.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from linkly_ls.core.extract.markdown_links import find_links

#: where the sets (and the notes folders built from them) are kept
DEFAULT_CACHE = Path.home() / ".cache" / "linkly-bench" / "links"
_DEFINITION_PREFIX = ("[", " [", "  [", "   [")
#: the second half of a link whose text wraps: `rest of text](target)` or `rest][label]`
_WRAPPED_TAIL = re.compile(r"^([^\[\]]*)\](?:\([^()]*\)|\[[^\[\]]*\])")


@dataclass(frozen=True)
class DocSet:
    name: str
    registry: str  # "npm" or "debian"
    package: str
    version: str
    sha256: str
    #: the folder of the unpacked archive that holds the Markdown files
    inner: str
    description: str


SETS = {
    "serverless": DocSet(
        "serverless", "npm", "serverless", "3.38.0",
        "86db353e26099b611bb3e6eef1f789b33802000dc818ae73f10b3a39bbe450d4", "package/docs",
        "npm serverless@3.38.0 docs/ (inline relative links)",
    ),
    "node-api": DocSet(
        "node-api", "debian", "nodejs-doc", "18.20.4+dfsg-1~deb12u3",
        "d2fbd4f3aecccea9d901a03842ef8380379e0d33010a48af5e797ed68ae874ce", "usr/share/doc/nodejs/api",
        "Debian nodejs-doc 18.20.4 API reference (reference-style links)",
    ),
}


class FetchError(Exception):
    """A set could not be fetched or did not match its pinned checksum."""


def fetch(doc_set: DocSet, cache: Path) -> Path:
    """The folder of the set's Markdown files in `cache`, fetched and unpacked on first use."""
    folder = cache / "sets" / f"{doc_set.name}-{doc_set.version}"
    marker = folder / ".complete"
    if marker.exists():
        return folder / "docs"
    archive = _download(doc_set, cache / "downloads")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != doc_set.sha256:
        raise FetchError(f"{archive.name}: sha256 {digest}, expected {doc_set.sha256} (pinned)")
    if folder.exists():
        shutil.rmtree(folder)
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        unpacked = Path(scratch)
        if doc_set.registry == "npm":
            with tarfile.open(archive) as tar:
                tar.extractall(unpacked, filter="data")
        else:
            subprocess.run(["dpkg-deb", "-x", str(archive), str(unpacked)], check=True)
        _copy_markdown(unpacked / doc_set.inner, folder / "docs")
    marker.write_text(f"{doc_set.package} {doc_set.version} sha256 {doc_set.sha256}\n")
    return folder / "docs"


def _download(doc_set: DocSet, downloads: Path) -> Path:
    """The package archive, through the registry's own client (`npm pack`, `apt-get download`)."""
    downloads.mkdir(parents=True, exist_ok=True)
    if doc_set.registry == "npm":
        found = downloads / f"{doc_set.package}-{doc_set.version}.tgz"
        command = ["npm", "pack", f"{doc_set.package}@{doc_set.version}", "--silent"]
    else:
        found = downloads / f"{doc_set.package}_{doc_set.version.replace(':', '%3a')}_all.deb"
        command = ["apt-get", "download", f"{doc_set.package}={doc_set.version}"]
    if found.exists():
        return found
    try:
        result = subprocess.run(command, cwd=downloads, capture_output=True, text=True, timeout=300)
    except FileNotFoundError as error:
        raise FetchError(f"{command[0]} is not installed: {error}") from None
    if result.returncode != 0 or not found.exists():
        last = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise FetchError(f"`{' '.join(command)}` failed: {last[0]}")
    return found


def _copy_markdown(source: Path, target: Path) -> None:
    """Every `.md` file below `source` (Debian's `.md.gz` decompressed), same relative paths."""
    if not source.is_dir():
        raise FetchError(f"the package has no folder {source.name}")
    for path in sorted(source.rglob("*")):
        if path.name.endswith(".md.gz"):
            relative = path.relative_to(source).with_suffix("")
            data = gzip.decompress(path.read_bytes())
        elif path.suffix == ".md" and path.is_file():
            relative = path.relative_to(source)
            data = path.read_bytes()
        else:
            continue
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        (target / relative).write_bytes(data)


def ensure_notes(cache: Path, copies: int = 1) -> Path:
    """A folder of Markdown notes for `index_bench.py --corpus notes`: both sets side by side
    (`notes-1/serverless`, `notes-1/node-api`: 457 files, 4.6 MB), built once in `cache`. With
    `copies` > 1 (`--corpus notes-x10`), that many copies of it in folders of their own: a large
    vault of the same files, for how indexing grows with the number of notes."""
    folder = cache / ("notes-1" if copies == 1 else f"notes-1-x{copies}")
    if not (folder / ".complete").exists():
        if folder.exists():
            shutil.rmtree(folder)
        for copy in range(1, copies + 1):
            for name, doc_set in SETS.items():
                shutil.copytree(fetch(doc_set, cache), folder / (f"copy-{copy}" if copies > 1 else "") / name)
        (folder / ".complete").write_text(" ".join(f"{s.package} {s.version}" for s in SETS.values()) + "\n")
    return folder


def markdown_files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*.md") if path.is_file())


def hide_links(source: Path, target: Path) -> int:
    """Copy `source` to `target` with every link replaced by its visible text; returns links hidden."""
    if target.exists():
        shutil.rmtree(target)
    hidden = 0
    for path in markdown_files(source):
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        hidden += _hide_in(lines)
        copy = target / path.relative_to(source)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text("\n".join(lines), encoding="utf-8")
    return hidden


def _hide_in(lines: list[str]) -> int:
    links = find_links(lines)
    by_line: dict[int, list] = {}
    for link in links:
        by_line.setdefault(link.line, []).append(link)
    for number, found in by_line.items():
        line = lines[number - 1]
        for link in sorted(found, key=lambda item: -item.start):
            if link.end >= len(line) and number < len(lines) and _WRAPPED_TAIL.match(lines[number]):
                # text wrapping onto the next line: keep both halves of the text, drop the markup
                line = line[: link.start] + line[link.start + 1 :]
                lines[number] = _WRAPPED_TAIL.sub(r"\1", lines[number], count=1)
                continue
            shown = link.text if link.kind != "autolink" else ""
            line = line[: link.start] + shown + line[link.end :]
        lines[number - 1] = line
    for index, line in enumerate(lines):
        if line.startswith(_DEFINITION_PREFIX) and _is_definition(line):
            lines[index] = ""
    return len(links)


def _is_definition(line: str) -> bool:
    """`[label]: target` (what reference links point to; it names the target)."""
    stripped = line.lstrip()
    close = stripped.find("]:")
    return stripped.startswith("[") and close > 1 and "[" not in stripped[1:close]
