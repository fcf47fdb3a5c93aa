"""`same_work`: copies and one text in two formats are one work; versions, translations and summaries are not."""

from __future__ import annotations

from dataclasses import replace

from linkly_ls.core.search.same_work import WorkGroups, same_work
from linkly_ls.core.store.records import WorkFacts

GUIDE_TXT = WorkFacts(
    doc_id="a" * 12, content_hash="h-txt", doc_type="txt", title="Debian New Maintainers' Guide",
    path="/docs/reference/maint-guide.en.txt", library="docs",
    keywords=("package", "Debian", "file", "source", "command", "install", "build", "program"), word_count=23576,
)
GUIDE_PDF = replace(
    GUIDE_TXT, doc_id="b" * 12, content_hash="h-pdf", doc_type="pdf", path="/docs/papers/maint-guide.en.pdf",
    keywords=("package", "Debian", "file", "source", "command", "install", "org", "build"), word_count=24605,
)


def test_one_text_in_two_formats_is_one_work():
    assert same_work(GUIDE_TXT, GUIDE_PDF) and same_work(GUIDE_PDF, GUIDE_TXT)


def test_the_file_name_stands_for_a_title_the_formats_read_differently():
    assert same_work(GUIDE_TXT, replace(GUIDE_PDF, title="maint-guide.en"))
    assert not same_work(GUIDE_TXT, replace(GUIDE_PDF, title="maint-guide.en", path="/docs/papers/guide.pdf"))


def test_copies_are_one_work_whatever_their_names():
    copy = replace(GUIDE_PDF, doc_id="c" * 12, title="Other", path="/elsewhere/x.pdf", keywords=())
    assert same_work(GUIDE_PDF, copy)


def test_two_versions_in_one_format_stay_apart():
    assert not same_work(GUIDE_PDF, replace(GUIDE_PDF, doc_id="d" * 12, content_hash="h-pdf-2"))


def test_a_summary_of_another_length_stays_apart():
    assert not same_work(GUIDE_TXT, replace(GUIDE_PDF, word_count=7000))


def test_a_translation_sharing_only_names_stays_apart():
    german = ("Paket", "Debian", "Datei", "Quelle", "Befehl", "installieren", "org", "bauen")
    assert not same_work(GUIDE_TXT, replace(GUIDE_PDF, keywords=german))


def test_key_terms_are_compared_without_case():
    assert same_work(GUIDE_TXT, replace(GUIDE_PDF, keywords=tuple(term.upper() for term in GUIDE_PDF.keywords)))


def test_groups_keep_the_best_ranked_file_and_collect_the_others_even_when_full():
    other = replace(GUIDE_TXT, doc_id="e" * 12, content_hash="h-other", title="Policy", path="/docs/policy.txt",
                    keywords=("policy",))
    groups = WorkGroups(limit=2)
    for facts in (GUIDE_PDF, other, GUIDE_TXT, replace(other, doc_id="f" * 12, content_hash="h-third", title="Third",
                                                        path="/docs/third.txt")):
        groups.add(facts)
    assert groups.full
    assert [(lead.doc_id, [file.doc_id for file in others]) for lead, others in groups.works] == [
        (GUIDE_PDF.doc_id, [GUIDE_TXT.doc_id]), (other.doc_id, []),
    ]


def test_empty_notes_of_different_names_are_not_copies():
    empty = replace(GUIDE_TXT, content_hash="hash-of-nothing", title="Someday", path="/docs/Someday.md", doc_type="md",
                    keywords=(), word_count=0)
    assert not same_work(empty, replace(empty, doc_id="e" * 12, title="Later", path="/docs/Later.md"))
    assert same_work(empty, replace(empty, doc_id="f" * 12, path="/copy/Someday.md"))
