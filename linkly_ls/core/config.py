"""Configuration: where the index lives, which libraries exist, and the caps.

The config file is TOML (`LINKLY_CONFIG`, default `$XDG_CONFIG_HOME/linkly-ls/config.toml`):

    [index]
    data_dir = "~/.local/share/linkly-ls"   # LINKLY_DATA_DIR wins over this

    [limits]
    max_file_mb = 200
    max_line_chars = 4000
    max_lines = 2000000
    max_unzipped_mb = 500                # DOCX/PPTX/EPUB that would unpack to more are refused
    extract_timeout_s = 180              # per file; a worker still busy after this is killed
    max_ocr_pages = 500                  # scanned pages of one PDF read by OCR (its pass allows 20 s a page more)
    extract_memory_mb = 3072             # address-space cap of each extraction worker
    ocr = true
    ocr_languages = "eng+fra+deu+chi_sim"

    [[library]]
    name = "research"
    description = "Papers and reading notes"
    paths = ["~/papers", "~/notes/reading"]
    include = ["**/*.pdf", "**/*.md"]     # optional; default: every supported file
    exclude = ["**/drafts/**"]            # optional; .gitignore and .ignore are honoured too
    respect_gitignore = true              # false: files that .gitignore/.ignore name are indexed too
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import tomllib
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from platformdirs import user_config_dir, user_data_dir

from linkly_ls.core.errors import UsageError
from linkly_ls.core.extract.base import ExtractLimits

APP_NAME = "linkly-ls"
#: letters and digits of any script (`Bücher`, `笔记`), '.', '_', '-' and spaces, starting with a letter or digit
LIBRARY_NAME_PATTERN = re.compile(r"^[^\W_][\w. -]{0,63}$")
#: the file's tables; each checks its own keys where it is read ([mcp] and [[remote]] by their faces)
TABLES = frozenset({"index", "limits", "library", "embedding", "mcp", "remote"})
_INDEX_KEYS = frozenset({"data_dir"})
_LIBRARY_KEYS = frozenset({"name", "description", "paths", "path", "include", "exclude", "respect_gitignore"})
_LIMITS_KEYS = frozenset(
    {"max_file_mb", "max_line_chars", "max_lines", "max_unzipped_mb", "extract_timeout_s", "extract_memory_mb", "ocr", "ocr_languages",
     "max_ocr_pages"}
)


class ConfigError(UsageError):
    """The configuration file is missing a value or has a wrong one."""


@dataclass
class LibraryConfig:
    name: str
    paths: list[Path]
    description: str = ""
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    respect_gitignore: bool = True
    #: where it is defined, for messages: "config" (the config file) or "editor" (a language server's settings)
    origin: str = "config"

    def __post_init__(self) -> None:
        """A glob the walker cannot read is refused here, naming it: found while indexing, it stopped every
        library's run with a traceback."""
        from linkly_ls.core.indexing.walker import glob_problem

        for which in ("include", "exclude"):
            for pattern in getattr(self, which):
                problem = glob_problem(pattern)
                if problem:
                    raise ConfigError(f"library {self.name!r}: {which} pattern {pattern!r} is not a valid glob ({problem})")


@dataclass
class Config:
    data_dir: Path
    libraries: list[LibraryConfig] = field(default_factory=list)
    limits: ExtractLimits = field(default_factory=ExtractLimits)
    source: Path | None = None
    raw: dict = field(default_factory=dict)
    #: what named `data_dir`: "LINKLY_DATA_DIR", "data_dir in <file>", or "" (the default)
    data_dir_origin: str = ""
    #: the file LINKLY_CONFIG names when there is no such file (a typo reads as an empty config)
    missing_named_file: Path | None = None
    #: the file this config was read from, or would be (None: made in code, no file)
    path: Path | None = None

    def file_stamp(self) -> tuple[int, int] | None:
        """(mtime in ns, size) of the config file, None when there is none: what tells a process that runs
        for hours that the file was edited since it read it."""
        if self.path is None:
            return None
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def section(self, name: str) -> dict:
        """A top-level table of the config file, for the faces' own settings (e.g. [mcp])."""
        value = self.raw.get(name, {})
        return value if isinstance(value, dict) else {}


def default_config_path() -> Path:
    override = os.environ.get("LINKLY_CONFIG")
    if override:
        return Path(override).expanduser()
    return Path(user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def data_dir_override() -> Path | None:
    """The data dir LINKLY_DATA_DIR names, which wins over the config file's."""
    override = os.environ.get("LINKLY_DATA_DIR")
    return Path(override).expanduser() if override else None


def default_data_dir() -> Path:
    return Path(user_data_dir(APP_NAME, appauthor=False))


def readable_by_others(path: Path | None) -> bool:
    """Whether the file's group or other accounts may read it: a token written in it is theirs too."""
    if path is None:
        return False
    try:
        return bool(path.stat().st_mode & (stat.S_IRGRP | stat.S_IROTH))
    except OSError:
        return False


def validate_library_name(name: str) -> str:
    """The name in Unicode's composed form (NFC: `Bücher` typed on macOS is the same library), when it is valid."""
    name = unicodedata.normalize("NFC", name or "")
    if not LIBRARY_NAME_PATTERN.match(name):
        raise ConfigError(
            f"library name {name!r} is not valid: use 1-64 letters, digits, '.', '_', '-' or spaces, "
            "starting with a letter or digit"
        )
    return name


def refuse_unknown_keys(table: dict, known: Iterable[str], where: str, what: str = "key") -> None:
    """A key the file's table does not have is an error naming it (with the closest known one): a typo
    such as `[limits] orc = false` must not run on the default it meant to change."""
    known = sorted(known)
    unknown = sorted(str(key) for key in table if key not in known)
    if not unknown:
        return
    guesses = [match for key in unknown for match in difflib.get_close_matches(key, known, n=1)]
    hint = f" (did you mean {', '.join(guesses)}?)" if guesses else ""
    raise ConfigError(f"{where}: unknown {what}(s) {', '.join(unknown)}{hint}; known: {', '.join(known)}")


def load_config(path: Path | None = None) -> Config:
    """Read the config file (a missing file means defaults) and apply environment overrides."""
    path = path or default_config_path()
    raw: dict = {}
    if path.exists():
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise ConfigError(f"cannot parse config file {path}: {error}") from error
        except OSError as error:
            raise ConfigError(f"cannot read config file {path}: {error.strerror}") from error
    refuse_unknown_keys(raw, TABLES, str(path), "table")
    index_section = raw.get("index", {})
    if not isinstance(index_section, dict):
        raise ConfigError(f"{path}: [index] must be a table")
    refuse_unknown_keys(index_section, _INDEX_KEYS, f"{path}: [index]")
    from_file = index_section.get("data_dir")
    if from_file is not None and (not isinstance(from_file, str) or not from_file.strip()):
        raise ConfigError(f'{path}: [index] data_dir must be a folder path in quotes, e.g. data_dir = "~/linkly-index"')
    override = data_dir_override()
    data_dir = override or (_beside(path, from_file) if from_file else default_data_dir())
    libraries = _parse_libraries(raw.get("library", []), path)
    _refuse_unindexable_folders(libraries, data_dir.resolve(), path)
    origin = "LINKLY_DATA_DIR" if override else (f"data_dir in {path}" if from_file else "")
    named = os.environ.get("LINKLY_CONFIG")
    return Config(
        data_dir=data_dir.resolve(),
        libraries=libraries,
        limits=_parse_limits(raw.get("limits", {}), path),
        source=path if path.exists() else None,
        raw=raw,
        data_dir_origin=origin,
        missing_named_file=path if named and path == Path(named).expanduser() and not path.exists() else None,
        path=path,
    )


def _parse_libraries(entries: object, path: Path) -> list[LibraryConfig]:
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: [[library]] must be an array of tables")
    libraries: list[LibraryConfig] = []
    seen: set[str] = set()
    for entry in entries:
        if not isinstance(entry, dict):
            raise ConfigError(f"{path}: each [[library]] must be a table")
        name = validate_library_name(str(entry.get("name", "")))
        refuse_unknown_keys(entry, _LIBRARY_KEYS, f"{path}: library {name!r}")
        if name in seen:
            raise ConfigError(f"{path}: library {name!r} is defined twice")
        seen.add(name)
        paths = entry.get("paths") or ([entry["path"]] if "path" in entry else [])
        if isinstance(paths, str):  # a string is a list of its characters: "/tmp" would add "/" itself
            raise ConfigError(f'{path}: library {name!r}: paths must be a list: paths = ["{paths}"]')
        if not paths or not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise ConfigError(f"{path}: library {name!r} needs paths = [\"/some/folder\", ...]")
        if any(not p.strip() for p in paths):  # read from the file's folder, it would be that folder
            raise ConfigError(f"{path}: library {name!r} has an empty path (an unset variable?): give a folder")
        try:
            library = LibraryConfig(
                name=name,
                description=str(entry.get("description", "")),
                paths=[_beside(path, p) for p in paths],
                include=_string_list(entry.get("include", []), f"library {name!r} include", path),
                exclude=_string_list(entry.get("exclude", []), f"library {name!r} exclude", path),
                respect_gitignore=_boolean(entry.get("respect_gitignore", True), f"library {name!r} respect_gitignore", path),
            )
        except ConfigError as error:
            raise ConfigError(str(error) if str(error).startswith(f"{path}:") else f"{path}: {error}") from None
        libraries.append(library)
    return libraries


def _refuse_unindexable_folders(libraries: list[LibraryConfig], data_dir: Path, path: Path) -> None:
    """The checks `linkly index PATH` makes of a folder, for the file's libraries: a watching server now
    takes in a table saved while it runs, with no command in between to complain."""
    for library in libraries:
        for folder in library.paths:
            where = f"{path}: library {library.name!r}: {folder}"
            if folder == Path(folder.anchor):
                raise ConfigError(f"{where} is the whole file system: give the folders that hold your documents")
            if folder.is_relative_to(data_dir):
                raise ConfigError(f"{where} is in linkly's own data folder ({data_dir}), which holds the index, not documents")


def _beside(config_file: Path, value: str) -> Path:
    """A path of the config file, `~` expanded: a relative one is read from the file's folder, so the same
    file means the same folders whichever folder a command runs in."""
    return (config_file.expanduser().absolute().parent / Path(value).expanduser()).resolve()


def _boolean(value: object, what: str, path: Path) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{path}: {what} must be true or false")
    return value


def _string_list(value: object, what: str, path: Path) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: {what} must be a list of strings")
    return list(value)


def _parse_limits(section: object, path: Path) -> ExtractLimits:
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [limits] must be a table")
    refuse_unknown_keys(section, _LIMITS_KEYS, f"{path}: [limits]")
    for key, value in section.items():
        if key not in ("ocr", "ocr_languages") and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ConfigError(f"{path}: [limits] {key} is not a number: {value!r}")  # true would read as 1
    defaults = ExtractLimits()
    ocr = _boolean(section.get("ocr", defaults.ocr), "[limits] ocr", path)  # bool("no") would be True
    try:
        limits = ExtractLimits(
            max_file_bytes=int(float(section.get("max_file_mb", defaults.max_file_bytes / 2**20)) * 2**20),
            max_line_chars=int(section.get("max_line_chars", defaults.max_line_chars)),
            max_lines=int(section.get("max_lines", defaults.max_lines)),
            max_unzipped_bytes=int(
                float(section.get("max_unzipped_mb", defaults.max_unzipped_bytes / 2**20)) * 2**20
            ),
            ocr=ocr,
            ocr_languages=str(section.get("ocr_languages", defaults.ocr_languages)),
            extract_timeout_s=float(section.get("extract_timeout_s", defaults.extract_timeout_s)),
            extract_memory_mb=int(section.get("extract_memory_mb", defaults.extract_memory_mb)),
            max_ocr_pages=int(section.get("max_ocr_pages", defaults.max_ocr_pages)),
        )
    except (TypeError, ValueError, OverflowError) as error:
        raise ConfigError(f"{path}: a value in [limits] is not a number: {error}") from error
    for key, value in (
        ("max_file_mb", limits.max_file_bytes),
        ("max_line_chars", limits.max_line_chars),
        ("max_lines", limits.max_lines),
        ("max_unzipped_mb", limits.max_unzipped_bytes),
        ("extract_timeout_s", limits.extract_timeout_s),
        ("extract_memory_mb", limits.extract_memory_mb),
        ("max_ocr_pages", limits.max_ocr_pages),
    ):
        if value <= 0:
            raise ConfigError(f"{path}: [limits] {key} must be greater than 0")
    return limits
