"""Model.render: pictures through ossa_render, checked by their pixels."""

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import ossa

BACKGROUND = (10, 20, 30, 255)


@pytest.fixture(scope="module")
def zombie(zombie_path: Path) -> Iterator[ossa.Model]:
    with ossa.load(zombie_path) as model:
        yield model


def covered(picture: np.ndarray) -> np.ndarray:
    """The pixels the model covers: those that are not the background."""
    return np.any(picture != np.array(BACKGROUND, np.uint8), axis=2)


def test_a_picture_of_the_rest_pose_and_of_a_frame(zombie: ossa.Model) -> None:
    picture = zombie.render(width=64, height=48, background=BACKGROUND)
    assert picture.shape == (48, 64, 4) and picture.dtype == np.uint8
    mask = covered(picture)
    # Framed with a margin: the edges are background, and the model reaches most of the height.
    assert not mask[0].any() and not mask[-1].any() and not mask[:, 0].any() and not mask[:, -1].any()
    rows = np.nonzero(mask.any(axis=1))[0]
    assert rows[-1] - rows[0] + 1 >= 0.8 * 48
    assert np.array_equal(zombie.render(width=64, height=48, background=BACKGROUND), picture)
    assert np.array_equal(zombie.render(zombie.pose(0), width=64, height=48, background=BACKGROUND), picture)
    moved = zombie.render(zombie.pose(300), width=64, height=48, background=BACKGROUND)
    assert not np.array_equal(moved, picture)
    # The views see it differently; an angle overrides the view's.
    front = zombie.render(width=64, height=48, view="front", background=BACKGROUND)
    assert not np.array_equal(front, picture)
    assert np.array_equal(zombie.render(width=64, height=48, view=ossa.View.FRONT, background=BACKGROUND), front)
    assert np.array_equal(zombie.render(width=64, height=48, yaw=0, pitch=0, background=BACKGROUND), front)


def test_the_callers_textures_colour_the_meshes(zombie: ossa.Model) -> None:
    blue = np.zeros((4, 4, 4), np.uint8)
    blue[..., 2] = 255
    blue[..., 3] = 255
    plain = zombie.render(width=96, height=96, view="front", background=BACKGROUND)
    picture = zombie.render(width=96, height=96, view="front", background=BACKGROUND, textures=[blue, blue])
    mask = covered(picture)
    assert np.array_equal(mask, covered(plain)), "textures change colours, not coverage"
    pixels = picture[mask].astype(int)
    # Front faces show the texture's blue, lit; back faces keep their own colour.
    blueish = pixels[:, 2] > pixels[:, 0] + 20
    assert np.mean(blueish) > 0.8
    # Light times the texture: no green or red comes in.
    assert np.all(pixels[blueish][:, :2] <= 2)
    # None leaves a mesh untextured.
    assert np.array_equal(zombie.render(width=96, height=96, view="front", background=BACKGROUND, textures=[None]), plain)


def test_bad_arguments_raise_the_matching_errors(zombie: ossa.Model) -> None:
    with pytest.raises(ossa.InvalidArgumentError, match="diagonal"):
        zombie.render(view="diagonal")
    with pytest.raises(ossa.InvalidArgumentError):
        zombie.render(width=0)
    with pytest.raises(ossa.LimitError):
        zombie.render(width=20000, height=1)
    with pytest.raises(ossa.InvalidArgumentError):
        zombie.render(textures=[None, None, None])
    with pytest.raises(ossa.InvalidArgumentError, match="RGBA"):
        zombie.render(textures=[np.zeros((4, 4, 3), np.uint8)])
    with pytest.raises(ossa.InvalidArgumentError, match="background"):
        zombie.render(background=(1, 2, 3))
    with pytest.raises(ossa.InvalidArgumentError):
        zombie.render(np.zeros((3, 3, 4), np.float32))
