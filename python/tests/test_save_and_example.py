"""Saving, and the OBJ export example run as a user would."""

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ossa

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "obj_export.py"


def test_save_round_trips_through_the_files_format(zombie_path: Path, tmp_path: Path) -> None:
    saved = tmp_path / "again.dpm"
    with ossa.load(zombie_path) as model:
        model.save(saved)  # the format from the extension
        pose = model.pose(300)
        expected = model.skin(1, pose).positions
        names = [b.name for b in model.bones]
        assert model.to_bytes(ossa.Format.DPM) == saved.read_bytes()
        assert model.to_bytes("glb")[:4] == b"glTF"
    with ossa.load(saved) as again:
        assert [b.name for b in again.bones] == names
        assert [m.vertex_count for m in again.meshes] == [108, 2636]
        assert np.allclose(again.skin(1, again.pose(300)).positions, expected, atol=1e-4)


def test_save_refuses_what_it_cannot_write_and_leaves_nothing(zombie_path: Path, tmp_path: Path) -> None:
    with ossa.load(zombie_path) as model:
        with pytest.raises(ossa.InvalidArgumentError, match="extension"):
            model.save(tmp_path / "model.xyz")
        target = tmp_path / "partial.skn"
        with pytest.raises(ossa.UnsupportedError, match="^a Sims mesh file holds exactly one mesh; the model has 2$"):
            model.save(target)
        assert not target.exists()


def test_a_failing_stream_stops_the_save_with_its_own_exception(zombie_path: Path) -> None:
    class Full(io.RawIOBase):
        def write(self, data: object) -> int:
            raise OSError(28, "No space left on device")

    with ossa.load(zombie_path) as model, pytest.raises(OSError, match="No space"):
        model.write(Full(), "dpm")  # type: ignore[arg-type]


def test_optimize_reports_what_changed(zombie_path: Path) -> None:
    with ossa.load(zombie_path) as model:
        optimized, report = model.optimize(ossa.OptimizeFlag.TRIANGLE_ORDER)
        with optimized:
            assert report.acmr_after <= report.acmr_before
            assert optimized.info.triangle_count == model.info.triangle_count


def test_obj_export_example(zombie_path: Path, tmp_path: Path) -> None:
    obj = tmp_path / "zombie.obj"
    subprocess.run([sys.executable, str(EXAMPLE), str(zombie_path), "300", str(obj)], check=True)
    lines = obj.read_text().splitlines()
    assert sum(line.startswith("v ") for line in lines) == 108 + 2636
    assert sum(line.startswith("vn ") for line in lines) == 108 + 2636
    assert sum(line.startswith("f ") for line in lines) == 138 + 1455
    first = [float(x) for x in next(line for line in lines if line.startswith("v ")).split()[1:]]
    with ossa.load(zombie_path) as model:
        assert first == pytest.approx(model.skin(0, model.pose(300)).positions[0], abs=1e-5)
