"""A fresh catalog in a temporary folder, and documents to put in it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from linkly_ls.core.document import OutlineNode
from linkly_ls.core.store.catalog import Catalog, DocumentRecord, make_doc_id


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    yield catalog
    catalog.close()


@pytest.fixture
def make_record() -> Callable[..., DocumentRecord]:
    """make_record(path, **fields) -> a record of a one-line Markdown document at that path."""

    def build(path: str, **fields: object) -> DocumentRecord:
        values: dict[str, object] = dict(
            doc_id=make_doc_id(path), library="lib", path=path, doc_type="md", title=Path(path).stem, size=10,
            mtime_ns=1_700_000_000 * 10**9, content_hash="h1", word_count=5, total_lines=1, has_outline=True,
            language="en", keywords=["alpha", "beta"], outline=[OutlineNode(title="Top", level=1, start_line=1, end_line=1, id="top")],
            page_starts=[], warnings=[], text_missing_reason=None, indexed_at=1.0,
        )
        values.update(fields)
        return DocumentRecord(**values)  # type: ignore[arg-type]

    return build
