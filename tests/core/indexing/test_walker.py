import os
import threading
from pathlib import Path

from linkly_ls.core.indexing.walker import WalkRules, is_indexable, walk_library


def make_tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def relative_found(root: Path, rules: WalkRules) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in walk_library(root, rules))


def test_walk_honours_gitignore_ignore_hidden_and_unsupported(tmp_path):
    make_tree(
        tmp_path,
        {
            "a.md": "x",
            "b.txt": "x",
            "c.py": "code",
            ".hidden.md": "x",
            "~$report.docx": "owner file",
            "sub/~$notes.docx": "owner file",
            ".git/d.md": "x",
            "build/e.md": "x",
            "sub/.gitignore": "secret*.md\n",
            "sub/secret-plan.md": "x",
            "sub/ok.md": "x",
            ".gitignore": "build/\n",
            ".ignore": "*.txt\n",
        },
    )
    assert relative_found(tmp_path, WalkRules([], [], [])) == ["a.md", "sub/ok.md"]


def test_include_and_exclude_globs(tmp_path):
    make_tree(tmp_path, {"notes/a.md": "x", "notes/drafts/b.md": "x", "papers/c.txt": "x"})
    rules = WalkRules(include=["*.md"], exclude=["drafts/"], skip_dirs=[])
    assert relative_found(tmp_path, rules) == ["notes/a.md"]


def test_globs_match_whatever_the_case_of_a_name(tmp_path):
    """`include = ["*.pdf", "*.md"]` (the README's own example) left a scanner's `SCAN.PDF` out without a word."""
    make_tree(tmp_path, {"SCAN.PDF": "x", "FOREWORD.MD": "x", "notes.md": "x", "Drafts/b.md": "x", "misc.txt": "x"})
    rules = WalkRules(include=["*.pdf", "*.md"], exclude=["drafts/"], skip_dirs=[])
    assert relative_found(tmp_path, rules) == ["FOREWORD.MD", "SCAN.PDF", "notes.md"]


def test_symlinks_are_not_followed_and_data_dir_is_skipped(tmp_path):
    make_tree(tmp_path, {"lib/a.md": "x", "outside/secret.md": "x", "lib/index/x.md": "x"})
    os.symlink(tmp_path / "outside", tmp_path / "lib" / "link")
    os.symlink(tmp_path / "outside" / "secret.md", tmp_path / "lib" / "alias.md")
    rules = WalkRules([], [], skip_dirs=[tmp_path / "lib" / "index"])
    assert relative_found(tmp_path / "lib", rules) == ["a.md"]


def test_a_file_under_a_linked_folder_is_not_indexable(tmp_path):
    make_tree(tmp_path, {"lib/a.md": "x", "outside/sub/secret.md": "x"})
    os.symlink(tmp_path / "outside", tmp_path / "lib" / "link")
    os.symlink(tmp_path / "lib", tmp_path / "lib" / "loop")
    rules = WalkRules([], [], [])
    assert is_indexable(tmp_path / "lib" / "a.md", tmp_path / "lib", rules)
    for linked in ("link/sub/secret.md", "loop/a.md", "loop/loop/a.md"):
        assert not is_indexable(tmp_path / "lib" / linked, tmp_path / "lib", rules), linked


def test_is_indexable_agrees_with_walk(tmp_path):
    make_tree(tmp_path, {".gitignore": "ignored/\n", "ignored/a.md": "x", "kept/b.md": "x", "c.pdf": "x", "kept/~$d.docx": "x"})
    rules = WalkRules([], [], [])
    walked = set(walk_library(tmp_path, rules))
    for candidate in [tmp_path / "ignored/a.md", tmp_path / "kept/b.md", tmp_path / "c.pdf", tmp_path / "kept/~$d.docx"]:
        assert is_indexable(candidate, tmp_path, rules) == (candidate in walked)


def skipped_by(root: Path, rules: WalkRules) -> tuple[list[str], dict[tuple[str, str], int]]:
    counts: dict[tuple[str, str], int] = {}

    def note(folder: str, reason: str, count: int) -> None:
        key = (Path(folder).relative_to(root).as_posix(), reason)
        counts[key] = counts.get(key, 0) + count

    found = sorted(p.relative_to(root).as_posix() for p in walk_library(root, rules, on_skipped=note))
    return found, counts


def test_every_file_left_out_is_counted_with_its_reason(tmp_path):
    make_tree(
        tmp_path,
        {
            ".gitignore": "papers/\n*.log.md\n",
            "a.md": "x",
            "run.log.md": "x",
            "papers/p1.pdf": "x",
            "papers/deep/p2.pdf": "x",
            "papers/script.py": "code",
            "drafts/d.md": "x",
            "notes/n.md": "x",
            "notes/n.txt": "x",
            "code/main.py": "x",
            "code/util.py": "x",
            ".hidden.md": "x",
            ".git/config.md": "x",
            "node_modules/pkg/readme.md": "x",
        },
    )
    rules = WalkRules(include=["*.md"], exclude=["drafts/"], skip_dirs=[])
    found, counts = skipped_by(tmp_path, rules)
    assert found == ["a.md", "notes/n.md"]
    assert counts == {
        (".", "gitignore"): 1,  # run.log.md
        ("papers", "gitignore"): 2,  # the two PDFs inside the ignored folder; script.py is no document
        ("drafts", "exclude"): 1,
        ("notes", "not_included"): 1,
        ("code", "unsupported"): 2,
    }


def test_ignore_files_are_read_only_when_the_library_respects_them(tmp_path):
    make_tree(tmp_path, {".gitignore": "*.pdf\nbuild/\n", "a.md": "x", "paper.pdf": "x", "build/b.md": "x"})
    ignoring = WalkRules([], [], [], respect_ignore_files=False)
    found, counts = skipped_by(tmp_path, ignoring)
    assert found == ["a.md", "build/b.md", "paper.pdf"] and counts == {}
    assert is_indexable(tmp_path / "paper.pdf", tmp_path, ignoring)
    assert not is_indexable(tmp_path / "paper.pdf", tmp_path, WalkRules([], [], []))


def test_a_folder_whose_entries_cannot_be_looked_at_is_reported_and_left(tmp_path, monkeypatch):
    """Its permissions changed after it was listed: each entry's lstat is refused."""
    for name in ("a.md", "locked/b.md", "locked/deeper/c.md", "open/d.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("# x\n", encoding="utf-8")
    locked = tmp_path / "locked"
    is_symlink = Path.is_symlink

    def refused_inside_locked(path: Path) -> bool:
        if path.parent == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return is_symlink(path)

    monkeypatch.setattr(Path, "is_symlink", refused_inside_locked)
    unreadable: list[OSError] = []
    found = sorted(p.relative_to(tmp_path).as_posix() for p in walk_library(tmp_path, WalkRules([], [], []), on_unreadable=unreadable.append))
    assert found == ["a.md", "open/d.md"]
    assert [(type(error), error.filename) for error in unreadable] == [(PermissionError, str(locked))]


def test_pipes_and_names_that_are_not_utf8_are_counted_not_read(tmp_path):
    """A named pipe would block its reader for ever; a name in bytes that are not UTF-8 cannot be stored."""
    root = tmp_path / "lib"
    root.mkdir()
    (root / "ok.md").write_text("# ok\n", encoding="utf-8")
    os.mkfifo(root / "pipe.md")
    bad_name = os.fsdecode(b"b\xff.md")
    (root / bad_name).write_text("# b\n", encoding="utf-8")
    bad_folder = root / os.fsdecode(b"d\xfe")
    bad_folder.mkdir()
    (bad_folder / "c.md").write_text("# c\n", encoding="utf-8")
    counted: list[tuple[str, str, int]] = []
    found = list(walk_library(root, WalkRules([], [], []), on_skipped=lambda folder, reason, count: counted.append((folder, reason, count))))
    assert found == [root / "ok.md"]
    assert sorted(counted) == sorted([(str(root), "special", 1), (str(root), "bad_name", 1), (str(root), "bad_name", 1)])
    assert not is_indexable(root / "pipe.md", root, WalkRules([], [], [])) and not is_indexable(root / bad_name, root, WalkRules([], [], []))


def test_a_name_the_watcher_cannot_read_leaves_its_folder_read_again_instead_and_the_others_watched(tmp_path, monkeypatch):
    """watchfiles stops at a name that is not UTF-8: that stopped the watching of every library for good,
    while `linkly status` said idle."""
    import time

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing import watcher

    monkeypatch.setattr(watcher, "UNWATCHABLE_RETRY_S", 1.0)
    odd, other = tmp_path / "odd", tmp_path / "other"
    bad = odd / os.fsdecode(b"d\xfe")
    bad.mkdir(parents=True)
    other.mkdir()
    libraries = [LibraryConfig(name="odd", paths=[odd]), LibraryConfig(name="other", paths=[other])]
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=libraries, raw={"embedding": {"model": "none"}}))
    problems: list[str | None] = []
    stop = threading.Event()
    thread = threading.Thread(
        target=watcher.watch_libraries, kwargs={"engine": engine, "stop": stop, "on_problem": problems.append}
    )
    thread.start()

    def soon(condition) -> bool:  # noqa: ANN001
        deadline = time.monotonic() + 60
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.05)
        return condition()

    try:
        assert soon(lambda: problems and problems[-1]) and "is not UTF-8" in problems[-1] and str(odd) in problems[-1]
        (other / "live.md").write_text("# Live\n\nwatched at once\n", encoding="utf-8")
        assert soon(lambda: engine.catalog.by_path(str(other / "live.md")) is not None)
        (odd / "caught.md").write_text("# Caught\n\nread again a moment later\n", encoding="utf-8")
        assert soon(lambda: engine.catalog.by_path(str(odd / "caught.md")) is not None)
        bad.rename(odd / "renamed")
        assert soon(lambda: problems[-1] is None), problems
        assert thread.is_alive()
    finally:
        stop.set()
        thread.join(10)
        engine.close()


def test_the_cover_of_a_calibre_book_folder_is_left_out_and_counted_and_other_covers_are_kept(tmp_path):
    """Every `cover.jpg` of a Calibre library was a result titled "cover", OCRed, above its own book."""
    make_tree(
        tmp_path,
        {
            "Jane Austen/Emma (12)/Emma - Jane Austen.epub": "x",
            "Jane Austen/Emma (12)/metadata.opf": "<package/>",
            "Jane Austen/Emma (12)/cover.jpg": "x",
            "Jane Austen/Emma (12)/Cover.PNG": "x",
            "photos/cover.jpg": "x",
        },
    )
    skipped: list[tuple[str, str, int]] = []
    found = sorted(p.relative_to(tmp_path).as_posix() for p in walk_library(tmp_path, WalkRules([], [], []), on_skipped=lambda *entry: skipped.append(entry)))
    assert found == ["Jane Austen/Emma (12)/Emma - Jane Austen.epub", "photos/cover.jpg"]
    assert (str(tmp_path / "Jane Austen/Emma (12)"), "book_cover", 1) in skipped
    assert not is_indexable(tmp_path / "Jane Austen/Emma (12)/cover.jpg", tmp_path, WalkRules([], [], []))
    assert is_indexable(tmp_path / "photos/cover.jpg", tmp_path, WalkRules([], [], []))


def test_the_files_folder_of_a_web_page_saved_whole_is_left_out_and_counted(tmp_path):
    """Ads, a tweet embed and every picture of a saved page were documents of their own."""
    make_tree(
        tmp_path,
        {
            "web/Harbor deal under scrutiny.html": "<p>article</p>",
            "web/Harbor deal under scrutiny_files/ad.html": "<p>ad</p>",
            "web/Harbor deal under scrutiny_files/f.txt": "ad response",
            "web/Seite-Dateien/x.html": "<p>a frame of the page Seite.htm</p>",
            "web/Seite.htm": "<p>a page</p>",
            "web/project_files/notes.md": "# kept: no page beside it",
        },
    )
    skipped: list[tuple[str, str, int]] = []
    found = sorted(p.relative_to(tmp_path).as_posix() for p in walk_library(tmp_path, WalkRules([], [], []), on_skipped=lambda *entry: skipped.append(entry)))
    assert found == ["web/Harbor deal under scrutiny.html", "web/Seite.htm", "web/project_files/notes.md"]
    assert (str(tmp_path / "web/Harbor deal under scrutiny_files"), "saved_page_files", 2) in skipped
    assert (str(tmp_path / "web/Seite-Dateien"), "saved_page_files", 1) in skipped
    assert not is_indexable(tmp_path / "web/Harbor deal under scrutiny_files/ad.html", tmp_path, WalkRules([], [], []))
    assert is_indexable(tmp_path / "web/project_files/notes.md", tmp_path, WalkRules([], [], []))
