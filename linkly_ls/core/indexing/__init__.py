"""The indexing pipeline: walking libraries, extraction workers, the writer service and the watcher."""
