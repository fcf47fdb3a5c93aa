import os
from pathlib import Path

from linkly_ls.core.indexing.walker import WalkRules, is_indexable, walk_library


def make_tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def relative_found(root: Path, rules: WalkRules) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in walk_library(root, rules))


def test_walk_honours_gitignore_ignore_hidden_and_unsupported(tmp_path):
    make_tree(
        tmp_path,
        {
            "a.md": "x",
            "b.txt": "x",
            "c.py": "code",
            ".hidden.md": "x",
            ".git/d.md": "x",
            "build/e.md": "x",
            "sub/.gitignore": "secret*.md\n",
            "sub/secret-plan.md": "x",
            "sub/ok.md": "x",
            ".gitignore": "build/\n",
            ".ignore": "*.txt\n",
        },
    )
    assert relative_found(tmp_path, WalkRules([], [], [])) == ["a.md", "sub/ok.md"]


def test_include_and_exclude_globs(tmp_path):
    make_tree(tmp_path, {"notes/a.md": "x", "notes/drafts/b.md": "x", "papers/c.txt": "x"})
    rules = WalkRules(include=["*.md"], exclude=["drafts/"], skip_dirs=[])
    assert relative_found(tmp_path, rules) == ["notes/a.md"]


def test_symlinks_are_not_followed_and_data_dir_is_skipped(tmp_path):
    make_tree(tmp_path, {"lib/a.md": "x", "outside/secret.md": "x", "lib/index/x.md": "x"})
    os.symlink(tmp_path / "outside", tmp_path / "lib" / "link")
    os.symlink(tmp_path / "outside" / "secret.md", tmp_path / "lib" / "alias.md")
    rules = WalkRules([], [], skip_dirs=[tmp_path / "lib" / "index"])
    assert relative_found(tmp_path / "lib", rules) == ["a.md"]


def test_is_indexable_agrees_with_walk(tmp_path):
    make_tree(tmp_path, {".gitignore": "ignored/\n", "ignored/a.md": "x", "kept/b.md": "x", "c.pdf": "x"})
    rules = WalkRules([], [], [])
    walked = set(walk_library(tmp_path, rules))
    for candidate in [tmp_path / "ignored/a.md", tmp_path / "kept/b.md", tmp_path / "c.pdf"]:
        assert is_indexable(candidate, tmp_path, rules) == (candidate in walked)
