"""`python -m linkly_ls` starts the language server (stdio; `--tcp` for debugging)."""

import sys

from linkly_ls.lsp.app import main

sys.exit(main())
