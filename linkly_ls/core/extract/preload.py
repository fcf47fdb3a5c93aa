"""Imported once by the worker processes' fork server, before any worker starts.

Each worker is forked from that server, so the extractor libraries are loaded
once per indexing run instead of once per worker, and their pages are shared
between the workers.
"""

from __future__ import annotations

import pycld2  # noqa: F401 - the language detector, used on every document

import linkly_ls.core.extract.docx
import linkly_ls.core.extract.epub
import linkly_ls.core.extract.html
import linkly_ls.core.extract.image
import linkly_ls.core.extract.markdown
import linkly_ls.core.extract.pdf
import linkly_ls.core.extract.pptx
import linkly_ls.core.extract.text
import linkly_ls.core.indexing.pdf_split  # noqa: F401 - the task function the workers run
