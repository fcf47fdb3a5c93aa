import re
from pathlib import Path

import pytest

from linkly_ls.core.config import ConfigError, load_config


def test_missing_config_means_defaults_and_env_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("LINKLY_DATA_DIR", str(tmp_path / "data"))
    config = load_config(tmp_path / "absent.toml")
    assert config.data_dir == (tmp_path / "data").resolve()
    assert config.libraries == []
    assert config.source is None


def test_default_locations_follow_xdg(tmp_path, monkeypatch):
    monkeypatch.delenv("LINKLY_DATA_DIR", raising=False)
    monkeypatch.delenv("LINKLY_CONFIG", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    from linkly_ls.core.config import default_config_path

    assert default_config_path() == tmp_path / "xdg-config" / "linkly-ls" / "config.toml"
    assert load_config(default_config_path()).data_dir == (tmp_path / "xdg-data" / "linkly-ls").resolve()


def test_libraries_and_limits_are_read(tmp_path, monkeypatch):
    monkeypatch.delenv("LINKLY_DATA_DIR", raising=False)
    path = tmp_path / "config.toml"
    path.write_text(
        f"""
[index]
data_dir = "{tmp_path / 'idx'}"
[limits]
max_file_mb = 5
ocr = false
[[library]]
name = "research"
description = "Papers"
paths = ["{tmp_path}"]
exclude = ["**/drafts/**"]
""",
        encoding="utf-8",
    )
    config = load_config(path)
    assert config.data_dir == (tmp_path / "idx").resolve()
    assert config.limits.max_file_bytes == 5 * 2**20 and config.limits.ocr is False
    (library,) = config.libraries
    assert library.name == "research" and library.paths == [tmp_path.resolve()]
    assert library.exclude == ["**/drafts/**"]


@pytest.mark.parametrize(
    "body, message",
    [
        ("[[library]]\nname = 'x'\n", "needs paths"),
        ("[[library]]\nname = '../evil'\npaths = ['/tmp']\n", "not valid"),
        ("[[library]]\nname='a'\npaths=['/tmp']\n[[library]]\nname='a'\npaths=['/tmp']\n", "defined twice"),
        ("this is not toml = = =", "cannot parse"),
        ("[limits]\nmax_file_mb = 'big'\n", "not a number"),
        ("[limits]\nocr = 'no'\n", r"\[limits\] ocr must be true or false"),
        ("[limits]\nmax_lines = true\n", r"\[limits\] max_lines is not a number: True"),
        ("[limits]\nmax_file_mb = inf\n", "a value in \\[limits\\] is not a number"),
        ("[[library]]\nname = 'x'\npaths = '/tmp'\n", r"library 'x': paths must be a list: paths = \[\"/tmp\"\]"),
        ("[limit]\nocr = false\n", r"unknown table\(s\) limit \(did you mean limits\?\)"),
        ("[limits]\norc = false\n", r"\[limits\]: unknown key\(s\) orc \(did you mean ocr\?\); known: extract_memory_mb"),
        ("[index]\ndatadir = '/tmp'\n", r"\[index\]: unknown key\(s\) datadir \(did you mean data_dir\?\)"),
        ("index = 3\n", r"\[index\] must be a table"),
        ("[[library]]\nname = 'a'\npaths = ['/tmp']\nexclued = ['x']\n", r"library 'a': unknown key\(s\) exclued \(did you mean exclude\?\)"),
    ],
)
def test_bad_config_gives_a_clear_error(tmp_path, body, message):
    path = tmp_path / "config.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_library_path_list_expands_user(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    path = tmp_path / "c.toml"
    path.write_text("[[library]]\nname='home'\npaths=['~/notes']\n", encoding="utf-8")
    assert load_config(path).libraries[0].paths == [Path(tmp_path / "notes").resolve()]


def test_every_table_and_key_the_readme_shows_is_accepted(tmp_path, monkeypatch):
    """The README's example config file is read as is (a key it shows must never be refused)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("[index]\n")
    block = readme[start : readme.index("```", start)]
    path = tmp_path / "config.toml"
    path.write_text(block, encoding="utf-8")
    config = load_config(path)
    assert config.libraries and config.limits.max_file_bytes > 0


def test_relative_paths_are_read_from_the_config_files_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("LINKLY_DATA_DIR", raising=False)
    (tmp_path / "conf").mkdir()
    config_file = tmp_path / "conf" / "config.toml"
    config_file.write_text('[index]\ndata_dir = "index"\n\n[[library]]\nname = "n"\npaths = ["../notes", "~/x"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path / "conf")
    here = load_config(config_file)
    monkeypatch.chdir("/")
    elsewhere = load_config(config_file)
    assert here.data_dir == elsewhere.data_dir == tmp_path / "conf" / "index"
    assert here.libraries[0].paths == elsewhere.libraries[0].paths
    assert here.libraries[0].paths[0] == tmp_path / "notes"
    assert here.libraries[0].paths[1] == (Path("~/x").expanduser()).resolve()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[library]]\nname = "b"\npaths = ["/tmp"]\nexclude = ["[z-a]"]\n',
         "library 'b': exclude pattern '[z-a]' is not a valid glob (bad character range z-a)"),
        ("[index]\ndata_dir = 5\n", "[index] data_dir must be a folder path in quotes"),
    ],
)
def test_a_bad_glob_or_data_dir_is_a_clear_config_error(tmp_path, monkeypatch, text, message):
    monkeypatch.delenv("LINKLY_DATA_DIR", raising=False)
    config_file = tmp_path / "config.toml"
    config_file.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(config_file)
    assert str(raised.value).startswith(f"{config_file}: ") and message in str(raised.value)


def test_library_names_may_be_written_in_any_script_and_are_kept_composed(tmp_path, monkeypatch):
    import unicodedata

    from linkly_ls.core.config import validate_library_name

    assert validate_library_name("Bücher") == "Bücher"
    assert validate_library_name(unicodedata.normalize("NFD", "Bücher")) == "Bücher", "as macOS types it"
    assert validate_library_name("笔记 2024") == "笔记 2024" and validate_library_name("Ελληνικά_σημειώσεις")
    for invalid in ("", "_notes", "-x", "a/b", "a:b", "x" * 65, "😀"):
        with pytest.raises(ConfigError, match="is not valid"):
            validate_library_name(invalid)
    config = tmp_path / "config.toml"
    config.write_text(f'[[library]]\nname = "Übersicht"\npaths = ["{tmp_path}"]\n', encoding="utf-8")
    monkeypatch.setenv("LINKLY_CONFIG", str(config))
    assert [library.name for library in load_config().libraries] == ["Übersicht"]


def test_a_librarys_folder_that_linkly_index_would_refuse_is_a_config_error(tmp_path):
    """A table saved while a server watches is applied at once: `/`, the data folder and an empty path
    passed the file's checks, which `linkly index PATH` refuses."""
    from linkly_ls.core.config import ConfigError, load_config

    data = tmp_path / "data"
    for paths, said in [('["/"]', "is the whole file system"), (f'["{data / "notes"}"]', "is in linkly's own data folder"),
                        ('[""]', "has an empty path (an unset variable?)")]:
        config = tmp_path / "config.toml"
        config.write_text(f'[index]\ndata_dir = "{data}"\n[[library]]\nname = "x"\npaths = {paths}\n', encoding="utf-8")
        with pytest.raises(ConfigError, match=re.escape(said)):
            load_config(config)
