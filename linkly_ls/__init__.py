"""linkly-ls: a local-document knowledge server."""

import os

__version__ = "0.1.0"

#: the file mode mask of every linkly process: what it creates (the index holds the text of every
#: indexed document, the runtime file the server's address) is its owner's alone, even in a data
#: folder others can enter
PRIVATE_UMASK = 0o077

# onnxruntime (the bundled model's runtime) keeps a usage-telemetry queue with a device id under
# ~/.cache/Microsoft from the moment it is imported, unless this is set first: nothing linkly runs
# records anything about the machine outside its data folder
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
