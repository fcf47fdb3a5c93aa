"""Imported once by the worker processes' fork server, before any worker starts.

Each worker is forked from that server, so what it imports is loaded once per
indexing run instead of once per worker, and its pages are shared between the
workers. Beside this module, the server imports the extractor of each document
type the run reads (`core/indexing/work_plan.worker_preload`).
"""

from __future__ import annotations

import pycld2  # noqa: F401 - the language detector, used on every document

import linkly_ls.core.indexing.pdf_split  # noqa: F401 - the task function the workers run
