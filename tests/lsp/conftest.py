"""Real `python -m linkly_ls` servers driven by pytest-lsp clients, over a temporary library.

The library is built from copies of the repository's fixtures (Markdown notes,
a PDF with bookmarks, an EPUB, DOCX files) and a broken DOCX (a corpus file
kept in tests/data); formats whose extractor does not exist yet are left out. Each server
gets its own library and index (`LINKLY_DATA_DIR` and `dataDir` in temporary
folders) and is started once per module and client.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
DATA = REPO / "tests" / "data"
CLIENTS = ["neovim@v0.11.0", "visual-studio-code"]
INDEX_TIMEOUT_S = 90.0


def has_extractor(module: str) -> bool:
    return importlib.util.find_spec(f"linkly_ls.core.extract.{module}") is not None


def build_library(root: Path) -> dict[str, Path]:
    """Folders `notes` and `books` (workspace folders) and `papers` (a library from settings)."""
    folders = {name: root / name for name in ("notes", "books", "papers")}
    for folder in folders.values():
        folder.mkdir(parents=True)
    for source in sorted((FIXTURES / "notes" / "rust").glob("*.md")):
        shutil.copy2(source, folders["notes"] / source.name)
    if has_extractor("pdf"):
        shutil.copy2(FIXTURES / "papers" / "pdflatex-outline.pdf", folders["papers"])
    if has_extractor("epub"):
        shutil.copy2(FIXTURES / "books" / "sample-ebook.epub", folders["books"])
    if has_extractor("docx"):
        shutil.copy2(FIXTURES / "documents" / "dpkg cheat sheet.docx", folders["books"])
    shutil.copy2(DATA / "report-truncated.docx", folders["books"])
    shutil.copy2(FIXTURES / "web" / "sect.backup.html", folders["books"])  # an HTML page with four broken links
    return folders


def as_dict(value: Any) -> Any:
    """pygls gives custom results as namedtuples: turn them back into dicts and lists."""
    if hasattr(value, "_asdict"):
        return {key: as_dict(item) for key, item in value._asdict().items()}
    if isinstance(value, dict):
        return {key: as_dict(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_dict(item) for item in value]
    return value


@dataclass
class Session:
    """A started server, its client and the files it serves."""

    client: LanguageClient
    name: str
    root: Path
    folders: dict[str, Path]
    data_dir: Path
    initialize_result: types.InitializeResult | None = None
    registrations: list[types.Registration] = field(default_factory=list)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return as_dict(await self.client.protocol.send_request_async(method, params or {}))

    async def command(self, name: str, *arguments: Any) -> Any:
        params = types.ExecuteCommandParams(command=name, arguments=list(arguments))
        return await self.client.workspace_execute_command_async(params)

    async def status(self) -> dict[str, Any]:
        return await self.request("linkly/status")

    async def wait_indexed(self, timeout: float = INDEX_TIMEOUT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            status = await self.status()
            if status["writer"] and not status["indexing"]:
                return status
            if time.monotonic() > deadline:
                raise AssertionError(f"indexing did not finish in {timeout} s: {status}")
            await asyncio.sleep(0.1)

    async def wait_mcp(self, timeout: float = INDEX_TIMEOUT_S) -> dict[str, Any]:
        """The status once the MCP sidecar listens or failed: it starts in a thread after the index opens."""
        deadline = time.monotonic() + timeout
        while True:
            status = await self.status()
            if status["mcp_url"] or status["mcp_error"]:
                return status
            if time.monotonic() > deadline:
                raise AssertionError(f"the MCP sidecar did not start in {timeout} s: {status}")
            await asyncio.sleep(0.1)

    async def doc_id(self, file_name: str) -> str:
        answer = await self.request("linkly/uriForPath", {"path": str(self.path(file_name))})
        return answer["doc_id"]

    def path(self, file_name: str) -> Path:
        return next(folder / file_name for folder in self.folders.values() if (folder / file_name).exists())


def capabilities_without_progress(name: str) -> types.ClientCapabilities:
    capabilities = client_capabilities(name)
    capabilities.window.work_done_progress = False
    return capabilities


async def start_session(
    tmp_root: Path,
    name: str,
    capabilities: types.ClientCapabilities,
    mcp: dict[str, Any] | None = None,
) -> Session:
    folders = build_library(tmp_root / "library")
    data_dir = tmp_root / "index"
    environment = {
        **os.environ,
        "LINKLY_DATA_DIR": str(tmp_root / "not-this-one"),
        "LINKLY_CONFIG": str(tmp_root / "no-config.toml"),
    }
    config = ClientServerConfig(server_command=[sys.executable, "-m", "linkly_ls"], server_env=environment)
    client = await config.start()
    session = Session(client=client, name=name, root=tmp_root, folders=folders, data_dir=data_dir)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams) -> None:
        session.registrations.extend(params.registrations)

    client.set_configuration({"embeddingModel": "none", "mcp": mcp or {"enabled": False}}, section="linkly")
    session.initialize_result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            workspace_folders=[
                types.WorkspaceFolder(uri=folders[key].as_uri(), name=key) for key in ("notes", "books")
            ],
            initialization_options={
                "dataDir": str(data_dir),
                "libraries": [{"name": "papers", "paths": [str(folders["papers"])], "description": "PDF papers"}],
                "mcp": {"enabled": True, "port": 0},
            },
        )
    )
    return session


async def stop_session(session: Session) -> None:
    await session.client.shutdown_session()
    await session.client.stop()


def session_fixture(capabilities_for: Callable[[str], types.ClientCapabilities], mcp: dict[str, Any] | None = None):
    """A module-scoped fixture parametrized over CLIENTS: one server per client, indexed."""

    @pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
    async def fixture(
        request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
    ) -> AsyncIterator[Session]:
        tmp_root = tmp_path_factory.mktemp(request.param.replace("@", "-"))
        session = await start_session(tmp_root, request.param, capabilities_for(request.param), mcp)
        await session.wait_indexed()
        yield session
        await stop_session(session)

    return fixture
