//! The files a model refers to, found the way its engine finds them.
//!
//! - DPM: `MODEL.dpm.framegroups` beside the model, if present, gives the animation scenes
//!   (DarkPlaces' rule); without it every frame is a scene of its own.
//! - SKM (qfusion): the skeleton comes from
//!   1. `NAME.cfg` beside the model, when it has an `import PATH` line: `PATH` with its
//!      extension replaced by `.skp`, taken from the root of the filesystem (the engine's own
//!      with `io`, else the directory the caller allows). A `.cfg` without `import` is not a
//!      skeleton file (Warsow keeps player animation settings in `animation.cfg`): ossa warns and
//!      goes on to the next rule, where qfusion would fail.
//!   2. otherwise `NAME.skp` beside the model;
//!   3. for a LOD `NAME_N.skm` (N = 1 to 4) with neither, the base model's skeleton, found by
//!      rules 1 and 2 for `NAME`.
//!
//!   None found is `NotFound`, naming every file tried.
//!
//! - MM2 `.mod`: the skeleton is `NAME.skel` beside `NAME.mod` (the game's archives keep
//!   `pedmodel_woman.mod` with `pedmodel_woman.skel`, `.shaders` and `.csv` of the same name in
//!   `anim/`). None there is `NotFound`, naming it.
//! - IQM (Red Eclipse, Tesseract): `MODEL.iqm.cfg` beside the model, else an `iqm.cfg` there
//!   whose `iqmload` names it, adds each `iqmanim` file's animations (bound by bone index, as
//!   the engines bind them), played under the line's names at its speed. A file that cannot be
//!   used is a warning (strict mode refuses it).
//! - Sims skills: a skill's values are in `ANIMATION.cfp` beside the character file (CMX or
//!   BCF) that holds the skill, `ANIMATION` being the skill's animation name as the file spells
//!   it (the game's own names: `xskill-A2O-idle1.cfp`). A skill of a version-200 file (the
//!   1998 prototype) without one has its numbers in `ANIMATION.bin` (see
//!   [`skill_bin`](crate::format::skill_bin)).
//!
//! Import paths and animation names come from the file, so they are checked: no absolute paths,
//! no `..`.
//!
//! Sidecars share the model's memory limit ([`LoadOptions::max_bytes`]): a file larger than what
//! the model and the files read before it leave is refused (`Limit`) without being read, through
//! [`FileSystem::read_at_most`], and what is made of it is charged as it is made. A `.framegroups`
//! that cannot be used (unreadable, malformed, over the limit) does not take the model down: it is
//! a warning naming the file and line, and the model keeps its own scenes (one per frame); strict
//! mode refuses it with the error. A skeleton or a CFP that cannot be used fails the load.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::animation::parse_framegroups;
use crate::error::{Error, ErrorCode, Result};
use crate::format::cmx::Skill;
use crate::format::{Checker, Format, LoadOptions, ceiling};
use crate::io::{DirFileSystem, FileData, FileSystem, contained, os_error, read_contained_at_most};
use crate::model::{Animation, Frame, Model, ModelParts};

/// Where a model's sidecars are: its directory on a filesystem and its own file name.
pub(crate) struct Sidecars<'a> {
    pub fs: &'a dyn FileSystem,
    /// The model's directory as the filesystem names it: empty, or ending in `/`.
    pub dir: String,
    pub file_name: String,
}

/// The load's memory limit as its sidecars are read: the model and every file read with it share
/// one ceiling ([`LoadOptions::max_bytes_for`] of all their bytes: without a caller's limit it
/// grows with each file read). A sidecar's bytes count while they are held, and what is made of
/// them (scenes, a skeleton) from then on.
pub(crate) struct Allowance {
    max_bytes: u64,
    input_bytes: u64,
    spent: u64,
}

impl Allowance {
    /// For a model of `input_bytes` bytes that has been charged `spent` bytes.
    pub fn new(options: &LoadOptions, input_bytes: usize, spent: u64) -> Allowance {
        Allowance {
            max_bytes: options.max_bytes,
            input_bytes: input_bytes as u64,
            spent,
        }
    }

    /// What is left under the ceiling.
    pub fn left(&self) -> u64 {
        ceiling(self.max_bytes, self.input_bytes).saturating_sub(self.spent)
    }

    /// The sidecar at `path`, or `None` when it does not exist. A file larger than the room the
    /// limit leaves is `Limit`, and not read.
    fn read<'f>(&mut self, fs: &'f dyn FileSystem, path: &str) -> Result<Option<FileData<'f>>> {
        // The room the ceiling can reach once this file counts as input.
        let room = ceiling(self.max_bytes, u64::MAX).saturating_sub(self.spent);
        let data = match read_contained_at_most(fs, path, room) {
            Ok(data) => data,
            Err(Error::NotFound(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        let size = (*data).as_ref().len() as u64;
        self.input_bytes = self.input_bytes.saturating_add(size);
        self.charge(size, path)?;
        Ok(Some(data))
    }

    /// Counts `bytes` more for `what`; `Limit` past the ceiling.
    fn charge(&mut self, bytes: u64, what: &str) -> Result<()> {
        self.spent = self.spent.saturating_add(bytes);
        let ceiling = ceiling(self.max_bytes, self.input_bytes);
        if self.spent > ceiling {
            return Err(Error::limit(format!(
                "the model with {what} needs {} bytes of memory, more than the limit of {ceiling} bytes",
                self.spent
            )));
        }
        Ok(())
    }

    /// A file's `bytes` are released.
    fn release(&mut self, bytes: usize) {
        self.spent = self.spent.saturating_sub(bytes as u64);
    }
}

/// The last component of a path, which names a file in messages.
pub(crate) fn label(path: &str) -> Arc<str> {
    Arc::from(path.rsplit(['/', '\\']).next().unwrap_or(path))
}

/// The path without the extension of its last component (`a.b/c.skm` -> `a.b/c`; `../x` keeps
/// its dots, and a leading dot is no extension).
fn without_extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rfind('.') {
        // The path ends with the name, which ends with its extension.
        Some(dot) if dot > 0 => name
            .get(dot..)
            .and_then(|extension| path.strip_suffix(extension))
            .unwrap_or(path),
        _ => path,
    }
}

/// `NAME` of a LOD file stem `NAME_N`, N from 1 to 4.
fn lod_base(stem: &str) -> Option<&str> {
    let (base, n) = stem.rsplit_once('_')?;
    (matches!(n, "1" | "2" | "3" | "4") && !base.is_empty()).then_some(base)
}

/// The path after the first `import` token of a qfusion `.cfg`, on the same line; `None` when
/// the file has no import. Tokens split on white space, `//` starts a comment, quotes group.
fn cfg_import(text: &[u8]) -> Option<String> {
    for line in text.split(|&b| b == b'\n') {
        let content = line
            .windows(2)
            .position(|w| w == b"//")
            .and_then(|end| line.get(..end))
            .unwrap_or(line);
        let mut tokens = content
            .split(u8::is_ascii_whitespace)
            .filter(|t| !t.is_empty())
            .map(trim_quotes);
        while let Some(token) = tokens.next() {
            if token.eq_ignore_ascii_case(b"import") {
                return tokens
                    .next()
                    .map(|t| String::from_utf8_lossy(t).into_owned());
            }
        }
    }
    None
}

/// `t` without the quotes at its ends.
fn trim_quotes(t: &[u8]) -> &[u8] {
    let start = t.iter().position(|&b| b != b'"').unwrap_or(t.len());
    let end = t
        .iter()
        .rposition(|&b| b != b'"')
        .map_or(start, |e| e.saturating_add(1));
    t.get(start..end).unwrap_or_default()
}

/// An OS file and where its sidecars are read from: a filesystem over `base_dir` (default: the
/// file's own directory), the file's directory relative to it, and the file's name.
pub(crate) struct OsPlace {
    pub fs: DirFileSystem,
    /// The file's directory as `fs` names it: empty, or ending in `/`.
    pub dir: String,
    pub file_name: String,
    /// The file's path relative to the root of `fs`.
    file: PathBuf,
}

/// Where the OS file `path` and its sidecars are read from. The file must lie inside `base_dir`
/// as the OS resolves both, links and all: its directory is compared by its real path, and the
/// file itself is read as a sidecar is, so a link that leads out is refused (InvalidArgument).
/// Without `base_dir`, a model path that is a link is resolved first: the base is the directory
/// of the file it leads to.
pub(crate) fn os_place(path: &Path, base_dir: Option<&Path>) -> Result<OsPlace> {
    // Without a base directory the caller's path is the caller's choice, links and all: the
    // base is the real file's own directory, and its sidecars are read beside it.
    let resolved;
    let path = if base_dir.is_none() && path.is_symlink() {
        resolved = path.canonicalize().map_err(|e| os_error(path, e))?;
        resolved.as_path()
    } else {
        path
    };
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let root = base_dir.unwrap_or(parent);
    let name = path
        .file_name()
        .ok_or_else(|| Error::invalid_argument(format!("{} names no file", path.display())))?;
    let real_parent = parent.canonicalize().map_err(|e| os_error(parent, e))?;
    // A model is not inside a directory that does not exist.
    let real_root = root.canonicalize().map_err(|e| {
        Error::invalid_argument(format!("the allowed directory {}: {e}", root.display()))
    })?;
    let relative_dir = real_parent.strip_prefix(&real_root).map_err(|_| {
        Error::invalid_argument(format!(
            "{} is not inside the allowed directory {}",
            path.display(),
            root.display()
        ))
    })?;
    let mut dir = relative_dir.to_string_lossy().replace('\\', "/");
    if !dir.is_empty() {
        dir.push('/');
    }
    Ok(OsPlace {
        fs: DirFileSystem::new(root),
        dir,
        file_name: name.to_string_lossy().into_owned(),
        file: relative_dir.join(name),
    })
}

impl OsPlace {
    /// The file's own bytes, if it holds at most `max_bytes` (else `Limit`, and it is not read).
    pub fn read_file(&self, max_bytes: u64) -> Result<Vec<u8>> {
        self.fs.read_path(&self.file, max_bytes)
    }

    /// Its sidecars.
    pub fn sidecars(&self) -> Sidecars<'_> {
        Sidecars {
            fs: &self.fs,
            dir: self.dir.clone(),
            file_name: self.file_name.clone(),
        }
    }
}

impl<'a> Sidecars<'a> {
    /// The sidecars of the file `fs` names `name` (`dir/file`, or a bare file name at its root;
    /// empty: files at its root). A name that leaves the filesystem (absolute, `..`) is an
    /// invalid argument: its sidecars would be outside.
    pub fn beside(fs: &'a dyn FileSystem, name: &str) -> Result<Sidecars<'a>> {
        if !name.is_empty() {
            contained(name).map_err(|e| e.within("the model's name"))?;
        }
        let (dir, file_name) = name.rsplit_once('/').unwrap_or(("", name));
        Ok(Sidecars {
            fs,
            dir: if dir.is_empty() {
                String::new()
            } else {
                format!("{dir}/")
            },
            file_name: file_name.to_owned(),
        })
    }

    /// Where the numbers of `skill` may be: `ANIMATION.cfp` beside the character file, or the
    /// 1998 prototype's `ANIMATION.bin`. The animation name comes from the file, so it must stay
    /// inside the directory (InvalidArgument).
    pub fn skill_numbers_paths(&self, skill: &Skill) -> Result<SkillNumbersPaths> {
        let animation = skill.animation.to_string_lossy();
        let cfp = self.sibling(&format!("{animation}.cfp"));
        let bin = self.sibling(&format!("{animation}.bin"));
        contained(&animation)
            .and_then(|_| contained(&cfp))
            .and_then(|_| contained(&bin))
            .map_err(|e| e.within(format!("skill {}: animation name", skill.name)))?;
        Ok(SkillNumbersPaths { cfp, bin })
    }

    /// The numbers of a skill at `paths` (from [`Sidecars::skill_numbers_paths`]): its CFP, else
    /// (for a skill of a version-200 file, `prototype`) its `.bin`, else
    /// [`SkillNumbers::Missing`]. A file over `max_bytes` is Limit (and not read).
    pub fn read_skill_numbers(
        &self,
        paths: &SkillNumbersPaths,
        prototype: bool,
        max_bytes: u64,
    ) -> Result<SkillNumbers<'a>> {
        let tried = [
            (&paths.cfp, NumbersKind::Cfp),
            (&paths.bin, NumbersKind::Bin),
        ];
        let tried = tried
            .get(..if prototype { 2 } else { 1 })
            .unwrap_or_default();
        for &(path, kind) in tried {
            match read_contained_at_most(self.fs, path, max_bytes) {
                Ok(data) => return Ok(SkillNumbers::Found(kind, data)),
                Err(Error::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(SkillNumbers::Missing)
    }
}

/// The files that may hold a skill's numbers.
#[derive(Clone, Debug)]
pub(crate) struct SkillNumbersPaths {
    /// `ANIMATION.cfp`, the retail game's.
    pub cfp: String,
    /// `ANIMATION.bin`, the 1998 prototype's.
    pub bin: String,
}

/// Which file held a skill's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NumbersKind {
    Cfp,
    Bin,
}

/// A skill's numbers as [`Sidecars::read_skill_numbers`] finds them.
pub(crate) enum SkillNumbers<'a> {
    Found(NumbersKind, FileData<'a>),
    /// Neither file exists.
    Missing,
}

impl<'a> Sidecars<'a> {
    fn sibling(&self, name: &str) -> String {
        format!("{}{name}", self.dir)
    }

    /// What the parsed file needs from its sidecars before it is assembled (DPM scenes). A
    /// `.framegroups` that cannot be used (unreadable, malformed, over the memory limit) is a
    /// warning, and the model keeps the scenes it has without it; strict mode refuses it.
    pub fn complete_parts(
        &self,
        parts: &mut ModelParts,
        options: &LoadOptions,
        allowance: &mut Allowance,
    ) -> Result<()> {
        // An IQM's frames follow the bind pose, frame 0 of the model, and DarkPlaces counts
        // them from the file's first; a file without frames plays its rest pose as frame 0.
        let skip = match parts.format {
            Format::Dpm => 0,
            Format::Iqm => usize::from(parts.frames.len() > 1),
            _ => return Ok(()),
        };
        let path = self.sibling(&format!("{}.framegroups", self.file_name));
        let frames = parts.frames.get(skip..).unwrap_or_default();
        match self.framegroups(&path, frames, options.strict, allowance) {
            Ok(None) => {}
            Ok(Some((mut scenes, warnings))) => {
                for s in &mut scenes {
                    s.first_frame = s.first_frame.saturating_add(skip as u32);
                }
                parts.animations = scenes;
                // The model is no longer the file's alone.
                parts.source = None;
                parts.warnings.extend(warnings);
            }
            // A path ossa does not follow is the caller's to fix, not the sidecar's.
            Err(e) if options.strict || e.code() == ErrorCode::InvalidArgument => return Err(e),
            Err(e) => parts.warnings.push(format!(
                "{e}; the file is not used, every frame is a scene of its own"
            )),
        }
        Ok(())
    }

    /// The scenes of the `.framegroups` at `path` and the warnings reading them gave, or `None`
    /// when there is no such file.
    fn framegroups(
        &self,
        path: &str,
        frames: &[Frame],
        strict: bool,
        allowance: &mut Allowance,
    ) -> Result<Option<(Vec<Animation>, Vec<String>)>> {
        let Some(text) = allowance.read(self.fs, path)? else {
            return Ok(None);
        };
        let file = label(path);
        let mut ck = Checker::for_sidecar(Arc::clone(&file), strict, allowance.left());
        let scenes =
            parse_framegroups((*text).as_ref(), frames, &mut ck).map_err(|e| e.in_file(&file))?;
        allowance.release((*text).as_ref().len());
        allowance.charge(ck.charged(), path)?;
        Ok(Some((scenes, ck.warnings)))
    }

    /// What the assembled model needs from its sidecars (an SKM's or a MOD's skeleton).
    pub fn complete_model(
        &self,
        model: Model,
        options: &LoadOptions,
        allowance: &mut Allowance,
    ) -> Result<Model> {
        if model.format() == Format::Iqm {
            return self.iqm_cfg(model, options, allowance);
        }
        if model.unbound().is_none() {
            return Ok(model);
        }
        match model.format() {
            Format::Skm => self.skm_skeleton(model, options, allowance),
            Format::Mm2Mod => self.mod_skeleton(model, options, allowance),
            _ => Ok(model),
        }
    }

    /// Loads the skeleton at `path`, within what is left of the memory limit, and binds the
    /// model to it.
    fn bind_to(
        &self,
        model: &Model,
        (path, data): (String, FileData<'a>),
        format: Format,
        options: &LoadOptions,
        allowance: &mut Allowance,
    ) -> Result<Model> {
        let left = allowance.left();
        if left == 0 {
            return Err(Error::limit(format!(
                "{path}: the model and its files leave none of the memory limit for the skeleton"
            )));
        }
        let skeleton_options = LoadOptions {
            format,
            name: Some(path.clone()),
            io: None,
            max_bytes: left,
            ..options.clone()
        };
        let skeleton = crate::format::load((*data).as_ref(), &skeleton_options)?;
        allowance.release((*data).as_ref().len());
        drop(data);
        allowance.charge(skeleton.heap_bytes() as u64, &path)?;
        Model::bind(model, &skeleton).map_err(|e| e.within(format!("binding to {path}")))
    }

    /// An IQM's animations from the Red Eclipse configuration beside it, if there is one.
    fn iqm_cfg(
        &self,
        model: Model,
        options: &LoadOptions,
        allowance: &mut Allowance,
    ) -> Result<Model> {
        let own = self.sibling(&format!("{}.cfg", self.file_name));
        let shared = self.sibling("iqm.cfg");
        let (path, text) = match allowance.read(self.fs, &own)? {
            Some(text) => (own, text),
            None => match allowance.read(self.fs, &shared)? {
                Some(text) => (shared.clone(), text),
                None => return Ok(model),
            },
        };
        let file = label(&path);
        let parsed = crate::format::iqm::parse_cfg((*text).as_ref()).map_err(|e| e.in_file(&file));
        allowance.release((*text).as_ref().len());
        drop(text);
        let cfg = match parsed {
            Ok(cfg) => cfg,
            Err(e) if options.strict => return Err(e),
            Err(e) => return Ok(model.with_warnings(vec![format!("{e}; the file is not used")])),
        };
        // A directory's iqm.cfg configures the mesh it loads, which may be another.
        let loads_this = cfg
            .load
            .as_deref()
            .is_some_and(|l| label(l).as_ref() == label(&self.file_name).as_ref());
        if path == shared && !loads_this {
            return Ok(model);
        }
        let mut model = model;
        let mut warnings = Vec::new();
        for anim in &cfg.anims {
            match self.iqm_anim(&model, anim, options, allowance) {
                Ok(m) => model = m,
                Err(e) if options.strict || e.code() == ErrorCode::InvalidArgument => {
                    return Err(e.on_line(anim.line).in_file(&file));
                }
                Err(e) => warnings.push(format!(
                    "{file}: line {}: {e}; the animation is left out",
                    anim.line
                )),
            }
        }
        Ok(model.with_warnings(warnings))
    }

    /// `model` with the animations of one `iqmanim` line added.
    fn iqm_anim(
        &self,
        model: &Model,
        line: &crate::format::iqm::CfgAnim,
        options: &LoadOptions,
        allowance: &mut Allowance,
    ) -> Result<Model> {
        let path = self.sibling(&line.file);
        let path = contained(&path)?.to_owned();
        let Some(data) = allowance.read(self.fs, &path)? else {
            return Err(Error::not_found(format!("{path} does not exist")));
        };
        let anim_options = LoadOptions {
            format: Format::Iqm,
            name: Some(path.clone()),
            io: None,
            max_bytes: allowance.left(),
            ..options.clone()
        };
        let anims = crate::format::load((*data).as_ref(), &anim_options)?;
        allowance.release((*data).as_ref().len());
        drop(data);
        allowance.charge(anims.heap_bytes() as u64, &path)?;
        let before = model.animations().len();
        let added = model
            .with_animations(&anims)
            .map_err(|e| e.within(format!("adding {path}")))?;
        // The file's frames play as each of the line's names: all of them, or its one anim.
        let mut parts = added.to_parts();
        parts.warnings = added.warnings().iter().map(|w| w.to_string()).collect();
        let new = parts.animations.split_off(before);
        let chosen: Vec<&Animation> = new
            .iter()
            .filter(|s| {
                line.anim
                    .as_deref()
                    .is_none_or(|n| s.name.as_bytes() == n.as_bytes())
            })
            .collect();
        let (Some(first), Some(end)) = (
            chosen.iter().map(|s| s.first_frame).min(),
            chosen
                .iter()
                .map(|s| s.first_frame.saturating_add(s.frame_count))
                .max(),
        ) else {
            return Err(Error::not_found(format!(
                "{path} has no anim {:?}",
                line.anim.as_deref().unwrap_or_default()
            )));
        };
        let template = chosen.first().map(|s| (*s).clone()).unwrap_or_default();
        parts.events.retain(|e| (e.animation as usize) < before);
        for name in &line.names {
            parts.animations.push(Animation {
                name: name.as_str().into(),
                first_frame: first,
                frame_count: end.saturating_sub(first),
                fps: line.speed.unwrap_or(template.fps),
                ..template.clone()
            });
        }
        Model::from_parts(parts)
    }

    /// An MM2 mesh's skeleton: `NAME.skel` beside `NAME.mod`.
    fn mod_skeleton(
        &self,
        model: Model,
        options: &LoadOptions,
        allowance: &mut Allowance,
    ) -> Result<Model> {
        let path = self.sibling(&format!("{}.skel", without_extension(&self.file_name)));
        let Some(data) = allowance.read(self.fs, &path)? else {
            return Err(Error::not_found(format!(
                "no skeleton for this MOD: {path} does not exist"
            )));
        };
        self.bind_to(&model, (path, data), Format::Mm2Skel, options, allowance)
    }

    /// An SKM's skeleton by qfusion's rules.
    fn skm_skeleton(
        &self,
        model: Model,
        options: &LoadOptions,
        allowance: &mut Allowance,
    ) -> Result<Model> {
        let mut tried = Vec::new();
        let mut warnings = Vec::new();
        let own = without_extension(&self.file_name);
        let mut found = self.find_skeleton(own, &mut tried, &mut warnings, allowance)?;
        if found.is_none()
            && let Some(base) = lod_base(own)
        {
            found = self.find_skeleton(base, &mut tried, &mut warnings, allowance)?;
        }
        let Some(found) = found else {
            return Err(Error::not_found(format!(
                "no skeleton for this SKM: tried {}",
                tried.join(", ")
            )));
        };
        let bound = self.bind_to(&model, found, Format::Skp, options, allowance)?;
        Ok(bound.with_warnings(warnings))
    }

    /// Rules 1 and 2 for one stem: the `.cfg`'s import, else the `.skp` beside the model.
    fn find_skeleton(
        &self,
        stem: &str,
        tried: &mut Vec<String>,
        warnings: &mut Vec<String>,
        allowance: &mut Allowance,
    ) -> Result<Option<(String, FileData<'a>)>> {
        let cfg = self.sibling(&format!("{stem}.cfg"));
        tried.push(cfg.clone());
        if let Some(text) = allowance.read(self.fs, &cfg)? {
            let import = cfg_import((*text).as_ref());
            allowance.release((*text).as_ref().len());
            drop(text);
            match import {
                Some(import) => {
                    let skp = format!("{}.skp", without_extension(&import));
                    let skp = contained(&skp).map_err(|e| e.in_file(&label(&cfg)))?.to_owned();
                    return match allowance.read(self.fs, &skp)? {
                        Some(data) => Ok(Some((skp, data))),
                        None => Err(Error::not_found(format!("imports {skp}, which does not exist")).in_file(&label(&cfg))),
                    };
                }
                None => warnings.push(format!(
                    "{cfg} has no import line (not a skeleton configuration); looking for {stem}.skp instead"
                )),
            }
        }
        let skp = self.sibling(&format!("{stem}.skp"));
        tried.push(skp.clone());
        Ok(allowance.read(self.fs, &skp)?.map(|data| (skp, data)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cfg_import_is_the_token_after_import_on_its_line() {
        assert_eq!(
            cfg_import(b"// skeleton\nIMPORT models/players/monada/tris\n"),
            Some("models/players/monada/tris".into())
        );
        assert_eq!(
            cfg_import(b"scale 1.0\nimport \"a/b.skp\" // c\n"),
            Some("a/b.skp".into())
        );
        assert_eq!(cfg_import(b"// import x\nsex m\n"), None);
        assert_eq!(cfg_import(b"import\nx\n"), None);
    }

    #[test]
    fn lod_names() {
        assert_eq!(lod_base("tris_2"), Some("tris"));
        assert_eq!(lod_base("tris_5"), None);
        assert_eq!(lod_base("tris"), None);
        assert_eq!(lod_base("_1"), None);
        assert_eq!(without_extension("tris_2.skm"), "tris_2");
        assert_eq!(without_extension("../outside"), "../outside");
        assert_eq!(without_extension("a.b/c.skp"), "a.b/c");
        assert_eq!(without_extension("dir/.hidden"), "dir/.hidden");
    }
}
