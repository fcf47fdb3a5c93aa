"""The `linkly-ls` command: the server starts with the collector held back, and turns it back on."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from linkly_ls import __version__
from linkly_ls.lsp import launch


def test_the_collector_is_on_again_and_start_up_objects_are_frozen(capsys: pytest.CaptureFixture[str]) -> None:
    gc.unfreeze()
    try:
        with pytest.raises(SystemExit) as stopped:
            launch.main(["--version"])
        assert stopped.value.code == 0
        assert capsys.readouterr().out.strip() == f"linkly-ls {__version__}"
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.enable()


def test_python_dash_m_runs_the_launcher() -> None:
    code = (
        "import gc, runpy, sys\n"
        "sys.argv = ['linkly_ls', '--version']\n"
        "try:\n"
        "    runpy.run_module('linkly_ls', run_name='__main__')\n"
        "except SystemExit:\n"
        "    print('enabled' if gc.isenabled() else 'disabled', gc.get_freeze_count() > 10000)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == [f"linkly-ls {__version__}", "enabled True"], done.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "example.org"])
def test_the_tcp_port_without_authentication_listens_on_loopback_only(host: str) -> None:
    from linkly_ls.lsp.app import main

    with pytest.raises(SystemExit) as refused:
        main(["--tcp", "--host", host])
    assert refused.value.code == 2
