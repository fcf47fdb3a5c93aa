"""Skip or fail: one rule for every test that needs something the repository does not hold.

Locally, a test whose data or tool is missing is skipped with the reason. When the environment
variable that guards that kind of need is `1` (CI sets them all), it fails instead, so a
machine that lacks something can never pass by skipping it.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

#: the shared test data beside the repository (corpus, IR collections, spec)
REQUIRE_SHARED = "LINKLY_REQUIRE_SHARED"
#: the editors and outside tools (Node/npm, the MCP Inspector, code-server, Chromium, Neovim)
REQUIRE_EDITORS = "LINKLY_REQUIRE_EDITORS"


def required(variable: str) -> bool:
    return os.environ.get(variable, "").strip() == "1"


def unavailable(reason: str, variable: str) -> NoReturn:
    """Skip the running test with `reason`, or fail it when `variable` is set to 1."""
    if required(variable):
        pytest.fail(f"{reason} [{variable}=1: this must not be skipped]", pytrace=False)
    pytest.skip(reason)
