"""What a search says of the query's words that no document holds, with the spellings the index knows."""

from __future__ import annotations

from functools import cache

from linkly_ls.core.engine import Engine
from linkly_ls.core.search.calibration import absent_words, words_nowhere
from linkly_ls.core.search.spelling import HeldTerms, suggestion


def misspelt_notes(engine: Engine, searcher: HeldTerms, words: str, missing_words: list[str] | None) -> list[str]:
    """A note naming the words of the query that no document holds, with the spelling the index knows one
    slip away (`borowing`: `borrowing`?); when none is found, the guidance says so, and the note then
    only offers spellings."""
    nowhere = words_nowhere(searcher, words) if missing_words is None else missing_words
    if not nowhere:
        return []
    fixes = _fixes(engine, searcher, nowhere[:5])
    offered = _offered(fixes)
    if missing_words is not None:
        return [f"{offered} The index holds those spellings."] if fixes else []
    named = ", ".join(f"'{word}'" for word in nowhere[:5])
    rest = (
        f"{offered} Else the documents may not cover it (say it in other words)."
        if fixes
        else "Check the spelling, or take it that the documents do not cover it (or say it in other words)."
    )
    return [f"No indexed document contains {named}: the results match the other words only. {rest}"]


def misspelt_exclusions(engine: Engine, searcher: HeldTerms, excluded: list[str]) -> list[str]:
    """A note for the excluded words no document holds: a slip (`-borowing`) leaves out nothing, silently."""
    nowhere = [word for word in excluded if absent_words(searcher, word) is not None]
    if not nowhere:
        return []
    fixes = _fixes(engine, searcher, nowhere[:5])
    named = ", ".join(f"'{word}'" for word in nowhere[:5])
    offered = f" {_offered(fixes)}" if fixes else ""
    return [f"No indexed document contains {named}, so excluding it leaves out nothing.{offered}"]


def _fixes(engine: Engine, searcher: HeldTerms, words: list[str]) -> dict[str, str]:
    """word -> the spelling the index knows one slip away, for the words that have one."""

    @cache
    def heading(doc_id: str) -> str:  # a document's title and path, read once however many of its passages are
        record = engine.catalog.summaries([doc_id]).get(doc_id)
        return f"{record.title}\n{record.path}\n" if record else ""

    def text_of(doc_id: str, first: int, last: int) -> str:
        return heading(doc_id) + "\n".join(engine.catalog.line_range(doc_id, first, last - first + 1))

    return {word: fixed for word in words if (fixed := suggestion(searcher, word, text_of)) is not None}


def _offered(fixes: dict[str, str]) -> str:
    return "Did you mean " + ", ".join(f"'{fixed}' for '{word}'" for word, fixed in fixes.items()) + "?"
