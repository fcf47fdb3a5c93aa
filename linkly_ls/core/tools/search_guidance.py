"""What a search that found nothing strong says: whether it is a miss, and what to try instead."""

from __future__ import annotations

from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.tools.common import empty_index_notice, setup_notes
from linkly_ls.core.tools.search_results import SearchResult

#: below this best relevance a search is a miss. Hybrid relevance includes the cosine; measured on the
#: IR collections, 0.30 flags about 5% of on-topic queries and every off-topic one (queries of another
#: collection). Keyword-only relevance is word coverage alone, lower for long questions, hence 0.20.
WEAK_RELEVANCE = {"hybrid": 0.30, "vector": 0.30, "keyword": 0.20}
#: the first advice of a search that found nothing strong
OTHER_WORDS = "Try other words or synonyms (e.g. 'auth login sign-in'), or fewer words."


def lead_guidance(result: SearchResult, lead: str, instead_of_other_words: bool = False) -> None:
    """Put `lead` first in the guidance; `instead_of_other_words`: the query's words are not the cause, so the
    advice to try other words goes."""
    rest = [advice for advice in result.guidance or [] if not (instead_of_other_words and advice == OTHER_WORDS)]
    result.guidance = [lead, *rest]


#: the words a miss names at most (a pasted page of unknown words would be named whole)
MAX_NAMED_WORDS = 10


def add_guidance(
    result: SearchResult, params: dict[str, Any], phrases_missing: list[str], quoted: bool = True, best: float | None = None
) -> None:
    """`phrases_missing`: the phrases no document holds word for word; `quoted`: the user wrote them in
    quotes (else it is one identifier, `is_dir`, searched as written); `best`: the best relevance of the
    whole ranking, for a later page (a page past the end holds no hit, yet the query may match well)."""
    top = best if best is not None else max((hit.relevance for hit in result.results), default=0.0)
    strong = (bool(result.results) or best is not None) and top >= WEAK_RELEVANCE[result.mode]
    if strong and not result.absent_words and not phrases_missing:
        return
    result.miss = True
    advice = [OTHER_WORDS]
    if phrases_missing:
        phrases = " and ".join(f'"{phrase}"' for phrase in phrases_missing)
        advice.insert(
            0,
            f"No document holds {phrases} word for word (case and punctuation aside); the results hold its words "
            "apart or are near in meaning. "
            + ("Drop the quotes to search the words." if quoted else "Search its parts as separate words to widen."),
        )
    if result.absent_words:
        shown = result.absent_words[:MAX_NAMED_WORDS]
        words = ", ".join(f"'{word}'" if len(word) <= 200 else f"'{word[:100]}…' ({len(word):,} characters)" for word in shown)
        if len(result.absent_words) > len(shown):
            words += f" and {len(result.absent_words) - len(shown):,} other word(s)"
        nearby = "; the results are only near in meaning" if result.results else ""
        advice.insert(0, f"No indexed document contains {words}{nearby}. Check the spelling: the name may not be indexed.")
    result.guidance = advice + filter_advice(params, folder_hint=True)


def say_ocr_pending(engine: Engine, result: SearchResult, params: dict[str, Any]) -> None:
    """A miss while images or scanned pages of the libraries searched still wait for OCR says so first: "check
    the spelling" told an agent the letter it looked for was not in an archive still being read."""
    if not result.miss:
        return
    library = params.get("library")
    names = [library.removeprefix("local://")] if library else [record.name for record in engine.catalog.libraries()]
    waiting = sum(len(engine.catalog.ocr_pending_paths(name)) for name in names)
    if waiting:
        lead_guidance(
            result,
            f"{waiting:,} file(s) (images, scanned pages) still wait for OCR, so their words are not searchable "
            "yet; search again once `list_libraries` shows no `ocr_pending_count`.",
        )


def filter_advice(params: dict[str, Any], folder_hint: bool = False) -> list[str]:
    """What to try about the filters of a search that found nothing strong, then `grep`; `folder_hint`:
    with no folder filter, say how to find one the user named."""
    advice: list[str] = []
    scoped = " / ".join(f"`{key}`" for key in ("path_glob", "library") if params.get(key))
    if scoped:
        advice.append(f"Widen or drop {scoped}; call `find_paths` to discover the real folder names.")
    elif folder_hint:
        advice.append("If the user named a folder or app, call `find_paths` to locate it, then pass its `path_glob`.")
    if params.get("modified_after") or params.get("modified_before"):
        advice.append("Widen the date window (`modified_after` / `modified_before`).")
    if params.get("doc_types"):
        advice.append("Drop the `doc_types` filter.")
    advice.append("For an exact name, number or phrase inside a known document, use `grep` on its doc_id.")
    return advice


def empty_index_result(engine: Engine, query: str) -> SearchResult:
    """A search of an index without documents: say why, and how to add some, rather than "no strong match"."""
    result = SearchResult(query=query, results=[], mode="keyword", mode_reason="the index holds no documents", miss=True)
    libraries = [library.name for library in engine.libraries()]
    result.notice, result.guidance = empty_index_notice(libraries, "search", setup_notes(engine))
    return result
