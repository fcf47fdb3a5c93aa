import os
import subprocess
import sys

from linkly_ls.core.indexing.pdf_split import PdfSplitter
from linkly_ls.core.indexing.scratch import clear_abandoned, pid_alive, scratch_folder


def _dead_pid() -> int:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(finished.stdout)
    assert not pid_alive(pid)
    return pid


def test_a_scratch_folder_is_under_the_data_dir_and_names_its_process(tmp_path):
    folder = scratch_folder(tmp_path / "data", "pdf-parts")
    assert folder.parent == tmp_path / "data" / "scratch" and folder.is_dir()
    assert folder.name.startswith(f"pdf-parts-{os.getpid()}-")


def test_a_killed_runs_folders_are_removed_and_a_living_ones_kept(tmp_path):
    data_dir = tmp_path / "data"
    mine = scratch_folder(data_dir, "pdf-parts")
    (mine / "part-0.pickle").write_bytes(b"x")
    killed = data_dir / "scratch" / f"pdf-parts-{_dead_pid()}-abc123"
    killed.mkdir()
    (killed / "part-1.pickle").write_bytes(b"y" * 1000)
    odd = data_dir / "scratch" / "something-else"
    odd.mkdir()
    assert sorted(clear_abandoned(data_dir)) == sorted([killed, odd])
    assert mine.is_dir() and (mine / "part-0.pickle").exists()
    assert not killed.exists() and not odd.exists()


def test_the_next_indexing_run_clears_what_a_killed_one_left(tmp_path):
    data_dir = tmp_path / "data"
    killed = data_dir / "scratch" / f"pdf-parts-{_dead_pid()}-abc123"
    killed.mkdir(parents=True)
    PdfSplitter(data_dir)
    assert not killed.exists()


def test_clearing_a_data_dir_without_scratch_does_nothing(tmp_path):
    assert clear_abandoned(tmp_path / "nowhere") == []
