"""Ranking while the model refines: first-pass vectors place every document, refined ones reorder among themselves.

The model refines a large library for hours, newest documents first, so most of that time some
documents have the model's vectors and the rest only first-pass ones. The two kinds live in
different spaces: a cosine of one kind says nothing about a cosine of the other. Scaling each kind
among its own candidates let the closest of a few refined documents score 1 on the vector side
however far it was from the query, and weighing the kinds apart needed a rule of its own.

Instead every document keeps its first-pass vectors until the model has refined them all
(`indexing/first_pass.py`), and a search ranks in two steps:

1. every candidate as if nothing were refined: its keywords and its first-pass vectors, with the
   first pass's weight, smoothed over first-pass vectors (`placing`);
2. the refined candidates among themselves as in a fully refined library: their keywords (scaled by
   the best of all candidates, as there) and the model's vectors (`refined_order`);

then each place a refined document holds in the first ranking goes to the refined documents in the
order of the second (`slotted`). With nothing refined this is the first-pass ranking, with
everything refined the refined one, and in between refined vectors only ever reorder documents
among the places that first-pass evidence gave them: no weight or share is tuned for the mixture.
Measured on six collections stopped at three points of their refining (`bench/mixed_state.py`),
this ranks at 1.055 x keyword-only on average against 1.044 for the weights it replaced, and below
first-pass vectors alone at 1 point of 16 instead of 7.

A refined document without current first-pass vectors (changed, then refined before the first pass
caught up) is placed by its keywords and reordered with the other refined ones. When no refined
candidate has first-pass vectors (a document new to a fully refined library, whose first-pass index
was emptied, or documents refined by an earlier version), the roles swap: the refined vectors place
every document (one without them counting its keywords on the vector side, as before there was a
first pass), and the documents with only first-pass vectors are reordered among their places.
Vector mode has no keywords to place documents by: there each document is ranked by its refined
vectors when it has them, else by its first-pass ones, each kind scaled among its own candidates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from linkly_ls.core.search.ranked import RankedDocument


def slotted(placing: list[RankedDocument], reordered: list[RankedDocument]) -> list[RankedDocument]:
    """`placing` (every candidate, best first) with the places its documents of `reordered` hold given
    to them in the order of `reordered` (best first), each taking the score of the place it gets. One
    that its own side reached by no passage keeps the passage its place was earned with.

    A document of `reordered` that `placing` lacks goes after the others, in its order."""
    moving = {document.doc_id for document in reordered}
    waiting = iter(reordered)
    ranked: list[RankedDocument] = []
    for document in placing:
        if document.doc_id in moving:
            taken = next(waiting)
            taken.fused_score = document.fused_score
            if taken.keyword_passage is None and taken.vector_passage is None:
                taken.vector_passage = document.keyword_passage or document.vector_passage
            document = taken
        ranked.append(document)
    lowest = ranked[-1].fused_score if ranked else 0.0
    for document in waiting:
        document.fused_score = min(document.fused_score, lowest)
        ranked.append(document)
    return ranked
