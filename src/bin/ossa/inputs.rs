//! What `convert` and `render` share: the inputs a command line names (files, directories,
//! patterns), the files that come with a model (skeleton, Sims skills and suits), and the
//! progress bar of a batch.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use ossa::{Format, LoadOptions, Model};

/// The files that make one model of an input besides the input itself: `--skeleton`,
/// `--skills`, `--suit` and `--search`, checked and loaded.
pub struct Sources<'a> {
    pub options: &'a LoadOptions<'static>,
    pub skeleton: Option<&'a Model>,
    pub skills: &'a [String],
    pub anims: &'a [String],
    pub suit: Option<&'a str>,
    pub search: &'a [String],
}

impl<'a> Sources<'a> {
    /// What `--skills`, `--suit` and `--search` name, with the loaded `--skeleton`.
    pub fn of(
        parts: &'a crate::cli::PartsArgs,
        options: &'a LoadOptions<'static>,
        skeleton: Option<&'a Model>,
    ) -> Sources<'a> {
        Sources {
            options,
            skeleton,
            skills: parts.skills.as_deref().unwrap_or_default(),
            anims: parts.anims.as_deref().unwrap_or_default(),
            suit: parts.suit.as_deref(),
            search: &parts.search,
        }
    }
}

/// The `--skeleton` file, loaded; its failure reported, as the command's exit status.
pub fn load_skeleton(
    file: Option<&str>,
    options: &LoadOptions<'static>,
) -> Result<Option<Model>, std::process::ExitCode> {
    let Some(file) = file else {
        return Ok(None);
    };
    Model::load_file(file, &side_options(options))
        .map(Some)
        .map_err(|e| {
            crate::report_error(file, &e);
            std::process::ExitCode::FAILURE
        })
}

/// What [`gather`] makes of an input.
pub struct Gathered {
    pub model: Model,
    /// What to print as warnings.
    pub warnings: Vec<String>,
    /// Per mesh of a character dressed in a suit, the file its mesh was read from, wherever it
    /// was found (its textures are beside it); empty for any other model, whose textures are
    /// beside the input.
    // Without glTF export there is no texture to look for.
    #[cfg_attr(not(feature = "gltf"), allow(dead_code))]
    pub mesh_files: Vec<Option<PathBuf>>,
}

impl Gathered {
    /// The model's textures: each mesh's beside its own file, the others beside `input`.
    #[cfg(feature = "gltf")]
    pub fn textures(
        &self,
        input: &Path,
        max_bytes: u64,
    ) -> Result<ossa::textures::ModelTextures, ossa::Error> {
        ossa::textures::find_textures_beside_parts(
            &self.model,
            input,
            None,
            &self.mesh_files,
            max_bytes,
        )
    }
}

/// `input` loaded (or dressed in the suit), bound to the skeleton when it waits for one, with
/// the skills added; and the warnings to print. `keeps_unbound`: the caller can use meshes that
/// still wait for a skeleton (it writes them into a format that names or numbers its bones).
pub fn gather(
    input: &Path,
    sources: &Sources,
    keeps_unbound: bool,
) -> Result<Gathered, ossa::Error> {
    let mut warnings = Vec::new();
    let (mut model, mesh_files) = match sources.suit {
        Some(suit) => dress(input, suit, sources)?,
        None => (Model::load_file(input, sources.options)?, Vec::new()),
    };
    if let Some(skeleton) = sources.skeleton
        && sources.suit.is_none()
    {
        if model.unbound().is_some() {
            model = Model::bind(&model, skeleton)?;
        } else {
            warnings.push(
                "--skeleton not used: the model has its skeleton already (in the file or beside it)"
                    .to_owned(),
            );
        }
    }
    if model.unbound().is_some() && (!keeps_unbound || !sources.skills.is_empty()) {
        let which = match model.format() {
            Format::Skm => "its SKP",
            Format::Mm2Mod => "its .skel",
            Format::SimsSkn | Format::SimsBmf | Format::SimsMsh => {
                "a Sims CMX or BCF skeleton (adult-skeleton.cmx)"
            }
            _ => "a skeleton file",
        };
        return Err(ossa::Error::invalid_argument(format!(
            "the meshes wait for a skeleton: give --skeleton FILE with {which}"
        )));
    }
    for skills in sources.skills {
        model = model.with_skills_file(skills, &side_options(sources.options))?;
    }
    for file in sources.anims {
        let animations = Model::load_file(file, &side_options(sources.options))
            .map_err(|e| e.in_file(&file.as_str().into()))?;
        model = model
            .with_animations(&animations)
            .map_err(|e| e.in_file(&file.as_str().into()))?;
    }
    warnings.extend(model.warnings().iter().map(|w| w.to_string()));
    Ok(Gathered {
        model,
        warnings,
        mesh_files,
    })
}

/// Options for the files that come with an input (skeleton, suit, meshes, skills): strictness
/// as the input's, their format always detected, as `--format` names the input's alone.
pub fn side_options(options: &LoadOptions<'static>) -> LoadOptions<'static> {
    LoadOptions {
        strict: options.strict,
        ..LoadOptions::default()
    }
}

/// The character `input` (a Sims skeleton, a suit file, or both) wearing `suit`, its meshes
/// found beside `input` or in the search directories; and, per mesh, the file it was read from.
fn dress(
    input: &Path,
    suit: &str,
    sources: &Sources,
) -> Result<(Model, Vec<Option<PathBuf>>), ossa::Error> {
    let loaded = Model::load_file(input, sources.options)?;
    let search: Vec<PathBuf> = sources.search.iter().map(PathBuf::from).collect();
    let dressed = ossa::character::dress_from_dirs(
        input,
        &loaded,
        suit,
        sources.skeleton,
        &search,
        &side_options(sources.options),
    )?;
    Ok((dressed.model, dressed.mesh_files))
}

/// `input`'s file name without its model extension (both parts of `.cmx.bcf`).
pub fn model_stem(input: &Path) -> String {
    let name = input
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    ossa::convert::file_stem(&name).to_owned()
}

/// A path whose last part holds `*` or `?` and that names no file: a pattern the shell left.
pub fn is_pattern(arg: &str) -> bool {
    let path = Path::new(arg);
    let last = path.file_name().map(|n| n.to_string_lossy().into_owned());
    last.is_some_and(|n| n.contains(['*', '?'])) && !path.exists()
}

/// Whether `name` matches `pattern`: `*` any run of characters, `?` one; a leading dot only
/// when the pattern starts with one, as shells do.
fn glob_match(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Backtracking to the last star: linear in practice, quadratic at worst.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A file a directory or pattern gives: one ossa reads as a model (not SKP skeletons, CFP
/// skill data or other sidecars, which go with their models); glTF files only with `gltf`
/// (`convert` leaves them out, as they are what it writes).
fn is_model_file(path: &Path, gltf: bool) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let format = name.as_deref().and_then(Format::from_extension);
    path.is_file()
        && format.is_some_and(|f| match f {
            Format::Skp => false,
            Format::Glb | Format::Gltf => gltf,
            _ => true,
        })
}

/// The files the arguments name, in order (each directory's and pattern's sorted), each once;
/// for each directory or pattern that gives none, why; and the links out of a directory that
/// were skipped, as warnings.
pub fn expand_inputs(
    args: &[String],
    gltf: bool,
) -> (Vec<PathBuf>, Vec<(String, ossa::Error)>, Vec<String>) {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut failed = Vec::new();
    let mut skipped = Vec::new();
    for arg in args {
        let path = Path::new(arg);
        let found: Vec<PathBuf> = if path.is_dir() {
            listed(path, gltf, |_| true, &mut skipped)
        } else if is_pattern(arg) {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            let pattern = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let found = listed(
                parent.unwrap_or(Path::new(".")),
                gltf,
                |name| glob_match(&pattern, name),
                &mut skipped,
            );
            // `*.dpm` gives `x.dpm`, as the shell would, not `./x.dpm`.
            match parent {
                Some(_) => found,
                None => found
                    .into_iter()
                    .map(|p| p.file_name().map_or(p.clone(), PathBuf::from))
                    .collect(),
            }
        } else {
            // A named file is converted whatever it is; loading says what is wrong with it.
            vec![path.to_path_buf()]
        };
        if found.is_empty() {
            let place = if path.is_dir() {
                "the directory holds"
            } else {
                "the pattern matches"
            };
            failed.push((
                arg.clone(),
                ossa::Error::not_found(format!(
                    "{place} no model file (.dpm .skm .iqm .skn .bmf .msh .cmx .bcf .skel .mod .dmf{})",
                    if gltf { " .glb .gltf" } else { "" }
                )),
            ));
        }
        for f in found {
            if seen.insert(f.clone()) {
                files.push(f);
            }
        }
    }
    (files, failed, skipped)
}

/// The model files of `dir` whose names pass `keep`, sorted. A symbolic link that leads out of
/// `dir` is not followed: a directory given is what is read, as a model's sidecars are read
/// only inside its directory; each is a warning in `skipped`.
fn listed(
    dir: &Path,
    gltf: bool,
    keep: impl Fn(&str) -> bool,
    skipped: &mut Vec<String>,
) -> Vec<PathBuf> {
    let (Ok(entries), Ok(inside)) = (std::fs::read_dir(dir), std::fs::canonicalize(dir)) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| keep(&n.to_string_lossy())))
        .filter(|p| is_model_file(p, gltf))
        .collect();
    files.sort();
    files.retain(|p| {
        let stays = std::fs::canonicalize(p).is_ok_and(|real| real.starts_with(&inside));
        if !stays {
            skipped.push(format!(
                "{}: a link out of {}; not followed",
                p.display(),
                dir.display()
            ));
        }
        stays
    });
    files
}

/// Where batch conversion says how it goes: a bar redrawn on a terminal, else a line a file.
pub struct Progress {
    total: usize,
    /// Stderr is a terminal: draw the bar there.
    bar: bool,
    /// Per-file lines go to stdout, unless stdout is the terminal the bar is on.
    lines: bool,
    /// Characters the bar on screen takes, to blank it before a line is printed over it.
    drawn: usize,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal();
        Progress {
            total,
            bar,
            lines: !(bar && std::io::stdout().is_terminal()),
            drawn: 0,
        }
    }

    /// Redraws the bar: `done` files finished, `name` the one under way.
    pub fn show(&mut self, done: usize, name: &str) {
        if !self.bar {
            return;
        }
        const WIDTH: usize = 30;
        let filled = (done * WIDTH).checked_div(self.total).unwrap_or(WIDTH);
        let head = if filled < WIDTH { ">" } else { "" };
        let empty = WIDTH - filled - head.len();
        // The name's end, which tells files apart, within one terminal line.
        let chars: Vec<char> = name.chars().collect();
        let short: String = chars[chars.len().saturating_sub(40)..].iter().collect();
        let text = format!(
            "[{}{head}{}] {done}/{} {short}",
            "=".repeat(filled),
            " ".repeat(empty),
            self.total
        );
        self.clear();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{text}");
        let _ = err.flush();
        self.drawn = text.chars().count();
    }

    pub fn clear(&mut self) {
        if self.drawn > 0 {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\r", " ".repeat(self.drawn));
            let _ = err.flush();
            self.drawn = 0;
        }
    }

    /// A line on stderr (an error, a warning), below the bar.
    pub fn note(&mut self, line: &str) {
        self.clear();
        eprintln!("{line}");
    }

    /// A converted file's line, on stdout unless the bar has the terminal.
    pub fn done(&mut self, line: &str) {
        if self.lines {
            self.clear();
            say!(std::io::stdout().lock(), "{line}");
        }
    }
}

/// A batch's inputs, expanded, with its directory made; what matched nothing is reported and
/// counted as failed. None: the directory could not be made (reported).
pub fn start_batch(args: &[String], gltf: bool, dir: &Path) -> Option<(Vec<PathBuf>, usize)> {
    let (inputs, unmatched, skipped) = expand_inputs(args, gltf);
    for (arg, e) in &unmatched {
        crate::report_error(arg, e);
    }
    for w in &skipped {
        eprintln!("ossa: warning: {w}");
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        let e = ossa::Error::io(format!("cannot make the directory: {e}"), Some(e));
        crate::report_error(&dir.display().to_string(), &e);
        return None;
    }
    Some((inputs, unmatched.len()))
}

/// A batch's last line and exit status: `converted 3 files into out`, or `converted 2 of 3
/// inputs into out; 1 failed` and failure. `verb`: converted, drew; `noun`: file, picture.
pub fn end_batch(
    dir: &Path,
    (verb, noun): (&str, &str),
    done: usize,
    total: usize,
    failures: usize,
) -> std::process::ExitCode {
    let mut out = std::io::stdout().lock();
    if failures == 0 {
        let plural = if done == 1 { "" } else { "s" };
        say!(out, "{verb} {done} {noun}{plural} into {}", dir.display());
        std::process::ExitCode::SUCCESS
    } else {
        say!(
            out,
            "{verb} {done} of {total} inputs into {}; {failures} failed",
            dir.display()
        );
        std::process::ExitCode::FAILURE
    }
}

/// One input's outcome: its warnings and line, or its error, and the exit status.
pub fn report_one(
    shown: &str,
    result: Result<(String, Vec<String>), ossa::Error>,
) -> std::process::ExitCode {
    match result {
        Ok((line, warnings)) => {
            for w in &warnings {
                eprintln!("ossa: warning: {w}");
            }
            say!(std::io::stdout().lock(), "{line}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            crate::report_error(shown, &e);
            std::process::ExitCode::FAILURE
        }
    }
}
