"""The notes graph: link targets read at index time, resolved at query time, and related documents."""
