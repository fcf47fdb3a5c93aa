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


def test_remote_ids_and_paths():
    assert split_doc_id("desk:0123456789ab") == ("desk", "0123456789ab")
    for value in ("0123456789ab", "desk:0123", "desk:../../etc/passwd", "desk:0123456789ab\n", 7):
        assert split_doc_id(value) == (None, value)
    assert remote_path("desk", "/home/me/a.md") == "cloud:///desk/home/me/a.md"
