"""Caps: every `[limits]` value works and is reported; workers are held to time and memory;
grep cannot be stalled by a pattern and never returns unbounded output."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from linkly_ls.core.config import Config, ConfigError, load_config
from linkly_ls.core.engine import Engine
from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.tools import ArgumentError, ToolError, call_tool
from linkly_ls.core.indexing.workers import WorkerPool

from .conftest import cli_env, linkly, write, write_config
from .endless_pdf import endless_pdf

LIMITS = """max_file_mb = 0.5
max_line_chars = 1000
max_lines = 100
max_unzipped_mb = 0.01
extract_timeout_s = 7.5
extract_memory_mb = 1024
"""


def test_limits_in_the_config_reach_the_extractors_and_the_worker_pool(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path / "config.toml", {}, LIMITS))
    limits = config.limits
    assert (limits.max_file_bytes, limits.max_line_chars, limits.max_lines) == (2**19, 1000, 100)
    assert limits.max_unzipped_bytes == int(0.01 * 2**20)
    engine = Engine(Config(data_dir=tmp_path / "data", limits=limits))
    try:
        pool = engine.indexer.pool()
        assert (pool.timeout_s, pool.memory_mb) == (7.5, 1024)
    finally:
        engine.close()


@pytest.mark.parametrize(
    "key", ["max_file_mb", "max_line_chars", "max_lines", "max_unzipped_mb", "extract_timeout_s", "extract_memory_mb"]
)
def test_a_limit_that_is_not_positive_is_refused_by_name(tmp_path: Path, key: str) -> None:
    with pytest.raises(ConfigError, match=rf"\[limits\] {key} must be greater than 0"):
        load_config(write_config(tmp_path / "config.toml", {}, f"{key} = 0\n"))


def test_each_cap_is_applied_and_reported_for_its_file(tmp_path: Path, corpus: Path) -> None:
    library = tmp_path / "library"
    write(library / "huge.md", "# Huge\n\n" + "filler words here\n" * 40_000)
    write(library / "wide.md", "# Wide\n\n" + "word " * 1000 + "\n")
    write(library / "long.md", "# Long\n\n" + "".join(f"line {n}\n" for n in range(500)))
    shutil.copy2(corpus / "documents/work/dpkg cheat sheet.docx", library / "packed.docx")
    env = cli_env(write_config(tmp_path / "config.toml", {"capped": library}, LIMITS), tmp_path / "data")
    result = linkly(env, "index")
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    expected = {
        ("failed", "huge.md"): "[limits] max_file_mb",
        ("failed", "packed.docx"): "[limits] max_unzipped_mb",
        ("capped", "wide.md"): "line(s) longer than 1,000 characters were wrapped ([limits] max_line_chars)",
        ("capped", "long.md"): "text cut at 100 lines ([limits] max_lines)",
    }
    for (state, name), message in expected.items():
        assert any(line.startswith(f"{state}: ") and name in line and message in line for line in out), (name, out)
    assert "2 indexed" in out[-1] and "2 failed" in out[-1]
    engine = Engine(Config(data_dir=tmp_path / "data"))
    try:
        wide = engine.catalog.by_path(str(library / "wide.md"))
        long = engine.catalog.by_path(str(library / "long.md"))
        assert wide and max(len(line) for line in engine.catalog.lines(wide.doc_id)) <= 1000
        assert long and long.total_lines == 100 and len(engine.catalog.lines(long.doc_id)) == 100
    finally:
        engine.close()


def test_a_file_over_the_time_limit_is_stopped_and_the_rest_is_indexed(tmp_path: Path, make_engine) -> None:
    library = tmp_path / "library"
    write(library / "quick.md", "# Quick\n\nsmall note\n")
    endless_pdf(library / "slow.pdf")
    engine = make_engine({"lib": library}, ExtractLimits(ocr=False, extract_timeout_s=2.5))
    started = time.monotonic()
    (report,) = engine.index()
    assert time.monotonic() - started < 30
    assert report.indexed == 1 and report.errors == [
        (str(library / "slow.pdf"), "extraction took longer than 2.5 s ([limits] extract_timeout_s); stopped")
    ]


def test_the_pool_stops_slow_tasks_and_survives_memory_hogs_and_crashes() -> None:
    """Real work in real worker processes: a sleep past the limit, an allocation past the cap, a segfault."""
    with WorkerPool(time.sleep, size=1, timeout_s=0.5) as pool:
        outcomes = {outcome.key: outcome for outcome in pool.run([("slow", 30), ("fast", 0)])}
    assert "took longer than 0.5 s" in outcomes["slow"].error and outcomes["fast"].error is None
    with WorkerPool(bytearray, size=1, memory_mb=512) as pool:
        outcomes = {outcome.key: outcome for outcome in pool.run([("hog", 2**31), ("small", 8)])}
    assert outcomes["hog"].error == "ran out of memory (over the 512 MB cap per file, [limits] extract_memory_mb)"
    assert outcomes["small"].value == bytearray(8)
    with WorkerPool(signal.raise_signal, size=1) as pool:
        outcomes = {outcome.key: outcome for outcome in pool.run([("crash", signal.SIGSEGV), ("after", signal.SIGCHLD)])}
    assert outcomes["crash"].error.startswith("the extractor crashed (signal 11)")
    assert outcomes["after"].error is None


def test_a_lying_zip_member_is_read_no_further_than_its_declared_size(tmp_path: Path) -> None:
    """2 GiB of zeros behind a header declaring 4 MiB, read under a 1 GiB address-space cap.

    zipfile alone inflates up to 1 GiB in one step before cutting to the
    declared size; the zip guard lowers that step, so the read ends in a CRC
    error instead of running out of memory.
    """
    script = textwrap.dedent(
        """
        import io, resource, struct, sys, zipfile, zlib
        from pathlib import Path
        from linkly_ls.core.extract.base import ExtractLimits
        from linkly_ls.core.extract.zipguard import open_checked_zip

        zeros = bytes(2**20)
        deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
        stream = (deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)) * 2048 + deflate.flush()
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("word/document.xml", stream, compress_type=zipfile.ZIP_STORED)
        data = bytearray(buffer.getvalue())
        central = data.rfind(b"PK\\x01\\x02")
        for header, method_at, size_at in ((0, 8, 22), (central, 10, 24)):
            struct.pack_into("<H", data, header + method_at, zipfile.ZIP_DEFLATED)
            struct.pack_into("<I", data, header + size_at, 4 * 2**20)
        path = Path(sys.argv[1])
        path.write_bytes(bytes(data))
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))
        archive = open_checked_zip(path, ExtractLimits(), "DOCX")
        try:
            archive.read("word/document.xml")
        except zipfile.BadZipFile as error:
            print("refused:", error)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "lying.docx")], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0 and "refused: Bad CRC-32" in result.stdout, result.stderr[-500:]


@pytest.fixture
def grep_engine(tmp_path: Path, make_engine) -> tuple[Engine, dict[str, str]]:
    library = tmp_path / "library"
    write(library / "one-long-line.md", "a" * 5000 + "b\n")
    write(library / "many-lines.md", ("a" * 700 + "b\n") * 60)
    write(library / "wide.md", "".join(f"{n} " + "x" * 5000 + "\n" for n in range(300)))
    engine = make_engine({"lib": library}, ExtractLimits(ocr=False, max_line_chars=100_000))
    engine.index()
    ids = {Path(record.path).stem: record.doc_id for record in engine.catalog.all_documents()}
    return engine, ids


@pytest.mark.parametrize("document", ["one-long-line", "many-lines"])
def test_a_catastrophic_pattern_stops_within_its_one_second_budget(grep_engine, document: str) -> None:
    engine, ids = grep_engine
    cpu = time.thread_time()  # what the budget counts: a busy machine stretches the wall time, not this
    with pytest.raises(ToolError) as raised:
        call_tool(engine, "grep", {"pattern": "(a+)+$", "doc_id": ids[document]})
    assert 1.0 <= time.thread_time() - cpu < 2.5
    message = str(raised.value)
    assert "took longer than 1 s" in message and "(a+)+" in message and "\n" not in message


def test_patterns_over_1000_characters_are_refused(grep_engine) -> None:
    engine, ids = grep_engine
    with pytest.raises(ArgumentError, match="1000"):
        call_tool(engine, "grep", {"pattern": "a" * 1001, "doc_id": ids["wide"]})
    assert call_tool(engine, "grep", {"pattern": "a" * 1000, "doc_id": ids["wide"]}).total_matches == 0


def test_grep_output_is_bounded_and_long_lines_are_clipped(grep_engine) -> None:
    engine, ids = grep_engine
    result = call_tool(engine, "grep", {"pattern": "x+", "doc_id": ids["wide"], "limit": 100, "context": 50})
    data = result.to_json()
    assert result.total_matches == 300 and len(data["matches"]) == 100 and data["next_offset"] == 100
    shown = [match["text"] for match in data["matches"]]
    shown += [line["text"] for match in data["matches"] for line in match["before"] + match["after"]]
    assert max(len(text) for text in shown) <= 1002 and all(text.endswith(" …") for text in shown)
    assert len(json.dumps(data)) < 100 * 101 * 1100
