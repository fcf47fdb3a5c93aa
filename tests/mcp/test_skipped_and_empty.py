"""Over MCP: what the walk left out shows in list_libraries, explore and index_library; a search of an
index without libraries says how to add one."""

from __future__ import annotations


async def test_files_a_gitignore_keeps_out_are_reported_to_agents(home_factory, kit) -> None:
    home = home_factory(minimal=True)
    (home.library / ".gitignore").write_text("drafts/\n", encoding="utf-8")
    (home.library / "drafts").mkdir()
    (home.library / "drafts" / "draft.md").write_text("# Draft\n\nunfinished\n", encoding="utf-8")
    async with kit.stdio_session(home) as session:
        payload = await kit.wait_indexed(session, home.documents)
        (library,) = payload["libraries"]
        assert library["skipped_count"] == 1 and library["skipped"] == {"gitignore": 1}
        assert "1 skipped (.gitignore/.ignore 1)" in (await session.call_tool("list_libraries", {})).content[0].text
        explore = kit.assert_success(await session.call_tool("explore", {}))
        assert explore["skipped_folders"] == [
            {"path": str(home.library / "drafts"), "skipped_count": 1, "reasons": {"gitignore": 1}}
        ]
        reindexed = kit.assert_success(await session.call_tool("index_library", {}))
        assert reindexed["libraries"][0]["skipped"] == {"gitignore": 1}


async def test_a_search_of_an_index_without_libraries_says_how_to_add_one(home_factory, kit) -> None:
    home = home_factory(minimal=True)
    home.config_path.write_text("", encoding="utf-8")
    async with kit.stdio_session(home) as session:
        answer = kit.assert_success(await session.call_tool("search", {"query": "anything", "output_format": "json"}))
        assert answer["miss"] is True and answer["notice"] == "No libraries yet: nothing is indexed."
        assert "linkly index" in answer["guidance"][-1]
