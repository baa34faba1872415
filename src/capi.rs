//! The C boundary: every `extern "C"` function, every pointer check and the panic catching live
//! here, over the safe Rust API. The names, types and rules are those of `API.md`; cbindgen turns
//! this file into `include/ossa.h`.
#![allow(non_camel_case_types)]

use std::ffi::{CStr, CString, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use libc::c_char;

use crate::error::{Error, ErrorCode, Result, amount};
use crate::format::{Format, LoadOptions};
use crate::io::{FileData, FileSystem, contained};
use crate::math::Mat3x4;
use crate::model::{self, BONE_ATTACHMENT, BONE_SYNTHETIC, Model};
use crate::optimize;
use crate::pose::FrameBlend;
use crate::skin::{RawTarget, SKIN_NORMALIZE, SkinTarget};

pub const OSSA_VERSION_MAJOR: u32 = 0;
pub const OSSA_VERSION_MINOR: u32 = 1;
pub const OSSA_VERSION_PATCH: u32 = 0;

/// Load flag: reject what the default mode tolerates and repairs.
pub const OSSA_LOAD_STRICT: u32 = 1;
/// Model flag: the meshes wait for `ossa_model_bind`.
pub const OSSA_MODEL_UNBOUND: u32 = 1;
/// Bone flag: an attachment point, protected from removal.
pub const OSSA_BONE_ATTACHMENT: u32 = 1;
/// Bone flag: not in the file; added so that vertices the file binds to no bone (DMF) keep
/// their place. It stays at the origin in every frame.
pub const OSSA_BONE_SYNTHETIC: u32 = 2;
/// Skin flag: make normals unit length.
pub const OSSA_SKIN_NORMALIZE: u32 = 1;
/// Save/optimise flag: remove bones no vertex uses, keeping attachments and ancestors of kept bones.
pub const OSSA_OPTIMIZE_UNUSED_BONES: u32 = 1;
/// Save/optimise flag: order each mesh's triangles for the post-transform vertex cache.
pub const OSSA_OPTIMIZE_TRIANGLE_ORDER: u32 = 2;
/// Save/optimise flag: renumber each mesh's vertices by first use (unused ones last).
pub const OSSA_OPTIMIZE_VERTEX_ORDER: u32 = 4;

/// Result codes: values are stable and never reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ossa_result {
    OSSA_OK = 0,
    /// a required pointer was NULL
    OSSA_ERR_NULL_ARGUMENT = 1,
    /// caller misuse: index out of range, wrong count, stride or buffer too small
    OSSA_ERR_INVALID_ARGUMENT = 2,
    /// the data is none of the supported formats
    OSSA_ERR_UNKNOWN_FORMAT = 3,
    /// the data ends inside a structure it declares
    OSSA_ERR_TRUNCATED = 4,
    /// a rule of the format is broken (bad index, parent order, syntax, NaN...)
    OSSA_ERR_MALFORMED = 5,
    /// a valid file using a version or feature not supported
    OSSA_ERR_UNSUPPORTED = 6,
    /// larger than a limit of the format or of the load options
    OSSA_ERR_LIMIT = 7,
    /// reading a file (or the caller's read callback) failed
    OSSA_ERR_IO = 8,
    /// a needed sidecar file or a named bone is missing
    OSSA_ERR_NOT_FOUND = 9,
    /// a mesh and a skeleton do not fit together
    OSSA_ERR_MISMATCH = 10,
    OSSA_ERR_OUT_OF_MEMORY = 11,
    /// an internal bug, caught at the boundary
    OSSA_ERR_PANIC = 12,
}

#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ossa_format {
    /// detect from content, then from the name's extension
    OSSA_FORMAT_AUTO = 0,
    OSSA_FORMAT_DPM = 1,
    /// qfusion mesh; bones come from an SKP
    OSSA_FORMAT_SKM = 2,
    /// qfusion skeleton + frames
    OSSA_FORMAT_SKP = 3,
    /// The Sims 1 text mesh
    OSSA_FORMAT_SIMS_SKN = 4,
    /// The Sims 1 binary mesh
    OSSA_FORMAT_SIMS_BMF = 5,
    /// The Sims 1 text character file (skeletons, suits, skills)
    OSSA_FORMAT_SIMS_CMX = 6,
    /// binary CMX
    OSSA_FORMAT_SIMS_BCF = 7,
    OSSA_FORMAT_MM2_SKEL = 8,
    /// DashGL DMF 1.5, binary
    OSSA_FORMAT_DMF = 9,
    /// DashGL DMF 1.5, JSON
    OSSA_FORMAT_DMF_JSON = 10,
    /// Midtown Madness 2 text mesh; bones come from an MM2 SKEL
    OSSA_FORMAT_MM2_MOD = 11,
    /// glTF 2.0 binary (.glb); saving only
    OSSA_FORMAT_GLB = 12,
    /// glTF 2.0 JSON with its buffer and images embedded as data URIs; saving only
    OSSA_FORMAT_GLTF = 13,
}

/// Optional out-parameter of the functions that load.
#[repr(C)]
pub struct ossa_error {
    pub result: u32,
    /// 1-based line in a text file, 0 when not applicable
    pub line: u32,
    /// byte offset in the failing file, UINT64_MAX when not applicable
    pub offset: u64,
    /// NUL-terminated sentence: which file, which structure and index, which rule
    pub message: [c_char; 512],
}

/// How sidecar files (and, for `ossa_load_file`, the model itself) are read.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ossa_file_io {
    pub user: *mut c_void,
    /// Read the whole file `path`. On success set *data, *size and *token and return OSSA_OK;
    /// return OSSA_ERR_NOT_FOUND when it does not exist, anything else for an I/O failure.
    /// `path` is relative and `/`-separated, never absolute, never with `..`, a backslash or a
    /// drive letter: ossa refuses such a path (OSSA_ERR_INVALID_ARGUMENT) instead of asking.
    pub read: Option<
        unsafe extern "C" fn(
            user: *mut c_void,
            path: *const c_char,
            data: *mut *const u8,
            size: *mut usize,
            token: *mut *mut c_void,
        ) -> u32,
    >,
    /// Called once for every successful read.
    pub release: Option<unsafe extern "C" fn(user: *mut c_void, token: *mut c_void)>,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct ossa_load_options {
    /// sizeof(ossa_load_options), set by ossa_load_options_init. The struct only grows at its end;
    /// only the sizes of its released layouts are accepted (this one, and the one that ends
    /// before base_dir), any other is OSSA_ERR_INVALID_ARGUMENT
    pub size: u32,
    /// an ossa_format
    pub format: u32,
    /// OSSA_LOAD_STRICT = 1: reject what the default mode tolerates and repairs
    pub flags: u32,
    pub reserved: u32,
    /// most memory the loaded model may use; 0 = the library default (16 MiB + 256 per input byte, at most 1 GiB)
    pub max_bytes: u64,
    /// NULL: the OS filesystem for ossa_load_file, no sidecars for ossa_load_memory
    pub io: *const ossa_file_io,
    /// the file's name or path, for ossa_load_memory (extension, sidecars); may be NULL. With io,
    /// a path of io's that must stay inside it (not absolute, no `..`), as its sidecars are read
    /// beside it: else OSSA_ERR_INVALID_ARGUMENT
    pub name: *const c_char,
    /// which skeleton of a multi-skeleton file (Sims CMX); NULL = the first
    pub skeleton: *const c_char,
    /// for ossa_load_file without io: the directory the model and its sidecars may be read from;
    /// NULL = the model's own. Nothing outside it is read: a symbolic link is followed only while
    /// it stays inside (else OSSA_ERR_INVALID_ARGUMENT)
    pub base_dir: *const c_char,
}

/// What a glTF export could not express exactly, relative to the model's size (docs/gltf.md).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ossa_export_report {
    /// the diagonal of the bind pose's bounds, in the exported units
    pub size: f32,
    /// vertices that glTF's linear blend skinning moves by more than 1e-4 of the size from
    /// ossa's own skinning, at the bind pose or a frame checked
    pub inexact_vertices: u32,
    /// the largest such move at the bind pose, relative to the size
    pub bind_max: f32,
    /// the largest such move at any frame checked, relative to the size
    pub animated_max: f32,
    /// frames compared, of frame_count (evenly spread past 20 million vertex-frames)
    pub frames_checked: u32,
    pub frame_count: u32,
    /// vertices whose weights did not sum to 1 and were renormalised, and the largest error
    pub renormalised_vertices: u32,
    pub worst_weight_sum_error: f32,
    /// vertices that kept only max_influences influences, and the most one dropped
    pub capped_vertices: u32,
    pub most_dropped: u32,
    /// images embedded, and textures or .skin files that could not be used
    pub images: u32,
    pub texture_warnings: u32,
}

#[repr(C)]
pub struct ossa_save_options {
    /// sizeof(ossa_save_options), set by ossa_save_options_init; the struct only grows at its end
    pub size: u32,
    /// OSSA_OPTIMIZE_*: optimise the saved model first, as ossa_model_optimize does
    pub flags: u32,
    /// glTF: most influences kept per vertex, the strongest, renormalised; 0 = every one
    pub max_influences: u32,
    /// glTF: multiplies every position and translation, from 1e-6 to 1e6; 1 = the file's units
    pub scale: f32,
    /// most memory the textures read may use; 0 = the library default
    pub max_bytes: u64,
    /// glTF: the filesystem textures are read from; NULL = the OS filesystem
    pub io: *const ossa_file_io,
    /// glTF: the model's file, a path of io's or of the OS, so that its textures and .skin files
    /// are found beside it; NULL = only the textures the model carries (DMF)
    pub name: *const c_char,
    /// glTF without io: the directory textures may be read from; NULL = name's own
    pub base_dir: *const c_char,
    /// glTF: filled with what the export could not express; may be NULL
    pub report: *mut ossa_export_report,
}

/// A loaded model; opaque.
pub struct ossa_model {
    model: Model,
}

#[repr(C)]
pub struct ossa_model_info {
    pub format: u32,
    pub bone_count: u32,
    pub mesh_count: u32,
    pub frame_count: u32,
    pub animation_count: u32,
    /// totals over all meshes
    pub vertex_count: u32,
    pub triangle_count: u32,
    /// most bones influencing one vertex
    pub max_influences: u32,
    /// OSSA_MODEL_UNBOUND = 1: meshes wait for ossa_model_bind
    pub flags: u32,
    /// 0 = x, 1 = y, 2 = z, in the file's own coordinates
    pub up_axis: u32,
    /// +1 right-handed, -1 left-handed
    pub handedness: i32,
    /// bounds of the bind pose
    pub mins: [f32; 3],
    pub maxs: [f32; 3],
}

#[repr(C)]
pub struct ossa_bone_info {
    pub name: *const c_char,
    /// < own index, or -1
    pub parent: i32,
    /// OSSA_BONE_ATTACHMENT = 1
    pub flags: u32,
}

#[repr(C)]
pub struct ossa_frame_info {
    pub name: *const c_char,
    pub mins: [f32; 3],
    pub maxs: [f32; 3],
    pub yaw_radius: f32,
    pub radius: f32,
}

#[repr(C)]
pub struct ossa_mesh_info {
    /// "" where the format has none
    pub name: *const c_char,
    /// shader, material or texture name; "" where none
    pub shader: *const c_char,
    pub vertex_count: u32,
    pub triangle_count: u32,
    /// 3 * triangle_count, each < vertex_count
    pub indices: *const u32,
    /// 2 * vertex_count, as stored in the file; NULL where none
    pub texcoords: *const f32,
    /// triangle_count (DPM); NULL where none
    pub group_ids: *const u32,
}

/// A texture carried inside the model's file (DMF).
#[repr(C)]
pub struct ossa_texture_info {
    pub name: *const c_char,
    pub width: u32,
    pub height: u32,
    /// 1: the image is flipped vertically when uploaded
    pub flip_y: u32,
    /// 0 clamp, 1 mirror, 2 repeat
    pub wrap_s: u32,
    pub wrap_t: u32,
    /// the image file's bytes as stored (PNG), valid as long as the model; NULL when empty
    pub image: *const u8,
    pub image_size: usize,
}

/// A material the model's meshes refer to (DMF); the numbers are the DMF 1.5 constants.
#[repr(C)]
pub struct ossa_material_info {
    pub name: *const c_char,
    /// the diffuse texture's index, or -1
    pub texture: i32,
    /// 1: alpha blending with the three fields after it
    pub use_blending: u32,
    /// 0 normal, 1 additive, 2 subtract, 3 multiply
    pub blend_equation: u32,
    /// 0 zero, 1 one, 2 src colour, 3 one minus src colour, 4 src alpha, 5 one minus src alpha,
    /// 6 dst alpha, 7 one minus dst alpha, 8 dst colour, 9 one minus dst colour, 10 src alpha
    /// saturate
    pub blend_src: u32,
    pub blend_dst: u32,
    pub skinning: u32,
    /// 0 basic, 1 lambert, 2 phong
    pub shader_type: u32,
    /// 0 front, 1 back, 2 double
    pub face_side: u32,
    pub shadow_side: u32,
    pub ignore_lights: u32,
    pub vertex_color: u32,
    pub use_alpha: u32,
    pub skip_render: u32,
    pub alpha_test: f32,
    /// red, green, blue, alpha
    pub diffuse: [f32; 4],
    /// red, green, blue, intensity
    pub emissive: [f32; 4],
    /// red, green, blue, shininess
    pub specular: [f32; 4],
}

/// An animation scene: a named run of frames played at a rate.
#[repr(C)]
pub struct ossa_animation_info {
    pub name: *const c_char,
    pub first_frame: u32,
    pub frame_count: u32,
    /// frames per second
    pub fps: f32,
    /// 1: plays round from its last frame to its first; 0: holds its last frame
    pub looping: u32,
}

/// Something that happens at a time of an animation scene (a Sims skill's time property:
/// `footstep`, `anchor`, `xevt`...).
#[repr(C)]
pub struct ossa_animation_event {
    /// seconds from the scene's start
    pub time: f32,
    /// the bone whose motion carries it; -1 where the skeleton has no such bone
    pub bone: i32,
    pub key: *const c_char,
    pub value: *const c_char,
}

/// How far a scene moves the character, where the file says (a Sims skill's distance and
/// moving flag); 0 and 0 elsewhere.
#[repr(C)]
pub struct ossa_animation_travel {
    /// model units per play
    pub distance: f32,
    /// 1: the scene moves the character
    pub moving: u32,
}

/// An outfit a character file lists (Sims CMX suit): which meshes go on which bones.
#[repr(C)]
pub struct ossa_suit_info {
    pub name: *const c_char,
    /// the file's suit type (0 normal, 1 censor in the game's files)
    pub kind: u32,
    pub skin_count: u32,
    pub property_count: u32,
}

/// One mesh of a suit.
#[repr(C)]
pub struct ossa_suit_skin {
    /// the bone the mesh hangs on
    pub bone: *const c_char,
    /// the mesh's file name without its extension (.skn or .bmf)
    pub mesh: *const c_char,
    /// the body parts a censor mesh covers
    pub censor_flags: u32,
    pub property_count: u32,
}

/// A key and its value from one of a file's property lists; keys need not be unique.
#[repr(C)]
pub struct ossa_property {
    /// which of the owner's property lists it is in, from 0
    pub list: u32,
    pub key: *const c_char,
    pub value: *const c_char,
}

/// Rows of a 3x4 affine matrix acting on column vectors:
/// x' = m[0]x + m[1]y + m[2]z + m[3], y' = m[4]x + ... + m[7], z' = m[8]x + ... + m[11]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ossa_mat3x4 {
    pub m: [f32; 12],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct ossa_frame_blend {
    pub frame: u32,
    pub weight: f32,
}

/// Strides in bytes, >= 12 and multiples of 4; a buffer for n vertices must hold
/// stride * (n - 1) + 12 bytes. Positions and normals may interleave in one caller buffer.
#[repr(C)]
pub struct ossa_skin_target {
    /// required
    pub positions: *mut f32,
    pub position_stride: usize,
    pub position_bytes: usize,
    /// NULL = not wanted
    pub normals: *mut f32,
    pub normal_stride: usize,
    pub normal_bytes: usize,
}

/// What ossa_model_optimize changed.
#[repr(C)]
pub struct ossa_optimize_report {
    pub bones_before: u32,
    pub bones_after: u32,
    /// triangles that moved in their mesh's order
    pub triangles_moved: u32,
    /// vertices that got another number
    pub vertices_moved: u32,
    /// vertex-cache misses per triangle (FIFO of 16), before and after
    pub acmr_before: f32,
    pub acmr_after: f32,
}

/// Receives saved bytes, possibly in several calls; returns OSSA_OK or an error to stop saving.
pub type ossa_write_fn =
    Option<unsafe extern "C" fn(user: *mut c_void, data: *const u8, size: usize) -> u32>;

// The C structs and the Rust ones they are read as must share a layout, and the C constants
// must be the library's own.
const _: () = {
    assert!(OSSA_BONE_ATTACHMENT == BONE_ATTACHMENT);
    assert!(OSSA_BONE_SYNTHETIC == BONE_SYNTHETIC);
    assert!(OSSA_SKIN_NORMALIZE == SKIN_NORMALIZE);
    assert!(OSSA_OPTIMIZE_UNUSED_BONES == optimize::OPTIMIZE_UNUSED_BONES);
    assert!(OSSA_OPTIMIZE_TRIANGLE_ORDER == optimize::OPTIMIZE_TRIANGLE_ORDER);
    assert!(OSSA_OPTIMIZE_VERTEX_ORDER == optimize::OPTIMIZE_VERTEX_ORDER);
    assert!(size_of::<ossa_mat3x4>() == size_of::<Mat3x4>());
    assert!(align_of::<ossa_mat3x4>() == align_of::<Mat3x4>());
    assert!(size_of::<ossa_frame_blend>() == size_of::<FrameBlend>());
    assert!(align_of::<ossa_frame_blend>() == align_of::<FrameBlend>());
};

const NOT_APPLICABLE: u64 = u64::MAX;

fn write_error(error: *mut ossa_error, code: u32, line: u32, offset: u64, message: &str) {
    if error.is_null() {
        return;
    }
    let mut text = [0 as c_char; 512];
    let mut end = message.len().min(text.len() - 1);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    for (dst, src) in text.iter_mut().zip(message.as_bytes().iter().take(end)) {
        *dst = *src as c_char;
    }
    let record = ossa_error {
        result: code,
        line,
        offset,
        message: text,
    };
    // SAFETY: `error` is non-null and, by the contract, points to a writable ossa_error.
    unsafe { error.write_unaligned(record) };
}

fn report(error: *mut ossa_error, result: std::thread::Result<Result<()>>) -> u32 {
    match result {
        Ok(Ok(())) => {
            write_error(error, 0, 0, NOT_APPLICABLE, "");
            0
        }
        Ok(Err(e)) => {
            let code = e.code() as u32;
            let d = e.detail();
            write_error(
                error,
                code,
                d.line.unwrap_or(0),
                d.offset.unwrap_or(NOT_APPLICABLE),
                &e.to_string(),
            );
            code
        }
        Err(_) => {
            let code = ErrorCode::Panic as u32;
            write_error(
                error,
                code,
                0,
                NOT_APPLICABLE,
                "internal error: a panic was caught at the C boundary",
            );
            code
        }
    }
}

/// Runs `body`, catching panics, and turns its outcome into a result code and error record.
fn guard(error: *mut ossa_error, body: impl FnOnce() -> Result<()>) -> u32 {
    report(error, catch_unwind(AssertUnwindSafe(body)))
}

/// For functions that answer with a value rather than a result code.
fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

fn null(what: &str) -> Error {
    Error::null_argument(format!("{what} is NULL"))
}

/// The model behind a handle.
fn model_ref<'a>(model: *const ossa_model) -> Result<&'a Model> {
    // SAFETY: a non-null handle came from ossa_load_* and has not been freed (the contract).
    unsafe { model.as_ref() }
        .map(|m| &m.model)
        .ok_or_else(|| null("model"))
}

/// Writes `value` through a caller's out-pointer, only after everything else has succeeded.
fn put<T>(out: *mut T, value: T) {
    // SAFETY: callers check `out` for NULL before computing `value`; the contract says it is
    // writable and sized for T.
    unsafe { out.write_unaligned(value) };
}

fn c_str<'a>(p: *const c_char) -> Option<&'a CStr> {
    // SAFETY: a non-null string argument is NUL-terminated by the contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) })
}

fn c_name(bytes_with_nul: &[u8]) -> *const c_char {
    bytes_with_nul.as_ptr().cast()
}

/// The caller's read callbacks as a filesystem: the model and its sidecars are read through them.
struct CallerIo {
    io: ossa_file_io,
}

/// A file the caller's callback handed out; given back through `release` when dropped, even
/// when loading fails or panics.
struct CallerFile<'a> {
    io: &'a ossa_file_io,
    data: *const u8,
    size: usize,
    token: *mut c_void,
}

impl AsRef<[u8]> for CallerFile<'_> {
    fn as_ref(&self) -> &[u8] {
        if self.size == 0 {
            return &[];
        }
        // SAFETY: the callback promised `size` readable bytes at non-null `data` until released,
        // which happens only when this value is dropped.
        unsafe { std::slice::from_raw_parts(self.data, self.size) }
    }
}

impl Drop for CallerFile<'_> {
    fn drop(&mut self) {
        if let Some(release) = self.io.release {
            // SAFETY: called once for the one successful read this value stands for.
            unsafe { release(self.io.user, self.token) };
        }
    }
}

impl FileSystem for CallerIo {
    fn read(&self, path: &str) -> Result<FileData<'_>> {
        let read = self.io.read.ok_or_else(|| null("io->read"))?;
        // The callback is promised relative paths without `..`: checked here once more, at the
        // boundary, whatever asked.
        let path = contained(path)?;
        let c_path = CString::new(path)
            .map_err(|_| Error::invalid_argument(format!("{path:?} holds a NUL byte")))?;
        let mut data: *const u8 = ptr::null();
        let mut size: usize = 0;
        let mut token: *mut c_void = ptr::null_mut();
        // SAFETY: the caller supplied this callback for exactly this call shape.
        let code = unsafe {
            read(
                self.io.user,
                c_path.as_ptr(),
                &mut data,
                &mut size,
                &mut token,
            )
        };
        if code == ErrorCode::NotFound as u32 {
            return Err(Error::not_found(format!(
                "{path}: the read callback found no such file"
            )));
        }
        if code != 0 {
            return Err(Error::io(
                format!("{path}: the read callback failed with code {code}"),
                None,
            ));
        }
        let file = CallerFile {
            io: &self.io,
            data,
            size,
            token,
        };
        if size > 0 && data.is_null() {
            return Err(Error::io(
                format!("{path}: the read callback returned no data"),
                None,
            ));
        }
        Ok(Box::new(file))
    }
}

/// The caller's options, and the callbacks that the Rust options borrow.
struct Options {
    format: Format,
    strict: bool,
    max_bytes: u64,
    name: Option<String>,
    base_dir: Option<std::path::PathBuf>,
    skeleton: Option<String>,
    io: Option<CallerIo>,
}

impl Options {
    fn rust(&self) -> LoadOptions<'_> {
        LoadOptions {
            format: self.format,
            strict: self.strict,
            max_bytes: self.max_bytes,
            name: self.name.clone(),
            io: self.io.as_ref().map(|io| io as &dyn FileSystem),
            base_dir: self.base_dir.clone(),
            skeleton: self.skeleton.clone(),
        }
    }
}

/// The layout of `ossa_load_options` before `base_dir`: its fields end where `base_dir` starts.
const OPTIONS_WITHOUT_BASE_DIR: usize = std::mem::offset_of!(ossa_load_options, base_dir);

/// How many bytes of the caller's options to read, for a `size` that must be the size of a
/// released layout: any other size could end inside a field (half a pointer) or hold padding.
fn options_bytes(size: usize) -> Result<usize> {
    let full = size_of::<ossa_load_options>();
    let align = align_of::<ossa_load_options>();
    // A C compiler pads the earlier struct to its alignment; the padding is not a field.
    let earlier = OPTIONS_WITHOUT_BASE_DIR.next_multiple_of(align);
    if size == full {
        Ok(full)
    } else if size == earlier || size == OPTIONS_WITHOUT_BASE_DIR {
        Ok(OPTIONS_WITHOUT_BASE_DIR)
    } else {
        Err(Error::invalid_argument(format!(
            "options->size is {size}, which is no released size of ossa_load_options ({full} \
             bytes, or {earlier} without base_dir); call ossa_load_options_init first"
        )))
    }
}

fn read_options(options: *const ossa_load_options) -> Result<Options> {
    let mut o = ossa_load_options {
        size: size_of::<ossa_load_options>() as u32,
        format: 0,
        flags: 0,
        reserved: 0,
        max_bytes: 0,
        io: ptr::null(),
        name: ptr::null(),
        skeleton: ptr::null(),
        base_dir: ptr::null(),
    };
    if !options.is_null() {
        // SAFETY: a non-null options pointer points to at least its `size` field.
        let size = unsafe { options.cast::<u32>().read_unaligned() } as usize;
        let n = options_bytes(size)?;
        // SAFETY: the caller's struct holds `size` bytes; we copy no more than both structs hold.
        unsafe { ptr::copy_nonoverlapping(options.cast::<u8>(), (&raw mut o).cast::<u8>(), n) };
    }
    let format = Format::from_u32(o.format).ok_or_else(|| {
        Error::invalid_argument(format!("options->format {} is no ossa_format", o.format))
    })?;
    if o.flags & !OSSA_LOAD_STRICT != 0 {
        return Err(Error::invalid_argument(format!(
            "unknown load flags {:#x}",
            o.flags
        )));
    }
    // SAFETY: a non-null io pointer points to an ossa_file_io that outlives the call.
    let io = unsafe { o.io.as_ref() }.map(|io| CallerIo { io: *io });
    if let Some(io) = &io
        && io.io.read.is_none()
    {
        return Err(null("options->io->read"));
    }
    Ok(Options {
        format,
        strict: o.flags & OSSA_LOAD_STRICT != 0,
        max_bytes: o.max_bytes,
        name: c_str(o.name).map(|n| n.to_string_lossy().into_owned()),
        base_dir: c_str(o.base_dir).map(os_path),
        skeleton: c_str(o.skeleton).map(|n| n.to_string_lossy().into_owned()),
        io,
    })
}

/// The caller's input bytes, after checking them and the out-pointer for NULL.
fn memory_input<'a>(data: *const u8, size: usize, out: *mut *mut ossa_model) -> Result<&'a [u8]> {
    if data.is_null() {
        return Err(null("data"));
    }
    if out.is_null() {
        return Err(null("out"));
    }
    // SAFETY: the caller promises `size` readable bytes at `data` for this call.
    Ok(unsafe { std::slice::from_raw_parts(data, size) })
}

fn hand_out(out: *mut *mut ossa_model, model: Model) {
    put(out, Box::into_raw(Box::new(ossa_model { model })));
}

/// (MAJOR << 16) | (MINOR << 8) | PATCH
#[unsafe(no_mangle)]
pub extern "C" fn ossa_version() -> u32 {
    (OSSA_VERSION_MAJOR << 16) | (OSSA_VERSION_MINOR << 8) | OSSA_VERSION_PATCH
}

/// "OSSA_ERR_TRUNCATED"; never NULL, also for unknown values.
#[unsafe(no_mangle)]
pub extern "C" fn ossa_result_name(result: u32) -> *const c_char {
    let name: &'static CStr = match result {
        0 => c"OSSA_OK",
        1 => c"OSSA_ERR_NULL_ARGUMENT",
        2 => c"OSSA_ERR_INVALID_ARGUMENT",
        3 => c"OSSA_ERR_UNKNOWN_FORMAT",
        4 => c"OSSA_ERR_TRUNCATED",
        5 => c"OSSA_ERR_MALFORMED",
        6 => c"OSSA_ERR_UNSUPPORTED",
        7 => c"OSSA_ERR_LIMIT",
        8 => c"OSSA_ERR_IO",
        9 => c"OSSA_ERR_NOT_FOUND",
        10 => c"OSSA_ERR_MISMATCH",
        11 => c"OSSA_ERR_OUT_OF_MEMORY",
        12 => c"OSSA_ERR_PANIC",
        _ => c"OSSA_ERR_UNKNOWN",
    };
    name.as_ptr()
}

/// "OSSA_FORMAT_DPM"; never NULL, also for unknown values.
#[unsafe(no_mangle)]
pub extern "C" fn ossa_format_name(format: u32) -> *const c_char {
    let name: &'static CStr = match format {
        0 => c"OSSA_FORMAT_AUTO",
        1 => c"OSSA_FORMAT_DPM",
        2 => c"OSSA_FORMAT_SKM",
        3 => c"OSSA_FORMAT_SKP",
        4 => c"OSSA_FORMAT_SIMS_SKN",
        5 => c"OSSA_FORMAT_SIMS_BMF",
        6 => c"OSSA_FORMAT_SIMS_CMX",
        7 => c"OSSA_FORMAT_SIMS_BCF",
        8 => c"OSSA_FORMAT_MM2_SKEL",
        9 => c"OSSA_FORMAT_DMF",
        10 => c"OSSA_FORMAT_DMF_JSON",
        11 => c"OSSA_FORMAT_MM2_MOD",
        12 => c"OSSA_FORMAT_GLB",
        13 => c"OSSA_FORMAT_GLTF",
        _ => c"OSSA_FORMAT_UNKNOWN",
    };
    name.as_ptr()
}

/// Fills in the defaults and size.
///
/// # Safety
/// `options` is NULL (a no-op) or points to a writable `ossa_load_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_load_options_init(options: *mut ossa_load_options) {
    if options.is_null() {
        return;
    }
    put(
        options,
        ossa_load_options {
            size: size_of::<ossa_load_options>() as u32,
            format: ossa_format::OSSA_FORMAT_AUTO as u32,
            flags: 0,
            reserved: 0,
            max_bytes: 0,
            io: ptr::null(),
            name: ptr::null(),
            skeleton: ptr::null(),
            base_dir: ptr::null(),
        },
    );
}

/// Loads a model from `size` bytes at `data`.
///
/// # Safety
/// `data` points to `size` readable bytes; `options` is NULL or initialised; `out` is writable;
/// `error` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_load_memory(
    data: *const u8,
    size: usize,
    options: *const ossa_load_options,
    out: *mut *mut ossa_model,
    error: *mut ossa_error,
) -> u32 {
    guard(error, || {
        let bytes = memory_input(data, size, out)?;
        let options = read_options(options)?;
        let model = Model::load(bytes, &options.rust())?;
        hand_out(out, model);
        Ok(())
    })
}

/// Loads a model from a file and its sidecars: through `options->io` when given (`path` is then
/// one of io's, relative and without `..`), else from the OS filesystem inside
/// `options->base_dir` (default: the model's directory), where the model must lie too. A path or
/// symbolic link that leads out is OSSA_ERR_INVALID_ARGUMENT, and nothing outside is read.
///
/// # Safety
/// `path` is a NUL-terminated string; `options` is NULL or initialised; `out` is writable;
/// `error` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_load_file(
    path: *const c_char,
    options: *const ossa_load_options,
    out: *mut *mut ossa_model,
    error: *mut ossa_error,
) -> u32 {
    guard(error, || {
        let path = c_str(path).ok_or_else(|| null("path"))?;
        if out.is_null() {
            return Err(null("out"));
        }
        let options = read_options(options)?;
        let model = Model::load_file(os_path(path), &options.rust())?;
        hand_out(out, model);
        Ok(())
    })
}

#[cfg(unix)]
fn os_path(path: &CStr) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt;
    std::path::PathBuf::from(std::ffi::OsStr::from_bytes(path.to_bytes()))
}

#[cfg(not(unix))]
fn os_path(path: &CStr) -> std::path::PathBuf {
    std::path::PathBuf::from(path.to_string_lossy().into_owned())
}

/// Frees a model; NULL is a no-op.
///
/// # Safety
/// `model` is NULL or a handle from ossa_load_* not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_free(model: *mut ossa_model) {
    if model.is_null() {
        return;
    }
    guard_value((), || {
        // SAFETY: the handle came from Box::into_raw in hand_out and is freed once.
        drop(unsafe { Box::from_raw(model) });
    });
}

/// A new model whose meshes use the bones of `skeleton`.
///
/// # Safety
/// `meshes` and `skeleton` are live handles; `out` is writable; `error` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_bind(
    meshes: *const ossa_model,
    skeleton: *const ossa_model,
    out: *mut *mut ossa_model,
    error: *mut ossa_error,
) -> u32 {
    guard(error, || {
        let meshes = model_ref(meshes)?;
        let skeleton = model_ref(skeleton)?;
        if out.is_null() {
            return Err(null("out"));
        }
        let model = Model::bind(meshes, skeleton)?;
        hand_out(out, model);
        Ok(())
    })
}

/// A new model: `model` (a skeleton, or meshes bound to one) with every skill of the Sims
/// character file (CMX or BCF) at `path` added. Each skill's numbers are read from
/// `ANIMATION.cfp` beside the file, ANIMATION being the skill's animation name as the file spells
/// it (`xskill-A2O-idle1.cfp`). The files are read through `options->io` when given, else from
/// the OS filesystem inside `options->base_dir` (default: the file's directory), as
/// ossa_load_file reads sidecars. The result has `model`'s bones, meshes and frames (frame 0, the
/// rest pose, unchanged), then each skill's frames, and one animation scene per skill after
/// `model`'s own: named after the skill, its frames spread evenly over the skill's duration (the
/// scene's fps), looping when the skill's name says `loop`. `model` is unchanged.
///
/// `options->format` is OSSA_FORMAT_AUTO, _SIMS_CMX or _SIMS_BCF; `options->name` (default:
/// `path`) names the file in messages; `options->max_bytes` caps the new model and the CFP
/// values decoded for it (OSSA_ERR_LIMIT); OSSA_LOAD_STRICT refuses what the default mode
/// tolerates in the file (data after the last skill); `options->skeleton` is not used.
/// OSSA_ERR_MISMATCH: `model` has no skeleton (meshes waiting for ossa_model_bind), or no motion
/// of a skill names one of its bones. OSSA_ERR_INVALID_ARGUMENT: the file holds no skills, or a
/// skill's animation name points outside the directory (absolute, `..`; it is never read).
/// OSSA_ERR_NOT_FOUND: a skill's CFP is missing; the message names it. Motions for bones
/// `model` lacks are skipped with a warning.
///
/// # Safety
/// `model` is a live handle; `path` is a NUL-terminated string; `options` is NULL or initialised;
/// `out` is writable; `error` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_add_skills(
    model: *const ossa_model,
    path: *const c_char,
    options: *const ossa_load_options,
    out: *mut *mut ossa_model,
    error: *mut ossa_error,
) -> u32 {
    guard(error, || {
        let model = model_ref(model)?;
        let path = c_str(path).ok_or_else(|| null("path"))?;
        if out.is_null() {
            return Err(null("out"));
        }
        let options = read_options(options)?;
        let added = model.with_skills_file(os_path(path), &options.rust())?;
        hand_out(out, added);
        Ok(())
    })
}

/// ossa_model_add_skills for a character file of `size` bytes at `data`, which
/// `options->name` names; the CFPs are read through `options->io` (required: else
/// OSSA_ERR_INVALID_ARGUMENT) beside `options->name`, or at the root of `options->io` without a
/// name.
///
/// # Safety
/// `model` is a live handle; `data` points to `size` readable bytes; `options` is NULL or
/// initialised; `out` is writable; `error` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_add_skills_memory(
    model: *const ossa_model,
    data: *const u8,
    size: usize,
    options: *const ossa_load_options,
    out: *mut *mut ossa_model,
    error: *mut ossa_error,
) -> u32 {
    guard(error, || {
        let model = model_ref(model)?;
        let bytes = memory_input(data, size, out)?;
        let options = read_options(options)?;
        let added = model.with_skills(bytes, &options.rust())?;
        hand_out(out, added);
        Ok(())
    })
}

/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_info(
    model: *const ossa_model,
    out: *mut ossa_model_info,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        if out.is_null() {
            return Err(null("out"));
        }
        let i = model.info();
        put(
            out,
            ossa_model_info {
                format: i.format as u32,
                bone_count: i.bone_count,
                mesh_count: i.mesh_count,
                frame_count: i.frame_count,
                animation_count: i.animation_count,
                vertex_count: i.vertex_count,
                triangle_count: i.triangle_count,
                max_influences: i.max_influences,
                flags: if model.unbound().is_some() {
                    OSSA_MODEL_UNBOUND
                } else {
                    0
                },
                up_axis: i.up_axis,
                handedness: i.handedness,
                mins: i.mins,
                maxs: i.maxs,
            },
        );
        Ok(())
    })
}

fn out_of_range(what: &str, index: u32, count: usize) -> Error {
    Error::invalid_argument(format!("{what} {index} out of range (model has {count})"))
}

/// The shape every indexed getter shares: check the handle and out-pointer, find item `index`
/// of the model's `items`, and write its C description.
fn get_indexed<T, I>(
    model: *const ossa_model,
    index: u32,
    out: *mut I,
    what: &str,
    items: impl Fn(&Model) -> &[T],
    describe: impl Fn(&T) -> I,
) -> u32 {
    get_found(
        model,
        out,
        |m| {
            let items = items(m);
            (items.get(index as usize)).ok_or_else(|| out_of_range(what, index, items.len()))
        },
        describe,
    )
}

/// [`get_indexed`] for an item `find` looks up (one inside another).
fn get_found<T, I>(
    model: *const ossa_model,
    out: *mut I,
    find: impl FnOnce(&Model) -> Result<&T>,
    describe: impl FnOnce(&T) -> I,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        if out.is_null() {
            return Err(null("out"));
        }
        put(out, describe(find(model)?));
        Ok(())
    })
}

/// Item `index` of `items`, which belong to `owner`.
fn nth<'a, T>(items: &'a [T], index: u32, what: &str, owner: &dyn Fn() -> String) -> Result<&'a T> {
    items.get(index as usize).ok_or_else(|| {
        Error::invalid_argument(format!(
            "{what} {index} out of range ({} has {})",
            owner(),
            items.len()
        ))
    })
}

fn c_property(p: &model::Property) -> ossa_property {
    ossa_property {
        list: p.list,
        key: c_name(p.key.as_bytes_with_nul()),
        value: c_name(p.value.as_bytes_with_nul()),
    }
}

fn count_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_bone(
    model: *const ossa_model,
    bone: u32,
    out: *mut ossa_bone_info,
) -> u32 {
    get_indexed(model, bone, out, "bone", Model::bones, |b| ossa_bone_info {
        name: c_name(b.name.as_bytes_with_nul()),
        parent: b.parent,
        flags: b.flags,
    })
}

fn find(
    model: *const ossa_model,
    name: *const c_char,
    lookup: impl Fn(&Model, &[u8]) -> Option<u32>,
) -> i32 {
    guard_value(-1, || {
        let (Ok(model), Some(name)) = (model_ref(model), c_str(name)) else {
            return -1;
        };
        lookup(model, name.to_bytes()).map_or(-1, |i| i32::try_from(i).unwrap_or(-1))
    })
}

/// Exact match; -1 if absent; O(1).
///
/// # Safety
/// `model` is NULL or a live handle; `name` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_find_bone(
    model: *const ossa_model,
    name: *const c_char,
) -> i32 {
    find(model, name, |m, n| m.find_bone(n))
}

/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_frame(
    model: *const ossa_model,
    frame: u32,
    out: *mut ossa_frame_info,
) -> u32 {
    get_indexed(model, frame, out, "frame", Model::frames, |f| {
        ossa_frame_info {
            name: c_name(f.name.as_bytes_with_nul()),
            mins: f.mins,
            maxs: f.maxs,
            yaw_radius: f.yaw_radius,
            radius: f.radius,
        }
    })
}

/// Exact match; -1 if absent; O(1).
///
/// # Safety
/// `model` is NULL or a live handle; `name` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_find_frame(
    model: *const ossa_model,
    name: *const c_char,
) -> i32 {
    find(model, name, |m, n| m.find_frame(n))
}

/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_mesh(
    model: *const ossa_model,
    mesh: u32,
    out: *mut ossa_mesh_info,
) -> u32 {
    get_indexed(model, mesh, out, "mesh", Model::meshes, |m| {
        ossa_mesh_info {
            name: c_name(m.name().as_bytes_with_nul()),
            shader: c_name(m.shader().as_bytes_with_nul()),
            vertex_count: m.vertex_count() as u32,
            triangle_count: m.triangle_count() as u32,
            indices: m.indices().as_ptr(),
            texcoords: m.texcoords().map_or(ptr::null(), |t| t.as_ptr().cast()),
            group_ids: m.group_ids().map_or(ptr::null(), |g| g.as_ptr()),
        }
    })
}

/// How many textures the model carries (DMF); 0 for NULL.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_texture_count(model: *const ossa_model) -> u32 {
    guard_value(0, || {
        model_ref(model).map_or(0, |m| count_u32(m.textures().len()))
    })
}

/// Texture `texture`: its name, size, sampling and the image file's bytes (PNG).
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_texture(
    model: *const ossa_model,
    texture: u32,
    out: *mut ossa_texture_info,
) -> u32 {
    get_indexed(model, texture, out, "texture", Model::textures, |t| {
        ossa_texture_info {
            name: c_name(t.name.as_bytes_with_nul()),
            width: u32::from(t.width),
            height: u32::from(t.height),
            flip_y: u32::from(t.flip_y),
            wrap_s: u32::from(t.wrap_s),
            wrap_t: u32::from(t.wrap_t),
            image: if t.image.is_empty() {
                ptr::null()
            } else {
                t.image.as_ptr()
            },
            image_size: t.image.len(),
        }
    })
}

/// How many materials the model's meshes refer to (DMF); 0 for NULL.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_material_count(model: *const ossa_model) -> u32 {
    guard_value(0, || {
        model_ref(model).map_or(0, |m| count_u32(m.materials().len()))
    })
}

/// Material `material`, every field the file gives.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_material(
    model: *const ossa_model,
    material: u32,
    out: *mut ossa_material_info,
) -> u32 {
    get_indexed(model, material, out, "material", Model::materials, |m| {
        ossa_material_info {
            name: c_name(m.name.as_bytes_with_nul()),
            texture: m.texture.map_or(-1, |t| i32::try_from(t).unwrap_or(-1)),
            use_blending: u32::from(m.use_blending),
            blend_equation: u32::from(m.blend_equation),
            blend_src: u32::from(m.blend_src),
            blend_dst: u32::from(m.blend_dst),
            skinning: u32::from(m.skinning),
            shader_type: u32::from(m.shader_type),
            face_side: u32::from(m.face_side),
            shadow_side: u32::from(m.shadow_side),
            ignore_lights: u32::from(m.ignore_lights),
            vertex_color: u32::from(m.vertex_color),
            use_alpha: u32::from(m.use_alpha),
            skip_render: u32::from(m.skip_render),
            alpha_test: m.alpha_test,
            diffuse: m.diffuse,
            emissive: m.emissive,
            specular: m.specular,
        }
    })
}

/// The material of mesh `mesh`; -1 where it has none (other formats), for NULL, or past the
/// last mesh.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_mesh_material(model: *const ossa_model, mesh: u32) -> i32 {
    guard_value(-1, || {
        model_ref(model)
            .ok()
            .and_then(|m| m.meshes().get(mesh as usize))
            .and_then(|m| m.material())
            .map_or(-1, |k| i32::try_from(k).unwrap_or(-1))
    })
}

/// The vertex colours of mesh `mesh`: 4 bytes (red, green, blue, alpha) per vertex, living as
/// long as the model (DMF's, and the `c` records of an MM2 `.mod`); NULL where it has none
/// (other formats, a `.mod` without `c` records), for NULL, or past the last mesh.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_mesh_colors(model: *const ossa_model, mesh: u32) -> *const u8 {
    guard_value(ptr::null(), || {
        model_ref(model)
            .ok()
            .and_then(|m| m.meshes().get(mesh as usize))
            .and_then(|m| m.colors())
            .map_or(ptr::null(), |c| c.as_flattened().as_ptr())
    })
}

/// Animation scene `animation`: from DPM's `.framegroups` file, or one per frame without it.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_animation(
    model: *const ossa_model,
    animation: u32,
    out: *mut ossa_animation_info,
) -> u32 {
    get_indexed(model, animation, out, "animation", Model::animations, |a| {
        ossa_animation_info {
            name: c_name(a.name.as_bytes_with_nul()),
            first_frame: a.first_frame,
            frame_count: a.frame_count,
            fps: a.fps,
            looping: u32::from(a.looping),
        }
    })
}

/// How many events scene `animation` has; 0 for NULL or past the last scene.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_animation_event_count(
    model: *const ossa_model,
    animation: u32,
) -> u32 {
    guard_value(0, || {
        model_ref(model).map_or(0, |m| count_u32(m.animation_events(animation).len()))
    })
}

/// Event `event` of scene `animation`; a scene's events come in order of time (file order
/// among equal times).
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_animation_get_event(
    model: *const ossa_model,
    animation: u32,
    event: u32,
    out: *mut ossa_animation_event,
) -> u32 {
    get_found(
        model,
        out,
        |m| {
            nth(m.animations(), animation, "animation", &|| {
                "the model".to_owned()
            })?;
            nth(m.animation_events(animation), event, "event", &|| {
                format!("animation {animation}")
            })
        },
        |e| ossa_animation_event {
            time: e.time,
            bone: e.bone,
            key: c_name(e.key.as_bytes_with_nul()),
            value: c_name(e.value.as_bytes_with_nul()),
        },
    )
}

/// How far scene `animation` moves the character, where the file says.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_animation_get_travel(
    model: *const ossa_model,
    animation: u32,
    out: *mut ossa_animation_travel,
) -> u32 {
    get_indexed(model, animation, out, "animation", Model::animations, |a| {
        ossa_animation_travel {
            distance: a.distance,
            moving: u32::from(a.moving),
        }
    })
}

/// How many suits the model's character file lists (Sims CMX); 0 for NULL.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_suit_count(model: *const ossa_model) -> u32 {
    guard_value(0, || {
        model_ref(model).map_or(0, |m| count_u32(m.suits().len()))
    })
}

/// Suit `suit`: its name, type and how many skins and properties it has.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_suit(
    model: *const ossa_model,
    suit: u32,
    out: *mut ossa_suit_info,
) -> u32 {
    get_indexed(model, suit, out, "suit", Model::suits, |s| ossa_suit_info {
        name: c_name(s.name.as_bytes_with_nul()),
        kind: s.kind,
        skin_count: count_u32(s.skins.len()),
        property_count: count_u32(s.properties.len()),
    })
}

fn find_suit(m: &Model, suit: u32) -> Result<&model::Suit> {
    nth(m.suits(), suit, "suit", &|| "the model".to_owned())
}

fn find_skin(m: &Model, suit: u32, skin: u32) -> Result<&model::SuitSkin> {
    nth(&find_suit(m, suit)?.skins, skin, "skin", &|| {
        format!("suit {suit}")
    })
}

/// Skin `skin` of suit `suit`: the mesh and the bone it hangs on.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_suit_get_skin(
    model: *const ossa_model,
    suit: u32,
    skin: u32,
    out: *mut ossa_suit_skin,
) -> u32 {
    get_found(
        model,
        out,
        |m| find_skin(m, suit, skin),
        |k| ossa_suit_skin {
            bone: c_name(k.bone.as_bytes_with_nul()),
            mesh: c_name(k.mesh.as_bytes_with_nul()),
            censor_flags: k.censor_flags,
            property_count: count_u32(k.properties.len()),
        },
    )
}

/// Property `property` of suit `suit`, in file order.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_suit_get_property(
    model: *const ossa_model,
    suit: u32,
    property: u32,
    out: *mut ossa_property,
) -> u32 {
    get_found(
        model,
        out,
        |m| {
            let owner = || format!("suit {suit}");
            nth(
                &find_suit(m, suit)?.properties,
                property,
                "property",
                &owner,
            )
        },
        c_property,
    )
}

/// Property `property` of skin `skin` of suit `suit`, in file order.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_suit_skin_get_property(
    model: *const ossa_model,
    suit: u32,
    skin: u32,
    property: u32,
    out: *mut ossa_property,
) -> u32 {
    get_found(
        model,
        out,
        |m| {
            let owner = || format!("suit {suit} skin {skin}");
            nth(
                &find_skin(m, suit, skin)?.properties,
                property,
                "property",
                &owner,
            )
        },
        c_property,
    )
}

/// The frames to pose for `animation` at `seconds` since it started: one or two blends with
/// weights summing to 1, ready for ossa_pose_frames. A looping scene wraps round; another holds
/// its first frame before its start and its last after its end. A time that is not finite is
/// OSSA_ERR_INVALID_ARGUMENT.
///
/// # Safety
/// `model` is a live handle; `blends_out` holds 2 entries; `blend_count` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_animation_blend(
    model: *const ossa_model,
    animation: u32,
    seconds: f64,
    blends_out: *mut ossa_frame_blend,
    blend_count: *mut usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        if blends_out.is_null() {
            return Err(null("blends_out"));
        }
        if blend_count.is_null() {
            return Err(null("blend_count"));
        }
        let (blends, n) = model.animation_blend(animation as usize, seconds)?;
        for (i, b) in blends.iter().take(n).enumerate() {
            // SAFETY: `blends_out` holds two entries by the contract and n <= 2.
            unsafe {
                blends_out.add(i).write_unaligned(ossa_frame_blend {
                    frame: b.frame,
                    weight: b.weight,
                })
            };
        }
        put(blend_count, n);
        Ok(())
    })
}

/// # Safety
/// `model` is NULL (answers 0) or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_warning_count(model: *const ossa_model) -> u32 {
    guard_value(0, || {
        model_ref(model).map_or(0, |m| count_u32(m.warnings().len()))
    })
}

/// NULL past the end.
///
/// # Safety
/// `model` is NULL (answers NULL) or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_warning(model: *const ossa_model, index: u32) -> *const c_char {
    guard_value(ptr::null(), || {
        model_ref(model)
            .ok()
            .and_then(|m| m.warnings().get(index as usize))
            .map_or(ptr::null(), |w| c_name(w.as_bytes_with_nul()))
    })
}

/// The caller's bone matrices, once their count is known to be the model's.
fn bones_out<'a>(
    model: &Model,
    bones: *mut ossa_mat3x4,
    bone_count: usize,
) -> Result<&'a mut [Mat3x4]> {
    if bones.is_null() {
        return Err(null("bones_out"));
    }
    if bone_count != model.bones().len() {
        return Err(Error::invalid_argument(format!(
            "bone_count is {bone_count}, the model has {}",
            amount(model.bones().len() as u64, "bone", "bones")
        )));
    }
    // SAFETY: non-null, `bone_count` matrices long by the contract; ossa_mat3x4 and Mat3x4 share
    // a layout (checked at compile time above).
    Ok(unsafe { std::slice::from_raw_parts_mut(bones.cast::<Mat3x4>(), bone_count) })
}

fn bones_in<'a>(
    model: &Model,
    bones: *const ossa_mat3x4,
    bone_count: usize,
    what: &str,
) -> Result<&'a [Mat3x4]> {
    if bones.is_null() {
        return Err(null(what));
    }
    if bone_count != model.bones().len() {
        return Err(Error::invalid_argument(format!(
            "bone_count is {bone_count}, the model has {}",
            amount(model.bones().len() as u64, "bone", "bones")
        )));
    }
    // SAFETY: as in bones_out, read-only.
    Ok(unsafe { std::slice::from_raw_parts(bones.cast::<Mat3x4>(), bone_count) })
}

fn blends_in<'a>(blends: *const ossa_frame_blend, count: usize) -> Result<&'a [FrameBlend]> {
    if blends.is_null() {
        return Err(null("blends"));
    }
    if count == 0 || count > crate::pose::MAX_BLENDS {
        return Err(Error::invalid_argument(format!(
            "blend_count {count} is not 1 to 8"
        )));
    }
    // SAFETY: `count` blends are readable by the contract; the layouts match (checked above).
    Ok(unsafe { std::slice::from_raw_parts(blends.cast::<FrameBlend>(), count) })
}

/// A copy of the caller's root matrix, taken before any output is written, so that a root
/// inside the output buffer is read as the caller passed it.
fn root_in(root: *const ossa_mat3x4) -> Option<Mat3x4> {
    // SAFETY: a non-null root points to one matrix; the layouts match.
    (!root.is_null()).then(|| unsafe { root.cast::<Mat3x4>().read_unaligned() })
}

/// The bytes `[start, start + len)` of a caller's buffer.
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    len: usize,
    what: &'static str,
}

impl Span {
    fn of<T>(ptr: *const T, count: usize, what: &'static str) -> Span {
        Span {
            start: ptr as usize,
            len: count.saturating_mul(size_of::<T>()),
            what,
        }
    }

    fn end(self) -> usize {
        self.start.saturating_add(self.len)
    }

    fn overlaps(self, other: Span) -> bool {
        self.len > 0 && other.len > 0 && self.start < other.end() && other.start < self.end()
    }
}

/// Refuses an input that shares bytes with an output: ossa would read what it already wrote.
fn disjoint(input: Span, output: Span) -> Result<()> {
    if input.overlaps(output) {
        return Err(Error::invalid_argument(format!(
            "{} overlaps {}: an output may not share memory with an input",
            input.what, output.what
        )));
    }
    Ok(())
}

/// Model-space bone matrices for a weighted blend of 1 to 8 frames. A root with an element that
/// is not finite or is beyond 1e9 in magnitude is OSSA_ERR_INVALID_ARGUMENT: within that, the
/// poses and skinning of a model that loaded stay finite. `root` may lie inside `bones_out` (it
/// is read before anything is written); `blends` may not (OSSA_ERR_INVALID_ARGUMENT).
///
/// # Safety
/// `model` is a live handle; `blends` holds `blend_count` entries; `root` is NULL or one matrix;
/// `bones_out` holds `bone_count` matrices.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_pose_frames(
    model: *const ossa_model,
    blends: *const ossa_frame_blend,
    blend_count: usize,
    root: *const ossa_mat3x4,
    bones_out: *mut ossa_mat3x4,
    bone_count: usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let blends = blends_in(blends, blend_count)?;
        let root = root_in(root);
        let out_span = Span::of(bones_out, bone_count, "bones_out");
        disjoint(Span::of(blends.as_ptr(), blends.len(), "blends"), out_span)?;
        let out = self::bones_out(model, bones_out, bone_count)?;
        model.pose_frames(blends, root.as_ref(), out)
    })
}

/// The same blend, left parent-relative.
///
/// # Safety
/// As for `ossa_pose_frames`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_pose_frames_local(
    model: *const ossa_model,
    blends: *const ossa_frame_blend,
    blend_count: usize,
    local_out: *mut ossa_mat3x4,
    bone_count: usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let blends = blends_in(blends, blend_count)?;
        disjoint(
            Span::of(blends.as_ptr(), blends.len(), "blends"),
            Span::of(local_out, bone_count, "local_out"),
        )?;
        let out = bones_out(model, local_out, bone_count)?;
        model.pose_frames_local(blends, out)
    })
}

/// Concatenates caller-made parent-relative poses. They are held to the rule a file's frames
/// are: chained through the parents, every element finite and within 1e9 in magnitude (and the
/// root as for ossa_pose_frames), else OSSA_ERR_INVALID_ARGUMENT with `bones_out` untouched.
/// `root` may lie inside `bones_out`; `local` sharing memory with `bones_out` is
/// OSSA_ERR_INVALID_ARGUMENT.
///
/// # Safety
/// `model` is a live handle; `local` and `bones_out` hold `bone_count` matrices and do not
/// overlap; `root` is NULL or one matrix.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_pose_concat(
    model: *const ossa_model,
    local: *const ossa_mat3x4,
    root: *const ossa_mat3x4,
    bones_out: *mut ossa_mat3x4,
    bone_count: usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let local = bones_in(model, local, bone_count, "local")?;
        let root = root_in(root);
        disjoint(
            Span::of(local.as_ptr(), local.len(), "local"),
            Span::of(bones_out, bone_count, "bones_out"),
        )?;
        let out = self::bones_out(model, bones_out, bone_count)?;
        model.pose_concat(local, root.as_ref(), out)
    })
}

/// A caller's buffers, written through raw pointers because positions and normals may
/// interleave in one buffer (two `&mut` slices over it would alias).
struct CTarget {
    positions: *mut u8,
    position_stride: usize,
    normals: *mut u8,
    normal_stride: usize,
    capacity: usize,
}

fn stride_capacity(stride: usize, bytes: usize, what: &str) -> Result<usize> {
    if stride < 12 || !stride.is_multiple_of(4) {
        return Err(Error::invalid_argument(format!(
            "{what} stride {stride} is not a multiple of 4 of at least 12"
        )));
    }
    Ok(if bytes < 12 {
        0
    } else {
        (bytes - 12) / stride + 1
    })
}

impl CTarget {
    fn new(t: &ossa_skin_target) -> Result<CTarget> {
        if t.positions.is_null() {
            return Err(null("target->positions"));
        }
        let mut capacity = stride_capacity(t.position_stride, t.position_bytes, "position")?;
        if !t.normals.is_null() {
            capacity = capacity.min(stride_capacity(t.normal_stride, t.normal_bytes, "normal")?);
        }
        let target = CTarget {
            positions: t.positions.cast(),
            position_stride: t.position_stride,
            normals: t.normals.cast(),
            normal_stride: t.normal_stride,
            capacity,
        };
        target.check_interleaving()?;
        Ok(target)
    }

    /// The bytes the first `count` positions (or normals) take.
    fn span(base: *mut u8, stride: usize, count: usize, what: &'static str) -> Span {
        Span {
            start: base as usize,
            len: match count {
                0 => 0,
                n => (n - 1).saturating_mul(stride).saturating_add(12),
            },
            what,
        }
    }

    fn positions_span(&self, count: usize) -> Span {
        Self::span(
            self.positions,
            self.position_stride,
            count,
            "target->positions",
        )
    }

    fn normals_span(&self, count: usize) -> Option<Span> {
        (!self.normals.is_null())
            .then(|| Self::span(self.normals, self.normal_stride, count, "target->normals"))
    }

    /// Positions and normals may share one buffer, interleaved, but no normal may be written
    /// over a position: with one stride, each normal must start at least 12 bytes after a
    /// position and end before the next.
    fn check_interleaving(&self) -> Result<()> {
        let positions = self.positions_span(self.capacity);
        let Some(normals) = self.normals_span(self.capacity) else {
            return Ok(());
        };
        if !positions.overlaps(normals) {
            return Ok(());
        }
        let stride = self.position_stride;
        let apart =
            (normals.start.wrapping_sub(positions.start) as isize).rem_euclid(stride as isize);
        if self.normal_stride == stride && (12..=stride as isize - 12).contains(&apart) {
            return Ok(());
        }
        Err(Error::invalid_argument(format!(
            "target->normals overlap target->positions: a normal would be written over a \
             position (strides {} and {}, normals {apart} bytes after a position)",
            self.position_stride, self.normal_stride
        )))
    }

    /// Refuses an input that shares bytes with the first `count` elements written.
    fn check_disjoint(&self, input: Span, count: usize) -> Result<()> {
        disjoint(input, self.positions_span(count))?;
        match self.normals_span(count) {
            Some(normals) => disjoint(input, normals),
            None => Ok(()),
        }
    }
}

impl SkinTarget for CTarget {
    fn capacity(&self) -> usize {
        self.capacity
    }
    fn wants_normals(&self) -> bool {
        !self.normals.is_null()
    }
    #[inline]
    fn put(&mut self, i: usize, position: [f32; 3], normal: [f32; 3]) {
        // SAFETY: skin_mesh calls put only for i < count <= capacity, and capacity was computed
        // from the byte sizes the caller gave, so these 12 bytes lie inside the caller's buffer.
        unsafe {
            self.positions
                .add(i * self.position_stride)
                .cast::<[f32; 3]>()
                .write_unaligned(position);
            if !self.normals.is_null() {
                self.normals
                    .add(i * self.normal_stride)
                    .cast::<[f32; 3]>()
                    .write_unaligned(normal);
            }
        }
    }
    fn raw(&mut self) -> Option<RawTarget<'_>> {
        // SAFETY: capacity was computed from the byte sizes the caller gave for each buffer, so
        // every element below it lies inside them; the caller lends the buffers for the call.
        Some(unsafe {
            RawTarget::new(
                self.positions,
                self.position_stride,
                self.normals,
                self.normal_stride,
                self.capacity,
            )
        })
    }
}

/// Skins vertices [first, first + count) of `mesh`. Positions and normals may interleave in one
/// buffer, but a normal written over a position, or `bones` inside the bytes written, is
/// OSSA_ERR_INVALID_ARGUMENT.
///
/// # Safety
/// `model` is a live handle; `bones` holds `bone_count` matrices; `target` describes writable
/// buffers of the sizes it states.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_skin_mesh(
    model: *const ossa_model,
    mesh: u32,
    bones: *const ossa_mat3x4,
    bone_count: usize,
    first: u32,
    count: u32,
    flags: u32,
    target: *const ossa_skin_target,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let bones = bones_in(model, bones, bone_count, "bones")?;
        // SAFETY: a non-null target points to one ossa_skin_target.
        let target = unsafe { target.as_ref() }.ok_or_else(|| null("target"))?;
        let mut target = CTarget::new(target)?;
        target.check_disjoint(
            Span::of(bones.as_ptr(), bones.len(), "bones"),
            count as usize,
        )?;
        model.skin_mesh(
            mesh as usize,
            bones,
            first as usize,
            count as usize,
            flags,
            &mut target,
        )
    })
}

/// The bind-pose (frame 0) positions and normals of vertices [first, first + count) of `mesh`,
/// laid out as ossa_skin_mesh lays them: the vertices a GPU skins.
///
/// # Safety
/// `model` is a live handle; `target` describes writable buffers of the sizes it states.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_mesh_bind_vertices(
    model: *const ossa_model,
    mesh: u32,
    first: u32,
    count: u32,
    flags: u32,
    target: *const ossa_skin_target,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        // SAFETY: a non-null target points to one ossa_skin_target.
        let target = unsafe { target.as_ref() }.ok_or_else(|| null("target"))?;
        let mut target = CTarget::new(target)?;
        model.bind_vertices(
            mesh as usize,
            first as usize,
            count as usize,
            flags,
            &mut target,
        )
    })
}

/// Each vertex's `per_vertex` (1 to 8) strongest influences, strongest first: bone indices into
/// `bones_out` and weights summing to 1 into `weights_out`, `per_vertex` entries per vertex
/// (`capacity` entries each at least vertex_count * per_vertex); unused slots are bone 0 weight
/// 0. `*dropped` (may be NULL) gets the most influences any vertex had beyond `per_vertex`.
///
/// # Safety
/// `model` is a live handle; `bones_out` and `weights_out` hold `capacity` entries each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_mesh_gpu_weights(
    model: *const ossa_model,
    mesh: u32,
    per_vertex: u32,
    bones_out: *mut u16,
    weights_out: *mut f32,
    capacity: usize,
    dropped: *mut u32,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        if bones_out.is_null() {
            return Err(null("bones_out"));
        }
        if weights_out.is_null() {
            return Err(null("weights_out"));
        }
        // SAFETY: both buffers hold `capacity` entries by the contract and are distinct arrays.
        let (bones, weights) = unsafe {
            (
                std::slice::from_raw_parts_mut(bones_out, capacity),
                std::slice::from_raw_parts_mut(weights_out, capacity),
            )
        };
        let most = model.gpu_weights(mesh as usize, per_vertex as usize, bones, weights)?;
        if !dropped.is_null() {
            put(dropped, u32::try_from(most).unwrap_or(u32::MAX));
        }
        Ok(())
    })
}

/// The inverse of every bone's bind-pose matrix; the zero matrix for a bone whose bind pose is
/// singular (collapsed to a point), so that it contributes its pose's translation alone.
///
/// # Safety
/// `model` is a live handle; `out` holds `bone_count` matrices.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_inverse_bind(
    model: *const ossa_model,
    out: *mut ossa_mat3x4,
    bone_count: usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let out = bones_out(model, out, bone_count)?;
        model.inverse_bind(out)
    })
}

/// The matrices a vertex shader multiplies bind-pose vertices with: `bones[i] * inverse bind[i]`,
/// from the model-space matrices of ossa_pose_frames. `bones` and `out` sharing memory is
/// OSSA_ERR_INVALID_ARGUMENT.
///
/// # Safety
/// `model` is a live handle; `bones` and `out` hold `bone_count` matrices.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_skinning_matrices(
    model: *const ossa_model,
    bones: *const ossa_mat3x4,
    out: *mut ossa_mat3x4,
    bone_count: usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let bones = bones_in(model, bones, bone_count, "bones")?;
        disjoint(
            Span::of(bones.as_ptr(), bones.len(), "bones"),
            Span::of(out, bone_count, "out"),
        )?;
        let out = bones_out(model, out, bone_count)?;
        model.skinning_matrices(bones, out)
    })
}

/// A new model with the optimisations of `flags` (OSSA_OPTIMIZE_*) applied, and what changed
/// in `*report` (may be NULL). Poses, the bind mesh and skinning are unchanged, up to the order
/// of vertices and triangles.
///
/// # Safety
/// `model` is a live handle; `out` is writable; `report` and `error` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_optimize(
    model: *const ossa_model,
    flags: u32,
    out: *mut *mut ossa_model,
    report: *mut ossa_optimize_report,
    error: *mut ossa_error,
) -> u32 {
    guard(error, || {
        let model = model_ref(model)?;
        if out.is_null() {
            return Err(null("out"));
        }
        let (optimized, r) = model.optimized(check_optimize_flags(flags)?)?;
        if !report.is_null() {
            put(
                report,
                ossa_optimize_report {
                    bones_before: r.bones_before,
                    bones_after: r.bones_after,
                    triangles_moved: r.triangles_moved,
                    vertices_moved: r.vertices_moved,
                    acmr_before: r.acmr_before,
                    acmr_after: r.acmr_after,
                },
            );
        }
        hand_out(out, optimized);
        Ok(())
    })
}

fn check_optimize_flags(flags: u32) -> Result<u32> {
    if flags & !optimize::OPTIMIZE_ALL != 0 {
        return Err(Error::invalid_argument(format!(
            "unknown optimisation flags {flags:#x}"
        )));
    }
    Ok(flags)
}

/// Writes `model` as `format` (DPM, SKM, SKP, Sims SKN/BMF/CMX/BCF, MM2 SKEL/MOD, DMF binary
/// or JSON, glTF binary or JSON, with every influence and the file's units) through `write`,
/// which may be called several times; `flags` (OSSA_OPTIMIZE_*) optimise the saved model first,
/// as ossa_model_optimize does. ossa_save_with takes glTF's options.
///
/// # Safety
/// `model` is a live handle; `write` is a callback for `user`; `error` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_save(
    model: *const ossa_model,
    format: u32,
    flags: u32,
    write: ossa_write_fn,
    user: *mut c_void,
    error: *mut ossa_error,
) -> u32 {
    let options = ossa_save_options {
        flags,
        ..save_defaults()
    };
    // SAFETY: the caller's promises are ossa_save_with's, and the options are whole.
    unsafe { ossa_save_with(model, format, &options, write, user, error) }
}

fn save_defaults() -> ossa_save_options {
    ossa_save_options {
        size: size_of::<ossa_save_options>() as u32,
        flags: 0,
        max_influences: 0,
        scale: 1.0,
        max_bytes: 0,
        io: ptr::null(),
        name: ptr::null(),
        base_dir: ptr::null(),
        report: ptr::null_mut(),
    }
}

/// Fills in the defaults (scale 1, every influence, no textures looked for) and size.
///
/// # Safety
/// `options` is NULL (a no-op) or points to a writable `ossa_save_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_save_options_init(options: *mut ossa_save_options) {
    // SAFETY: the caller passes NULL or a writable options struct.
    if let Some(o) = unsafe { options.as_mut() } {
        *o = save_defaults();
    }
}

/// The caller's save options, checked.
fn read_save_options(options: *const ossa_save_options) -> Result<ossa_save_options> {
    let mut o = save_defaults();
    if !options.is_null() {
        // SAFETY: a non-null options pointer points to at least its `size` field.
        let size = unsafe { options.cast::<u32>().read_unaligned() } as usize;
        if size != size_of::<ossa_save_options>() {
            return Err(Error::invalid_argument(format!(
                "options->size is {size}, which is no released size of ossa_save_options ({} \
                 bytes); call ossa_save_options_init first",
                size_of::<ossa_save_options>()
            )));
        }
        // SAFETY: the caller's struct holds `size` bytes, the size of ours.
        unsafe { ptr::copy_nonoverlapping(options, &mut o, 1) };
    }
    // SAFETY: a non-null io pointer points to an ossa_file_io that outlives the call.
    if let Some(io) = unsafe { o.io.as_ref() }
        && io.read.is_none()
    {
        return Err(null("options->io->read"));
    }
    Ok(o)
}

/// The bytes of `model` as `format`, with the options' glTF settings and textures, and what a
/// glTF export could not express.
fn saved_bytes(
    model: &Model,
    format: Format,
    o: &ossa_save_options,
) -> Result<(Vec<u8>, Option<ossa_export_report>)> {
    let flags = check_optimize_flags(o.flags)?;
    let optimized;
    let model = if flags == 0 {
        model
    } else {
        optimized = model.optimized(flags)?.0;
        &optimized
    };
    if !matches!(format, Format::Glb | Format::Gltf) {
        if o.scale != 1.0 || o.max_influences != 0 || !o.report.is_null() {
            return Err(Error::invalid_argument(format!(
                "scale, max_influences and report are glTF's; {} takes none",
                format.name()
            )));
        }
        return Ok((model.save(format)?, None));
    }
    export_gltf(model, format, o).map(|(bytes, report)| (bytes, Some(report)))
}

#[cfg(feature = "gltf")]
fn export_gltf(
    model: &Model,
    format: Format,
    o: &ossa_save_options,
) -> Result<(Vec<u8>, ossa_export_report)> {
    use crate::format::gltf::ExportOptions;
    use crate::textures::{find_textures, find_textures_beside};

    let name = c_str(o.name).map(|n| n.to_string_lossy().into_owned());
    // SAFETY: a non-null io pointer points to an ossa_file_io that outlives the call.
    let io = unsafe { o.io.as_ref() }.map(|io| CallerIo { io: *io });
    let textures = match (&name, &io) {
        (Some(name), Some(io)) => find_textures(model, Some((io, name.as_str())), o.max_bytes),
        (Some(name), None) => {
            let base = c_str(o.base_dir).map(os_path);
            find_textures_beside(
                model,
                std::path::Path::new(name),
                base.as_deref(),
                o.max_bytes,
            )?
        }
        (None, _) => find_textures(model, None, o.max_bytes),
    };
    let export = model.export_gltf(&ExportOptions {
        binary: format == Format::Glb,
        scale: o.scale,
        max_influences: o.max_influences as usize,
        textures: Some(&textures),
        source_name: name.map(|n| n.rsplit(['/', '\\']).next().unwrap_or(&n).to_owned()),
    })?;
    let e = &export.exactness;
    let report = ossa_export_report {
        size: e.size,
        inexact_vertices: e.inexact_vertices as u32,
        bind_max: e.bind_max,
        animated_max: e.animated_max,
        frames_checked: e.frames_checked as u32,
        frame_count: e.frames as u32,
        renormalised_vertices: e.unnormalised_vertices as u32,
        worst_weight_sum_error: e.worst_weight_sum,
        capped_vertices: e.capped_vertices as u32,
        most_dropped: e.most_dropped as u32,
        images: textures.images.len() as u32,
        texture_warnings: textures.warnings.len() as u32,
    };
    Ok((export.bytes, report))
}

#[cfg(not(feature = "gltf"))]
fn export_gltf(
    _: &Model,
    format: Format,
    _: &ossa_save_options,
) -> Result<(Vec<u8>, ossa_export_report)> {
    Err(Error::unsupported(format!(
        "saving as {} needs the library built with its gltf feature",
        format.name()
    )))
}

/// Hands `bytes` to the caller's callback.
fn write_out(write: ossa_write_fn, user: *mut c_void, bytes: &[u8]) -> Result<()> {
    let write = write.ok_or_else(|| null("write"))?;
    // SAFETY: the caller supplied this callback for exactly this call shape.
    let code = unsafe { write(user, bytes.as_ptr(), bytes.len()) };
    if code != 0 {
        return Err(Error::io(
            format!("the write callback failed with code {code}"),
            None,
        ));
    }
    Ok(())
}

/// ossa_save with options (NULL = the defaults of ossa_save_options_init): for glTF, the scale,
/// the influences kept, where the textures are found, and a report of what the export could not
/// express exactly. The report is written only when the call succeeds.
///
/// # Safety
/// `model` is a live handle; `options` is NULL or initialised by ossa_save_options_init; `write`
/// is a callback for `user`; `error` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_save_with(
    model: *const ossa_model,
    format: u32,
    options: *const ossa_save_options,
    write: ossa_write_fn,
    user: *mut c_void,
    error: *mut ossa_error,
) -> u32 {
    guard(error, || {
        let model = model_ref(model)?;
        write.ok_or_else(|| null("write"))?;
        let format = Format::from_u32(format)
            .ok_or_else(|| Error::invalid_argument(format!("format {format} is no ossa_format")))?;
        let options = read_save_options(options)?;
        let (bytes, report) = saved_bytes(model, format, &options)?;
        write_out(write, user, &bytes)?;
        if let Some(report) = report.filter(|_| !options.report.is_null()) {
            put(options.report, report);
        }
        Ok(())
    })
}
