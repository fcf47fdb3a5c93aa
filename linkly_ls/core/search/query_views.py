"""The query seen whole and sentence by sentence on the vector side, and its embeddings (`embed_query`,
`embed_queries`: recent queries' vectors are kept, per model and graph).

A small bi-encoder squeezes a request of several sentences into one vector,
a blur of its topics: a passage that answers one of them closely is no nearer
to the blur than one that touches all of them a little. So a query of several
sentences is embedded as several views, the whole query and each sentence; a
chunk's similarity is its best view's (`VectorIndex.search` takes the views
as one matrix: one batch search), and a document's, as before, its best
chunk's. A query of one sentence has one view and ranks exactly as before; no
length threshold decides when it applies.

A piece of fewer than SENTENCE_WORDS words is not a sentence but a cut at an
abbreviation ("Dr. Dean Ornish", "Veggies vs. Cancer", "U.S . policy", "e.g.
group theory."): it stays with the sentence after it (the last one with the
sentence before), so "Cancer" alone never becomes a view that every passage
about cancer matches.

Measured on the IR collections (README, "Search quality"): LISA's hybrid
0.975 to 1.03 x bm25s, the long-request collection made from Cranfield's
source papers 1.09 to 1.10, the others within 0.003.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from linkly_ls.core.embedding.settings import TextEmbedder

#: embed a multi-sentence query by its sentences too (False: the whole query only)
SENTENCE_VIEWS = True
#: most sentences embedded (the first ones): each costs a model call of a few ms
MAX_SENTENCES = 8
#: fewest words of a sentence; a shorter piece joins its neighbour
SENTENCE_WORDS = 3

#: query embeddings kept for repeated queries (an assistant retrying with a filter, an editor asking again)
QUERY_VECTORS_KEPT = 256

_query_vectors: OrderedDict[tuple[str, str, str], np.ndarray] = OrderedDict()
_query_vectors_lock = threading.Lock()
_SENTENCE_END = re.compile(r"(?<=[.?!;])\s+")


def sentences(query: str) -> list[str]:
    """The query's sentences (cut after . ? ! or ;, each of at least SENTENCE_WORDS words), when it
    has at least two; else none."""
    found: list[str] = []
    pending = ""
    for part in _SENTENCE_END.split(query):
        pending = f"{pending} {part.strip()}".strip()
        if len(pending.split()) >= SENTENCE_WORDS:
            found.append(pending)
            pending = ""
    if pending and found:
        found[-1] = f"{found[-1]} {pending}"
    return found[:MAX_SENTENCES] if len(found) > 1 else []


def view_vectors(
    query: str, query_vector: np.ndarray, embed_many: Callable[[list[str]], np.ndarray]
) -> np.ndarray:
    """A matrix of the query's views: its whole vector first, then each sentence's (one row if off or one sentence).

    `embed_many` embeds the sentences in one model call.
    """
    import numpy as np  # loaded with the vectors, not with every open index

    parts = sentences(query) if SENTENCE_VIEWS else []
    whole = np.asarray(query_vector, dtype=np.float32)[None, :]
    if not parts:
        return whole
    return np.vstack([whole, np.asarray(embed_many(parts), dtype=np.float32)])


def embed_query(embedder: TextEmbedder, query: str) -> np.ndarray:
    """The query's vector, from a small cache of recent queries (embedding one costs about 10 ms)."""
    return _cached_query_vectors(embedder, [query], lambda texts: [embedder.embed_query(texts[0])])[0]


def embed_queries(embedder: TextEmbedder, texts: list[str]) -> np.ndarray:
    """`embed_query` of several texts: those not in the cache embedded in one model call."""
    import numpy as np  # loaded with the vectors, not with every open index

    return np.vstack(_cached_query_vectors(embedder, texts, embedder.embed_queries))


def _cached_query_vectors(
    embedder: TextEmbedder, texts: list[str], embed_missing: Callable[[list[str]], Sequence[np.ndarray]]
) -> list[np.ndarray]:
    """Each text's vector: from the recent-queries cache (least recently used dropped first), the
    others computed by one `embed_missing` call and kept. Kept per model and per graph of the model
    (`OnnxEmbedder.graph`: the bundled model reads queries with the package's graph until its rewrite
    is written); the graph is read before embedding, as it only ever turns final."""
    import numpy as np  # loaded with the vectors, not with every open index

    graph = getattr(embedder, "graph", "")
    found: dict[str, np.ndarray] = {}
    with _query_vectors_lock:
        for text in texts:
            key = (embedder.model_id, graph, text)
            vector = _query_vectors.get(key)
            if vector is not None:
                _query_vectors.move_to_end(key)
                found[text] = vector
    missing = [text for text in dict.fromkeys(texts) if text not in found]
    if missing:
        vectors = [np.asarray(vector, dtype=np.float32) for vector in embed_missing(missing)]
        with _query_vectors_lock:
            for text, vector in zip(missing, vectors, strict=True):
                vector.flags.writeable = False
                found[text] = _query_vectors[(embedder.model_id, graph, text)] = vector
            while len(_query_vectors) > QUERY_VECTORS_KEPT:
                _query_vectors.popitem(last=False)
    return [found[text] for text in texts]
