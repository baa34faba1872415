"""Posing and skinning, checked against numpy computations of the same quantities."""

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import ossa

FRAME = 300  # inside one of the zombie's scenes, well away from the rest pose


@pytest.fixture(scope="module")
def zombie(zombie_path: Path) -> Iterator[ossa.Model]:
    with ossa.load(zombie_path) as model:
        yield model


def homogeneous(matrices: np.ndarray) -> np.ndarray:
    out = np.zeros((len(matrices), 4, 4))
    out[:, :3] = matrices
    out[:, 3, 3] = 1
    return out


def test_pose_shape_and_blends(zombie: ossa.Model) -> None:
    pose = zombie.pose(FRAME)
    assert pose.shape == (34, 3, 4) and pose.dtype == np.float32
    # Rotations stay rotations: a 3x3 block times its transpose is the identity.
    rotations = pose[:, :, :3].astype(np.float64)
    assert np.allclose(rotations @ rotations.transpose(0, 2, 1), np.eye(3), atol=1e-4)

    assert np.array_equal(zombie.pose([(FRAME, 1.0)]), pose)
    assert np.allclose(zombie.pose([(FRAME, 2.0), (FRAME + 1, 0.0001)]), pose, atol=1e-3)
    # Blending is on parent-relative poses, translations linearly.
    halfway = zombie.pose_local([(FRAME, 0.5), (FRAME + 1, 0.5)])[:, :, 3]
    ends = zombie.pose_local(FRAME)[:, :, 3], zombie.pose_local(FRAME + 1)[:, :, 3]
    assert np.allclose(halfway, (ends[0] + ends[1]) / 2, atol=1e-5)

    out = np.empty((34, 3, 4), np.float32)
    assert zombie.pose(FRAME, out=out) is out and np.array_equal(out, pose)


def test_local_poses_concatenate_to_the_model_space_pose(zombie: ossa.Model) -> None:
    local = homogeneous(zombie.pose_local(FRAME))
    mine = np.empty_like(local)
    for bone in zombie.bones:  # parents come first, so one pass concatenates
        mine[bone.index] = local[bone.index] if bone.parent < 0 else mine[bone.parent] @ local[bone.index]
    assert np.allclose(mine[:, :3], zombie.pose(FRAME), atol=1e-4)
    assert np.allclose(zombie.concat(local[:, :3]), zombie.pose(FRAME), atol=1e-5)


def test_animation_time_picks_neighbouring_frames(zombie: ossa.Model) -> None:
    scene = zombie.animations[1]  # 41 frames from 57 at 60 fps
    assert zombie.animation_blend(1, 0.0)[0] == (57, 1.0)
    blends = zombie.animation_blend(1, 0.33)
    assert [f for f, _ in blends] == [76, 77]
    assert sum(w for _, w in blends) == pytest.approx(1.0)
    assert blends[1][1] == pytest.approx(0.33 * scene.fps - 19, abs=1e-4)


def test_frame_zero_skins_to_the_bind_mesh(zombie: ossa.Model) -> None:
    rest = zombie.pose(0)
    for mesh in zombie.meshes:
        skinned = zombie.skin(mesh, rest)
        bind = zombie.bind_vertices(mesh)
        assert skinned.positions.shape == (mesh.vertex_count, 3)
        assert np.allclose(skinned.positions, bind.positions, atol=1e-4)
        assert skinned.normals is not None and bind.normals is not None
        assert np.allclose(skinned.normals, bind.normals, atol=1e-4)
    # The first vertex of the skull, as the file's frame 0 places it.
    assert zombie.skin(0, rest).positions[0] == pytest.approx([2.8821, 3.4570, 37.5268], abs=1e-3)


def test_skinned_vertices_match_linear_blend_skinning_in_numpy(zombie: ossa.Model) -> None:
    # Each bone carries its bind-pose vertices by pose * inverse(bind pose); the ABI's
    # strongest-influence weights (every influence: no vertex has more than 8) blend them.
    moves = homogeneous(zombie.pose(FRAME)) @ np.linalg.inv(homogeneous(zombie.pose(0)))
    pose = zombie.pose(FRAME)
    for mesh in zombie.meshes:
        rest = zombie.bind_vertices(mesh, normals=False).positions.astype(np.float64)
        weights = zombie.gpu_weights(mesh, per_vertex=8)
        assert weights.dropped == 0
        mine = np.einsum("vk,vkij,vj->vi", weights.weights, moves[weights.bones], np.c_[rest, np.ones(len(rest))])
        error = np.linalg.norm(mine[:, :3] - zombie.skin(mesh, pose).positions, axis=1)
        # DPM skinning keeps the file's weights as they are; the meat's sum to 0.998 at worst
        # (the load warning), so there the renormalised blend differs by up to 0.2% of a limb.
        assert np.median(error) < 1e-4
        assert error.max() < (1e-4 if mesh.shader == "bloodyskull" else 0.1)


def test_root_moves_every_vertex(zombie: ossa.Model) -> None:
    root = np.array([[0, -1, 0, 5], [1, 0, 0, -3], [0, 0, 1, 2]], np.float32)  # a quarter turn about z, then a shift
    plain = zombie.skin(0, zombie.pose(FRAME)).positions
    moved = zombie.skin(0, zombie.pose(FRAME, root=root)).positions
    assert np.allclose(moved, plain @ root[:, :3].T + root[:, 3], atol=1e-4)


def test_skin_writes_into_caller_arrays(zombie: ossa.Model) -> None:
    mesh = zombie.meshes[1]
    pose = zombie.pose(FRAME)
    positions = np.zeros((mesh.vertex_count, 3), np.float32)
    normals = np.zeros((mesh.vertex_count, 3), np.float32)
    result = zombie.skin(mesh, pose, positions=positions, normals=normals, normalize=True)
    assert result.positions is positions and result.normals is normals
    assert np.array_equal(positions, zombie.skin(mesh, pose).positions)
    assert np.allclose(np.linalg.norm(normals, axis=1), 1, atol=1e-5)

    part = zombie.skin(mesh, pose, first=100, count=10, normals=False)
    assert part.normals is None and np.array_equal(part.positions, positions[100:110])

    with pytest.raises(ossa.InvalidArgumentError, match="float32"):
        zombie.skin(mesh, pose, positions=np.zeros((mesh.vertex_count, 3)))  # type: ignore[arg-type]
    with pytest.raises(ossa.InvalidArgumentError, match=r"\(34, 3, 4\)"):
        zombie.skin(mesh, pose[:10])
    with pytest.raises(ossa.InvalidArgumentError):
        zombie.skin(mesh, pose, first=mesh.vertex_count - 1, count=5)
    with pytest.raises(ossa.InvalidArgumentError):
        zombie.pose(zombie.info.frame_count)


def test_skin_model_is_every_mesh_skinned(zombie: ossa.Model) -> None:
    pose = zombie.pose(FRAME)
    every = zombie.skin_model(pose, normalize=True)
    assert len(every) == len(zombie.meshes) == 2
    for mesh, skinned in zip(zombie.meshes, every):
        alone = zombie.skin(mesh, pose, normalize=True)
        assert skinned.positions.shape == (mesh.vertex_count, 3)
        assert np.array_equal(skinned.positions, alone.positions)
        assert skinned.normals is not None and alone.normals is not None
        assert np.array_equal(skinned.normals, alone.normals)
    assert all(s.normals is None for s in zombie.skin_model(pose, normals=False))
    with pytest.raises(ossa.InvalidArgumentError, match=r"\(34, 3, 4\)"):
        zombie.skin_model(pose[:10])


def test_gpu_data(zombie: ossa.Model) -> None:
    inverse = homogeneous(zombie.inverse_bind())
    assert np.allclose(inverse @ homogeneous(zombie.pose(0)), np.eye(4), atol=1e-4)
    pose = zombie.pose(FRAME)
    assert np.allclose(homogeneous(zombie.skinning_matrices(pose)), homogeneous(pose) @ inverse, atol=1e-4)
    weights = zombie.gpu_weights(0, per_vertex=4)
    assert weights.bones.shape == (108, 4) and weights.bones.dtype == np.uint16
    assert np.allclose(weights.weights.sum(axis=1), 1, atol=1e-5)
