"""Retrieval: analysis, chunking, the keyword and vector indexes, ranking, snippets and grep engines."""
