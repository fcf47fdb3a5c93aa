"""Imported once by the worker processes' fork server, before any worker starts.

Each worker is forked from that server, so the extractor libraries and the
language detector's profiles are loaded once per indexing run instead of once
per worker (about 1 CPU-second per worker otherwise), and their pages are
shared between the workers.
"""

from __future__ import annotations

from langdetect.detector_factory import init_factory

import linkly_ls.core.extract.docx
import linkly_ls.core.extract.epub
import linkly_ls.core.extract.html
import linkly_ls.core.extract.image
import linkly_ls.core.extract.markdown
import linkly_ls.core.extract.pdf
import linkly_ls.core.extract.pptx
import linkly_ls.core.extract.text
import linkly_ls.core.pdf_split  # noqa: F401 - the task function the workers run

init_factory()
