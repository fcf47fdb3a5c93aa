"""What a search says of the query's words that no document holds, with the spellings the index knows."""

from __future__ import annotations

from functools import partial

from linkly_ls.core.engine import Engine
from linkly_ls.core.search.calibration import words_nowhere
from linkly_ls.core.search.spelling import HeldTerms, suggestion


def misspelt_notes(engine: Engine, searcher: HeldTerms, words: str, missing_words: list[str] | None) -> list[str]:
    """A note naming the words of the query that no document holds, with the spelling the index knows one
    slip away (`borowing`: `borrowing`?); when none is found, the guidance says so, and the note then
    only offers spellings."""
    nowhere = words_nowhere(searcher, words) if missing_words is None else missing_words
    if not nowhere:
        return []
    fixes = {word: fixed for word in nowhere[:5] if (fixed := suggestion(searcher, word, partial(_passage_text, engine))) is not None}
    offered = "Did you mean " + ", ".join(f"'{fixed}' for '{word}'" for word, fixed in fixes.items()) + "?"
    if missing_words is not None:
        return [f"{offered} The index holds those spellings."] if fixes else []
    named = ", ".join(f"'{word}'" for word in nowhere[:5])
    rest = (
        f"{offered} Else the documents may not cover it (say it in other words)."
        if fixes
        else "Check the spelling, or take it that the documents do not cover it (or say it in other words)."
    )
    return [f"No indexed document contains {named}: the results match the other words only. {rest}"]


def _passage_text(engine: Engine, doc_id: str, first: int, last: int) -> str:
    """A passage's lines with its document's title and path, where a spelling is looked for."""
    record = engine.catalog.summaries([doc_id]).get(doc_id)
    heading = f"{record.title}\n{record.path}\n" if record else ""
    return heading + "\n".join(engine.catalog.line_range(doc_id, first, last - first + 1))
