"""`python -m linkly_ls` starts the language server (stdio; `--tcp` for debugging)."""

import sys

from linkly_ls.lsp.launch import main

sys.exit(main())
