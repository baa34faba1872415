//! The one in-memory model every format loads into.
//!
//! A model is a skeleton (bones, frames of parent-relative poses, animation scenes), shared
//! through an `Arc` so that several meshes bound to one skeleton keep one copy, and meshes whose
//! vertices are lists of influences. One influence form carries every format exactly:
//! `p = sum_k (R_k o_k + f_k t_k)`, `n = sum_k R_k n_k`. DPM and SKM store it as is; a Sims
//! vertex with a blend becomes two influences with `o = (1 - w) p_real`, `f = 1 - w` and
//! `o = w p_blend`, `f = w`; an MM2 vertex one influence with `f = 1`; a DMF vertex its weights
//! with origins taken into bone space through the inverse bind pose.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result, amount};
use crate::format::Format;
use crate::format::{Kernel, with_simd};
use crate::math::{MAX_MAGNITUDE, Mat3x4, in_range};
use crate::name_index::NameIndex;
use crate::poses::Poses;
use crate::skin::{MeshBones, SkinLayout, SkinPlan, Survey};

/// A name as the file stores it: bytes (no encoding is promised), kept with a trailing NUL so
/// that the C layer can hand it out without copying. A short name (most bone and frame names
/// are) is held in place: a model has thousands of names, a frame's and its scene's, and
/// allocating each of them cost more than reading the rest of the file.
#[derive(Clone)]
pub struct Name(NameBytes);

/// Bytes a name holds in place, its NUL included.
const INLINE_NAME: usize = 22;

#[derive(Clone)]
enum NameBytes {
    /// The name and its NUL are `bytes[..len]`.
    Inline {
        len: u8,
        bytes: [u8; INLINE_NAME],
    },
    Heap(Box<[u8]>),
}

impl Name {
    /// Takes the bytes up to the first NUL.
    pub fn new(bytes: &[u8]) -> Name {
        // A name that ends inside the first bytes of a fixed field (most do): those bytes as
        // they are, copied whole, the terminator among them; what follows it is never read.
        if let Some(head) = bytes.first_chunk::<INLINE_NAME>()
            && let Some(end) = head.iter().position(|&b| b == 0)
        {
            return Name(NameBytes::Inline {
                len: end as u8 + 1,
                bytes: *head,
            });
        }
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        let name = bytes.get(..end).unwrap_or_default();
        let mut inline = [0u8; INLINE_NAME];
        if let (Some(slot), Ok(len)) = (inline.get_mut(..end), u8::try_from(end + 1))
            && end < INLINE_NAME
        {
            slot.copy_from_slice(name);
            return Name(NameBytes::Inline { len, bytes: inline });
        }
        let mut v = Vec::with_capacity(end + 1);
        v.extend_from_slice(name);
        v.push(0);
        Name(NameBytes::Heap(v.into_boxed_slice()))
    }

    pub fn empty() -> Name {
        Name::new(&[])
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.as_bytes_with_nul()
            .split_last()
            .map_or(&[][..], |(_, rest)| rest)
    }

    /// The bytes followed by their NUL terminator.
    pub fn as_bytes_with_nul(&self) -> &[u8] {
        match &self.0 {
            NameBytes::Inline { len, bytes } => bytes.get(..*len as usize).unwrap_or(&[0]),
            NameBytes::Heap(bytes) => bytes,
        }
    }

    /// Bytes the name holds on the heap: none when it is held in place.
    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.0 {
            NameBytes::Inline { .. } => 0,
            NameBytes::Heap(bytes) => bytes.len(),
        }
    }

    /// The name as text; bytes that are not UTF-8 are read as Latin-1, as the old tools wrote them.
    pub fn to_string_lossy(&self) -> String {
        match std::str::from_utf8(self.as_bytes()) {
            Ok(s) => s.to_owned(),
            Err(_) => self.as_bytes().iter().map(|&b| b as char).collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.as_bytes().is_empty()
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.as_bytes_with_nul() == other.as_bytes_with_nul()
    }
}

impl Eq for Name {}

impl std::hash::Hash for Name {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes_with_nul().hash(state);
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        Name::new(s.as_bytes())
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.to_string_lossy())
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

/// Bone flag: protected from removal by savers (an attachment point).
pub const BONE_ATTACHMENT: u32 = 1;
/// Bone flag: not in the file; the loader added it so that vertices the file binds to no bone
/// keep their place (a DMF without bones, or DMF vertices without weights). It stays at the
/// origin unrotated in every frame, and savers of formats that bind every vertex leave it out.
pub const BONE_SYNTHETIC: u32 = 2;

#[derive(Clone, Debug, PartialEq)]
pub struct Bone {
    pub name: Name,
    /// An earlier bone's index, or -1 for a root.
    pub parent: i32,
    pub flags: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub name: Name,
    pub mins: [f32; 3],
    pub maxs: [f32; 3],
    pub yaw_radius: f32,
    pub radius: f32,
}

impl Frame {
    pub fn named(name: &str) -> Frame {
        Frame {
            name: Name::from(name),
            mins: [0.0; 3],
            maxs: [0.0; 3],
            yaw_radius: 0.0,
            radius: 0.0,
        }
    }
}

/// Bounds a file declares for a whole model (over all its frames), kept so that a model saved
/// again keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Extent {
    pub mins: [f32; 3],
    pub maxs: [f32; 3],
    /// Largest distance from the up axis.
    pub yaw_radius: f32,
    /// Largest distance from the origin.
    pub radius: f32,
}

/// A texture a model carries inside its file (DMF): the image file's bytes as stored (PNG) and
/// how it is sampled. Numbers are the file's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Texture {
    /// The file's id; materials refer to textures by position, not by id.
    pub id: i16,
    pub name: Name,
    pub width: u16,
    pub height: u16,
    /// 1: the image is flipped vertically when uploaded (three.js' `flipY`).
    pub flip_y: u16,
    /// 0 clamp, 1 mirror, 2 repeat.
    pub wrap_s: u16,
    pub wrap_t: u16,
    pub image: Vec<u8>,
}

/// A material a model's meshes refer to (DMF), every field kept so that it saves unchanged.
/// The numbers are the DMF 1.5 constants.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Material {
    /// The file's id; faces refer to materials by position, not by id.
    pub id: i16,
    pub name: Name,
    /// The diffuse texture, by position in the model's textures.
    pub texture: Option<u32>,
    pub use_blending: u16,
    /// 0 normal, 1 additive, 2 subtract, 3 multiply.
    pub blend_equation: u16,
    /// 0 zero, 1 one, 2 src colour, 3 one minus src colour, 4 src alpha, 5 one minus src alpha,
    /// 6 dst alpha, 7 one minus dst alpha, 8 dst colour, 9 one minus dst colour, 10 src alpha
    /// saturate.
    pub blend_src: u16,
    pub blend_dst: u16,
    pub skinning: u16,
    /// 0 basic, 1 lambert, 2 phong.
    pub shader_type: u16,
    /// 0 front, 1 back, 2 double.
    pub face_side: u16,
    pub shadow_side: u16,
    pub ignore_lights: u16,
    pub vertex_color: u16,
    pub use_alpha: u16,
    pub skip_render: u16,
    pub alpha_test: f32,
    /// Red, green, blue, alpha.
    pub diffuse: [f32; 4],
    /// Red, green, blue, intensity.
    pub emissive: [f32; 4],
    /// Red, green, blue, shininess.
    pub specular: [f32; 4],
}

/// Keyframe channel flags.
pub const KEY_POSITION: u16 = 1;
pub const KEY_ROTATION: u16 = 2;
pub const KEY_SCALE: u16 = 4;

/// One bone's parent-relative transform at one time, for the channels `flags` names; the
/// others are zero.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Keyframe {
    pub bone: u32,
    /// `KEY_POSITION | KEY_ROTATION | KEY_SCALE`, at least one.
    pub flags: u16,
    /// Seconds from the start of the animation.
    pub time: f32,
    pub position: [f32; 3],
    /// (x, y, z, w) as stored; normalised when sampled.
    pub rotation: [f32; 4],
    pub scale: [f32; 3],
}

/// The keyframes an animation scene's frames were sampled from, for formats that store keys
/// (DMF), kept so that the model saves its own keys rather than one key per frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyedAnimation {
    /// The scene, by position in the model's animations.
    pub animation: u32,
    /// The file's id (for show).
    pub id: i16,
    /// Seconds.
    pub duration: f32,
    pub keys: Vec<Keyframe>,
}

/// A named run of frames played at a rate: an animation scene.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Animation {
    pub name: Name,
    pub first_frame: u32,
    /// 0 for a scene without frames (a Sims skill whose numbers are missing).
    pub frame_count: u32,
    pub fps: f32,
    pub looping: bool,
    /// How far one play moves the character along its way, in model units, where the file
    /// says (a Sims skill's distance); 0 elsewhere.
    pub distance: f32,
    /// Whether the scene moves the character (a Sims skill's moving flag); false elsewhere.
    pub moving: bool,
}

/// Something that happens at a time of an animation scene: a Sims skill's time property
/// (`footstep`, `anchor`, `xevt`, `interruptable`...), which the game's scripts act on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnimationEvent {
    /// The scene, by position in the model's animations.
    pub animation: u32,
    /// Seconds from the start of the scene.
    pub time: f32,
    /// The bone whose motion carries the event; -1 where the skeleton has no such bone.
    pub bone: i32,
    pub key: Name,
    pub value: Name,
}

/// A key and its value from one of a file's property lists (Sims CMX); keys need not be unique.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Property {
    /// Which of the owner's property lists it is in, counted from 0.
    pub list: u32,
    pub key: Name,
    pub value: Name,
}

/// An outfit: the meshes a character wears and the bones they hang on (a Sims CMX suit).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Suit {
    pub name: Name,
    /// The file's suit type (0 normal, 1 censor in the game's files).
    pub kind: u32,
    pub properties: Vec<Property>,
    pub skins: Vec<SuitSkin>,
}

/// One mesh of a suit: the mesh's file name without its extension (`.skn` or `.bmf`), the bone
/// it is attached to, and the censor flags (the body parts its censor box covers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SuitSkin {
    pub bone: Name,
    pub mesh: Name,
    pub censor_flags: u32,
    pub properties: Vec<Property>,
}

/// One bone's share of a vertex: skinning adds `R origin + weight t` to the position and
/// `R normal` to the normal, `[R | t]` the bone's model-space matrix. `origin` is in the bone's
/// bind space, already multiplied by `weight`; so is `normal` in DPM and SKM, while a Sims
/// vertex keeps its real normal whole on its real bone and none on its blend bone. The field
/// order is DPM's, so that a SIMD kernel reads origin+weight and normal+bone as two 4-lane loads;
/// 32-byte aligned (its size), so that such a load never straddles two cache lines.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Influence {
    pub origin: [f32; 3],
    pub weight: f32,
    pub normal: [f32; 3],
    pub bone: u32,
}

/// One of a mesh's skins (IQM's `FTE_SKINS`): the textures it is drawn with, one after another
/// every `interval` seconds when it has several (FTE draws the first four).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshSkin {
    pub frames: Vec<SkinFrame>,
    pub interval: f32,
}

/// One texture of a [`MeshSkin`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinFrame {
    /// The material, named as the model's meshes name theirs.
    pub material: Name,
    /// Shader text FTE compiles for it; empty when the material is found as a file.
    pub shader_text: Name,
}

/// What a file holds that ossa does not use but keeps, so that saving the model in its format
/// again writes it (IQM: the comment, and the extensions other than `FTE_EVENT` and
/// `FTE_SKINS`, which the model holds as events and skins; Sims CMX and BCF: the skeleton's
/// record).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Kept {
    pub comment: Vec<u8>,
    pub extensions: Vec<KeptExtension>,
    /// The file's text block, where a kept extension may name strings by offset into it: the
    /// writer puts it first again so that those offsets still hold.
    pub text: Vec<u8>,
    /// The record of the skeleton the model's bones were read from, in a Sims character file
    /// (CMX, BCF): its name, and each bone's flags, wiggle values, property lists and stored
    /// quaternion, which the model has no place for. It goes with the bones (to meshes bound to
    /// them, a suit dressed on them, skills added to them); saving as CMX or BCF writes the
    /// skeleton's name and, for each bone of the same name, those fields, and its quaternion
    /// where the bone's rest pose is still the one it gives.
    pub cmx_skeleton: Option<Arc<crate::format::cmx::KeptSkeleton>>,
}

/// An extension of a file, kept as its bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeptExtension {
    pub name: Name,
    pub data: Vec<u8>,
}

impl Kept {
    pub fn is_empty(&self) -> bool {
        self.comment.is_empty() && self.extensions.is_empty() && self.cmx_skeleton.is_none()
    }
    fn heap_bytes(&self) -> usize {
        self.comment.len()
            + self.text.len()
            + (self.extensions.iter())
                .map(|e| e.data.len() + e.name.as_bytes().len() + 1 + size_of::<KeptExtension>())
                .sum::<usize>()
            + self
                .cmx_skeleton
                .as_deref()
                .map_or(0, crate::format::cmx::KeptSkeleton::heap_bytes)
    }
}

/// What a loader hands over for one mesh.
#[derive(Clone, Debug, Default)]
pub struct MeshParts {
    pub name: Name,
    pub shader: Name,
    /// Vertex `v` owns `influences[influence_start[v]..influence_start[v + 1]]`;
    /// `vertex_count + 1` entries starting with 0.
    pub influence_start: Vec<u32>,
    pub influences: Vec<Influence>,
    /// Three per triangle, front face `(b - a) x (c - a)`.
    pub indices: Vec<u32>,
    pub texcoords: Option<Vec<[f32; 2]>>,
    pub group_ids: Option<Vec<u32>>,
    /// The bones the file lists as used by this mesh (SKM's references); informational.
    pub references: Option<Vec<u32>>,
    /// The mesh's material, by position in the model's materials (DMF).
    pub material: Option<u32>,
    /// Red, green, blue, alpha per vertex (DMF, MM2 `.mod`).
    pub colors: Option<Vec<[u8; 4]>>,
    /// Model-space bind-pose positions and normals as the file stores them, for formats that
    /// store vertices so (DMF): the influences give the same points, and savers of such formats
    /// write these bits rather than recomputing them.
    pub bind_positions: Option<Vec<[f32; 3]>>,
    pub bind_normals: Option<Vec<[f32; 3]>>,
    /// How a Sims `.msh` file laid the mesh out, kept so that saving it as `.msh` again writes
    /// the same bytes; `None` for other formats. Its lists follow the vertices and triangles
    /// when the optimiser reorders them.
    pub msh: Option<MshLayout>,
    /// The mesh's own skins (IQM's `FTE_SKINS`): skin `k` of the model draws the mesh with
    /// `skins[k]`, or with its shader past the end.
    pub skins: Vec<MeshSkin>,
}

/// What a Sims `.msh` file holds beside the mesh itself: its vertices index shared position and
/// texture coordinate tables, and carry words the game never reads. The positions and texture
/// coordinates themselves are the mesh's (every table entry is used by a vertex in the files).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MshLayout {
    /// Entries of the position table.
    pub positions: u32,
    /// Entries of the texture coordinate table.
    pub texcoords: u32,
    /// Per vertex: its position index, its texture coordinate index, and its last word (unused,
    /// uninitialised memory in the files).
    pub vertices: Vec<[u32; 3]>,
    /// Per triangle: the face record's last word (0 in every known file).
    pub faces: Vec<u32>,
    /// The normals that were not numbers in the file (NaN, as the exporter wrote for some
    /// corners), which the mesh holds as zero: each vertex and the stored bits.
    pub bad_normals: Vec<(u32, [u32; 3])>,
}

impl MshLayout {
    fn heap_bytes(&self) -> usize {
        self.vertices.len() * 12 + self.faces.len() * 4 + self.bad_normals.len() * 16
    }
}

impl Default for Name {
    fn default() -> Name {
        Name::empty()
    }
}

/// How meshes that came without their skeleton refer to bones until [`Model::bind`] gives them one.
#[derive(Clone, Debug, PartialEq)]
pub enum BoneSlots {
    /// Influences index the skeleton's bones directly; it must have exactly this many (SKM).
    ByIndex(u32),
    /// Influence `bone` indexes this list; each name is found in the skeleton, ignoring ASCII case
    /// (Sims meshes).
    ByName(Vec<Name>),
}

impl BoneSlots {
    pub fn count(&self) -> usize {
        match self {
            BoneSlots::ByIndex(n) => *n as usize,
            BoneSlots::ByName(names) => names.len(),
        }
    }
}

/// What a loader hands over for a whole model; [`Model::from_parts`] checks and completes it.
#[derive(Clone, Debug)]
pub struct ModelParts {
    pub format: Format,
    pub bones: Vec<Bone>,
    pub frames: Vec<Frame>,
    /// Parent-relative poses, frame-major: pose `frame * bones.len() + bone`.
    pub poses: Poses,
    /// Each element's largest magnitude over every pose, where the reader found it while
    /// decoding them (DPM): the load-time range check then rarely needs a pass of its own.
    pub(crate) pose_magnitudes: Option<[f32; 12]>,
    pub animations: Vec<Animation>,
    pub meshes: Vec<MeshParts>,
    /// 0 = x, 1 = y, 2 = z in the file's own coordinates.
    pub up_axis: u32,
    /// +1 right-handed, -1 left-handed.
    pub handedness: i32,
    /// Bounds the file declares for the whole model, where it has them.
    pub extent: Option<Extent>,
    /// Set for meshes that wait for a skeleton: then `bones`, `frames` and `poses` are empty and
    /// influences index these slots.
    pub unbound: Option<BoneSlots>,
    pub warnings: Vec<String>,
    /// Textures carried in the file (DMF).
    pub textures: Vec<Texture>,
    /// Materials meshes refer to (DMF).
    pub materials: Vec<Material>,
    /// The keys of animation scenes sampled from keyframes (DMF), at most one set per scene.
    pub keyframes: Vec<KeyedAnimation>,
    /// Events of the animation scenes, in any order (the model keeps them by scene and time).
    pub events: Vec<AnimationEvent>,
    /// Outfits a character file lists (Sims CMX).
    pub suits: Vec<Suit>,
    /// The version the file declared, where saving in its format keeps it (Sims CMX text: 200
    /// or 300); None for every other format and for models built in code.
    pub source_version: Option<u32>,
    /// The format whose axes and units the coordinates are in, where that is not `format`'s: a
    /// glTF file ossa exported is read back in its source's frame, and exporting it again must
    /// map that frame, not glTF's. None: `format`'s own.
    pub frame_format: Option<Format>,
    /// The bytes of the file the model was read from, where its format's saver gives a model
    /// read and saved unchanged back byte for byte by them (IQM keeps quantised channels, bounds
    /// and tangents the model does not). None for a model that may have changed since:
    /// [`Model::to_parts`] leaves it out.
    pub source: Option<Arc<[u8]>>,
    /// What the file holds that ossa keeps unread for saving in its format again.
    pub kept: Kept,
}

impl ModelParts {
    pub fn new(format: Format) -> ModelParts {
        ModelParts {
            format,
            bones: Vec::new(),
            frames: Vec::new(),
            poses: Poses::default(),
            pose_magnitudes: None,
            animations: Vec::new(),
            meshes: Vec::new(),
            up_axis: 2,
            handedness: 1,
            extent: None,
            unbound: None,
            warnings: Vec::new(),
            textures: Vec::new(),
            materials: Vec::new(),
            keyframes: Vec::new(),
            events: Vec::new(),
            suits: Vec::new(),
            source_version: None,
            frame_format: None,
            source: None,
            kept: Kept::default(),
        }
    }
}

/// Bones, frames and scenes: the part several meshes can share.
#[derive(Debug)]
pub struct Skeleton {
    bones: Vec<Bone>,
    frames: Vec<Frame>,
    poses: Poses,
    animations: Vec<Animation>,
    keyframes: Vec<KeyedAnimation>,
    /// Sorted by scene, then time (file order among equal times).
    events: Vec<AnimationEvent>,
    /// Model-space frame-0 pose, the bind pose.
    bind: Vec<Mat3x4>,
    /// Its inverses, for GPU skinning: computed once rather than every frame. A bone collapsed
    /// to a point in its bind pose (hidden parts are, in real files) has none; the zero matrix
    /// makes it contribute its pose's translation alone.
    inverse_bind: Vec<Mat3x4>,
    bone_lookup: NameIndex,
    /// Built by the first lookup of a frame by name: a model has thousands of frames, few
    /// callers look one up, and indexing them cost a tenth of a large model's load.
    frame_lookup: OnceLock<NameIndex>,
}

fn bone_name(bones: &[Bone], i: usize) -> &[u8] {
    bones.get(i).map_or(&[], |b| b.name.as_bytes())
}

fn frame_name(frames: &[Frame], i: usize) -> &[u8] {
    frames.get(i).map_or(&[], |f| f.name.as_bytes())
}

impl Skeleton {
    pub fn bones(&self) -> &[Bone] {
        &self.bones
    }
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }
    pub fn animations(&self) -> &[Animation] {
        &self.animations
    }
    /// The keys scenes were sampled from, where the format stores keys.
    pub fn keyframes(&self) -> &[KeyedAnimation] {
        &self.keyframes
    }
    /// Every scene's events, by scene and then time.
    pub fn events(&self) -> &[AnimationEvent] {
        &self.events
    }
    /// The events of scene `animation`, by time; empty past the last scene.
    pub fn animation_events(&self, animation: u32) -> &[AnimationEvent] {
        let start = self.events.partition_point(|e| e.animation < animation);
        let end = self.events.partition_point(|e| e.animation <= animation);
        self.events.get(start..end).unwrap_or_default()
    }
    /// Every frame's parent-relative poses, as the file stores them.
    pub fn poses(&self) -> &Poses {
        &self.poses
    }
    /// The file's own parent-relative poses of one frame, as matrices (made when the file stores
    /// rotations and translations).
    pub fn frame_poses(&self, frame: usize) -> Option<Cow<'_, [Mat3x4]>> {
        let n = self.bones.len();
        self.poses.range(frame.checked_mul(n)?, n)
    }
    /// [`Skeleton::frame_poses`] into `out` (one matrix per bone), without allocating; false,
    /// leaving `out` alone, when the frame or the length is out of range.
    pub fn write_frame_poses(&self, frame: usize, out: &mut [Mat3x4]) -> bool {
        let n = self.bones.len();
        out.len() == n
            && frame
                .checked_mul(n)
                .is_some_and(|at| self.poses.write(at, out))
    }
    /// Model-space bone matrices of frame 0.
    pub fn bind_pose(&self) -> &[Mat3x4] {
        &self.bind
    }
    /// The inverse of every bone's bind pose; the zero matrix where it has none.
    pub fn inverse_bind(&self) -> &[Mat3x4] {
        &self.inverse_bind
    }
}

/// A mesh ready for posing and skinning; see [`MeshParts`] for the meaning of the fields.
#[derive(Clone, Debug)]
pub struct Mesh {
    name: Name,
    shader: Name,
    influence_start: Vec<u32>,
    influences: Vec<Influence>,
    indices: Vec<u32>,
    texcoords: Option<Vec<[f32; 2]>>,
    group_ids: Option<Vec<u32>>,
    references: Option<Vec<u32>>,
    material: Option<u32>,
    colors: Option<Vec<[u8; 4]>>,
    bind_positions: Option<Vec<[f32; 3]>>,
    bind_normals: Option<Vec<[f32; 3]>>,
    msh: Option<MshLayout>,
    skins: Vec<MeshSkin>,
    /// The layout the skinning kernels walk; empty while the mesh waits for a skeleton.
    plan: SkinPlan,
}

impl Mesh {
    pub fn name(&self) -> &Name {
        &self.name
    }
    pub fn shader(&self) -> &Name {
        &self.shader
    }
    pub fn vertex_count(&self) -> usize {
        self.influence_start.len().saturating_sub(1)
    }
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }
    pub fn texcoords(&self) -> Option<&[[f32; 2]]> {
        self.texcoords.as_deref()
    }
    pub fn group_ids(&self) -> Option<&[u32]> {
        self.group_ids.as_deref()
    }
    /// The bones the file lists as used by this mesh, where it lists them.
    pub fn references(&self) -> Option<&[u32]> {
        self.references.as_deref()
    }
    /// The mesh's material, by position in [`Model::materials`].
    pub fn material(&self) -> Option<u32> {
        self.material
    }
    /// Red, green, blue, alpha per vertex, where the format has them.
    pub fn colors(&self) -> Option<&[[u8; 4]]> {
        self.colors.as_deref()
    }
    /// Model-space bind-pose positions as the file stores them, where it stores them so.
    pub fn bind_positions(&self) -> Option<&[[f32; 3]]> {
        self.bind_positions.as_deref()
    }
    /// Model-space bind-pose normals as the file stores them, where it stores them so.
    pub fn bind_normals(&self) -> Option<&[[f32; 3]]> {
        self.bind_normals.as_deref()
    }
    /// The `.msh` file's own layout, for a mesh loaded from one.
    pub fn msh(&self) -> Option<&MshLayout> {
        self.msh.as_ref()
    }
    /// The mesh's own skins (IQM's `FTE_SKINS`); empty for most models.
    pub fn skins(&self) -> &[MeshSkin] {
        &self.skins
    }
    /// The influences of vertex `v` (empty past the end).
    pub fn influences(&self, v: usize) -> &[Influence] {
        let (Some(&s), Some(&e)) = (self.influence_start.get(v), self.influence_start.get(v + 1))
        else {
            return &[];
        };
        self.influences.get(s as usize..e as usize).unwrap_or(&[])
    }
    pub fn all_influences(&self) -> &[Influence] {
        &self.influences
    }
    pub(crate) fn influence_start(&self) -> &[u32] {
        &self.influence_start
    }
    pub(crate) fn plan(&self) -> &SkinPlan {
        &self.plan
    }
    /// How the skinning kernels will treat this mesh's vertices (laid out at load).
    /// Per vertex, whether the loaded layout skins it influence by influence (its influences
    /// disagree on a bind point, or it has none).
    pub(crate) fn skinned_directly(&self) -> Vec<bool> {
        let mut marks = vec![false; self.vertex_count()];
        for &v in &self.plan.direct {
            if let Some(m) = marks.get_mut(v as usize) {
                *m = true;
            }
        }
        marks
    }

    pub fn skin_layout(&self) -> SkinLayout {
        self.plan.layout()
    }
    pub fn max_influences(&self) -> usize {
        self.influence_start
            .windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .max()
            .unwrap_or(0)
    }
}

/// A counts-and-bounds summary, as `ossa_model_info` hands it out.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    pub format: Format,
    pub bone_count: u32,
    pub mesh_count: u32,
    pub frame_count: u32,
    pub animation_count: u32,
    pub vertex_count: u32,
    pub triangle_count: u32,
    pub max_influences: u32,
    pub up_axis: u32,
    pub handedness: i32,
    pub mins: [f32; 3],
    pub maxs: [f32; 3],
}

/// A loaded model: immutable, and safe to pose and skin from any number of threads at once.
#[derive(Debug)]
pub struct Model {
    format: Format,
    skeleton: Arc<Skeleton>,
    meshes: Vec<Mesh>,
    up_axis: u32,
    handedness: i32,
    mins: [f32; 3],
    maxs: [f32; 3],
    extent: Option<Extent>,
    unbound: Option<BoneSlots>,
    warnings: Vec<Name>,
    textures: Vec<Texture>,
    materials: Vec<Material>,
    /// Shared: a suit's meshes bound one by one each carry the character's suits.
    suits: Arc<[Suit]>,
    source_version: Option<u32>,
    frame_format: Option<Format>,
    source: Option<Arc<[u8]>>,
    kept: Kept,
}

/// Whether `parent` may be bone `index`'s parent: -1, or an earlier bone.
pub(crate) fn parent_ok(parent: i32, index: usize) -> bool {
    parent == -1 || (parent >= 0 && (parent as usize) < index)
}

/// Model-space matrices from parent-relative ones; parents come first, so one pass suffices.
pub(crate) fn concat_into(
    bones: &[Bone],
    local: &[Mat3x4],
    root: Option<&Mat3x4>,
    out: &mut [Mat3x4],
) {
    for (i, (bone, l)) in bones.iter().zip(local).enumerate() {
        let m = if bone.parent >= 0 {
            out.get(bone.parent as usize).map(|p| p.mul(l))
        } else {
            root.map(|r| r.mul(l))
        };
        if let Some(slot) = out.get_mut(i) {
            *slot = m.unwrap_or(*l);
        }
    }
}

/// The same, in place: entry `i` is local until its turn, and every parent is done before it.
pub(crate) fn concat_in_place(bones: &[Bone], root: Option<&Mat3x4>, poses: &mut [Mat3x4]) {
    for (i, bone) in bones.iter().enumerate() {
        let parent = if bone.parent >= 0 {
            poses.get(bone.parent as usize).copied()
        } else {
            root.copied()
        };
        if let (Some(p), Some(slot)) = (parent, poses.get_mut(i)) {
            *slot = p.mul(slot);
        }
    }
}

impl Model {
    /// Checks every rule of the shared model and derives the bind pose, bounds, lookups and the
    /// meshes' skinning layouts: for models built in code.
    pub fn from_parts(parts: ModelParts) -> Result<Model> {
        check_parts(&parts)?;
        check_magnitudes(&parts)?;
        Model::assemble(parts)
    }

    /// What [`Model::from_checked_parts`] holds for a bound model beyond its parts, as
    /// `(count, bytes each)` for a loader's
    /// [`reserve_parts`](crate::format::Checker::reserve_parts). Per bone: its bind pose and
    /// the inverse, its slots in the bones' name index (four at most), and what checking the
    /// poses chained through the parents takes (a pair of floats, an f64 matrix). Per frame:
    /// its slots in the frames' name index, made at the first lookup. Per mesh: the mesh made
    /// anew from its parts (both held a moment). And each mesh's layout for skinning, over the
    /// model's bones, bounded per vertex, influence, bone and mesh
    /// ([`crate::skin::LAYOUT_VERTEX`]).
    pub(crate) fn assembly_parts(
        bones: u64,
        frames: u64,
        meshes: u64,
        vertices: u64,
        influences: u64,
    ) -> [(u64, u64); 5] {
        use crate::skin::{LAYOUT_BONE, LAYOUT_INFLUENCE, LAYOUT_MESH, LAYOUT_VERTEX};
        let bone = (2 * size_of::<Mat3x4>() + 4 * 4 + 2 * 4 + size_of::<[f64; 12]>()) as u64;
        let mesh = (size_of::<MeshParts>() + size_of::<Mesh>()) as u64;
        [
            (bones, bone + LAYOUT_BONE),
            (frames, 4 * 4),
            (meshes, mesh + LAYOUT_MESH),
            (vertices, LAYOUT_VERTEX),
            (influences, LAYOUT_INFLUENCE),
        ]
    }

    /// For loaders, which check their files as they read them (with byte offsets), so the rules
    /// are checked once; debug builds check them again. What only the whole model shows (poses
    /// chained through the parents, the bind pose's inverses) is checked here, for every format.
    pub(crate) fn from_checked_parts(parts: ModelParts) -> Result<Model> {
        debug_assert_eq!(check_parts(&parts).map_err(|e| e.to_string()), Ok(()));
        check_magnitudes(&parts)?;
        Model::assemble(parts)
    }

    fn assemble(parts: ModelParts) -> Result<Model> {
        let ModelParts {
            format,
            bones,
            frames,
            poses,
            pose_magnitudes: _,
            animations,
            meshes,
            up_axis,
            handedness,
            extent,
            unbound,
            warnings,
            textures,
            materials,
            keyframes,
            mut events,
            suits,
            source_version,
            frame_format,
            source,
            kept,
        } = parts;
        // Stable: events at one time keep the order the file gives them.
        events.sort_by(|a, b| {
            a.animation
                .cmp(&b.animation)
                .then(a.time.total_cmp(&b.time))
        });
        let nb = bones.len();
        let mut bind = vec![Mat3x4::IDENTITY; nb];
        if let Some(frame0) = poses.range(0, nb) {
            concat_into(&bones, &frame0, None, &mut bind);
        }
        let zero = Mat3x4 { m: [0.0; 12] };
        let inverse_bind: Vec<Mat3x4> = bind.iter().map(|m| m.inverse().unwrap_or(zero)).collect();
        // A bone all but collapsed in its bind pose has an inverse too large to skin with.
        for (b, inverse) in inverse_bind.iter().enumerate() {
            if let Some(v) = inverse.first_out_of_range() {
                return Err(Error::limit(format!(
                    "frame 0 ({}) bone {b} ({}): the inverse of its bind pose holds {v:e}, beyond \
                     {MAX_MAGNITUDE:e} (the bone is all but collapsed)",
                    frames.first().map(|f| f.name.clone()).unwrap_or_default(),
                    bones.get(b).map(|b| b.name.clone()).unwrap_or_default()
                )));
            }
        }
        let skeleton = Skeleton {
            bone_lookup: NameIndex::build(bones.len(), |i| bone_name(&bones, i)),
            frame_lookup: OnceLock::new(),
            bones,
            frames,
            poses,
            animations,
            keyframes,
            events,
            bind,
            inverse_bind,
        };
        let mut model = Model::with_skeleton(Arc::new(skeleton), meshes, format, unbound);
        model.up_axis = up_axis;
        model.handedness = handedness;
        model.extent = extent;
        model.warnings = warnings.iter().map(|w| Name::new(w.as_bytes())).collect();
        model.textures = textures;
        model.materials = materials;
        model.suits = suits.into();
        model.source_version = source_version;
        model.frame_format = frame_format;
        model.source = source;
        model.kept = kept;
        Ok(model)
    }

    /// The model with `meshes` in place of its own, over the same skeleton (shared, not copied
    /// or checked again). For a new order of the model's own vertices and triangles, which
    /// leaves the bones, frames and poses alone: the meshes hold what the model's held, checked
    /// when it was made, so only debug builds check them again. Warnings and source bytes are
    /// left out, as [`Model::to_parts`] leaves them.
    pub(crate) fn with_reordered_meshes(&self, meshes: Vec<MeshParts>) -> Model {
        #[cfg(debug_assertions)]
        {
            let slots = (self.unbound.as_ref()).map_or(self.skeleton.bones.len(), BoneSlots::count);
            for mesh in &meshes {
                debug_assert_eq!(
                    check_mesh(mesh, slots, self.materials.len()).map_err(|e| e.to_string()),
                    Ok(())
                );
            }
            debug_assert!(check_influence_magnitudes(&meshes).is_ok());
        }
        let model = Model::with_skeleton(
            Arc::clone(&self.skeleton),
            meshes,
            self.format,
            self.unbound.clone(),
        );
        self.carried_into(model)
    }

    /// The model an order that moved no vertex and no triangle makes: its meshes as they are,
    /// their skinning layouts included (the same vertices in the same places give the same
    /// layout), over the shared skeleton; what else it keeps is what
    /// [`Model::with_reordered_meshes`] keeps.
    pub(crate) fn with_meshes_unmoved(&self) -> Model {
        let model = Model::assembled(
            self.format,
            Arc::clone(&self.skeleton),
            self.meshes.clone(),
            (self.mins, self.maxs),
            self.unbound.clone(),
        );
        self.carried_into(model)
    }

    /// `model` with what a reordering of the meshes keeps of this one.
    fn carried_into(&self, mut model: Model) -> Model {
        model.up_axis = self.up_axis;
        model.handedness = self.handedness;
        model.extent = self.extent;
        model.textures = self.textures.clone();
        model.materials = self.materials.clone();
        model.suits = self.suits.clone();
        model.source_version = self.source_version;
        model.frame_format = self.frame_format;
        model.kept = self.kept.clone();
        model
    }

    /// Meshes over a (possibly shared) skeleton, with what depends on both: the skinning layouts
    /// and the bind pose's bounds.
    fn with_skeleton(
        skeleton: Arc<Skeleton>,
        meshes: Vec<MeshParts>,
        format: Format,
        unbound: Option<BoneSlots>,
    ) -> Model {
        let bind = &skeleton.bind;
        let meshes: Vec<Mesh> = meshes
            .into_iter()
            .map(|p| Mesh {
                name: p.name,
                shader: p.shader,
                influence_start: p.influence_start,
                influences: p.influences,
                indices: p.indices,
                texcoords: p.texcoords,
                group_ids: p.group_ids,
                references: p.references,
                material: p.material,
                colors: p.colors,
                bind_positions: p.bind_positions,
                bind_normals: p.bind_normals,
                msh: p.msh,
                skins: p.skins,
                plan: SkinPlan::default(),
            })
            .collect();
        // The layout's survey puts every vertex in the bind pose once: the bounds come from it.
        let mut mesh_bones = MeshBones::new(if unbound.is_some() { 0 } else { bind.len() });
        let surveys: Vec<Survey> = if unbound.is_some() {
            Vec::new()
        } else {
            meshes
                .iter()
                .map(|m| {
                    mesh_bones.survey(
                        &m.influence_start,
                        &m.influences,
                        bind,
                        &skeleton.inverse_bind,
                    )
                })
                .collect()
        };
        let (mins, maxs) = Survey::bounds(&surveys);
        let mut meshes = meshes;
        if unbound.is_none() {
            // The palette's tolerance scales with the model's size (its bind-pose extent).
            let size = (0..3).map(|a| maxs[a] - mins[a]).fold(0.0f32, f32::max);
            for (m, survey) in meshes.iter_mut().zip(surveys) {
                m.plan = mesh_bones.plan(survey, &m.influence_start, &m.influences, size);
            }
        }
        Model::assembled(format, skeleton, meshes, (mins, maxs), unbound)
    }

    /// A model of these laid-out meshes over `skeleton`, its bind pose within `bounds`; the
    /// rest is a loader's to fill in.
    fn assembled(
        format: Format,
        skeleton: Arc<Skeleton>,
        meshes: Vec<Mesh>,
        (mins, maxs): ([f32; 3], [f32; 3]),
        unbound: Option<BoneSlots>,
    ) -> Model {
        Model {
            format,
            skeleton,
            meshes,
            up_axis: 2,
            handedness: 1,
            mins,
            maxs,
            extent: None,
            unbound,
            warnings: Vec::new(),
            textures: Vec::new(),
            materials: Vec::new(),
            suits: Arc::from(Vec::new()),
            source_version: None,
            frame_format: None,
            source: None,
            kept: Kept::default(),
        }
    }

    /// A new model whose meshes (from `meshes`, which waits for a skeleton) use the bones and
    /// frames of `skeleton`: by index and count, or by name where the meshes name their bones.
    /// The skeleton is shared, not copied; neither input changes.
    pub fn bind(meshes: &Model, skeleton: &Model) -> Result<Model> {
        let Some(slots) = &meshes.unbound else {
            return Err(Error::mismatch(format!(
                "the {} model has no meshes waiting for a skeleton",
                meshes.format.name()
            )));
        };
        if skeleton.unbound.is_some() || skeleton.bones().is_empty() {
            return Err(Error::mismatch(format!(
                "the {} model has no skeleton to bind to",
                skeleton.format.name()
            )));
        }
        let bones = skeleton.bones();
        let remap: Vec<u32> = match slots {
            BoneSlots::ByIndex(n) => {
                if *n as usize != bones.len() {
                    return Err(Error::mismatch(format!(
                        "the meshes use {}, the {} skeleton has {}",
                        amount(u64::from(*n), "bone", "bones"),
                        skeleton.format.name(),
                        bones.len()
                    )));
                }
                (0..*n).collect()
            }
            BoneSlots::ByName(names) => {
                // The first bone of each name ignoring ASCII case, as The Sims binds meshes;
                // hashed, as a scan of the bones per name is quadratic in what files can hold.
                let index = NameIndex::build_ignoring_case(bones.len(), |i| bone_name(bones, i));
                names
                    .iter()
                    .map(|name| {
                        if name.is_empty() {
                            return Err(Error::not_found(
                                "a bone slot of the meshes has no name to look for in the \
                                 skeleton (a Sims .msh names its bone only by its file name, \
                                 xskin-SUIT-BONE-PART.msh)",
                            ));
                        }
                        index
                            .find(name.as_bytes(), |i| bone_name(bones, i))
                            .ok_or_else(|| {
                                Error::not_found(format!("the skeleton has no bone named {name:?}"))
                            })
                    })
                    .collect::<Result<_>>()?
            }
        };
        let mut parts = meshes.to_parts().meshes;
        for i in parts.iter_mut().flat_map(|p| p.influences.iter_mut()) {
            i.bone = remap.get(i.bone as usize).copied().unwrap_or_default();
        }
        let mut model =
            Model::with_skeleton(Arc::clone(&skeleton.skeleton), parts, meshes.format, None);
        // Both models were checked at load (influences and poses within MAX_MAGNITUDE), which
        // keeps the bounds finite; checked again, cheaply, as the promise is the bounds'.
        if !model.mins.iter().chain(&model.maxs).all(|v| v.is_finite()) {
            return Err(Error::malformed(format!(
                "the meshes bound to the {} skeleton have bounds {:?} to {:?}, not finite",
                skeleton.format.name(),
                model.mins,
                model.maxs
            )));
        }
        model.up_axis = meshes.up_axis;
        model.handedness = meshes.handedness;
        model.extent = meshes.extent;
        model.textures = meshes.textures.clone();
        model.materials = meshes.materials.clone();
        model.suits = if meshes.suits.is_empty() {
            skeleton.suits.clone()
        } else if skeleton.suits.is_empty() {
            meshes.suits.clone()
        } else {
            (meshes.suits.iter())
                .chain(skeleton.suits.iter())
                .cloned()
                .collect()
        };
        model.source_version = meshes.source_version.or(skeleton.source_version);
        model.frame_format = meshes.frame_format.or(skeleton.frame_format);
        model.kept = if meshes.kept.is_empty() {
            skeleton.kept.clone()
        } else {
            meshes.kept.clone()
        };
        model.warnings = meshes
            .warnings
            .iter()
            .chain(&skeleton.warnings)
            .cloned()
            .collect();
        Ok(model)
    }

    /// Everything the model holds, as parts to change and build a new model from.
    pub fn to_parts(&self) -> ModelParts {
        let s = &self.skeleton;
        ModelParts {
            format: self.format,
            bones: s.bones.clone(),
            frames: s.frames.clone(),
            poses: s.poses.clone(),
            pose_magnitudes: None,
            animations: s.animations.clone(),
            keyframes: s.keyframes.clone(),
            events: s.events.clone(),
            suits: self.suits.to_vec(),
            source_version: self.source_version,
            frame_format: self.frame_format,
            textures: self.textures.clone(),
            materials: self.materials.clone(),
            meshes: self.mesh_parts(),
            up_axis: self.up_axis,
            handedness: self.handedness,
            extent: self.extent,
            unbound: self.unbound.clone(),
            warnings: Vec::new(),
            source: None,
            kept: self.kept.clone(),
        }
    }

    /// The meshes of [`Model::to_parts`].
    pub(crate) fn mesh_parts(&self) -> Vec<MeshParts> {
        (self.meshes.iter())
            .map(|m| MeshParts {
                name: m.name.clone(),
                shader: m.shader.clone(),
                influence_start: m.influence_start.clone(),
                influences: m.influences.clone(),
                indices: m.indices.clone(),
                texcoords: m.texcoords.clone(),
                group_ids: m.group_ids.clone(),
                references: m.references.clone(),
                material: m.material,
                colors: m.colors.clone(),
                bind_positions: m.bind_positions.clone(),
                bind_normals: m.bind_normals.clone(),
                msh: m.msh.clone(),
                skins: m.skins.clone(),
            })
            .collect()
    }

    /// The same model with more warnings (from its sidecar files).
    pub(crate) fn with_warnings(mut self, warnings: Vec<String>) -> Model {
        self.warnings
            .extend(warnings.iter().map(|w| Name::new(w.as_bytes())));
        self
    }

    /// How the meshes refer to bones while they wait for [`Model::bind`]; `None` once bound.
    pub fn unbound(&self) -> Option<&BoneSlots> {
        self.unbound.as_ref()
    }

    /// Whether two models share one skeleton in memory (a model and its LODs bound to it).
    pub fn shares_skeleton(&self, other: &Model) -> bool {
        Arc::ptr_eq(&self.skeleton, &other.skeleton)
    }

    pub fn format(&self) -> Format {
        self.format
    }
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }
    pub fn bones(&self) -> &[Bone] {
        &self.skeleton.bones
    }
    pub fn frames(&self) -> &[Frame] {
        &self.skeleton.frames
    }
    pub fn animations(&self) -> &[Animation] {
        &self.skeleton.animations
    }
    /// The keys scenes were sampled from, where the format stores keys (DMF).
    pub fn keyframes(&self) -> &[KeyedAnimation] {
        &self.skeleton.keyframes
    }
    /// Every scene's events, by scene and then time.
    pub fn events(&self) -> &[AnimationEvent] {
        self.skeleton.events()
    }
    /// The events of scene `animation`, by time; empty past the last scene.
    pub fn animation_events(&self, animation: u32) -> &[AnimationEvent] {
        self.skeleton.animation_events(animation)
    }
    /// Outfits the character file lists (Sims CMX): which meshes go on which bones.
    pub fn suits(&self) -> &[Suit] {
        &self.suits
    }
    /// The bytes of the file the model was read from, for a format whose saver gives them back
    /// for a model saved unchanged (IQM); None for every other model.
    pub fn source_bytes(&self) -> Option<&[u8]> {
        self.source.as_deref()
    }
    /// What the model's file holds that ossa keeps unread for saving in its format again.
    pub fn kept(&self) -> &Kept {
        &self.kept
    }

    /// The version the model's file declared, which saving in that format keeps (Sims CMX
    /// text: 200 or 300; a mesh bound to a skeleton has the skeleton's); None otherwise.
    pub fn source_version(&self) -> Option<u32> {
        self.source_version
    }
    /// The format whose axes and units the coordinates are in: the source format of an ossa
    /// glTF export read back, else the model's own.
    pub fn frame_format(&self) -> Format {
        self.frame_format.unwrap_or(self.format)
    }
    /// Textures carried in the file (DMF).
    pub fn textures(&self) -> &[Texture] {
        &self.textures
    }
    /// Materials the meshes refer to (DMF).
    pub fn materials(&self) -> &[Material] {
        &self.materials
    }
    pub fn meshes(&self) -> &[Mesh] {
        &self.meshes
    }
    pub fn warnings(&self) -> &[Name] {
        &self.warnings
    }
    pub fn bounds(&self) -> ([f32; 3], [f32; 3]) {
        (self.mins, self.maxs)
    }
    /// The bounds the file declares for the whole model (DPM's header), where it has them.
    pub fn declared_extent(&self) -> Option<&Extent> {
        self.extent.as_ref()
    }
    pub fn up_axis(&self) -> u32 {
        self.up_axis
    }
    pub fn handedness(&self) -> i32 {
        self.handedness
    }

    /// The bone with exactly this name (the first, if several share it); O(1).
    pub fn find_bone(&self, name: impl AsRef<[u8]>) -> Option<u32> {
        let bones = &self.skeleton.bones;
        self.skeleton
            .bone_lookup
            .find(name.as_ref(), |i| bone_name(bones, i))
    }

    /// The frame with exactly this name (the first, if several share it); O(1) once the first
    /// lookup has indexed the frames, which is O(frames).
    pub fn find_frame(&self, name: impl AsRef<[u8]>) -> Option<u32> {
        let frames = &self.skeleton.frames;
        self.skeleton
            .frame_lookup
            .get_or_init(|| NameIndex::build(frames.len(), |i| frame_name(frames, i)))
            .find(name.as_ref(), |i| frame_name(frames, i))
    }

    pub fn info(&self) -> ModelInfo {
        let sat = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        ModelInfo {
            format: self.format,
            bone_count: sat(self.bones().len()),
            mesh_count: sat(self.meshes.len()),
            frame_count: sat(self.frames().len()),
            animation_count: sat(self.animations().len()),
            vertex_count: sat(self.meshes.iter().map(Mesh::vertex_count).sum()),
            triangle_count: sat(self.meshes.iter().map(Mesh::triangle_count).sum()),
            max_influences: sat(self
                .meshes
                .iter()
                .map(Mesh::max_influences)
                .max()
                .unwrap_or(0)),
            up_axis: self.up_axis,
            handedness: self.handedness,
            mins: self.mins,
            maxs: self.maxs,
        }
    }

    /// Bytes of heap the model holds (approximately: container overheads are left out; the
    /// frame-name index counts once a lookup has built it).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let s = &self.skeleton;
        let names: usize = s.bones.iter().map(|b| b.name.heap_bytes()).sum::<usize>()
            + s.frames.iter().map(|f| f.name.heap_bytes()).sum::<usize>();
        let skeleton = s.bones.len() * size_of::<Bone>()
            + s.frames.len() * size_of::<Frame>()
            + s.poses.heap_bytes()
            + (s.bind.len() + s.inverse_bind.len()) * size_of::<Mat3x4>()
            + s.animations.len() * size_of::<Animation>()
            + s.keyframes
                .iter()
                .map(|k| size_of::<KeyedAnimation>() + k.keys.len() * size_of::<Keyframe>())
                .sum::<usize>()
            + s.events
                .iter()
                .map(|e| size_of::<AnimationEvent>() + e.key.heap_bytes() + e.value.heap_bytes())
                .sum::<usize>()
            + names
            + s.bone_lookup.heap_bytes()
            + s.frame_lookup.get().map_or(0, NameIndex::heap_bytes);
        let meshes: usize = self
            .meshes
            .iter()
            .map(|m| {
                m.influence_start.len() * 4
                    + m.influences.len() * size_of::<Influence>()
                    + m.indices.len() * 4
                    + m.texcoords.as_ref().map_or(0, |t| t.len() * 8)
                    + m.group_ids.as_ref().map_or(0, |g| g.len() * 4)
                    + m.colors.as_ref().map_or(0, |c| c.len() * 4)
                    + m.bind_positions.as_ref().map_or(0, |p| p.len() * 12)
                    + m.bind_normals.as_ref().map_or(0, |n| n.len() * 12)
                    + m.msh.as_ref().map_or(0, MshLayout::heap_bytes)
                    + (m.skins.iter())
                        .map(|k| size_of::<MeshSkin>() + k.frames.len() * size_of::<SkinFrame>())
                        .sum::<usize>()
                    + m.plan.heap_bytes()
            })
            .sum();
        let textures: usize = self
            .textures
            .iter()
            .map(|t| size_of::<Texture>() + t.name.heap_bytes() + t.image.len())
            .sum();
        let materials: usize = self
            .materials
            .iter()
            .map(|m| size_of::<Material>() + m.name.heap_bytes())
            .sum();
        let properties = |p: &[Property]| -> usize {
            p.iter()
                .map(|p| size_of::<Property>() + p.key.heap_bytes() + p.value.heap_bytes())
                .sum()
        };
        let suits: usize = self
            .suits
            .iter()
            .map(|s| {
                size_of::<Suit>()
                    + s.name.heap_bytes()
                    + properties(&s.properties)
                    + s.skins
                        .iter()
                        .map(|k| {
                            size_of::<SuitSkin>()
                                + k.bone.heap_bytes()
                                + k.mesh.heap_bytes()
                                + properties(&k.properties)
                        })
                        .sum::<usize>()
            })
            .sum();
        skeleton
            + meshes
            + textures
            + materials
            + self.source.as_ref().map_or(0, |b| b.len())
            // Quantised poses read the file the model keeps, or their own copy of it.
            + s.poses.shared_file().map_or(0, |f| {
                if self.source.as_ref().is_some_and(|b| Arc::ptr_eq(b, f)) {
                    0
                } else {
                    f.len()
                }
            })
            + self.kept.heap_bytes()
            + suits
            + self.warnings.iter().map(Name::heap_bytes).sum::<usize>()
    }
}

fn check_parts(parts: &ModelParts) -> Result<()> {
    let ModelParts {
        bones,
        frames,
        poses,
        animations,
        meshes,
        unbound,
        textures,
        materials,
        keyframes,
        events,
        ..
    } = parts;
    if unbound.is_some() && !(bones.is_empty() && frames.is_empty()) {
        return Err(Error::malformed(
            "meshes waiting for a skeleton cannot have bones or frames of their own",
        ));
    }
    let slots = unbound.as_ref().map_or(bones.len(), BoneSlots::count);
    let nb = bones.len();
    for (i, b) in bones.iter().enumerate() {
        if !parent_ok(b.parent, i) {
            return Err(Error::malformed(format!(
                "bone {i} ({}): parent {} is not an earlier bone or -1",
                b.name, b.parent
            )));
        }
    }
    if nb > 0 && frames.is_empty() {
        return Err(Error::malformed(
            "the model has bones but no frames (frame 0 is the bind pose)",
        ));
    }
    if poses.len() != frames.len() * nb {
        return Err(Error::malformed(format!(
            "{} poses given for {} frames of {nb} bones",
            poses.len(),
            frames.len()
        )));
    }
    if let Some(i) = poses.first_invalid() {
        let what = match poses {
            Poses::Matrices(_) => "pose has a NaN or infinity",
            Poses::Rigid(_) => {
                "pose has a NaN or infinity, or a rotation of other than unit length"
            }
            Poses::Quantised(_) => "pose has a NaN or infinity",
        };
        return Err(Error::malformed(format!(
            "frame {} bone {}: {what}",
            i / nb.max(1),
            i % nb.max(1)
        )));
    }
    for (i, a) in animations.iter().enumerate() {
        // A scene may have no frames (a Sims skill whose numbers are missing): it still has a
        // name, travel and events.
        let end = a.first_frame as u64 + a.frame_count as u64;
        if end > frames.len() as u64 || !(a.fps.is_finite() && a.fps > 0.0) {
            return Err(Error::malformed(format!(
                "animation {i} ({}): frames {}+{} at {} fps do not fit {} frames",
                a.name,
                a.first_frame,
                a.frame_count,
                a.fps,
                frames.len()
            )));
        }
    }
    for (m, material) in materials.iter().enumerate() {
        if material
            .texture
            .is_some_and(|t| t as usize >= textures.len())
        {
            return Err(Error::malformed(format!(
                "material {m} ({}): texture {:?} out of range (model has {} textures)",
                material.name,
                material.texture,
                textures.len()
            )));
        }
        let colours = [material.alpha_test]
            .iter()
            .chain(&material.diffuse)
            .chain(&material.emissive)
            .chain(&material.specular)
            .all(|v| v.is_finite());
        if !colours {
            return Err(Error::malformed(format!(
                "material {m} ({}): NaN or infinity",
                material.name
            )));
        }
    }
    check_keyframes(keyframes, animations.len(), nb)?;
    for (i, e) in events.iter().enumerate() {
        let bone_ok = e.bone == -1 || (e.bone >= 0 && (e.bone as usize) < nb);
        if e.animation as usize >= animations.len() || !bone_ok || !e.time.is_finite() {
            return Err(Error::malformed(format!(
                "event {i} ({}): animation {}, bone {} or time {} out of range ({} animations, {nb} bones)",
                e.key,
                e.animation,
                e.bone,
                e.time,
                animations.len()
            )));
        }
    }
    for (m, mesh) in meshes.iter().enumerate() {
        check_mesh(mesh, slots, materials.len()).map_err(|e| e.within(format!("mesh {m}")))?;
    }

    Ok(())
}

/// What keeps posing and skinning finite (see [`MAX_MAGNITUDE`]), checked for every model
/// however it was made: the poses chained through the parents, and the influences.
fn check_magnitudes(parts: &ModelParts) -> Result<()> {
    parts
        .poses
        .check_chained(&parts.bones, &parts.frames, parts.pose_magnitudes)?;
    check_influence_magnitudes(&parts.meshes)
}

/// The influences' part of [`check_magnitudes`].
fn check_influence_magnitudes(meshes: &[MeshParts]) -> Result<()> {
    for (m, mesh) in meshes.iter().enumerate() {
        // One pass without branches (a float's magnitude orders as its bits, a NaN above every
        // number); the influence is looked for only when some value is out of range.
        // With AVX2 where the CPU has it: the unsigned max the loop needs is one instruction
        // on eight lanes there, and a compare-and-select on four with SSE2.
        let largest = with_simd(LargestMagnitude(&mesh.influences));
        if in_range(f32::from_bits(largest).into()) {
            continue;
        }
        for (k, inf) in mesh.influences.iter().enumerate() {
            let values = inf.origin.iter().chain(&inf.normal).chain([&inf.weight]);
            if let Some(v) = values.copied().find(|&v| !in_range(v.into())) {
                return Err(Error::limit(format!(
                    "influence {k}: origin, weight or normal holds {v:e}, beyond {MAX_MAGNITUDE:e}"
                ))
                .within(format!("mesh {m}")));
            }
        }
    }
    Ok(())
}

/// The largest magnitude (as the bits of a float without its sign; a NaN's are above every
/// number's) among the influences' origins, weights and normals.
struct LargestMagnitude<'a>(&'a [Influence]);

impl Kernel for LargestMagnitude<'_> {
    type Output = u32;
    #[inline(always)]
    fn run(self) -> u32 {
        // Eight lanes, one an influence's 32 bytes (the bone's lane held at 0): one vector max
        // an influence rather than a chain of seven.
        let mut lanes = [0u32; 8];
        for i in self.0 {
            let [o0, o1, o2] = i.origin;
            let [n0, n1, n2] = i.normal;
            let values = [o0, o1, o2, i.weight, n0, n1, n2, 0.0];
            for (l, v) in lanes.iter_mut().zip(values) {
                *l = (*l).max(v.to_bits() & !(1 << 31));
            }
        }
        lanes.into_iter().max().unwrap_or_default()
    }
}

fn check_keyframes(sets: &[KeyedAnimation], animations: usize, bones: usize) -> Result<()> {
    let mut seen = vec![false; animations];
    for (s, set) in sets.iter().enumerate() {
        match seen.get_mut(set.animation as usize) {
            Some(slot) if !*slot => *slot = true,
            _ => {
                return Err(Error::malformed(format!(
                    "keyframe set {s}: animation {} is out of range ({animations} animations) or has another set",
                    set.animation
                )));
            }
        }
        if !(set.duration.is_finite() && set.duration >= 0.0) {
            return Err(Error::malformed(format!(
                "keyframe set {s}: duration {} is not a finite number of seconds",
                set.duration
            )));
        }
        for (k, key) in set.keys.iter().enumerate() {
            let finite = [key.time]
                .iter()
                .chain(&key.position)
                .chain(&key.rotation)
                .chain(&key.scale)
                .all(|v| v.is_finite());
            if key.bone as usize >= bones
                || key.flags == 0
                || key.flags & !(KEY_POSITION | KEY_ROTATION | KEY_SCALE) != 0
                || !finite
            {
                return Err(Error::malformed(format!(
                    "keyframe set {s} key {k}: bone {} (model has {bones}), flags {}, or a NaN or infinity",
                    key.bone, key.flags
                )));
            }
        }
    }
    Ok(())
}

fn check_mesh(mesh: &MeshParts, bone_count: usize, materials: usize) -> Result<()> {
    let starts = &mesh.influence_start;
    if starts.first() != Some(&0)
        || starts.last().map(|&e| e as usize) != Some(mesh.influences.len())
    {
        return Err(Error::malformed(
            "influence table does not start at 0 and end at the influence count",
        ));
    }
    if let Some(v) = starts.windows(2).position(|w| w[1] < w[0]) {
        return Err(Error::malformed(format!(
            "vertex {v}: influence range runs backwards"
        )));
    }
    let vc = starts.len() - 1;
    for (k, inf) in mesh.influences.iter().enumerate() {
        if inf.bone as usize >= bone_count {
            return Err(Error::malformed(format!(
                "influence {k}: bone {} out of range (model has {bone_count} bones)",
                inf.bone
            )));
        }
        let finite =
            inf.origin.iter().chain(&inf.normal).all(|v| v.is_finite()) && inf.weight.is_finite();
        if !finite {
            return Err(Error::malformed(format!("influence {k}: NaN or infinity")));
        }
    }
    if !mesh.indices.len().is_multiple_of(3) {
        return Err(Error::malformed(format!(
            "{} indices do not make whole triangles",
            mesh.indices.len()
        )));
    }
    if let Some(i) = mesh.indices.iter().position(|&i| i as usize >= vc) {
        return Err(Error::malformed(format!(
            "triangle {} corner {}: vertex {} out of range (mesh has {vc} vertices)",
            i / 3,
            i % 3,
            mesh.indices.get(i).copied().unwrap_or_default()
        )));
    }
    if let Some(t) = &mesh.texcoords {
        if t.len() != vc {
            return Err(Error::malformed(format!(
                "{} texcoords for {vc} vertices",
                t.len()
            )));
        }
        if t.iter().flatten().any(|v| !v.is_finite()) {
            return Err(Error::malformed("texcoord is NaN or infinity"));
        }
    }
    if let Some(m) = mesh.material
        && m as usize >= materials
    {
        return Err(Error::malformed(format!(
            "material {m} out of range (model has {materials} materials)"
        )));
    }
    if mesh.colors.as_ref().is_some_and(|c| c.len() != vc) {
        return Err(Error::malformed(format!(
            "colours are not one per {vc} vertices"
        )));
    }
    for (what, list) in [
        ("bind positions", &mesh.bind_positions),
        ("bind normals", &mesh.bind_normals),
    ] {
        if let Some(l) = list {
            if l.len() != vc {
                return Err(Error::malformed(format!(
                    "{} {what} for {vc} vertices",
                    l.len()
                )));
            }
            if l.iter().flatten().any(|v| !v.is_finite()) {
                return Err(Error::malformed(format!("{what}: NaN or infinity")));
            }
        }
    }
    if let Some(g) = &mesh.group_ids
        && g.len() != mesh.indices.len() / 3
    {
        return Err(Error::malformed(format!(
            "{} group ids for {} triangles",
            g.len(),
            mesh.indices.len() / 3
        )));
    }
    if let Some(l) = &mesh.msh {
        if l.vertices.len() != vc || l.faces.len() != mesh.indices.len() / 3 {
            return Err(Error::malformed(format!(
                "the .msh layout has {} vertices and {} faces for {vc} vertices and {} triangles",
                l.vertices.len(),
                l.faces.len(),
                mesh.indices.len() / 3
            )));
        }
        if let Some(v) = l
            .vertices
            .iter()
            .position(|&[p, t, _]| p >= l.positions || t >= l.texcoords)
        {
            return Err(Error::malformed(format!(
                "the .msh layout's vertex {v} indexes past its {} positions or {} texture \
                 coordinates",
                l.positions, l.texcoords
            )));
        }
        if let Some((v, _)) = l.bad_normals.iter().find(|(v, _)| *v as usize >= vc) {
            return Err(Error::malformed(format!(
                "the .msh layout keeps the normal of vertex {v}, past the mesh's {vc} vertices"
            )));
        }
    }
    Ok(())
}
