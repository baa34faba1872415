//! Format detection and the loaders, one module per format; each turns bytes into [`ModelParts`].

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

mod binary;
pub(crate) use binary::{Kernel, with_simd};
pub mod cfp;
pub mod cmx;
pub mod dmf;
pub mod dpm;
#[cfg(feature = "gltf")]
pub mod gltf;
pub mod iqm;
mod json;
pub mod mm2;
pub mod sims_mesh;
pub mod sims_msh;
pub mod skill_bin;
pub mod skm;
mod text;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::io::{FileSystem, read_contained_at_most};
use crate::model::{Model, ModelParts};
use crate::sidecar::{Allowance, Sidecars, label, os_place};

/// The formats ossa knows, numbered as the C header's `ossa_format`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// Detect from the content, then from the name's extension.
    #[default]
    Auto = 0,
    Dpm = 1,
    Skm = 2,
    Skp = 3,
    SimsSkn = 4,
    SimsBmf = 5,
    SimsCmx = 6,
    SimsBcf = 7,
    Mm2Skel = 8,
    Dmf = 9,
    DmfJson = 10,
    Mm2Mod = 11,
    /// glTF 2.0, binary: one `.glb` file.
    Glb = 12,
    /// glTF 2.0 JSON: saved with its buffer and images embedded as data URIs; loaded with them
    /// embedded or in files beside it.
    Gltf = 13,
    /// The Sims 1998 prototype's binary mesh (`.msh`).
    SimsMsh = 14,
    /// Inter-Quake Model (`.iqm`), versions 2 and 1.
    Iqm = 15,
}

impl Format {
    pub const ALL: [Format; 16] = [
        Format::Auto,
        Format::Dpm,
        Format::Skm,
        Format::Skp,
        Format::SimsSkn,
        Format::SimsBmf,
        Format::SimsCmx,
        Format::SimsBcf,
        Format::Mm2Skel,
        Format::Dmf,
        Format::DmfJson,
        Format::Mm2Mod,
        Format::Glb,
        Format::Gltf,
        Format::SimsMsh,
        Format::Iqm,
    ];

    pub fn from_u32(v: u32) -> Option<Format> {
        Format::ALL.get(v as usize).copied()
    }

    /// A short human name ("DPM", "SKM", ...).
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Dpm => "DPM",
            Format::Skm => "SKM",
            Format::Skp => "SKP",
            Format::SimsSkn => "Sims SKN",
            Format::SimsBmf => "Sims BMF",
            Format::SimsCmx => "Sims CMX",
            Format::SimsBcf => "Sims BCF",
            Format::Mm2Skel => "MM2 SKEL",
            Format::Dmf => "DMF",
            Format::DmfJson => "DMF JSON",
            Format::Mm2Mod => "MM2 MOD",
            Format::Glb => "glTF binary",
            Format::Gltf => "glTF",
            Format::SimsMsh => "Sims MSH",
            Format::Iqm => "IQM",
        }
    }

    /// The format a file name's extension suggests.
    pub fn from_extension(name: &str) -> Option<Format> {
        let lower = name.to_ascii_lowercase();
        let ext = |e: &str| lower.ends_with(e);
        Some(if ext(".dpm") {
            Format::Dpm
        } else if ext(".skm") {
            Format::Skm
        } else if ext(".skp") {
            Format::Skp
        } else if ext(".skn") {
            Format::SimsSkn
        } else if ext(".bmf") {
            Format::SimsBmf
        } else if ext(".msh") {
            Format::SimsMsh
        } else if ext(".cmx.bcf") || ext(".bcf") {
            Format::SimsBcf
        } else if ext(".cmx") {
            Format::SimsCmx
        } else if ext(".skel") {
            Format::Mm2Skel
        } else if ext(".mod") {
            Format::Mm2Mod
        } else if ext(".dmf") {
            Format::Dmf
        } else if ext(".glb") {
            Format::Glb
        } else if ext(".gltf") {
            Format::Gltf
        } else if ext(".iqm") {
            Format::Iqm
        } else {
            return None;
        })
    }
}

/// The most memory a model may use when the caller sets no ceiling, whatever its input.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// Without a caller's ceiling, a model may use this much plus [`DEFAULT_BYTES_PER_INPUT_BYTE`]
/// per byte of its input, up to [`DEFAULT_MAX_BYTES`]: so a hostile kilobyte of repeat codes
/// (CFP) or tiny text numbers cannot ask for a gigabyte, while real files, which expand far less
/// (binary formats about 1x, text 10-40x, the largest CFP skills about 100x), always fit.
pub const DEFAULT_BASE_BYTES: u64 = 16 << 20;
/// See [`DEFAULT_BASE_BYTES`].
pub const DEFAULT_BYTES_PER_INPUT_BYTE: u64 = 256;

/// How to load.
#[derive(Clone, Default)]
pub struct LoadOptions<'a> {
    pub format: Format,
    /// Reject what the default mode tolerates and repairs (and reports as warnings).
    pub strict: bool,
    /// Most memory the loaded model may use, with the sidecar files read for it (their bytes
    /// while they are held, and what is made of them); 0 = a default that grows with the input
    /// ([`LoadOptions::max_bytes_for`]).
    pub max_bytes: u64,
    /// The file's name or path: for messages, to detect the format by extension, and (with
    /// `io`) to find sidecar files beside it. With `io` it is a path of `io`'s, which must stay
    /// inside it (not absolute, no `..`): else loading is an invalid argument, as its sidecars
    /// would be outside.
    pub name: Option<String>,
    /// How sidecar files (and, for [`load_file`], the model itself) are read. None: the OS
    /// filesystem for [`load_file`], no sidecars for [`load`].
    pub io: Option<&'a dyn FileSystem>,
    /// For [`load_file`] without `io`: the directory the model and its sidecars may be read from
    /// (default: the model's own). Nothing outside it is read: a symbolic link is followed only
    /// while it stays inside, as the OS resolves it.
    pub base_dir: Option<PathBuf>,
    /// Which skeleton of a file that holds several (Sims CMX); None = the first.
    pub skeleton: Option<String>,
    /// Frames a second at which glTF animations are sampled into frames; 0 = automatic: the
    /// animation's own key rate where its keys are evenly spaced, else 30.
    pub sample_fps: f32,
}

impl std::fmt::Debug for LoadOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("format", &self.format)
            .field("strict", &self.strict)
            .field("max_bytes", &self.max_bytes)
            .field("name", &self.name)
            .field("io", &self.io.map(|_| "caller's filesystem"))
            .field("base_dir", &self.base_dir)
            .field("skeleton", &self.skeleton)
            .field("sample_fps", &self.sample_fps)
            .finish()
    }
}

impl LoadOptions<'_> {
    /// The ceiling for a model made from `input_bytes` bytes of files: the caller's, or without
    /// one [`DEFAULT_BASE_BYTES`] plus [`DEFAULT_BYTES_PER_INPUT_BYTE`] per input byte, at most
    /// [`DEFAULT_MAX_BYTES`].
    pub fn max_bytes_for(&self, input_bytes: usize) -> u64 {
        ceiling(self.max_bytes, input_bytes as u64)
    }
}

/// [`LoadOptions::max_bytes_for`] for the caller's `max_bytes`.
pub(crate) fn ceiling(max_bytes: u64, input_bytes: u64) -> u64 {
    if max_bytes == 0 {
        input_bytes
            .saturating_mul(DEFAULT_BYTES_PER_INPUT_BYTE)
            .saturating_add(DEFAULT_BASE_BYTES)
            .min(DEFAULT_MAX_BYTES)
    } else {
        max_bytes
    }
}

/// Collects what a loader finds: in load mode the first problem ends the load; in validate mode
/// every problem a loader can step past is recorded and the load goes on.
pub(crate) struct Checker {
    label: Option<Arc<str>>,
    strict: bool,
    collect: bool,
    max_bytes: u64,
    /// The most a [`Checker::reserve`] asked for: what the model was charged.
    charged: Cell<u64>,
    pub problems: Vec<Error>,
    pub dropped_problems: usize,
    pub warnings: Vec<String>,
}

/// Validation stops recording after this many problems (it still counts them).
const MAX_PROBLEMS: usize = 1000;

impl Checker {
    fn new(options: &LoadOptions, collect: bool, input_bytes: usize) -> Checker {
        Checker {
            label: file_label(options),
            strict: options.strict,
            collect,
            max_bytes: options.max_bytes_for(input_bytes),
            charged: Cell::new(0),
            problems: Vec::new(),
            dropped_problems: 0,
            warnings: Vec::new(),
        }
    }

    /// A checker for the sidecar `file` read during a load in `strict` mode or not, which may
    /// use `max_bytes` (what is left of the load's limit).
    pub fn for_sidecar(file: Arc<str>, strict: bool, max_bytes: u64) -> Checker {
        Checker {
            label: Some(file),
            strict,
            collect: false,
            max_bytes,
            charged: Cell::new(0),
            problems: Vec::new(),
            dropped_problems: 0,
            warnings: Vec::new(),
        }
    }

    /// The files read for the model now hold `input_bytes` in all (a glTF's buffers beside it):
    /// without a caller's ceiling, the default one grows with them.
    #[cfg_attr(not(feature = "gltf"), allow(dead_code))]
    pub fn grow_input(&mut self, options: &LoadOptions, input_bytes: u64) {
        self.max_bytes = ceiling(options.max_bytes, input_bytes);
    }

    /// What the loader has been charged so far (the most it reserved).
    pub fn charged(&self) -> u64 {
        self.charged.get()
    }

    /// A broken rule the loader can step past (it substitutes a safe value): fatal when loading,
    /// recorded when validating.
    pub fn problem(&mut self, e: Error) -> Result<()> {
        if !self.collect {
            return Err(e);
        }
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(e);
        } else {
            self.dropped_problems = self.dropped_problems.saturating_add(1);
        }
        Ok(())
    }

    /// Something real files do that the default mode tolerates: a warning, or in strict mode a problem.
    pub fn tolerate(&mut self, e: Error) -> Result<()> {
        if self.strict {
            self.problem(e)
        } else {
            let e = match &self.label {
                Some(l) => e.in_file(l),
                None => e,
            };
            self.warnings.push(e.to_string());
            Ok(())
        }
    }

    /// Something worth knowing about a valid file (a part ossa does not use): a warning in
    /// either mode.
    pub fn note(&mut self, message: String) {
        let message = match &self.label {
            Some(l) => format!("{l}: {message}"),
            None => message,
        };
        self.warnings.push(message);
    }

    /// Whether the load is strict: for a reader that refuses something as soon as it meets it,
    /// and otherwise reports it once, later.
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// Fails with `Limit` when a model of `bytes` would exceed the caller's memory ceiling.
    pub fn reserve(&self, bytes: u64, what: &str) -> Result<()> {
        self.charged.set(self.charged.get().max(bytes));
        if bytes > self.max_bytes {
            Err(Error::limit(format!(
                "{what} needs {bytes} bytes of memory, more than the limit of {} bytes",
                self.max_bytes
            )))
        } else {
            Ok(())
        }
    }

    /// What has been reported so far, for [`Checker::rewind`].
    pub fn mark(&self) -> CheckMark {
        CheckMark {
            problems: self.problems.len(),
            dropped_problems: self.dropped_problems,
            warnings: self.warnings.len(),
        }
    }

    /// Forgets what was reported since `mark`: for a loader that reads a file again another
    /// way, so that what it finds is reported once.
    pub fn rewind(&mut self, mark: CheckMark) {
        self.problems.truncate(mark.problems);
        self.dropped_problems = mark.dropped_problems;
        self.warnings.truncate(mark.warnings);
    }

    /// [`Checker::reserve`] for a model made of `(count, bytes each)` parts.
    pub fn reserve_parts(&self, parts: &[(u64, u64)], what: &str) -> Result<()> {
        self.reserve(
            total(
                parts
                    .iter()
                    .map(|&(count, size)| count.saturating_mul(size)),
            ),
            what,
        )
    }
}

/// See [`Checker::mark`].
pub(crate) struct CheckMark {
    problems: usize,
    dropped_problems: usize,
    warnings: usize,
}

/// The sum of sizes or counts, saturating: a total past u64 is past every memory limit too, so
/// the limit check still refuses it.
pub(crate) fn total(values: impl Iterator<Item = u64>) -> u64 {
    values.fold(0, u64::saturating_add)
}

/// Room for `len` values, or [`Error::OutOfMemory`] naming `what` where the allocator cannot
/// give it. For the allocations whose size a file decides and which outgrow it (values a
/// glTF accessor or a CFP repeat makes from a few bytes, frames sampled from keys): charged to
/// the caller's limit first, they may still be more than the machine has when that limit is
/// high, and an allocation that fails must not abort the caller's process.
pub(crate) fn try_vec<T>(len: usize, what: impl FnOnce() -> String) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        Error::out_of_memory(format!(
            "{len} values of {} bytes for {} could not be allocated",
            size_of::<T>(),
            what()
        ))
    })?;
    Ok(v)
}

/// [`try_vec`] holding `len` copies of `value`.
pub(crate) fn try_filled<T: Clone>(
    len: usize,
    value: T,
    what: impl FnOnce() -> String,
) -> Result<Vec<T>> {
    let mut v = try_vec(len, what)?;
    v.resize(len, value);
    Ok(v)
}

/// Heap a load will need so far, checked against the caller's limit as it grows (text formats,
/// whose records are counted as they are read).
#[derive(Default)]
pub(crate) struct Budget(u64);

impl Budget {
    /// Adds `count` records of about `cost` bytes each; `Limit` once past the caller's ceiling.
    pub fn add(&mut self, ck: &Checker, count: u64, cost: u64) -> Result<()> {
        self.0 = self.0.saturating_add(count.saturating_mul(cost));
        ck.reserve(self.0, "the model")
    }
}

/// The format of `data`: from a magic number, then from `name`'s extension, then from content
/// that has no magic number (Sims character files).
pub fn detect(data: &[u8], name: Option<&str>) -> Option<Format> {
    if data.starts_with(dpm::MAGIC) {
        return Some(Format::Dpm);
    }
    if data.starts_with(dmf::MAGIC) {
        return Some(Format::Dmf);
    }
    if data.starts_with(iqm::MAGIC) {
        return Some(Format::Iqm);
    }
    #[cfg(feature = "gltf")]
    if data.starts_with(gltf::GLB_MAGIC) {
        return Some(Format::Glb);
    }
    let by_name = name.and_then(Format::from_extension);
    // A BMF starts with its skin name's length byte, which could be 0xb2 followed by three
    // bytes 0xb0: there the name decides.
    if data.starts_with(sims_msh::MAGIC) && by_name != Some(Format::SimsBmf) {
        return Some(Format::SimsMsh);
    }
    // SKM and SKP share their magic; the name's extension tells them apart, and without one
    // the layout does: byte 20 is an SKM's mesh table offset or an SKP's bone table offset, and
    // only an SKP's tables lie past a 28-byte header and fit the data (skm::looks_like_skp).
    if data.starts_with(skm::MAGIC) {
        return Some(match by_name {
            Some(f @ (Format::Skm | Format::Skp)) => f,
            _ if skm::looks_like_skp(data) => Format::Skp,
            _ => Format::Skm,
        });
    }
    // A `.dmf` holds either form: binary starts with its magic (handled above), else JSON.
    if by_name == Some(Format::Dmf) {
        return Some(Format::DmfJson);
    }
    if by_name.is_some() {
        return by_name;
    }
    // Sims character files have no magic number; only signs no other format shows count, and
    // only once the name has not decided. CMX text: the first line that is not a `//` comment
    // or blank is `version 300` or `version 200` (a leading `//` alone is not enough, and MM2's
    // `.mod` text writes `version:`). BCF: the data reads as a BCF to its last byte, strictly,
    // and holds at least one record (twelve zero bytes are an empty BCF, and not a sign).
    if cmx::looks_like_text(data) {
        return Some(Format::SimsCmx);
    }
    if cmx::looks_like_bcf(data) {
        return Some(Format::SimsBcf);
    }
    #[cfg(feature = "gltf")]
    if gltf::looks_like_json(data) {
        return Some(Format::Gltf);
    }
    if dmf::looks_like_json(data) {
        return Some(Format::DmfJson);
    }
    if mm2::looks_like_mod(data) {
        return Some(Format::Mm2Mod);
    }
    if mm2::looks_like_skel(data) {
        return Some(Format::Mm2Skel);
    }
    None
}

fn file_label(options: &LoadOptions) -> Option<Arc<str>> {
    options.name.as_deref().map(label)
}

fn parse(
    data: &[u8],
    options: &LoadOptions,
    checker: &mut Checker,
    sidecars: Option<&Sidecars<'_>>,
) -> Result<ModelParts> {
    let format = match options.format {
        Format::Auto => detect(data, options.name.as_deref()).ok_or_else(|| {
            Error::unknown_format(
                "the data is none of the supported formats (no known magic, no known extension)",
            )
        })?,
        f => f,
    };
    match format {
        Format::Dpm => dpm::read(data, checker),
        Format::Skm => skm::read_skm(data, checker),
        Format::Skp => skm::read_skp(data, checker),
        Format::SimsCmx => cmx::read_cmx(data, checker, options.skeleton.as_deref()),
        Format::SimsBcf => cmx::read_bcf(data, checker, options.skeleton.as_deref()),
        Format::SimsSkn => sims_mesh::read_skn(data, checker),
        Format::SimsBmf => sims_mesh::read_bmf(data, checker),
        Format::SimsMsh => sims_msh::read_msh(data, checker, options.name.as_deref()),
        Format::Mm2Skel => mm2::read_skel(data, checker),
        Format::Mm2Mod => mm2::read_mod(data, checker),
        Format::Dmf => dmf::read_binary(data, checker),
        Format::DmfJson => dmf::read_json(data, checker),
        Format::Iqm => iqm::read(data, checker),
        #[cfg(feature = "gltf")]
        Format::Glb | Format::Gltf => {
            gltf::read(data, format == Format::Glb, checker, options, sidecars)
        }
        #[cfg(not(feature = "gltf"))]
        Format::Glb | Format::Gltf => {
            let _ = sidecars;
            Err(Error::unsupported(format!(
                "reading {} needs ossa built with the `gltf` feature",
                format.name()
            )))
        }
        Format::Auto => Err(Error::unknown_format("no format to read the data as")),
    }
}

fn finish(parts: ModelParts, checker: Checker) -> Result<Model> {
    let mut parts = parts;
    parts.warnings.extend(checker.warnings);
    Model::from_checked_parts(parts)
}

/// Loads a model from bytes; with `options.io` and `options.name`, its sidecars too.
pub fn load(data: &[u8], options: &LoadOptions) -> Result<Model> {
    let sidecars = match (options.io, &options.name) {
        (Some(fs), Some(name)) => Some(Sidecars::beside(fs, name)?),
        _ => None,
    };
    load_with(data, options, sidecars.as_ref())
}

fn load_with(data: &[u8], options: &LoadOptions, sidecars: Option<&Sidecars<'_>>) -> Result<Model> {
    let label = file_label(options);
    let mut checker = Checker::new(options, false, data.len());
    let result = parse(data, options, &mut checker, sidecars).and_then(|mut parts| {
        // Sidecars share the model's limit: what the model was charged is spent already.
        let mut allowance = Allowance::new(options, data.len(), checker.charged());
        if let Some(s) = sidecars {
            s.complete_parts(&mut parts, options, &mut allowance)?;
        }
        let model = finish(parts, checker)?;
        match sidecars {
            Some(s) => s.complete_model(model, options, &mut allowance),
            None => Ok(model),
        }
    });
    result.map_err(|e| e.in_file_if(label.as_ref()))
}

/// Loads a model from a file and its sidecars: through `options.io` when given (`path` is then
/// one of its, relative and without `..`), else from the OS filesystem inside
/// `options.base_dir` (default: the model's directory), where the model must lie too. A path or
/// symbolic link that leads out is an invalid argument, and nothing outside is read.
pub fn load_file(path: &Path, options: &LoadOptions) -> Result<Model> {
    let mut options = options.clone();
    if let Some(fs) = options.io {
        // A path of `io`'s own, `/`-separated; it and the sidecars beside it stay inside `io`.
        let name = path.to_string_lossy().replace('\\', "/");
        let data = read_contained_at_most(fs, &name, ceiling(options.max_bytes, u64::MAX))?;
        options.name.get_or_insert(name);
        return load(data.as_ref().as_ref(), &options);
    }
    options
        .name
        .get_or_insert_with(|| path.to_string_lossy().into_owned());
    let place = os_place(path, options.base_dir.as_deref())?;
    let data = place.read_file(ceiling(options.max_bytes, u64::MAX))?;
    load_with(&data, &options, Some(&place.sidecars()))
}

/// Everything wrong with a file, as `ossa validate` reports it.
#[derive(Debug)]
pub struct Report {
    /// Broken rules, in file order (those without a byte offset last); empty when the file is valid.
    pub problems: Vec<Error>,
    /// Problems found beyond the recorded ones.
    pub more_problems: usize,
    /// What the default mode tolerates.
    pub warnings: Vec<String>,
    /// The model, when the file loads.
    pub model: Option<Model>,
}

/// Reads the whole file and records every problem a loader can step past, instead of stopping
/// at the first; a structural problem (data that ends early) still ends the walk. With
/// `options.io` and `options.name`, the files beside it are read as loading reads them, and a
/// character file's skills are checked for their numbers: a skill whose CFP (in a version 200
/// file, CFP or `.bin`) is not beside the file is a problem (`NotFound`), naming the skill and
/// the files, as adding it to a skeleton would fail (or, for version 200, give it no frames).
pub fn validate(data: &[u8], options: &LoadOptions) -> Report {
    let sidecars = match (options.io, &options.name) {
        (Some(fs), Some(name)) => Sidecars::beside(fs, name).ok(),
        _ => None,
    };
    validate_with(data, options, sidecars.as_ref(), "the load options' io")
}

/// [`validate`] for the file at `path`, read as [`load_file`] reads it, the files beside it too:
/// through `options.io` when given, else from the OS filesystem inside `options.base_dir`
/// (default: the file's directory). A character file's skills whose numbers are not there are
/// problems naming that directory. Errors: the file cannot be read (or lies outside
/// `base_dir`).
pub fn validate_file(path: &Path, options: &LoadOptions) -> Result<Report> {
    let mut options = options.clone();
    if let Some(fs) = options.io {
        let name = path.to_string_lossy().replace('\\', "/");
        let data = read_contained_at_most(fs, &name, ceiling(options.max_bytes, u64::MAX))?;
        options.name.get_or_insert(name);
        return Ok(validate(data.as_ref().as_ref(), &options));
    }
    options
        .name
        .get_or_insert_with(|| path.to_string_lossy().into_owned());
    let place = os_place(path, options.base_dir.as_deref())?;
    let data = place.read_file(ceiling(options.max_bytes, u64::MAX))?;
    // Where the files beside it are read: the base directory, else the file's own, by its real
    // path where it has one.
    let root = match &options.base_dir {
        Some(dir) => dir.clone(),
        None => path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
    };
    let looked_in = root.canonicalize().unwrap_or(root).display().to_string();
    Ok(validate_with(
        &data,
        &options,
        Some(&place.sidecars()),
        &looked_in,
    ))
}

/// [`validate`] with the files beside it read through `sidecars`, `looked_in` saying where that
/// is in a message.
fn validate_with(
    data: &[u8],
    options: &LoadOptions,
    sidecars: Option<&Sidecars<'_>>,
    looked_in: &str,
) -> Report {
    let label = file_label(options);
    let name = |e: Error| e.in_file_if(label.as_ref());
    let mut checker = Checker::new(options, true, data.len());
    let parsed = parse(data, options, &mut checker, sidecars);
    let mut problems: Vec<Error> = std::mem::take(&mut checker.problems)
        .into_iter()
        .map(name)
        .collect();
    if let (Ok(parts), Some(sidecars)) = (&parsed, sidecars) {
        problems.extend(
            crate::skills::missing_skill_numbers(
                data,
                parts.format,
                options.strict,
                sidecars,
                looked_in,
            )
            .into_iter()
            .map(name),
        );
    }
    let more_problems = checker.dropped_problems;
    let warnings = std::mem::take(&mut checker.warnings);
    let model = match parsed {
        Err(e) => {
            problems.push(name(e));
            None
        }
        Ok(_) if !problems.is_empty() => None,
        Ok(mut parts) => {
            parts.warnings.extend(warnings.iter().cloned());
            Model::from_checked_parts(parts)
                .map_err(|e| problems.push(name(e)))
                .ok()
        }
    };
    problems.sort_by_key(|p| p.offset().unwrap_or(u64::MAX));
    Report {
        problems,
        more_problems,
        warnings,
        model,
    }
}
