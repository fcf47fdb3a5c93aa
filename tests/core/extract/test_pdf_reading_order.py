"""The reading order of a PDF page's blocks, on blocks laid out by hand."""

from linkly_ls.core.extract.pdf_reading_order import order_blocks


def block(name: str, x0: float, y0: float, x1: float, y1: float, chars: int = 400) -> dict:
    return {"name": name, "bbox": (x0, y0, x1, y1), "chars": chars}


def names(blocks: list[dict]) -> list[str]:
    return [each["name"] for each in blocks]


def test_a_two_column_page_is_read_column_by_column_and_a_spanning_block_closes_the_columns_above_it():
    blocks = [
        block("title", 50, 40, 550, 70),
        block("right 1", 310, 100, 550, 300),
        block("left 1", 50, 100, 290, 300),
        block("left 2", 50, 310, 290, 500),
        block("right 2", 310, 310, 550, 500),
        block("wide figure caption", 50, 520, 550, 540),
        block("left 3", 50, 560, 290, 700),
        block("right 3", 310, 560, 550, 700),
    ]
    assert names(order_blocks(blocks, 600)) == [
        "title", "left 1", "left 2", "right 1", "right 2", "wide figure caption", "left 3", "right 3",
    ]


def test_a_one_column_page_is_read_top_to_bottom_then_left_to_right():
    blocks = [block("second", 50, 200, 550, 260), block("note", 400, 40, 550, 60), block("first", 50, 40, 300, 60)]
    assert names(order_blocks(blocks, 600)) == ["first", "note", "second"]


def test_two_short_side_by_side_blocks_do_not_make_a_page_two_column():
    """Columns need at least two blocks on each side holding a fifth of the text each."""
    blocks = [
        block("body", 50, 40, 550, 600, chars=4000),
        block("label left", 50, 620, 290, 640, chars=20),
        block("label right", 310, 620, 550, 640, chars=20),
    ]
    assert names(order_blocks(blocks, 600)) == ["body", "label left", "label right"]
