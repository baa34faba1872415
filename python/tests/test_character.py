"""A Sims character from Python: `ossa.check_character` on the corpus's files copied under the game's
own names, clean, then with one thing broken."""

import shutil
from pathlib import Path

import pytest

import ossa

FILES = [
    "so_adult-skeleton.cmx",
    "so_child-skeleton.cmx",
    "so_B001MAFit_01.cmx",
    "so_xskin-b001mafit_01-PELVIS-BODY.skn",
    "so_adult-idle1.cmx",
    "so_xskill-A2O-idle1.cfp",
]


@pytest.fixture()
def character(corpus: Path, tmp_path: Path) -> Path:
    for name in FILES:
        shutil.copy(corpus / "sims" / name, tmp_path / name.removeprefix("so_"))
    return tmp_path


def test_the_corpus_character_is_clean(character: Path) -> None:
    problems = ossa.check_character(
        character / "adult-skeleton.cmx", suit="b001mafit_01", skills=[character / "adult-idle1.cmx"]
    )
    assert problems == []


def test_a_skill_moving_a_bone_the_skeleton_lacks_is_named(character: Path) -> None:
    skill = character / "adult-idle1.cmx"
    skill.write_bytes(skill.read_bytes().replace(b"\r\nPELVIS\r\n", b"\r\nPELVIS9\r\n", 1))
    (problem,) = ossa.check_character(character / "adult-skeleton.cmx", skills=[skill])
    assert problem.file == str(skill)
    assert problem.result_name == "OSSA_ERR_MISMATCH"
    assert problem.code == ossa.MismatchError.code
    assert problem.message == 'adult-idle1.cmx: skill a2o-idle1 moves a bone the skeleton lacks: "PELVIS9"'
    assert problem.offset is None


def test_an_adult_suit_on_the_child_skeleton_and_a_missing_mesh_are_each_named(character: Path) -> None:
    (character / "xskin-b001mafit_01-PELVIS-BODY.skn").unlink()
    search = character / "elsewhere"
    search.mkdir()
    problems = ossa.check_character(
        character / "adult-idle1.cmx",
        skeleton=character / "child-skeleton.cmx",
        suit="b001mafit_01",
        search=[search],
    )
    mesh = "xskin-b001mafit_01-PELVIS-BODY"
    assert [(Path(p.file).name, p.result_name, p.message) for p in problems] == [
        (
            "B001MAFit_01.cmx",
            "OSSA_ERR_MISMATCH",
            "suit b001mafit_01 is for the adult skeleton (its name b001mafit_01 says a), not the child skeleton child",
        ),
        (
            "B001MAFit_01.cmx",
            "OSSA_ERR_NOT_FOUND",
            f"suit b001mafit_01 skin 0 (mesh {mesh} on bone PELVIS): no {mesh}.skn, {mesh}.bmf or {mesh}.msh in "
            f"{character}, {search}",
        ),
    ]


def test_a_missing_character_file_is_a_problem_not_an_exception(tmp_path: Path) -> None:
    (problem,) = ossa.check_character(tmp_path / "nobody.cmx")
    assert problem.result_name == "OSSA_ERR_NOT_FOUND"
    assert problem.file == str(tmp_path / "nobody.cmx")


def test_a_skeleton_with_a_skill_saves_as_a_character_file_with_its_cfp(character: Path) -> None:
    model = ossa.load(character / "adult-skeleton.cmx").add_skills(character / "adult-idle1.cmx")
    out = character / "out"
    out.mkdir()
    written = model.save(out / "walker.cmx")
    names = [Path(p).name for p in written]
    assert names[0] == "walker.cmx" and len(names) == 2 and names[1].endswith(".cfp"), names
    # The file names the CFP it wrote beside itself: read back, the skill plays the same frames.
    again = ossa.load(character / "adult-skeleton.cmx").add_skills(out / "walker.cmx")
    assert [a.name for a in again.animations] == [a.name for a in model.animations]
    assert [a.frame_count for a in again.animations] == [a.frame_count for a in model.animations]
