"""The server's settings: from `initializationOptions` and `workspace/configuration` (section `linkly`).

    {
      "libraries": [{"name": "papers", "paths": ["~/papers"], "description": "",
                     "include": ["**/*.pdf"], "exclude": [], "respectGitignore": true}],
      "dataDir": "~/.local/share/linkly-ls",
      "embeddingModel": "…",
      "mcp": {"enabled": true, "port": 60606}
    }

Both sources may hold the object itself or wrap it as `{"linkly": {...}}`;
`workspace/configuration` wins key by key. A malformed entry is skipped with
a warning instead of stopping the server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linkly_ls.core.config import Config, ConfigError, LibraryConfig, refuse_unknown_keys, validate_library_name

SECTION = "linkly"


@dataclass
class McpSettings:
    enabled: bool = True
    #: None: the config file's `[mcp] port` (default 60606); 0: any free port
    port: int | None = None


@dataclass
class ServerSettings:
    libraries: list[LibraryConfig] = field(default_factory=list)
    data_dir: Path | None = None
    embedding_model: str | None = None
    mcp: McpSettings = field(default_factory=McpSettings)
    #: problems found while reading the settings, for the client to show
    warnings: list[str] = field(default_factory=list)


def plain(value: Any) -> Any:
    """pygls hands custom params over as namedtuples; turn them (recursively) into dicts and lists."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def _section(source: Any) -> dict[str, Any]:
    source = plain(source)
    if not isinstance(source, dict):
        return {}
    inner = source.get(SECTION)
    return inner if isinstance(inner, dict) else source


def parse_settings(*sources: Any, base: Path | None = None) -> ServerSettings:
    """Merge the sources in order (later wins key by key) and parse them. A library's relative path is
    read from `base` (the first workspace folder: a workspace's own settings name its folders so)."""
    merged: dict[str, Any] = {}
    for source in sources:
        merged.update({key: value for key, value in _section(source).items() if value is not None})
    settings = ServerSettings()
    settings.libraries = _libraries(merged.get("libraries", []), settings.warnings, base)
    data_dir = merged.get("dataDir")
    if isinstance(data_dir, str) and data_dir.strip():
        settings.data_dir = Path(data_dir).expanduser().resolve()
    model = merged.get("embeddingModel")
    if isinstance(model, str) and model.strip():
        settings.embedding_model = model.strip()
    settings.mcp = _mcp(merged.get("mcp", {}), settings.warnings)
    return settings


def _libraries(entries: Any, warnings: list[str], base: Path | None) -> list[LibraryConfig]:
    if not isinstance(entries, list):
        warnings.append("linkly.libraries must be a list of {name, paths, ...}; ignored")
        return []
    by_name: dict[str, LibraryConfig] = {}
    for entry in entries:
        try:
            library = _library(entry, base)
        except ConfigError as error:
            warnings.append(f"linkly.libraries: {error}; this library is skipped")
            continue
        if library.name in by_name:
            warnings.append(f"linkly.libraries names {library.name!r} more than once; the last one is used")
        by_name[library.name] = library
        missing = [str(path) for path in library.paths if not path.is_dir()]
        if missing:
            warnings.append(
                f"linkly.libraries: library {library.name!r}: no folder {', '.join(missing)} (yet); it is indexed "
                "once there is"
            )
    return list(by_name.values())


#: what a library of the `libraries` setting may hold (`respect_gitignore` as the config file spells it)
LIBRARY_KEYS = ("name", "paths", "description", "include", "exclude", "respectGitignore", "respect_gitignore")


def _library(entry: Any, base: Path | None = None) -> LibraryConfig:
    if not isinstance(entry, dict):
        raise ConfigError(f"each library must be an object, got {entry!r}")
    name = validate_library_name(str(entry.get("name", "")))
    refuse_unknown_keys(entry, LIBRARY_KEYS, f"library {name!r}")
    paths = entry.get("paths")
    if isinstance(paths, str):
        paths = [paths]
    if not paths or not all(isinstance(path, str) for path in paths):
        raise ConfigError(f'library {name!r} needs paths: ["/some/folder", ...]')

    def strings(key: str) -> list[str]:
        value = entry.get(key) or []
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"library {name!r}: {key} must be a list of glob strings")
        return value

    respect = entry.get("respectGitignore", entry.get("respect_gitignore", True))
    if not isinstance(respect, bool):
        raise ConfigError(f"library {name!r}: respectGitignore must be true or false")
    return LibraryConfig(
        name=name,
        paths=[_folder(name, path, base) for path in paths],
        description=str(entry.get("description") or ""),
        include=strings("include"),
        exclude=strings("exclude"),
        respect_gitignore=respect,
        origin="editor",
    )


def _folder(library: str, path: str, base: Path | None) -> Path:
    folder = Path(path).expanduser()
    if not folder.is_absolute():
        if base is None:
            raise ConfigError(
                f"library {library!r}: the path {path!r} is relative, and there is no workspace folder to read it "
                "from; give an absolute path"
            )
        folder = base / folder
    return folder.resolve()


def _mcp(value: Any, warnings: list[str]) -> McpSettings:
    if not isinstance(value, dict):
        warnings.append("linkly.mcp must be an object {enabled, port}; defaults used")
        return McpSettings()
    settings = McpSettings()
    if isinstance(value.get("enabled"), bool):
        settings.enabled = value["enabled"]
    port = value.get("port")
    if isinstance(port, int) and not isinstance(port, bool):
        if 0 <= port <= 65535:
            settings.port = port
        else:
            warnings.append(f"linkly.mcp.port {port} is not a TCP port; using the default")
    return settings


def apply_to_config(settings: ServerSettings, config: Config) -> Config:
    """Fold the editor's settings into the config file's: editor libraries replace same-named ones."""
    if settings.data_dir is not None:
        config.data_dir = settings.data_dir
    names = {library.name for library in settings.libraries}
    config.libraries = [library for library in config.libraries if library.name not in names] + settings.libraries
    if settings.embedding_model:
        embedding = config.raw.setdefault("embedding", {})
        if isinstance(embedding, dict):
            embedding["model"] = settings.embedding_model
    return config


def library_name_for_folder(path: Path, taken: set[str]) -> str:
    """A valid, unused library name for a workspace folder, after the folder's own name."""
    cleaned = re.sub(r"[^A-Za-z0-9._ -]+", "-", path.name).strip("-. ")[:60] or "workspace"
    name = cleaned
    counter = 2
    while name in taken:
        name = f"{cleaned}-{counter}"
        counter += 1
    return validate_library_name(name)


def covered_by(folder: Path, roots: set[Path]) -> bool:
    """True when a library already holds this folder: adding it again would split ownership of
    its files, and changes would be routed to the newer, nested library that does not own them."""
    return any(folder == root or folder.is_relative_to(root) for root in roots)
