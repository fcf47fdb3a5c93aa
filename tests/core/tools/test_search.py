"""`search`: dedup, filters, dates, sorting, snippets and the miss guidance on a known library."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkly_ls.core.tools import ArgumentError, call_tool
from support.tool_library import copy_rust_chapters_and_slides, rel, search


def test_search_dedupes_identical_content_and_fills_every_field(engine):
    result = search(engine)
    paths = rel(engine, result.results)
    assert len(paths) == len(set(paths))
    assert not ({"copy/receipts-again.md", "Notion-Export-c58e/workspace/receipts.md"} <= set(paths))
    data = result.results[0].to_json()
    for key in ("doc_id", "title", "path", "relevance", "word_count", "total_lines", "has_outline",
                "modified_at", "keywords", "snippet"):
        assert key in data
    assert 0 <= data["relevance"] <= 1 and "**" in data["snippet"]


def test_many_copies_of_a_file_show_once_and_leave_room_for_other_documents(engine_for, library_dir):
    for number in range(80):  # more copies than the first page of documents search reads
        (library_dir / f"copy-{number:02d}.md").write_text("# Tides\n\nSpring tides and neap tides.\n", encoding="utf-8")
    (library_dir / "other.md").write_text("# Moon\n\nThe moon raises tides.\n", encoding="utf-8")
    engine = engine_for(library_dir)
    engine.index()
    result = call_tool(engine, "search", {"query": "spring neap tides", "limit": 3})
    names = [Path(hit.path).name for hit in result.results]
    assert len(names) == 2 and "other.md" in names and names[0].startswith("copy-")
    copies = result.results[names.index(names[0])].also_as
    assert len(copies) == 79 and all(Path(copy.path).name.startswith("copy-") for copy in copies)


def test_a_copy_still_on_disk_shows_the_work_when_the_best_ranked_file_is_gone(engine_for, library_dir):
    """A file moved away (not yet re-indexed) led its work as `deleted`, its live copy under `also_as`."""
    text = "# Tides\n\nSpring tides and neap tides.\n"
    for name in ("a.md", "b.md"):
        (library_dir / name).write_text(text, encoding="utf-8")
    engine = engine_for(library_dir)
    engine.index()
    before = call_tool(engine, "search", {"query": "spring neap tides", "limit": 1}).results[0]
    Path(before.path).unlink()
    (hit,) = call_tool(engine, "search", {"query": "spring neap tides", "limit": 1}).results
    assert Path(hit.path).exists() and [other.path for other in hit.also_as] == [before.path]
    assert "on_disk" not in hit.to_json()


def test_a_chapter_and_the_slides_converted_from_it_are_one_result_naming_both(engine_for, tmp_path):
    library = copy_rust_chapters_and_slides(tmp_path)
    engine = engine_for(library)
    engine.index()
    result = call_tool(engine, "search", {"query": "ownership rules heap stack", "limit": 5})
    names = [Path(hit.path).name for hit in result.results]
    chapter, slides = "ch04-01-what-is-ownership.md", "rust ownership - lunch and learn.pptx"
    assert (chapter in names) != (slides in names)
    shown = result.results[names.index(chapter if chapter in names else slides)]
    assert [Path(other.path).name for other in shown.also_as] == [slides if chapter in names else chapter]
    assert shown.to_json()["also_as"][0]["doc_type"] in {"md", "pptx"}
    assert "- also as: " in result.to_markdown()
    assert len(result.results) >= 2 and all("also_as" not in hit.to_json() for hit in result.results if hit is not shown)


def test_snippet_term_matching_agrees_with_marking():
    from linkly_ls.core.search.snippets import QueryMatcher, best_snippet

    texts = ["Installing packages: the installer installs one package.", "Paketen installieren", "nothing here", ""]
    for query in ("installing packages", "Pakete installieren", "软件 package", "the"):
        matcher = QueryMatcher(query)
        for text in texts + ["软件包管理 and packages"]:
            assert matcher.terms_in(text)[0] == matcher.mark(text)[1]
    snippet = best_snippet(QueryMatcher("installing packages"), texts, 1, 4)
    assert snippet.line == 1 and snippet.text.startswith("**Installing** **packages**")


@pytest.mark.parametrize(
    "glob, expected",
    [
        ("papers/", {"papers/2024/report-q3.md", "papers/2023/report.md", "papers/[draft]*/notes.txt"}),
        ("2024*q3", {"papers/2024/report-q3.md"}),
        ("papers*q?.md", {"papers/2024/report-q3.md"}),
        ("Notion-Export", {"Notion-Export-c58e/workspace/ideas.md", "Notion-Export-c58e/workspace/receipts.md"}),
        ("notion-export", set()),
        (r"papers/\[draft\]\*/", {"papers/[draft]*/notes.txt"}),
    ],
)
def test_path_glob_is_substring_case_sensitive_with_star_spanning_slashes(engine, glob, expected):
    hits = search(engine, path_glob=glob, limit=50).results
    found = set(rel(engine, hits))
    if "copy/receipts-again.md" in found:
        found.discard("copy/receipts-again.md")
        found.add("Notion-Export-c58e/workspace/receipts.md")
    assert found == expected


def test_date_bounds_are_inclusive_and_bare_before_date_covers_the_day(engine):
    hits = search(engine, modified_after="2024-07-01", modified_before="2024-09-30", limit=50).results
    assert set(rel(engine, hits)) == {"Notion-Export-c58e/workspace/ideas.md", "papers/2024/report-q3.md"}
    exact = search(engine, modified_after="2023-12-31T23:59:59Z", modified_before="2023-12-31T23:59:59+00:00").results
    assert rel(engine, exact) == ["papers/2023/report.md"]


def test_time_sort_reorders_after_selection(engine):
    newest = rel(engine, search(engine, time_sort="newest", limit=50).results)
    oldest = rel(engine, search(engine, time_sort="oldest", limit=50).results)
    assert newest[0] == "papers/2024/report-q3.md"
    assert oldest == list(reversed(newest))
    assert rel(engine, search(engine, time_sort="newest", limit=2).results) == newest[:2]


def test_time_sort_leaves_out_weak_hits_when_some_match_well(tmp_path):
    """The oldest *matching* document: a passage sharing one word of six, older than all, came first."""
    import os

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    root = tmp_path / "notes"
    root.mkdir()
    words = "alpine glacier moraine crevasse serac icefall"
    files = {"old-alpine.md": ("# Skiing\n\nalpine skiing for beginners\n", 1_000_000_000),
             "glaciers-2019.md": (f"# Ice\n\n{words}\n", 1_560_000_000), "glaciers-2023.md": (f"# Ice again\n\n{words} {words}\n", 1_690_000_000)}
    for name, (text, mtime) in files.items():
        (root / name).write_text(text, encoding="utf-8")
        os.utime(root / name, (mtime, mtime))
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        ranked = call_tool(engine, "search", {"query": words}).results
        assert {Path(hit.path).name for hit in ranked} == set(files) and min(hit.relevance for hit in ranked) < 0.2
        oldest = call_tool(engine, "search", {"query": words, "time_sort": "oldest"}).results
        assert [Path(hit.path).name for hit in oldest] == ["glaciers-2019.md", "glaciers-2023.md"]
    finally:
        engine.close()


def test_filters_by_type_and_library(engine):
    assert rel(engine, search(engine, doc_types=["txt"]).results) == ["papers/[draft]*/notes.txt"]
    assert search(engine, library="docs").results
    assert search(engine, library="local://docs").results
    with pytest.raises(ArgumentError, match="does not exist; available: docs"):
        search(engine, library="nope")


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"limit": 0}, "`limit` must be an integer from 1 to 50"),
        ({"limit": 51}, "from 1 to 50"),
        ({"modified_after": "last week"}, "`modified_after` must be a date"),
        ({"time_sort": "random"}, "`time_sort` must be one of default, newest, oldest"),
        ({"doc_types": ["xls"]}, "unknown type 'xls'"),
        ({"bogus": 1}, "unknown argument `bogus`"),
        ({"limit": True}, "from 1 to 50, got true$"),  # as the client wrote it, not Python's True
        ({"explain": "yes"}, 'must be true or false, got "yes"$'),
        ({"query": ["tax"]}, r'`query` must be a string, got \["tax"\]$'),
    ],
)
def test_bad_search_arguments_name_the_argument(engine, arguments, message):
    with pytest.raises(ArgumentError, match=message.replace("(", r"\(").replace("`", "`")):
        search(engine, **arguments)


def test_weak_or_no_match_sets_miss_and_guidance(engine):
    result = call_tool(engine, "search", {"query": "xylophone quasar"})
    assert result.miss and result.results == []
    assert any("find_paths" in advice for advice in result.guidance)


@pytest.mark.parametrize(
    ("filters", "lead"),
    [
        ({"doc_types": ["epub"]}, "No indexed document passes `doc_types` (epub), whatever the query. Indexed types: md, txt."),
        ({"path_glob": "/Users/me/Notion/"}, "passes `path_glob` ('/Users/me/Notion/'), whatever the query. Call `find_paths`"),
        (
            {"path_glob": "Notion-Export-*/", "modified_after": "2024-08-01"},
            "Each filter alone lets documents through, but no indexed document passes them all together.",
        ),
    ],
)
def test_a_search_whose_filters_leave_no_document_blames_the_filters_not_the_words(engine, filters, lead):
    result = call_tool(engine, "search", {"query": "receipts", **filters})
    assert result.miss and result.results == []
    assert lead in result.guidance[0]
    assert not any(advice.startswith("Try other words") for advice in result.guidance)


def test_explain_reads_as_text_in_markdown_and_as_numbers_in_json(engine):
    result = call_tool(engine, "search", {"query": "receipts", "explain": True, "mode": "keyword"})
    line = next(line for line in result.to_markdown().splitlines() if line.startswith("- explain: "))
    assert "{" not in line and "keyword_rank 1 · keyword_score " in line and "vector_rank — · " in line
    assert result.results[0].to_json()["explain"]["keyword_rank"] == 1


def test_a_long_query_is_searched_whole_but_not_echoed_whole(engine):
    query = " ".join(["receipts"] * 2000)
    heading = call_tool(engine, "search", {"query": query}).to_markdown().splitlines()[0]
    assert heading.startswith("## Search: receipts receipts") and heading.endswith(f"… ({len(query):,} characters)")
    assert len(heading) < 250
    one_long_word = call_tool(engine, "search", {"query": "x" * 100_000}).to_markdown()
    assert len(one_long_word) < 2000 and "(100,000 characters)" in one_long_word


def test_markdown_means_md_and_mdx_and_a_glob_matches_either_unicode_form_of_a_name(tmp_path):
    import unicodedata

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.tools import call_tool

    root = tmp_path / "notes"
    decomposed = root / unicodedata.normalize("NFD", "Über")
    decomposed.mkdir(parents=True)
    (decomposed / "nfd.md").write_text("# Zorblax\n\nzorblax in a folder named with a decomposed U.\n", encoding="utf-8")
    (root / "page.mdx").write_text("# Zorblax page\n\nzorblax in MDX.\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()

        def names(**arguments) -> set[str]:
            return {Path(hit.path).name for hit in call_tool(engine, "search", {"query": "zorblax", **arguments}).results}

        assert names(doc_types=["md"]) == {"nfd.md", "page.mdx"} and names(doc_types=["mdx"]) == {"page.mdx"}
        assert names(path_glob="Über/") == {"nfd.md"} == names(path_glob=unicodedata.normalize("NFD", "Über/"))
    finally:
        engine.close()


def test_a_query_that_names_a_file_or_a_title_puts_that_document_first(tmp_path):
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.tools import call_tool

    root = tmp_path / "docs"
    root.mkdir()
    (root / "rfc2616.txt").write_text("Hypertext Transfer Protocol -- HTTP/1.1\n\nThe protocol itself, RFC 2616.\n", encoding="utf-8")
    for number in range(5):
        (root / f"cites-{number}.md").write_text(f"# Note {number}\n\nSee rfc2616, RFC 2616, RFC 2616 and rfc2616 again.\n", encoding="utf-8")
    (root / "ownership.md").write_text("# Understanding Ownership\n\nWhat is ownership? Ownership, ownership.\n", encoding="utf-8")
    (root / "what.md").write_text("# What Is Ownership?\n\nRules that govern memory.\n", encoding="utf-8")
    (root / "storage" / "ZC8E3NQA").mkdir(parents=True)  # a Zotero item's folder, named by its key
    (root / "storage" / "ZC8E3NQA" / "Bates - 2015 - Mixed models.md").write_text("# Mixed models\n\nlme4.\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="d", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        keyed = call_tool(engine, "search", {"query": "ZC8E3NQA"})
        assert keyed.results[0].title == "Mixed models" and not keyed.miss, "a folder's name is evidence as a file's is"
        named = (("rfc2616", "rfc2616.txt"), ("RFC2616.txt", "rfc2616.txt"), ("RFC 2616", "rfc2616.txt"), ("what is ownership?", "what.md"))
        for query, expected in named:
            first = call_tool(engine, "search", {"query": query}).results[0]
            assert Path(first.path).name == expected and first.relevance > 0.5, (query, first.path, first.relevance)
    finally:
        engine.close()


def test_a_path_glob_of_many_stars_matches_in_one_pass():
    """`*L*L*L*L*X` as one regex of `.*`s backtracked for minutes against a long name."""
    import time

    from linkly_ls.core.tools.common import compile_path_glob

    glob = compile_path_glob("*L*L*L*L*L*L*X")
    started = time.thread_time()
    assert not glob.search("/notes/" + "L" * 5000 + ".md")
    assert glob.search("/notes/" + "L" * 5000 + "X.md")
    assert time.thread_time() - started < 0.5


def test_an_image_format_asked_for_by_name_keeps_its_images_alone(tmp_path):
    """`png` and `jpg` both meant every image."""
    import shutil

    from PIL import Image

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.extract.base import ExtractLimits

    root = tmp_path / "pictures"
    root.mkdir()
    shutil.copy2(Path(__file__).parents[3] / "fixtures" / "scans" / "ocr-sample.jpg", root / "receipt scan.jpg")
    Image.new("RGB", (40, 20), "white").save(root / "receipt chart.png")
    (root / "receipt notes.md").write_text("# Receipt notes\n\nreceipt\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="p", paths=[root])],
                           limits=ExtractLimits(ocr=False), raw={"embedding": {"model": "none"}}))
    try:
        engine.index()

        def names(*doc_types: str) -> set[str]:
            return {Path(hit.path).name for hit in call_tool(engine, "search", {"query": "receipt", "doc_types": list(doc_types)}).results}

        assert names("png") == {"receipt chart.png"} and names("jpeg") == names("jpg") == {"receipt scan.jpg"}
        assert names("image") == {"receipt chart.png", "receipt scan.jpg"} == names("png", "image")
        assert names("md", "png") == {"receipt notes.md", "receipt chart.png"}
    finally:
        engine.close()



def test_a_hit_reads_the_same_relevance_and_the_search_the_same_miss_whatever_the_limit(tmp_path):
    import shutil

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    notes = Path(__file__).resolve().parents[3] / "fixtures" / "notes"
    shutil.copytree(notes, tmp_path / "notes")
    library = LibraryConfig(name="notes", paths=[tmp_path / "notes"])
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[library], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        # the second hit's passage holds more of these words than the first's: with the list cut at one,
        # the first read its own evidence (0.24) instead of the list's best (0.29)
        for query in ("borrowing rules mutable", "ownership borrowing", "memory safety references"):
            lists = {limit: call_tool(engine, "search", {"query": query, "limit": limit}) for limit in (1, 3, 20)}
            first = {limit: (found.results[0].doc_id, found.results[0].relevance) for limit, found in lists.items()}
            assert first[1] == first[3] == first[20], query
            assert lists[1].miss == lists[3].miss == lists[20].miss, query
            assert [hit.relevance for hit in lists[3].results] == [hit.relevance for hit in lists[20].results[:3]]
    finally:
        engine.close()


def test_accents_written_as_combining_marks_read_as_the_accented_letters(tmp_path):
    import unicodedata

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    def nfd(text: str) -> str:
        return unicodedata.normalize("NFD", text)

    root = tmp_path / "notes"
    (root / "Notes été").mkdir(parents=True)
    (root / "Notes été" / "bilan.md").write_text("# Bilan de décembre\n\nLes résultats financiers sont bons.\n", encoding="utf-8")
    (root / "macos.md").write_text(nfd("# Compte rendu\n\nLa réunion a décidé du calendrier.\n"), encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()

        def first(query: str) -> str:
            return Path(call_tool(engine, "search", {"query": query, "mode": "keyword"}).results[0].path).name

        assert first(nfd("résultats financiers")) == "bilan.md"
        assert first("réunion calendrier") == "macos.md" == first(nfd("réunion"))
        bilan = call_tool(engine, "search", {"query": "bilan"}).results[0].doc_id
        assert call_tool(engine, "grep", {"pattern": nfd("résultats"), "doc_id": bilan}).total_matches == 1
        found = call_tool(engine, "find_paths", {"patterns": [nfd("été")]}).to_json()
        assert found["directories"] and found["directories"][0]["path"].endswith("Notes été/")
    finally:
        engine.close()


def test_a_query_of_symbols_alone_is_a_miss_that_says_why(engine):
    for query in ("🎉", "*** ->", "📝"):
        result = call_tool(engine, "search", {"query": query})
        assert result.miss and all(hit.relevance <= 0.15 for hit in result.results), query
        assert "holds no word the index can search" in result.guidance[0]
    assert not call_tool(engine, "search", {"query": "receipts 🎉"}).miss


def test_a_weak_query_of_common_words_alone_says_so_first(engine):
    result = call_tool(engine, "search", {"query": "the of and"})
    assert result.miss and result.guidance[0].startswith("The query holds only common words (the, of, and)")
    assert not any("common words" in advice for advice in call_tool(engine, "search", {"query": "zqxwv of the"}).guidance or [])


def test_vector_mode_in_a_library_without_vectors_yet_says_so(tmp_path):
    from linkly_ls.core.config import Config
    from linkly_ls.core.engine import Engine

    for name, text in (("kitchen", "Soup with leeks and potatoes."), ("garden", "Planted tomatoes and basil.")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "log.md").write_text(f"# {name.title()} log\n\n{text}\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data"))  # the bundled model
    try:
        engine.add_library([tmp_path / "kitchen"], "kitchen")
        engine.index()
        engine.vectors.run_until_complete(wait_for_model=True)
        engine.add_library([tmp_path / "garden"], "garden")
        engine.index(["garden"])  # no vector pass since
        result = call_tool(engine, "search", {"query": "tomatoes basil", "mode": "vector", "library": "garden"})
        assert result.results == [] and result.miss
        assert result.guidance[0].startswith("No document searched has a vector yet")
        assert call_tool(engine, "search", {"query": "tomatoes basil", "library": "garden"}).results
    finally:
        engine.close()


def test_a_word_of_the_query_that_no_document_holds_is_named_while_the_others_are_found(engine):
    # "shopping reciept": the hits for "shopping" hid that the other word, misspelt, is nowhere
    result = call_tool(engine, "search", {"query": "shopping reciept"})
    assert result.results and any("Did you mean 'receipt' for 'reciept'?" in note for note in result.notes)
    assert "'reciept'" in result.to_markdown()
    assert not call_tool(engine, "search", {"query": "shopping receipt"}).notes


def test_a_hit_shows_the_section_the_query_names_not_the_table_of_contents_listing_it(tmp_path):
    """A book's contents page holds every section title, so it was the passage shown (and cited) for a
    query naming one: the agent had to look the section up once more."""
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    root = tmp_path / "books"
    root.mkdir()
    titles = ["Soil and compost", "Gardening with quokkas", "Wombat burrows", "Seeds and seasons", "Watering"]
    contents = ["Contents", ""] + [f"{n} {title} . . . . . . . . . . . . . . {n * 7}" for n, title in enumerate(titles, 1)]
    body = []
    for n, title in enumerate(titles, 1):
        body += ["", f"{n} {title}", ""] + [f"Paragraph {k} of chapter {n}, on other matters." for k in range(40)]
    (root / "garden.txt").write_text("\n".join(contents + body) + "\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="b", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        (hit,) = call_tool(engine, "search", {"query": "gardening quokkas", "limit": 1}).results
        assert hit.start_line > len(contents) and hit.snippet.startswith("2 **Gardening** with **quokkas**")
        assert hit.section == "2 Gardening with quokkas"
        for quoted in ('"gardening with quokkas"', '"quokkas" gardening'):  # a phrase's passage too
            (hit,) = call_tool(engine, "search", {"query": quoted, "limit": 1}).results
            assert hit.start_line > len(contents) and hit.section == "2 Gardening with quokkas", quoted
    finally:
        engine.close()


def test_the_passage_closest_in_meaning_gives_way_to_the_section_when_it_is_a_table_of_contents():
    """Hybrid search cited the contents page (its closest chunk in meaning) where keywords found p. 23."""
    from linkly_ls.core.search.ranked import Passage, RankedDocument
    from linkly_ls.core.search.relevance import RelevanceScorer
    from linkly_ls.core.store.records import DocumentSummary
    from linkly_ls.core.tools.search import _evidence

    titles = ["Simple manipulations", "Arrays and matrices", "The function tapply() and ragged arrays", "Lists"]
    lines = ["Table of Contents"] + [f"{n} {title} . . . . . . . . . . . . {n * 9}" for n, title in enumerate(titles, 1)]
    lines += ["", "4.2 The function tapply() and ragged arrays", "", "To continue the previous example, tapply() applies"]
    lines += ["a function to each group of ragged arrays, one per factor level.", ""]

    def read(first: int, last: int) -> list[str]:
        return lines[first - 1 : last]

    contents, section = Passage(1, 5), Passage(7, 10)
    document = RankedDocument("d", keyword_rank=1, keyword_passage=section, vector_rank=0, vector_passage=contents)
    record = DocumentSummary("d", "b", "/books/R-intro.pdf", "pdf", "An Introduction to R", 1, 1, "h", 60, len(lines),
                             True, [], None, "en")
    passage, _, _, _ = _evidence(read, document, record, (0.8, contents), RelevanceScorer("ragged arrays"), None)
    assert passage == section


def test_a_word_no_document_holds_beside_found_ones_is_named_without_blaming_the_spelling_alone(tmp_path):
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    root = tmp_path / "notes"
    root.mkdir()
    (root / "bots.md").write_text("# Bots\n\nAgents that talk to each other.\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        result = call_tool(engine, "search", {"query": "chatbots agents talk"})
        (note,) = [note for note in result.notes if "'chatbots'" in note]
        assert "match the other words only" in note and "do not cover it" in note
    finally:
        engine.close()


def test_a_pasted_chapter_is_searched_by_its_first_thousand_words_and_says_so(engine):
    query = "receipts " + " ".join(f"w{number}x" for number in range(60_000))
    result = search(engine, query=query, limit=5)
    assert any("60,001 different words" in note and "first 1,024" in note for note in result.notes)
    assert any("receipts" in path for path in rel(engine, result.results))
    assert not search(engine, query="receipts", limit=5).notes


@pytest.mark.parametrize("bounds", [{"modified_before": "0001-01-01"}, {"modified_after": "9999-12-31T23:59:59+14:00"}])
def test_dates_past_what_the_index_stores_pass_nothing_rather_than_fail(engine, bounds):
    result = search(engine, query="receipts", **bounds)
    assert result.results == [] and result.miss


def test_offset_pages_through_the_same_ranking(engine):
    whole = search(engine, query="receipts shopping notes report", limit=6)
    first = search(engine, query="receipts shopping notes report", limit=3)
    second = search(engine, query="receipts shopping notes report", limit=3, offset=3)
    ids = [hit.doc_id for hit in whole.results]
    assert [hit.doc_id for hit in first.results] + [hit.doc_id for hit in second.results] == ids
    assert [hit.relevance for hit in second.results] == [hit.relevance for hit in whole.results[3:]]
    assert first.to_json()["next_offset"] == 3
    every = search(engine, query="receipts shopping notes report", limit=50)
    assert every.next_offset is None
    past = search(engine, query="receipts shopping notes report", limit=3, offset=400)
    assert past.results == [] and any(f"The ranking ends at {len(every.results)} result(s)" in note for note in past.notes)
    assert "next_offset" not in past.to_json()
    assert past.miss is first.miss is False and not past.guidance  # the query matches well; only the page is empty


def test_the_listing_pages_and_counts_every_document_that_passes(engine):
    pages, offset = [], 0
    while offset is not None:
        page = search(engine, query="*", limit=2, offset=offset)
        pages.append([hit.doc_id for hit in page.results])
        offset = page.to_json().get("next_offset")
    listed = [doc_id for page in pages for doc_id in page]
    assert len(listed) == len(set(listed)) == search(engine, query="*", limit=50).to_json()["matching"] > 4


def test_a_miss_names_at_most_ten_unknown_words_and_counts_the_others(engine):
    words = [f"zqx{chr(97 + n)}{chr(97 + n)}vv" for n in range(14)]
    result = search(engine, query=" ".join(words))
    assert result.miss and result.absent_words == words
    named = result.guidance[0]
    assert all(f"'{word}'" in named for word in words[:10]) and f"'{words[10]}'" not in named
    assert "and 4 other word(s)" in named


@pytest.mark.parametrize("arguments", [{"library": ""}, {"path_glob": " "}, {"modified_after": ""}, {"modified_before": ""}])
def test_an_empty_filter_is_refused_not_read_as_no_filter(engine, arguments):
    """A client templating an unset variable into `library` searched every library without a word."""
    with pytest.raises(ArgumentError, match=r"must not be empty \(an unset variable\?\): leave it out for no filter"):
        search(engine, query="receipts", **arguments)


@pytest.mark.parametrize("limit", ["٥", "５"])
def test_numbers_given_as_text_take_ascii_digits_only(engine, limit):
    with pytest.raises(ArgumentError, match="`limit` must be an integer"):
        search(engine, query="receipts", limit=limit)
    assert len(search(engine, query="receipts", limit=" 2 ").results) <= 2


def test_a_folder_path_with_brackets_scopes_to_that_folder(tmp_path):
    """Exports write `Notion Export [1]/`: as a set, `[1]` matched no path, so a copied path found nothing."""
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    root = tmp_path / "docs"
    for folder in ("Export [1]", "Export 1", "Export x"):
        (root / folder).mkdir(parents=True)
        (root / folder / "note.md").write_text(f"# Note\n\nquince jam in {folder}\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="docs", paths=[root])]))
    try:
        engine.index()
        in_folder = call_tool(engine, "search", {"query": "quince", "path_glob": f"{root}/Export [1]/"})
        assert [Path(hit.path).parent.name for hit in in_folder.results] == ["Export [1]"]
        as_set = call_tool(engine, "search", {"query": "quince", "path_glob": "Export [1x]/"})
        assert sorted(Path(hit.path).parent.name for hit in as_set.results) == ["Export 1", "Export x"]
        escaped = call_tool(engine, "search", {"query": "quince", "path_glob": "Export \\[1]/"})
        assert [Path(hit.path).parent.name for hit in escaped.results] == ["Export [1]"]
    finally:
        engine.close()


def test_the_words_of_a_deleted_document_are_neither_offered_as_spellings_nor_told_apart_from_words_never_indexed(tmp_path):
    """Tantivy counts a deleted chunk's terms until its segment merges, which in a folder nobody edits may
    be never: a deleted letter's surname came back as "Did you mean 'vellacourt'?"."""
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    library = tmp_path / "letters"
    library.mkdir()
    (library / "kept.md").write_text("# Clinic rota\n\nThe clinic opens at nine on weekdays.\n", encoding="utf-8")
    letter = library / "discharge.md"
    letter.write_text("# Discharge letter\n\nPatient Vellacourt was discharged from the clinic.\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="letters", paths=[library])],
                           raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        assert any("'vellacourt' for 'vellacourd'" in note for note in call_tool(engine, "search", {"query": "clinic vellacourd"}).notes)
        letter.unlink()
        engine.index()
        assert engine.keyword.index.searcher().doc_freq("body", "vellacourt") > 0, "the deleted chunk is not merged away yet"
        for query in ("clinic vellacourd", "vellacourd"):
            answer = call_tool(engine, "search", {"query": query}).to_json()
            assert "vellacourt" not in str(answer).lower()
        gone, never = (call_tool(engine, "search", {"query": word}).to_json() for word in ("vellacourt", "zorblaxquint"))
        assert gone["miss"] and never["miss"]
        assert gone["guidance"] == [line.replace("zorblaxquint", "vellacourt") for line in never["guidance"]]
    finally:
        engine.close()


def test_an_edited_documents_old_text_leaves_the_catalog_files_while_the_index_stays_open(tmp_path):
    """The text a note no longer holds stayed in `catalog.sqlite3-wal` as long as a server ran."""
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    library = tmp_path / "notes"
    library.mkdir()
    note = library / "harrow.md"
    note.write_text("# Letter\n\nHIV status: positive. Word: plumbifexor.\n" + "filler words here\n" * 200, encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[library])],
                           raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        note.write_text("# Letter\n\n[redacted]\n", encoding="utf-8")
        engine.index()
        files = [path for path in (tmp_path / "data").iterdir() if path.name.startswith("catalog.sqlite3")]
        assert files and not any(b"plumbifexor" in path.read_bytes() for path in files)
    finally:
        engine.close()
