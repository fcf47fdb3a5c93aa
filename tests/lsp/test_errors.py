"""Each kind of error a tool raises, as an editor sees it from `workspace/executeCommand`.

The server is the real language server with one more tool registered, `fail`
(tests/failing_tool.py), whose command `linkly.fail` raises the error it is asked for.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

REPO = Path(__file__).resolve().parents[2]
FAILING_TOOL = REPO / "tests" / "failing_tool.py"
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_FAILED = -32803

#: error raised by the tool -> the JSON-RPC error code it is answered with
ANSWERS = {
    "ArgumentError": INVALID_PARAMS,
    "ToolError": REQUEST_FAILED,
    "UsageError": REQUEST_FAILED,
    "ConfigError": REQUEST_FAILED,
    "EngineError": REQUEST_FAILED,
    "IndexBusyError": REQUEST_FAILED,
    "IndexWriteError": REQUEST_FAILED,
    "IndexHeldError": REQUEST_FAILED,
    "UpstreamUnavailable": REQUEST_FAILED,
}

pytestmark = pytest.mark.asyncio(loop_scope="module")


@dataclass
class FailingServer:
    client: LanguageClient
    log: Path

    async def fail(self, error: str) -> JsonRpcException:
        params = types.ExecuteCommandParams(command="linkly.fail", arguments=[{"error": error}])
        with pytest.raises(JsonRpcException) as caught:
            await self.client.workspace_execute_command_async(params)
        return caught.value

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8") if self.log.exists() else ""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FailingServer]:
    root = tmp_path_factory.mktemp("lsp-errors")
    notes = root / "notes"
    notes.mkdir()
    shutil.copy2(REPO / "fixtures" / "notes" / "rust" / "ch03-05-control-flow.md", notes)
    log = root / "server.log"
    environment = {
        **os.environ,
        "LINKLY_DATA_DIR": str(root / "not-this-one"),
        "LINKLY_CONFIG": str(root / "no-config.toml"),
        "LINKLY_TEST_LOG": str(log),
    }
    config = ClientServerConfig(server_command=[sys.executable, str(FAILING_TOOL), "lsp"], server_env=environment)
    client = await config.start()
    client.set_configuration({"embeddingModel": "none", "mcp": {"enabled": False}}, section="linkly")
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[types.WorkspaceFolder(uri=notes.as_uri(), name="notes")],
            initialization_options={"dataDir": str(root / "index"), "mcp": {"enabled": False}},
        )
    )
    assert "linkly.fail" in result.capabilities.execute_command_provider.commands
    yield FailingServer(client=client, log=log)
    await client.shutdown_session()
    await client.stop()


@pytest.mark.parametrize("error", list(ANSWERS))
async def test_a_linkly_error_is_answered_with_its_kind_and_message(server: FailingServer, error: str) -> None:
    answer = await server.fail(error)
    assert (answer.code, answer.message, answer.data) == (ANSWERS[error], f"{error} raised on purpose", None)
    assert f"{error} raised on purpose" not in server.log_text(), "an error for the caller is not logged"


async def test_an_unexpected_exception_is_one_line_and_its_traceback_stays_in_the_log(server: FailingServer) -> None:
    answer = await server.fail("RuntimeError")
    assert (answer.code, answer.message, answer.data) == (
        INTERNAL_ERROR,
        "internal error: RuntimeError: RuntimeError raised on purpose",
        None,
    )
    log = server.log_text()
    assert "Traceback" in log and "RuntimeError: RuntimeError raised on purpose" in log
