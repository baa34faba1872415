//! Writing character files: the walk of the reader in reverse, into CMX text or BCF.
//!
//! What the writer accepts, the reader reads back equal: every name must be one a CMX line can
//! hold (in both encodings, so that a BCF stays convertible to text), parents must name earlier
//! bones, numbers must be finite, quaternions must have a length, and a motion's runs must fit
//! its skill's value counts. Text is what the retail files are: the Maxis comment line,
//! `version 300`, CRLF line ends and C's `%g` numbers with three-digit exponents (Microsoft's C
//! library), so a retail file parsed and written again keeps its bytes. A file read as version
//! 200 (the 1998 prototype's) is written as version 200 in its shorter layout, the same way.

use byteorder::LittleEndian;

use super::{
    Bone, CharacterFile, Motion, NO_PARENT, Property, PropertyList, Skeleton, Skill, Skin, Suit,
    TimePropertyList, normalised, run_fits,
};
use crate::error::{Error, Result};
use crate::format::binary::{put_f32, put_u32};
use crate::format::text::{c_g, exact_text};
use crate::math::Mat3x4;
use crate::model::{self, Model, Name};
use crate::name_index::NameIndex;

/// The first line of every retail and prototype CMX, a comment the game skips; the version
/// line follows.
const COMMENT: &[u8] = b"// Character File. Copyright 1997, Maxis Inc.\r\n";

/// The text layouts: the retail one, and the 1998 prototype's (no bone property lists, two bone
/// flags, suits and skins without type, censor flags and property lists).
const VERSION_RETAIL: u32 = 300;
const VERSION_PROTOTYPE: u32 = 200;

/// A rest pose's scale may be off 1 by this much (rounding in the model's matrices).
const SCALE_TOLERANCE: f32 = 1e-4;

/// The name a skeleton made from a model gets when its bones were not read from a character
/// file, which would name it.
pub const DEFAULT_SKELETON_NAME: &str = "skeleton";

/// Where the walk writes to.
trait Sink {
    /// A name already checked by [`check_name`].
    fn string(&mut self, name: &Name, what: &dyn Fn() -> String) -> Result<()>;
    fn u32(&mut self, v: u32);
    fn i32(&mut self, v: i32);
    /// A finite number.
    fn f32(&mut self, v: f32);
    /// Finite numbers: one `| x y z |` line of text, or N floats of binary.
    fn floats(&mut self, v: &[f32]);
}

struct TextSink {
    out: Vec<u8>,
}

impl TextSink {
    fn line(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
        self.out.extend_from_slice(b"\r\n");
    }
}

impl Sink for TextSink {
    fn string(&mut self, name: &Name, _what: &dyn Fn() -> String) -> Result<()> {
        self.line(name.as_bytes());
        Ok(())
    }
    fn u32(&mut self, v: u32) {
        self.line(v.to_string().as_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.line(v.to_string().as_bytes());
    }
    fn f32(&mut self, v: f32) {
        self.line(number_text(v).as_bytes());
    }
    fn floats(&mut self, v: &[f32]) {
        let mut line = String::from("|");
        for &x in v {
            line.push(' ');
            line.push_str(&number_text(x));
        }
        line.push_str(" |");
        self.line(line.as_bytes());
    }
}

type Le = LittleEndian;

struct BinarySink {
    out: Vec<u8>,
}

impl Sink for BinarySink {
    fn string(&mut self, name: &Name, what: &dyn Fn() -> String) -> Result<()> {
        let b = name.as_bytes();
        // A length byte, or 255 and a 32-bit length (the reader's counted string).
        match u8::try_from(b.len()) {
            Ok(n) if n < 255 => self.out.push(n),
            _ => {
                let n = bcf_long_length(b.len()).map_err(|e| e.within(what()))?;
                self.out.push(255);
                put_u32::<Le>(&mut self.out, n);
            }
        }
        self.out.extend_from_slice(b);
        Ok(())
    }
    fn u32(&mut self, v: u32) {
        put_u32::<Le>(&mut self.out, v);
    }
    fn i32(&mut self, v: i32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn f32(&mut self, v: f32) {
        put_f32::<Le>(&mut self.out, v);
    }
    fn floats(&mut self, v: &[f32]) {
        v.iter().for_each(|&x| put_f32::<Le>(&mut self.out, x));
    }
}

/// The 32-bit length a BCF string of `len` bytes stores after its 255 byte.
fn bcf_long_length(len: usize) -> Result<u32> {
    u32::try_from(len).map_err(|_| {
        Error::limit(format!(
            "the name is {len} bytes long; a BCF string holds at most {} bytes",
            u32::MAX
        ))
    })
}

/// Text that reads back as exactly `x` (finite): `%g` where it does, else the shortest exact form.
fn number_text(x: f32) -> String {
    exact_text(x).unwrap_or_else(|| format!("{x}"))
}

/// The quaternion to store for `q`: the reader normalises what it reads, so a file's
/// slightly-off-unit quaternion comes back as `q`, and the file's own six-digit numbers are the
/// ones to write back. They are `q` scaled by the file quaternion's length, each to six digits:
/// the six-digit values of `q` itself when they normalise to `q` (a length within rounding of
/// 1), else the first of the lengths the six-digit values next to `q`'s largest component give,
/// nearest first, whose values normalise to `q`; else `q` itself, which reads back as its
/// normalised self. (A `q` the reader gave need not normalise to itself: normalising is not
/// exact, so a test for unit length first would miss some of the files' quaternions.)
fn stored_rotation(q: [f32; 4]) -> [f32; 4] {
    let six = |x: f64| c_g(x as f32).parse::<f32>().ok();
    let fits = |s: [f32; 4]| normalised(s) == Some(q);
    let scaled = |length: f64| -> Option<[f32; 4]> {
        let mut s = [0.0f32; 4];
        for (s, &x) in s.iter_mut().zip(&q) {
            *s = six(x as f64 * length)?;
        }
        Some(s)
    };
    if let Some(s) = scaled(1.0).filter(|&s| fits(s)) {
        return s;
    }
    let Some((k, &largest)) = (q.iter().enumerate()).max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
    else {
        return q;
    };
    let largest = f64::from(largest);
    let Some(base) = six(largest).map(f64::from).filter(|_| largest != 0.0) else {
        return q;
    };
    // One unit in the sixth significant digit of the largest component.
    let step = 10f64.powi((largest.abs().log10().floor() as i32).saturating_sub(5));
    for j in 0..=ROTATION_SEARCH_STEPS {
        for candidate in [base + f64::from(j) * step, base - f64::from(j) * step] {
            let Some(mut s) = scaled(candidate / largest) else {
                continue;
            };
            if let (Some(v), Some(c)) = (s.get_mut(k), six(candidate)) {
                *v = c;
            }
            if fits(s) {
                return s;
            }
        }
    }
    q
}

/// How many sixth-digit steps of a quaternion's largest component [`stored_rotation`] tries
/// either side of it: the 1998 prototype's quaternions need at most 1 (18 of its 288 files have
/// one that the six-digit values of `q` miss); the retail ones need none.
const ROTATION_SEARCH_STEPS: u32 = 4;

fn finite(v: f32, what: &dyn Fn() -> String) -> Result<()> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "{}: {v} is not a finite number",
            what()
        )))
    }
}

fn count(n: usize, what: &dyn Fn() -> String) -> Result<u32> {
    u32::try_from(n).map_err(|_| {
        Error::limit(format!(
            "{}: {n} do not fit the file's 32-bit count",
            what()
        ))
    })
}

/// Whether the reader's trimming of a line removes this byte at either end.
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c')
}

/// A name a CMX line holds and gives back: no line break, no blanks at either end (lines are
/// trimmed), no `//` at the start (a comment). Empty names are blank lines, which are values.
fn check_name(name: &Name, what: &dyn Fn() -> String) -> Result<()> {
    let b = name.as_bytes();
    let problem = if b.iter().any(|&c| c == b'\n' || c == b'\r') {
        "holds a line break"
    } else if b.first().is_some_and(|&c| is_blank(c)) || b.last().is_some_and(|&c| is_blank(c)) {
        "starts or ends with blanks, which the reader trims"
    } else if b.starts_with(b"//") {
        "starts with `//`, which makes its line a comment"
    } else {
        return Ok(());
    };
    Err(Error::unsupported(format!(
        "{} `{name}` {problem}: a character file cannot keep it",
        what()
    )))
}

fn put_name<S: Sink>(s: &mut S, name: &Name, what: &dyn Fn() -> String) -> Result<()> {
    check_name(name, what)?;
    s.string(name, what)
}

fn put_count<S: Sink>(s: &mut S, n: usize, what: &dyn Fn() -> String) -> Result<()> {
    s.u32(count(n, what)?);
    Ok(())
}

fn put_number<S: Sink>(s: &mut S, v: f32, what: &dyn Fn() -> String) -> Result<()> {
    finite(v, what)?;
    s.f32(v);
    Ok(())
}

fn put_flag<S: Sink>(s: &mut S, v: bool) {
    s.u32(v as u32);
}

/// Writes `file` as CMX text or, with `binary`, as a BCF (no version: version 300's records).
///
/// Text keeps `file.version`: 200 writes the 1998 prototype's layout (bones without property
/// lists and with two flags, suits and skins without type, censor flags and property lists),
/// 300 or None the retail one; another version is unsupported. A version 200 file whose data
/// that layout has no place for (a bone's property lists, can-blend flag or nonzero wiggle
/// values; a suit's type or property lists; a skin's censor flags or property lists) is refused
/// as unsupported, naming the field: set `version` to 300 to write it.
///
/// The file is checked so that [`parse`](super::parse) reads it back equal (warnings and, for
/// text written from a BCF, the version aside). Refused as unsupported: a name with a line
/// break, with blanks at either end or starting with `//` (in both encodings, so a BCF stays
/// convertible to text), an empty or repeated bone name, a parent named `NULL`; as an invalid
/// argument: a parent (by name; `parent_index` is what the reader derives) that is not an
/// earlier bone, a number that is not finite, a quaternion without length, a motion run outside
/// its skill's values; as a limit: a count or BCF string length beyond 32 bits. A rotation the
/// reader gave reads back bit for bit (the reader normalises, so six-digit values that normalise
/// to it are stored: a file's own); another reads back normalised.
pub fn write_character(file: &CharacterFile, binary: bool) -> Result<Vec<u8>> {
    if binary {
        // A BCF has no version: always the version 300 layout, which holds everything.
        let mut s = BinarySink { out: Vec::new() };
        walk(&mut s, file, Layout::Full)?;
        return Ok(s.out);
    }
    let (version, layout) = match file.version {
        None | Some(VERSION_RETAIL) => (VERSION_RETAIL, Layout::Full),
        Some(VERSION_PROTOTYPE) => (VERSION_PROTOTYPE, Layout::Prototype),
        Some(v) => {
            return Err(Error::unsupported(format!(
                "version {v}: CMX text is written as version 300 or 200"
            )));
        }
    };
    let mut out = COMMENT.to_vec();
    out.extend_from_slice(format!("version {version}\r\n").as_bytes());
    let mut s = TextSink { out };
    walk(&mut s, file, layout)?;
    Ok(s.out)
}

/// Which records a file has: version 300's (and BCF's), or version 200's shorter ones.
#[derive(Clone, Copy, PartialEq)]
enum Layout {
    Full,
    Prototype,
}

/// Refuses, for version 200, a field it has no place for that holds something other than what
/// the reader gives in its stead (0, false or nothing).
fn prototype_lacks(layout: Layout, present: bool, what: &dyn Fn() -> String) -> Result<()> {
    if layout == Layout::Prototype && present {
        return Err(Error::unsupported(format!(
            "{}: version 200 has no such field (write the file as version 300 to keep it)",
            what()
        )));
    }
    Ok(())
}

fn walk<S: Sink>(s: &mut S, file: &CharacterFile, layout: Layout) -> Result<()> {
    put_count(s, file.skeletons.len(), &|| "skeletons".to_owned())?;
    for (i, sk) in file.skeletons.iter().enumerate() {
        put_skeleton(s, sk, i, layout)?;
    }
    put_count(s, file.suits.len(), &|| "suits".to_owned())?;
    for (i, suit) in file.suits.iter().enumerate() {
        put_suit(s, suit, i, layout)?;
    }
    put_count(s, file.skills.len(), &|| "skills".to_owned())?;
    for (i, skill) in file.skills.iter().enumerate() {
        put_skill(s, skill, i)?;
    }
    Ok(())
}

fn put_properties<S: Sink>(
    s: &mut S,
    list: &PropertyList,
    what: &dyn Fn() -> String,
) -> Result<()> {
    put_count(s, list.len(), &|| format!("{}: properties", what()))?;
    for (p, prop) in list.iter().enumerate() {
        put_name(s, &prop.key, &|| format!("{} property {p} key", what()))?;
        put_name(s, &prop.value, &|| format!("{} property {p} value", what()))?;
    }
    Ok(())
}

fn put_property_lists<S: Sink>(
    s: &mut S,
    lists: &[PropertyList],
    what: &dyn Fn() -> String,
) -> Result<()> {
    put_count(s, lists.len(), &|| format!("{}: property lists", what()))?;
    for (l, list) in lists.iter().enumerate() {
        put_properties(s, list, &|| format!("{} property list {l}", what()))?;
    }
    Ok(())
}

fn put_time_property_lists<S: Sink>(
    s: &mut S,
    lists: &[TimePropertyList],
    what: &dyn Fn() -> String,
) -> Result<()> {
    put_count(s, lists.len(), &|| {
        format!("{}: time property lists", what())
    })?;
    for (l, list) in lists.iter().enumerate() {
        put_count(s, list.len(), &|| {
            format!("{} time property list {l}: entries", what())
        })?;
        for (e, entry) in list.iter().enumerate() {
            s.u32(entry.time);
            put_properties(s, &entry.properties, &|| {
                format!("{} time property list {l} entry {e}", what())
            })?;
        }
    }
    Ok(())
}

fn put_skeleton<S: Sink>(s: &mut S, sk: &Skeleton, i: usize, layout: Layout) -> Result<()> {
    put_name(s, &sk.name, &|| format!("skeleton {i} name"))?;
    let at = |b: usize, bone: &Bone| format!("skeleton {i} ({}) bone {b} ({})", sk.name, bone.name);
    put_count(s, sk.bones.len(), &|| {
        format!("skeleton {i} ({}): bones", sk.name)
    })?;
    let links = Links::new(&sk.bones);
    for (b, bone) in sk.bones.iter().enumerate() {
        let what = || at(b, bone);
        links.check(b, bone, &what)?;
        put_bone(s, bone, layout, &what)?;
    }
    Ok(())
}

/// A skeleton's bones by name, as the reader finds them: hashed, since a scan of the earlier
/// bones for every bone is quadratic in a skeleton of 65,535 bones.
struct Links<'a> {
    bones: &'a [Bone],
    exact: NameIndex,
    folded: NameIndex,
}

impl<'a> Links<'a> {
    fn new(bones: &'a [Bone]) -> Links<'a> {
        let name_of = |i: usize| bones.get(i).map_or(&[][..], |o| o.name.as_bytes());
        Links {
            bones,
            exact: NameIndex::build(bones.len(), name_of),
            folded: NameIndex::build_ignoring_case(bones.len(), name_of),
        }
    }

    fn name_of(&self, i: usize) -> &'a [u8] {
        self.bones.get(i).map_or(&[][..], |o| o.name.as_bytes())
    }

    /// The reader's rules for bone `b`'s name and parent, checked before writing: a present
    /// name no earlier bone has, and a parent among the earlier bones, found by name as the
    /// reader finds it.
    fn check(&self, b: usize, bone: &Bone, what: &dyn Fn() -> String) -> Result<()> {
        // What a valid model can hold but a file that links bones by name cannot: unsupported.
        if bone.name.is_empty() {
            return Err(Error::unsupported(format!(
                "{}: the name is empty, and a character file finds bones by name",
                what()
            )));
        }
        let name_of = |i: usize| self.name_of(i);
        let earlier = |j: &u32| (*j as usize) < b;
        if let Some(dup) = self
            .exact
            .find(bone.name.as_bytes(), name_of)
            .filter(earlier)
        {
            return Err(Error::unsupported(format!(
                "{}: the name is bone {dup}'s too, and a character file finds bones by name",
                what()
            )));
        }
        let Some(parent) = &bone.parent else {
            return Ok(());
        };
        if parent.as_bytes() == NO_PARENT {
            return Err(Error::unsupported(format!(
                "{}: parent `{parent}` would read as no parent",
                what()
            )));
        }
        // A name equal byte for byte is equal ignoring case too.
        let found = self.folded.find(parent.as_bytes(), name_of).filter(earlier);
        if found.is_none() {
            return Err(Error::invalid_argument(format!(
                "{}: parent `{parent}` is not an earlier bone (a parent must come first)",
                what()
            )));
        }
        Ok(())
    }
}

fn put_bone<S: Sink>(
    s: &mut S,
    bone: &Bone,
    layout: Layout,
    what: &dyn Fn() -> String,
) -> Result<()> {
    let field = |f: &str| format!("{}: {f}", what());
    put_name(s, &bone.name, &|| field("name"))?;
    let no_parent = Name::new(NO_PARENT);
    put_name(s, bone.parent.as_ref().unwrap_or(&no_parent), &|| {
        field("parent")
    })?;
    let lacks = |present: bool, f: &str| prototype_lacks(layout, present, &|| field(f));
    lacks(!bone.property_lists.is_empty(), "property lists")?;
    lacks(bone.can_blend, "can-blend flag")?;
    lacks(bone.wiggle_value != 0.0, "wiggle value")?;
    lacks(bone.wiggle_power != 0.0, "wiggle power")?;
    if layout == Layout::Full {
        put_property_lists(s, &bone.property_lists, what)?;
    }
    for &v in &bone.translation {
        finite(v, &|| field("translation"))?;
    }
    s.floats(&bone.translation);
    for &v in &bone.rotation {
        finite(v, &|| field("rotation"))?;
    }
    if normalised(bone.rotation).is_none() {
        return Err(Error::invalid_argument(format!(
            "{}: quaternion {:?} has no length",
            field("rotation"),
            bone.rotation
        )));
    }
    // A quaternion the reader gives (normalised) is stored so that it reads back bit for bit;
    // another one reads back as its normalised self, which is what the reader would make of it.
    s.floats(&stored_rotation(bone.rotation));
    put_flag(s, bone.can_translate);
    put_flag(s, bone.can_rotate);
    if layout == Layout::Full {
        put_flag(s, bone.can_blend);
        put_number(s, bone.wiggle_value, &|| field("wiggle value"))?;
        put_number(s, bone.wiggle_power, &|| field("wiggle power"))?;
    }
    Ok(())
}

fn put_suit<S: Sink>(s: &mut S, suit: &Suit, i: usize, layout: Layout) -> Result<()> {
    put_name(s, &suit.name, &|| format!("suit {i} name"))?;
    let at = |field: &str| format!("suit {i} ({}){field}", suit.name);
    prototype_lacks(layout, suit.suit_type != 0, &|| at(": type"))?;
    prototype_lacks(layout, !suit.property_lists.is_empty(), &|| {
        at(": property lists")
    })?;
    if layout == Layout::Full {
        s.u32(suit.suit_type);
        put_property_lists(s, &suit.property_lists, &|| at(""))?;
    }
    put_count(s, suit.skins.len(), &|| at(": skins"))?;
    for (k, skin) in suit.skins.iter().enumerate() {
        let part = |field: &str| at(&format!(" skin {k}{field}"));
        put_name(s, &skin.bone, &|| part(": bone name"))?;
        put_name(s, &skin.name, &|| part(": skin name"))?;
        prototype_lacks(layout, skin.censor_flags != 0, &|| part(": censor flags"))?;
        prototype_lacks(layout, !skin.property_lists.is_empty(), &|| {
            part(": property lists")
        })?;
        if layout == Layout::Full {
            s.u32(skin.censor_flags);
            put_property_lists(s, &skin.property_lists, &|| part(""))?;
        }
    }
    Ok(())
}

fn put_skill<S: Sink>(s: &mut S, skill: &Skill, i: usize) -> Result<()> {
    put_name(s, &skill.name, &|| format!("skill {i} name"))?;
    let at = |field: &str| format!("skill {i} ({}){field}", skill.name);
    put_name(s, &skill.animation, &|| at(": animation name"))?;
    put_number(s, skill.duration, &|| at(": duration"))?;
    put_number(s, skill.distance, &|| at(": distance"))?;
    put_flag(s, skill.moving);
    s.u32(skill.translation_count);
    s.u32(skill.rotation_count);
    put_count(s, skill.motions.len(), &|| at(": motions"))?;
    for (m, motion) in skill.motions.iter().enumerate() {
        put_motion(s, skill, motion, &|| at(&format!(" motion {m}")))?;
    }
    Ok(())
}

fn put_motion<S: Sink>(
    s: &mut S,
    skill: &Skill,
    motion: &Motion,
    what: &dyn Fn() -> String,
) -> Result<()> {
    put_name(s, &motion.bone, &|| format!("{}: bone name", what()))?;
    let at = |field: &str| format!("{} ({}){field}", what(), motion.bone);
    let frames = motion.frame_count;
    // The reader drops a run that does not fit; refusing it keeps the file as given.
    for (has, offset, len, kind) in [
        (
            motion.has_translation,
            motion.translation_offset,
            skill.translation_count,
            "translations",
        ),
        (
            motion.has_rotation,
            motion.rotation_offset,
            skill.rotation_count,
            "rotations",
        ),
    ] {
        if has && !run_fits(offset, frames, len) {
            return Err(Error::invalid_argument(format!(
                "{}: {kind} {offset}+{frames} do not fit the skill's {len}",
                at("")
            )));
        }
    }
    s.u32(frames);
    put_number(s, motion.duration, &|| at(": duration"))?;
    put_flag(s, motion.has_translation);
    put_flag(s, motion.has_rotation);
    s.i32(motion.translation_offset);
    s.i32(motion.rotation_offset);
    put_property_lists(s, &motion.property_lists, &|| at(""))?;
    put_time_property_lists(s, &motion.time_property_lists, &|| at(""))?;
    Ok(())
}

impl Skeleton {
    /// A skeleton named `name` from a model's bones and its frame 0 (the rest pose), for
    /// [`write_character`]: each local pose becomes a translation and a quaternion `q` with pose
    /// `T(t) * R(q)^T` (the conjugate of the pose's rotation).
    ///
    /// A bone of the character file the model was read from ([`Kept::cmx_skeleton`], which
    /// goes with the bones to meshes bound to them) keeps that file's flags, wiggle values and
    /// property lists, found by name; and its stored translation and quaternion while its rest
    /// pose is still exactly the one they give, so that a file read and written again keeps
    /// its bytes. Other bones get can-translate, can-rotate and can-blend set, wiggle 0 and no
    /// properties (set the fields before writing to change them). Coordinates are kept as they
    /// are, whatever the model's up axis and handedness (a CMX has no field for them: a reader
    /// takes Sims axes, y up and left-handed). Meshes and the frames after the first are not
    /// part of a skeleton.
    ///
    /// [`Kept::cmx_skeleton`]: crate::model::Kept::cmx_skeleton
    pub fn from_model(model: &Model, name: Name) -> Result<Skeleton> {
        let bones = model.bones();
        if bones.is_empty() {
            return Err(Error::unsupported(
                "the model has no bones: a CMX skeleton is made of a model's bones",
            ));
        }
        let poses = model.skeleton().frame_poses(0).ok_or_else(|| {
            Error::unsupported("the model has no frame: a CMX skeleton needs the rest pose")
        })?;
        let kept = KeptBones::of(model);
        let mut out: Vec<Bone> = Vec::with_capacity(bones.len());
        for (b, (bone, pose)) in bones.iter().zip(poses.iter()).enumerate() {
            let what = || format!("bone {b} ({})", bone.name);
            let file_bone = kept.find(&bone.name);
            // The file's own quaternion while it still gives the pose, bit for bit (a pose
            // holds its translation exactly).
            let (translation, rotation) = match &file_bone {
                Some(k) if super::local_pose(pose.translation(), k.rotation) == *pose => {
                    (pose.translation(), k.rotation)
                }
                _ => rest(pose, &what)?,
            };
            let parent = match usize::try_from(bone.parent) {
                Ok(p) => Some(out.get(p).map(|o| o.name.clone()).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "{}: parent {p} is not an earlier bone",
                        what()
                    ))
                })?),
                Err(_) => None,
            };
            let mut written = Bone {
                name: bone.name.clone(),
                parent,
                parent_index: bone.parent.max(-1),
                translation,
                rotation,
                can_translate: true,
                can_rotate: true,
                can_blend: true,
                wiggle_value: 0.0,
                wiggle_power: 0.0,
                property_lists: Vec::new(),
            };
            if let Some(k) = file_bone {
                written.can_translate = k.can_translate;
                written.can_rotate = k.can_rotate;
                written.can_blend = k.can_blend;
                written.wiggle_value = k.wiggle_value;
                written.wiggle_power = k.wiggle_power;
                written.property_lists = k.property_lists;
            }
            out.push(written);
        }
        Ok(Skeleton { name, bones: out })
    }
}

/// The bones of the character file a model was read from, by name.
struct KeptBones<'a> {
    kept: Option<&'a super::KeptSkeleton>,
    index: NameIndex,
}

impl<'a> KeptBones<'a> {
    fn of(model: &'a Model) -> KeptBones<'a> {
        let kept = model.kept().cmx_skeleton.as_deref();
        let n = kept.map_or(0, super::KeptSkeleton::len);
        let name_of = |i: usize| kept.map_or(&[][..], |k| k.bone_name(i));
        KeptBones {
            kept,
            index: NameIndex::build(n, name_of),
        }
    }

    /// The file's bone named exactly `name` (the first of that name), but for its translation
    /// and parent, which the model holds.
    fn find(&self, name: &Name) -> Option<Bone> {
        let kept = self.kept?;
        let i = (self.index).find(name.as_bytes(), |i| kept.bone_name(i))?;
        kept.bone(i as usize)
    }
}

/// A local pose as a CMX bone's translation and quaternion (`pose = T(t) * R(q)^T`).
fn rest(pose: &Mat3x4, what: &dyn Fn() -> String) -> Result<([f32; 3], [f32; 4])> {
    if !pose.is_finite() {
        return Err(Error::invalid_argument(format!(
            "{}: the rest pose is not finite",
            what()
        )));
    }
    let d = pose.decompose();
    if d.scale.iter().any(|s| (s - 1.0).abs() > SCALE_TOLERANCE) {
        return Err(Error::unsupported(format!(
            "{}: the rest pose has scale {:?}; a CMX bone has a translation and a rotation only",
            what(),
            d.scale
        )));
    }
    let q = d.rotation.conjugate();
    let q = [q.x, q.y, q.z, q.w];
    Ok((d.translation, normalised(q).unwrap_or([0.0, 0.0, 0.0, 1.0])))
}

/// A model's property list entries as property lists: one list per list number that has
/// entries, in order of number, each with its entries in order (a model keeps no empty list).
fn property_lists(properties: &[model::Property]) -> Vec<PropertyList> {
    let mut sorted: Vec<&model::Property> = properties.iter().collect();
    sorted.sort_by_key(|p| p.list);
    sorted
        .chunk_by(|a, b| a.list == b.list)
        .map(|list| {
            (list.iter())
                .map(|p| Property {
                    key: p.key.clone(),
                    value: p.value.clone(),
                })
                .collect()
        })
        .collect()
}

/// A model's suits as a character file's.
fn file_suits(model: &Model) -> Vec<Suit> {
    (model.suits().iter())
        .map(|suit| Suit {
            name: suit.name.clone(),
            suit_type: suit.kind,
            property_lists: property_lists(&suit.properties),
            skins: (suit.skins.iter())
                .map(|k| Skin {
                    bone: k.bone.clone(),
                    name: k.mesh.clone(),
                    censor_flags: k.censor_flags,
                    property_lists: property_lists(&k.properties),
                })
                .collect(),
        })
        .collect()
}

/// Whether version 200 holds a suit: it has no type, censor flags or property lists.
fn prototype_holds(suit: &Suit) -> bool {
    suit.suit_type == 0
        && suit.property_lists.is_empty()
        && (suit.skins.iter()).all(|k| k.censor_flags == 0 && k.property_lists.is_empty())
}

/// The character file of a model: its skeleton, when it has bones, and its suits. Version 200
/// when the model was read from a version 200 file (or bound to a skeleton that was) and its
/// suits fit that version (a suit of a version 300 file added to it may not); else 300.
fn model_file(model: &Model) -> Result<CharacterFile> {
    // The name of the skeleton the bones were read from, else one made up.
    let name = (model.kept().cmx_skeleton.as_deref())
        .map_or_else(|| Name::from(DEFAULT_SKELETON_NAME), |k| k.name().clone());
    let mut skeletons = if model.bones().is_empty() && !model.suits().is_empty() {
        Vec::new()
    } else {
        vec![Skeleton::from_model(model, name)?]
    };
    let suits = file_suits(model);
    let prototype =
        model.source_version() == Some(VERSION_PROTOTYPE) && suits.iter().all(prototype_holds);
    if prototype {
        // Version 200 bones have no can-blend flag (the reader gives false).
        for bone in skeletons.iter_mut().flat_map(|sk| sk.bones.iter_mut()) {
            bone.can_blend = false;
        }
    }
    Ok(CharacterFile {
        version: Some(if prototype {
            VERSION_PROTOTYPE
        } else {
            VERSION_RETAIL
        }),
        skeletons,
        suits,
        ..CharacterFile::default()
    })
}

/// Writes a model as CMX text: its skeleton as one skeleton, as [`Skeleton::from_model`] makes
/// it, named as in the character file its bones were read from, else [`DEFAULT_SKELETON_NAME`]
/// (a model of suits alone has none), and its suits; no
/// skills (a skill's numbers live in its CFP). A model keeps property lists by their entries, so
/// a suit's or skin's lists without entries are not written back. The version is the one the
/// model was read from ([`Model::source_version`]): 200 stays 200 (its bones without the
/// can-blend flag) unless a suit holds what version 200 cannot, and everything else is 300.
pub fn write_cmx(model: &Model) -> Result<Vec<u8>> {
    write_character(&model_file(model)?, false)
}

/// Writes a model's skeleton as a BCF, as [`write_cmx`].
pub fn write_bcf(model: &Model) -> Result<Vec<u8>> {
    write_character(&model_file(model)?, true)
}

/// A model saved as a character file (BCF when `binary`) with its scenes as the file's skills
/// ([`skills_from_model`]), and each skill's CFP with the name the game looks for beside the file
/// (`ANIMATION.cfp`). A model without a scene of frames is saved as [`write_cmx`] and
/// [`write_bcf`] save it, without CFPs.
///
/// Errors: as [`skills_from_model`]; `InvalidArgument` for a scene whose name is not a file name
/// (empty, `.` or `..`, or holding `/`, `\\`, `:` or NUL), which its CFP could not be saved as
/// beside the file.
pub fn write_with_skills(model: &Model, binary: bool) -> Result<CharacterWithSkills> {
    let mut file = model_file(model)?;
    let scenes = model.animations().iter().any(|a| a.frame_count > 0);
    if !scenes {
        return Ok(CharacterWithSkills {
            bytes: write_character(&file, binary)?,
            cfps: Vec::new(),
        });
    }
    let added = skills_from_model(model)?;
    let mut cfps = Vec::with_capacity(added.cfps.len());
    for (skill, cfp) in added.character.skills.iter().zip(added.cfps) {
        let name = skill.animation.to_string();
        let plain =
            crate::io::is_contained(&name) && !name.contains('/') && name != "." && name != "..";
        if !plain {
            return Err(Error::invalid_argument(format!(
                "scene {name:?}: its CFP is saved beside the file under its name, which is not a \
                 file name"
            )));
        }
        cfps.push((format!("{name}.cfp"), cfp));
    }
    file.skills = added.character.skills;
    Ok(CharacterWithSkills {
        bytes: write_character(&file, binary)?,
        cfps,
    })
}

/// What [`write_with_skills`] gives.
#[derive(Clone, Debug, PartialEq)]
pub struct CharacterWithSkills {
    /// The character file.
    pub bytes: Vec<u8>,
    /// Each skill's CFP: its file name (`ANIMATION.cfp`) and bytes.
    pub cfps: Vec<(String, Vec<u8>)>,
}

/// A model's scenes as Sims skills: the skill records, in a character file of skills alone, and
/// each skill's CFP ([`SkillFiles`]), to be saved as `ANIMATION.cfp` beside the file (the
/// skill's `animation` is its scene's name). [`Model::with_skills`] reads them back as the same
/// scenes: the same frames, rate, travel and events.
///
/// Every scene with frames is a skill of its name, `duration` the frames over the rate (ms),
/// `distance` and `moving` the scene's. Each bone is a motion with a translation and a rotation
/// for every frame (`pose = T(t) * R(q)^T`, as the rest pose's), so that playing it gives the
/// frames back; the scene's events are the time properties of their bone's motion, each time
/// in whole milliseconds, properties of one time in one entry (an event on no bone goes on the
/// first bone's motion). The CFP is lossless ([`cfp::encode_skill`](crate::format::cfp::encode_skill)
/// without a tolerance).
///
/// Errors: `Unsupported` for a model without bones or a frame that scales a bone; `InvalidArgument`
/// for a pose that is not finite; `Limit` for a skill of more values than a CFP's 32-bit counts hold.
pub fn skills_from_model(model: &Model) -> Result<SkillFiles> {
    let bones = model.bones();
    if bones.is_empty() {
        return Err(Error::unsupported(
            "the model has no bones: a skill moves a skeleton's bones",
        ));
    }
    let nb = bones.len();
    let mut skills = Vec::new();
    let mut cfps = Vec::new();
    let mut local = vec![Mat3x4::IDENTITY; nb];
    for (a, scene) in model.animations().iter().enumerate() {
        let n = scene.frame_count as usize;
        if n == 0 {
            continue;
        }
        let what_skill = || format!("animation {a} ({})", scene.name);
        let values = n
            .checked_mul(nb)
            .filter(|v| u32::try_from(*v).is_ok() && i32::try_from(*v).is_ok());
        let Some(count) = values else {
            return Err(Error::limit(format!(
                "{}: {n} frames of {nb} bones are more values than a CFP counts",
                what_skill()
            )));
        };
        // Per bone its frames; bone-major in the CFP, as motions read them (bone b's from b * n).
        let mut tracks: Vec<super::SkillValues> =
            vec![(Vec::with_capacity(n), Vec::with_capacity(n)); nb];
        for f in 0..n {
            let frame = (scene.first_frame as usize).saturating_add(f);
            if !model.skeleton().write_frame_poses(frame, &mut local) {
                return Err(Error::invalid_argument(format!(
                    "{}: frame {frame} is not a frame of the model",
                    what_skill()
                )));
            }
            for (b, ((pose, bone), (ts, rs))) in
                local.iter().zip(bones).zip(tracks.iter_mut()).enumerate()
            {
                let what = || format!("{} frame {f} bone {b} ({})", what_skill(), bone.name);
                let (t, mut q) = rest(pose, &what)?;
                // Each rotation on the hemisphere of the one before, so deltas stay small.
                if let Some(prev) = rs.last()
                    && prev.iter().zip(q).map(|(p, c)| p * c).sum::<f32>() < 0.0
                {
                    q = q.map(|c| -c);
                }
                ts.push(t);
                rs.push(q);
            }
        }
        let translations: Vec<[f32; 3]> =
            tracks.iter().flat_map(|(t, _)| t.iter().copied()).collect();
        let rotations: Vec<[f32; 4]> = tracks.iter().flat_map(|(_, r)| r.iter().copied()).collect();
        let duration = (n as f64 * 1000.0 / f64::from(scene.fps)) as f32;
        let mut lists: Vec<TimePropertyList> = vec![Vec::new(); nb];
        for e in model.animation_events(a as u32) {
            let b = usize::try_from(e.bone)
                .ok()
                .filter(|&b| b < nb)
                .unwrap_or(0);
            let time = (f64::from(e.time) * 1000.0)
                .round()
                .clamp(0.0, f64::from(u32::MAX)) as u32;
            let property = Property {
                key: e.key.clone(),
                value: e.value.clone(),
            };
            let Some(list) = lists.get_mut(b) else {
                continue;
            };
            match list.last_mut() {
                Some(last) if last.time == time => last.properties.push(property),
                _ => list.push(super::TimeProperty {
                    time,
                    properties: vec![property],
                }),
            }
        }
        let motions = (bones.iter().zip(lists))
            .enumerate()
            .map(|(b, (bone, list))| Motion {
                bone: bone.name.clone(),
                frame_count: n as u32,
                duration,
                has_translation: true,
                has_rotation: true,
                // Within the count, which fits an i32.
                translation_offset: b.saturating_mul(n) as i32,
                rotation_offset: b.saturating_mul(n) as i32,
                property_lists: Vec::new(),
                time_property_lists: if list.is_empty() {
                    Vec::new()
                } else {
                    vec![list]
                },
            })
            .collect();
        skills.push(Skill {
            name: scene.name.clone(),
            animation: scene.name.clone(),
            duration,
            distance: scene.distance,
            moving: scene.moving,
            translation_count: count as u32,
            rotation_count: count as u32,
            motions,
        });
        cfps.push(crate::format::cfp::encode_skill(
            &translations,
            &rotations,
            None,
        ));
    }
    Ok(SkillFiles {
        character: CharacterFile {
            version: Some(VERSION_RETAIL),
            skills,
            ..CharacterFile::default()
        },
        cfps,
    })
}

/// What [`skills_from_model`] gives.
#[derive(Clone, Debug, PartialEq)]
pub struct SkillFiles {
    /// Skills alone (no skeleton, no suits), for [`write_character`].
    pub character: CharacterFile,
    /// Per skill of `character`, its CFP's bytes, for `ANIMATION.cfp` beside the file.
    pub cfps: Vec<Vec<u8>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_c_g_with_three_exponent_digits() {
        assert_eq!(c_g(-5.88894e-5), "-5.88894e-005");
        assert_eq!(c_g(3.01362), "3.01362");
        assert_eq!(c_g(1999.0), "1999");
        assert_eq!(c_g(-1.0), "-1");
        assert_eq!(c_g(-0.0), "-0");
        assert_eq!(c_g(1234567.0), "1.23457e+006");
        assert_eq!(number_text(0.1), "0.1");
        // Seven significant digits where six do not read back.
        assert_eq!(number_text(1.0000001), "1.0000001");
    }

    #[test]
    fn a_bcf_string_length_must_fit_32_bits() {
        assert_eq!(bcf_long_length(300).ok(), Some(300));
        if let Ok(big) = usize::try_from(u64::from(u32::MAX) + 1) {
            assert!(bcf_long_length(big).is_err());
        }
    }

    #[test]
    fn names_a_line_cannot_keep_are_refused() {
        let what = || "name".to_owned();
        for bad in ["a\nb", "a\rb", " a", "a\t", "//a", "\r"] {
            assert!(check_name(&Name::from(bad), &what).is_err(), "{bad:?}");
        }
        for good in ["", "a b", "L_HAND", "a//b", "|x|"] {
            assert!(check_name(&Name::from(good), &what).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn stored_rotations_read_back_as_given() {
        let q = normalised([0.499999, 0.5, 0.5, -0.500001]).unwrap_or_default();
        let s = stored_rotation(q);
        assert_eq!(normalised(s), Some(q));
    }
}
