"""A two-kilobyte PDF that takes practically forever to read: the hostile file for the time limit.

Its one page draws a form that draws another form ten times, twelve levels deep, so reading the
page means interpreting 10**11 tiny strokes (about 5 microseconds apiece with MuPDF) while memory
stays flat: no machine reads it within a test's time, however fast, so a limit that stops it
does not depend on how fast the machine is.
"""

from __future__ import annotations

from pathlib import Path

FONT = b"/Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >>"


def endless_pdf(path: Path, depth: int = 12, fanout: int = 10) -> Path:
    first_form = 5
    page_content = b"BT /F1 12 Tf 72 720 Td (A page that draws too much) Tj ET /X0 Do"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /XObject << /X0 %d 0 R >> %s >> >>" % (first_form, FONT),
        _stream(b"", page_content),
    ]
    for level in range(depth):
        if level < depth - 1:
            resources = b"/Resources << /XObject << /X %d 0 R >> >>" % (first_form + level + 1)
            draws = b" ".join([b"/X Do"] * fanout)
            objects.append(_stream(b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] " + resources, draws))
        else:
            objects.append(_stream(b"/Type /XObject /Subtype /Form /BBox [0 0 612 792]", b"0 0 m 1 1 l S"))
    data = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(data))
        data += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(data)
    data += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    data += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    data += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(data))
    return path


def _stream(dictionary: bytes, content: bytes) -> bytes:
    return b"<< %s /Length %d >>\nstream\n%s\nendstream" % (dictionary, len(content), content)
