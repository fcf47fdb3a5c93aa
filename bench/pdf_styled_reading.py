#!/usr/bin/env python3
"""What reading PDF pages with their fonts costs, two ways, and whether the two agree.

Indexing reads a page "styled" (each line's font size and weight) where fonts matter: every page
of a PDF without bookmarks (its headings are found by font) and page 1 of the others (the title).
linkly reads those pages from MuPDF's JSON (lines, boxes) and MuPDF's HTML of the same text page
(every span's font); PyMuPDF's text dict gives the same. For every such page of a corpus this
script reads it both ways, each document opened afresh as a worker does, the two ways taking
turns over `--runs` rounds, and prints the CPU seconds of each round, then how many lines got
the same text, size and weight both ways and whether the headings found by font are the same.

    .venv/bin/python bench/pdf_styled_reading.py                 # --corpus both
    .venv/bin/python bench/pdf_styled_reading.py --corpus home --runs 5
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parent))

from index_bench import corpus_folders  # noqa: E402

from linkly_ls.core.extract import pdf_text  # noqa: E402
from linkly_ls.core.extract.pdf_outline import font_headings, has_bookmarks  # noqa: E402

HTML_PRINTER = pdf_text._print_html


def styled_pages(root: Path) -> list[tuple[Path, list[int]]]:
    """Each readable PDF under `root` (not `odd/`) with the pages indexing reads styled."""
    found: list[tuple[Path, list[int]]] = []
    for path in sorted(root.rglob("*.pdf")):
        if "odd" in path.relative_to(root).parts:
            continue
        try:
            with pymupdf.open(path) as doc:
                if doc.needs_pass or not doc.page_count:
                    continue
                found.append((path, [0] if has_bookmarks(doc) else list(range(doc.page_count))))
        except (RuntimeError, ValueError):
            continue
    return found


def read_all(files: list[tuple[Path, list[int]]], by_dict: bool) -> tuple[float, list[list[pdf_text.PdfPage]]]:
    pdf_text._print_html = None if by_dict else HTML_PRINTER
    try:
        pymupdf.TOOLS.store_shrink(100)  # no decoded fonts or images kept from the other way's round
        started = time.process_time()
        readings = []
        for path, numbers in files:
            with pymupdf.open(path) as doc:
                readings.append([pdf_text.read_page(doc[number], styled=True) for number in numbers])
        return time.process_time() - started, readings
    finally:
        pdf_text._print_html = HTML_PRINTER


def agreement(by_dict: list[list[pdf_text.PdfPage]], by_html: list[list[pdf_text.PdfPage]]) -> tuple[int, int, int, int]:
    """(lines, lines with the same text, size and weight, documents, documents with the same headings)."""
    lines = same = same_headings = 0
    for old_pages, new_pages in zip(by_dict, by_html):
        for old, new in zip(old_pages, new_pages):
            expected = Counter((line.text, line.size, line.bold) for line in old.lines)
            found = Counter((line.text, line.size, line.bold) for line in new.lines)
            lines += sum(expected.values())
            same += sum((expected & found).values())
        headings = [[(level, line.text) for line, level in font_headings(pages)] for pages in (old_pages, new_pages)]
        same_headings += headings[0] == headings[1]
    return lines, same, len(by_dict), same_headings


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="CPU of the styled PDF reading: text dict against JSON + HTML.")
    parser.add_argument("--corpus", default="both", help="shared, home, both (default) or a folder")
    parser.add_argument("--runs", type=int, default=3, help="rounds of each way, taking turns (default 3)")
    args = parser.parse_args(argv)
    if HTML_PRINTER is None:
        print("this MuPDF cannot print a text page as HTML: pages are read from the text dict")
        return 1
    for root in corpus_folders(args.corpus):
        files = styled_pages(root)
        seconds: dict[str, list[float]] = {"text dict": [], "JSON + HTML": []}
        readings: dict[str, list[list[pdf_text.PdfPage]]] = {}
        for round_number in range(args.runs):
            ways = ["text dict", "JSON + HTML"] if round_number % 2 == 0 else ["JSON + HTML", "text dict"]
            for way in ways:
                spent, readings[way] = read_all(files, by_dict=way == "text dict")
                seconds[way].append(spent)
        lines, same, documents, same_headings = agreement(readings["text dict"], readings["JSON + HTML"])
        pages = sum(len(numbers) for _, numbers in files)
        print(f"{root}: {len(files)} PDFs, {pages} pages read styled")
        for way, spent in seconds.items():
            print(f"  {way:<12} CPU-s per round: " + ", ".join(f"{value:.2f}" for value in spent))
        print(f"  same text, size and weight: {same:,} of {lines:,} lines; same headings by font: "
              f"{same_headings} of {documents} PDFs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
