import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("OSSA_CORPUS", REPO.parent / "shared" / "corpus"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not (CORPUS / "MANIFEST.tsv").is_file():
        pytest.skip(f"the model corpus is absent at {CORPUS} (set OSSA_CORPUS): skipping the tests that read it")
    return CORPUS


@pytest.fixture(scope="session")
def zombie_path(corpus: Path) -> Path:
    return corpus / "dpm" / "xon_zombie.dpm"
