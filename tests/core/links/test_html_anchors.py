"""Links into an HTML page by an element's id: generated manuals link definitions, not headings."""

from __future__ import annotations

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.links.resolver import LinkResolver

FUNCTIONS = """<html><head><title>Equations</title></head><body>
<h2 id="Equations">Equations</h2>
<p>Some text about solving.</p>
<dl><dt id="allroots"><strong>Function:</strong> allroots (expr)</dt><dd>Finds all roots.</dd></dl>
<p>More text.</p>
<dl><dt id="index-real_005froots"><span id="realroots"></span><strong>Function:</strong> realroots (expr)</dt>
<dd>Finds the real roots.</dd></dl>
</body></html>
"""
INDEX = """<html><head><title>Index</title></head><body><h1>Function index</h1>
<ul><li><a href="functions.html#realroots">realroots</a></li>
<li><a href="functions.html#index-real_005froots">real roots</a></li>
<li><a href="functions.html#Equations">Equations</a></li>
<li><a href="functions.html#no-such-anchor">stale</a></li></ul>
</body></html>
"""


def test_a_fragment_naming_an_element_id_leads_to_its_line_and_one_naming_nothing_is_broken(tmp_path):
    root = tmp_path / "manual"
    root.mkdir()
    (root / "functions.html").write_text(FUNCTIONS, encoding="utf-8")
    (root / "index.html").write_text(INDEX, encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="m", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        target = engine.catalog.by_path(str(root / "functions.html"))
        lines = engine.catalog.lines(target.doc_id)
        source = engine.catalog.by_path(str(root / "index.html"))
        links = {link.target: link for link in LinkResolver(engine.catalog).links_of(source)}
        for fragment in ("realroots", "index-real_005froots"):
            link = links[f"functions.html#{fragment}"]
            assert link.status == "ok" and lines[link.target_line - 1] == "Function: realroots (expr)", fragment
        assert links["functions.html#Equations"].status == "ok" and lines[links["functions.html#Equations"].target_line - 1] == "Equations"
        stale = links["functions.html#no-such-anchor"]
        assert stale.status == "missing_heading" and stale.broken
        assert "no heading or anchor #no-such-anchor" in stale.problem()
    finally:
        engine.close()
