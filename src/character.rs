//! A Sims character found on disk, and checked across the files it comes in.
//!
//! A character is a skeleton (`adult-skeleton.cmx`), a suit (in the skeleton's file or in
//! `SUIT.cmx`, `SUIT.cmx.bcf` or `SUIT.bcf`), the meshes the suit's skins name (`MESH.skn`,
//! `MESH.bmf`, the 1998 prototype's `MESH.msh`), their textures, and skills (character files
//! whose numbers are in a CFP, or a prototype `.bin`, beside them). [`dress_from_dirs`] finds the
//! suit and its meshes in the input's directory and search directories and dresses the skeleton,
//! as `ossa convert` and `ossa render` do; [`check_character`] follows the same references and
//! lists every problem of every file instead of stopping at the first.
//!
//! The texture rule (docs/sidecars.md gives its sources): a texture's sides are powers of two;
//! a retail mesh's (SKN, BMF) is a BMP of 8 bits a pixel (256 colours) or a TGA, which the game
//! reads (a PNG or JPEG it does not); the first skin of a retail suit is drawn with the texture
//! the Sim's appearance chooses (FORMATS §4.1), so its mesh's own need not be there, but is
//! checked when it is.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, ErrorCode, Result};
use crate::format::cmx::{self, BoneNames, CharacterFile};
use crate::format::{Format, LoadOptions, ceiling, cfp, skill_bin};
use crate::model::{BoneSlots, Model, Suit};
use crate::name_index::NameIndex;
use crate::sidecar::{NumbersKind, SkillNumbers, label, os_place};

/// The names a suit's file may have, after the suit's name.
pub const SUIT_EXTENSIONS: [&str; 3] = [".cmx", ".cmx.bcf", ".bcf"];
/// The names a skin's mesh file may have, after the mesh's name.
pub const MESH_EXTENSIONS: [&str; 3] = [".skn", ".bmf", ".msh"];

/// Directories' files by name, each directory listed once, when first looked in (a suit of
/// thousands of skins looks for thousands of meshes).
pub struct DirIndex {
    dirs: Vec<PathBuf>,
    /// Per directory: its files by lower-case name (the first of names equal but for case).
    listings: Vec<Option<HashMap<String, PathBuf>>>,
}

impl DirIndex {
    pub fn new(dirs: Vec<PathBuf>) -> DirIndex {
        let listings = vec![None; dirs.len()];
        DirIndex { dirs, listings }
    }

    /// The directories of `input` (its own, `.` for a bare name) and then `search`: where a
    /// character's suit and mesh files are looked for.
    pub fn for_input(input: &Path, search: &[PathBuf]) -> DirIndex {
        let mut dirs = vec![dir_of(input)];
        dirs.extend(search.iter().cloned());
        DirIndex::new(dirs)
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The directories, as a message names them: `a, b`.
    pub fn shown(&self) -> String {
        let shown: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        shown.join(", ")
    }

    /// The first of `names` (ASCII case ignored, as the game's files are named on Windows) in
    /// the first directory that holds one, with that directory.
    pub fn find(&mut self, names: &[String]) -> Option<(PathBuf, PathBuf)> {
        for (dir, listing) in self.dirs.iter().zip(&mut self.listings) {
            let files = listing.get_or_insert_with(|| {
                let mut files = HashMap::new();
                let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
                // Files of `.` by their bare names, as a bare input is named.
                let bare = dir.as_os_str() == ".";
                for e in entries {
                    let name = e.file_name().to_string_lossy().to_ascii_lowercase();
                    let path = if bare {
                        PathBuf::from(e.file_name())
                    } else {
                        e.path()
                    };
                    files.entry(name).or_insert(path);
                }
                files
            });
            let found = names
                .iter()
                .find_map(|n| files.get(&n.to_ascii_lowercase()));
            if let Some(path) = found {
                return Some((path.clone(), dir.clone()));
            }
        }
        None
    }
}

/// The directory of `path`: `.` for a bare file name.
fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `suit`'s file names (`NAME.cmx`, ...).
fn suit_file_names(suit: &str) -> Vec<String> {
    SUIT_EXTENSIONS
        .iter()
        .map(|e| format!("{suit}{e}"))
        .collect()
}

fn mesh_file_names(mesh: &str) -> Vec<String> {
    MESH_EXTENSIONS
        .iter()
        .map(|e| format!("{mesh}{e}"))
        .collect()
}

fn has_suit(suits: &[Suit], suit: &str) -> bool {
    (suits.iter()).any(|s| s.name.as_bytes().eq_ignore_ascii_case(suit.as_bytes()))
}

/// The error of a suit found neither in the input's `suits` nor as a file in `index`'s
/// directories.
fn no_suit(suits: &[Suit], suit: &str, index: &DirIndex) -> Error {
    let there: Vec<String> = suits.iter().map(|s| s.name.to_string()).collect();
    let has = if there.is_empty() {
        "no suits".to_owned()
    } else {
        format!("suits {}", there.join(", "))
    };
    Error::not_found(format!(
        "no suit named {suit}: the file has {has}, and none of {} is in {}",
        suit_file_names(suit).join(", "),
        index.shown()
    ))
}

fn no_mesh(mesh: &str, index: &DirIndex) -> Error {
    let names = mesh_file_names(mesh);
    let (first, last) = names.split_at(names.len().saturating_sub(1));
    Error::not_found(format!(
        "no {} or {} in {}",
        first.join(", "),
        last.join(""),
        index.shown()
    ))
}

/// A file found in directory `dir`, loaded inside it: a link out of it is refused.
fn load_inside(path: &Path, dir: &Path, options: &LoadOptions) -> Result<Model> {
    let inside = LoadOptions {
        base_dir: Some(dir.to_path_buf()),
        ..options.clone()
    };
    Model::load_file(path, &inside)
}

/// What [`dress_from_dirs`] gives: the character, and per mesh the file it was read from.
pub struct DressedFromDirs {
    pub model: Model,
    /// Per mesh of `model`, the file its mesh was read from (its textures are beside it).
    pub mesh_files: Vec<Option<PathBuf>>,
}

/// The character `loaded` (the file `input`: a Sims skeleton, a suit file, or both) wearing
/// `suit`: the suit `loaded`'s, else `SUIT.cmx`, `SUIT.cmx.bcf` or `SUIT.bcf` beside `input` or
/// in a `search` directory; each skin's mesh `MESH.skn`, `MESH.bmf` or `MESH.msh` found the same
/// way ([`DirIndex::for_input`]); on `skeleton`, else `loaded`'s own. `options` reads the suit
/// and mesh files (each inside the directory it was found in).
///
/// Errors: `NotFound` for a suit or mesh found nowhere (naming the names and directories
/// looked in); `Mismatch` when there is no skeleton to dress; and those of
/// [`assemble::dress_parts`](crate::assemble::dress_parts).
pub fn dress_from_dirs(
    input: &Path,
    loaded: &Model,
    suit: &str,
    skeleton: Option<&Model>,
    search: &[PathBuf],
    options: &LoadOptions,
) -> Result<DressedFromDirs> {
    let mut index = DirIndex::for_input(input, search);
    // The game keeps each suit in a file of its name; the skeleton holds none.
    let suit_file = if has_suit(loaded.suits(), suit) {
        None
    } else {
        let Some((path, dir)) = index.find(&suit_file_names(suit)) else {
            return Err(no_suit(loaded.suits(), suit, &index));
        };
        Some(load_inside(&path, &dir, options)?)
    };
    let skeleton = match skeleton {
        Some(s) => s,
        None if loaded.unbound().is_none() && !loaded.bones().is_empty() => loaded,
        None => return Err(no_skeleton()),
    };
    let suits = suit_file.as_ref().unwrap_or(loaded).suits();
    let character = crate::assemble::with_suits(skeleton, suits)?;
    // The file of each skin's mesh, in the order the skins are asked for.
    let mut found_files: Vec<PathBuf> = Vec::new();
    let dressed = crate::assemble::dress_parts(&character, suit, &mut |mesh: &str| match index
        .find(&mesh_file_names(mesh))
    {
        Some((path, dir)) => {
            found_files.push(path.clone());
            load_inside(&path, &dir, options)
        }
        None => Err(no_mesh(mesh, &index)),
    })?;
    let mesh_files = (dressed.mesh_skins.iter())
        .map(|&k| found_files.get(k).cloned())
        .collect();
    Ok(DressedFromDirs {
        model: dressed.model,
        mesh_files,
    })
}

fn no_skeleton() -> Error {
    Error::mismatch(
        "the file holds no skeleton to dress: give --skeleton FILE (adult-skeleton.cmx)",
    )
}

/// What [`check_character`] checks besides its input.
#[derive(Clone, Debug, Default)]
pub struct CharacterCheck {
    /// The skeleton's file; default: the input's skeleton.
    pub skeleton: Option<PathBuf>,
    /// The suit to dress the skeleton in (see [`dress_from_dirs`]).
    pub suit: Option<String>,
    /// Character files whose skills play on the skeleton, each with its numbers beside it.
    pub skills: Vec<PathBuf>,
    /// More directories for suit and mesh files, after the input's own.
    pub search: Vec<PathBuf>,
}

/// The problems found in one file.
#[derive(Debug)]
pub struct FileProblems {
    /// The file as it was named or found.
    pub file: PathBuf,
    /// Each problem, its message naming the structure (suit, skin, skill) and, for one found
    /// by reading the file, the file and the byte or line.
    pub problems: Vec<Error>,
    /// Problems of the file's own format found beyond those recorded.
    pub more_problems: usize,
    /// What the default mode tolerates.
    pub warnings: Vec<String>,
}

/// Everything wrong with a character, file by file in the order they were checked: the input,
/// the skeleton, the suit's file, its meshes, their textures, the skill files and their numbers.
#[derive(Debug, Default)]
pub struct CharacterReport {
    pub files: Vec<FileProblems>,
}

impl CharacterReport {
    /// All problems, recorded or not.
    pub fn problem_count(&self) -> usize {
        (self.files.iter())
            .map(|f| f.problems.len().saturating_add(f.more_problems))
            .fold(0usize, usize::saturating_add)
    }

    /// The entry of `file`, added at the end the first time.
    // `k` is a position just found or the entry just pushed.
    #[allow(clippy::indexing_slicing)]
    fn at(&mut self, file: &Path) -> &mut FileProblems {
        let k = match self.files.iter().position(|f| f.file == file) {
            Some(k) => k,
            None => {
                self.files.push(FileProblems {
                    file: file.to_path_buf(),
                    problems: Vec::new(),
                    more_problems: 0,
                    warnings: Vec::new(),
                });
                self.files.len().saturating_sub(1)
            }
        };
        &mut self.files[k]
    }

    fn problem(&mut self, file: &Path, e: Error) {
        self.at(file).problems.push(e);
    }

    /// `file` validated on its own ([`validate_file`](crate::validate_file)): its problems and
    /// warnings recorded, and its model when it loads.
    fn validate(&mut self, file: &Path, options: &LoadOptions) -> Option<Model> {
        let entry = self.at(file);
        match crate::validate_file(file, options) {
            Ok(report) => {
                entry.problems.extend(report.problems);
                entry.more_problems = entry.more_problems.saturating_add(report.more_problems);
                entry.warnings.extend(report.warnings);
                report.model
            }
            Err(e) => {
                entry.problems.push(e);
                None
            }
        }
    }
}

/// Every problem of the Sims character `input` (a skeleton, a suit file, or both) with what
/// `check` names, as `ossa validate --skeleton --suit --skills --search` lists them: each file's
/// own ([`validate_file`](crate::validate_file)); a suit found nowhere; a suit for the adult
/// skeleton on the child one or the other way round (by the game's names: `b001mafit_01` is for
/// an adult, `c004mc_nerd` for a child); a skin's mesh found nowhere (naming where it was
/// looked for); a mesh bound to bones the skeleton lacks, or blending vertices to such bones; a
/// texture not found, not read by the game or of a size or depth the game does not draw; a
/// skill moving bones the skeleton lacks, or whose numbers (CFP, `.bin`) are missing or fewer
/// than its motions read; and a character file whose other form beside it (`X.cmx` and
/// `X.cmx.bcf` or `X.bcf`) holds something else.
///
/// `options`: the input's (`strict`, `format`, `max_bytes`); the other files are read with its
/// strictness and limit, their formats detected. Files are read from the OS filesystem, each
/// inside its own directory: `options.io` is an invalid argument (the only error). Everything
/// else is a problem in the report, a file that cannot be read or a suit or skills without a
/// skeleton (`Mismatch`) too.
pub fn check_character(
    input: &Path,
    check: &CharacterCheck,
    options: &LoadOptions,
) -> Result<CharacterReport> {
    if options.io.is_some() {
        return Err(Error::invalid_argument(
            "a character is checked on the OS filesystem: the load options' io is not used",
        ));
    }
    let side = LoadOptions {
        strict: options.strict,
        max_bytes: options.max_bytes,
        ..LoadOptions::default()
    };
    let mut report = CharacterReport::default();
    let loaded = report.validate(input, options);
    check_other_form(&mut report, input, options);
    let given = check.skeleton.as_ref().and_then(|file| {
        let model = report.validate(file, &side);
        check_other_form(&mut report, file, &side);
        model
    });
    let skeleton = match &check.skeleton {
        Some(_) => given.as_ref(),
        None => loaded.as_ref(),
    }
    .filter(|m| m.unbound().is_none() && !m.bones().is_empty());
    if let Some(suit) = &check.suit {
        let mut index = DirIndex::for_input(input, &check.search);
        check_suit(
            &mut report,
            (input, loaded.as_ref()),
            suit,
            skeleton,
            &mut index,
            &side,
        );
    }
    for file in &check.skills {
        let Some(skeleton) = skeleton else {
            report.problem(
                file,
                Error::mismatch(
                    "no skeleton to play the skills on: give --skeleton FILE (adult-skeleton.cmx)",
                ),
            );
            continue;
        };
        report.validate(file, &side);
        check_other_form(&mut report, file, &side);
        check_skills(&mut report, file, skeleton, &side);
    }
    Ok(report)
}

/// The suit `suit` of `input` (or of a file found in `index`) on `skeleton`: its file, the
/// skeleton it is for, each skin's mesh and the mesh's texture.
fn check_suit(
    report: &mut CharacterReport,
    (input, loaded): (&Path, Option<&Model>),
    suit: &str,
    skeleton: Option<&Model>,
    index: &mut DirIndex,
    options: &LoadOptions,
) {
    let loaded_suits: &[Suit] = loaded.map_or(&[], |m| m.suits());
    let (suit_path, suits): (PathBuf, Vec<Suit>) = if has_suit(loaded_suits, suit) {
        (input.to_path_buf(), loaded_suits.to_vec())
    } else {
        match index.find(&suit_file_names(suit)) {
            None => {
                report.problem(input, no_suit(loaded_suits, suit, index));
                return;
            }
            Some((path, _)) => {
                let model = report.validate(&path, options);
                check_other_form(report, &path, options);
                match model {
                    Some(m) => (path, m.suits().to_vec()),
                    // Its problems are the file's.
                    None => return,
                }
            }
        }
    };
    let Some(outfit) = suits
        .iter()
        .find(|s| s.name.as_bytes().eq_ignore_ascii_case(suit.as_bytes()))
    else {
        report.problem(&suit_path, no_suit(loaded_suits, suit, index));
        return;
    };
    let Some(skeleton) = skeleton else {
        report.problem(input, no_skeleton());
        return;
    };
    if let Some(e) = age_mismatch(outfit, skeleton) {
        report.problem(&suit_path, e);
    }
    let bones = skeleton.bones();
    let bone_name = |i: usize| bones.get(i).map_or(&[][..], |b| b.name.as_bytes());
    let bone_index = NameIndex::build_ignoring_case(bones.len(), bone_name);
    let lacks = |name: &crate::model::Name| bone_index.find(name.as_bytes(), bone_name).is_none();
    for (k, skin) in outfit.skins.iter().enumerate() {
        let mesh_name = skin.mesh.to_string();
        let place = format!(
            "suit {} skin {k} (mesh {mesh_name} on bone {})",
            outfit.name, skin.bone
        );
        if lacks(&skin.bone) {
            report.problem(
                &suit_path,
                Error::mismatch(format!(
                    "{place}: the skeleton has no bone named {:?}",
                    skin.bone.to_string()
                )),
            );
        }
        let Some((path, dir)) = index.find(&mesh_file_names(&mesh_name)) else {
            report.problem(&suit_path, no_mesh(&mesh_name, index).within(&place));
            continue;
        };
        let inside = LoadOptions {
            base_dir: Some(dir.clone()),
            ..options.clone()
        };
        let Some(mesh) = report.validate(&path, &inside) else {
            continue;
        };
        let mesh = match crate::assemble::on_skin_bone(mesh, &skin.bone) {
            Ok(m) => m,
            Err(e) => {
                report.problem(&path, e.within(&place));
                continue;
            }
        };
        for e in missing_mesh_bones(&mesh, &lacks) {
            report.problem(&path, e.within(&place));
        }
        // A retail suit's first skin is drawn with the texture the Sim's appearance chooses:
        // its mesh's own need not be there, but is checked when it is.
        let retail = mesh.format() != Format::SimsMsh;
        for e in texture_problems(&mesh, &path, retail) {
            if !(retail && k == 0 && e.code() == ErrorCode::NotFound) {
                report.problem(&path, e.within(&place));
            }
        }
    }
}

/// The age a suit is for by the game's names (`b001mafit_01`, `c004mc_nerd`, a skin's mesh
/// `xskin-b001mafit_01-PELVIS-BODY`): the letter after the type, the three-character mesh
/// number and the gender.
fn suit_age(name: &[u8]) -> Option<u8> {
    let name = name.to_ascii_lowercase();
    let name = name.strip_prefix(b"xskin-").unwrap_or(&name);
    match name {
        [kind, _, _, _, gender, age, ..]
            if b"bcflsw".contains(kind)
                && b"fmu".contains(gender)
                && (*age == b'a' || *age == b'c') =>
        {
            Some(*age)
        }
        _ => None,
    }
}

/// The suit is for the adult skeleton and the skeleton is the child's, or the other way round.
fn age_mismatch(outfit: &Suit, skeleton: &Model) -> Option<Error> {
    let skeleton_name = skeleton.kept().cmx_skeleton.as_ref()?.name().to_string();
    let skeleton_age = match skeleton_name.to_ascii_lowercase().as_str() {
        "adult" => b'a',
        "child" => b'c',
        _ => return None,
    };
    let (age, named) = match suit_age(outfit.name.as_bytes()) {
        Some(age) => (age, format!("its name {}", outfit.name)),
        None => {
            let mesh = &outfit.skins.first()?.mesh;
            (suit_age(mesh.as_bytes())?, format!("its mesh {mesh}"))
        }
    };
    let word = |a: u8| if a == b'a' { "adult" } else { "child" };
    (age != skeleton_age).then(|| {
        Error::mismatch(format!(
            "suit {} is for the {} skeleton ({named} says {}), not the {} skeleton {skeleton_name}",
            outfit.name,
            word(age),
            char::from(age),
            word(skeleton_age)
        ))
    })
}

/// The bones a mesh waiting for a skeleton names that the skeleton lacks: those its vertices
/// hang on (or that none uses), and those its blended vertices are pulled to (a binding's
/// blends, FORMATS §4.1), each list once.
fn missing_mesh_bones(mesh: &Model, lacks: &dyn Fn(&crate::model::Name) -> bool) -> Vec<Error> {
    let Some(BoneSlots::ByName(names)) = mesh.unbound() else {
        return Vec::new();
    };
    let mut real = vec![false; names.len()];
    let mut blend = vec![false; names.len()];
    for m in mesh.meshes() {
        for v in 0..m.vertex_count() {
            for (i, influence) in m.influences(v).iter().enumerate() {
                let used = if i == 0 { &mut real } else { &mut blend };
                if let Some(u) = used.get_mut(influence.bone as usize) {
                    *u = true;
                }
            }
        }
    }
    let missing = |used: &[bool]| -> Vec<String> {
        (names.iter().zip(used))
            .filter(|(name, used)| **used && !name.is_empty() && lacks(name))
            .map(|(name, _)| format!("{:?}", name.to_string()))
            .collect()
    };
    // A name no vertex uses is bound too: binding refuses it as it does a used one.
    let unused: Vec<bool> = real.iter().zip(&blend).map(|(r, b)| !r && !b).collect();
    let mut bound = missing(&real);
    bound.extend(missing(&unused));
    let blended = missing(&blend);
    let mut problems = Vec::new();
    if !bound.is_empty() {
        problems.push(Error::mismatch(format!(
            "the mesh is bound to {} the skeleton lacks: {}",
            if bound.len() == 1 { "a bone" } else { "bones" },
            bound.join(", ")
        )));
    }
    if !blended.is_empty() {
        problems.push(Error::mismatch(format!(
            "the mesh blends vertices to {} the skeleton lacks: {}",
            if blended.len() == 1 {
                "a bone"
            } else {
                "bones"
            },
            blended.join(", ")
        )));
    }
    problems
}

/// An image's kind, size and bits a pixel, from its first bytes.
#[derive(Debug, PartialEq)]
struct ImageHeader {
    kind: &'static str,
    width: u32,
    height: u32,
    bits: u32,
}

fn u16_le(b: &[u8], at: usize) -> Option<u32> {
    let bytes = b.get(at..at.checked_add(2)?)?;
    Some(u32::from(u16::from_le_bytes([
        *bytes.first()?,
        *bytes.get(1)?,
    ])))
}

fn u32_at(b: &[u8], at: usize, big: bool) -> Option<u32> {
    let bytes: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if big {
        u32::from_be_bytes(bytes)
    } else {
        u32::from_le_bytes(bytes)
    })
}

/// The header of a BMP, PNG or (by its extension) TGA file; None for anything else.
fn image_header(head: &[u8], extension: &str) -> Option<ImageHeader> {
    if head.starts_with(b"BM") {
        // BITMAPINFOHEADER: width and height (i32, height negative when top-down), bit count.
        let width = u32_at(head, 18, false)? as i32;
        let height = u32_at(head, 22, false)? as i32;
        return Some(ImageHeader {
            kind: "BMP",
            width: width.unsigned_abs(),
            height: height.unsigned_abs(),
            bits: u16_le(head, 28)?,
        });
    }
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        // IHDR: width, height (big-endian), bit depth a sample.
        return Some(ImageHeader {
            kind: "PNG",
            width: u32_at(head, 16, true)?,
            height: u32_at(head, 20, true)?,
            bits: u32::from(*head.get(24)?),
        });
    }
    if extension.eq_ignore_ascii_case("tga") {
        return Some(ImageHeader {
            kind: "TGA",
            width: u16_le(head, 12)?,
            height: u16_le(head, 14)?,
            bits: u32::from(*head.get(16)?),
        });
    }
    None
}

/// The first bytes of a file (at most 64).
fn file_head(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(64);
    std::fs::File::open(path)?.take(64).read_to_end(&mut head)?;
    Ok(head)
}

/// What is wrong with the texture of `mesh` (read from `path`): not found beside the mesh or
/// in `Textures/` there (names as the texture finder tries them, case ignored), found only in
/// a format the game does not read (`retail`: PNG, JPEG), of sides that are not powers of two,
/// or (`retail`) a BMP of other than 8 bits a pixel.
fn texture_problems(mesh: &Model, path: &Path, retail: bool) -> Vec<Error> {
    let mut problems = Vec::new();
    let dir = dir_of(path);
    let mut names: Vec<String> = mesh
        .meshes()
        .iter()
        .map(|m| m.shader().to_string())
        .filter(|n| !n.is_empty())
        .collect();
    names.dedup();
    let mut index = DirIndex::new(vec![dir.clone(), dir.join("Textures")]);
    for texture in names {
        let stem = texture
            .rsplit_once('.')
            .filter(|(_, e)| {
                ["bmp", "png", "tga", "jpg", "jpeg"].contains(&e.to_ascii_lowercase().as_str())
            })
            .map_or(texture.as_str(), |(s, _)| s);
        let read = ["bmp", "tga"];
        let other = ["png", "jpg"];
        let names_of =
            |exts: &[&str]| -> Vec<String> { exts.iter().map(|e| format!("{stem}.{e}")).collect() };
        let found = if retail {
            index
                .find(&names_of(&read))
                .map(|f| (f, true))
                .or_else(|| index.find(&names_of(&other)).map(|f| (f, false)))
        } else {
            let all = ["bmp", "png", "tga", "jpg"];
            index.find(&names_of(&all)).map(|f| (f, true))
        };
        let Some(((file, _), readable)) = found else {
            let all: Vec<String> = names_of(&["bmp", "png", "tga", "jpg"]);
            problems.push(Error::not_found(format!(
                "texture {texture} is not found: none of {} is in {} or {}",
                all.join(", "),
                dir.display(),
                dir.join("Textures").display()
            )));
            continue;
        };
        let shown = file.display().to_string();
        let extension = file
            .extension()
            .map_or(String::new(), |e| e.to_string_lossy().into_owned());
        if !readable {
            problems.push(Error::unsupported(format!(
                "texture {texture} is found only as {shown}, which the game does not read: it \
                 reads BMP (8 bits a pixel) and TGA"
            )));
            continue;
        }
        let header = match file_head(&file) {
            Ok(head) => image_header(&head, &extension),
            Err(e) => {
                problems.push(Error::io(
                    format!("texture {texture}: {shown}: {e}"),
                    Some(e),
                ));
                continue;
            }
        };
        let Some(header) = header else {
            if !extension.eq_ignore_ascii_case("jpg") {
                problems.push(Error::malformed(format!(
                    "texture {texture}: {shown} is not a {} image",
                    extension.to_ascii_uppercase()
                )));
            }
            continue;
        };
        if !header.width.is_power_of_two() || !header.height.is_power_of_two() {
            problems.push(Error::unsupported(format!(
                "texture {texture}: {shown} is {}x{} pixels: the game draws textures whose sides \
                 are powers of two (32, 64, 128, 256)",
                header.width, header.height
            )));
        }
        if retail && header.kind == "BMP" && header.bits != 8 {
            problems.push(Error::unsupported(format!(
                "texture {texture}: {shown} has {} bits a pixel: the game draws 8-bit (256-colour) \
                 BMPs, and shows others blank",
                header.bits
            )));
        }
    }
    problems
}

/// The other form of a character file beside it (`X.cmx` for `X.cmx.bcf` or `X.bcf`, and the
/// other way round): when there is one and it holds something else, a problem of `file`.
fn check_other_form(report: &mut CharacterReport, file: &Path, options: &LoadOptions) {
    let Some(name) = file.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let lower = name.to_ascii_lowercase();
    let others: Vec<String> = if let Some(stem) = lower.strip_suffix(".cmx.bcf") {
        vec![format!("{stem}.cmx")]
    } else if let Some(stem) = lower.strip_suffix(".bcf") {
        vec![format!("{stem}.cmx")]
    } else if lower.ends_with(".cmx") {
        let stem = lower.get(..lower.len().saturating_sub(4)).unwrap_or("");
        vec![format!("{lower}.bcf"), format!("{stem}.bcf")]
    } else {
        return;
    };
    let mut index = DirIndex::new(vec![dir_of(file)]);
    let Some((other, _)) = index.find(&others) else {
        return;
    };
    let read = |path: &Path| -> Option<CharacterFile> {
        let place = os_place(path, None).ok()?;
        let data = place.read_file(ceiling(options.max_bytes, u64::MAX)).ok()?;
        cmx::parse(&data).ok()
    };
    // A form that does not parse has that problem of its own.
    let (Some(this), Some(that)) = (read(file), read(&other)) else {
        return;
    };
    if let Some(difference) = character_difference(&this, &that) {
        let other_name = other
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        report.problem(
            file,
            Error::mismatch(format!(
                "its other form {other_name} beside it holds something else: {difference}"
            )),
        );
    }
}

/// Equal within what a CMX's printed decimals keep of a BCF's f32.
fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-4 * a.abs().max(b.abs()).max(1.0)
}

/// The first difference between two forms of one character file, in words (`this` is the
/// file's, `that` the other's).
fn character_difference(this: &CharacterFile, that: &CharacterFile) -> Option<String> {
    let differ = |what: String, a: String, b: String| Some(format!("{what}: {a} here, {b} there"));
    let count =
        |what: &str, a: usize, b: usize| (a != b).then(|| format!("{what}: {a} here, {b} there"));
    if let Some(d) = count("skeletons", this.skeletons.len(), that.skeletons.len()) {
        return Some(d);
    }
    for (s, (a, b)) in this.skeletons.iter().zip(&that.skeletons).enumerate() {
        if a.name != b.name {
            return differ(
                format!("skeleton {s} name"),
                a.name.to_string(),
                b.name.to_string(),
            );
        }
        if let Some(d) = count(
            &format!("skeleton {} bones", a.name),
            a.bones.len(),
            b.bones.len(),
        ) {
            return Some(d);
        }
        for (i, (x, y)) in a.bones.iter().zip(&b.bones).enumerate() {
            let what = format!("skeleton {} bone {i} ({})", a.name, x.name);
            if x.name != y.name || x.parent != y.parent {
                return differ(
                    format!("skeleton {} bone {i}", a.name),
                    format!(
                        "{} under {:?}",
                        x.name,
                        x.parent.as_ref().map(|p| p.to_string())
                    ),
                    format!(
                        "{} under {:?}",
                        y.name,
                        y.parent.as_ref().map(|p| p.to_string())
                    ),
                );
            }
            let same_t = x
                .translation
                .iter()
                .zip(&y.translation)
                .all(|(p, q)| close(*p, *q));
            let same_r = x
                .rotation
                .iter()
                .zip(&y.rotation)
                .all(|(p, q)| close(*p, *q));
            if !same_t {
                return differ(
                    format!("{what} translation"),
                    format!("{:?}", x.translation),
                    format!("{:?}", y.translation),
                );
            }
            if !same_r {
                return differ(
                    format!("{what} rotation"),
                    format!("{:?}", x.rotation),
                    format!("{:?}", y.rotation),
                );
            }
        }
    }
    if let Some(d) = count("suits", this.suits.len(), that.suits.len()) {
        return Some(d);
    }
    for (s, (a, b)) in this.suits.iter().zip(&that.suits).enumerate() {
        if a.name != b.name {
            return differ(
                format!("suit {s} name"),
                a.name.to_string(),
                b.name.to_string(),
            );
        }
        if let Some(d) = count(
            &format!("suit {} skins", a.name),
            a.skins.len(),
            b.skins.len(),
        ) {
            return Some(d);
        }
        for (k, (x, y)) in a.skins.iter().zip(&b.skins).enumerate() {
            if x.bone != y.bone || x.name != y.name {
                return differ(
                    format!("suit {} skin {k}", a.name),
                    format!("mesh {} on bone {}", x.name, x.bone),
                    format!("mesh {} on bone {}", y.name, y.bone),
                );
            }
        }
    }
    if let Some(d) = count("skills", this.skills.len(), that.skills.len()) {
        return Some(d);
    }
    for (s, (a, b)) in this.skills.iter().zip(&that.skills).enumerate() {
        let shape = |k: &cmx::Skill| {
            format!(
                "{} reading {} ({} translations, {} rotations, {} motions)",
                k.name,
                k.animation,
                k.translation_count,
                k.rotation_count,
                k.motions.len()
            )
        };
        if shape(a) != shape(b) {
            return differ(format!("skill {s}"), shape(a), shape(b));
        }
        for (m, (x, y)) in a.motions.iter().zip(&b.motions).enumerate() {
            let motion = |n: &cmx::Motion| {
                format!(
                    "bone {}, {} frames, translations at {}, rotations at {}",
                    n.bone, n.frame_count, n.translation_offset, n.rotation_offset
                )
            };
            if motion(x) != motion(y) {
                return differ(format!("skill {} motion {m}", a.name), motion(x), motion(y));
            }
        }
    }
    None
}

/// The skills of the character file `file` on `skeleton`: each moving bones the skeleton lacks,
/// and each whose numbers are fewer than its motions read (or whose motions do not fit them).
/// Numbers that are missing are the file's own problem already ([`validate_file`](crate::validate_file)).
fn check_skills(
    report: &mut CharacterReport,
    file: &Path,
    skeleton: &Model,
    options: &LoadOptions,
) {
    let Ok(place) = os_place(file, None) else {
        return;
    };
    let Ok(data) = place.read_file(ceiling(options.max_bytes, u64::MAX)) else {
        return;
    };
    let binary = !cmx::is_text(&data);
    let Ok((character, places)) = cmx::parse_with_places(&data, binary, options.strict) else {
        return;
    };
    let file_label: Arc<str> = label(&file.to_string_lossy());
    let sidecars = place.sidecars();
    let names = BoneNames::new(skeleton);
    let prototype = character.version == Some(200);
    let dir = dir_of(file);
    for (i, skill) in character.skills.iter().enumerate() {
        let missing: Vec<String> = (skill.motions.iter())
            .filter(|m| (m.has_translation || m.has_rotation) && m.frame_count > 0)
            .filter(|m| names.find(&m.bone).is_none())
            .map(|m| format!("{:?}", m.bone.to_string()))
            .collect();
        if !missing.is_empty() {
            let e = Error::mismatch(format!(
                "skill {} moves {} the skeleton lacks: {}",
                skill.name,
                if missing.len() == 1 {
                    "a bone"
                } else {
                    "bones"
                },
                missing.join(", ")
            ));
            report.problem(file, places.put(i, e).in_file(&file_label));
        }
        let Ok(paths) = sidecars.skill_numbers_paths(skill) else {
            continue;
        };
        let room = ceiling(options.max_bytes, u64::MAX);
        let Ok(SkillNumbers::Found(kind, numbers)) =
            sidecars.read_skill_numbers(&paths, prototype, room)
        else {
            continue;
        };
        let numbers_name = match kind {
            NumbersKind::Cfp => paths.cfp.clone(),
            NumbersKind::Bin => paths.bin.clone(),
        };
        // Beside a bare file name, by its own bare name, as the file is named.
        let numbers_path = if dir.as_os_str() == "." {
            PathBuf::from(&numbers_name)
        } else {
            dir.join(&numbers_name)
        };
        let bytes: &[u8] = (*numbers).as_ref();
        let max_bytes = options.max_bytes_for(bytes.len().saturating_add(skeleton.heap_bytes()));
        let sampled = skill.sample(&names, max_bytes, false, || match kind {
            NumbersKind::Cfp => cfp::decode_skill(
                bytes,
                skill.translation_count as usize,
                skill.rotation_count as usize,
            ),
            NumbersKind::Bin => {
                skill_bin::decode_skill(bytes, skill.translation_count, skill.rotation_count)
            }
        });
        match sampled {
            Ok(_) => {}
            // Said above, bone by bone.
            Err(e) if e.code() == ErrorCode::Mismatch && !missing.is_empty() => {}
            // The skill's own records do not fit its counts: the skill file's problem.
            Err(e)
                if e.detail()
                    .message
                    .starts_with(&format!("skill {} motion", skill.name)) =>
            {
                report.problem(file, places.put(i, e).in_file(&file_label));
            }
            Err(e) => {
                let e = e
                    .within(format!(
                        "skill {} ({} translations, {} rotations)",
                        skill.name, skill.translation_count, skill.rotation_count
                    ))
                    .in_file(&label(&numbers_name));
                report.problem(&numbers_path, e);
            }
        }
    }
}
