//! Format detection and the loaders, one module per format; each turns bytes into [`ModelParts`].

pub mod dpm;

use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::model::{Model, ModelParts};

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
}

impl Format {
    pub const ALL: [Format; 11] = [
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
        } else if ext(".cmx.bcf") || ext(".bcf") {
            Format::SimsBcf
        } else if ext(".cmx") {
            Format::SimsCmx
        } else if ext(".skel") {
            Format::Mm2Skel
        } else if ext(".dmf") {
            Format::Dmf
        } else {
            return None;
        })
    }
}

/// The default ceiling on a loaded model's memory when the caller sets none.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// How to load.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    pub format: Format,
    /// Reject what the default mode tolerates and repairs (and reports as warnings).
    pub strict: bool,
    /// Most memory the loaded model may use; 0 = [`DEFAULT_MAX_BYTES`].
    pub max_bytes: u64,
    /// The file's name or path: for messages, and to detect the format by extension.
    pub name: Option<String>,
}

impl LoadOptions {
    pub fn max_bytes(&self) -> u64 {
        if self.max_bytes == 0 {
            DEFAULT_MAX_BYTES
        } else {
            self.max_bytes
        }
    }
}

/// Collects what a loader finds: in load mode the first problem ends the load; in validate mode
/// every problem a loader can step past is recorded and the load goes on.
pub(crate) struct Checker {
    label: Option<Arc<str>>,
    strict: bool,
    collect: bool,
    max_bytes: u64,
    pub problems: Vec<Error>,
    pub dropped_problems: usize,
    pub warnings: Vec<String>,
}

/// Validation stops recording after this many problems (it still counts them).
const MAX_PROBLEMS: usize = 1000;

impl Checker {
    fn new(options: &LoadOptions, collect: bool) -> Checker {
        Checker {
            label: file_label(options),
            strict: options.strict,
            collect,
            max_bytes: options.max_bytes(),
            problems: Vec::new(),
            dropped_problems: 0,
            warnings: Vec::new(),
        }
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
            self.dropped_problems += 1;
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

    /// Fails with `Limit` when a model of `bytes` would exceed the caller's memory ceiling.
    pub fn reserve(&self, bytes: u64, what: &str) -> Result<()> {
        if bytes > self.max_bytes {
            Err(Error::limit(format!(
                "{what} needs {bytes} bytes of memory, more than the limit of {} bytes",
                self.max_bytes
            )))
        } else {
            Ok(())
        }
    }
}

/// The format of `data`, from its first bytes and then from `name`'s extension.
pub fn detect(data: &[u8], name: Option<&str>) -> Option<Format> {
    if data.starts_with(dpm::MAGIC) {
        return Some(Format::Dpm);
    }
    let by_name = name.and_then(Format::from_extension);
    // SKM and SKP share their magic; the name tells them apart.
    if data.starts_with(b"SKM1") {
        return Some(by_name.filter(|f| *f == Format::Skp).unwrap_or(Format::Skm));
    }
    by_name
}

fn file_label(options: &LoadOptions) -> Option<Arc<str>> {
    options.name.as_deref().map(|n| {
        let base = Path::new(n)
            .file_name()
            .and_then(|b| b.to_str())
            .unwrap_or(n);
        Arc::from(base)
    })
}

fn parse(data: &[u8], options: &LoadOptions, checker: &mut Checker) -> Result<ModelParts> {
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
        other => Err(Error::unsupported(format!(
            "{} files are not supported by this version of ossa",
            other.name()
        ))),
    }
}

fn finish(parts: ModelParts, checker: Checker) -> Model {
    let mut parts = parts;
    parts.warnings.extend(checker.warnings);
    Model::from_checked_parts(parts)
}

/// Loads a model from bytes.
pub fn load(data: &[u8], options: &LoadOptions) -> Result<Model> {
    let label = file_label(options);
    let mut checker = Checker::new(options, false);
    let result = parse(data, options, &mut checker).map(|parts| finish(parts, checker));
    match (result, label) {
        (Err(e), Some(label)) => Err(e.in_file(&label)),
        (r, _) => r,
    }
}

/// Loads a model from a file on the OS filesystem; its path names it unless `options.name` does.
pub fn load_file(path: &Path, options: &LoadOptions) -> Result<Model> {
    let mut options = options.clone();
    if options.name.is_none() {
        options.name = Some(path.to_string_lossy().into_owned());
    }
    let data = read_file(path)?;
    load(&data, &options)
}

pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        let what = format!("{}: cannot read: {e}", path.display());
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::not_found(what)
        } else {
            Error::io(what, Some(e))
        }
    })
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
/// at the first; a structural problem (data that ends early) still ends the walk.
pub fn validate(data: &[u8], options: &LoadOptions) -> Report {
    let label = file_label(options);
    let name = |e: Error| match &label {
        Some(l) => e.in_file(l),
        None => e,
    };
    let mut checker = Checker::new(options, true);
    let parsed = parse(data, options, &mut checker);
    let mut problems: Vec<Error> = std::mem::take(&mut checker.problems)
        .into_iter()
        .map(name)
        .collect();
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
            Some(Model::from_checked_parts(parts))
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
