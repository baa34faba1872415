//! Validating a file against an engine: what DarkPlaces', FTE's, qfusion's and Warfork's IQM
//! loaders would refuse or silently get wrong in it, as `ossa validate --engine` lists it
//! (docs/engines.md gives every rule and its source).

use crate::error::{Error, Result};
use crate::iqm::engines::{self, Engine, Finding, Kind};
use std::ffi::CStr;
use std::ffi::c_char;

use super::checks::{c_str, guard, guard_value, null, ossa_error};
use super::load::{os_path, ossa_load_options, read_options};

/// An engine whose IQM loader ossa checks files against.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ossa_engine {
    /// DarkPlaces and the games on it (Xonotic): model_alias.c Mod_INTERQUAKEMODEL_Load
    OSSA_ENGINE_DARKPLACES = 1,
    /// FTE QuakeWorld (Nuclide): engine/common/com_mesh.c Mod_ParseIQMMeshModel
    OSSA_ENGINE_FTE = 2,
    /// qfusion: source/ref_gl/r_skm.c Mod_LoadSkeletalModel
    OSSA_ENGINE_QFUSION = 3,
    /// Warfork: qfusion's loader, and its player models' animation.cfg
    OSSA_ENGINE_WARFORK = 4,
}

/// What an engine does with a file that breaks a rule.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ossa_engine_finding_kind {
    /// the engine does not load the file (it says so, stops with an error, or reads or writes
    /// outside its buffers doing it)
    OSSA_FINDING_REFUSES = 1,
    /// the engine loads the file and gets something silently wrong
    OSSA_FINDING_MISREADS = 2,
    /// worth knowing, wrong in nothing on x86
    OSSA_FINDING_NOTE = 3,
}

/// Engine check flag: check the file as a Warfork player model (as one named tris.iqm is), with
/// the animation.cfg beside it.
pub const OSSA_ENGINE_PLAYER: u32 = 1;

/// One rule a file breaks.
#[repr(C)]
pub struct ossa_engine_finding {
    /// an ossa_engine_finding_kind
    pub kind: u32,
    /// 1-based line of animation.cfg for Warfork's player rules, 0 otherwise
    pub line: u32,
    /// byte offset in the file, UINT64_MAX when not applicable
    pub offset: u64,
    /// the rule's id, NUL-terminated: "qfusion.version" (docs/engines.md)
    pub rule: [c_char; 48],
    /// NUL-terminated sentence: which structure and index, what the engine does, at which byte
    pub message: [c_char; 512],
}

const _: () = {
    assert!(ossa_engine::OSSA_ENGINE_DARKPLACES as u32 == Engine::DarkPlaces as u32);
    assert!(ossa_engine::OSSA_ENGINE_FTE as u32 == Engine::Fte as u32);
    assert!(ossa_engine::OSSA_ENGINE_QFUSION as u32 == Engine::Qfusion as u32);
    assert!(ossa_engine::OSSA_ENGINE_WARFORK as u32 == Engine::Warfork as u32);
    assert!(ossa_engine_finding_kind::OSSA_FINDING_REFUSES as u32 == Kind::Refuses as u32);
    assert!(ossa_engine_finding_kind::OSSA_FINDING_MISREADS as u32 == Kind::Misreads as u32);
    assert!(ossa_engine_finding_kind::OSSA_FINDING_NOTE as u32 == Kind::Note as u32);
};

/// `text` into a NUL-terminated field, cut at a character boundary where it is too long.
pub(super) fn fill<const N: usize>(text: &str) -> [c_char; N] {
    let mut out = [0 as c_char; N];
    let mut end = text.len().min(N.saturating_sub(1));
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    for (dst, src) in out.iter_mut().zip(text.as_bytes().iter().take(end)) {
        *dst = *src as c_char;
    }
    out
}

fn describe(f: &Finding) -> ossa_engine_finding {
    ossa_engine_finding {
        kind: f.kind as u32,
        line: f.line.unwrap_or(0),
        offset: f.offset.unwrap_or(u64::MAX),
        rule: fill(f.rule),
        message: fill(&f.to_string()),
    }
}

fn check_engine_arguments(
    engine: u32,
    flags: u32,
    findings: *mut ossa_engine_finding,
    capacity: usize,
    count: *mut usize,
) -> Result<Engine> {
    if count.is_null() {
        return Err(null("count"));
    }
    if findings.is_null() && capacity > 0 {
        return Err(null("findings"));
    }
    if flags & !OSSA_ENGINE_PLAYER != 0 {
        return Err(Error::invalid_argument(format!(
            "unknown engine check flags {flags:#x}"
        )));
    }
    Engine::from_u32(engine)
        .ok_or_else(|| Error::invalid_argument(format!("engine {engine} is no ossa_engine")))
}

/// Writes the first `capacity` findings and the count of all of them.
fn hand_out_findings(
    found: &[Finding],
    findings: *mut ossa_engine_finding,
    capacity: usize,
    count: *mut usize,
) {
    for (k, f) in found.iter().take(capacity).enumerate() {
        // SAFETY: the caller's buffer holds `capacity` findings (checked non-null above when
        // capacity > 0), and k < capacity.
        unsafe { findings.add(k).write_unaligned(describe(f)) };
    }
    // SAFETY: checked non-null; the caller's size_t.
    unsafe { count.write_unaligned(found.len()) };
}

/// What engine `engine` (an ossa_engine) would refuse or silently get wrong in the model file of
/// `size` bytes at `data`, in the order its loader meets them: the first `capacity` findings
/// are written to `findings` (NULL when capacity is 0), and `*count` is the number of all of
/// them (call with capacity 0 to size the buffer). OSSA_OK whatever the findings; a file the
/// engine refuses has a finding of kind OSSA_FINDING_REFUSES. A file of another format than IQM
/// gets one finding: loaded by its own rules (DPM in DarkPlaces and FTE, glTF in FTE), or
/// refused. `flags`: OSSA_ENGINE_PLAYER checks it as a Warfork player model, as a file
/// `options->name` names `tris.iqm` is; its animation.cfg is read beside `options->name` through
/// `options->io` (without io it is not read, and a finding of kind OSSA_FINDING_NOTE says so).
/// `options` (NULL = defaults): `format` (OSSA_FORMAT_AUTO: found by content, then by `name`'s
/// extension), `name`, `io`, `max_bytes`. OSSA_ERR_UNKNOWN_FORMAT when the data is none of the
/// formats ossa knows.
///
/// # Safety
/// `data` points to `size` readable bytes; `options` is NULL or initialised; `findings` points to
/// `capacity` writable findings or is NULL with capacity 0; `count` is writable; `error` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_check_engine(
    data: *const u8,
    size: usize,
    engine: u32,
    flags: u32,
    options: *const ossa_load_options,
    findings: *mut ossa_engine_finding,
    capacity: usize,
    count: *mut usize,
    error: *mut ossa_error,
) -> u32 {
    guard(error, || {
        if data.is_null() {
            return Err(null("data"));
        }
        let engine = check_engine_arguments(engine, flags, findings, capacity, count)?;
        let options = read_options(options)?;
        // SAFETY: the caller promises `size` readable bytes at `data` for this call.
        let bytes = unsafe { std::slice::from_raw_parts(data, size) };
        let player = flags & OSSA_ENGINE_PLAYER != 0;
        let found = engines::check_with(bytes, engine, player, &options.rust())?;
        hand_out_findings(&found, findings, capacity, count);
        Ok(())
    })
}

/// ossa_check_engine of the file at `path`, and for a Warfork player model the animation.cfg
/// beside it: read through `options->io` when given (`path` is then one of io's), else from the
/// OS filesystem inside `options->base_dir` (default: the file's directory), as ossa_load_file
/// reads a model and its sidecars.
///
/// # Safety
/// `path` is a NUL-terminated string; `options` is NULL or initialised; `findings` points to
/// `capacity` writable findings or is NULL with capacity 0; `count` is writable; `error` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_check_engine_file(
    path: *const c_char,
    engine: u32,
    flags: u32,
    options: *const ossa_load_options,
    findings: *mut ossa_engine_finding,
    capacity: usize,
    count: *mut usize,
    error: *mut ossa_error,
) -> u32 {
    guard(error, || {
        let path = c_str(path).ok_or_else(|| null("path"))?;
        let engine = check_engine_arguments(engine, flags, findings, capacity, count)?;
        let options = read_options(options)?;
        let player = flags & OSSA_ENGINE_PLAYER != 0;
        let found = engines::check_file(&os_path(path), engine, player, &options.rust())?;
        hand_out_findings(&found, findings, capacity, count);
        Ok(())
    })
}

/// "OSSA_ENGINE_WARFORK"; never NULL, also for unknown values.
#[unsafe(no_mangle)]
pub extern "C" fn ossa_engine_name(engine: u32) -> *const c_char {
    guard_value(c"OSSA_ENGINE_UNKNOWN".as_ptr(), || {
        let name: &'static CStr = match Engine::from_u32(engine) {
            Some(Engine::DarkPlaces) => c"OSSA_ENGINE_DARKPLACES",
            Some(Engine::Fte) => c"OSSA_ENGINE_FTE",
            Some(Engine::Qfusion) => c"OSSA_ENGINE_QFUSION",
            Some(Engine::Warfork) => c"OSSA_ENGINE_WARFORK",
            None => c"OSSA_ENGINE_UNKNOWN",
        };
        name.as_ptr()
    })
}
