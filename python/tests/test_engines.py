"""Engine rules from Python: `ossa.check_engine` on the corpus's files and on bytes made here."""

import shutil
import struct
from pathlib import Path

import pytest

import ossa
from ossa._native import ffi


def version_1_header() -> bytes:
    """A version 1 IQM of nothing but its 124-byte header."""
    return b"INTERQUAKEMODEL\0" + struct.pack("<II", 1, 124) + bytes(124 - 24)


def test_engines_and_kinds_match_the_header() -> None:
    assert {f"OSSA_ENGINE_{e.name}": e.value for e in ossa.Engine} == ffi.typeof("enum ossa_engine").relements
    kinds = ffi.typeof("enum ossa_engine_finding_kind").relements
    assert {f"OSSA_FINDING_{k.name}": k.value for k in ossa.FindingKind} == kinds
    assert ossa.Engine.parse("Xonotic") is ossa.Engine.DARKPLACES
    assert ossa.Engine.WARFORK.c_name == "OSSA_ENGINE_WARFORK"
    with pytest.raises(ossa.InvalidArgumentError):
        ossa.Engine.parse("quake")


def test_version_1_is_refused_by_qfusion_and_read_by_darkplaces() -> None:
    (finding,) = ossa.check_engine(version_1_header(), "qfusion")
    assert finding.rule == "qfusion.version"
    assert finding.kind is ossa.FindingKind.REFUSES and finding.refuses
    assert finding.offset == 16 and finding.line == 0
    assert "version 1" in finding.message and finding.message.endswith("at byte 0x10")
    assert ossa.check_engine(version_1_header(), ossa.Engine.DARKPLACES) == []


def test_unknown_data_is_an_error() -> None:
    with pytest.raises(ossa.UnknownFormatError):
        ossa.check_engine(b"hello", "fte")


def test_bush_triangles_reach_into_another_mesh(corpus: Path) -> None:
    bush = corpus / "iqm" / "ksdk_bush.iqm"
    findings = {f.rule: f for f in ossa.check_engine(bush, "fte")}
    reach = findings["fte.mesh_range"]
    assert reach.kind is ossa.FindingKind.MISREADS and reach.offset == 0x840
    assert "mesh 0 (Cube) triangle 0 corner 0: vertex 16" in reach.message
    qf = ossa.check_engine(bush.read_bytes(), "qfusion")
    assert [f.rule for f in qf if f.refuses] == ["qfusion.animations", "qfusion.poses", "qfusion.bounds"]
    assert [f.offset for f in qf if f.refuses] == [92, 76, 104]


def test_dead_player_has_no_bounds_and_no_meshes(corpus: Path) -> None:
    rules = {f.rule: f.kind for f in ossa.check_engine(corpus / "iqm" / "rea_player_dead.iqm", "qfusion")}
    assert rules["qfusion.geometry"] is ossa.FindingKind.REFUSES
    assert rules["qfusion.bounds"] is ossa.FindingKind.REFUSES
    # A DPM is DarkPlaces' own: a note, not the IQM rules.
    (note,) = ossa.check_engine(corpus / "dpm" / "xon_zombie.dpm", "darkplaces")
    assert note.rule == "darkplaces.dpm" and note.kind is ossa.FindingKind.NOTE


def test_warfork_player_reads_animation_cfg_beside_it(corpus: Path, tmp_path: Path) -> None:
    shutil.copy(corpus / "iqm" / "asp_mrfixit.iqm", tmp_path / "tris.iqm")
    (missing,) = ossa.check_engine(tmp_path / "tris.iqm", "warfork")
    assert missing.rule == "warfork.animation_cfg" and missing.refuses
    (tmp_path / "animation.cfg").write_text("sex m\n0 10 10 24\n")
    findings = {f.rule: f for f in ossa.check_engine(tmp_path / "tris.iqm", "warfork")}
    count = findings["warfork.animation_cfg_count"]
    assert count.refuses and count.line == 2 and count.offset is None
    # From bytes the config is not read: a note says so.
    data = (tmp_path / "tris.iqm").read_bytes()
    (note,) = ossa.check_engine(data, "warfork", player=True)
    assert note.rule == "warfork.animation_cfg_unchecked" and note.kind is ossa.FindingKind.NOTE
