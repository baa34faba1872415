//! The library's version and names, load options, loading from memory, files or the caller's
//! reads, binding meshes to a skeleton, adding skills, and freeing a model.

use crate::error::{Error, ErrorCode, Result};
use crate::format::{Format, LoadOptions};
use crate::io::{FileData, FileSystem, contained};
use crate::model::Model;
use std::ffi::c_char;
use std::ffi::{CStr, CString, c_void};
use std::ptr;

use super::bones::ossa_model;
use super::checks::{c_str, guard, guard_value, model_ref, null, ossa_error, put};
use super::{
    OSSA_LOAD_STRICT, OSSA_VERSION_MAJOR, OSSA_VERSION_MINOR, OSSA_VERSION_PATCH, ossa_format,
};

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
    /// only the sizes of its released layouts are accepted (this one, and those that end before
    /// base_dir and before sample_fps), any other is OSSA_ERR_INVALID_ARGUMENT
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
    /// frames a second at which glTF animations are sampled; 0 = automatic (the keys' own rate
    /// where they are evenly spaced, else 30); else from 0.01 to 1000 (else
    /// OSSA_ERR_INVALID_ARGUMENT when a glTF is loaded)
    pub sample_fps: f32,
}

/// The caller's read callbacks as a filesystem: the model and its sidecars are read through them.
pub(super) struct CallerIo {
    pub(super) io: ossa_file_io,
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
pub(super) struct Options {
    format: Format,
    strict: bool,
    max_bytes: u64,
    name: Option<String>,
    base_dir: Option<std::path::PathBuf>,
    skeleton: Option<String>,
    sample_fps: f32,
    io: Option<CallerIo>,
}

impl Options {
    pub(super) fn rust(&self) -> LoadOptions<'_> {
        LoadOptions {
            format: self.format,
            strict: self.strict,
            max_bytes: self.max_bytes,
            name: self.name.clone(),
            io: self.io.as_ref().map(|io| io as &dyn FileSystem),
            base_dir: self.base_dir.clone(),
            skeleton: self.skeleton.clone(),
            sample_fps: self.sample_fps,
        }
    }
}

/// The layout of `ossa_load_options` before `base_dir`: its fields end where `base_dir` starts.
const OPTIONS_WITHOUT_BASE_DIR: usize = std::mem::offset_of!(ossa_load_options, base_dir);

/// The layout of `ossa_load_options` before `sample_fps`.
const OPTIONS_WITHOUT_SAMPLE_FPS: usize = std::mem::offset_of!(ossa_load_options, sample_fps);

/// How many bytes of the caller's options to read, for a `size` that must be the size of a
/// released layout: any other size could end inside a field (half a pointer) or hold padding.
fn options_bytes(size: usize) -> Result<usize> {
    let full = size_of::<ossa_load_options>();
    let align = align_of::<ossa_load_options>();
    // A C compiler pads the earlier structs to their alignment; the padding is not a field.
    let earlier = OPTIONS_WITHOUT_BASE_DIR.next_multiple_of(align);
    let before_fps = OPTIONS_WITHOUT_SAMPLE_FPS.next_multiple_of(align);
    if size == full {
        Ok(full)
    } else if size == before_fps || size == OPTIONS_WITHOUT_SAMPLE_FPS {
        Ok(OPTIONS_WITHOUT_SAMPLE_FPS)
    } else if size == earlier || size == OPTIONS_WITHOUT_BASE_DIR {
        Ok(OPTIONS_WITHOUT_BASE_DIR)
    } else {
        Err(Error::invalid_argument(format!(
            "options->size is {size}, which is no released size of ossa_load_options ({full} \
             bytes, {before_fps} without sample_fps, or {earlier} without base_dir); call \
             ossa_load_options_init first"
        )))
    }
}

pub(super) fn read_options(options: *const ossa_load_options) -> Result<Options> {
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
        sample_fps: 0.0,
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
        sample_fps: o.sample_fps,
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

pub(super) fn hand_out(out: *mut *mut ossa_model, model: Model) {
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
        14 => c"OSSA_FORMAT_SIMS_MSH",
        15 => c"OSSA_FORMAT_IQM",
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
            sample_fps: 0.0,
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
pub(super) fn os_path(path: &CStr) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt;
    std::path::PathBuf::from(std::ffi::OsStr::from_bytes(path.to_bytes()))
}

#[cfg(not(unix))]
pub(super) fn os_path(path: &CStr) -> std::path::PathBuf {
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

/// A new model: `model` with the frames and scenes of `animations` added after its own (and
/// their events): an animation-only IQM (Red Eclipse's `iqmanim` files, raylib's `guyanim.iqm`)
/// or any animated model whose bones match. Bones are matched by name where both name them, and
/// by index where `animations` does not (an animation-only IQM's poses): pose k moves bone k. A
/// bone the animations do not move keeps its rest pose in their frames, with a warning.
/// `animations`' frame 0 (its rest pose) is added only where one of its scenes plays it; its
/// scenes follow `model`'s, their first frames renumbered. Neither input changes.
/// OSSA_ERR_MISMATCH: `model` waits for a skeleton, `animations` has no frames to add, no bone
/// matches, or its unnamed bones outnumber `model`'s. OSSA_ERR_LIMIT: more than 65536 frames.
///
/// # Safety
/// `model` and `animations` are live handles; `out` is writable; `error` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_add_animations(
    model: *const ossa_model,
    animations: *const ossa_model,
    out: *mut *mut ossa_model,
    error: *mut ossa_error,
) -> u32 {
    guard(error, || {
        let model = model_ref(model)?;
        let animations = model_ref(animations)?;
        if out.is_null() {
            return Err(null("out"));
        }
        let added = model.with_animations(animations)?;
        hand_out(out, added);
        Ok(())
    })
}

/// A new model: `model` (a skeleton, or meshes bound to one) with every skill of the Sims
/// character file (CMX or BCF) at `path` added. Each skill's numbers are read from
/// `ANIMATION.cfp` beside the file, ANIMATION being the skill's animation name as the file spells
/// it (`xskill-A2O-idle1.cfp`); a skill of a version-200 file (the 1998 prototype) whose CFP is
/// missing reads its uncompressed `ANIMATION.bin`, and with neither gets a scene without frames
/// (frame_count 0) and a warning naming both. The files are read through `options->io` when
/// given, else from the OS filesystem inside `options->base_dir` (default: the file's directory), as
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
/// OSSA_ERR_NOT_FOUND: a retail skill's CFP is missing; the message names it.
/// OSSA_ERR_TRUNCATED or _MALFORMED: a `.bin` shorter or longer than 12 bytes a translation and
/// 16 a rotation. Motions for bones
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
