"""The language server face of linkly: outline, search, grep and read inside the editor."""
