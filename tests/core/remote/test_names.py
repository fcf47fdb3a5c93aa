"""Library values and ids that name remote things."""

from __future__ import annotations

import pytest

from linkly_ls.core.errors import ArgumentError
from linkly_ls.core.remote.names import Scope, parse_scope, remote_path, split_doc_id

REMOTES = ["desk", "nas"]


@pytest.mark.parametrize(
    "library, include, scope",
    [
        (None, False, Scope()),
        (None, True, Scope(remotes={"desk": None, "nas": None})),
        ("local://", True, Scope()),
        ("notes", False, Scope(local_library="notes")),
        ("cloud:///", False, Scope(local=False, remotes={"desk": None, "nas": None})),
        ("cloud:///nas", False, Scope(local=False, remotes={"nas": None})),
        ("cloud:///nas/scans 2024", False, Scope(local=False, remotes={"nas": "scans 2024"})),
    ],
)
def test_library_values_name_the_servers_asked(library, include, scope):
    assert parse_scope(library, REMOTES, include) == scope


def test_unknown_remotes_and_missing_config_are_argument_errors():
    with pytest.raises(ArgumentError, match="there is no remote 'laptop'; remotes: desk, nas"):
        parse_scope("cloud:///laptop/x", REMOTES)
    with pytest.raises(ArgumentError, match="no remote is configured"):
        parse_scope("cloud:///", [])


@pytest.mark.parametrize("library", ["cloud:///desk/cloud:", "cloud:///desk/cloud:///nas/scans", "cloud:///desk/local://x", "cloud:///desk/a/b"])
def test_a_remote_library_is_one_of_its_libraries_by_name_never_a_remote_of_its_own(library):
    """`cloud:///desk/cloud:` made the desktop search its own remotes for the caller, machine to machine, in loops."""
    with pytest.raises(ArgumentError, match="comes the name of one of its libraries"):
        parse_scope(library, REMOTES)


def test_remote_ids_and_paths():
    assert split_doc_id("desk:0123456789ab") == ("desk", "0123456789ab")
    for value in ("0123456789ab", "desk:0123", "desk:../../etc/passwd", "desk:0123456789abc", 7):
        assert split_doc_id(value) == (None, value)
    assert split_doc_id(" desk:0123456789AB\n") == ("desk", "0123456789ab"), "read as leniently as a local id"
    assert remote_path("desk", "/home/me/a.md") == "cloud:///desk/home/me/a.md"
