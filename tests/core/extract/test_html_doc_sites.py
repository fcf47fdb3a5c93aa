"""HTML as documentation generators write it: Texinfo, LaTeX2HTML, Node's and mdBook's pages, pod2html,
layout tables and framesets; each page here is cut down from a real one."""

from __future__ import annotations

from pathlib import Path

from linkly_ls.core.extract import extract_file


def page(tmp_path: Path, body: str, title: str = "Manual", name: str = "page.html") -> Path:
    path = tmp_path / name
    path.write_text(f"<html><head><title>{title}</title></head><body>{body}</body></html>", encoding="utf-8")
    return path


def test_texinfo_and_latex2html_neighbour_bars_are_not_text(tmp_path):
    texinfo = page(tmp_path, """<div class="header"><p>Next: <a href="Bounds.html" accesskey="n" rel="next">Bounds</a>,
        Previous: <a href="Intro.html" accesskey="p" rel="prev">Intro</a>, Up: <a href="index.html" rel="up">Top</a></p></div>
        <h3 class="section">9.3 Linear Constraints</h3><p>LinConst holds the constraints.</p>
        <div class="header"><p>Next: <a href="Bounds.html" rel="next">Bounds</a></p></div>""")
    latex = page(tmp_path, """<div class="navigation"><a href="node101.html"><img alt="next" src="next.png"></a>
        <b> Next:</b> <a href="node101.html">Boxerrorbars</a></div><h3>Bee swarm plots</h3><p>Jitter separates points.</p>
        <div class="navigation"><b> Next:</b> <a href="node101.html">Boxerrorbars</a></div>""", name="latex.html")
    site = page(tmp_path, '<div class="header"><h1>Gardening notes</h1></div><p>Roses.</p>', name="site.html")
    assert extract_file(texinfo).lines == ["9.3 Linear Constraints", "", "LinConst holds the constraints."]
    assert extract_file(latex).lines == ["Bee swarm plots", "", "Jitter separates points."]
    assert extract_file(site).lines[0] == "Gardening notes"  # a site's own header div is kept


def test_code_blocks_read_as_shown_without_copy_buttons_and_with_each_flavour_on_its_lines(tmp_path):
    path = page(tmp_path, """<pre><input class="js-flavor-toggle" type="checkbox"><code class="language-js mjs">import * as fs from 'node:fs/promises';</code><code class="language-js cjs">const fs = require('node:fs/promises');</code><button class="copy-button">copy</button></pre>
        <pre><code>let y = 2;</code><button>copy</button></pre>""")
    assert extract_file(path).lines == [
        "import * as fs from 'node:fs/promises';", "const fs = require('node:fs/promises');", "", "let y = 2;",
    ]


def test_heading_permalinks_and_generic_first_headings(tmp_path):
    node = page(tmp_path, """<h2>Errors<span><a class="mark" href="#errors" id="errors">#</a></span></h2>
        <h3>C#<a href="#c-sharp">¶</a></h3><h3>Class: <code>Error</code><a class="srclink" href="x.js">[src]</a></h3>""")
    assert [node.title for node in extract_file(node).outline[0].children] == ["C#", "Class: Error"]
    pod = page(tmp_path, "<h1>NAME</h1><p>Image::ExifTool::Shift.pl - ExifTool time shifting routines</p>",
               title="ExifTool Date/Time Shift Module", name="pod.html")
    assert extract_file(pod).title == "ExifTool Date/Time Shift Module"


def test_a_short_page_beside_a_long_sidebar_reads_its_main_element(tmp_path):
    chapters = "".join(f'<li><a href="ch{n}.html">Chapter {n} with a long enough name</a></li>' for n in range(200))
    path = page(tmp_path, f"""<div id="help"><h2>Keyboard shortcuts</h2><p>Press S to search</p></div>
        <nav id="sidebar"><ol>{chapters}</ol></nav><div class="menu"><h1 class="menu-title">The Book</h1>
        <ul><li><button>Light</button></li></ul></div><main><h1 id="understanding">Understanding Ownership</h1>
        <p>Ownership is a unique feature.</p></main>""", title="Understanding Ownership - The Book")
    document = extract_file(path)
    assert document.title == "Understanding Ownership"
    assert document.lines == ["Understanding Ownership", "", "Ownership is a unique feature."]


def test_an_item_that_writes_nothing_marks_no_next_paragraph(tmp_path):
    path = page(tmp_path, "<ul><li><button>Light</button></li><li><button>Dark</button></li></ul><p>First paragraph.</p>")
    assert extract_file(path).lines == ["First paragraph."]


def test_a_layout_table_framing_a_table_keeps_the_inner_rows(tmp_path):
    rows = "".join(f"<tr><td>0x01{n:02x}</td><td>Tag{n}</td><td>int16u</td></tr>" for n in range(3))
    path = page(tmp_path, f'<table class="frame"><tr><td><table class="inner"><tr class="h"><th>Tag ID</th><th>Tag Name</th>'
                          f"<th>Writable</th></tr>{rows}</table></td></tr></table>")
    assert extract_file(path).lines == ["Tag ID | Tag Name | Writable", "0x0100 | Tag0 | int16u", "0x0101 | Tag1 | int16u",
                                        "0x0102 | Tag2 | int16u"]


def test_frames_are_links_and_noframes_is_read_as_html(tmp_path):
    path = tmp_path / "index.html"
    path.write_text("""<html><head><title>Manual</title></head><frameset cols="20%,80%"><frame src="toc.html" name="toc">
        <frame src="intro.html" name="main"><noframes><body><p>Designed for frames. <a href="intro.html">Non-frame
        version</a>.</p></body></noframes></frameset></html>""", encoding="utf-8")
    document = extract_file(path)
    assert document.lines == ["Designed for frames. Non-frame version."]
    assert [(link.target, link.text) for link in document.links] == [("toc.html", "toc"), ("intro.html", "main"), ("intro.html", "Non-frame version")]
    embedded = page(tmp_path, '<p>Before.</p><iframe src="intro.html" title="Intro"></iframe>', name="embed.html")
    assert [link.target for link in extract_file(embedded).links] == ["intro.html"]


def test_every_element_id_is_an_anchor_at_its_line(tmp_path):
    path = page(tmp_path, '<h2>Roots</h2><p>Text.</p><dl><dt id="realroots"><span id="index-real"></span>Function: realroots</dt></dl>')
    document = extract_file(path)
    assert document.lines[document.anchors["realroots"] - 1] == "Function: realroots"
    assert document.anchors["index-real"] == document.anchors["realroots"]


def test_a_link_made_of_a_picture_is_named_by_its_alternative_text(tmp_path):
    path = page(tmp_path, '<p>See <a href="node101.html"><img alt="next" src="next.png"></a> or <a href="x.html"><img src="x.png"></a>.</p>')
    assert [(link.target, link.text) for link in extract_file(path).links] == [("node101.html", "next"), ("x.html", "")]


def test_a_redirect_stub_links_to_the_page_it_sends_its_reader_to(tmp_path):
    path = tmp_path / "ch17-00-oop.html"
    path.write_text('<html><head><meta http-equiv="refresh" content="0; URL=ch18-00-oop.html"><title>Redirecting...</title></head>'
                    '<body><p>Redirecting to... <a href="ch18-00-oop.html">ch18-00-oop.html</a>.</p></body></html>', encoding="utf-8")
    links = [(link.target, link.text) for link in extract_file(path).links]
    assert links == [("ch18-00-oop.html", "redirect"), ("ch18-00-oop.html", "ch18-00-oop.html")]


def test_a_nested_list_keeps_its_levels(tmp_path):
    path = page(tmp_path, "<ul><li>Batch/Interactive Operation<ul><li>Command line options</li><li>Examples</li></ul></li><li>Canvas size</li></ul>")
    assert [line for line in extract_file(path).lines if line] == [
        "- Batch/Interactive Operation", "  - Command line options", "  - Examples", "- Canvas size",
    ]
