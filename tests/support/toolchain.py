"""Outside tools the editor and Inspector tests use: found on PATH, or installed at a pinned
version from a package registry into a cache folder named after that version.

The cache is `$LINKLY_TEST_CACHE`, by default `~/.cache/linkly-test/`. A folder there is only
used once its install finished (a `.complete` stamp holding the lock file's digest), so an
interrupted or outdated install is redone rather than trusted. A tool that cannot be found or
installed skips the test, or fails it with LINKLY_REQUIRE_EDITORS=1.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from .availability import REQUIRE_EDITORS, required, unavailable

CACHE_VARIABLE = "LINKLY_TEST_CACHE"
COMPLETE = ".complete"


def cache_root() -> Path:
    named = os.environ.get(CACHE_VARIABLE, "").strip()
    return Path(named).expanduser() if named else Path.home() / ".cache" / "linkly-test"


def tool_unavailable(reason: str) -> NoReturn:
    """Skip the running test because a tool is missing (fail it with LINKLY_REQUIRE_EDITORS=1)."""
    unavailable(reason, REQUIRE_EDITORS)


def command(name: str, purpose: str) -> str:
    """The path of `name` on PATH; without it the test is skipped (or failed), naming `purpose`."""
    path = shutil.which(name)
    if path is None:
        tool_unavailable(f"`{name}` is not on PATH: {purpose}")
    return path


@dataclass(frozen=True)
class NpmPin:
    """An npm package at an exact version, with the lock file that pins its dependencies too.

    `manifest_dir` holds package.json (the package as its only dependency, an exact version)
    and package-lock.json; `npm ci` installs exactly what the lock names.
    """

    name: str
    manifest_dir: Path

    @property
    def version(self) -> str:
        manifest = json.loads((self.manifest_dir / "package.json").read_text(encoding="utf-8"))
        return manifest["dependencies"][self.name]

    @property
    def lock_digest(self) -> str:
        return hashlib.sha256((self.manifest_dir / "package-lock.json").read_bytes()).hexdigest()

    def cache_dir(self, short_name: str) -> Path:
        return cache_root() / f"{short_name}-{self.version}"


def npm_install(pin: NpmPin, short_name: str, timeout: float = 900) -> Path:
    """Install `pin` once into `<cache>/<short_name>-<version>/` with `npm ci`; returns that folder.

    The install happens in a temporary folder beside the target and is renamed into place only
    when it succeeded.
    """
    target = pin.cache_dir(short_name)
    if installed_from(target, pin):
        return target
    npm = command("npm", f"{pin.name}@{pin.version} is installed with npm (install Node.js and npm)")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(pin.manifest_dir / name, work / name)
        try:
            installed = subprocess.run(
                [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--no-update-notifier"],
                cwd=work, capture_output=True, text=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            tool_unavailable(f"npm ci of {pin.name}@{pin.version} did not finish in {timeout:.0f} s")
        if installed.returncode != 0:
            tool_unavailable(f"npm could not install {pin.name}@{pin.version}: {npm_error(installed.stderr)}")
        (work / COMPLETE).write_text(pin.lock_digest + "\n", encoding="utf-8")
        work.chmod(0o755)
        if not installed_from(target, pin):  # another test run may have finished the same install
            shutil.rmtree(target, ignore_errors=True)
            try:
                work.rename(target)
            except OSError:
                if not installed_from(target, pin):
                    raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def installed_from(target: Path, pin: NpmPin) -> bool:
    stamp = target / COMPLETE
    return stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == pin.lock_digest


def npm_error(stderr: str) -> str:
    """npm's own error lines, without the pointer to its log file."""
    lines = [line for line in stderr.splitlines() if line.startswith("npm error") and "complete log" not in line]
    return "; ".join(lines[:3]) or (stderr.strip().splitlines() or ["no output"])[-1]


def describe() -> str:
    """One line for the test report's header."""
    mode = "a missing tool fails" if required(REQUIRE_EDITORS) else "a missing tool skips its tests"
    return f"test tool cache: {cache_root()} ({mode})"
