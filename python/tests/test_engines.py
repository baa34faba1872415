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


def test_saved_for_an_engine_with_its_sidecars_as_the_cli_writes_them(corpus: Path, tmp_path: Path) -> None:
    zombie = corpus / "dpm" / "xon_zombie.dpm"
    model = ossa.load(zombie)
    written = model.save(tmp_path / "zombie.iqm", engine="darkplaces", source=zombie)
    names = [Path(p).name for p in written]
    assert names == ["zombie.iqm", "zombie.iqm.framegroups"] + [f"zombie.iqm_{k}.skin" for k in range(4)]
    framegroups = (tmp_path / "zombie.iqm.framegroups").read_text().splitlines()
    assert len(framegroups) == len(model.animations)
    again = ossa.load(tmp_path / "zombie.iqm")
    assert [a.name for a in again.animations] == [a.name for a in model.animations]
    assert ossa.check_engine(tmp_path / "zombie.iqm", "darkplaces") == []
    # Each .skin file again, naming the IQM's meshes: as many lines as the one beside the DPM.
    for k in range(4):
        here = (tmp_path / f"zombie.iqm_{k}.skin").read_text().splitlines()
        there = [l for l in (corpus / "dpm" / f"xon_zombie.dpm_{k}.skin").read_text().splitlines() if "," in l]
        assert len(here) == len(there) and all("," in l for l in here), k

    # A Warfork player model the zombie cannot be: refused, naming the rule, nothing written.
    with pytest.raises(ossa.UnsupportedError, match="warfork.animation_cfg_count"):
        model.save(tmp_path / "p" / "tris.iqm", engine="warfork", player=True)
    assert not (tmp_path / "p").exists()
    with pytest.raises(ossa.InvalidArgumentError, match="OSSA_SAVE_PLAYER is for the engines qfusion and warfork"):
        model.save(tmp_path / "tris.iqm", engine="fte", player=True)
    # Without an engine, the reference compiler's IQM, which holds 4 influences a vertex: the
    # zombie's 8 are refused, naming the vertex; the spiderbot's is written with its framegroups.
    with pytest.raises(ossa.UnsupportedError, match="mesh 1 vertex 0: 8 bones weigh on it"):
        model.save(tmp_path / "plain.iqm", sidecars=True)
    assert not (tmp_path / "plain.iqm").exists()
    spiderbot = ossa.load(corpus / "dpm" / "xon_spiderbot.dpm")
    written = spiderbot.save(tmp_path / "plain.iqm", sidecars=True)
    assert [Path(p).name for p in written] == ["plain.iqm", "plain.iqm.framegroups"]
    assert len((tmp_path / "plain.iqm.framegroups").read_text().splitlines()) == len(spiderbot.animations)
