//! The Sims 1 character files: CMX text and its binary twin BCF (`.cmx.bcf`). One file holds any
//! number of skeletons, suits (which skins go on which bones) and skills (animations whose
//! numbers live in a CFP file, see [`cfp`](crate::format::cfp)).
//!
//! Layout (FORMATS §4.2; ts1-blender-io `cmx.py`/`bcf.py`; Don Hopkins' description of the
//! format), the same fields in the same order in both encodings:
//! ```text
//! skeleton count; per skeleton: name, bone count, bones
//!   bone: name, parent name ("NULL" for a root), property lists, translation (3 floats),
//!         rotation (quaternion x, y, z, w), can-translate, can-rotate, can-blend (flags),
//!         wiggle value, wiggle power (floats)
//! suit count; per suit: name, type, property lists, skin count, skins
//!   skin: bone name, skin (mesh) name, censor flags, property lists
//! skill count; per skill: name, animation (CFP) name, duration (ms), distance, moving flag,
//!   translation count, rotation count, motion count, motions
//!   motion: bone name, frame count, duration, has-translation, has-rotation,
//!           translation offset, rotation offset (-1 when unused), property lists,
//!           time property lists
//! property lists: count; per list: property count; per property: key, value
//! time property lists: count; per list: count; per entry: time (ms), properties
//! ```
//! Text: a `//` comment line, `version 300`, then one value per line and vectors as
//! `| x y z |`; a line starting with `//` is a comment wherever it is. Version 200 (the 1998
//! prototype's files) has shorter records: a bone has no property lists (a count standing where
//! the translation would is read anyway) and two flags (can-translate, can-rotate) after the
//! rotation, no can-blend and no wiggle values; a suit is its name and skin count (no type, no
//! property lists); a skin its bone and mesh (no censor flags, no property lists). What it lacks
//! reads as 0, false or empty. Skills and motions are as in version 300. BCF: no version line,
//! version 300's records; little-endian u32 counts and flags, i32 offsets, f32 numbers, and
//! counted strings.
//!
//! Where ts1-blender-io reads a suit's and a skin's last number as an unknown value, Don Hopkins
//! names it "has props" followed by the properties: it is read here as a count of property lists,
//! which gives the same result for every value real files hold (0 or 1).
//!
//! A skeleton becomes a model: bones in file order, parents found by name among the bones before
//! (a parent must come first), one frame "rest" with local poses `T(t) * R(q)^T` (FORMATS §4.3:
//! the rotation is the transpose of the textbook matrix of (x, y, z, w)), y up and left-handed.
//! A file's suits are the model's (each property numbered with its list), with or without a
//! skeleton; a file without one (a suit or skill file) loads as a model with no bones. A skill
//! plays on a skeleton ([`Model::with_skills`](crate::Model::with_skills)), which makes its
//! motions' time properties events of its scene. [`parse`] gives everything the file holds.
//!
//! Writing: [`write_character`] writes a [`CharacterFile`] as text in its version (300 or 200,
//! in the game's layout and number format; version 200 refuses what it has no place for, naming
//! the field) or as BCF; [`write_cmx`] and [`write_bcf`] write a model's skeleton (its bones and
//! frame 0) and suits as a one-skeleton file, see [`Skeleton::from_model`], in the version the
//! model was read from ([`Model::source_version`](crate::Model::source_version)), keeping the
//! skeleton's name and its bones' flags, wiggle values, property lists and stored numbers, which
//! the model carries for that ([`Kept::cmx_skeleton`](crate::model::Kept::cmx_skeleton)). Parsed
//! and written again, every retail file and all but one of the prototype's 288 keep their bytes
//! (that one has a tab after a value, which the reader trims); loaded as a model and saved, so
//! does every file of one skeleton and no skills whose suits and skins have no empty property
//! lists.

mod kept;
mod skill;
mod source;
mod write;

use glam::Quat;

use crate::error::{Error, ErrorCode, Result};
use crate::format::{Checker, Format, LoadOptions, total};
use crate::math::Mat3x4;
use crate::model::{self, Frame, ModelParts, Name};
use crate::name_index::NameIndex;

pub use kept::KeptSkeleton;
pub(crate) use skill::{BoneNames, SkillValues, skill_events};
pub use skill::{skill_frames, with_skill};
use source::{Binary, Mark, Record, Source, Text};
pub use write::{
    CharacterWithSkills, DEFAULT_SKELETON_NAME, SkillFiles, skills_from_model, write_bcf,
    write_character, write_cmx, write_with_skills,
};

/// The name a root bone gives as its parent.
const NO_PARENT: &[u8] = b"NULL";

/// Everything a character file holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CharacterFile {
    /// 300 or 200 for text; None for BCF, which has no version.
    pub version: Option<u32>,
    pub skeletons: Vec<Skeleton>,
    pub suits: Vec<Suit>,
    pub skills: Vec<Skill>,
    /// What the default mode tolerated.
    pub warnings: Vec<String>,
}

/// A key and a value; keys need not be unique.
#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    pub key: Name,
    pub value: Name,
}

pub type PropertyList = Vec<Property>;

/// Properties that take effect at a time (ms) of a motion, e.g. `footstep`.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeProperty {
    pub time: u32,
    pub properties: PropertyList,
}

pub type TimePropertyList = Vec<TimeProperty>;

#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    pub name: Name,
    pub bones: Vec<Bone>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Bone {
    pub name: Name,
    /// The parent's name; None for a root (`NULL` in the file).
    pub parent: Option<Name>,
    /// The parent's index in the skeleton (always an earlier bone), -1 for a root.
    pub parent_index: i32,
    pub translation: [f32; 3],
    /// Unit quaternion (x, y, z, w), normalised on load; it rotates as `R(q)^T`.
    pub rotation: [f32; 4],
    pub can_translate: bool,
    pub can_rotate: bool,
    /// Always false in version 200 files, which do not have the flag.
    pub can_blend: bool,
    pub wiggle_value: f32,
    pub wiggle_power: f32,
    pub property_lists: Vec<PropertyList>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Suit {
    pub name: Name,
    pub suit_type: u32,
    pub property_lists: Vec<PropertyList>,
    pub skins: Vec<Skin>,
}

/// A mesh (`.skn`/`.bmf` file name without extension) attached to a bone.
#[derive(Clone, Debug, PartialEq)]
pub struct Skin {
    pub bone: Name,
    pub name: Name,
    pub censor_flags: u32,
    pub property_lists: Vec<PropertyList>,
}

/// An animation: its numbers are in the CFP file named `animation`.
#[derive(Clone, Debug, PartialEq)]
pub struct Skill {
    pub name: Name,
    /// The CFP file's name without extension.
    pub animation: Name,
    /// Milliseconds.
    pub duration: f32,
    /// How far the character travels in one play (walks).
    pub distance: f32,
    pub moving: bool,
    /// Translations (3 values each) the CFP holds.
    pub translation_count: u32,
    /// Rotations (4 values each) the CFP holds.
    pub rotation_count: u32,
    pub motions: Vec<Motion>,
}

/// Memory a skeleton's bone takes in a model: the bone, its rest pose, bind pose and inverse,
/// its name's NUL and its share of the name index.
const BONE_BYTES: u64 = std::mem::size_of::<model::Bone>() as u64 + 3 * 48 + 1 + 16;

/// The one frame of a skeleton, the rest pose, with its share of the name index.
const REST_FRAME_BYTES: u64 = std::mem::size_of::<Frame>() as u64 + 16;

impl Skill {
    /// The number of values the skill's CFP decodes to.
    pub fn value_count(&self) -> u64 {
        // Two u32 counts: exact in u64.
        u64::from(self.translation_count)
            .saturating_mul(3)
            .saturating_add(u64::from(self.rotation_count).saturating_mul(4))
    }
}

/// One bone's part of a skill: frame `f` reads translation `translation_offset + f` and
/// rotation `rotation_offset + f` of the skill's CFP.
#[derive(Clone, Debug, PartialEq)]
pub struct Motion {
    pub bone: Name,
    pub frame_count: u32,
    /// Milliseconds.
    pub duration: f32,
    pub has_translation: bool,
    pub has_rotation: bool,
    /// -1 when unused.
    pub translation_offset: i32,
    /// -1 when unused.
    pub rotation_offset: i32,
    pub property_lists: Vec<PropertyList>,
    pub time_property_lists: Vec<TimePropertyList>,
}

/// Whether `data` is CMX text rather than BCF: text starts (after an optional UTF-8 mark and
/// blanks) with a `//` comment or the `version` line. A BCF starts with a little-endian skeleton
/// count, which would have to exceed 0x2f2f to look like `//`.
pub fn is_text(data: &[u8]) -> bool {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let start = data.trim_ascii_start();
    start.starts_with(b"//")
        || start
            .get(..7)
            .is_some_and(|w| w.eq_ignore_ascii_case(b"version"))
}

/// Whether `data` has the shape of CMX text, for telling the format by content: after an
/// optional UTF-8 mark, blank lines and `//` comments, the first line is `version 300` or
/// `version 200`. Stricter than [`is_text`], which only tells the two encodings apart: a file
/// that merely starts with `//`, or MM2's `.mod` text (`version: 1.10`), is not taken for one.
pub fn looks_like_text(data: &[u8]) -> bool {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    for piece in data.split(|&b| b == b'\n') {
        let line = piece.trim_ascii();
        if line.is_empty() || line.starts_with(b"//") {
            continue;
        }
        let mut words = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty());
        return match (words.next(), words.next(), words.next()) {
            (Some(keyword), Some(v), None) => {
                keyword.eq_ignore_ascii_case(b"version") && (v == b"300" || v == b"200")
            }
            _ => false,
        };
    }
    false
}

/// Whether `data` reads as a BCF from its first byte to its last (strictly: nothing after the
/// last skill, every number finite, every parent found) and holds at least one skeleton, suit or
/// skill. A BCF has no magic number, so only a whole reading is a safe sign; the reading is
/// linear in the data and allocates no more than it (every count is checked against the bytes
/// left), and random or foreign data fails at its first counts.
pub fn looks_like_bcf(data: &[u8]) -> bool {
    let options = LoadOptions {
        strict: true,
        ..LoadOptions::default()
    };
    let mut ck = Checker::new(&options, false, data.len());
    match read_binary(data, &mut ck) {
        Ok((f, _)) => !(f.skeletons.is_empty() && f.suits.is_empty() && f.skills.is_empty()),
        Err(_) => false,
    }
}

/// Parses a character file, text or binary (see [`is_text`]), in the default mode: what real
/// files do that is off the rules becomes a warning in [`CharacterFile::warnings`].
pub fn parse(data: &[u8]) -> Result<CharacterFile> {
    parse_with_places(data, !is_text(data), false).map(|(file, _)| file)
}

/// Parses CMX text.
pub fn parse_text(data: &[u8]) -> Result<CharacterFile> {
    parse_with_places(data, false, false).map(|(file, _)| file)
}

/// Parses a BCF.
pub fn parse_bcf(data: &[u8]) -> Result<CharacterFile> {
    parse_with_places(data, true, false).map(|(file, _)| file)
}

/// Where each skill of a parsed file starts (its name's line or byte), so that a problem found
/// when the skill is played says where the skill is.
pub(crate) struct SkillPlaces(Vec<Mark>);

impl SkillPlaces {
    /// Places a problem of skill `skill`'s own content (malformed, or too large) that does not
    /// say where it lies; one that does (its CFP's, which names that file) is left as it is, and
    /// so are a missing CFP and a skeleton the skill does not fit, which name what they are about.
    pub fn put(&self, skill: usize, e: Error) -> Error {
        let d = e.detail();
        let placed = d.file.is_some() || d.line.is_some() || d.offset.is_some();
        let content = matches!(e.code(), ErrorCode::Malformed | ErrorCode::Limit);
        match self.0.get(skill) {
            Some(mark) if content && !placed => mark.put(e),
            _ => e,
        }
    }
}

/// [`parse_text`] (or, with `binary`, [`parse_bcf`]) and where its skills are; `strict` refuses
/// what the default mode tolerates, where it is.
pub(crate) fn parse_with_places(
    data: &[u8],
    binary: bool,
    strict: bool,
) -> Result<(CharacterFile, SkillPlaces)> {
    let options = LoadOptions {
        strict,
        ..LoadOptions::default()
    };
    let mut ck = Checker::new(&options, false, data.len());
    let (mut file, places) = if binary {
        read_binary(data, &mut ck)?
    } else {
        read_text(data, &mut ck)?
    };
    file.warnings = ck.warnings;
    Ok((file, places))
}

fn read_text(data: &[u8], ck: &mut Checker) -> Result<(CharacterFile, SkillPlaces)> {
    let mut s = Text::new(data)?;
    let version = s.version();
    let (mut file, places) = walk(&mut s, ck, version)?;
    file.version = Some(version);
    Ok((file, places))
}

fn read_binary(data: &[u8], ck: &mut Checker) -> Result<(CharacterFile, SkillPlaces)> {
    let mut s = Binary::new(data)?;
    walk(&mut s, ck, 300)
}

/// The model of a CMX's skeleton: `skeleton` names it, or the first is taken.
pub(crate) fn read_cmx(
    data: &[u8],
    ck: &mut Checker,
    skeleton: Option<&str>,
) -> Result<ModelParts> {
    let (file, _) = read_text(data, ck)?;
    model_parts(file, Format::SimsCmx, skeleton, ck)
}

/// The model of a BCF's skeleton, as [`read_cmx`].
pub(crate) fn read_bcf(
    data: &[u8],
    ck: &mut Checker,
    skeleton: Option<&str>,
) -> Result<ModelParts> {
    let (file, _) = read_binary(data, ck)?;
    model_parts(file, Format::SimsBcf, skeleton, ck)
}

/// The local pose of a Sims bone: `T(t) * R(q)^T`, and `R(q)^T = R(conj q)` for a unit `q`.
pub fn local_pose(translation: [f32; 3], rotation: [f32; 4]) -> Mat3x4 {
    let [x, y, z, w] = rotation;
    Mat3x4::from_rotation_translation(Quat::from_xyzw(x, y, z, w).conjugate(), translation)
}

impl CharacterFile {
    /// The skeleton named `name` (exactly, else ignoring ASCII case), or the first for None.
    pub fn find_skeleton(&self, name: Option<&str>) -> Result<Option<&Skeleton>> {
        let Some(name) = name else {
            return Ok(self.skeletons.first());
        };
        let exact = self
            .skeletons
            .iter()
            .find(|s| s.name.as_bytes() == name.as_bytes());
        let found = exact.or_else(|| {
            self.skeletons
                .iter()
                .find(|s| s.name.as_bytes().eq_ignore_ascii_case(name.as_bytes()))
        });
        match found {
            Some(s) => Ok(Some(s)),
            None => {
                let names: Vec<String> =
                    self.skeletons.iter().map(|s| s.name.to_string()).collect();
                Err(Error::not_found(format!(
                    "the file has no skeleton named {name:?} (it has {})",
                    if names.is_empty() {
                        "none".to_owned()
                    } else {
                        names.join(", ")
                    }
                )))
            }
        }
    }
}

fn model_parts(
    mut file: CharacterFile,
    format: Format,
    skeleton: Option<&str>,
    ck: &mut Checker,
) -> Result<ModelParts> {
    let mut parts = ModelParts::new(format);
    parts.source_version = file.version;
    parts.up_axis = 1;
    parts.handedness = -1;
    parts.suits = model_suits(&file.suits, ck)?;
    let Some(sk) = file.find_skeleton(skeleton)? else {
        // A suit or skill file: nothing to pose. Its suits are the model's; its skills play on
        // a skeleton (`Model::with_skills`), and `parse` gives everything it holds.
        return Ok(parts);
    };
    // Per bone its share (BONE_BYTES) and its name; the one frame, the rest pose; and the
    // skeleton's record, kept for saving (each bone again, with its names and properties).
    let names = total(sk.bones.iter().map(|b| b.name.as_bytes().len() as u64));
    ck.reserve_parts(
        &[
            (sk.bones.len() as u64, BONE_BYTES),
            (1, names),
            (1, REST_FRAME_BYTES),
            (1, KeptSkeleton::bytes_for(sk)),
        ],
        "the skeleton",
    )?;
    parts.bones = sk
        .bones
        .iter()
        .map(|b| model::Bone {
            name: b.name.clone(),
            parent: b.parent_index,
            flags: 0,
        })
        .collect();
    parts.poses = sk
        .bones
        .iter()
        .map(|b| local_pose(b.translation, b.rotation))
        .collect();
    if !parts.bones.is_empty() {
        parts.frames.push(Frame::named("rest"));
    }
    // The skeleton's record goes to the model as it was read, not copied.
    let at = (file.skeletons.iter()).position(|s| std::ptr::eq(s, sk));
    if let Some(at) = at {
        let record = KeptSkeleton::new(file.skeletons.swap_remove(at));
        parts.kept.cmx_skeleton = Some(std::sync::Arc::new(record));
    }
    Ok(parts)
}

/// Memory one property, suit or skin takes in a model, beside its names' bytes.
const PROPERTY_BYTES: u64 = std::mem::size_of::<model::Property>() as u64 + 2;
const SUIT_BYTES: u64 = std::mem::size_of::<model::Suit>() as u64 + 1;
const SKIN_BYTES: u64 = std::mem::size_of::<model::SuitSkin>() as u64 + 2;

/// A file's suits as the model keeps them: each property with the number of its list.
fn model_suits(suits: &[Suit], ck: &Checker) -> Result<Vec<model::Suit>> {
    let len = |n: &Name| n.as_bytes().len() as u64;
    let props = |lists: &[PropertyList]| {
        let p = lists.iter().flatten();
        let names = total(p.clone().map(|p| len(&p.key).saturating_add(len(&p.value))));
        (p.count() as u64)
            .saturating_mul(PROPERTY_BYTES)
            .saturating_add(names)
    };
    let mut need = 0u64;
    for suit in suits {
        need = total(
            [
                need,
                SUIT_BYTES,
                len(&suit.name),
                props(&suit.property_lists),
            ]
            .into_iter(),
        );
        for k in &suit.skins {
            let names = len(&k.bone).saturating_add(len(&k.name));
            need = total([need, SKIN_BYTES, names, props(&k.property_lists)].into_iter());
        }
    }
    ck.reserve(need, "the suits")?;
    let properties = |l: &[PropertyList]| -> Vec<model::Property> {
        (l.iter().enumerate())
            .flat_map(|(i, list)| {
                list.iter().map(move |p| model::Property {
                    list: u32::try_from(i).unwrap_or(u32::MAX),
                    key: p.key.clone(),
                    value: p.value.clone(),
                })
            })
            .collect()
    };
    Ok(suits
        .iter()
        .map(|suit| model::Suit {
            name: suit.name.clone(),
            kind: suit.suit_type,
            properties: properties(&suit.property_lists),
            skins: (suit.skins.iter())
                .map(|k| model::SuitSkin {
                    bone: k.bone.clone(),
                    mesh: k.name.clone(),
                    censor_flags: k.censor_flags,
                    properties: properties(&k.property_lists),
                })
                .collect(),
        })
        .collect())
}

/// Reads a float and reports NaN or infinity (0 stands in when validating).
fn finite<S: Source>(s: &mut S, ck: &mut Checker, what: &dyn Fn() -> String) -> Result<f32> {
    let mark = s.mark();
    let v = s.f32(what)?;
    if v.is_finite() {
        return Ok(v);
    }
    ck.problem(mark.put(Error::malformed(format!(
        "{}: {v} is not a finite number",
        what()
    ))))?;
    Ok(0.0)
}

fn finite_floats<S: Source, const N: usize>(
    s: &mut S,
    ck: &mut Checker,
    what: &dyn Fn() -> String,
) -> Result<[f32; N]> {
    let mark = s.mark();
    let mut v = s.floats::<N>(what)?;
    if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
        ck.problem(mark.put(Error::malformed(format!(
            "{}: {bad} is not a finite number",
            what()
        ))))?;
        v = [0.0; N];
    }
    Ok(v)
}

fn flag<S: Source>(s: &mut S, what: &dyn Fn() -> String) -> Result<bool> {
    Ok(s.u32(what)? != 0)
}

fn walk<S: Source>(
    s: &mut S,
    ck: &mut Checker,
    version: u32,
) -> Result<(CharacterFile, SkillPlaces)> {
    let mut file = CharacterFile::default();
    let n = s.count(Record::Skeleton, &|| "skeleton count".to_owned())?;
    file.skeletons.reserve(n);
    for i in 0..n {
        file.skeletons.push(read_skeleton(s, ck, version, i)?);
    }
    let n = s.count(Record::Suit, &|| "suit count".to_owned())?;
    file.suits.reserve(n);
    for i in 0..n {
        file.suits.push(read_suit(s, version, i)?);
    }
    let n = s.count(Record::Skill, &|| "skill count".to_owned())?;
    file.skills.reserve(n);
    let mut places = Vec::with_capacity(n);
    for i in 0..n {
        places.push(s.mark());
        file.skills.push(read_skill(s, ck, i)?);
    }
    s.finish(ck)?;
    Ok((file, SkillPlaces(places)))
}

fn read_properties<S: Source>(s: &mut S, what: &dyn Fn() -> String) -> Result<PropertyList> {
    let n = s.count(Record::Property, &|| format!("{}: property count", what()))?;
    let mut list = Vec::with_capacity(n);
    for p in 0..n {
        let key = s.string(&|| format!("{} property {p} key", what()))?;
        let value = s.string(&|| format!("{} property {p} value", what()))?;
        list.push(Property { key, value });
    }
    Ok(list)
}

fn read_property_lists<S: Source>(
    s: &mut S,
    what: &dyn Fn() -> String,
) -> Result<Vec<PropertyList>> {
    let n = s.count(Record::PropertyList, &|| {
        format!("{}: property list count", what())
    })?;
    let mut lists = Vec::with_capacity(n);
    for l in 0..n {
        lists.push(read_properties(s, &|| {
            format!("{} property list {l}", what())
        })?);
    }
    Ok(lists)
}

fn read_time_property_lists<S: Source>(
    s: &mut S,
    what: &dyn Fn() -> String,
) -> Result<Vec<TimePropertyList>> {
    let n = s.count(Record::TimePropertyList, &|| {
        format!("{}: time property list count", what())
    })?;
    let mut lists = Vec::with_capacity(n);
    for l in 0..n {
        let at = |e: usize| format!("{} time property list {l} entry {e}", what());
        let m = s.count(Record::TimeProperty, &|| {
            format!("{} time property list {l}: entry count", what())
        })?;
        let mut list = Vec::with_capacity(m);
        for e in 0..m {
            let time = s.u32(&|| format!("{}: time", at(e)))?;
            let properties = read_properties(s, &|| at(e))?;
            list.push(TimeProperty { time, properties });
        }
        lists.push(list);
    }
    Ok(lists)
}

fn read_skeleton<S: Source>(
    s: &mut S,
    ck: &mut Checker,
    version: u32,
    i: usize,
) -> Result<Skeleton> {
    let name = s.string(&|| format!("skeleton {i} name"))?;
    let sk = |name: &Name| format!("skeleton {i} ({name})");
    let n = s.count(Record::Bone, &|| format!("{}: bone count", sk(&name)))?;
    let mut bones: Vec<Bone> = Vec::with_capacity(n);
    let mut marks = Vec::with_capacity(n);
    for b in 0..n {
        let (bone, m) = read_bone(s, ck, version, &|| format!("{} bone {b}", sk(&name)))?;
        bones.push(bone);
        marks.push(m);
    }
    // Parents by name among the bones before; names must be unique for that to mean anything.
    // Hashed, as a skeleton may hold 65,535 bones: a scan of the bones before each is quadratic.
    let parents = {
        let name_of = |i: usize| bones.get(i).map_or(&[][..], |o| o.name.as_bytes());
        let exact = NameIndex::build(bones.len(), name_of);
        let folded = NameIndex::build_ignoring_case(bones.len(), name_of);
        let find = |index: &NameIndex, name: &Name| {
            index.find(name.as_bytes(), name_of).map(|j| j as usize)
        };
        // Each bone's first bone of the same name, and whether a later one repeats the name.
        let first: Vec<usize> = (bones.iter().enumerate())
            .map(|(b, bone)| find(&exact, &bone.name).map_or(b, |f| f.min(b)))
            .collect();
        let mut repeated = vec![false; bones.len()];
        for (b, &f) in first.iter().enumerate() {
            if let Some(r) = repeated.get_mut(f).filter(|_| f < b) {
                *r = true;
            }
        }
        let mut parents = Vec::with_capacity(bones.len());
        for (b, bone) in bones.iter().enumerate() {
            let (name_mark, mark) = marks
                .get(b)
                .copied()
                .unwrap_or((Mark::Line(0), Mark::Line(0)));
            if let Some(&dup) = first.get(b).filter(|&&f| f < b) {
                ck.problem(name_mark.put(Error::malformed(format!(
                    "{} bone {b}: name `{}` is bone {dup}'s too",
                    sk(&name),
                    bone.name
                ))))?;
            }
            let Some(parent) = &bone.parent else {
                parents.push(-1);
                continue;
            };
            // The first bone of that name before this one: exactly, else ignoring ASCII case.
            let by_name = find(&exact, parent);
            let index =
                (by_name.filter(|&p| p < b)).or_else(|| find(&folded, parent).filter(|&p| p < b));
            parents.push(match index {
                Some(p) => p as i32,
                None => {
                    // A bone after this one has the name exactly (this one's own name counts
                    // when a later bone repeats it).
                    let later = by_name.is_some_and(|p| {
                        p > b || (p == b && repeated.get(b).copied().unwrap_or(false))
                    });
                    ck.problem(mark.put(Error::malformed(format!(
                        "{} bone {b} ({}): parent `{parent}` {}",
                        sk(&name),
                        bone.name,
                        if later {
                            "comes after the bone (a parent must come first)"
                        } else {
                            "is not a bone of the skeleton"
                        }
                    ))))?;
                    -1
                }
            });
        }
        parents
    };
    for (bone, parent) in bones.iter_mut().zip(parents) {
        bone.parent_index = parent;
    }
    Ok(Skeleton { name, bones })
}

/// A bone, and where its name and its parent's name sit (for the errors found once all bones
/// are read).
fn read_bone<S: Source>(
    s: &mut S,
    ck: &mut Checker,
    version: u32,
    what: &dyn Fn() -> String,
) -> Result<(Bone, (Mark, Mark))> {
    let name_mark = s.mark();
    let name = s.string(&|| format!("{}: name", what()))?;
    let at = |field: &str| format!("{} ({name}): {field}", what());
    if name.is_empty() {
        ck.problem(name_mark.put(Error::malformed(format!("{}: the name is empty", what()))))?;
    }
    let parent_mark = s.mark();
    let parent = s.string(&|| at("parent"))?;
    let parent = (parent.as_bytes() != NO_PARENT).then_some(parent);
    let property_lists = if version == 200 && s.vector_next() {
        Vec::new()
    } else {
        read_property_lists(s, &|| at("bone"))?
    };
    let translation = finite_floats::<S, 3>(s, ck, &|| at("translation"))?;
    let rot_mark = s.mark();
    let raw = finite_floats::<S, 4>(s, ck, &|| at("rotation"))?;
    let rotation = match normalised(raw) {
        Some(q) => q,
        None => {
            ck.problem(rot_mark.put(Error::malformed(format!(
                "{}: quaternion {raw:?} has no length",
                at("rotation")
            ))))?;
            [0.0, 0.0, 0.0, 1.0]
        }
    };
    let can_translate = flag(s, &|| at("can-translate flag"))?;
    let can_rotate = flag(s, &|| at("can-rotate flag"))?;
    let (can_blend, wiggle_value, wiggle_power) = if version == 200 {
        (false, 0.0, 0.0)
    } else {
        (
            flag(s, &|| at("can-blend flag"))?,
            finite(s, ck, &|| at("wiggle value"))?,
            finite(s, ck, &|| at("wiggle power"))?,
        )
    };
    Ok((
        Bone {
            name,
            parent,
            parent_index: -1,
            translation,
            rotation,
            can_translate,
            can_rotate,
            can_blend,
            wiggle_value,
            wiggle_power,
            property_lists,
        },
        (name_mark, parent_mark),
    ))
}

/// `q` scaled to unit length (computed in f64), or None for a zero or unusable length.
pub(crate) fn normalised(q: [f32; 4]) -> Option<[f32; 4]> {
    let len = q.iter().map(|&v| v as f64 * v as f64).sum::<f64>().sqrt();
    if !(len > 1e-12 && len.is_finite()) {
        return None;
    }
    Some(q.map(|v| (v as f64 / len) as f32))
}

/// A suit; version 200 has no type, censor flags or property lists (they read as 0 and empty).
fn read_suit<S: Source>(s: &mut S, version: u32, i: usize) -> Result<Suit> {
    let name = s.string(&|| format!("suit {i} name"))?;
    let at = |field: &str| format!("suit {i} ({name}){field}");
    let short = version == 200;
    let (suit_type, property_lists) = if short {
        (0, Vec::new())
    } else {
        (
            s.u32(&|| at(": type"))?,
            read_property_lists(s, &|| at(""))?,
        )
    };
    let n = s.count(Record::Skin, &|| at(": skin count"))?;
    let mut skins = Vec::with_capacity(n);
    for k in 0..n {
        let skin = |field: &str| at(&format!(" skin {k}{field}"));
        let bone = s.string(&|| skin(": bone name"))?;
        let name = s.string(&|| skin(": skin name"))?;
        let (censor_flags, property_lists) = if short {
            (0, Vec::new())
        } else {
            (
                s.u32(&|| skin(": censor flags"))?,
                read_property_lists(s, &|| skin(""))?,
            )
        };
        skins.push(Skin {
            bone,
            name,
            censor_flags,
            property_lists,
        });
    }
    Ok(Suit {
        name,
        suit_type,
        property_lists,
        skins,
    })
}

fn read_skill<S: Source>(s: &mut S, ck: &mut Checker, i: usize) -> Result<Skill> {
    let name = s.string(&|| format!("skill {i} name"))?;
    let at = |field: &str| format!("skill {i} ({name}){field}");
    let animation = s.string(&|| at(": animation name"))?;
    let duration = finite(s, ck, &|| at(": duration"))?;
    let distance = finite(s, ck, &|| at(": distance"))?;
    let moving = flag(s, &|| at(": moving flag"))?;
    let translation_count = s.u32(&|| at(": translation count"))?;
    let rotation_count = s.u32(&|| at(": rotation count"))?;
    let n = s.count(Record::Motion, &|| at(": motion count"))?;
    let mut motions = Vec::with_capacity(n);
    for m in 0..n {
        motions.push(read_motion(
            s,
            ck,
            (translation_count, rotation_count),
            &|| at(&format!(" motion {m}")),
        )?);
    }
    Ok(Skill {
        name,
        animation,
        duration,
        distance,
        moving,
        translation_count,
        rotation_count,
        motions,
    })
}

/// Whether frames `offset..offset + frames` lie inside a list of `len`.
fn run_fits(offset: i32, frames: u32, len: u32) -> bool {
    u64::try_from(offset)
        .ok()
        .and_then(|offset| offset.checked_add(frames.into()))
        .is_some_and(|end| end <= len.into())
}

fn read_motion<S: Source>(
    s: &mut S,
    ck: &mut Checker,
    (translations, rotations): (u32, u32),
    what: &dyn Fn() -> String,
) -> Result<Motion> {
    let bone = s.string(&|| format!("{}: bone name", what()))?;
    let at = |field: &str| format!("{} ({bone}){field}", what());
    let frame_count = s.u32(&|| at(": frame count"))?;
    let duration = finite(s, ck, &|| at(": duration"))?;
    let mut has_translation = flag(s, &|| at(": has-translation flag"))?;
    let mut has_rotation = flag(s, &|| at(": has-rotation flag"))?;
    let t_mark = s.mark();
    let translation_offset = s.i32(&|| at(": translation offset"))?;
    let r_mark = s.mark();
    let rotation_offset = s.i32(&|| at(": rotation offset"))?;
    if has_translation && !run_fits(translation_offset, frame_count, translations) {
        ck.problem(t_mark.put(Error::malformed(format!(
            "{}: translations {translation_offset}+{frame_count} do not fit the skill's {translations}",
            at("")
        ))))?;
        has_translation = false;
    }
    if has_rotation && !run_fits(rotation_offset, frame_count, rotations) {
        ck.problem(r_mark.put(Error::malformed(format!(
            "{}: rotations {rotation_offset}+{frame_count} do not fit the skill's {rotations}",
            at("")
        ))))?;
        has_rotation = false;
    }
    let property_lists = read_property_lists(s, &|| at(""))?;
    let time_property_lists = read_time_property_lists(s, &|| at(""))?;
    Ok(Motion {
        bone,
        frame_count,
        duration,
        has_translation,
        has_rotation,
        translation_offset,
        rotation_offset,
        property_lists,
        time_property_lists,
    })
}
