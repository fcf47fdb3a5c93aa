"""Refined coverage: each library's share of words the model's vectors cover, from the catalog alone."""

from pathlib import Path

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.refined_coverage import RefinedCoverage


def notes(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.md").write_text(f"# {name.title()}\n\nA note on {name} and its habits.\n", encoding="utf-8")
    return folder


def engine_with(tmp_path: Path, embedding: dict[str, object]) -> Engine:
    libraries = [
        LibraryConfig(name="animals", paths=[notes(tmp_path / "animals", "zebra", "okapi")]),
        LibraryConfig(name="plants", paths=[notes(tmp_path / "plants", "fern")]),
    ]
    return Engine(Config(data_dir=tmp_path / "data", libraries=libraries, raw={"embedding": embedding}))


def test_no_vectors_yet_is_zero_for_every_library_and_no_word_count(tmp_path):
    engine = engine_with(tmp_path, {"first_pass": False})
    try:
        engine.index()
        coverage = RefinedCoverage(engine.catalog, engine.vectors.provider)
        assert coverage.by_library() == {"animals": 0.0, "plants": 0.0}
        assert coverage.words() is None
    finally:
        engine.close()


def test_every_document_embedded_covers_every_word(tmp_path):
    engine = engine_with(tmp_path, {"first_pass": False})
    try:
        engine.index()
        assert engine.vectors.run_until_complete(wait_for_model=True) == 3
        coverage = RefinedCoverage(engine.catalog, engine.vectors.provider)
        assert coverage.by_library() == {"animals": 1.0, "plants": 1.0}
        done, total = coverage.words()
        assert done == total == sum(record.word_count for record in engine.catalog.all_documents())
    finally:
        engine.close()


def test_without_a_model_there_is_no_coverage_to_report(tmp_path):
    engine = engine_with(tmp_path, {"model": "none"})
    try:
        engine.index()
        coverage = RefinedCoverage(engine.catalog, engine.vectors.provider)
        assert coverage.by_library() == {} and coverage.words() is None
    finally:
        engine.close()
