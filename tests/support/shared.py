"""The shared test data: real documents and labelled collections kept outside the repository.

It is a folder `shared/` with the parts `corpus/` (real documents of every format, with a
MANIFEST.tsv), `ir/` (retrieval collections with relevance labels) and `spec/` (the tool
contract). It sits beside the repository (`../shared`), where the benchmarks in bench/ look for
it too. A plain clone has none of it: the tests that need it are then skipped, all with the same
reason, unless LINKLY_REQUIRE_SHARED=1 makes that a failure.
"""

from __future__ import annotations

from pathlib import Path

from .availability import REQUIRE_SHARED, required, unavailable

REPO = Path(__file__).resolve().parents[2]
#: each part of the shared data, with a file that shows the part is really there
PARTS = {"corpus": "MANIFEST.tsv", "ir": "README.md", "spec": "linkly-tools.en.md"}


def shared_root() -> Path | None:
    """The shared folder beside the repository, or None."""
    beside = REPO.parent / "shared"
    return beside if beside.is_dir() else None


def find_shared(part: str) -> Path | None:
    """The folder of one part (`corpus`, `ir`, `spec`), or None when it is missing."""
    if part not in PARTS:
        raise ValueError(f"unknown part of the shared test data: {part!r} (known: {', '.join(PARTS)})")
    root = shared_root()
    if root is None or not (root / part / PARTS[part]).is_file():
        return None
    return root / part


def missing_reason(part: str) -> str:
    """Why a test that needs `part` cannot run: the same words for every such test."""
    root = shared_root()
    if root is None:
        return (
            f"needs the shared test data, which is not part of the repository: no {REPO.parent / 'shared'} "
            "(put or link the shared/ folder beside the repository to run these tests)"
        )
    return f"needs the shared test data's {part}/ ({part}/{PARTS[part]}), which is missing in {root}"


def shared_path(part: str) -> Path:
    """The folder of `part`; skips the running test without it (fails with LINKLY_REQUIRE_SHARED=1)."""
    path = find_shared(part)
    if path is None:
        unavailable(missing_reason(part), REQUIRE_SHARED)
    return path


def describe() -> str:
    """One line for the test report's header: where the shared data is, and what happens without it."""
    root = shared_root()
    mode = "missing data fails" if required(REQUIRE_SHARED) else "tests that need missing data are skipped"
    if root is None:
        return f"shared test data: not found ({mode})"
    present = [part for part in PARTS if find_shared(part) is not None]
    return f"shared test data: {root} ({', '.join(present) or 'no complete part'}; {mode})"
