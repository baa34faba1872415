"""Models: loading, what they hold, posing, skinning and saving."""

from __future__ import annotations

import enum
import io
import os
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, BinaryIO, NamedTuple, Union

import numpy as np
import numpy.typing as npt

from ._native import ffi, lib, text
from .errors import InvalidArgumentError, check, raise_record

FloatArray = npt.NDArray[np.float32]
StrPath = Union[str, "os.PathLike[str]"]
# A frame index, or up to 8 (frame, weight) pairs as ossa_pose_frames blends them.
Blend = Union[int, Sequence[tuple[int, float]]]


class Format(enum.IntEnum):
    """`ossa_format`: what a file is read as or written as."""

    AUTO = 0
    DPM = 1
    SKM = 2
    SKP = 3
    SIMS_SKN = 4
    SIMS_BMF = 5
    SIMS_CMX = 6
    SIMS_BCF = 7
    MM2_SKEL = 8
    DMF = 9
    DMF_JSON = 10
    MM2_MOD = 11
    GLB = 12
    GLTF = 13
    SIMS_MSH = 14
    IQM = 15

    @property
    def c_name(self) -> str:
        return text(lib.ossa_format_name(self.value))

    @classmethod
    def from_path(cls, path: StrPath) -> Format:
        """The format a file name's extension names, as the library and the ossa CLI read it."""
        name = os.fspath(path).lower()
        for extension, fmt in _EXTENSIONS:
            if name.endswith(extension):
                return fmt
        raise InvalidArgumentError(f"cannot tell the format from {os.fspath(path)!r}'s extension: pass format=")

    @classmethod
    def parse(cls, value: Format | str) -> Format:
        """A Format, its name ("dmf_json", "dmf-json") or an extension ("skn", ".glb")."""
        if isinstance(value, Format):
            return value
        key = value.strip().lstrip(".").upper().replace("-", "_")
        if key in cls.__members__:
            return cls[key]
        return cls.from_path("." + value.strip().lstrip("."))


# Format::from_extension's order: `.cmx.bcf` is binary, so it is tested before `.cmx`.
_EXTENSIONS = [
    (".dpm", Format.DPM),
    (".skm", Format.SKM),
    (".skp", Format.SKP),
    (".skn", Format.SIMS_SKN),
    (".bmf", Format.SIMS_BMF),
    (".msh", Format.SIMS_MSH),
    (".bcf", Format.SIMS_BCF),
    (".cmx", Format.SIMS_CMX),
    (".skel", Format.MM2_SKEL),
    (".mod", Format.MM2_MOD),
    (".iqm", Format.IQM),
    (".dmf", Format.DMF),
    (".glb", Format.GLB),
    (".gltf", Format.GLTF),
]


class OptimizeFlag(enum.IntFlag):
    """OSSA_OPTIMIZE_*: what `Model.optimize` and `Model.save` change first."""

    NONE = 0
    UNUSED_BONES = 1
    TRIANGLE_ORDER = 2
    VERTEX_ORDER = 4
    BONE_ORDER = 8
    SKIN_ORDER = 16


class View(enum.IntEnum):
    """OSSA_VIEW_*: where `Model.render`'s camera looks from."""

    THREE_QUARTER = 0
    FRONT = 1
    SIDE = 2
    TOP = 3


@dataclass(frozen=True, slots=True)
class ModelInfo:
    format: Format
    bone_count: int
    mesh_count: int
    frame_count: int
    animation_count: int
    vertex_count: int  # totals over all meshes
    triangle_count: int
    max_influences: int
    unbound: bool  # meshes waiting for `bind`
    up_axis: int  # 0 = x, 1 = y, 2 = z
    handedness: int  # +1 right-handed, -1 left-handed
    mins: tuple[float, float, float]
    maxs: tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class Bone:
    index: int
    name: str
    parent: int  # an earlier bone's index, or -1
    flags: int  # OSSA_BONE_ATTACHMENT = 1, OSSA_BONE_SYNTHETIC = 2

    @property
    def is_attachment(self) -> bool:
        return bool(self.flags & lib.OSSA_BONE_ATTACHMENT)

    @property
    def is_synthetic(self) -> bool:
        return bool(self.flags & lib.OSSA_BONE_SYNTHETIC)


@dataclass(frozen=True, slots=True)
class Frame:
    index: int
    name: str
    mins: tuple[float, float, float]
    maxs: tuple[float, float, float]
    yaw_radius: float
    radius: float


@dataclass(frozen=True, slots=True)
class SkinFrame:
    material: str  # the texture, named as mesh shaders are
    shader_text: str  # shader text FTE compiles for it; "" where none


@dataclass(frozen=True, slots=True)
class MeshSkin:
    """One of a mesh's own skins (IQM's FTE_SKINS): its textures, shown one after another."""

    frames: tuple[SkinFrame, ...]
    interval: float  # seconds each frame shows


@dataclass(frozen=True, slots=True, eq=False)
class Mesh:
    """One mesh; its arrays are copies, so they outlive the model."""

    index: int
    name: str
    shader: str  # shader, material or texture name; "" where none
    vertex_count: int
    triangle_count: int
    indices: npt.NDArray[np.uint32]  # (triangles, 3), front face (b - a) x (c - a)
    texcoords: FloatArray | None  # (vertices, 2) as stored; None where the format has none
    group_ids: npt.NDArray[np.uint32] | None  # (triangles,) DPM's; None elsewhere
    colors: npt.NDArray[np.uint8] | None  # (vertices, 4) RGBA (DMF, MM2 .mod); None elsewhere
    material: int  # index of the model's material, -1 where none
    skins: tuple[MeshSkin, ...]  # skin k of the model draws the mesh with skins[k] (IQM FTE_SKINS)


@dataclass(frozen=True, slots=True)
class AnimationEvent:
    time: float  # seconds from the scene's start
    bone: int  # -1 where the skeleton has no such bone
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class Animation:
    """A scene: a named run of frames played at a rate."""

    index: int
    name: str
    first_frame: int
    frame_count: int
    fps: float
    looping: bool
    events: tuple[AnimationEvent, ...]
    travel_distance: float  # model units per play, where the file says; else 0
    moving: bool

    @property
    def frames(self) -> range:
        return range(self.first_frame, self.first_frame + self.frame_count)

    @property
    def duration(self) -> float:
        return self.frame_count / self.fps if self.fps > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Property:
    list: int  # which of the owner's property lists, from 0
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class SuitSkin:
    bone: str  # the bone the mesh hangs on
    mesh: str  # the mesh's file name without .skn/.bmf
    censor_flags: int
    properties: tuple[Property, ...]


@dataclass(frozen=True, slots=True)
class Suit:
    """An outfit a Sims character file lists."""

    name: str
    kind: int  # 0 normal, 1 censor
    skins: tuple[SuitSkin, ...]
    properties: tuple[Property, ...]


@dataclass(frozen=True, slots=True)
class Texture:
    """A texture carried in the model's file (DMF)."""

    name: str
    width: int
    height: int
    flip_y: bool
    wrap_s: int  # 0 clamp, 1 mirror, 2 repeat
    wrap_t: int
    image: bytes  # the image file as stored (PNG)


class Skinned(NamedTuple):
    positions: FloatArray  # (vertices, 3)
    normals: FloatArray | None  # (vertices, 3), None when not asked for


class GpuWeights(NamedTuple):
    bones: npt.NDArray[np.uint16]  # (vertices, per_vertex), strongest first
    weights: FloatArray  # (vertices, per_vertex), each row sums to 1
    dropped: int  # most influences a vertex had beyond per_vertex


@dataclass(frozen=True, slots=True)
class OptimizeReport:
    bones_before: int
    bones_after: int
    triangles_moved: int
    vertices_moved: int
    acmr_before: float  # vertex-cache misses per triangle, FIFO of 16
    acmr_after: float


def _vec3(values: Any) -> tuple[float, float, float]:
    return (float(values[0]), float(values[1]), float(values[2]))


def _load_options(
    strict: bool,
    format: Format | str,
    name: str | None,
    skeleton: str | None,
    max_bytes: int,
    base_dir: StrPath | None,
    sample_fps: float = 0.0,
) -> tuple[Any, list[Any]]:
    """An initialised ossa_load_options, and the C strings it points to (kept alive by the caller)."""
    options = ffi.new("ossa_load_options *")
    lib.ossa_load_options_init(options)
    options.format = Format.parse(format)
    options.flags = lib.OSSA_LOAD_STRICT if strict else 0
    options.max_bytes = max_bytes
    options.sample_fps = sample_fps
    keep: list[Any] = []
    for field, value in (("name", name), ("skeleton", skeleton), ("base_dir", base_dir)):
        if value is not None:
            c_string = ffi.new("char[]", os.fsencode(value))
            keep.append(c_string)
            setattr(options, field, c_string)
    return options, keep


def load(
    source: StrPath | bytes | bytearray | memoryview,
    strict: bool = False,
    *,
    format: Format | str = Format.AUTO,
    name: str | None = None,
    skeleton: str | None = None,
    max_bytes: int = 0,
    base_dir: StrPath | None = None,
    sample_fps: float = 0.0,
) -> Model:
    """Loads a model from a path (sidecars such as `.framegroups` are read beside it) or from bytes.

    `strict` rejects what the default mode tolerates and repairs; `name` names in-memory data
    (its extension helps detection); `skeleton` picks one of a Sims CMX's skeletons; `max_bytes`
    caps the memory the model may use (0: the library default); `base_dir` is the directory a
    file and its sidecars may be read from (default: the file's own); `sample_fps` is the rate
    glTF animations are sampled at (0: their keys' own rate where evenly spaced, else 30).
    """
    out = ffi.new("ossa_model **")
    record = ffi.new("ossa_error *")
    options, keep = _load_options(strict, format, name, skeleton, max_bytes, base_dir, sample_fps)
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = ffi.from_buffer(source)
        code = lib.ossa_load_memory(data, len(data), options, out, record)
    else:
        code = lib.ossa_load_file(os.fsencode(source), options, out, record)
    del keep
    raise_record(code, record)
    return Model._adopt(out[0])


def _as_matrices(array: npt.ArrayLike, count: int, what: str) -> FloatArray:
    matrices = np.ascontiguousarray(array, dtype=np.float32)
    if matrices.shape != (count, 3, 4):
        raise InvalidArgumentError(f"{what} has shape {matrices.shape}; the model needs ({count}, 3, 4)")
    return matrices


def _output(array: npt.NDArray[Any] | None, shape: tuple[int, ...], dtype: type, what: str) -> npt.NDArray[Any]:
    """A caller's output array checked to be written in place by C, or a new one."""
    if array is None:
        return np.empty(shape, dtype=dtype)
    if array.dtype != dtype or array.shape != shape or not array.flags.c_contiguous or not array.flags.writeable:
        raise InvalidArgumentError(
            f"{what} must be a writable C-contiguous {np.dtype(dtype).name} array of shape {shape}; "
            f"got {array.dtype.name} {array.shape}"
        )
    return array


def _matrix_pointer(array: FloatArray) -> Any:
    return ffi.cast("ossa_mat3x4 *", ffi.from_buffer(array, require_writable=False))


class Model:
    """A loaded model. Close it (or use `with`) to free it at once; garbage collection frees it too."""

    def __init__(self) -> None:
        raise TypeError("models come from ossa.load, ossa.bind, Model.bind and Model.optimize")

    @classmethod
    def _adopt(cls, handle: Any) -> Model:
        model = cls.__new__(cls)
        model._handle = handle
        # finalize runs at most once: from close(), at collection or at interpreter exit.
        model._free = weakref.finalize(model, lib.ossa_model_free, handle)
        return model

    _handle: Any
    _free: "weakref.finalize[[Any], Model]"

    def close(self) -> None:
        """Frees the model; closing again does nothing. Arrays already returned stay valid."""
        self._free()

    @property
    def closed(self) -> bool:
        return not self._free.alive

    def __enter__(self) -> Model:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def _ptr(self) -> Any:
        if not self._free.alive:
            raise ValueError("operation on a closed ossa.Model")
        return self._handle

    def __repr__(self) -> str:
        if self.closed:
            return "<ossa.Model closed>"
        info = self.info
        return (
            f"<ossa.Model {info.format.name}: {info.bone_count} bones, {info.mesh_count} meshes, "
            f"{info.frame_count} frames, {info.vertex_count} vertices>"
        )

    # --- what the model holds -------------------------------------------------------------

    @cached_property
    def info(self) -> ModelInfo:
        raw = ffi.new("ossa_model_info *")
        check(lib.ossa_model_get_info(self._ptr, raw), "ossa_model_get_info")
        return ModelInfo(
            format=Format(raw.format),
            bone_count=raw.bone_count,
            mesh_count=raw.mesh_count,
            frame_count=raw.frame_count,
            animation_count=raw.animation_count,
            vertex_count=raw.vertex_count,
            triangle_count=raw.triangle_count,
            max_influences=raw.max_influences,
            unbound=bool(raw.flags & lib.OSSA_MODEL_UNBOUND),
            up_axis=raw.up_axis,
            handedness=raw.handedness,
            mins=_vec3(raw.mins),
            maxs=_vec3(raw.maxs),
        )

    @property
    def format(self) -> Format:
        return self.info.format

    @cached_property
    def bones(self) -> tuple[Bone, ...]:
        raw = ffi.new("ossa_bone_info *")
        bones = []
        for i in range(self.info.bone_count):
            check(lib.ossa_model_get_bone(self._ptr, i, raw), f"ossa_model_get_bone({i})")
            bones.append(Bone(i, text(raw.name), raw.parent, raw.flags))
        return tuple(bones)

    def find_bone(self, name: str) -> int | None:
        """The index of the bone called exactly `name`, or None."""
        index = lib.ossa_model_find_bone(self._ptr, name.encode())
        return None if index < 0 else int(index)

    @cached_property
    def frames(self) -> tuple[Frame, ...]:
        raw = ffi.new("ossa_frame_info *")
        frames = []
        for i in range(self.info.frame_count):
            check(lib.ossa_model_get_frame(self._ptr, i, raw), f"ossa_model_get_frame({i})")
            frames.append(Frame(i, text(raw.name), _vec3(raw.mins), _vec3(raw.maxs), raw.yaw_radius, raw.radius))
        return tuple(frames)

    def find_frame(self, name: str) -> int | None:
        index = lib.ossa_model_find_frame(self._ptr, name.encode())
        return None if index < 0 else int(index)

    @cached_property
    def meshes(self) -> tuple[Mesh, ...]:
        return tuple(self._mesh(i) for i in range(self.info.mesh_count))

    def _mesh(self, i: int) -> Mesh:
        raw = ffi.new("ossa_mesh_info *")
        check(lib.ossa_model_get_mesh(self._ptr, i, raw), f"ossa_model_get_mesh({i})")
        vertices, triangles = raw.vertex_count, raw.triangle_count

        def copy(pointer: Any, count: int, dtype: type, shape: tuple[int, ...]) -> npt.NDArray[Any] | None:
            if pointer == ffi.NULL:
                return None
            size = count * np.dtype(dtype).itemsize
            return np.frombuffer(ffi.buffer(pointer, size), dtype=dtype).reshape(shape).copy()

        indices = copy(raw.indices, 3 * triangles, np.uint32, (triangles, 3))
        return Mesh(
            index=i,
            name=text(raw.name),
            shader=text(raw.shader),
            vertex_count=vertices,
            triangle_count=triangles,
            indices=indices if indices is not None else np.empty((0, 3), np.uint32),
            texcoords=copy(raw.texcoords, 2 * vertices, np.float32, (vertices, 2)),
            group_ids=copy(raw.group_ids, triangles, np.uint32, (triangles,)),
            colors=copy(lib.ossa_mesh_colors(self._ptr, i), 4 * vertices, np.uint8, (vertices, 4)),
            material=int(lib.ossa_mesh_material(self._ptr, i)),
            skins=self._mesh_skins(i),
        )

    def _mesh_skins(self, i: int) -> tuple[MeshSkin, ...]:
        raw = ffi.new("ossa_skin_frame *")
        skins = []
        for k in range(lib.ossa_mesh_skin_count(self._ptr, i)):
            frames = []
            f, count, interval = 0, 1, 0.0
            while f < count:
                check(lib.ossa_mesh_get_skin_frame(self._ptr, i, k, f, raw), f"ossa_mesh_get_skin_frame({i}, {k}, {f})")
                frames.append(SkinFrame(material=text(raw.material), shader_text=text(raw.shader_text)))
                count, interval = raw.frame_count, raw.interval
                f += 1
            skins.append(MeshSkin(frames=tuple(frames), interval=interval))
        return tuple(skins)

    @cached_property
    def animations(self) -> tuple[Animation, ...]:
        raw = ffi.new("ossa_animation_info *")
        event = ffi.new("ossa_animation_event *")
        travel = ffi.new("ossa_animation_travel *")
        animations = []
        for i in range(self.info.animation_count):
            check(lib.ossa_model_get_animation(self._ptr, i, raw), f"ossa_model_get_animation({i})")
            events = []
            for e in range(lib.ossa_animation_event_count(self._ptr, i)):
                check(lib.ossa_animation_get_event(self._ptr, i, e, event), f"ossa_animation_get_event({i}, {e})")
                events.append(AnimationEvent(event.time, event.bone, text(event.key), text(event.value)))
            check(lib.ossa_animation_get_travel(self._ptr, i, travel), f"ossa_animation_get_travel({i})")
            animations.append(
                Animation(
                    index=i,
                    name=text(raw.name),
                    first_frame=raw.first_frame,
                    frame_count=raw.frame_count,
                    fps=raw.fps,
                    looping=bool(raw.looping),
                    events=tuple(events),
                    travel_distance=travel.distance,
                    moving=bool(travel.moving),
                )
            )
        return tuple(animations)

    @cached_property
    def suits(self) -> tuple[Suit, ...]:
        raw = ffi.new("ossa_suit_info *")
        skin = ffi.new("ossa_suit_skin *")
        prop = ffi.new("ossa_property *")

        def properties(count: int, get: Callable[[int], int], what: str) -> tuple[Property, ...]:
            found = []
            for p in range(count):
                check(get(p), what)
                found.append(Property(prop.list, text(prop.key), text(prop.value)))
            return tuple(found)

        suits = []
        for s in range(lib.ossa_model_suit_count(self._ptr)):
            check(lib.ossa_model_get_suit(self._ptr, s, raw), f"ossa_model_get_suit({s})")
            name, kind, skin_count, property_count = text(raw.name), raw.kind, raw.skin_count, raw.property_count
            skins = []
            for k in range(skin_count):
                check(lib.ossa_suit_get_skin(self._ptr, s, k, skin), f"ossa_suit_get_skin({s}, {k})")
                bone, mesh, censor, count = text(skin.bone), text(skin.mesh), skin.censor_flags, skin.property_count

                def skin_property(p: int, k: int = k) -> int:
                    return int(lib.ossa_suit_skin_get_property(self._ptr, s, k, p, prop))

                props = properties(count, skin_property, "ossa_suit_skin_get_property")
                skins.append(SuitSkin(bone, mesh, censor, props))
            props = properties(
                property_count, lambda p: lib.ossa_suit_get_property(self._ptr, s, p, prop), "ossa_suit_get_property"
            )
            suits.append(Suit(name, kind, tuple(skins), props))
        return tuple(suits)

    @cached_property
    def textures(self) -> tuple[Texture, ...]:
        raw = ffi.new("ossa_texture_info *")
        textures = []
        for t in range(lib.ossa_model_texture_count(self._ptr)):
            check(lib.ossa_model_get_texture(self._ptr, t, raw), f"ossa_model_get_texture({t})")
            image = bytes(ffi.buffer(raw.image, raw.image_size)) if raw.image != ffi.NULL else b""
            textures.append(
                Texture(text(raw.name), raw.width, raw.height, bool(raw.flip_y), raw.wrap_s, raw.wrap_t, image)
            )
        return tuple(textures)

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the default mode tolerated or repaired while loading."""
        count = lib.ossa_model_warning_count(self._ptr)
        return tuple(text(lib.ossa_model_warning(self._ptr, i)) for i in range(count))

    # --- posing ---------------------------------------------------------------------------

    def _blends(self, blends: Blend) -> tuple[Any, int]:
        pairs = [(blends, 1.0)] if isinstance(blends, (int, np.integer)) else list(blends)
        array = ffi.new("ossa_frame_blend[]", max(len(pairs), 1))
        for slot, (frame, weight) in zip(array, pairs):
            slot.frame = int(frame)
            slot.weight = float(weight)
        return array, len(pairs)

    def pose(self, blends: Blend = 0, root: npt.ArrayLike | None = None, out: FloatArray | None = None) -> FloatArray:
        """Model-space bone matrices, (bones, 3, 4) float32 rows acting on column vectors.

        `blends` is a frame index or up to 8 (frame, weight) pairs; the library normalises the
        weights. `root` (3, 4) places parentless bones (default: identity).
        """
        count = self.info.bone_count
        out = _output(out, (count, 3, 4), np.float32, "out")
        c_blends, n = self._blends(blends)
        c_root = ffi.NULL if root is None else _matrix_pointer(_as_matrices(np.reshape(root, (1, 3, 4)), 1, "root"))
        check(
            lib.ossa_pose_frames(self._ptr, c_blends, n, c_root, _matrix_pointer(out), count),
            f"ossa_pose_frames({blends!r})",
        )
        return out

    def pose_local(self, blends: Blend = 0, out: FloatArray | None = None) -> FloatArray:
        """The same blend, parent-relative, to edit before `concat`."""
        count = self.info.bone_count
        out = _output(out, (count, 3, 4), np.float32, "out")
        c_blends, n = self._blends(blends)
        check(
            lib.ossa_pose_frames_local(self._ptr, c_blends, n, _matrix_pointer(out), count),
            f"ossa_pose_frames_local({blends!r})",
        )
        return out

    def concat(
        self, local: npt.ArrayLike, root: npt.ArrayLike | None = None, out: FloatArray | None = None
    ) -> FloatArray:
        """Model-space matrices from parent-relative ones (dynamic animation)."""
        count = self.info.bone_count
        local = _as_matrices(local, count, "local")
        out = _output(out, (count, 3, 4), np.float32, "out")
        c_root = ffi.NULL if root is None else _matrix_pointer(_as_matrices(np.reshape(root, (1, 3, 4)), 1, "root"))
        check(
            lib.ossa_pose_concat(self._ptr, _matrix_pointer(local), c_root, _matrix_pointer(out), count),
            "ossa_pose_concat",
        )
        return out

    def animation_blend(self, animation: int, seconds: float) -> list[tuple[int, float]]:
        """The one or two (frame, weight) pairs to pose for `animation` at `seconds`."""
        c_blends = ffi.new("ossa_frame_blend[2]")
        count = ffi.new("size_t *")
        check(
            lib.ossa_animation_blend(self._ptr, animation, seconds, c_blends, count),
            f"ossa_animation_blend({animation}, {seconds})",
        )
        return [(c_blends[i].frame, c_blends[i].weight) for i in range(count[0])]

    def pose_at(self, animation: int, seconds: float, root: npt.ArrayLike | None = None) -> FloatArray:
        """The pose of `animation` `seconds` after it started."""
        return self.pose(self.animation_blend(animation, seconds), root)

    # --- skinning -------------------------------------------------------------------------

    def _skin_target(
        self, mesh: int | Mesh, first: int, count: int | None, positions: FloatArray | None, normals: bool | FloatArray
    ) -> tuple[int, int, int, Skinned, Any, list[Any]]:
        index = mesh.index if isinstance(mesh, Mesh) else int(mesh)
        if not 0 <= index < self.info.mesh_count:
            raise InvalidArgumentError(f"mesh {index} out of range (model has {self.info.mesh_count} meshes)")
        if count is None:
            raw = ffi.new("ossa_mesh_info *")
            check(lib.ossa_model_get_mesh(self._ptr, index, raw), f"ossa_model_get_mesh({index})")
            count = raw.vertex_count - first
        positions = _output(positions, (count, 3), np.float32, "positions")
        normal_array: FloatArray | None = None
        if normals is True:
            normal_array = np.empty((count, 3), np.float32)
        elif normals is not False:
            normal_array = _output(normals, (count, 3), np.float32, "normals")
        target = ffi.new("ossa_skin_target *")
        # The library writes straight into the numpy buffers: no copy on this side.
        keep = [ffi.from_buffer("float[]", positions, require_writable=True)]
        target.positions, target.position_stride, target.position_bytes = keep[0], 12, positions.nbytes
        if normal_array is not None:
            keep.append(ffi.from_buffer("float[]", normal_array, require_writable=True))
            target.normals, target.normal_stride, target.normal_bytes = keep[1], 12, normal_array.nbytes
        return index, first, count, Skinned(positions, normal_array), target, keep

    def skin(
        self,
        mesh: int | Mesh,
        pose: npt.ArrayLike,
        *,
        positions: FloatArray | None = None,
        normals: bool | FloatArray = True,
        normalize: bool = False,
        first: int = 0,
        count: int | None = None,
    ) -> Skinned:
        """Skins vertices [first, first + count) of `mesh` with a pose from `pose`.

        Returns (positions, normals), each (count, 3) float32. Pass arrays as `positions` and
        `normals` to have them filled in place; `normals=False` skips normals; `normalize`
        makes them unit length.
        """
        bones = _as_matrices(pose, self.info.bone_count, "pose")
        index, first, count, result, target, keep = self._skin_target(mesh, first, count, positions, normals)
        flags = lib.OSSA_SKIN_NORMALIZE if normalize else 0
        check(
            lib.ossa_skin_mesh(self._ptr, index, _matrix_pointer(bones), len(bones), first, count, flags, target),
            f"ossa_skin_mesh(mesh {index}, vertices {first}..{first + count})",
        )
        del keep
        return result

    def skin_model(
        self,
        pose: npt.ArrayLike,
        *,
        normals: bool = True,
        normalize: bool = False,
    ) -> tuple[Skinned, ...]:
        """Skins every mesh, whole, with a pose from `pose`, in one call of the library.

        Returns one (positions, normals) per mesh, as `skin` gives for each; `normals=False`
        skips normals; `normalize` makes them unit length.
        """
        bones = _as_matrices(pose, self.info.bone_count, "pose")
        count = self.info.mesh_count
        targets = ffi.new("ossa_skin_target[]", max(count, 1))
        results = []
        keep: list[Any] = []
        for m in range(count):
            _, _, _, result, target, kept = self._skin_target(m, 0, None, None, normals)
            targets[m] = target[0]
            results.append(result)
            keep.extend(kept)
        flags = lib.OSSA_SKIN_NORMALIZE if normalize else 0
        check(
            lib.ossa_skin_model(self._ptr, _matrix_pointer(bones), len(bones), flags, targets, count),
            "ossa_skin_model",
        )
        del keep
        return tuple(results)

    def bind_vertices(
        self,
        mesh: int | Mesh,
        *,
        positions: FloatArray | None = None,
        normals: bool | FloatArray = True,
        normalize: bool = False,
        first: int = 0,
        count: int | None = None,
    ) -> Skinned:
        """The bind-pose (frame 0) vertices a GPU skins, laid out as `skin` lays them."""
        index, first, count, result, target, keep = self._skin_target(mesh, first, count, positions, normals)
        flags = lib.OSSA_SKIN_NORMALIZE if normalize else 0
        check(
            lib.ossa_mesh_bind_vertices(self._ptr, index, first, count, flags, target),
            f"ossa_mesh_bind_vertices(mesh {index})",
        )
        del keep
        return result

    def gpu_weights(self, mesh: int | Mesh, per_vertex: int = 4) -> GpuWeights:
        """Each vertex's `per_vertex` strongest influences, renormalised."""
        index = mesh.index if isinstance(mesh, Mesh) else int(mesh)
        vertices = self.meshes[index].vertex_count
        bones = np.empty((vertices, per_vertex), np.uint16)
        weights = np.empty((vertices, per_vertex), np.float32)
        dropped = ffi.new("uint32_t *")
        check(
            lib.ossa_mesh_gpu_weights(
                self._ptr,
                index,
                per_vertex,
                ffi.from_buffer("uint16_t[]", bones, require_writable=True),
                ffi.from_buffer("float[]", weights, require_writable=True),
                bones.size,
                dropped,
            ),
            f"ossa_mesh_gpu_weights(mesh {index}, {per_vertex})",
        )
        return GpuWeights(bones, weights, dropped[0])

    def inverse_bind(self) -> FloatArray:
        """The inverse of every bone's bind-pose matrix, (bones, 3, 4)."""
        out = np.empty((self.info.bone_count, 3, 4), np.float32)
        check(lib.ossa_model_inverse_bind(self._ptr, _matrix_pointer(out), len(out)), "ossa_model_inverse_bind")
        return out

    def skinning_matrices(self, pose: npt.ArrayLike) -> FloatArray:
        """`pose[i] * inverse_bind[i]`: what a vertex shader multiplies bind-pose vertices with."""
        bones = _as_matrices(pose, self.info.bone_count, "pose")
        out = np.empty_like(bones)
        check(
            lib.ossa_skinning_matrices(self._ptr, _matrix_pointer(bones), _matrix_pointer(out), len(out)),
            "ossa_skinning_matrices",
        )
        return out

    # --- pictures -------------------------------------------------------------------------

    def render(
        self,
        pose: npt.ArrayLike | None = None,
        *,
        width: int = 256,
        height: int = 256,
        view: View | str = View.THREE_QUARTER,
        yaw: float | None = None,
        pitch: float | None = None,
        background: Sequence[int] = (48, 48, 48, 255),
        wireframe: bool = False,
        bones: bool = False,
        antialias: bool = False,
        textures: Sequence[npt.ArrayLike | None] = (),
    ) -> npt.NDArray[np.uint8]:
        """The model drawn at `pose` (model-space matrices as `pose()` gives; None: frame 0).

        Returns (height, width, 4) RGBA8, rows top to bottom; the same input gives the same
        pixels on every machine. `view` is a View or its name ("front", "three-quarter");
        `yaw` and `pitch` (degrees) override it. `textures`: per mesh from the first, None or an
        (h, w, 4) uint8 RGBA image sampled with the mesh's texture coordinates.
        """
        if isinstance(view, str):
            try:
                view = View[view.upper().replace("-", "_")]
            except KeyError:
                raise InvalidArgumentError(f"view {view!r} is not front, side, top or three-quarter") from None
        options = ffi.new("ossa_render_options *")
        lib.ossa_render_options_init(options)
        options.width, options.height, options.view = int(width), int(height), int(view)
        options.yaw_degrees = float("nan") if yaw is None else float(yaw)
        options.pitch_degrees = float("nan") if pitch is None else float(pitch)
        colour = [int(c) for c in background]
        if len(colour) != 4 or not all(0 <= c <= 255 for c in colour):
            raise InvalidArgumentError(f"background {tuple(background)} is not 4 values of 0 to 255")
        options.background = colour
        options.flags = (
            (lib.OSSA_RENDER_WIREFRAME if wireframe else 0)
            | (lib.OSSA_RENDER_BONES if bones else 0)
            | (lib.OSSA_RENDER_ANTIALIAS if antialias else 0)
        )
        keep: list[Any] = []
        if textures:
            entries = ffi.new("ossa_render_texture[]", len(textures))
            for k, image in enumerate(textures):
                if image is None:
                    continue
                pixels = np.ascontiguousarray(image, dtype=np.uint8)
                if pixels.ndim != 3 or pixels.shape[2] != 4:
                    raise InvalidArgumentError(f"texture {k} is {pixels.shape}, not (height, width, 4) RGBA")
                keep.append(pixels)
                entries[k].height, entries[k].width = pixels.shape[0], pixels.shape[1]
                entries[k].rgba = ffi.from_buffer("uint8_t[]", pixels)
            options.textures, options.texture_count = entries, len(textures)
            keep.append(entries)
        out = np.empty((int(height), int(width), 4), np.uint8) if width > 0 and height > 0 else np.empty(0, np.uint8)
        if pose is None:
            matrices, count = ffi.NULL, 0
        else:
            bones_in = _as_matrices(pose, self.info.bone_count, "pose")
            keep.append(bones_in)
            matrices, count = _matrix_pointer(bones_in), len(bones_in)
        check(
            lib.ossa_render(
                self._ptr, matrices, count, options, ffi.from_buffer("uint8_t[]", out, require_writable=True), out.nbytes
            ),
            f"ossa_render({width}x{height})",
        )
        del keep
        return out

    # --- new models -----------------------------------------------------------------------

    def bind(self, skeleton: Model) -> Model:
        """A new model with these meshes on `skeleton`'s bones (SKM on SKP, Sims mesh on CMX...)."""
        return bind(self, skeleton)

    def add_animations(self, animations: Model) -> Model:
        """A new model with the frames and scenes of `animations` after its own: an
        animation-only IQM (its poses bound by index) or a model whose bones match by name."""
        out = ffi.new("ossa_model **")
        record = ffi.new("ossa_error *")
        raise_record(lib.ossa_model_add_animations(self._ptr, animations._ptr, out, record), record)
        return Model._adopt(out[0])

    def optimize(self, flags: OptimizeFlag | int) -> tuple[Model, OptimizeReport]:
        out = ffi.new("ossa_model **")
        report = ffi.new("ossa_optimize_report *")
        record = ffi.new("ossa_error *")
        raise_record(lib.ossa_model_optimize(self._ptr, int(flags), out, report, record), record)
        return Model._adopt(out[0]), OptimizeReport(
            report.bones_before,
            report.bones_after,
            report.triangles_moved,
            report.vertices_moved,
            report.acmr_before,
            report.acmr_after,
        )

    def add_skills(self, path: StrPath, strict: bool = False, *, base_dir: StrPath | None = None) -> Model:
        """A new model with every skill of a Sims CMX/BCF (and its CFPs beside it) as animations."""
        out = ffi.new("ossa_model **")
        record = ffi.new("ossa_error *")
        options, keep = _load_options(strict, Format.AUTO, None, None, 0, base_dir)
        code = lib.ossa_model_add_skills(self._ptr, os.fsencode(path), options, out, record)
        del keep
        raise_record(code, record)
        return Model._adopt(out[0])

    # --- saving ---------------------------------------------------------------------------

    def write(self, stream: BinaryIO, format: Format | str, optimize: OptimizeFlag | int = 0) -> None:
        """Writes the model as `format` to a binary stream, as the library hands out its bytes."""
        fmt = Format.parse(format)
        failure: list[BaseException] = []

        def write_chunk(_user: Any, data: Any, size: int) -> int:
            try:
                stream.write(ffi.buffer(data, size))
                return int(lib.OSSA_OK)
            except BaseException as exc:  # handed back to the caller below; C cannot unwind
                failure.append(exc)
                return int(lib.OSSA_ERR_IO)

        callback = ffi.callback("ossa_write_fn", write_chunk)
        record = ffi.new("ossa_error *")
        code = lib.ossa_save(self._ptr, fmt, int(optimize), callback, ffi.NULL, record)
        if failure:
            raise failure[0]
        raise_record(code, record)

    def to_bytes(self, format: Format | str, optimize: OptimizeFlag | int = 0) -> bytes:
        buffer = io.BytesIO()
        self.write(buffer, format, optimize)
        return buffer.getvalue()

    def save(
        self,
        path: StrPath,
        format: Format | str | None = None,
        optimize: OptimizeFlag | int = 0,
        *,
        engine: Any = None,
        sidecars: bool = False,
        player: bool = False,
        source: StrPath | None = None,
    ) -> list[str]:
        """Saves to `path` as `format`, by default the one its extension names (as the CLI does),
        with the files `ossa convert` writes beside it; returns the paths written, `path` first.

        IQM: `engine` (an `Engine` or its name) writes what that engine loads, with the sidecars
        it reads (`NAME.framegroups`; `animation.cfg` for a qfusion or Warfork player model);
        `sidecars` writes them for any engine or none; `player` makes a qfusion or Warfork player
        model (name it `tris.iqm`); `source`, the model's file, has its `.skin` files written
        again beside the IQM. A Sims CMX or BCF comes with its skills' CFPs. An engine's refusal
        raises the error naming its rule, and nothing is written."""
        from .engines import Engine

        fmt = Format.from_path(path) if format is None else Format.parse(format)
        options = ffi.new("ossa_save_options *")
        lib.ossa_save_options_init(options)
        options.flags = int(optimize)
        if engine is not None:
            options.engine = int(Engine.parse(engine))
        options.save_flags = (int(lib.OSSA_SAVE_SIDECARS) if sidecars else 0) | (
            int(lib.OSSA_SAVE_PLAYER) if player else 0
        )
        output_name = ffi.new("char[]", os.fsencode(os.path.basename(os.fspath(path))))
        options.output_name = output_name
        source_name = ffi.new("char[]", os.fsencode(source)) if source is not None else ffi.NULL
        options.name = source_name
        beside: dict[str, bytes] = {}
        failure: list[BaseException] = []

        def take_file(_user: Any, name: Any, data: Any, size: int) -> int:
            try:
                beside[os.fsdecode(ffi.string(name))] = bytes(ffi.buffer(data, size))
                return int(lib.OSSA_OK)
            except BaseException as exc:  # handed back to the caller below; C cannot unwind
                failure.append(exc)
                return int(lib.OSSA_ERR_IO)

        # Held here: a struct field does not keep the callback alive.
        beside_callback = ffi.callback("ossa_beside_fn", take_file)
        options.beside = beside_callback
        stream = io.BytesIO()

        def write_chunk(_user: Any, data: Any, size: int) -> int:
            stream.write(ffi.buffer(data, size))
            return int(lib.OSSA_OK)

        callback = ffi.callback("ossa_write_fn", write_chunk)
        record = ffi.new("ossa_error *")
        code = lib.ossa_save_with(self._ptr, fmt, options, callback, ffi.NULL, record)
        if failure:
            raise failure[0]
        raise_record(code, record)
        directory = os.path.dirname(os.fspath(path))
        files = [(os.fspath(path), stream.getvalue())]
        files += [(os.path.join(directory, name), data) for name, data in beside.items()]
        written: list[str] = []
        try:
            for file, data in files:
                with open(file, "wb") as out:
                    written.append(file)
                    out.write(data)
        except BaseException:
            # No half-written set is left behind.
            for file in written:
                os.unlink(file)
            raise
        return written


def bind(meshes: Model, skeleton: Model) -> Model:
    """A new model whose meshes (SKM, Sims SKN/BMF, MM2 .mod) use `skeleton`'s bones."""
    out = ffi.new("ossa_model **")
    record = ffi.new("ossa_error *")
    raise_record(lib.ossa_model_bind(meshes._ptr, skeleton._ptr, out, record), record)
    return Model._adopt(out[0])


def version() -> tuple[int, int, int]:
    """The loaded library's (major, minor, patch)."""
    packed = lib.ossa_version()
    return (packed >> 16) & 0xFF, (packed >> 8) & 0xFF, packed & 0xFF
