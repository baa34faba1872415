"""Loading, what a model holds, errors and closing, on the corpus's real files."""

import gc
from pathlib import Path

import numpy as np
import pytest

import ossa
from ossa._native import ffi
from ossa.errors import class_name

ZOMBIE_BONES = [
    "skull", "body", "Bip01", "Bip01 Footsteps", "Bip01 Pelvis", "Bip01 Spine", "Bip01 Spine1",
    "Bip01 Spine2", "Bip01 Spine3", "Bip01 Neck", "Bip01 Head", "Bip01 HeadNub", "Bip01 L Clavicle",
    "Bip01 L UpperArm", "Bip01 L Forearm", "Bip01 L Hand", "Bip01 L Finger0", "Bip01 L Finger0Nub",
    "Bip01 R Clavicle", "Bip01 R UpperArm", "Bip01 R Forearm", "Bip01 R Hand", "Bip01 R Finger0",
    "Bip01 R Finger0Nub", "Bip01 L Thigh", "Bip01 L Calf", "Bip01 L Foot", "Bip01 L Toe0",
    "Bip01 L Toe0Nub", "Bip01 R Thigh", "Bip01 R Calf", "Bip01 R Foot", "Bip01 R Toe0", "Bip01 R Toe0Nub",
]  # fmt: skip


def test_installed_package_carries_its_library() -> None:
    from ossa import _native

    assert _native.LIBRARY_PATH.parent == Path(ossa.__file__).parent
    assert "site-packages" in _native.LIBRARY_PATH.parts
    assert ossa.version() == (0, 1, 0)


def test_every_result_code_has_its_exception() -> None:
    codes = ffi.typeof("enum ossa_result").relements
    for name, code in codes.items():
        if name == "OSSA_OK":
            continue
        cls = getattr(ossa, class_name(name))
        assert issubclass(cls, ossa.Error) and cls.code == code, name
    assert class_name("OSSA_ERR_OUT_OF_MEMORY") == "OutOfMemoryError"
    assert issubclass(ossa.InvalidArgumentError, ValueError)


def test_formats_match_the_header() -> None:
    codes = ffi.typeof("enum ossa_format").relements
    assert {f"OSSA_FORMAT_{f.name}": f.value for f in ossa.Format} == codes
    assert ossa.Format.DPM.c_name == "OSSA_FORMAT_DPM"
    assert ossa.Format.from_path("a/b.cmx.bcf") is ossa.Format.SIMS_BCF
    assert ossa.Format.parse("dmf-json") is ossa.Format.DMF_JSON
    assert ossa.Format.parse("skn") is ossa.Format.SIMS_SKN
    assert ossa.Format.from_path("xskin-colonel-HEAD-HEAD.msh") is ossa.Format.SIMS_MSH
    assert ossa.Format.SIMS_MSH.c_name == "OSSA_FORMAT_SIMS_MSH"
    assert ossa.Format.from_path("tris.IQM") is ossa.Format.IQM
    assert ossa.Format.IQM.c_name == "OSSA_FORMAT_IQM"


def test_zombie_bones_meshes_and_scenes(zombie_path: Path) -> None:
    with ossa.load(zombie_path) as model:
        assert model.format is ossa.Format.DPM
        assert [b.name for b in model.bones] == ZOMBIE_BONES
        assert [b.parent for b in model.bones[:6]] == [-1, -1, -1, 2, 2, 4]
        assert all(b.parent < b.index for b in model.bones)
        assert not any(b.is_attachment for b in model.bones)
        assert model.find_bone("Bip01 Head") == 10
        assert model.find_bone("nope") is None

        info = model.info
        assert (info.bone_count, info.mesh_count, info.frame_count) == (34, 2, 1587)
        assert (info.vertex_count, info.triangle_count, info.max_influences) == (2744, 1593, 8)

        skull, meat = model.meshes
        assert (skull.shader, skull.vertex_count, skull.triangle_count) == ("bloodyskull", 108, 138)
        assert (meat.shader, meat.vertex_count, meat.triangle_count) == ("meat", 2636, 1455)
        assert skull.indices.shape == (138, 3) and skull.indices.dtype == np.uint32
        assert skull.indices[:2].tolist() == [[0, 1, 2], [3, 2, 1]]
        assert int(meat.indices.max()) < meat.vertex_count
        assert skull.texcoords is not None and skull.texcoords.shape == (108, 2)
        assert skull.group_ids is not None and skull.group_ids.shape == (138,)
        assert skull.colors is None

        # The .framegroups sidecar beside the file names 31 scenes.
        assert len(model.animations) == 31
        first = model.animations[0]
        assert (first.name, first.first_frame, first.frame_count, first.fps, first.looping) == (
            "groupified_0_anim", 1, 56, 30.0, True,
        )  # fmt: skip
        assert model.frames[1].name == "attackleap_0"
        assert model.find_frame("attackleap_0") == 1

        # The default mode tolerates the file's influence sums and says so.
        assert any("influence sums off 1" in w for w in model.warnings)


def test_strict_mode_rejects_what_the_default_repairs(zombie_path: Path) -> None:
    with pytest.raises(ossa.Error) as caught:
        ossa.load(zombie_path, strict=True)
    assert "influence sums" in str(caught.value)


def test_truncated_file_raises_with_the_librarys_message(zombie_path: Path, tmp_path: Path) -> None:
    cut = tmp_path / "zombie.dpm"
    cut.write_bytes(zombie_path.read_bytes()[:1000])
    expected = (
        "bone table (34 records of 40 bytes): needs 1360 bytes but the data ends at byte 0x3e8 at byte 0x50"
    )
    with pytest.raises(ossa.TruncatedError) as from_file:
        ossa.load(cut)
    assert str(from_file.value) == f"zombie.dpm: {expected}"
    assert from_file.value.offset == 0x50 and from_file.value.line == 0
    assert from_file.value.result_name == "OSSA_ERR_TRUNCATED"

    with pytest.raises(ossa.TruncatedError) as from_memory:
        ossa.load(cut.read_bytes(), name="in-memory.dpm")
    assert str(from_memory.value) == f"in-memory.dpm: {expected}"


def test_unknown_bytes_and_missing_files() -> None:
    with pytest.raises(ossa.UnknownFormatError, match="none of the supported formats"):
        ossa.load(b"not a model at all")
    with pytest.raises(ossa.Error):
        ossa.load("/nonexistent/dir/model.dpm")


def test_context_manager_and_collection_free_the_model(zombie_path: Path) -> None:
    with ossa.load(zombie_path) as model:
        assert not model.closed
        bones = model.bones
    assert model.closed
    model.close()  # a second close does nothing
    assert len(bones) == 34  # what was read stays usable
    with pytest.raises(ValueError, match="closed"):
        model.pose(0)
    assert repr(model) == "<ossa.Model closed>"

    dropped = ossa.load(zombie_path)
    free = dropped._free
    del dropped
    gc.collect()
    assert not free.alive


def test_skm_reads_its_skp_and_sims_mesh_binds_to_a_skeleton(corpus: Path) -> None:
    with ossa.load(corpus / "skm" / "wsw05sdk_monada_tris.skm") as skm:
        assert (skm.info.bone_count, skm.info.mesh_count, skm.info.vertex_count) == (27, 2, 757)
        assert not skm.info.unbound

    with ossa.load(corpus / "sims" / "so_adult-skeleton.cmx") as skeleton:
        assert len(skeleton.bones) == 29
        assert [b.name for b in skeleton.bones[:3]] == ["ROOT", "PELVIS", "L_LEG"]
        with ossa.load(corpus / "sims" / "so_xskin-b001mafit_01-PELVIS-BODY.skn") as body:
            assert body.info.unbound
            with ossa.bind(body, skeleton) as dressed:
                assert not dressed.info.unbound
                assert dressed.info.bone_count == 29
                assert dressed.info.vertex_count == body.info.vertex_count > 0


def test_an_iqm_takes_the_animations_of_its_animation_only_file(corpus):
    guy = ossa.load(corpus / "iqm" / "raylib_guy.iqm")
    anims = ossa.load(corpus / "iqm" / "raylib_guyanim.iqm")
    assert guy.info.format == ossa.Format.IQM
    both = guy.add_animations(anims)
    assert both.info.frame_count == 123 + 122
    assert both.info.animation_count == 4
    static = ossa.load(corpus / "iqm" / "ksdk_bush.iqm")
    with pytest.raises(ossa.MismatchError):
        guy.add_animations(static)


def fte_skins_triangle() -> bytes:
    """One triangle drawn with "red" whose FTE_SKINS gives it two skins: "red", then "blue" shown
    for 0.5 s; laid out byte by byte as iqm.txt and FTE's loader read it."""
    import struct

    text = b"\0tri\0red\0blue\0FTE_SKINS\0"
    header = [2, 308, 0, 24, 124, 1, 148, 1, 3, 172, 1, 228] + [0] * 13 + [1, 240]
    body = struct.pack("<6I", 1, 5, 0, 3, 0, 1)  # mesh
    body += struct.pack("<5I", 0, 0, 7, 3, 192)  # positions: float x 3 at 192
    body += struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0)
    body += struct.pack("<3I", 0, 2, 1)  # triangle
    body += struct.pack("<4I", 14, 52, 256, 0)  # the extension: 52 bytes at 256
    body += struct.pack("<3I", 2, 2, 2) + struct.pack("<4I", 5, 0, 9, 0)
    body += struct.pack("<IIfIIf", 0, 1, 0.0, 1, 1, 0.5)
    data = b"INTERQUAKEMODEL\0" + struct.pack("<27I", *header) + text + body
    assert len(data) == 308
    return data


def test_an_iqm_mesh_has_the_skins_its_fte_skins_gives_it():
    model = ossa.load(fte_skins_triangle(), format="iqm")
    assert model.meshes[0].skins == (
        ossa.MeshSkin(frames=(ossa.SkinFrame(material="red", shader_text=""),), interval=0.0),
        ossa.MeshSkin(frames=(ossa.SkinFrame(material="blue", shader_text=""),), interval=0.5),
    )
    assert model.meshes[0].shader == "red"
