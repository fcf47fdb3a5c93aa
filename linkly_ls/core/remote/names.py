"""How remote things are named here: libraries, document ids and paths.

- a library value: a plain name or `local://name` (one local library), `local://` (every local one),
  `cloud:///` (every remote library), `cloud:///<remote>` (one remote's), `cloud:///<remote>/<library>`;
- a remote document id: `<remote>:<12 hex>` (what a remote's search hands out here);
- a remote path: `cloud:///<remote>/<absolute path there>`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from linkly_ls.core.config import LIBRARY_NAME_PATTERN
from linkly_ls.core.errors import ArgumentError

CLOUD = "cloud://"
LOCAL = "local://"
REMOTE_DOC_ID = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_-]{0,31}):([0-9a-fA-F]{12})$")


@dataclass
class Scope:
    """Which servers a call reaches: the local index (all of it, or one library) and some remotes."""

    local: bool = True
    #: the local library asked for (a plain name or `local://name`), None for every local library
    local_library: str | None = None
    #: remote name -> the library there (None: every library of that remote)
    remotes: dict[str, str | None] = field(default_factory=dict)

    @property
    def local_only(self) -> bool:
        return not self.remotes


def is_cloud(value: str | None) -> bool:
    return isinstance(value, str) and value.startswith("cloud:")


def parse_scope(library: str | None, remote_names: Iterable[str], include_remotes: bool = False) -> Scope:
    """The servers a `library` value names; `include_remotes` (`--remote`) widens "no library" to every remote."""
    names = list(remote_names)
    if library is None or library == "":
        return Scope(remotes={name: None for name in names} if include_remotes else {})
    if library in (LOCAL, "local:///"):
        return Scope()
    if not is_cloud(library):
        return Scope(local_library=library)
    if not names:
        raise ArgumentError(
            f"`library` {library!r} names a remote library, but no remote is configured; add a [[remote]] "
            "table to the config file (see the README's \"Several machines\")"
        )
    rest = library[len("cloud:") :].lstrip("/")
    if not rest:
        return Scope(local=False, remotes={name: None for name in names})
    remote, _, remote_library = rest.partition("/")
    if remote not in names:
        raise ArgumentError(f"`library` {library!r}: there is no remote {remote!r}; remotes: {', '.join(names)}")
    remote_library = remote_library.strip("/")
    if remote_library and not LIBRARY_NAME_PATTERN.match(remote_library):
        # `cloud:///desktop/cloud:///nas/...` made the desktop search its own remotes for the caller, in loops
        raise ArgumentError(
            f"`library` {library!r}: after `cloud:///{remote}/` comes the name of one of its libraries "
            f"(`list_libraries` with `remote: true` lists them); a remote's own remotes are not reached through it"
        )
    return Scope(local=False, remotes={remote: remote_library or None})


def split_doc_id(value: object) -> tuple[str | None, object]:
    """(remote, its id) for `<remote>:<12 hex>`, read as leniently as a local id (a pasted id's spaces and
    line end, hex in capitals); (None, value) for anything else (checked as a local id)."""
    if isinstance(value, str):
        match = REMOTE_DOC_ID.fullmatch(value.strip())
        if match:
            return match.group(1), match.group(2).lower()
    return None, value


def remote_doc_id(remote: str, doc_id: str) -> str:
    return f"{remote}:{doc_id}"


def remote_library(remote: str, library: str) -> str:
    return f"{CLOUD}/{remote}/{library}"


def remote_path(remote: str, path: str) -> str:
    return f"{CLOUD}/{remote}/{path.lstrip('/')}"
