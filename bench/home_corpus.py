#!/usr/bin/env python3
"""A home-folder-like bench corpus, fetched from the package registries only.

The shared corpus is dominated by one 2,415-page PDF; a person's documents folder
is rather a dozen ordinary manuals of 60-400 pages, smaller PDFs, HTML pages,
Markdown notes and some office files. This script builds such a folder from
pinned public packages:

- Debian (`apt-get download`, unpacked with `dpkg-deb -x`): texlive-latex-recommended-doc
  (LaTeX package manuals: 12 of 74-266 pages, 17 smaller ones, 20 README.md),
  gnuplot-doc (its 311-page manual), octave-doc (liboctave's HTML manual) and
  maxima-doc (20 pages of its HTML manual);
- PyPI (`pip download` of the sdists): python-docx and python-pptx test files (DOCX, PPTX);
- npm (`npm pack`): marked's README and man page (Markdown).

Every download is checked against its sha256. Downloads and the corpus live in
`~/.cache/linkly-bench/home-corpus/` (or `--cache DIR`), never in the repository.

    .venv/bin/python bench/home_corpus.py            # fetch once, print the corpus folder
    .venv/bin/python bench/index_bench.py --corpus home
    .venv/bin/python bench/index_bench.py --corpus pdfs    # every PDF of the same packages
    .venv/bin/python bench/index_bench.py --corpus papers  # short PDFs of journal classes (another package)
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CACHE = Path.home() / ".cache" / "linkly-bench" / "home-corpus"
#: bump when the selection below changes, so an old corpus folder is rebuilt
LAYOUT = "1"
#: the folder of PDFs: 2 takes only the home-like corpus's packages (1 took the papers' too once fetched)
PDFS_LAYOUT = "2"


@dataclass(frozen=True)
class Package:
    registry: str  # "debian", "pypi" or "npm"
    name: str
    version: str
    sha256: str

    @property
    def filename(self) -> str:
        """What the registry's client writes: a .deb, an sdist, an npm pack."""
        if self.registry == "debian":
            return f"{self.name}_{self.version}_all.deb"
        if self.registry == "pypi":
            return f"{self.name.replace('-', '_')}-{self.version}.tar.gz"
        return f"{self.name}-{self.version}.tgz"


_PINNED = """
debian texlive-latex-recommended-doc 2022.20230122-3 8bea1f81bf50354fa4f3046c2dbb82efba9b8520aca0b2ab12eed18554a66c11
debian gnuplot-doc 5.4.4+dfsg1-2 73fe1816a296594cf6a1d38528f8d740fd650f57a2cb62e029f7920fcd5b31f0
debian octave-doc 7.3.0-2 b27897cc7e3d688daa5cb8f8d1ea47077f3fbd205ce32e22522200ff0c1eadd5
debian maxima-doc 5.46.0-11 01a726b693a7e465a62040ac5ade4762194d7553524231d77cd1fcd4a69a75b9
pypi python-docx 1.1.2 0cf1f22e95b9002addca7948e16f2cd7acdfd498047f1941ca5d293db7762efd
pypi python-pptx 1.0.2 479a8af0eaf0f0d76b6f00b0887732874ad2e3188230315290cd1f9dd9cc7095
npm marked 12.0.2 6cfd2d09c6bce2541558a1547e5f3b9895ed743f0d287536ff2280e318e8a074
"""
PACKAGES = [Package(*line.split()) for line in _PINNED.strip().splitlines()]
#: journal and conference templates, their sample articles, theses and class guides: the papers shape
#: (`ensure_papers`), fetched only for it (213 MB)
PAPERS_PACKAGE = Package(
    "debian", "texlive-publishers-doc", "2022.20230122-4", "9b632913d4b0d0871bef41c414fc7ce1167e3bacb55b140901df0c95df1c5765"
)
#: the papers shape keeps the package's PDFs of at most this many pages (614 of its 810)
PAPER_MAX_PAGES = 20

_TEX = "texlive-latex-recommended-doc/usr/share/doc/texlive-doc/latex"
#: the ordinary-sized manuals (pages): the shape that matters
LARGE_PDFS = [
    "gnuplot-doc/usr/share/doc/gnuplot/gnuplot.pdf",  # 311
    f"{_TEX}/microtype/microtype-code.pdf",  # 266
    f"{_TEX}/listings/listings-devel.pdf",  # 235
    f"{_TEX}/beamer/beameruserguide.pdf",  # 234
    f"{_TEX}/listings/lstdrvrs.pdf",  # 154
    f"{_TEX}/unicode-math/unicode-math-code.pdf",  # 144
    f"{_TEX}/fontspec/fontspec-code.pdf",  # 138
    f"{_TEX}/breqn/breqn.pdf",  # 121
    f"{_TEX}/unicode-math/unimath-symbols.pdf",  # 119
    f"{_TEX}/pdfmanagement-testphase/hyperref-generic.pdf",  # 106
    f"{_TEX}/mdwtools/mdwtab.pdf",  # 86
    f"{_TEX}/subfig/subfig.pdf",  # 75
    f"{_TEX}/xkeyval/xkeyval.pdf",  # 73
]
SMALL_PDFS = 17  # texlive manuals of 100-400 KB, in path order
HTML_MAXIMA = 20
MARKDOWN_TEX = 20
DOCX = [
    "tests/test_files/test.docx", "tests/test_files/having-images.docx",
    "features/steps/test_files/par-known-paragraphs.docx", "features/steps/test_files/par-hyperlinks.docx",
    "features/steps/test_files/tbl-having-tables.docx", "features/steps/test_files/hdr-header-footer.docx",
    "features/steps/test_files/sct-inner-content.docx", "features/steps/test_files/blk-paras-and-tables.docx",
]
PPTX = [
    "tests/test_files/test.pptx", "tests/test_files/test_slides.pptx",
    "features/steps/test_files/prs-notes.pptx", "features/steps/test_files/sld-slides.pptx",
    "features/steps/test_files/shp-shapes.pptx", "features/steps/test_files/txt-text.pptx",
    "features/steps/test_files/tbl-cell.pptx", "features/steps/test_files/cht-charts.pptx",
]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(package: Package, folder: Path) -> Path:
    """The package file in `folder`, downloaded through its registry's own client when missing."""
    target = folder / package.filename
    if not target.exists() or sha256(target) != package.sha256:
        target.unlink(missing_ok=True)
        if package.registry == "debian":
            command = ["apt-get", "download", f"{package.name}={package.version}"]
        elif package.registry == "pypi":
            command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                       "--disable-pip-version-check", "-q", "-d", ".", f"{package.name}=={package.version}"]
        else:
            command = ["npm", "pack", "-q", f"{package.name}@{package.version}"]
        subprocess.run(command, cwd=folder, check=True, stdout=subprocess.DEVNULL)
        if not target.exists():
            raise SystemExit(f"home_corpus: {' '.join(command)} did not write {package.filename}")
    actual = sha256(target)
    if actual != package.sha256:
        raise SystemExit(f"home_corpus: {package.filename} has sha256 {actual}, expected {package.sha256}")
    return target


def unpack(package: Package, archive: Path, folder: Path) -> Path:
    destination = folder / package.name
    if destination.is_dir():
        return destination
    partial = Path(tempfile.mkdtemp(prefix=f"{package.name}-", dir=folder))
    if package.registry == "debian":
        subprocess.run(["dpkg-deb", "-x", str(archive), str(partial)], check=True)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(partial, filter="data")
        (only,) = list(partial.iterdir())  # sdists and npm packs hold one top folder
        only.rename(partial / "_top")
        for entry in (partial / "_top").iterdir():
            entry.rename(partial / entry.name)
        (partial / "_top").rmdir()
    partial.rename(destination)
    return destination


def select(unpacked: Path) -> list[tuple[Path, str]]:
    """(source file, path in the corpus) for every file of the corpus."""
    chosen: list[tuple[Path, str]] = []
    for relative in LARGE_PDFS:
        chosen.append((unpacked / relative, f"manuals/{Path(relative).name}"))
    tex = unpacked / _TEX
    small = [p for p in sorted(tex.rglob("*.pdf")) if 100_000 <= p.stat().st_size <= 400_000]
    small = [p for p in small if p.relative_to(unpacked).as_posix() not in LARGE_PDFS][:SMALL_PDFS]
    chosen += [(p, f"papers/{p.parent.name}-{p.name}") for p in small]
    octave = unpacked / "octave-doc/usr/share/doc/octave/liboctave.html"
    chosen += [(p, f"web/liboctave/{p.name}") for p in sorted(octave.glob("*.html"))]
    maxima = sorted((unpacked / "maxima-doc/usr/share/doc/maxima-doc/html").glob("maxima_*.html"))
    chosen += [(p, f"web/maxima/{p.name}") for p in maxima[:HTML_MAXIMA]]
    readmes = sorted(tex.glob("*/README.md"))[:MARKDOWN_TEX]
    chosen += [(p, f"notes/{p.parent.name}.md") for p in readmes]
    for name in ("README.md", "man/marked.1.md"):
        chosen.append((unpacked / "marked" / name, f"notes/marked-{Path(name).name}"))
    chosen += [(unpacked / "python-docx" / name, f"office/{Path(name).name}") for name in DOCX]
    chosen += [(unpacked / "python-pptx" / name, f"office/{Path(name).name}") for name in PPTX]
    return chosen


def fetched(packages: list[Package], cache: Path) -> Path:
    """The folder the packages are unpacked in (each in a folder of its name), downloaded and checked first."""
    downloads, unpacked = cache / "downloads", cache / "unpacked"
    downloads.mkdir(parents=True, exist_ok=True)
    unpacked.mkdir(parents=True, exist_ok=True)
    for package in packages:
        unpack(package, download(package, downloads), unpacked)
    return unpacked


def ensure(cache: Path = DEFAULT_CACHE) -> Path:
    """The corpus folder, built on first use (downloads, checks and unpacks the pinned packages)."""
    corpus = cache / f"corpus-{LAYOUT}"
    if (corpus / ".complete").exists():
        return corpus
    unpacked = fetched(PACKAGES, cache)
    shutil.rmtree(corpus, ignore_errors=True)
    for source, relative in select(unpacked):
        target = corpus / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    (corpus / ".complete").write_text("")
    return corpus


def ensure_pdfs(cache: Path = DEFAULT_CACHE) -> Path:
    """A folder of ordinary PDFs: every PDF of the same pinned packages (161 files, 65 MB, 7,657 pages:
    LaTeX package manuals and papers, 74 of them without bookmarks), built on first use."""
    corpus = cache / f"pdfs-{PDFS_LAYOUT}"
    if (corpus / ".complete").exists():
        return corpus
    ensure(cache)  # downloads and unpacks the packages
    unpacked = cache / "unpacked"
    shutil.rmtree(corpus, ignore_errors=True)
    # only the home-like corpus's packages: the papers' package, once fetched, is unpacked beside them
    sources = sorted(source for package in PACKAGES for source in (unpacked / package.name).rglob("*.pdf"))
    for source in sources:
        target = corpus / source.relative_to(unpacked).parts[0] / source.name
        if target.exists():  # the same name in two folders of one package
            target = target.with_name(f"{source.parent.name}-{source.name}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    (corpus / ".complete").write_text("")
    return corpus


def ensure_papers(cache: Path = DEFAULT_CACHE) -> Path:
    """A folder of papers: every PDF of texlive-publishers-doc of at most PAPER_MAX_PAGES pages (614 files,
    139.5 MB, 3,579 pages: sample articles of journal and conference classes, most of them two-column,
    templates, short guides; 355 without bookmarks, so read with their fonts), built on first use."""
    import pymupdf

    corpus = cache / f"papers-{LAYOUT}"
    if (corpus / ".complete").exists():
        return corpus
    documents = fetched([PAPERS_PACKAGE], cache) / PAPERS_PACKAGE.name / "usr/share/doc/texlive-doc"
    shutil.rmtree(corpus, ignore_errors=True)
    for source in sorted(documents.rglob("*.pdf")):
        with pymupdf.open(source) as pdf:
            if pdf.page_count > PAPER_MAX_PAGES:
                continue
        parts = source.relative_to(documents).parts  # (format, package, ..., name)
        target = corpus / parts[1] / "-".join(parts[2:])
        if target.exists():  # a package documented under two formats (latex/, xelatex/)
            target = target.with_name(f"{parts[0]}-{target.name}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    (corpus / ".complete").write_text("")
    return corpus


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Fetch the home-folder-like bench corpus; print its folder.")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"where it goes (default {DEFAULT_CACHE})")
    corpus = ensure(parser.parse_args(argv).cache.expanduser())
    files = [p for p in corpus.rglob("*") if p.is_file() and p.name != ".complete"]
    print(f"{corpus}: {len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
