#!/usr/bin/env python3
"""Indexing benchmark: `linkly index` side by side with Recoll's `recollindex`.

Copies the shared corpus (without `odd/` and the corpus's own README.md,
MANIFEST.tsv and .restore-mtimes.py) once into a temporary folder, then for
each repetition indexes that copy from an empty index with each tool and
prints files/s, MB/s, wall and CPU seconds, peak memory of the indexer's
process tree and the index size on disk, with medians and linkly/recoll ratios.

    .venv/bin/python bench/index_bench.py                 # both tools, 3 runs
    .venv/bin/python bench/index_bench.py --runs 5 --incremental
    .venv/bin/python bench/index_bench.py --linkly-only --per-file

Each tool runs as a subprocess of a small measuring process that is a Linux
"child subreaper": linkly's extraction workers live under a forkserver that
would otherwise be orphaned, so without it their usage would be lost. The
measuring process reports wall time, CPU time of every process it reaped and
`getrusage(RUSAGE_CHILDREN).ru_maxrss` (the largest *single* process). The
benchmark itself samples the whole process tree every `--sample-interval`
seconds from /proc and reports the peak of the *sum* of RSS (and, every tenth
sample, of PSS, which counts shared pages once) over the tree.

Recoll needs Debian's recollcmd, python3-recoll, python3-lxml and
poppler-utils (and tesseract-ocr for OCR). See bench/README.md.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpus"
#: top-level entries of the corpus that are not part of the benchmark
SKIPPED_TOP_DIRS = {"odd"}
SKIPPED_TOP_FILES = {"README.md", "MANIFEST.tsv", ".restore-mtimes.py", ".complete"}
#: files of these types get a line appended by --incremental; the others only a new mtime
TEXT_SUFFIXES = {".txt", ".text", ".md", ".markdown", ".mdx", ".rst", ".html", ".htm"}
LIBRARY = "bench"
MB = 1_000_000
#: linkly's default OCR languages (ExtractLimits.ocr_languages), used for Recoll too
OCR_LANGUAGES = "eng+fra+deu+chi_sim"
#: the system Python that python3-recoll and python3-lxml are installed for
SYSTEM_PYTHON = "/usr/bin/python3"

# --------------------------------------------------------------------------- measuring


def _measure_main(argv: list[str]) -> int:
    """`index_bench.py __measure__ RESULT.json -- CMD...`: run CMD, reap its whole tree, report."""
    import ctypes
    import resource

    result_path, command = argv[0], argv[2:]
    subreaper = False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        subreaper = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass
    started = time.perf_counter()
    process = subprocess.Popen(command)
    returncode = process.wait()
    wall = time.perf_counter() - started
    lingering = False
    deadline = time.monotonic() + 30
    while True:  # orphaned descendants (e.g. a forkserver) were re-parented to us: reap them
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if time.monotonic() > deadline:
                lingering = True
                break
            time.sleep(0.01)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    Path(result_path).write_text(
        json.dumps(
            {
                "returncode": returncode,
                "wall": wall,
                "cpu": usage.ru_utime + usage.ru_stime,
                "maxrss": usage.ru_maxrss * 1024,
                "subreaper": subreaper,
                "lingering": lingering,
            }
        )
    )
    return 0


#: memory sampling reads PSS (smaps_rollup: the kernel walks every page table) once in this many
#: samples; RSS (statm) every sample. Reading smaps_rollup of a large tree every 50 ms took enough
#: CPU to slow a 2-core run down by about 0.8 s
PSS_EVERY_SAMPLES = 10
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _descendants(root: int) -> list[int]:
    """The processes below `root`, from /proc/PID/task/TID/children (a full /proc scan where that is missing)."""
    found: list[int] = []
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    children = [int(child) for child in handle.read().split()]
            except (OSError, ValueError):
                return _descendants_by_scan(root)
            found.extend(children)
            stack.extend(children)
    return found


def _descendants_by_scan(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    stack = list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def _tree_memory(root: int, with_pss: bool) -> tuple[int, int | None]:
    """Sum of RSS and (when asked) of PSS, in bytes, over the descendants of `root` (not root itself)."""
    rss = pss = 0
    for pid in _descendants(root):
        try:
            with open(f"/proc/{pid}/statm") as handle:
                rss += int(handle.read().split()[1]) * _PAGE_BYTES
            if with_pss:
                with open(f"/proc/{pid}/smaps_rollup") as handle:
                    for line in handle:
                        if line.startswith("Pss:"):
                            pss += int(line.split()[1]) * 1024
                            break
        except (OSError, ValueError, IndexError):
            continue
    return rss, pss if with_pss else None


def cpu_times() -> tuple[float, float] | None:
    """(busy, total) CPU seconds of the whole machine so far, from /proc/stat."""
    try:
        with open("/proc/stat") as handle:
            values = [int(v) for v in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    hertz = os.sysconf("SC_CLK_TCK")
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    total = sum(values[:8])  # guest time is already counted in user
    return (total - idle) / hertz, total / hertz


def busy_cpus(seconds: float = 1.0) -> float | None:
    """How many CPUs' worth of work the machine is doing right now (measured over `seconds`)."""
    before = cpu_times()
    time.sleep(seconds)
    after = cpu_times()
    if before is None or after is None or after[1] == before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1]) * (os.cpu_count() or 1)


@dataclass
class Measurement:
    returncode: int
    wall: float
    cpu: float
    maxrss: int  # largest single process (getrusage)
    tree_rss: int | None  # peak of the sampled sum over the process tree
    tree_pss: int | None
    stdout: str
    stderr: str
    subreaper: bool = True
    other_cpu: float | None = None  # CPU seconds used by other programs on the machine meanwhile


def measure(command: list[str], env: dict[str, str], work: Path, tag: str, interval: float) -> Measurement:
    result_path = work / f"{tag}.measure.json"
    out_path, err_path = work / f"{tag}.stdout.txt", work / f"{tag}.stderr.txt"
    sample = sys.platform.startswith("linux") and Path("/proc/self/smaps_rollup").exists()
    peak_rss = peak_pss = 0
    machine_before = cpu_times()
    own_before = os.times()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        wrapper = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "__measure__", str(result_path), "--", *command],
            stdout=out,
            stderr=err,
            env=env,
            cwd=work,
        )
        samples = 0
        while wrapper.poll() is None:
            if sample:
                rss, pss = _tree_memory(wrapper.pid, with_pss=samples % PSS_EVERY_SAMPLES == 0)
                peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss or 0)
                samples += 1
            time.sleep(interval)
    if not result_path.exists():
        raise SystemExit(f"measuring {command[0]} failed; see {err_path}")
    machine_after = cpu_times()
    own_after = os.times()
    result = json.loads(result_path.read_text())
    other_cpu = None
    if machine_before and machine_after:
        # minus the tool's processes and this process's own sampling (the measuring wrapper's few
        # milliseconds are not subtracted)
        own = (own_after.user - own_before.user) + (own_after.system - own_before.system)
        other_cpu = max(0.0, machine_after[0] - machine_before[0] - result["cpu"] - own)
    return Measurement(
        other_cpu=other_cpu,
        returncode=result["returncode"],
        wall=result["wall"],
        cpu=result["cpu"],
        maxrss=result["maxrss"],
        tree_rss=peak_rss if sample else None,
        tree_pss=peak_pss if sample else None,
        stdout=out_path.read_text(encoding="utf-8", errors="replace"),
        stderr=err_path.read_text(encoding="utf-8", errors="replace"),
        subreaper=result["subreaper"],
    )


def disk_usage(path: Path) -> int:
    """Bytes allocated on disk under `path`, like `du -s`."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


# --------------------------------------------------------------------------- corpus


@dataclass
class Corpus:
    source: Path
    root: Path  # the copy
    files: list[str]  # relative paths, sorted
    total_bytes: int
    by_type: dict[str, tuple[int, int]]
    mtimes_from_manifest: int


def copy_corpus(source: Path, destination: Path) -> Corpus:
    files: list[str] = []
    for directory, dirnames, filenames in os.walk(source):
        relative_dir = Path(directory).relative_to(source)
        if relative_dir == Path("."):
            dirnames[:] = [d for d in dirnames if d not in SKIPPED_TOP_DIRS]
            filenames = [f for f in filenames if f not in SKIPPED_TOP_FILES]
        dirnames.sort()
        for name in sorted(filenames):
            files.append((relative_dir / name).as_posix())
    files.sort()
    total = 0
    by_type: dict[str, tuple[int, int]] = {}
    for relative in files:
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / relative, target)  # keeps the mtime
        os.chmod(target, 0o644)  # the shared corpus is read-only; --incremental appends to copies
        size = target.stat().st_size
        total += size
        suffix = Path(relative).suffix.lower().lstrip(".") or "(none)"
        count, nbytes = by_type.get(suffix, (0, 0))
        by_type[suffix] = (count + 1, nbytes + size)
    restored = 0
    manifest = source / "MANIFEST.tsv"
    if manifest.exists():  # the shared copy may not have its recorded mtimes; the copy gets them
        with manifest.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
                target = destination / row.get("path", "")
                if row.get("path") in files and row.get("mtime_epoch", "").isdigit():
                    epoch = int(row["mtime_epoch"])
                    os.utime(target, (epoch, epoch))
                    restored += 1
    return Corpus(source, destination, files, total, by_type, restored)


# --------------------------------------------------------------------------- tools


@dataclass
class RunResult:
    tool: str
    measurement: Measurement
    index_bytes: int
    documents: int | None  # files in the index (top-level documents)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (relative path, message)
    no_text: list[tuple[str, str]] = field(default_factory=list)  # indexed, but no text (name only)
    missing: list[str] = field(default_factory=list)  # given files neither indexed nor failed
    warnings: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)


def median(values: list[float | int | None]) -> float | None:
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


class Linkly:
    name = "linkly"

    def __init__(self, work: Path, ocr: bool, interval: float, extra_args: list[str] | None = None) -> None:
        self.binary = Path(sys.executable).parent / "linkly"
        self.extra_args = list(extra_args or [])
        self.work = work
        self.interval = interval
        self.config = work / "linkly-config.toml"  # does not exist: defaults (OCR on when tesseract is there)
        if not ocr:
            self.config = work / "linkly-config-no-ocr.toml"
            self.config.write_text("[limits]\nocr = false\n", encoding="utf-8")

    def available(self) -> str | None:
        return None if self.binary.exists() else f"{self.binary} not found (install the package in this venv)"

    def version(self) -> str:
        try:
            return subprocess.run(
                [str(self.binary), "--version"], capture_output=True, text=True, timeout=60
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return "?"

    def env(self, data_dir: Path) -> dict[str, str]:
        env = base_env()
        if os.environ.get("PYTHONPATH"):  # a working copy on the path: linkly runs that code, as the bench does
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        env["LINKLY_DATA_DIR"] = str(data_dir)
        env["LINKLY_CONFIG"] = str(self.config)
        return env

    def index(self, corpus: Corpus, data_dir: Path, tag: str) -> Measurement:
        command = [str(self.binary), "index", str(corpus.root), "--library", LIBRARY, *self.extra_args]
        measurement = measure(command, self.env(data_dir), self.work, tag, self.interval)
        if measurement.returncode != 0:
            raise SystemExit(
                f"linkly index exited with {measurement.returncode}:\n{measurement.stderr[-2000:]}"
            )
        return measurement

    def run(self, corpus: Corpus, run: int) -> RunResult:
        data_dir = self.work / f"linkly-data-{run}"
        measurement = self.index(corpus, data_dir, f"linkly-{run}")
        result = RunResult(self.name, measurement, disk_usage(data_dir), None)
        prefix = str(corpus.root) + os.sep
        for line in measurement.stdout.splitlines():
            if line.startswith("failed: " + prefix):
                rest = line[len("failed: " + prefix) :]
                relative, message = _split_known_path(rest, corpus.files)
                result.failed.append((relative, message))
        summary = parse_linkly_summary(measurement.stdout)
        result.extra["summary"] = summary
        text_layer = parse_linkly_text_layer(measurement.stdout)
        if text_layer is not None and summary.get("seconds") is not None:
            # linkly's report times from the start of indexing; the rest of the wall time (start-up,
            # the OCR pass) is moved over: wall until the keyword index held every text layer
            result.extra["text_layer_wall"] = measurement.wall - (summary["seconds"] - text_layer)
        listed = subprocess.run(
            [str(self.binary), "list-libraries", "--json"],
            capture_output=True,
            text=True,
            env=self.env(data_dir),
            timeout=120,
        )
        try:
            library = next(lib for lib in json.loads(listed.stdout)["libraries"] if lib["name"] == LIBRARY)
            result.documents = int(library["document_count"])
        except (ValueError, KeyError, StopIteration):
            result.documents = summary.get("indexed") if summary else None
        indexed_paths: set[str] = set()
        try:  # best effort: which documents came out without any text
            from linkly_ls.core.store.catalog import Catalog

            catalog = Catalog(data_dir / "catalog.sqlite3", read_only=True)
            try:
                records = catalog.all_documents()
            finally:
                catalog.close()
            for record in records:
                relative = os.path.relpath(record.path, corpus.root)
                indexed_paths.add(relative)
                if record.text_missing_reason or not record.word_count:
                    result.no_text.append((relative, record.text_missing_reason or "no words extracted"))
        except Exception as error:  # noqa: BLE001 - a catalog of another version may not be readable
            result.warnings.append(f"could not read the catalog for per-file detail: {error}")
        if indexed_paths:
            failed = {path for path, _ in result.failed}
            result.missing = [f for f in corpus.files if f not in indexed_paths and f not in failed]
        return result


def parse_linkly_summary(stdout: str) -> dict[str, float]:
    pattern = re.compile(
        rf"^{re.escape(LIBRARY)}: (\d+) indexed, (\d+) unchanged, (\d+) failed, (\d+) removed in ([\d.]+) s$"
    )
    for line in stdout.splitlines():
        match = pattern.match(line.strip())
        if match:
            indexed, unchanged, failed, removed, seconds = match.groups()
            return {
                "indexed": int(indexed),
                "unchanged": int(unchanged),
                "failed": int(failed),
                "removed": int(removed),
                "seconds": float(seconds),
            }
    return {}


def parse_linkly_text_layer(stdout: str) -> float | None:
    """Seconds from the start of indexing until every text layer was searchable (only printed when OCR ran)."""
    pattern = re.compile(rf"^{re.escape(LIBRARY)}: text layers searchable after ([\d.]+) s; OCR of \d+ file")
    for line in stdout.splitlines():
        match = pattern.match(line.strip())
        if match:
            return float(match.group(1))
    return None


def _split_known_path(rest: str, files: list[str]) -> tuple[str, str]:
    for relative in sorted(files, key=len, reverse=True):
        if rest.startswith(relative + ": "):
            return relative, rest[len(relative) + 2 :]
    relative, _, message = rest.partition(": ")
    return relative, message


RECOLL_LIST_SCRIPT = r"""
import json, sys
from recoll import recoll
confdir, top = sys.argv[1], sys.argv[2]
db = recoll.connect(confdir=confdir)
query = db.query()
query.execute('dir:"%s"' % top, stemming=0)  # returns Xapian's estimate of the count, not the count
rows = []
while True:
    doc = query.fetchone()
    if doc is None:
        break
    rows.append({k: doc.get(k) or "" for k in ("url", "ipath", "mtype", "sig", "dbytes")})
json.dump(rows, sys.stdout)
"""


class Recoll:
    name = "recoll"

    def __init__(self, work: Path, ocr: bool, interval: float) -> None:
        self.work = work
        self.ocr = ocr
        self.interval = interval
        self.binary = shutil.which("recollindex", path=system_path())
        self.tmpdir = work / "recoll-tmp"
        self.tmpdir.mkdir(exist_ok=True)

    def available(self) -> str | None:
        if self.binary is None:
            return (
                "recollindex not found; install Debian's recollcmd, python3-recoll, python3-lxml and "
                "poppler-utils (apt-get install -y recollcmd python3-recoll python3-lxml poppler-utils)"
            )
        return None

    def version(self) -> str:
        try:
            text = subprocess.run([self.binary, "-h"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return "?"
        match = re.search(r"Recoll version: (.*)", text.stdout + text.stderr)
        return match.group(1).strip() if match else "?"

    def write_config(self, confdir: Path, corpus: Corpus) -> None:
        confdir.mkdir(parents=True)
        lines = [
            f"topdirs = {corpus.root}",
            "# no spelling dictionary: linkly builds none (recoll would run aspell at the end)",
            "noaspell = 1",
        ]
        if self.ocr:
            lines += [
                "# OCR of image-only PDFs, like linkly",
                "pdfocr = 1",
                "ocrprogs = tesseract",
                f"tesseractlang = {ocr_languages()}",
            ]
        else:
            lines.append("pdfocr = 0")
        (confdir / "recoll.conf").write_text("\n".join(lines) + "\n", encoding="utf-8")
        # recoll has no .mdx type and `file` calls these "application/x-genesis-32x-rom": read as text
        (confdir / "mimemap").write_text(".mdx = text/plain\n", encoding="utf-8")
        if self.ocr:
            # Recoll's OCR framework (rclocr.py) is only wired to PDFs by default; route images to it
            # too so that images are read like linkly reads them (default: metadata via exiftool).
            (confdir / "mimeconf").write_text(
                "[index]\n"
                + "".join(
                    f"{mime} = exec rclocr.py;mimetype=text/plain;charset=utf-8\n"
                    for mime in ("image/png", "image/jpeg", "image/bmp", "image/tiff", "image/webp")
                ),
                encoding="utf-8",
            )

    def env(self, confdir: Path) -> dict[str, str]:
        env = base_env()
        env["RECOLL_CONFDIR"] = str(confdir)
        # the OCR cache skips files under TMPDIR as "temporary copies"; the corpus copy is not one
        env["TMPDIR"] = str(self.tmpdir)
        return env

    def index(self, corpus: Corpus, confdir: Path, tag: str) -> Measurement:
        command = [self.binary, "-c", str(confdir), "--diagsfile", str(self.work / f"{tag}.diags.txt")]
        measurement = measure(command, self.env(confdir), self.work, tag, self.interval)
        if measurement.returncode != 0:
            raise SystemExit(f"recollindex exited with {measurement.returncode}:\n{measurement.stderr[-2000:]}")
        return measurement

    def run(self, corpus: Corpus, run: int) -> RunResult:
        confdir = self.work / f"recoll-conf-{run}"
        self.write_config(confdir, corpus)
        tag = f"recoll-{run}"
        measurement = self.index(corpus, confdir, tag)
        result = RunResult(self.name, measurement, disk_usage(confdir / "xapiandb"), None)
        status = parse_key_values(confdir / "idxstatus.txt")
        result.extra["idxstatus"] = status
        result.extra["ocrcache_bytes"] = disk_usage(confdir / "ocrcache") if (confdir / "ocrcache").exists() else 0
        prefix = str(corpus.root) + os.sep
        diagnosed: dict[str, str] = {}
        diags = self.work / f"{tag}.diags.txt"
        if diags.exists():
            for line in diags.read_text(encoding="utf-8", errors="replace").splitlines():
                kind, _, rest = line.partition(" ")
                path, _, detail = rest.partition(" | ")
                if path.startswith(prefix):
                    relative = path[len(prefix) :]
                    text = kind + (f" ({detail.strip()})" if detail.strip() else "")
                    diagnosed[relative] = diagnosed[relative] + "; " + text if relative in diagnosed else text
        handler_messages = [
            line.strip() for line in measurement.stderr.splitlines() if re.search(r"failed|error", line, re.I)
        ]
        if handler_messages:
            result.warnings.append(
                f"{len(handler_messages)} filter error message(s) on stderr (the document may be partly "
                f"indexed), e.g.: {handler_messages[0][:200]}"
            )
        rows = self.list_documents(confdir, corpus)
        if rows is None:
            result.documents = int(status["dbtotdocs"]) if status.get("dbtotdocs", "").isdigit() else None
            result.failed = sorted(diagnosed.items())
            result.warnings.append("python3-recoll missing: counts come from idxstatus.txt and include folders")
            return result
        top: dict[str, dict] = {}
        sub_documents: dict[str, int] = {}
        sub_text: dict[str, int] = {}
        for row in rows:
            url = row["url"]
            if not url.startswith("file://" + prefix):
                continue
            relative = url[len("file://" + prefix) :]
            if row["ipath"]:
                sub_documents[relative] = sub_documents.get(relative, 0) + 1
                sub_text[relative] = sub_text.get(relative, 0) + int(row["dbytes"] or 0)
            elif row["mtype"] != "inode/directory":
                top[relative] = row
        result.extra["sub_documents"] = sum(sub_documents.values())
        result.extra["folders"] = sum(1 for row in rows if row["mtype"] == "inode/directory")
        failed = {}
        for relative, row in top.items():
            if row["sig"].endswith("+"):  # recoll's mark for "failed, retry with -k"
                failed[relative] = diagnosed.get(relative, "failed (no detail in the diagnostics file)")
        for relative, detail in diagnosed.items():
            if relative not in failed and relative in top and not detail.startswith("NoHandler"):
                if not int(top[relative]["dbytes"] or 0) and not sub_text.get(relative):
                    failed[relative] = detail
        if "Image/ExifTool.pm" in measurement.stderr:
            hint = "rclimg needs Image::ExifTool (Debian: libimage-exiftool-perl)"
            for relative in failed:
                if Path(relative).suffix.lower() in (".png", ".jpg", ".jpeg", ".gif", ".tif", ".tiff", ".bmp"):
                    failed[relative] += f" ({hint})"
        result.failed = sorted(failed.items())
        result.documents = len([r for r in top if r not in failed])
        for relative, row in sorted(top.items()):
            if relative in failed:
                continue
            if not int(row["dbytes"] or 0) and not sub_text.get(relative):
                reason = diagnosed.get(relative, "no text extracted")
                if reason.startswith("NoHandler"):
                    reason += ": indexed by file name only"
                result.no_text.append((relative, reason))
        result.missing = [f for f in corpus.files if f not in top]
        return result

    def list_documents(self, confdir: Path, corpus: Corpus) -> list[dict] | None:
        if not Path(SYSTEM_PYTHON).exists():
            return None
        listed = subprocess.run(
            [SYSTEM_PYTHON, "-c", RECOLL_LIST_SCRIPT, str(confdir), str(corpus.root)],
            capture_output=True,
            text=True,
            env=self.env(confdir),
            timeout=300,
        )
        if listed.returncode != 0:
            return None
        return json.loads(listed.stdout)


def parse_key_values(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                values[key.strip()] = value.strip()
    return values


def system_path() -> str:
    """PATH with the system directories first, so that Recoll's filters run /usr/bin/python3
    (which has python3-lxml and python3-recoll), not a venv's or pyenv's python3."""
    parts = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    rest = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p not in parts]
    return os.pathsep.join(parts + rest)


def base_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = system_path()
    # one thread per tesseract run: linkly sets this itself; give Recoll's tesseract the same
    env["OMP_THREAD_LIMIT"] = "1"
    env.pop("PYTHONPATH", None)
    # an installed copy has its bytecode cached; without it every linkly process (and each of Recoll's
    # Python filters) compiles its modules again, which is not what users pay
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def ocr_languages() -> str:
    """linkly's default OCR languages, limited to the installed ones (as linkly does)."""
    tesseract = shutil.which("tesseract", path=system_path())
    if tesseract is None:
        return "eng"
    try:
        listed = subprocess.run([tesseract, "--list-langs"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "eng"
    installed = {line.strip() for line in (listed.stdout + listed.stderr).splitlines() if " " not in line.strip()}
    chosen = [lang for lang in OCR_LANGUAGES.split("+") if lang in installed]
    return "+".join(chosen) or "eng"


def load_average() -> str:
    if not hasattr(os, "getloadavg"):
        return "n/a"
    return " / ".join(f"{value:.2f}" for value in os.getloadavg()) + " (1 / 5 / 15 min)"


#: a run is "noisy" when other programs used more than this share of all CPUs' time during it
NOISY_SHARE = 0.10


def noisy(measurement: Measurement) -> bool:
    if measurement.other_cpu is None:
        return False
    return measurement.other_cpu > NOISY_SHARE * measurement.wall * (os.cpu_count() or 1)


def wait_for_idle(max_seconds: float, threshold: float = 0.3) -> None:
    """Wait (up to max_seconds) until other programs use less than `threshold` CPUs."""
    if max_seconds <= 0:
        return
    deadline = time.monotonic() + max_seconds
    announced = False
    while time.monotonic() < deadline:
        busy = busy_cpus(2.0)
        if busy is None or busy < threshold:
            return
        if not announced:
            print(f"  (waiting for the machine to become idle: {busy:.1f} CPUs busy)", flush=True)
            announced = True
    print("  (gave up waiting for an idle machine)", flush=True)


def tool_version(command: list[str]) -> str:
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=30, env=base_env())
    except (OSError, subprocess.SubprocessError):
        return "not installed"
    text = (result.stdout + result.stderr).strip().splitlines()
    return text[0] if text else "?"


# --------------------------------------------------------------------------- report


def fmt(value: float | int | None, digits: int = 2) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int) or float(value).is_integer() and digits == 0:
        return f"{int(value):,}"
    return f"{value:,.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return ""
    return f"{a / b:.2f}"


def print_table(title: str, rows: list[tuple[str, list[str]]], headers: list[str]) -> None:
    print(title)
    width = max(len(label) for label, _ in rows) + 2
    widths = [max(len(h), *(len(cells[i]) for _, cells in rows)) + 2 for i, h in enumerate(headers)]
    print(" " * width + "".join(h.rjust(w) for h, w in zip(headers, widths)))
    for label, cells in rows:
        print(label.ljust(width) + "".join(c.rjust(w) for c, w in zip(cells, widths)))
    print()


def summarise(results: list[RunResult], corpus: Corpus) -> dict[str, float | None]:
    walls = [r.measurement.wall for r in results]
    wall = median(walls)
    mb = corpus.total_bytes / MB
    return {
        "wall": wall,
        "text_layer": median([r.extra.get("text_layer_wall", r.measurement.wall) for r in results]),
        "wall_min": min(walls),
        "wall_max": max(walls),
        "cpu": median([r.measurement.cpu for r in results]),
        "files_per_s": median([len(corpus.files) / w for w in walls]),
        "mb_per_s": median([mb / w for w in walls]),
        "tree_rss": median([r.measurement.tree_rss for r in results]),
        "tree_pss": median([r.measurement.tree_pss for r in results]),
        "maxrss": median([r.measurement.maxrss for r in results]),
        "index": median([r.index_bytes for r in results]),
        "documents": median([r.documents for r in results]),
        "failed": median([len(r.failed) for r in results]),
        "no_text": median([len(r.no_text) for r in results]),
        "other_cpu": median([r.measurement.other_cpu for r in results]),
    }


def main_table(summaries: dict[str, dict], runs: int, corpus: Corpus) -> None:
    tools = list(summaries)
    headers = tools + (["linkly/recoll"] if len(tools) == 2 else [])

    def row(label: str, key: str, scale: float = 1.0, digits: int = 2, with_ratio: bool = True) -> tuple:
        values = [summaries[t][key] / scale if summaries[t][key] is not None else None for t in tools]
        cells = [fmt(v, digits) for v in values]
        if len(tools) == 2:
            cells.append(ratio(values[0], values[1]) if with_ratio else "")
        return (label, cells)

    rows = [
        row("wall time (s)", "wall"),
        row("  keyword index holds every text layer (s)", "text_layer"),
        row("CPU time, all processes (s)", "cpu"),
        row("files/s", "files_per_s"),
        row("MB/s", "mb_per_s"),
        row("peak RSS, sum over process tree (MB)", "tree_rss", MB, 1),
        row("peak PSS, sum over process tree (MB)", "tree_pss", MB, 1),
        row("largest single-process RSS (MB)", "maxrss", MB, 1),
        row("index size on disk (MB)", "index", MB, 2),
        row("files in the index (documents)", "documents", 1, 0, False),
        row("  of which without text", "no_text", 1, 0, False),
        row("failed files", "failed", 1, 0, False),
        row("other programs' CPU meanwhile (CPU-s)", "other_cpu", 1, 1, False),
    ]
    print_table(
        f"== Full index from an empty index: {len(corpus.files)} files, {corpus.total_bytes / MB:.2f} MB; "
        f"median of {runs} run(s) ==",
        rows,
        headers,
    )
    print(
        "wall time = until the tool exits with everything indexed, OCR included. linkly indexes text layers\n"
        "first (images by name, scanned pages by marker) and OCRs in a second pass; 'keyword index holds every\n"
        "text layer' is its wall time minus that pass (from its own report). Recoll OCRs inline, so its figure\n"
        "there is its whole wall time; with --no-ocr both rows are the same.\n"
    )


# --------------------------------------------------------------------------- incremental


def touch_files(corpus: Corpus, chosen: list[str], round_number: int) -> None:
    now = time.time()
    for relative in chosen:
        path = corpus.root / relative
        if path.suffix.lower() in TEXT_SUFFIXES:
            with path.open("a", encoding="utf-8") as handle:
                handle.write(f"\nlinkly bench: appended line {round_number}\n")
        os.utime(path, (now, now))


def run_incremental(
    args: argparse.Namespace, corpus: Corpus, tools: list, last_run: int
) -> None:
    count = max(1, math.ceil(len(corpus.files) * args.touch_percent / 100))
    chosen = sorted(random.Random(args.seed).sample(corpus.files, count))
    print(
        f"== Incremental re-index (after the full runs; reuses the index of full run {last_run}) ==\n"
        f"touching {count} of {len(corpus.files)} files ({args.touch_percent:g}%, random seed {args.seed}); "
        "text files (" + ", ".join(sorted(TEXT_SUFFIXES)) + ") get a line appended, every touched file a new mtime:"
    )
    for relative in chosen:
        kind = "append + mtime" if Path(relative).suffix.lower() in TEXT_SUFFIXES else "mtime only"
        print(f"  {relative}  ({kind})")
    print()
    timings: dict[str, dict[str, list]] = {tool.name: {"noop": [], "touched": [], "summaries": []} for tool in tools}
    for tool in tools:  # nothing changed: the cost of walking and checking
        for repetition in range(1, args.runs + 1):
            wait_for_idle(args.wait_for_idle)
            measurement = reindex(tool, corpus, last_run, f"{tool.name}-noop-{repetition}")
            timings[tool.name]["noop"].append(measurement.wall)
    for repetition in range(1, args.runs + 1):
        touch_files(corpus, chosen, repetition)
        for tool in tools:
            wait_for_idle(args.wait_for_idle)
            measurement = reindex(tool, corpus, last_run, f"{tool.name}-incr-{repetition}")
            timings[tool.name]["touched"].append(measurement.wall)
            if tool.name == "linkly":
                timings[tool.name]["summaries"].append(parse_linkly_summary(measurement.stdout))
            print(
                f"  incremental run {repetition}/{args.runs} {tool.name:6}: {measurement.wall:7.2f} s; other programs "
                f"used {fmt(measurement.other_cpu, 1)} CPU-s meanwhile",
                flush=True,
            )
    print()
    names = [tool.name for tool in tools]
    headers = names + (["linkly/recoll"] if len(names) == 2 else [])
    rows = []
    for label, key in (("re-index, nothing changed (s)", "noop"), (f"re-index after touching {count} file(s) (s)", "touched")):
        values = [median(timings[name][key]) for name in names]
        cells = [fmt(v, 3) for v in values]
        if len(names) == 2:
            cells.append(ratio(values[0], values[1]))
        rows.append((label, cells))
    print_table(f"median of {args.runs} run(s):", rows, headers)
    summaries = timings.get("linkly", {}).get("summaries")
    if summaries:
        last = summaries[-1]
        print(
            f"linkly's own report for the last incremental run: {last.get('indexed')} re-indexed, "
            f"{last.get('unchanged')} unchanged, {last.get('failed')} failed (failures are remembered and not "
            "retried until the file changes); files whose content did not change are recognised by hash "
            "and only get their mtime updated."
        )
        print()


def reindex(tool, corpus: Corpus, run: int, tag: str) -> Measurement:
    if tool.name == "linkly":
        return tool.index(corpus, tool.work / f"linkly-data-{run}", tag)
    return tool.index(corpus, tool.work / f"recoll-conf-{run}", tag)


# --------------------------------------------------------------------------- per-file profile


def per_file_profile(corpus: Corpus, ocr: bool, top: int) -> None:
    """Time linkly's per-file work (extract, then analyse and chunk) in this process, one file at a time."""
    try:
        from linkly_ls.core.indexing import preparation as indexer
        from linkly_ls.core.extract import is_supported
        from linkly_ls.core.extract.base import ExtractLimits
    except ImportError as error:
        print(f"--per-file: cannot import linkly_ls with {sys.executable}: {error}\n")
        return
    os.environ["OMP_THREAD_LIMIT"] = "1"
    limits = ExtractLimits(ocr=ocr)
    extract_seconds: list[float] = []
    original = indexer.extract_file

    def timed_extract(path, limits=None, pdf_pages=None):  # noqa: ANN001
        started = time.perf_counter()
        try:
            return original(path, limits, pdf_pages)
        finally:
            extract_seconds.append(time.perf_counter() - started)

    # Warm up first, so that one-time costs are not charged to whichever file comes first: import
    # every extractor (PyMuPDF 2.x, for one, loads an ONNX layout model on import) and run the
    # analysis once (the language detector and the regular expressions load on first use).
    import importlib

    from linkly_ls.core import extract as extract_package

    started = time.perf_counter()
    imports: list[str] = []
    for module in sorted(set(getattr(extract_package, "_MODULES", {}).values())):
        module_started = time.perf_counter()
        try:
            importlib.import_module(f"{extract_package.__name__}.{module}")
        except Exception as exc:  # noqa: BLE001
            imports.append(f"{module}: {type(exc).__name__}")
            continue
        imports.append(f"{module} {time.perf_counter() - module_started:.2f} s")
    sample = corpus.root.parent / "warm-up.md"
    sample.write_text("# Warm up\n\nSome words in English to detect a language and pick keywords.\n")
    try:
        indexer.prepare_file((str(sample), None, limits))
    except Exception:  # noqa: BLE001
        pass
    warm_up = (
        f"warm-up, not counted: {time.perf_counter() - started:.2f} s; extractor imports: {', '.join(imports)}"
    )
    indexer.extract_file = timed_extract
    rows = []
    try:
        for relative in corpus.files:
            path = corpus.root / relative
            if not is_supported(path):
                continue
            extract_seconds.clear()
            started = time.perf_counter()
            try:
                prepared = indexer.prepare_file((str(path), None, limits))
                error = prepared.error
            except Exception as exc:  # noqa: BLE001 - report and go on
                error = f"{type(exc).__name__}: {exc}"
            total = time.perf_counter() - started
            rows.append((total, sum(extract_seconds), relative, error))
    finally:
        indexer.extract_file = original
    rows.sort(reverse=True)
    grand = sum(row[0] for row in rows)
    print(
        f"== linkly per-file time, sequential in one process ({len(rows)} files, {grand:.1f} s in total; "
        f"'extract' = extract_file, 'total' adds hashing, language, keywords and chunking) =="
    )
    print(warm_up)
    print(f"{'total s':>9} {'extract s':>10} {'share':>6}  file")
    for total, extract, relative, error in rows[:top]:
        share = 100 * total / grand if grand else 0
        note = f"  [failed: {error[:80]}]" if error else ""
        print(f"{total:9.2f} {extract:10.2f} {share:5.1f}%  {relative}{note}")
    print()


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark `linkly index` against Recoll's recollindex on the same copy of a corpus."
    )
    parser.add_argument(
        "--corpus",
        default="shared",
        help=f"a corpus folder, or `shared` ({DEFAULT_CORPUS}, the default), `home` (the home-folder-like "
        "corpus of bench/home_corpus.py, fetched on first use), `both` (shared, then home), `pdfs` (every PDF "
        "of the home-like corpus's packages: a folder of ordinary PDFs), `papers` (614 PDFs of at most 20 pages "
        "from Debian's texlive-publishers-doc: sample articles, templates, short guides), `notes` (457 Markdown "
        "files: the documentation sets of bench/links_sets.py) or `notes-x10` (ten copies of those, 4,570 files)",
    )
    parser.add_argument("--runs", type=int, default=3, help="repetitions per tool, each from an empty index (default 3)")
    parser.add_argument("--linkly-only", action="store_true", help="skip Recoll")
    parser.add_argument(
        "--linkly-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra argument for `linkly index` (repeatable), e.g. --linkly-arg=--wait to include embeddings",
    )
    parser.add_argument("--no-ocr", action="store_true", help="turn OCR off in both tools (default: on in both)")
    parser.add_argument("--incremental", action="store_true", help="also time re-indexing after touching some files")
    parser.add_argument("--touch-percent", type=float, default=1.0, help="share of files --incremental touches (default 1)")
    parser.add_argument("--seed", type=int, default=1, help="random seed choosing the touched files (default 1)")
    parser.add_argument("--per-file", action="store_true", help="also time linkly's work per file and list the slowest")
    parser.add_argument("--top", type=int, default=10, help="how many slow files --per-file lists (default 10)")
    parser.add_argument("--sample-interval", type=float, default=0.05, help="memory sampling period in s (default 0.05)")
    parser.add_argument(
        "--wait-for-idle",
        type=float,
        default=0,
        metavar="SECONDS",
        help="before each run, wait up to SECONDS until other programs use under 0.3 CPUs (default 0: don't wait)",
    )
    parser.add_argument("--workdir", type=Path, help="where to make the temporary folder (default: the system's)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (copy, indexes, logs)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    return args


def main(argv: list[str]) -> int:
    if argv[:1] == ["__measure__"]:
        return _measure_main(argv[1:])
    args = parse_args(argv)
    status = 0
    for corpus_source in corpus_folders(args.corpus):
        if not corpus_source.is_dir():
            print(f"index_bench: corpus folder {corpus_source} not found (use --corpus PATH)", file=sys.stderr)
            return 2
        work = Path(tempfile.mkdtemp(prefix="linkly-bench-", dir=args.workdir))
        try:
            status = max(status, run_bench(args, corpus_source, work))
        finally:
            if args.keep:
                print(f"kept the temporary folder: {work}")
            else:
                shutil.rmtree(work, ignore_errors=True)
    return status


def corpus_folders(name: str) -> list[Path]:
    """The corpus folders `--corpus` names: `shared`, `home`, `both` (those two), `pdfs` (a folder of
    ordinary PDFs from the home-like corpus's packages), `papers` (short PDFs, most without bookmarks),
    `notes` (a folder of Markdown files), `notes-x10` (ten copies of it) or a path."""
    if name in ("notes", "notes-x10"):
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import links_sets

        return [links_sets.ensure_notes(links_sets.DEFAULT_CACHE, 10 if name == "notes-x10" else 1)]
    if name not in ("shared", "home", "both", "pdfs", "papers"):
        return [Path(name).expanduser().resolve()]
    folders = [DEFAULT_CORPUS.resolve()] if name in ("shared", "both") else []
    if name in ("home", "both", "pdfs", "papers"):
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import home_corpus

        ensure = {"pdfs": home_corpus.ensure_pdfs, "papers": home_corpus.ensure_papers}.get(name, home_corpus.ensure)
        folders.append(ensure())
    return folders


def run_bench(args: argparse.Namespace, corpus_source: Path, work: Path) -> int:
    ocr = not args.no_ocr
    linkly = Linkly(work, ocr, args.sample_interval, args.linkly_arg)
    problem = linkly.available()
    if problem:
        print(f"index_bench: {problem}", file=sys.stderr)
        return 2
    tools: list = [linkly]
    recoll_note = "skipped (--linkly-only)"
    if not args.linkly_only:
        recoll = Recoll(work, ocr, args.sample_interval)
        problem = recoll.available()
        if problem:
            recoll_note = f"SKIPPED: {problem}"
        else:
            tools.append(recoll)
            recoll_note = recoll.version()

    corpus = copy_corpus(corpus_source, work / "corpus")
    tesseract = tool_version(["tesseract", "--version"])
    print("== Setup ==")
    print(f"corpus:    {corpus_source} -> copied to {corpus.root}")
    print(
        f"           {len(corpus.files)} files, {corpus.total_bytes:,} bytes ({corpus.total_bytes / MB:.2f} MB, "
        f"MB = 10^6 bytes); left out: {', '.join(sorted(SKIPPED_TOP_DIRS))}/ and "
        f"{', '.join(sorted(SKIPPED_TOP_FILES))}"
    )
    print("           by type: " + ", ".join(f"{t} {c} ({b / MB:.2f} MB)" for t, (c, b) in sorted(corpus.by_type.items())))
    if corpus.mtimes_from_manifest:
        print(f"           mtimes: kept from the source, then {corpus.mtimes_from_manifest} set from MANIFEST.tsv")
    print(f"machine:   {os.cpu_count()} CPUs, Python {sys.version.split()[0]} ({sys.executable}); "
          f"load average at start {load_average()}")
    print(f"linkly:    {linkly.version()} ({linkly.binary}); LINKLY_DATA_DIR = a fresh folder per run, "
          f"LINKLY_CONFIG = {linkly.config.name} ({'exists: ocr = false' if linkly.config.exists() else 'absent: defaults'})")
    print(f"recoll:    {recoll_note}")
    both = "in both tools" if len(tools) == 2 else "in linkly"
    print(f"OCR:       {f'on {both}, languages ' + ocr_languages() if ocr else f'off {both} (--no-ocr)'}; "
          f"{tesseract}, OMP_THREAD_LIMIT=1")
    print(f"memory:    tree RSS/PSS = peak of the sum over the indexer's process tree, sampled every "
          f"{args.sample_interval:g} s (PSS every {PSS_EVERY_SAMPLES}th sample) from /proc; single-process RSS = getrusage(RUSAGE_CHILDREN).ru_maxrss "
          "of a measuring parent that reaps the whole tree (child subreaper)")
    print()
    print("What each tool does with the files:")
    print("  linkly: walks supported types (md, mdx, txt, html, pdf, docx, epub, pptx, images), extracts in "
          f"{min(os.cpu_count() or 1, 4)} worker processes (PyMuPDF, python-docx, ebooklib, python-pptx, "
          "selectolax, pulldown-cmark (pyromark); tesseract for images and image-only PDF pages), detects language, keywords, "
          "outlines, chunks; stores text lines in a SQLite catalog and chunks in a Tantivy index (index size = the "
          "whole data dir). `linkly index` writes the keyword index with every text layer first, then OCRs images "
          "and scanned pages in a second pass and returns when that is written too; vectors (embeddings) are "
          "computed later by `linkly watch`/`serve` or `index --wait`, so they are "
          + ("INCLUDED here (" + " ".join(linkly.extra_args) + ")" if "--wait" in linkly.extra_args else "not timed here"))
    if len(tools) == 2:
        print("  recoll: default settings plus: noaspell = 1 (no spelling dictionary), .mdx mapped to text/plain, "
              + ("pdfocr = 1 and images routed to rclocr.py (tesseract, same languages); " if ocr else "pdfocr = 0; ")
              + "pdftotext (poppler) for PDF, rclopxml.py (python3-lxml) for docx/pptx, rclepub.py for epub (one "
              "sub-document per chapter), built-in HTML and text; it also indexes folders as documents (not "
              "counted below). Filters run with /usr/bin/python3. Index size = xapiandb only (its OCR cache "
              "is reported separately)")
    print()

    results: dict[str, list[RunResult]] = {tool.name: [] for tool in tools}
    for run in range(1, args.runs + 1):
        order = tools if run % 2 else list(reversed(tools))  # alternate who goes first
        for tool in order:
            wait_for_idle(args.wait_for_idle)
            result = tool.run(corpus, run)
            results[tool.name].append(result)
            m = result.measurement
            print(
                f"  full run {run}/{args.runs} {tool.name:6}: {m.wall:7.2f} s wall, {m.cpu:7.2f} s CPU, "
                f"tree RSS {fmt(m.tree_rss / MB if m.tree_rss is not None else None, 0)} MB, "
                f"index {result.index_bytes / MB:.2f} MB, {fmt(result.documents, 0)} documents, "
                f"{len(result.failed)} failed; other programs used {fmt(m.other_cpu, 1)} CPU-s meanwhile",
                flush=True,
            )
    print()

    summaries = {name: summarise(runs, corpus) for name, runs in results.items()}
    main_table(summaries, args.runs, corpus)
    for name, summary in summaries.items():
        print(f"{name}: wall time min {summary['wall_min']:.2f} s, max {summary['wall_max']:.2f} s over {args.runs} run(s)")
    print()

    for name, runs in results.items():
        last = runs[-1]
        print(f"== {name}: per-file outcome (last run) ==")
        print(f"files given: {len(corpus.files)}; in the index: {fmt(last.documents, 0)}; failed: {len(last.failed)}; "
              f"indexed without text: {len(last.no_text)}; not in the index and not reported: {len(last.missing)}")
        if name == "recoll":
            status = last.extra.get("idxstatus", {})
            print(f"recoll's own counters (idxstatus.txt, folders included): totfiles {status.get('totfiles')}, "
                  f"fileerrors {status.get('fileerrors')}, dbtotdocs {status.get('dbtotdocs')}; "
                  f"{last.extra.get('sub_documents', '?')} sub-documents (epub chapters etc.), "
                  f"{last.extra.get('folders', '?')} folder entries; OCR cache "
                  f"{last.extra.get('ocrcache_bytes', 0) / MB:.2f} MB")
        varying = sorted({len(r.failed) for r in runs})
        if len(varying) > 1:
            print(f"note: the number of failed files varied between runs: {varying}")
        for relative, message in last.failed:
            print(f"  FAILED   {relative}: {message}")
        for relative, message in last.no_text:
            print(f"  NO TEXT  {relative}: {message}")
        for relative in last.missing:
            print(f"  MISSING  {relative}")
        for warning in last.warnings:
            print(f"  note: {warning}")
        print()

    print(f"load average after the full runs: {load_average()}")
    busy = [r for runs in results.values() for r in runs if noisy(r.measurement)]
    if busy:
        print(
            f"WARNING: in {len(busy)} of {sum(len(v) for v in results.values())} run(s) other programs used more "
            f"than {NOISY_SHARE:.0%} of the machine's CPU time meanwhile: wall times and ratios are unreliable; "
            "rerun on an idle machine (or with --wait-for-idle SECONDS)"
        )
    print()

    if args.incremental:
        run_incremental(args, corpus, tools, args.runs)
    if args.per_file:
        per_file_profile(corpus, ocr, args.top)
    if any(not r.measurement.subreaper for runs in results.values() for r in runs):
        print("note: could not become a child subreaper; CPU time and single-process RSS may miss orphaned workers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
