"""Libraries inside libraries: a file belongs to the innermost library whose folder holds it.

A config file or an editor's settings may name a folder inside another library's (`notes/` and
`notes/rust/`). Which library held a file used to depend on which one indexed it first: a library
added later inside another found its folder's files taken, got only the files created after, and
one folder ended up split between the two (or, the inner one empty for good). The rule now is the
folders' own: the outer library leaves the inner library's folders to it (its files there are
counted as `in another library`), and the inner library takes over the files the outer one holds
there, whatever the order of their runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from linkly_ls.core.indexing.reachability import is_under
from linkly_ls.core.store.catalog import Catalog, LibraryRecord


@dataclass(frozen=True)
class Nesting:
    """One library's roots beside the others' of the catalog."""

    own_roots: tuple[str, ...]
    #: roots of other libraries inside one of this library's own
    inner_roots: tuple[str, ...]
    roots_by_library: dict[str, tuple[str, ...]]

    @classmethod
    def of(cls, catalog: Catalog, library: LibraryRecord) -> Nesting:
        roots = {other.name: tuple(other.paths) for other in catalog.libraries()}
        roots[library.name] = tuple(library.paths)
        own = tuple(library.paths)
        inner = tuple(
            root
            for name, theirs in roots.items()
            if name != library.name
            for root in theirs
            if any(is_under(root, mine) and root != mine for mine in own)
        )
        return cls(own, inner, roots)

    def in_inner_library(self, path: str) -> bool:
        """Whether an inner library's folder holds `path`: that library's file, not this one's."""
        return any(is_under(path, root) for root in self.inner_roots)

    def takes_over(self, path: str, holder: str) -> bool:
        """Whether this library holds `path` more closely than the library `holder` that indexed it."""
        return _depth(path, self.own_roots) > _depth(path, self.roots_by_library.get(holder, ()))


def _depth(path: str, roots: tuple[str, ...]) -> int:
    """The length of the deepest of `roots` holding `path`; -1 for none."""
    return max((len(root.rstrip("/")) for root in roots if is_under(path, root)), default=-1)
