"""What writing one document into a large first-pass index costs (a catch-up between refining rounds).

Usage:
    python bench/first_pass_catch_up.py --data-dir DIR [--vectors 200000]

`DIR` is a linkly data dir with a keyword index (e.g. a collection indexed with
`linkly index`); its catalog and keyword index are copied to a temporary folder,
never changed. The first pass's index is filled with `--vectors` random unit
vectors spread over the catalog's documents (as a first pass over a library of
that many chunks leaves it; random vectors cost the index what real ones do),
saved and handed back to reading, one document's vectors are removed, and then
the first pass runs as a catch-up between refining rounds does: it reads the
whole index in, adds that document and saves the index again. Prints the
catch-up's wall and CPU time and the process's RSS before it and its peak.
Filling takes about 2 ms a vector on one core (200,000: about 7 minutes).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from embedding_memory import fill, rss_mb

from linkly_ls.core.config import Config
from linkly_ls.core.engine import Engine
from linkly_ls.core.store.vector_rows import forget_all_vectors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="a linkly data dir with a keyword index")
    parser.add_argument("--vectors", type=int, default=200_000)
    args = parser.parse_args()
    if not (args.data_dir / "catalog.sqlite3").is_file() or not (args.data_dir / "keyword").is_dir():
        print(f"error: {args.data_dir} is not a linkly data dir with a keyword index", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="first-pass-catch-up-") as temporary:
        data_dir = Path(temporary)
        shutil.copy(args.data_dir / "catalog.sqlite3", data_dir / "catalog.sqlite3")
        shutil.copytree(args.data_dir / "keyword", data_dir / "keyword")
        engine = Engine(Config(data_dir=data_dir))
        try:
            forget_all_vectors(engine.catalog)
            table = engine.vectors.provider.first_pass()
            index = engine.vectors.index_for(table, writer=True) if table is not None else None
            if index is None:
                print("error: no first-pass table, or the index is another process's to write", file=sys.stderr)
                return 1
            started = time.monotonic()
            fill(engine, index, args.vectors)
            index.checkpoint()
            print(f"first-pass index: {len(index)} vectors, filled and saved in {time.monotonic() - started:.0f} s")
            index.remove_documents([engine.catalog.all_documents()[0].doc_id])
            index.checkpoint()
            index.stop_writing()
            before = rss_mb()
            wall, cpu = time.monotonic(), time.process_time()
            added = engine.vectors.first_pass.run([])
            wall, cpu = time.monotonic() - wall, time.process_time() - cpu
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"catch-up of {added} document: {wall:.2f} s wall, {cpu:.2f} CPU-s; RSS before {before:.0f} MB, peak {peak:.0f} MB")
        finally:
            engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
