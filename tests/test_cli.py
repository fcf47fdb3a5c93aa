"""The `linkly` command as a user runs it: a real subprocess, real exit codes."""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from linkly_ls.core.store.records import make_doc_id

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def run(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "linkly_ls.cli", *args], env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict:
    home = tmp_path_factory.mktemp("cli")
    environment = dict(os.environ)
    environment["LINKLY_DATA_DIR"] = str(home / "data")
    environment["LINKLY_CONFIG"] = str(home / "config.toml")
    library = home / "notes"
    library.mkdir()
    for source in (FIXTURES / "notes" / "rust").glob("*.md"):
        (library / source.name).write_bytes(source.read_bytes())
    (library / "broken.pdf").write_bytes(b"")  # no PDF is empty: a failed file
    result = run(environment, "index", str(library), "--library", "rust", "--description", "Rust book")
    assert result.returncode == 0, result.stderr
    environment["_library"] = str(library)
    environment["_index_stdout"] = result.stdout
    return environment


def test_index_prints_failures_and_a_summary(env):
    out = env["_index_stdout"].splitlines()
    assert any(line.startswith("failed: ") and "broken.pdf" in line and "empty file" in line for line in out)
    assert out[-1].startswith("rust: 3 indexed, 0 unchanged, 1 failed, 0 removed in ")
    again = run(env, "index")
    assert again.returncode == 0 and "rust: 0 indexed, 3 unchanged, 1 failed" in again.stdout


def test_search_json_and_markdown(env):
    result = run(env, "search", "ownership borrowing", "--limit", "2", "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert len(payload["results"]) == 2 and payload["_meta"]["now"].endswith("Z")
    assert "ownership" in payload["results"][0]["path"]
    markdown = run(env, "search", "ownership", "--type", "md", "--path-glob", "ch04", "--time-sort", "newest")
    assert markdown.returncode == 0 and "[meta] now=" in markdown.stdout


def test_search_mode_flag(env):
    result = run(env, "search", "ownership", "--mode", "keyword", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["mode"] == "keyword"
    refused = run(env, "search", "ownership", "--mode", "fuzzy")
    assert refused.returncode == 2 and "fuzzy" in refused.stderr


def test_the_workflow_outline_grep_read(env):
    doc_id = json.loads(run(env, "search", "ownership", "--json").stdout)["results"][0]["doc_id"]
    outline = run(env, "outline", doc_id, "--json")
    assert json.loads(outline.stdout)["documents"][0]["has_outline"] is True
    grep = run(env, "grep", "heap", doc_id, "-C", "1", "-i", "--limit", "2", "--json")
    matches = json.loads(grep.stdout)["matches"]
    assert len(matches) == 2 and all("heap" in m["text"].lower() for m in matches)
    count = run(env, "grep", "heap", doc_id, "--mode", "count")
    assert count.returncode == 0 and "matching line(s)" in count.stdout
    read = run(env, "read", doc_id, "--offset", "3", "--limit", "2", "--json")
    assert [line["line"] for line in json.loads(read.stdout)["lines"]] == [3, 4]
    for command in (["list-libraries"], ["explore"], ["find-paths", "--patterns", "notes"]):
        result = run(env, *command, "--json")
        assert result.returncode == 0 and "_meta" in json.loads(result.stdout)


def test_sections_and_a_query_no_document_contains(env):
    doc_id = json.loads(run(env, "search", "ownership", "--json").stdout)["results"][0]["doc_id"]
    grep = run(env, "grep", "^### Ownership Rules", doc_id, "-C", "0")
    assert grep.returncode == 0 and "[What Is Ownership? > Ownership Rules]" in grep.stdout, grep.stdout
    hit = json.loads(run(env, "search", "ownership rules", "--json").stdout)["results"][0]
    assert hit["section"].startswith("What Is Ownership?") and "page" not in hit
    missing = run(env, "search", "zqxk3j9a")
    assert missing.returncode == 0 and "No document contains these words." in missing.stdout
    assert "No indexed document contains 'zqxk3j9a'" in missing.stdout
    assert json.loads(run(env, "search", "zqxk3j9a", "--json").stdout)["miss"] is True


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["search", "x", "--limit", "0"], 2, "`limit` must be an integer from 1 to 50"),
        (["read", "0123456789ab", "--limit", "501"], 2, "`limit` must be an integer from 1 to 500"),
        (["search", "x", "--modified-after", "yesterday"], 2, "`modified_after` must be a date"),
        (["grep", "(", "0123456789ab"], 1, "not an indexed document"),
        (["read", "../etc/passwd"], 2, "must be a document id"),
        (["search"], 2, "the following arguments are required"),
        (["frobnicate"], 2, "invalid choice"),
        (["index", "/no/such/folder"], 2, "does not exist"),
        (["--config", "/no/such/config.toml", "search", "x"], 2, "--config /no/such/config.toml: no such file"),
        (["--config", "/no/such/config.toml", "serve"], 2, "no such file"),
    ],
)
def test_errors_have_exit_codes_and_one_line(env, args, code, message):
    result = run(env, *args)
    assert result.returncode == code, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def test_arguments_that_are_not_utf8_are_a_usage_error(env):
    for command in (["search", b"r\xe9sum\xe9"], ["grep", b"caf\xe9", "0123456789ab"], ["find-paths", "--patterns", b"\xe9t\xe9"]):
        result = subprocess.run([sys.executable, "-m", "linkly_ls.cli", *command], env=env, capture_output=True, timeout=300)
        stderr = result.stderr.decode()
        assert result.returncode == 2 and "Traceback" not in stderr, stderr
        assert "is not valid UTF-8 text" in stderr and "\\xe9" in stderr


def test_a_folder_whose_name_is_not_utf8_is_refused_and_indexing_goes_on(tmp_path):
    """It crashed with a UnicodeEncodeError and was registered: every later `linkly index` failed too."""
    folder = os.fsencode(tmp_path) + b"/bad\xffdir"
    os.mkdir(folder)
    with open(folder + b"/n.md", "w", encoding="utf-8") as handle:
        handle.write("# Note\n\nwombat\n")
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "a.md").write_text("# A\n\nwombat\n", encoding="utf-8")
    environment = dict(os.environ, LINKLY_DATA_DIR=str(tmp_path / "data"), LINKLY_CONFIG=str(tmp_path / "none.toml"))
    refused = subprocess.run([sys.executable, "-m", "linkly_ls.cli", "index", folder], env=environment, capture_output=True, timeout=300)
    stderr = refused.stderr.decode()
    assert refused.returncode == 2 and "bad\\xffdir: its name is not UTF-8 text" in stderr and "Traceback" not in stderr
    assert run(environment, "index", str(tmp_path / "good")).returncode == 0
    assert run(environment, "index").returncode == 0, "nothing was registered that breaks the next run"


def test_invalid_regex_is_a_usage_error(env):
    doc_id = json.loads(run(env, "search", "ownership", "--json").stdout)["results"][0]["doc_id"]
    result = run(env, "grep", "(", doc_id)
    assert result.returncode == 2 and "not a valid regular expression" in result.stderr


def test_unreadable_data_dir_is_a_clear_error(env, tmp_path):
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")
    result = run({**env, "LINKLY_DATA_DIR": str(blocked / "data")}, "list-libraries")
    assert result.returncode == 1 and "cannot open the index" in result.stderr and "Traceback" not in result.stderr


@contextmanager
def holding_the_writer_lock(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """Another process that holds the index's writer lock until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from linkly_ls.core.store.writer_lock import WriterLock;"
         "lock = WriterLock(Path(sys.argv[1])); assert lock.try_acquire(); print('held', flush=True); sys.stdin.read()",
         env["LINKLY_DATA_DIR"]],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,  # held until the test ends (or this process)
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def test_a_second_writer_is_refused_with_the_holder_named(env):
    from linkly_ls.core.store.writer_lock import WriterLock

    with holding_the_writer_lock(env) as holder:
        result = run(env, "index")
        assert result.returncode == 1
        assert f"another linkly process (pid {holder.pid})" in result.stderr
        folder = run(env, "index", env["_library"])
        assert folder.returncode == 1 and "give it a [[library]] table in the config file" in folder.stderr
        assert run(env, "search", "ownership").returncode == 0, "readers are never blocked"
    assert WriterLock(Path(env["LINKLY_DATA_DIR"])).try_acquire()


def test_a_search_while_another_process_indexes_says_results_may_be_incomplete(env):
    """A CLI search during another process's run answered as if the index were whole (`indexing: false`)."""
    from linkly_ls.core.indexing.writer_status import INDEXING, WriterActivity, remove_activity, write_activity

    data_dir = Path(env["LINKLY_DATA_DIR"])
    with holding_the_writer_lock(env) as holder:
        write_activity(data_dir, WriterActivity(pid=holder.pid, activity=INDEXING, library="rust", done=60, total=180))
        try:
            found = run(env, "search", "ownership", "--json")
            assert found.returncode == 0 and json.loads(found.stdout)["results"]
            assert found.stderr == (
                f"linkly: note: another linkly process (pid {holder.pid}) is indexing rust: 60 of 180 files: "
                "results may be incomplete\n"
            )
            assert run(env, "read", json.loads(found.stdout)["results"][0]["doc_id"], "--limit", "1").stderr == ""
        finally:
            remove_activity(data_dir)
    assert run(env, "search", "ownership").stderr == ""


def test_sigterm_stops_an_index_run_saying_so_as_ctrl_c_does(env):
    """SIGTERM ended `linkly index` without a word (status 143 from the shell's `Terminated` alone)."""
    import signal

    from linkly_ls.core.indexing.writer_status import INDEXING, ONE_RUN, WriterActivity, remove_activity, write_activity

    data_dir = Path(env["LINKLY_DATA_DIR"])
    with holding_the_writer_lock(env) as holder:
        write_activity(data_dir, WriterActivity(pid=holder.pid, activity=INDEXING, library="rust", done=1, total=9, role=ONE_RUN))
        try:
            waiting = subprocess.Popen([sys.executable, "-m", "linkly_ls.cli", "index"], env=env, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert waiting.stderr.readline().startswith("waiting: another linkly process")
            waiting.send_signal(signal.SIGTERM)
            _, stderr = waiting.communicate(timeout=60)
            assert waiting.returncode == 143 and "linkly: stopped (SIGTERM); run `linkly index` again to go on" in stderr, stderr
        finally:
            remove_activity(data_dir)


def test_usage_errors_name_the_program_once(env):
    unknown = run(env, "frobnicate")
    assert unknown.returncode == 2 and unknown.stderr.endswith("(see `linkly --help`)\n"), unknown.stderr
    assert "linkly linkly" not in unknown.stderr
    missing = run(env, "grep", "x")
    assert missing.returncode == 2 and missing.stderr.endswith("(see `linkly grep --help`)\n"), missing.stderr
    unknown_flag = run(env, "search", "x", "--frobnicate")
    assert unknown_flag.returncode == 2, unknown_flag.stderr
    assert unknown_flag.stderr == (
        "linkly: unrecognized arguments: --frobnicate; if '--frobnicate' is the pattern or query, put it after `--`, "
        "the options before it (`linkly search --json -- '--frobnicate' ...`) (see `linkly search --help`)\n"
    )
    dashed = run(env, "grep", "--8<--", "0123456789ab", "--mode", "count")  # a MkDocs snippet marker, read as an option
    assert dashed.returncode == 2 and "if '--8<--' is the pattern or query, put it after `--`" in dashed.stderr


def test_help_is_generated_from_the_tool_registry(env):
    def options(*args: str) -> str:
        result = run(env, *args, "--help")
        assert result.returncode == 0, result.stderr
        return " ".join(result.stdout.split())

    grep = options("grep")
    for usage in ("-C CONTEXT, --context CONTEXT", "-i, --case-insensitive", "--mode {content,count}",
                  "--limit LIMIT 1-100 (default 20)", "--json structured JSON output",
                  "positional arguments: pattern doc_id"):
        assert usage in grep, grep
    search = options("search")
    assert "--type DOC_TYPES document types, comma-separated: pdf,md,docx" in search, search
    assert "--time-sort {default,newest,oldest}" in search and "--explain show keyword/vector ranks" in search
    assert "--patterns PATTERNS keywords, comma-separated: Notion,notion" in options("find-paths")
    assert "usage: linkly outline [-h] [--json] [--expand EXPAND] doc_ids [doc_ids ...]" in options("outline")


FAILING_TOOL = Path(__file__).resolve().parent / "failing_tool.py"

#: error raised by the tool -> exit status, and the stderr line (its message is "<name> raised on purpose")
CLI_ANSWERS = {
    "ArgumentError": (2, "Error: {message}"),
    "ToolError": (1, "Error: {message}"),
    "UsageError": (2, "linkly: {message}"),
    "ConfigError": (2, "linkly: {message}"),
    "EngineError": (1, "linkly: {message}"),
    "IndexBusyError": (1, "linkly: {message}"),
    "IndexWriteError": (1, "linkly: {message}"),
    "IndexHeldError": (1, "linkly: {message}"),
    "UpstreamUnavailable": (1, "linkly: {message}"),
    "RuntimeError": (1, "linkly: internal error: RuntimeError: {message}"),
}


@pytest.mark.parametrize("error", list(CLI_ANSWERS))
def test_each_kind_of_error_a_tool_raises_is_one_line_and_an_exit_status(env, error):
    result = subprocess.run(
        [sys.executable, str(FAILING_TOOL), "cli", "fail", error],
        env=env, capture_output=True, text=True, timeout=120,
    )
    code, line = CLI_ANSWERS[error]
    assert (result.returncode, result.stderr) == (code, line.format(message=f"{error} raised on purpose") + "\n")
    assert result.stdout == ""


def test_a_tool_error_answers_in_json_when_asked(env):
    result = subprocess.run(
        [sys.executable, str(FAILING_TOOL), "cli", "fail", "ArgumentError", "--json"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2 and json.loads(result.stderr) == {"error": "ArgumentError raised on purpose", "kind": "argument"}


def fresh_env(home: Path, config: str = "") -> dict:
    environment = {**os.environ, "LINKLY_DATA_DIR": str(home / "data"), "LINKLY_CONFIG": str(home / "config.toml")}
    (home / "config.toml").write_text(config, encoding="utf-8")
    return environment


def test_status_shows_each_library_and_the_writer_that_holds_the_index(env):
    status = run(env, "status", "--json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    (rust,) = data["libraries"]
    assert rust["name"] == "rust" and rust["document_count"] == 3 and rust["failed_count"] == 1
    assert {"skipped_count", "skipped", "ocr_pending_count", "vector_coverage"} <= set(rust)
    assert data["writer"]["pid"] is None and data["mcp_url"] is None
    broken = str(Path(env["_library"]) / "broken.pdf")
    assert data["failed_files"] == [{"library": "rust", "path": broken, "message": "empty file (0 bytes)"}]
    assert f"### Failed files\n\n- {broken}: empty file (0 bytes)" in run(env, "status").stdout, "named after the run that found it"
    with holding_the_writer_lock(env) as holder:
        held = run(env, "status")
        assert held.returncode == 0 and f"- writer: pid {holder.pid}, activity not published" in held.stdout
        assert "| rust | 3 | 0 | 1 | 0 |" in held.stdout
        refused = run(env, "remove-library", "rust")
        assert refused.returncode == 1 and f"another linkly process (pid {holder.pid})" in refused.stderr


def test_remove_library_forgets_a_library_and_refuses_one_of_the_config_file(tmp_path):
    notes, papers = tmp_path / "notes", tmp_path / "papers"
    for folder in (notes, papers):
        folder.mkdir()
    (notes / "a.md").write_text("# A\n\nquokka notes\n", encoding="utf-8")
    (notes / ".gitignore").write_text("private/\n", encoding="utf-8")
    (notes / "private").mkdir()
    (notes / "private" / "p.md").write_text("# P\n\nquokka secrets\n", encoding="utf-8")
    (papers / "b.md").write_text("# B\n\nquokka papers\n", encoding="utf-8")
    environment = fresh_env(tmp_path, f'[[library]]\nname = "papers"\npaths = ["{papers}"]\n')
    added = run(environment, "index", str(notes), "--library", "notes")
    assert added.returncode == 0 and "notes: 1 indexed" in added.stdout and "1 skipped (.gitignore/.ignore 1)" in added.stdout
    widened = run(environment, "index", str(notes), "--library", "notes", "--no-gitignore")
    assert widened.returncode == 0 and "notes: 1 indexed, 1 unchanged" in widened.stdout, widened.stdout
    assert "papers: 1 indexed" in run(environment, "index").stdout
    refused = run(environment, "remove-library", "papers")
    assert refused.returncode == 2 and str(tmp_path / "config.toml") in refused.stderr, refused.stderr
    removed = run(environment, "remove-library", "notes", "--json")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(removed.stdout)["removed_documents"] == 2
    assert (notes / "a.md").exists() and (notes / "private" / "p.md").exists()
    found = json.loads(run(environment, "search", "quokka", "--json").stdout)
    assert [Path(hit["path"]).name for hit in found["results"]] == ["b.md"]
    libraries = json.loads(run(environment, "list-libraries", "--json").stdout)["libraries"]
    assert [library["name"] for library in libraries] == ["papers"]
    unknown = run(environment, "remove-library", "notes")
    assert unknown.returncode == 2 and "does not exist" in unknown.stderr


def test_search_of_an_empty_index_says_how_to_add_a_library(tmp_path):
    result = run(fresh_env(tmp_path), "search", "anything", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["miss"] is True and answer["notice"] == "No libraries yet: nothing is indexed."
    assert answer["guidance"][0] == (
        f"The index folder {tmp_path / 'data'} did not exist before this process made it (LINKLY_DATA_DIR names it): "
        "if your index is elsewhere, correct LINKLY_DATA_DIR."
    )
    assert "linkly index" in answer["guidance"][1]
    again = run(fresh_env(tmp_path), "search", "anything").stdout
    assert "**No libraries yet: nothing is indexed.**" in again and "did not exist" not in again


def test_a_config_file_linkly_config_names_that_does_not_exist_is_said(tmp_path):
    environment = {**fresh_env(tmp_path), "LINKLY_CONFIG": str(tmp_path / "cnfig.toml")}
    answer = json.loads(run(environment, "search", "anything", "--json").stdout)
    assert answer["guidance"][0] == f"LINKLY_CONFIG names {tmp_path / 'cnfig.toml'}, which does not exist: no config file is read."
    status = run(environment, "status")
    assert f"- config: LINKLY_CONFIG names {tmp_path / 'cnfig.toml'}, which does not exist" in status.stdout
    assert json.loads(run(environment, "status", "--json").stdout)["config_missing"] == str(tmp_path / "cnfig.toml")
    assert "config_missing" not in json.loads(run(fresh_env(tmp_path), "status", "--json").stdout)


def test_links_and_related_walk_the_notes(env):
    structs = next(
        hit["doc_id"]
        for hit in json.loads(run(env, "search", "struct fields", "--json").stdout)["results"]
        if hit["title"] == "Defining and Instantiating Structs"
    )
    links = run(env, "links", structs, "--direction", "out", "--json")
    assert links.returncode == 0, links.stderr
    by_target = {link["target"]: link for link in json.loads(links.stdout)["links"]}
    move = by_target["ch04-01-what-is-ownership.html#variables-and-data-interacting-with-move"]
    assert (move["status"], move["title"], move["heading"]) == (
        "ok", "What Is Ownership?", "Variables and Data Interacting with Move"
    )
    assert by_target["ch03-02-data-types.html#the-tuple-type"]["status"] == "missing"
    related = run(env, "related", structs, "--limit", "2")
    assert related.returncode == 0 and related.stdout.startswith("## Related to Defining and Instantiating Structs")
    bad = run(env, "related", structs, "--limit", "99")
    assert bad.returncode == 2 and "limit" in bad.stderr


def test_links_mentions_lists_the_unlinked_mentions(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "compost.md").write_text("# Compost\n\nKitchen scraps.\n", encoding="utf-8")
    (notes / "garden.md").write_text("# Garden\n\nBeds need compost in spring.\n", encoding="utf-8")
    (notes / "linked.md").write_text("# Linked\n\nSee [compost](compost.md); compost again.\n", encoding="utf-8")
    environment = fresh_env(tmp_path)
    assert run(environment, "index", str(notes), "--library", "notes").returncode == 0
    compost = make_doc_id(str(notes / "compost.md"))
    answer = run(environment, "links", compost, "--mentions", "--json")
    assert answer.returncode == 0, answer.stderr
    data = json.loads(answer.stdout)
    assert [(Path(row["path"]).name, row["line"], row["snippet"]) for row in data["mentions"]] == [
        ("garden.md", 3, "Beds need **compost** in spring.")
    ]
    assert data["counts"]["mentions"] == 1 and data["counts"]["backlinks"] == 1
    shown = run(environment, "links", compost, "--mentions", "--direction", "in")
    assert shown.returncode == 0 and "### Unlinked mentions of “Compost”: 1 line(s) in 1 document(s)" in shown.stdout
    assert "--mentions" in run(environment, "links", "--help").stdout


@pytest.mark.slow
def test_index_wait_says_when_the_first_pass_makes_search_hybrid(tmp_path):
    environment = fresh_env(tmp_path, "")  # the first pass is on by default
    library = tmp_path / "notes"
    library.mkdir()
    for source in (FIXTURES / "notes" / "rust").glob("*.md"):
        (library / source.name).write_bytes(source.read_bytes())
    result = run(environment, "index", str(library), "--library", "rust", "--wait")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    first = next(number for number, line in enumerate(lines) if line.startswith("first pass: 3 document(s)"))
    loaded = lines.index("vectors: linkly/all-MiniLM-L6-v2-int8 loaded; it reads queries and refines the vectors")
    refined = next(number for number, line in enumerate(lines) if line.startswith("vectors: 3 document(s) embedded"))
    assert first < loaded < refined
    again = run(environment, "index", str(library), "--library", "rust", "--wait")
    assert "first pass: nothing to do (every document has a first-pass or a refined vector)" in again.stdout
    libraries = json.loads(run(environment, "list-libraries", "--json").stdout)["libraries"]
    assert libraries[0]["first_pass_coverage"] == libraries[0]["vector_coverage"] == 1.0


def garden_indexed_with_model(home: Path, model: str) -> tuple[dict, subprocess.CompletedProcess]:
    """A one-note library indexed with `--wait` under `[embedding] model`, offline: (environment, the run)."""
    environment = {**fresh_env(home, f'[embedding]\nmodel = "{model}"\n'), "HF_HUB_OFFLINE": "1"}
    library = home / "notes"
    library.mkdir()
    (library / "garden.md").write_text("# Garden\n\nTomatoes need sun.\n", encoding="utf-8")
    return environment, run(environment, "index", str(library), "--library", "garden", "--wait")


def test_a_model_name_fastembed_does_not_know_is_said_by_index_and_by_every_search(tmp_path):
    environment, result = garden_indexed_with_model(tmp_path, "bge-smal-en-v1.5")
    assert result.returncode == 0, result.stderr
    said = '`[embedding] model = "bge-smal-en-v1.5"` is not a model fastembed knows (did you mean BAAI/bge-small-en-v1.5'
    assert f"vectors: {said}" in result.stdout and "using the bundled model" in result.stdout
    found = json.loads(run(environment, "search", "tomatoes", "--json").stdout)
    assert found["mode"] == "hybrid" and said in found["mode_reason"] and found["results"]


def test_a_hub_model_not_cached_offline_leaves_stderr_empty(tmp_path):
    """fastembed's own log lines (not cached, download failed) went to every command's stderr, beside JSON."""
    environment, indexed = garden_indexed_with_model(tmp_path, "BAAI/bge-small-en-v1.5")
    assert indexed.returncode == 0 and indexed.stderr == "", indexed.stderr
    result = run(environment, "search", "tomatoes", "--json")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert json.loads(result.stdout)["mode"] == "hybrid"


def test_a_description_is_set_without_the_folder_and_refused_without_the_library(env):
    described = run(env, "index", "--library", "rust", "--description", "The Rust book, chapters 4-5")
    assert described.returncode == 0, described.stderr
    libraries = json.loads(run(env, "list-libraries", "--json").stdout)["libraries"]
    assert next(library for library in libraries if library["name"] == "rust")["description"] == "The Rust book, chapters 4-5"
    unnamed = run(env, "index", "--description", "which one?")
    assert unnamed.returncode == 2 and "--description needs the library it describes" in unnamed.stderr


def test_a_library_whose_table_left_the_config_file_is_named_with_how_to_forget_it(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "n.md").write_text("# N\n\nrenamed library word\n", encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f'[embedding]\nmodel = "none"\n[[library]]\nname = "old"\npaths = ["{notes}"]\n', encoding="utf-8")
    environment = {**os.environ, "LINKLY_DATA_DIR": str(tmp_path / "data"), "LINKLY_CONFIG": str(config)}
    assert run(environment, "index").returncode == 0
    config.write_text(f'[embedding]\nmodel = "none"\n[[library]]\nname = "new"\npaths = ["{notes}"]\n', encoding="utf-8")
    renamed = run(environment, "index")
    assert renamed.returncode == 0
    assert "note: library 'old' is no longer in the config file" in renamed.stdout and "remove-library old" in renamed.stdout
    listed = {library["name"]: library for library in json.loads(run(environment, "list-libraries", "--json").stdout)["libraries"]}
    assert "remove-library old" in listed["old"]["note"] and "note" not in listed["new"]
    assert run(environment, "remove-library", "old").returncode == 0
    assert "note:" not in run(environment, "index").stdout


def test_status_starts_without_the_mcp_sdk(env):
    # it reads the running server's address only: importing the SDK was a second of a 0.3 s command
    script = (
        "import sys, contextlib, io\n"
        "from linkly_ls.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['status'])\n"
        "print(code, 'mcp' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["0", "False"], result.stderr


def test_what_linkly_index_cannot_take_is_refused_before_anything_is_written(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    (tmp_path / "script.py").write_text("print(1)\n", encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f'[embedding]\nmodel = "none"\n[[library]]\nname = "cfg"\npaths = ["{notes}"]\n', encoding="utf-8")
    environment = {**os.environ, "LINKLY_DATA_DIR": str(tmp_path / "data"), "LINKLY_CONFIG": str(config)}
    refusals = {
        ("index", ""): "an empty path",  # `linkly index "$DIR"` with DIR unset indexed the current folder
        ("index", "/dev/null"): "neither a folder nor a file",
        ("index", str(tmp_path / "script.py")): ".py files are not read",
        ("index", str(tmp_path), "--library", "cfg"): "defined in the config file",
        ("index", str(notes), "--gitignore", "--no-gitignore"): "not allowed with argument",
        ("--bogus", "search", "x"): "unrecognized arguments: --bogus",
        ("--json", "search", "x"): "put it after the command",
        ("watch", "--library", "nope"): "available: cfg",
        ("read", "a" * 50_000): "characters left out",
    }
    assert run(environment, "index").returncode == 0
    for arguments, fragment in refusals.items():
        result = run(environment, *arguments)
        assert result.returncode == 2 and fragment in result.stderr and len(result.stderr) < 3_000, (arguments, result.stderr[:300])
    listed = json.loads(run(environment, "list-libraries", "--json").stdout)["libraries"]
    assert [(library["name"], library["paths"]) for library in listed] == [("cfg", [str(notes)])]


def test_a_link_that_loops_or_leads_nowhere_is_a_usage_error_naming_it(env, tmp_path):
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    (tmp_path / "dangling.md").symlink_to(tmp_path / "gone.md")
    for name, said in (("loop-a", "loop-a is a symbolic link that loops"), ("dangling.md", "dangling.md does not exist (a symbolic link to")):
        result = run(env, "index", str(tmp_path / name), "--library", "links")
        assert result.returncode == 2 and said in result.stderr and "internal error" not in result.stderr, result.stderr
