

def test_an_index_usearch_cannot_save_is_a_disk_error_not_an_internal_one(tmp_path, monkeypatch):
    """A full disk during `linkly index --wait` read `internal error: RuntimeError: Failed to serialize into stream`."""
    import errno
    import shutil
    from collections import namedtuple

    from linkly_ls.core.search import vectors

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 1024, 1024))
    error = vectors._save_error(tmp_path / "index.usearch.tmp", RuntimeError("Failed to serialize into stream"))
    assert isinstance(error, OSError) and error.errno == errno.ENOSPC and error.filename.endswith("index.usearch.tmp")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 0, 10**9))
    assert vectors._save_error(tmp_path / "x", RuntimeError("odd")).errno == errno.EIO
