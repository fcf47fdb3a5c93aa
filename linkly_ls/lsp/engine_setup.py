"""Opening the index for the editor: the config file, the editor's settings and its workspace folders.

Each workspace folder becomes a library named after it (multi-root: one per
folder), unless a library already holds it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from linkly_ls.core.config import Config, ConfigError, default_data_dir, load_config
from linkly_ls.core.engine import Engine
from linkly_ls.lsp.settings import ServerSettings, apply_to_config, covered_by, library_name_for_folder

#: how long `shutdown` waits for the index to close (embedding may be mid-batch)
SHUTDOWN_WAIT_S = 3.0


def close_engine(engine: Engine) -> None:
    """Close once no index run holds the engine; a run still going ends with the process."""
    if engine.write_lock.acquire(timeout=SHUTDOWN_WAIT_S):
        try:
            engine.close()
        finally:
            engine.write_lock.release()


def open_engine(
    settings: ServerSettings, folders: list[Path], log: Callable[[str], None], warn: Callable[[str], None]
) -> Engine:
    """Open the index with the editor's libraries and workspace folders.

    A config file with a wrong value is ignored (the editor's settings and the defaults still
    serve), and `warn` tells the user so: a log line alone would go unseen."""
    try:
        engine = Engine(apply_to_config(settings, load_config()))
    except ConfigError as error:
        warn(f"linkly-ls: ignoring the config file: {error}")
        engine = Engine(apply_to_config(settings, Config(data_dir=load_data_dir_only())))
    add_workspace_folders(engine, folders, warn)  # a folder left out leaves its notes' links unresolved: said aloud
    return engine


def add_workspace_folders(engine: Engine, folders: list[Path], log: Callable[[str], None]) -> list[str]:
    """Register each workspace folder as a library named after it; returns the new libraries' names.

    A folder some library already holds is skipped, and so are the home and root folders
    (indexing a whole home directory is something to ask for explicitly).
    """
    libraries = engine.libraries()
    roots = {Path(root) for library in libraries for root in library.paths}
    taken = {library.name for library in libraries}
    added: list[str] = []
    for folder in folders:
        if covered_by(folder, roots) or not folder.is_dir():
            continue
        if folder == Path.home() or folder == Path(folder.anchor):
            log(
                f"linkly-ls: not indexing the workspace folder {folder}, your home or root folder: open the notes' "
                "own folder, or name it in the `libraries` setting; meanwhile their links read as not found"
            )
            continue
        name = library_name_for_folder(folder, taken)
        engine.add_library([folder], name, description=f"workspace folder {folder}", origin="workspace")
        taken.add(name)
        roots.add(folder)
        added.append(name)
    return added


def load_data_dir_only() -> Path:
    """The data dir when the config file is unreadable: LINKLY_DATA_DIR or the XDG default."""
    value = os.environ.get("LINKLY_DATA_DIR")
    return (Path(value).expanduser() if value else default_data_dir()).resolve()
