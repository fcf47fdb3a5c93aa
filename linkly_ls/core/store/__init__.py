"""Storage: the only code that speaks SQL (the catalog, vector rows), plus text blocks and the writer lock."""
