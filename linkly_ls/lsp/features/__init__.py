"""One module per language-server feature; each has `register(server)`."""
