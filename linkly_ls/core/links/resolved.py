"""A link as resolved against the index: what it leads to, or why it is broken (`resolver.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BROKEN = ("missing", "missing_heading", "missing_block", "ambiguous")


@dataclass
class ResolvedLink:
    """A link with what it leads to (see the module docstring for `status`)."""

    source_id: str
    source_path: str
    line: int
    start: int
    end: int
    kind: str
    target: str
    text: str
    status: str
    doc_id: str | None = None
    path: str | None = None
    title: str | None = None
    heading: str | None = None
    #: the line of that heading in the target (a PDF's sections may share a title: "Bar" three times)
    heading_line: int | None = None
    target_line: int | None = None
    candidates: list[str] = field(default_factory=list)

    @property
    def broken(self) -> bool:
        return self.status in BROKEN

    def problem(self) -> str:
        """One line for a person: what is wrong with a broken link."""
        if self.status == "missing":
            return f"link target not found: {self.target}"
        if self.status == "missing_heading":
            return f"no heading or anchor #{self.target.partition('#')[2]} in {self.title or self.path}"
        if self.status == "missing_block":
            return f"no block #{self.target.partition('#')[2]} in {self.title or self.path}"
        if self.status == "ambiguous":
            return f"ambiguous link {self.target}: " + ", ".join(self.candidates)
        return ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "line": self.line,
            "kind": self.kind,
            "target": self.target,
            "text": self.text,
            "status": self.status,
        }
        if self.doc_id:
            data.update({"doc_id": self.doc_id, "path": self.path, "title": self.title})
            if self.target_line is not None:
                data["target_line"] = self.target_line
            if self.heading:
                data["heading"] = self.heading
        if self.candidates:
            data["candidates"] = self.candidates
        return data


@dataclass
class OutgoingLinks:
    leaving: list[ResolvedLink]
    #: the first of the links within the document, resolved
    within: list[ResolvedLink]
    within_total: int
    #: broken links within the document among those not resolved into `within` (a fragment naming no heading)
    within_broken_unshown: int

    @property
    def broken(self) -> int:
        return sum(1 for link in [*self.leaving, *self.within] if link.broken) + self.within_broken_unshown
