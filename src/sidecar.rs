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
//! - Sims skills: a skill's values are in `ANIMATION.cfp` beside the character file (CMX or
//!   BCF) that holds the skill, `ANIMATION` being the skill's animation name as the file spells
//!   it (the game's own names: `xskill-A2O-idle1.cfp`).
//!
//! Import paths and animation names come from the file, so they are checked: no absolute paths,
//! no `..`.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::animation::parse_framegroups;
use crate::error::{Error, Result};
use crate::format::cmx::Skill;
use crate::format::{Format, LoadOptions};
use crate::io::{DirFileSystem, FileData, FileSystem, contained, os_error, read_contained};
use crate::model::{Model, ModelParts};

/// Where a model's sidecars are: its directory on a filesystem and its own file name.
pub(crate) struct Sidecars<'a> {
    pub fs: &'a dyn FileSystem,
    /// The model's directory as the filesystem names it: empty, or ending in `/`.
    pub dir: String,
    pub file_name: String,
}

/// A sidecar's bytes, or `None` when it does not exist; other failures are errors.
fn read_optional(fs: &dyn FileSystem, path: &str) -> Result<Option<Vec<u8>>> {
    match read_contained(fs, path) {
        Ok(data) => Ok(Some((*data).as_ref().to_vec())),
        Err(Error::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
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
fn cfg_import(text: &str) -> Option<String> {
    for line in text.lines() {
        let content = line.split("//").next().unwrap_or_default();
        let mut tokens = content.split_whitespace().map(|t| t.trim_matches('"'));
        while let Some(token) = tokens.next() {
            if token.eq_ignore_ascii_case("import") {
                return tokens.next().map(str::to_owned);
            }
        }
    }
    None
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
    /// The file's own bytes.
    pub fn read_file(&self) -> Result<Vec<u8>> {
        self.fs.read_path(&self.file)
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

    /// Where the CFP of `skill` is: `ANIMATION.cfp` beside the character file. The animation
    /// name comes from the file, so it must stay inside the directory (InvalidArgument).
    pub fn skill_cfp_path(&self, skill: &Skill) -> Result<String> {
        let animation = skill.animation.to_string_lossy();
        let path = self.sibling(&format!("{animation}.cfp"));
        contained(&animation)
            .and_then(|_| contained(&path))
            .map_err(|e| e.within(format!("skill {}: animation name", skill.name)))?;
        Ok(path)
    }

    /// The bytes of a skill's CFP at `path` (from [`Sidecars::skill_cfp_path`]); a missing file
    /// is NotFound naming it.
    pub fn read_skill_cfp(&self, skill: &Skill, path: &str) -> Result<FileData<'a>> {
        read_contained(self.fs, path).map_err(|e| match e {
            Error::NotFound(_) => Error::not_found(format!(
                "skill {}: its animation file {path} does not exist",
                skill.name
            )),
            e => e,
        })
    }
}

impl Sidecars<'_> {
    fn sibling(&self, name: &str) -> String {
        format!("{}{name}", self.dir)
    }

    /// What the parsed file needs from its sidecars before it is assembled (DPM scenes).
    pub fn complete_parts(&self, parts: &mut ModelParts) -> Result<()> {
        if parts.format != Format::Dpm {
            return Ok(());
        }
        let path = self.sibling(&format!("{}.framegroups", self.file_name));
        if let Some(text) = read_optional(self.fs, &path)? {
            parts.animations =
                parse_framegroups(&text, &parts.frames).map_err(|e| e.in_file(&label(&path)))?;
        }
        Ok(())
    }

    /// What the assembled model needs from its sidecars (an SKM's or a MOD's skeleton).
    pub fn complete_model(&self, model: Model, options: &LoadOptions) -> Result<Model> {
        if model.unbound().is_none() {
            return Ok(model);
        }
        match model.format() {
            Format::Skm => self.skm_skeleton(model, options),
            Format::Mm2Mod => self.mod_skeleton(model, options),
            _ => Ok(model),
        }
    }

    /// Loads the skeleton at `path` and binds the model to it.
    fn bind_to(
        &self,
        model: &Model,
        path: String,
        data: &[u8],
        format: Format,
        options: &LoadOptions,
    ) -> Result<Model> {
        let skeleton_options = LoadOptions {
            format,
            name: Some(path.clone()),
            io: None,
            ..options.clone()
        };
        let skeleton = crate::format::load(data, &skeleton_options)?;
        Model::bind(model, &skeleton).map_err(|e| e.within(format!("binding to {path}")))
    }

    /// An MM2 mesh's skeleton: `NAME.skel` beside `NAME.mod`.
    fn mod_skeleton(&self, model: Model, options: &LoadOptions) -> Result<Model> {
        let path = self.sibling(&format!("{}.skel", without_extension(&self.file_name)));
        let Some(data) = read_optional(self.fs, &path)? else {
            return Err(Error::not_found(format!(
                "no skeleton for this MOD: {path} does not exist"
            )));
        };
        self.bind_to(&model, path, &data, Format::Mm2Skel, options)
    }

    /// An SKM's skeleton by qfusion's rules.
    fn skm_skeleton(&self, model: Model, options: &LoadOptions) -> Result<Model> {
        let mut tried = Vec::new();
        let mut warnings = Vec::new();
        let own = without_extension(&self.file_name);
        let mut found = self.find_skeleton(own, &mut tried, &mut warnings)?;
        if found.is_none()
            && let Some(base) = lod_base(own)
        {
            found = self.find_skeleton(base, &mut tried, &mut warnings)?;
        }
        let Some((path, data)) = found else {
            return Err(Error::not_found(format!(
                "no skeleton for this SKM: tried {}",
                tried.join(", ")
            )));
        };
        let bound = self.bind_to(&model, path, &data, Format::Skp, options)?;
        Ok(bound.with_warnings(warnings))
    }

    /// Rules 1 and 2 for one stem: the `.cfg`'s import, else the `.skp` beside the model.
    fn find_skeleton(
        &self,
        stem: &str,
        tried: &mut Vec<String>,
        warnings: &mut Vec<String>,
    ) -> Result<Option<(String, Vec<u8>)>> {
        let cfg = self.sibling(&format!("{stem}.cfg"));
        tried.push(cfg.clone());
        if let Some(text) = read_optional(self.fs, &cfg)? {
            match cfg_import(&String::from_utf8_lossy(&text)) {
                Some(import) => {
                    let skp = format!("{}.skp", without_extension(&import));
                    let skp = contained(&skp).map_err(|e| e.in_file(&label(&cfg)))?.to_owned();
                    return match read_optional(self.fs, &skp)? {
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
        Ok(read_optional(self.fs, &skp)?.map(|data| (skp, data)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cfg_import_is_the_token_after_import_on_its_line() {
        assert_eq!(
            cfg_import("// skeleton\nIMPORT models/players/monada/tris\n"),
            Some("models/players/monada/tris".into())
        );
        assert_eq!(
            cfg_import("scale 1.0\nimport \"a/b.skp\" // c\n"),
            Some("a/b.skp".into())
        );
        assert_eq!(cfg_import("// import x\nsex m\n"), None);
        assert_eq!(cfg_import("import\nx\n"), None);
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
