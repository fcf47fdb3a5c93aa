"""Only indexed documents are reachable: by the ids search hands out, within the library a call names,
and through `linkly:` URIs in the language server. (The MCP server's network policies, loopback bind,
Host/Origin checks and the token, are tested in tests/mcp/; see SECURITY.md.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from linkly_ls.core.store.catalog import make_doc_id
from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.tools import ArgumentError, ToolError, call_tool
from linkly_ls.lsp.features.virtual_documents import document_for_uri, read_document

from .conftest import EMBEDDING_OFF, write

SECRET = "root:x:0:0:SECRET-LINE"


def build_libraries(root: Path) -> tuple[Engine, dict[str, Path]]:
    """`notes` and `notes-private`, siblings whose paths share a prefix, with the same words in both;
    a secret file next to them that no library holds; a broken file inside `notes`."""
    public, private = root / "notes", root / "notes-private"
    write(public / "garden.md", "# Garden\n\nshared harvest words about tomatoes\n")
    write(public / "sub" / "compost.md", "# Compost\n\nshared harvest words about worms\n")
    write(private / "diary.md", "# Diary\n\nshared harvest words, private\n")
    write(private / "sub" / "bank.md", "# Bank\n\nshared harvest words and a pin\n")
    write(public / "broken.pdf", "")  # no PDF is empty: a failed file
    write(root / "secret.txt", SECRET + "\n")
    libraries = [LibraryConfig(name="notes", paths=[public]), LibraryConfig(name="private", paths=[private])]
    engine = Engine(Config(data_dir=root / "data", libraries=libraries, limits=ExtractLimits(ocr=False),
                           raw=EMBEDDING_OFF))
    engine.index()
    return engine, {"public": public, "private": private, "secret": root / "secret.txt"}


@pytest.fixture(scope="module")
def two_libraries(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, dict[str, Path]]]:
    engine, paths = build_libraries(tmp_path_factory.mktemp("security"))
    yield engine, paths
    engine.close()


def doc_id_of(engine: Engine, path: Path) -> str:
    record = engine.catalog.by_path(str(path))
    assert record is not None, path
    return record.doc_id


def refused(engine: Engine, tool: str, arguments: dict) -> str:
    with pytest.raises((ArgumentError, ToolError)) as raised:
        call_tool(engine, tool, arguments)
    message = str(raised.value)
    assert SECRET not in message and "\n" not in message
    return message


BAD_IDS = [
    "../../etc/passwd", "/etc/passwd", "..", ".", "", "~/.ssh/id_rsa", "C:\\Windows\\win.ini",
    "file:///etc/passwd", "linkly://doc/0123456789ab/../../etc/passwd", "linkly://other/0123456789ab",
    "0123456789ab\n/x", "0123456789ab 0",
    "0123456789ab/../x", "%2e%2e%2fetc%2fpasswd", "0123456789a", "0123456789abc",
]


@pytest.mark.parametrize("bad_id", BAD_IDS)
def test_read_grep_and_outline_take_only_ids_that_search_hands_out(two_libraries, bad_id: str) -> None:
    engine, _ = two_libraries
    for tool, arguments in (
        ("read", {"doc_id": bad_id}),
        ("grep", {"pattern": "root", "doc_id": bad_id}),
        ("outline", {"doc_ids": [bad_id]}),
    ):
        assert "document id" in refused(engine, tool, arguments)


def test_an_id_in_capitals_or_with_spaces_around_names_that_id_only(two_libraries) -> None:
    engine, paths = two_libraries
    garden = doc_id_of(engine, paths["public"] / "garden.md")
    for spelling in (garden.upper(), f" {garden}\n", f"linkly://doc/{garden}", f"linkly://doc/{garden}/garden.md.txt"):
        assert call_tool(engine, "read", {"doc_id": spelling}).to_json()["doc_id"] == garden
    for spelling in ("0123456789AB", " 0123456789ab\n", "linkly://doc/0123456789ab"):
        assert "is not an indexed document" in refused(engine, "read", {"doc_id": spelling})


def test_well_formed_ids_of_files_that_are_not_indexed_are_refused(two_libraries) -> None:
    engine, paths = two_libraries
    garden = doc_id_of(engine, paths["public"] / "garden.md")
    not_indexed = [
        make_doc_id(str(paths["secret"])),  # a file beside the libraries: its id is easy to compute
        make_doc_id("/etc/passwd"),
        make_doc_id(str(paths["public"] / "broken.pdf")),  # inside a library, but it failed to index
        make_doc_id(str(paths["public"] / "sub" / ".." / "garden.md")),  # an unresolved spelling of a real one
    ]
    for doc_id in not_indexed:
        assert doc_id != garden
        for tool, arguments in (
            ("read", {"doc_id": doc_id}),
            ("grep", {"pattern": ".", "doc_id": doc_id}),
            ("outline", {"doc_ids": [doc_id]}),
        ):
            assert "is not an indexed document" in refused(engine, tool, arguments)
        batch = call_tool(engine, "outline", {"doc_ids": [garden, doc_id]}).to_json()  # the indexed one alone is outlined
        assert [document["doc_id"] for document in batch["documents"]] == [garden]
        assert [entry["doc_id"] for entry in batch["missing"]] == [doc_id] and "is not an indexed document" in batch["missing"][0]["error"]
        assert SECRET not in json.dumps(batch)


def test_a_removed_documents_id_stops_working(tmp_path: Path) -> None:
    engine, paths = build_libraries(tmp_path)
    try:
        doc_id = doc_id_of(engine, paths["public"] / "garden.md")
        (paths["public"] / "garden.md").unlink()
        engine.index(["notes"])
        assert "is not an indexed document" in refused(engine, "read", {"doc_id": doc_id})
    finally:
        engine.close()


def test_a_call_restricted_to_one_library_never_sees_another(two_libraries) -> None:
    engine, paths = two_libraries
    private = str(paths["private"])
    everything = call_tool(engine, "search", {"query": "shared harvest words"}).to_json()["results"]
    assert {hit["library"] for hit in everything} == {"notes", "private"}
    for query in ("shared harvest words", "diary", "bank pin", "private"):
        for library in ("notes", "local://notes"):
            for extra in ({}, {"path_glob": private}, {"path_glob": "*"}, {"doc_types": ["md"]}):
                hits = call_tool(engine, "search", {"query": query, "library": library, **extra}).to_json()["results"]
                assert all(hit["library"] == "notes" and not hit["path"].startswith(private) for hit in hits)
    explored = call_tool(engine, "explore", {"library": "notes"}).to_json()
    assert explored["document_count"] == 2 and private not in str(explored)
    folders = call_tool(engine, "find_paths", {"patterns": ["sub", "notes"], "library": "notes"}).to_json()
    assert folders["directories"] and private not in str(folders)


@pytest.mark.parametrize("library", ["../notes-private", "notes/../private", "local://notes/../private", "NOTES", "*"])
def test_library_names_are_names_not_paths_or_patterns(two_libraries, library: str) -> None:
    engine, _ = two_libraries
    assert "does not exist" in refused(engine, "search", {"query": "shared", "library": library})


def test_linkly_uris_reach_only_indexed_documents(two_libraries) -> None:
    engine, paths = two_libraries
    garden = doc_id_of(engine, paths["public"] / "garden.md")
    assert document_for_uri(engine, f"linkly://doc/{garden}").doc_id == garden
    assert document_for_uri(engine, f"linkly://doc/{garden}/garden.md.txt").doc_id == garden
    refused_uris = [
        "linkly://doc/../../etc/passwd",
        f"linkly://doc/{garden}/../../etc/passwd",
        f"linkly://doc/{make_doc_id(str(paths['secret']))}",
        f"linkly://doc/{make_doc_id('/etc/passwd')}",
        f"linkly://doc/{garden}?path=/etc/passwd",
        f"linkly://doc/{garden}#x",
        f"linkly://other/{garden}",
        f"linkly:///doc/{garden}",
        "linkly://doc/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "file:///etc/passwd",
        paths["secret"].as_uri(),
        (paths["public"] / "broken.pdf").as_uri(),
        "https://example.com/doc",
    ]
    for uri in refused_uris:
        with pytest.raises(JsonRpcException) as raised:
            document_for_uri(engine, uri)
        assert SECRET not in str(raised.value)
    for params in ({"path": str(paths["secret"])}, {"path": "/etc/passwd"}, {"doc_id": "../../etc/passwd"},
                   {"uri": "file:///etc/passwd", "path": str(paths["public"] / "garden.md")}):
        with pytest.raises(JsonRpcException):
            read_document(engine, params)
    assert read_document(engine, {"uri": f"linkly://doc/{garden}"})["text"].startswith("# Garden")


def test_a_new_index_folder_is_private_to_its_owner(tmp_path: Path) -> None:
    """The catalog holds the full text of every document, including ones from private folders."""
    engine = Engine(Config(data_dir=tmp_path / "new" / "index", raw=EMBEDDING_OFF))
    engine.close()
    assert (tmp_path / "new" / "index").stat().st_mode & 0o077 == 0


def test_what_linkly_writes_is_private_even_in_a_data_folder_others_can_enter(tmp_path: Path) -> None:
    """A data folder the user made (mode 0755) held a catalog any user could read (0644)."""
    import os
    import subprocess
    import sys

    data_dir, library = tmp_path / "data", tmp_path / "notes"
    data_dir.mkdir(mode=0o755)
    data_dir.chmod(0o755)
    library.mkdir()
    (library / "secret.md").write_text("# Secret\n\nthe text of a private note\n", encoding="utf-8")
    (library / "secret.md").chmod(0o644)  # whatever umask this test process has
    env = {**os.environ, "LINKLY_DATA_DIR": str(data_dir), "LINKLY_CONFIG": str(tmp_path / "none.toml")}
    run = subprocess.run([sys.executable, "-m", "linkly_ls.cli", "index", str(library), "--library", "notes"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    written = [path for path in data_dir.rglob("*") if path.is_file()]
    assert any(path.name.startswith("catalog") for path in written)
    assert [path for path in written if path.stat().st_mode & 0o077] == []
    assert (library / "secret.md").stat().st_mode & 0o077, "the library's own files are not touched"


def test_the_model_runtime_records_nothing_about_the_machine(tmp_path: Path) -> None:
    """onnxruntime keeps a telemetry queue with a device id in ~/.cache/Microsoft from its import on."""
    import os
    import subprocess
    import sys

    pytest.importorskip("onnxruntime")
    home = tmp_path / "home"
    home.mkdir()
    environment = {key: value for key, value in os.environ.items() if key != "ORT_DISABLE_TELEMETRY"}
    environment["HOME"] = str(home)
    script = "import linkly_ls.core.embedding.onnx, onnxruntime; onnxruntime.get_available_providers()"
    subprocess.run([sys.executable, "-c", script], env=environment, check=True, timeout=120)
    assert not list(home.rglob("*")), sorted(home.rglob("*"))
