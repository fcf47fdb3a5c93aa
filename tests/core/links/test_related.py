"""`find_related`: a smaller limit gives the first results of a larger one."""

from __future__ import annotations

from pathlib import Path

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.links.related import find_related
from linkly_ls.core.store.records import make_doc_id


def test_a_smaller_limit_gives_the_first_results_of_a_larger_one(tmp_path: Path):
    """Keyword candidates are scored again by the share of key terms they hold: gathered for `limit`
    alone, the note holding every term (below notes that repeat one) was left out at small limits."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "source.md").write_text("# Heron osprey kestrel plover\n\nHeron, osprey, kestrel and plover.\n", encoding="utf-8")
    padding = " ".join(f"filler{number}" for number in range(300))
    (root / "every.md").write_text(f"# Shore notes\n\nHeron, osprey, kestrel, plover. {padding}\n", encoding="utf-8")
    for number in range(24):  # one key term, repeated: a higher BM25 than the long note that holds every term once
        term = ["heron", "osprey", "kestrel", "plover"][number % 4]
        (root / f"decoy-{number:02d}.md").write_text(f"# Decoy {number}\n\n" + f"{term} " * 30 + "\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        record = engine.catalog.get(make_doc_id(str(root / "source.md")))
        ranked = {limit: [document.doc_id for document in find_related(engine, record, None, limit, None).documents] for limit in (1, 3, 10)}
        assert ranked[10][0] == make_doc_id(str(root / "every.md"))
        assert ranked[1] == ranked[10][:1] and ranked[3] == ranked[10][:3]
    finally:
        engine.close()
