//! Optimising a model, and saving it in any format ossa writes, to a file or through the
//! caller's write function.

use crate::convert::{OutputFile, engine_files};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::iqm::{Engine, EngineWrite, write_for_engine};
use crate::model::Model;
use crate::optimize;
use std::ffi::c_char;
use std::ffi::c_void;
use std::ptr;

use super::bones::ossa_model;
use super::checks::c_str;
use super::checks::{guard, model_ref, null, ossa_error, put};
use super::load::{hand_out, ossa_file_io};
use super::{OSSA_SAVE_PLAYER, OSSA_SAVE_SIDECARS};
#[cfg(feature = "gltf")]
use super::{load::CallerIo, load::os_path};

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
    /// IQM: an ossa_engine whose loader the file is written for (0 = none): what ossa convert
    /// --engine writes, without the sidecars; a file the engine would refuse is not written
    /// (OSSA_ERR_UNSUPPORTED, or OSSA_ERR_LIMIT for qfusion's vertex limit, naming the rule)
    pub engine: u32,
    /// OSSA_SAVE_*: the sidecars an IQM's engine reads, a player model
    pub save_flags: u32,
    /// the saved file's name without directories (`zombie.iqm`, `tris.iqm`): the files written
    /// beside it are named after it; needed with `beside`
    pub output_name: *const c_char,
    /// receives each file that goes beside the saved one, as ossa convert writes them: an IQM's
    /// sidecars (with `engine`, or OSSA_SAVE_SIDECARS: `NAME.framegroups`, `animation.cfg`,
    /// and with `name` the `NAME_K.skin` files of the `.skin` files beside the model's), a Sims
    /// CMX's or BCF's skills' CFPs; NULL = none are written (a CMX then holds its skills
    /// without their numbers)
    pub beside: ossa_beside_fn,
    pub beside_user: *mut c_void,
}

/// The layout of `ossa_save_options` before `engine`, which callers built against it pass.
const SAVE_OPTIONS_WITHOUT_ENGINE: usize = std::mem::offset_of!(ossa_save_options, engine);
/// The layout before `save_flags`: with `engine`, as released before the files beside.
const SAVE_OPTIONS_WITHOUT_BESIDE: usize = std::mem::offset_of!(ossa_save_options, save_flags);

/// Receives one file written beside the saved model: its name (no directories, NUL-terminated,
/// valid during the call) and its bytes; returns OSSA_OK or an error to stop saving.
pub type ossa_beside_fn = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        name: *const c_char,
        data: *const u8,
        size: usize,
    ) -> u32,
>;

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

/// A new model with the optimisations of `flags` (OSSA_OPTIMIZE_*) applied, and what changed
/// in `*report` (may be NULL). Poses, the bind mesh and skinning are unchanged, up to the order
/// of vertices, triangles and bones.
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
    if flags & !optimize::OPTIMIZE_KNOWN != 0 {
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
        engine: 0,
        save_flags: 0,
        output_name: ptr::null(),
        beside: None,
        beside_user: ptr::null_mut(),
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
        let full = size_of::<ossa_save_options>();
        // A C compiler pads an earlier struct to its alignment; the padding is not a field.
        let align = align_of::<ossa_save_options>();
        let earliest = SAVE_OPTIONS_WITHOUT_ENGINE.next_multiple_of(align);
        let earlier = SAVE_OPTIONS_WITHOUT_BESIDE.next_multiple_of(align);
        let n = if size == full {
            full
        } else if size == earlier || size == SAVE_OPTIONS_WITHOUT_BESIDE {
            SAVE_OPTIONS_WITHOUT_BESIDE
        } else if size == earliest || size == SAVE_OPTIONS_WITHOUT_ENGINE {
            SAVE_OPTIONS_WITHOUT_ENGINE
        } else {
            return Err(Error::invalid_argument(format!(
                "options->size is {size}, which is no released size of ossa_save_options ({full} \
                 bytes, {earlier} without the files beside, or {earliest} without engine); call \
                 ossa_save_options_init first"
            )));
        };
        // SAFETY: the caller's struct holds `size` bytes; we copy no more than both structs hold.
        unsafe { ptr::copy_nonoverlapping(options.cast::<u8>(), (&raw mut o).cast::<u8>(), n) };
    }
    // SAFETY: a non-null io pointer points to an ossa_file_io that outlives the call.
    if let Some(io) = unsafe { o.io.as_ref() }
        && io.read.is_none()
    {
        return Err(null("options->io->read"));
    }
    Ok(o)
}

/// What a save makes: the model's bytes, what a glTF export could not express, and the files
/// that go beside it.
struct Saved {
    bytes: Vec<u8>,
    report: Option<ossa_export_report>,
    beside: Vec<OutputFile>,
}

/// The bytes of `model` as `format`, with the options' glTF settings and textures, what a glTF
/// export could not express, and with `beside` the files that go beside it.
fn saved_bytes(model: &Model, format: Format, o: &ossa_save_options) -> Result<Saved> {
    let flags = check_optimize_flags(o.flags)?;
    let optimized;
    let model = if flags == 0 {
        model
    } else {
        optimized = model.optimized(flags)?.0;
        &optimized
    };
    let only = |bytes| Saved {
        bytes,
        report: None,
        beside: Vec::new(),
    };
    if o.save_flags & !(OSSA_SAVE_SIDECARS | OSSA_SAVE_PLAYER) != 0 {
        return Err(Error::invalid_argument(format!(
            "unknown save flags {:#x}",
            o.save_flags
        )));
    }
    if o.save_flags != 0 && o.beside.is_none() {
        return Err(Error::invalid_argument(
            "options->save_flags write files beside the model: options->beside receives them",
        ));
    }
    let engine = match o.engine {
        0 => None,
        e => Some(Engine::from_u32(e).ok_or_else(|| {
            Error::invalid_argument(format!("options->engine {e} is no ossa_engine"))
        })?),
    };
    if (engine.is_some() || o.save_flags != 0) && format != Format::Iqm {
        let what = if engine.is_some() {
            "engine is"
        } else {
            "save_flags are"
        };
        return Err(Error::invalid_argument(format!(
            "options->{what} for IQM, not {}",
            format.name()
        )));
    }
    let qf = matches!(engine, Some(Engine::Qfusion | Engine::Warfork));
    let player = o.save_flags & OSSA_SAVE_PLAYER != 0;
    if player && !qf {
        return Err(Error::invalid_argument(
            "OSSA_SAVE_PLAYER is for the engines qfusion and warfork",
        ));
    }
    let output_name = || {
        c_str(o.output_name)
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| {
                Error::invalid_argument(
                    "options->output_name names the saved file, after which the files beside it \
                     are named",
                )
            })
    };
    let sidecars = o.save_flags & OSSA_SAVE_SIDECARS != 0;
    if format == Format::Iqm && o.beside.is_some() && (engine.is_some() || sidecars) {
        let skins = if qf {
            Vec::new()
        } else {
            skin_variants(model, o)?
        };
        let how = EngineWrite {
            engine,
            player,
            player_config: None,
            sidecars,
        };
        let mut files = engine_files(model, &output_name()?, &how, &skins)?.files;
        let bytes = if files.is_empty() {
            Vec::new()
        } else {
            files.remove(0).bytes
        };
        return Ok(Saved {
            bytes,
            report: None,
            beside: files,
        });
    }
    if engine.is_some() {
        let how = EngineWrite {
            engine,
            ..EngineWrite::default()
        };
        return Ok(only(write_for_engine(model, &how)?.iqm));
    }
    if let Format::SimsCmx | Format::SimsBcf = format
        && o.beside.is_some()
    {
        let saved = crate::cmx::write_with_skills(model, format == Format::SimsBcf)?;
        let beside = (saved.cfps.into_iter())
            .map(|(name, bytes)| OutputFile { name, bytes })
            .collect();
        return Ok(Saved {
            bytes: saved.bytes,
            report: None,
            beside,
        });
    }
    if !matches!(format, Format::Glb | Format::Gltf) {
        if o.scale != 1.0 || o.max_influences != 0 || !o.report.is_null() {
            return Err(Error::invalid_argument(format!(
                "scale, max_influences and report are glTF's; {} takes none",
                format.name()
            )));
        }
        return Ok(only(model.save(format)?));
    }
    let (bytes, report) = export_gltf(model, format, o)?;
    Ok(Saved {
        bytes,
        report: Some(report),
        beside: Vec::new(),
    })
}

/// The `.skin` files beside the model's file (`options->name`), per file and mesh the texture
/// it names, to be written again beside an IQM; none without a name.
#[cfg(feature = "gltf")]
fn skin_variants(model: &Model, o: &ossa_save_options) -> Result<Vec<Vec<Option<String>>>> {
    use crate::textures::{find_textures, skin_files_beside, variant_texture_names};

    let Some(name) = c_str(o.name).map(|n| n.to_string_lossy().into_owned()) else {
        return Ok(Vec::new());
    };
    // SAFETY: a non-null io pointer points to an ossa_file_io that outlives the call.
    let variants = match unsafe { o.io.as_ref() }.map(|io| CallerIo { io: *io }) {
        Some(io) => find_textures(model, Some((&io, name.as_str())), o.max_bytes).variants,
        None => {
            let base = c_str(o.base_dir).map(os_path);
            let path = std::path::Path::new(&name);
            skin_files_beside(model, path, base.as_deref(), o.max_bytes)?.0
        }
    };
    Ok(variant_texture_names(&variants))
}

#[cfg(not(feature = "gltf"))]
fn skin_variants(_: &Model, _: &ossa_save_options) -> Result<Vec<Vec<Option<String>>>> {
    Ok(Vec::new())
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

/// Hands a file that goes beside the saved model to the caller's callback.
fn write_beside(beside: ossa_beside_fn, user: *mut c_void, file: &OutputFile) -> Result<()> {
    let beside = beside.ok_or_else(|| null("options->beside"))?;
    let name = std::ffi::CString::new(file.name.as_str()).map_err(|_| {
        Error::invalid_argument(format!("{:?}: a file name with a NUL byte", file.name))
    })?;
    // SAFETY: the caller supplied this callback for exactly this call shape; the name and bytes
    // live through the call.
    let code = unsafe { beside(user, name.as_ptr(), file.bytes.as_ptr(), file.bytes.len()) };
    if code != 0 {
        return Err(Error::io(
            format!(
                "the beside callback failed with code {code} on {}",
                file.name
            ),
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
        let saved = saved_bytes(model, format, &options)?;
        write_out(write, user, &saved.bytes)?;
        for file in &saved.beside {
            write_beside(options.beside, options.beside_user, file)?;
        }
        if let Some(report) = saved.report.filter(|_| !options.report.is_null()) {
            put(options.report, report);
        }
        Ok(())
    })
}
