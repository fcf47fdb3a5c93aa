"""The reading order of a PDF page's text blocks: column by column on a two-column page (a block
spanning both columns, a title or a wide figure's caption, closes the columns above it), else top to
bottom and left to right."""

from __future__ import annotations


def order_blocks(blocks: list[dict], page_width: float) -> list[dict]:
    """Reading order: column by column on two-column pages, else top to bottom, left to right."""
    if len(blocks) < 2:
        return blocks
    left_edge = min(block["bbox"][0] for block in blocks)
    right_edge = max(block["bbox"][2] for block in blocks)
    middle = (left_edge + right_edge) / 2
    tolerance = 0.02 * page_width

    def side(block: dict) -> str:
        in_left = block["bbox"][2] <= middle + tolerance
        in_right = block["bbox"][0] >= middle - tolerance
        if in_left and not in_right:
            return "left"
        if in_right and not in_left:
            return "right"
        return "span"

    sides = [side(block) for block in blocks]
    if not _is_two_column(blocks, sides):
        return sorted(blocks, key=lambda block: (round(block["bbox"][1] / 3), block["bbox"][0]))
    spanning = sorted((block for block, where in zip(blocks, sides) if where == "span"), key=_top)
    left = sorted((block for block, where in zip(blocks, sides) if where == "left"), key=_top)
    right = sorted((block for block, where in zip(blocks, sides) if where == "right"), key=_top)
    ordered: list[dict] = []
    for separator in spanning:
        ordered.extend(_take_above(left, _top(separator)))
        ordered.extend(_take_above(right, _top(separator)))
        ordered.append(separator)
    return ordered + left + right


def _is_two_column(blocks: list[dict], sides: list[str]) -> bool:
    if sides.count("left") < 2 or sides.count("right") < 2:
        return False
    chars = {"left": 0, "right": 0, "span": 0}
    for block, where in zip(blocks, sides):
        chars[where] += block["chars"]
    total = sum(chars.values()) or 1
    if chars["left"] < 0.2 * total or chars["right"] < 0.2 * total:
        return False
    lefts = [block["bbox"] for block, where in zip(blocks, sides) if where == "left"]
    rights = [block["bbox"] for block, where in zip(blocks, sides) if where == "right"]
    return any(a[1] < b[3] and b[1] < a[3] for a in lefts for b in rights)


def _take_above(blocks: list[dict], limit: float) -> list[dict]:
    taken = [block for block in blocks if _top(block) < limit]
    del blocks[: len(taken)]
    return taken


def _top(block: dict) -> float:
    return block["bbox"][1]
