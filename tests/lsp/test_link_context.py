"""The links of a note, as the editor's requests about one line see them."""

from __future__ import annotations

from linkly_ls.lsp.link_context import note_links


def test_a_notes_links_are_parsed_once_per_text_and_again_when_it_changes() -> None:
    # a hover on one line needs the whole note parsed; an editor hovers at every move of the mouse
    lines = ["# Note", "", "See [[beta]] and [the guide](guide.md#setup).", "", "[ref]: other.md"]
    first = note_links("/notes/a.md", lines)
    assert [(link.line, link.target) for link in first] == [(3, "beta"), (3, "guide.md#setup")]
    assert note_links("/notes/a.md", list(lines)) is first
    edited = [*lines[:2], "Now [[gamma]].", *lines[3:]]
    assert note_links("/notes/a.md", edited) is not first
    assert any("gamma" in link.target for link in note_links("/notes/a.md", edited))
    assert note_links("/notes/b.md", lines) is not first  # the same text in another note resolves from there
