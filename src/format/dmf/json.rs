//! The JSON form: `{"format": "DASH", "version": "1.5", "textures": [...], "materials": [...],
//! "vertices": [...], "faces": [...], "skeleton": [...], "animations": [...]}`. The spec's own
//! spellings `verterices` and `verex_color` are read as well as the correct ones (a file with
//! both is ambiguous and refused); ossa writes the correct ones. Enumerations are read as the
//! spec's names or as their numbers; booleans as `true`/`false` or numbers.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::borrow::Cow;
use std::sync::Arc;

use super::{
    DAnimation, DBone, DFace, DMaterial, DTexture, DTrack, DVertex, Doc, Field, Locate,
    MATERIAL_FLAGS, Seg, Table, path_text, room,
};
use crate::error::{Error, Result};
use crate::format::Checker;
use crate::format::json::{
    self, Kind, Lexer, Shape, Sink, Step, Value, base64_decode, base64_encode, put_f32, put_string,
};
use crate::model::{KEY_POSITION, KEY_ROTATION, KEY_SCALE, Name};

const DATA_URL: &str = "data:image/png;base64,";
const WRAP: &[&str] = &["clamp", "mirror", "repeat"];
const EQUATION: &[&str] = &["norm", "add", "sub", "mult"];
const BLEND: &[&str] = &[
    "zero",
    "one",
    "src",
    "one_minus_src",
    "src_alpha",
    "one_minus_src_alpha",
    "dst_alpha",
    "one_minus_dst_alpha",
    "dst",
    "one_minus_dst",
    "src_alpha_saturate",
];
const SHADER: &[&str] = &["basic", "lambert", "phong"];
const SIDE: &[&str] = &["front", "back", "double"];
/// The names of each material flag's values, in [`MATERIAL_FLAGS`] order; None for booleans.
const FLAG_NAMES: [Option<&[&str]>; 12] = [
    None,
    Some(EQUATION),
    Some(BLEND),
    Some(BLEND),
    None,
    Some(SHADER),
    Some(SIDE),
    Some(SIDE),
    None,
    None,
    None,
    None,
];

const ROOT_KEYS: &[&str] = &[
    "format",
    "version",
    "textures",
    "materials",
    "verterices",
    "vertices",
    "faces",
    "skeleton",
    "animations",
];
const TEXTURE_KEYS: &[&str] = &[
    "id", "name", "flip_y", "img", "width", "height", "wrap_s", "wrap_t",
];
/// The material's own keys, then [`MATERIAL_FLAGS`].
const MATERIAL_KEYS: &[&str] = &[
    "id",
    "name",
    "texture",
    "alpha_test",
    "diffuse",
    "emissive",
    "specular",
    "use_blending",
    "blend_equation",
    "blend_src",
    "blend_dst",
    "skinning",
    "shader_type",
    "face_side",
    "shadow_side",
    "ignore_lights",
    "vertex_color",
    "use_alpha",
    "skip_render",
];
const VERTEX_KEYS: &[&str] = &["pos", "skin_index", "skin_weight"];
const FACE_KEYS: &[&str] = &[
    "material",
    "indices",
    "verex_color",
    "vertex_color",
    "normals",
    "diffuse_uv",
];
const BONE_KEYS: &[&str] = &["id", "name", "parent_id", "matrix"];
const ANIMATION_KEYS: &[&str] = &["id", "name", "fps", "duration", "tracks"];
const TRACK_KEYS: &[&str] = &["bone_id", "time", "pos", "rot", "scl"];

/// What the reader reads of a document: members other than these are skipped as they are
/// parsed, never built.
static DOCUMENT: Shape = Shape::Object {
    known: ROOT_KEYS,
    nested: &[
        ("textures", &Shape::Array(&TEXTURE)),
        ("materials", &Shape::Array(&MATERIAL)),
        ("verterices", &Shape::Array(&VERTEX)),
        ("vertices", &Shape::Array(&VERTEX)),
        ("faces", &Shape::Array(&FACE)),
        ("skeleton", &Shape::Array(&BONE)),
        ("animations", &Shape::Array(&ANIMATION)),
    ],
};
static TEXTURE: Shape = Shape::Object {
    known: TEXTURE_KEYS,
    nested: &[],
};
static MATERIAL: Shape = Shape::Object {
    known: MATERIAL_KEYS,
    nested: &[],
};
static VERTEX: Shape = Shape::Object {
    known: VERTEX_KEYS,
    nested: &[],
};
static FACE: Shape = Shape::Object {
    known: FACE_KEYS,
    nested: &[],
};
static BONE: Shape = Shape::Object {
    known: BONE_KEYS,
    nested: &[],
};
static ANIMATION: Shape = Shape::Object {
    known: ANIMATION_KEYS,
    nested: &[("tracks", &Shape::Array(&TRACK))],
};
/// An animation without its tracks, to place an error in its own members: its tracks are
/// placed from where each starts.
static ANIMATION_HEAD: Shape = Shape::Object {
    known: &["id", "name", "fps", "duration"],
    nested: &[],
};
static TRACK: Shape = Shape::Object {
    known: TRACK_KEYS,
    nested: &[],
};

/// The members DMF 1.5 does not define, met while parsing: counted, and the first named.
#[derive(Default)]
pub(crate) struct Unknown {
    count: usize,
    first: Option<(String, u32, u64)>,
}

/// `steps` as the reader's messages write a place: `vertices[3].pos`, or `the document.key`
/// for a member of the document itself.
fn steps_text(steps: &[Step]) -> String {
    let mut out = String::new();
    for (k, step) in steps.iter().enumerate() {
        match step {
            Step::Key(key) if k == 0 && steps.len() == 1 => {
                out.push_str("the document.");
                out.push_str(key);
            }
            Step::Key(key) if k == 0 => out.push_str(key),
            Step::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn unknown_key(path: &str, line: u32, offset: u64) -> Error {
    Error::malformed(format!("{path}: a key DMF 1.5 does not define"))
        .on_line(line)
        .at(offset)
}

/// Parses a DMF JSON document, skipping the members DMF 1.5 does not define: strict mode
/// refuses the first where it is met; the default mode counts them, and [`read`] warns once.
///
/// The six lists (and each animation's tracks) are streamed: each item is parsed into a small
/// tree, turned into the structure the model is built from, and dropped before the next, so
/// the document is never held as a tree beside what it becomes. What is kept (the structures,
/// and where each item starts, to place later errors) and the item being read are charged to
/// the load's memory limit as they grow. An item that breaks a rule stops its list's reading
/// (the rest is still parsed); [`read`] reports it after the document's own checks, as a load
/// that read the whole tree first would.
pub(crate) fn parse<'a>(data: &'a [u8], ck: &mut Checker) -> Result<(Value<'a>, Streamed)> {
    let mut out = Streamed::default();
    let v = json::parse_into(data, &DOCUMENT, ck, &mut out)?;
    out.root_line = v.line;
    out.shrink();
    Ok((v, out))
}

/// Where an item starts in the text: its byte offset and line, one pair an item.
#[derive(Default)]
struct Rows {
    offsets: Vec<u64>,
    lines: Vec<u32>,
}

impl Rows {
    fn push(&mut self, offset: u64, line: u32) {
        self.offsets.push(offset);
        self.lines.push(line);
    }

    fn get(&self, n: usize) -> Option<(u64, u32)> {
        Some((*self.offsets.get(n)?, *self.lines.get(n)?))
    }

    fn len(&self) -> usize {
        self.offsets.len()
    }

    fn bytes(&self) -> u64 {
        (self.offsets.capacity() as u64)
            .saturating_mul(8)
            .saturating_add((self.lines.capacity() as u64).saturating_mul(4))
    }

    fn shrink(&mut self) {
        self.offsets.shrink_to_fit();
        self.lines.shrink_to_fit();
    }
}

/// The [`Sink`] a document is parsed into, and what streaming it leaves: the structures read,
/// where their items start, the first rule each list broke, and the unknown members met.
#[derive(Default)]
pub(crate) struct Streamed {
    doc: Doc<'static>,
    /// Per [`Table`], where each item starts.
    rows: [Rows; 6],
    /// Where each track starts, all animations' end to end, and the first of each animation's.
    tracks: Rows,
    track_base: Vec<usize>,
    /// The tracks of the animation being read.
    pending: Vec<DTrack>,
    /// Per [`Table`], the first item that broke a rule.
    errors: [Option<Error>; 6],
    /// Heap the kept names, images and track lists hold.
    heap: u64,
    unknown: Unknown,
    root_line: u32,
    /// The index of the animation being read, for its tracks.
    anim: usize,
}

impl Streamed {
    fn shrink(&mut self) {
        let d = &mut self.doc;
        d.textures.shrink_to_fit();
        d.materials.shrink_to_fit();
        d.vertices.shrink_to_fit();
        d.faces.shrink_to_fit();
        d.bones.shrink_to_fit();
        d.animations.shrink_to_fit();
        self.pending = Vec::new();
        self.track_base.shrink_to_fit();
        self.tracks.shrink();
        for r in &mut self.rows {
            r.shrink();
        }
    }
}

/// What a list being streamed holds: the items of one of the six lists (under the key the
/// file spells it with), or an animation's tracks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    List(Table, &'static str),
    Tracks,
}

const LISTS: [(&str, Table); 7] = [
    ("textures", Table::Textures),
    ("materials", Table::Materials),
    ("verterices", Table::Vertices),
    ("vertices", Table::Vertices),
    ("faces", Table::Faces),
    ("skeleton", Table::Bones),
    ("animations", Table::Animations),
];

impl Sink for Streamed {
    type List = Target;

    /// A member DMF 1.5 does not define, whose key starts at `offset` on `line`: strict mode
    /// refuses the first; both modes count them and keep where the first is.
    fn unknown(
        &mut self,
        ck: &mut Checker,
        steps: &[Step<'_>],
        line: u32,
        offset: u64,
    ) -> Result<()> {
        let unknown = &mut self.unknown;
        unknown.count = unknown.count.saturating_add(1);
        if unknown.first.is_none() {
            let path = steps_text(steps);
            if ck.strict() {
                ck.tolerate(unknown_key(&path, line, offset))?;
            }
            unknown.first = Some((path, line, offset));
        }
        Ok(())
    }

    /// The six lists of the document, and each animation's tracks.
    fn stream(&self, shape: &'static Shape, key: &str) -> Option<Target> {
        if std::ptr::eq(shape, &DOCUMENT) {
            LISTS
                .iter()
                .find(|(k, _)| *k == key)
                .map(|&(k, t)| Target::List(t, k))
        } else if std::ptr::eq(shape, &ANIMATION) && key == "tracks" {
            Some(Target::Tracks)
        } else {
            None
        }
    }

    /// Heap the structures kept so far hold: charged with the item being read.
    fn kept(&self) -> u64 {
        crate::format::total(
            [
                self.doc.lists_bytes(),
                room(&self.pending),
                room(&self.track_base),
                self.tracks.bytes(),
                self.heap,
            ]
            .into_iter()
            .chain(self.rows.iter().map(Rows::bytes)),
        )
    }

    fn begin(&mut self, list: Target, index: usize) {
        if list == Target::List(Table::Animations, "animations") {
            self.anim = index;
            self.track_base.push(self.tracks.len());
            self.pending.clear();
        }
    }

    /// Turns item `index` of a streamed list into what the model is built from; the first
    /// that breaks a rule is kept for [`read`] and ends its list's reading.
    fn take(&mut self, list: Target, index: usize, offset: u64, line: u32, item: &Value) {
        let out = self;
        let table = match list {
            Target::List(table, _) => table,
            Target::Tracks => Table::Animations,
        };
        match list {
            Target::List(..) => {
                if let Some(rows) = out.rows.get_mut(table as usize) {
                    rows.push(offset, line);
                }
            }
            Target::Tracks => out.tracks.push(offset, line),
        }
        if out.errors.get(table as usize).is_none_or(Option::is_some) {
            return;
        }
        let doc = &mut out.doc;
        let made: Result<u64> = match list {
            Target::List(Table::Textures, _) => texture(item, index).map(|t| {
                let heap = (t.image.len().saturating_add(t.name.heap_bytes())) as u64;
                doc.textures.push(t);
                heap
            }),
            Target::List(Table::Materials, _) => material(item, index).map(|m| {
                let heap = m.name.heap_bytes() as u64;
                doc.materials.push(m);
                heap
            }),
            Target::List(Table::Vertices, key) => {
                vertex(item, &|| format!("{key}[{index}]")).map(|v| {
                    doc.vertices.push(v);
                    0
                })
            }
            Target::List(Table::Faces, _) => face(item, &|| format!("faces[{index}]")).map(|f| {
                doc.faces.push(f);
                0
            }),
            Target::List(Table::Bones, _) => bone(item, index).map(|b| {
                let heap = b.name.heap_bytes() as u64;
                doc.bones.push(b);
                heap
            }),
            Target::List(Table::Animations, _) => {
                let tracks = std::mem::take(&mut out.pending);
                animation(item, index, tracks).map(|a| {
                    let heap = (a.name.heap_bytes() as u64).saturating_add(
                        (a.tracks.capacity() as u64)
                            .saturating_mul(std::mem::size_of::<DTrack>() as u64),
                    );
                    doc.animations.push(a);
                    heap
                })
            }
            Target::Tracks => track(item, out.anim, index).map(|t| {
                out.pending.push(t);
                0
            }),
        };
        match made {
            Ok(heap) => out.heap = out.heap.saturating_add(heap),
            Err(e) => {
                if let Some(slot) = out.errors.get_mut(table as usize) {
                    *slot = Some(e);
                }
            }
        }
    }
}

/// Where each item starts, and each list's key as the file spells it, to place errors on
/// lines: the item is read again from its start, down to the field.
pub(crate) struct Places<'a> {
    data: &'a [u8],
    keys: [&'static str; 6],
    rows: [Rows; 6],
    tracks: Rows,
    track_base: Vec<usize>,
    root_line: u32,
}

impl Places<'_> {
    /// The line of the value `segs` leads to from the item of `shape` starting at `start`, or
    /// of the deepest value on the way that the item has: the item alone is parsed again.
    fn line(&self, start: (u64, u32), shape: &'static Shape, segs: &[Seg]) -> u32 {
        let (offset, line) = start;
        let from = usize::try_from(offset).unwrap_or(usize::MAX);
        let mut c = Lexer::at(self.data, from, line);
        // The document was read whole before, so neither fails.
        let item = c.skip(0).ok().and_then(|()| self.data.get(from..c.pos));
        let mut ck = Checker::for_sidecar(Arc::from(""), false, u64::MAX);
        let Some(v) =
            item.and_then(|text| json::parse(text, shape, &mut ck, &mut |_, _, _, _| Ok(())).ok())
        else {
            return line;
        };
        let mut found = v.line;
        let mut at = Some(&v);
        for seg in segs {
            at = at.and_then(|x| match seg {
                Seg::Key(k) => x.get(k),
                Seg::Index(n) => match &x.kind {
                    Kind::Array(items) => items.get(*n),
                    _ => None,
                },
            });
            if let Some(x) = at {
                found = x.line;
            }
        }
        line.saturating_add(found.saturating_sub(1))
    }
}

impl Locate for Places<'_> {
    fn held(&self) -> u64 {
        crate::format::total(
            self.rows
                .iter()
                .chain([&self.tracks])
                .map(Rows::bytes)
                .chain([(self.track_base.capacity() as u64).saturating_mul(8)]),
        )
    }

    fn place(&self, e: Error, table: Table, index: usize, field: Field) -> Error {
        let key = self.keys.get(table as usize).copied().unwrap_or_default();
        let segs = field.path();
        let item = self.rows.get(table as usize).and_then(|r| r.get(index));
        // A track's field from the track's own start, so that many tracks cost no rescans of
        // their animation.
        let track = match (table, segs.as_slice()) {
            (Table::Animations, [Seg::Key("tracks"), Seg::Index(k), rest @ ..]) => self
                .track_base
                .get(index)
                .and_then(|&base| {
                    let end = self
                        .track_base
                        .get(index.saturating_add(1))
                        .copied()
                        .unwrap_or(self.tracks.len());
                    let n = base.saturating_add(*k);
                    if n < end { self.tracks.get(n) } else { None }
                })
                .map(|start| (start, rest)),
            _ => None,
        };
        let shape = match table {
            Table::Textures => &TEXTURE,
            Table::Materials => &MATERIAL,
            Table::Vertices => &VERTEX,
            Table::Faces => &FACE,
            Table::Bones => &BONE,
            Table::Animations => &ANIMATION_HEAD,
        };
        let line = match (track, item) {
            (Some((start, rest)), _) => self.line(start, &TRACK, rest),
            (None, Some(start)) => self.line(start, shape, &segs),
            (None, None) => self.root_line,
        };
        e.within(format!("{key}[{index}]{}", path_text(&segs, true)))
            .on_line(line)
    }
}

type Path<'p> = &'p dyn Fn() -> String;

fn fail(v: &Value, path: Path, message: impl std::fmt::Display) -> Error {
    Error::malformed(format!("{}: {message}", path())).on_line(v.line)
}

fn wrong(v: &Value, path: Path, want: &str) -> Error {
    fail(v, path, format!("expected {want}, found {}", v.kind_name()))
}

fn array<'v, 'a>(v: &'v Value<'a>, path: Path) -> Result<&'v [Value<'a>]> {
    match &v.kind {
        Kind::Array(items) => Ok(items),
        _ => Err(wrong(v, path, "an array")),
    }
}

fn number(v: &Value, path: Path) -> Result<f32> {
    match v.kind {
        Kind::Number(text) => {
            let x: f32 = text.parse().map_err(|_| fail(v, path, "not a number"))?;
            if x.is_finite() {
                Ok(x)
            } else {
                Err(fail(v, path, format!("{text} does not fit a 32-bit float")))
            }
        }
        _ => Err(wrong(v, path, "a number")),
    }
}

fn integer(v: &Value, path: Path, min: i64, max: i64) -> Result<i64> {
    match v.kind {
        Kind::Number(text) => {
            let x: f64 = text.parse().map_err(|_| fail(v, path, "not a number"))?;
            if x.fract() == 0.0 && x >= min as f64 && x <= max as f64 {
                Ok(x as i64)
            } else {
                Err(fail(
                    v,
                    path,
                    format!("{text} is not a whole number from {min} to {max}"),
                ))
            }
        }
        _ => Err(wrong(v, path, "a whole number")),
    }
}

fn int16(v: &Value, path: Path) -> Result<i16> {
    Ok(integer(v, path, i64::from(i16::MIN), i64::from(i16::MAX))? as i16)
}

fn uint16(v: &Value, path: Path) -> Result<u16> {
    Ok(integer(v, path, 0, i64::from(u16::MAX))? as u16)
}

fn string<'v>(v: &'v Value, path: Path) -> Result<&'v str> {
    match &v.kind {
        Kind::String(s) => Ok(s),
        _ => Err(wrong(v, path, "a string")),
    }
}

fn name(v: &Value, path: Path) -> Result<Name> {
    let s = string(v, path)?;
    if s.contains('\0') {
        return Err(fail(v, path, "a name holds a NUL character"));
    }
    Ok(Name::from(s))
}

/// `true`/`false`, or a number (the binary form's u16).
fn flag(v: &Value, path: Path) -> Result<u16> {
    match v.kind {
        Kind::Bool(b) => Ok(u16::from(b)),
        _ => uint16(v, path),
    }
}

/// One of `names` (by position), or its number.
fn choice(v: &Value, path: Path, names: &[&str]) -> Result<u16> {
    match &v.kind {
        Kind::String(s) => names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(s))
            .map(|p| p as u16)
            .ok_or_else(|| fail(v, path, format!("{s:?} is not one of {}", names.join(", ")))),
        _ => uint16(v, path),
    }
}

fn floats<const N: usize>(v: &Value, path: Path) -> Result<[f32; N]> {
    let items = array(v, path)?;
    if items.len() != N {
        return Err(fail(
            v,
            path,
            format!("expected {N} numbers, found {}", items.len()),
        ));
    }
    let mut out = [0.0f32; N];
    for (k, (o, item)) in out.iter_mut().zip(items).enumerate() {
        *o = number(item, &|| format!("{}[{k}]", path()))?;
    }
    Ok(out)
}

/// Three per-corner values, each read by `read`.
fn corners<T: Copy + Default>(
    v: &Value,
    path: Path,
    read: impl Fn(&Value, Path) -> Result<T>,
) -> Result<[T; 3]> {
    let items = array(v, path)?;
    if items.len() != 3 {
        return Err(fail(
            v,
            path,
            format!("expected 3 corners, found {}", items.len()),
        ));
    }
    let mut out = [T::default(); 3];
    for (k, (o, item)) in out.iter_mut().zip(items).enumerate() {
        *o = read(item, &|| format!("{}[{k}]", path()))?;
    }
    Ok(out)
}

/// A CSS colour `rgba(r, g, b, a)` (or `rgb(r, g, b)`): r, g, b whole numbers from 0 to 255,
/// a from 0 to 1. The spec's example writes a stray quote after the parenthesis
/// (`rgba('255, ...`), so quotes around the numbers are skipped.
fn colour(v: &Value, path: Path) -> Result<[u8; 4]> {
    let s = string(v, path)?;
    let bad = || {
        fail(
            v,
            path,
            format!("{s:?} is not rgba(r, g, b, a) with r, g, b 0 to 255 and a 0 to 1"),
        )
    };
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let (inner, parts) = if let Some(rest) = lower.strip_prefix("rgba(") {
        (rest, 4)
    } else if let Some(rest) = lower.strip_prefix("rgb(") {
        (rest, 3)
    } else {
        return Err(bad());
    };
    let inner = inner.strip_suffix(')').ok_or_else(bad)?;
    let numbers: Vec<f64> = inner
        .split(',')
        .map(|p| {
            p.trim()
                .trim_matches(|c| c == '\'' || c == '"')
                .trim()
                .parse::<f64>()
        })
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| bad())?;
    if numbers.len() != parts {
        return Err(bad());
    }
    let mut out = [255u8; 4];
    for (k, (o, &x)) in out.iter_mut().zip(&numbers).enumerate() {
        let byte = if k == 3 {
            if !(0.0..=1.0).contains(&x) {
                return Err(bad());
            }
            (x * 255.0).round()
        } else {
            if !(x.fract() == 0.0 && (0.0..=255.0).contains(&x)) {
                return Err(bad());
            }
            x
        };
        *o = byte as u8;
    }
    Ok(out)
}

/// The members of an object item. Members DMF 1.5 does not define were skipped by [`parse`],
/// which reported them.
fn members<'v, 'a>(v: &'v Value<'a>, path: Path) -> Result<&'v [(Cow<'a, str>, Value<'a>)]> {
    let Kind::Object(m) = &v.kind else {
        return Err(wrong(v, path, "an object"));
    };
    Ok(m)
}

fn get<'v, 'a>(m: &'v [(Cow<'a, str>, Value<'a>)], key: &str) -> Option<&'v Value<'a>> {
    m.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn required<'v, 'a>(
    m: &'v [(Cow<'a, str>, Value<'a>)],
    v: &Value,
    key: &str,
    path: Path,
) -> Result<&'v Value<'a>> {
    get(m, key).ok_or_else(|| fail(v, path, format!("the key {key:?} is missing")))
}

/// The member under either spelling, and which spelling it was; both at once is ambiguous.
fn either<'v, 'a>(
    m: &'v [(Cow<'a, str>, Value<'a>)],
    v: &Value,
    keys: [&'static str; 2],
    path: Path,
) -> Result<(Option<&'v Value<'a>>, &'static str)> {
    let [misspelled, correct] = keys;
    match (get(m, misspelled), get(m, correct)) {
        (Some(_), Some(_)) => Err(fail(
            v,
            path,
            format!("both {misspelled:?} and {correct:?} are given"),
        )),
        (Some(x), None) => Ok((Some(x), misspelled)),
        (None, x) => Ok((x, correct)),
    }
}

fn item_id(m: &[(Cow<str>, Value)], index: usize, path: Path) -> Result<i16> {
    match get(m, "id") {
        Some(v) => int16(v, &|| format!("{}.id", path())),
        None => i16::try_from(index).map_err(|_| {
            Error::limit(format!(
                "{}: past the 32768 items 16-bit ids number",
                path()
            ))
        }),
    }
}

/// Checks the document streamed by [`parse`] and hands over what its lists became, with where
/// their items start; the document itself (the few members left in `root`) is dropped here.
pub(crate) fn read<'a>(
    root: Value<'a>,
    streamed: Streamed,
    data: &'a [u8],
    ck: &mut Checker,
) -> Result<(Doc<'static>, Places<'a>)> {
    let top = || "the document".to_owned();
    let Kind::Object(m) = &root.kind else {
        return Err(Error::unknown_format(format!(
            "the document is {}, not a DMF object",
            root.kind_name()
        ))
        .on_line(root.line));
    };
    match get(m, "format").map(|f| &f.kind) {
        Some(Kind::String(s)) if s == "DASH" => {}
        _ => {
            return Err(Error::unknown_format(
                "the document's \"format\" is not \"DASH\" (not a DMF JSON file)",
            )
            .on_line(get(m, "format").map_or(root.line, |f| f.line)));
        }
    }
    match get(m, "version") {
        Some(v) => {
            let ok = match &v.kind {
                Kind::String(s) => s == "1.5",
                Kind::Number(n) => n.parse::<f64>().ok() == Some(1.5),
                _ => false,
            };
            if !ok {
                let text = match &v.kind {
                    Kind::String(s) => s.to_string(),
                    Kind::Number(n) => n.to_string(),
                    _ => v.kind_name().to_owned(),
                };
                return Err(
                    Error::unsupported(format!("version {text}; only DMF 1.5 is read"))
                        .on_line(v.line),
                );
            }
        }
        None => ck.tolerate(
            Error::malformed("the document has no \"version\"; read as 1.5").on_line(root.line),
        )?,
    }
    let (vertices, vertex_key) = either(m, &root, ["verterices", "vertices"], &top)?;
    let keys = [
        "textures",
        "materials",
        vertex_key,
        "faces",
        "skeleton",
        "animations",
    ];
    let Streamed {
        doc,
        rows,
        tracks,
        track_base,
        errors,
        unknown,
        root_line,
        ..
    } = streamed;
    // Each list as the document gives it (an array, whose items were taken as they were
    // parsed), then the first of its items that broke a rule, in list order.
    for ((key, list), error) in keys
        .into_iter()
        .zip([
            get(m, "textures"),
            get(m, "materials"),
            vertices,
            get(m, "faces"),
            get(m, "skeleton"),
            get(m, "animations"),
        ])
        .zip(errors)
    {
        if let Some(v) = list {
            array(v, &|| key.to_owned())?;
        }
        if let Some(e) = error {
            return Err(e);
        }
    }
    // Strict mode refused the first as it was parsed.
    if let Some((path, line, offset)) = unknown.first
        && !ck.strict()
    {
        ck.tolerate(
            Error::malformed(format!(
                "{path}: a key DMF 1.5 does not define ({} such keys are ignored)",
                unknown.count
            ))
            .on_line(line)
            .at(offset),
        )?;
    }
    Ok((
        doc,
        Places {
            data,
            keys,
            rows,
            tracks,
            track_base,
            root_line,
        },
    ))
}

fn texture(v: &Value, i: usize) -> Result<DTexture<'static>> {
    let path = || format!("textures[{i}]");
    let m = members(v, &path)?;
    let field = |k: &'static str| move || format!("textures[{i}].{k}");
    let img = required(m, v, "img", &path)?;
    let url = string(img, &field("img"))?;
    let data = url
        .strip_prefix(DATA_URL)
        .ok_or_else(|| fail(img, &field("img"), format!("not a {DATA_URL}... URL")))?;
    let image = base64_decode(data).map_err(|e| fail(img, &field("img"), e))?;
    let opt = |key: &'static str, read: &dyn Fn(&Value, Path) -> Result<u16>| -> Result<u16> {
        get(m, key).map_or(Ok(0), |x| read(x, &field(key)))
    };
    Ok(DTexture {
        id: item_id(m, i, &path)?,
        name: name(required(m, v, "name", &path)?, &field("name"))?,
        flip_y: opt("flip_y", &flag)?,
        width: uint16(required(m, v, "width", &path)?, &field("width"))?,
        height: uint16(required(m, v, "height", &path)?, &field("height"))?,
        wrap_s: opt("wrap_s", &|x, p| choice(x, p, WRAP))?,
        wrap_t: opt("wrap_t", &|x, p| choice(x, p, WRAP))?,
        image: Cow::Owned(image),
    })
}

fn material(v: &Value, i: usize) -> Result<DMaterial> {
    let path = || format!("materials[{i}]");
    let m = members(v, &path)?;
    let field = |k: &'static str| move || format!("materials[{i}].{k}");
    let texture = match get(m, "texture") {
        None => -1,
        Some(t) if matches!(t.kind, Kind::Null) => -1,
        Some(t) => int16(t, &field("texture"))?,
    };
    let mut flags = [0u16; 12];
    for ((f, key), names) in flags.iter_mut().zip(MATERIAL_FLAGS).zip(FLAG_NAMES) {
        *f = match (get(m, key), names) {
            (Some(x), Some(names)) => choice(x, &field(key), names)?,
            (Some(x), None) => flag(x, &field(key))?,
            // The spec: vertex colours should be assumed on.
            (None, _) => u16::from(key == "vertex_color"),
        };
    }
    let mut colours = [0.0f32; 13];
    let [alpha_test, rest @ ..] = &mut colours;
    if let Some(x) = get(m, "alpha_test") {
        *alpha_test = number(x, &field("alpha_test"))?;
    }
    for (key, chunk) in ["diffuse", "emissive", "specular"]
        .into_iter()
        .zip(rest.chunks_exact_mut(4))
    {
        let value: [f32; 4] = match get(m, key) {
            Some(x) => floats(x, &field(key))?,
            None if key == "diffuse" => [1.0; 4],
            None => [0.0; 4],
        };
        chunk.copy_from_slice(&value);
    }
    Ok(DMaterial {
        id: item_id(m, i, &path)?,
        name: name(required(m, v, "name", &path)?, &field("name"))?,
        texture,
        flags,
        colours,
    })
}

fn vertex(v: &Value, path: Path) -> Result<DVertex> {
    let m = members(v, path)?;
    let field = |k: &'static str| move || format!("{}.{k}", path());
    let mut out = DVertex {
        pos: floats(required(m, v, "pos", path)?, &field("pos"))?,
        skin_index: [0; 4],
        skin_weight: [0.0; 4],
    };
    if let Some(x) = get(m, "skin_index") {
        let items = array(x, &field("skin_index"))?;
        if items.len() > 4 {
            return Err(fail(x, &field("skin_index"), "more than 4 bones"));
        }
        for (k, (o, item)) in out.skin_index.iter_mut().zip(items).enumerate() {
            *o = int16(item, &|| format!("{}.skin_index[{k}]", path()))?;
        }
    }
    if let Some(x) = get(m, "skin_weight") {
        let items = array(x, &field("skin_weight"))?;
        if items.len() > 4 {
            return Err(fail(x, &field("skin_weight"), "more than 4 weights"));
        }
        for (k, (o, item)) in out.skin_weight.iter_mut().zip(items).enumerate() {
            *o = number(item, &|| format!("{}.skin_weight[{k}]", path()))?;
        }
    }
    Ok(out)
}

fn face(v: &Value, path: Path) -> Result<DFace> {
    let m = members(v, path)?;
    let field = |k: &'static str| move || format!("{}.{k}", path());
    let (colors, color_key) = either(m, v, ["verex_color", "vertex_color"], path)?;
    Ok(DFace {
        material: uint16(required(m, v, "material", path)?, &field("material"))?,
        indices: corners(
            required(m, v, "indices", path)?,
            &field("indices"),
            |x, p| Ok(integer(x, p, 0, i64::from(u32::MAX))? as u32),
        )?,
        colors: match colors {
            Some(x) => corners(x, &field(color_key), colour)?,
            None => [[255; 4]; 3],
        },
        normals: match get(m, "normals") {
            Some(x) => corners(x, &field("normals"), floats::<3>)?,
            None => [[0.0; 3]; 3],
        },
        uvs: match get(m, "diffuse_uv") {
            Some(x) => corners(x, &field("diffuse_uv"), floats::<2>)?,
            None => [[0.0; 2]; 3],
        },
    })
}

fn bone(v: &Value, i: usize) -> Result<DBone> {
    let path = || format!("skeleton[{i}]");
    let m = members(v, &path)?;
    let field = |k: &'static str| move || format!("skeleton[{i}].{k}");
    let parent = required(m, v, "parent_id", &path)?;
    Ok(DBone {
        id: item_id(m, i, &path)?,
        name: name(required(m, v, "name", &path)?, &field("name"))?,
        parent: if matches!(parent.kind, Kind::Null) {
            -1
        } else {
            int16(parent, &field("parent_id"))?
        },
        matrix: floats(required(m, v, "matrix", &path)?, &field("matrix"))?,
    })
}

fn track(t: &Value, i: usize, k: usize) -> Result<DTrack> {
    let tpath = || format!("animations[{i}].tracks[{k}]");
    let tm = members(t, &tpath)?;
    let tfield = |key: &'static str| move || format!("animations[{i}].tracks[{k}].{key}");
    let mut track = DTrack {
        bone: int16(required(tm, t, "bone_id", &tpath)?, &tfield("bone_id"))?,
        flags: 0,
        time: number(required(tm, t, "time", &tpath)?, &tfield("time"))?,
        pos: [0.0; 3],
        rot: [0.0; 4],
        scl: [0.0; 3],
    };
    if let Some(x) = get(tm, "pos") {
        track.pos = floats(x, &tfield("pos"))?;
        track.flags |= KEY_POSITION as i16;
    }
    if let Some(x) = get(tm, "rot") {
        track.rot = floats(x, &tfield("rot"))?;
        track.flags |= KEY_ROTATION as i16;
    }
    if let Some(x) = get(tm, "scl") {
        track.scl = floats(x, &tfield("scl"))?;
        track.flags |= KEY_SCALE as i16;
    }
    Ok(track)
}

/// Animation `i`, whose tracks were read as they were parsed (its `tracks` member is left as
/// an empty array).
fn animation(v: &Value, i: usize, tracks: Vec<DTrack>) -> Result<DAnimation> {
    let path = || format!("animations[{i}]");
    let m = members(v, &path)?;
    let field = |k: &'static str| move || format!("animations[{i}].{k}");
    array(required(m, v, "tracks", &path)?, &field("tracks"))?;
    Ok(DAnimation {
        id: item_id(m, i, &path)?,
        name: name(required(m, v, "name", &path)?, &field("name"))?,
        fps: uint16(required(m, v, "fps", &path)?, &field("fps"))?,
        duration: number(required(m, v, "duration", &path)?, &field("duration"))?,
        tracks,
    })
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

fn put_floats(out: &mut String, values: &[f32]) {
    out.push('[');
    for (k, v) in values.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        put_f32(out, *v);
    }
    out.push(']');
}

fn put_flag(out: &mut String, v: u16) {
    match v {
        0 => out.push_str("false"),
        1 => out.push_str("true"),
        n => out.push_str(&n.to_string()),
    }
}

fn put_choice(out: &mut String, v: u16, names: &[&str]) {
    match names.get(v as usize) {
        Some(n) => put_string(out, n),
        None => out.push_str(&v.to_string()),
    }
}

/// `"key": ` after a separator.
fn key(out: &mut String, first: bool, k: &str) {
    if !first {
        out.push_str(", ");
    }
    put_string(out, k);
    out.push_str(": ");
}

fn put_name(out: &mut String, n: &Name) {
    put_string(out, &n.to_string_lossy());
}

fn put_colour(out: &mut String, c: [u8; 4]) {
    let [r, g, b, a] = c;
    let mut s = format!("rgba({r}, {g}, {b}, ");
    put_f32(&mut s, f32::from(a) / 255.0);
    s.push(')');
    put_string(out, &s);
}

/// Writes a list as `"key": [` with one item per line, each written by `item`.
fn put_list<T>(out: &mut String, name: &str, items: &[T], item: impl Fn(&mut String, &T)) {
    out.push_str(",\n  ");
    put_string(out, name);
    out.push_str(": [");
    for (k, x) in items.iter().enumerate() {
        out.push_str(if k > 0 { ",\n    " } else { "\n    " });
        item(out, x);
    }
    out.push_str(if items.is_empty() { "]" } else { "\n  ]" });
}

/// The document as pretty JSON: keys in the spec's order, one item per line.
pub(crate) fn write(doc: &Doc) -> String {
    let mut out = String::from("{\n  \"format\": \"DASH\",\n  \"version\": \"1.5\"");
    put_list(&mut out, "textures", &doc.textures, |o, t| {
        o.push('{');
        key(o, true, "id");
        o.push_str(&t.id.to_string());
        key(o, false, "name");
        put_name(o, &t.name);
        key(o, false, "flip_y");
        put_flag(o, t.flip_y);
        key(o, false, "img");
        put_string(o, &format!("{DATA_URL}{}", base64_encode(&t.image)));
        key(o, false, "width");
        o.push_str(&t.width.to_string());
        key(o, false, "height");
        o.push_str(&t.height.to_string());
        key(o, false, "wrap_s");
        put_choice(o, t.wrap_s, WRAP);
        key(o, false, "wrap_t");
        put_choice(o, t.wrap_t, WRAP);
        o.push('}');
    });
    put_list(&mut out, "materials", &doc.materials, |o, m| {
        o.push('{');
        key(o, true, "id");
        o.push_str(&m.id.to_string());
        key(o, false, "name");
        put_name(o, &m.name);
        key(o, false, "texture");
        o.push_str(&m.texture.to_string());
        for ((f, k), names) in m.flags.iter().zip(MATERIAL_FLAGS).zip(FLAG_NAMES) {
            key(o, false, k);
            match names {
                Some(names) => put_choice(o, *f, names),
                None => put_flag(o, *f),
            }
        }
        let [alpha_test, rest @ ..] = &m.colours;
        key(o, false, "alpha_test");
        put_f32(o, *alpha_test);
        for (k, chunk) in ["diffuse", "emissive", "specular"]
            .into_iter()
            .zip(rest.chunks_exact(4))
        {
            key(o, false, k);
            put_floats(o, chunk);
        }
        o.push('}');
    });
    put_list(&mut out, "vertices", &doc.vertices, |o, v| {
        o.push('{');
        key(o, true, "pos");
        put_floats(o, &v.pos);
        key(o, false, "skin_index");
        let index: Vec<String> = v.skin_index.iter().map(i16::to_string).collect();
        o.push_str(&format!("[{}]", index.join(", ")));
        key(o, false, "skin_weight");
        put_floats(o, &v.skin_weight);
        o.push('}');
    });
    put_list(&mut out, "faces", &doc.faces, |o, f| {
        o.push('{');
        key(o, true, "material");
        o.push_str(&f.material.to_string());
        key(o, false, "indices");
        let [a, b, c] = f.indices;
        o.push_str(&format!("[{a}, {b}, {c}]"));
        key(o, false, "vertex_color");
        o.push('[');
        for (k, c) in f.colors.iter().enumerate() {
            if k > 0 {
                o.push_str(", ");
            }
            put_colour(o, *c);
        }
        o.push(']');
        for (name, lists) in [
            ("normals", f.normals.map(|n| n.to_vec())),
            ("diffuse_uv", f.uvs.map(|n| n.to_vec())),
        ] {
            key(o, false, name);
            o.push('[');
            for (k, l) in lists.iter().enumerate() {
                if k > 0 {
                    o.push_str(", ");
                }
                put_floats(o, l);
            }
            o.push(']');
        }
        o.push('}');
    });
    put_list(&mut out, "skeleton", &doc.bones, |o, b| {
        o.push('{');
        key(o, true, "id");
        o.push_str(&b.id.to_string());
        key(o, false, "name");
        put_name(o, &b.name);
        key(o, false, "parent_id");
        o.push_str(&b.parent.to_string());
        key(o, false, "matrix");
        put_floats(o, &b.matrix);
        o.push('}');
    });
    put_list(&mut out, "animations", &doc.animations, |o, a| {
        o.push('{');
        key(o, true, "id");
        o.push_str(&a.id.to_string());
        key(o, false, "name");
        put_name(o, &a.name);
        key(o, false, "fps");
        o.push_str(&a.fps.to_string());
        key(o, false, "duration");
        put_f32(o, a.duration);
        key(o, false, "tracks");
        o.push('[');
        for (k, t) in a.tracks.iter().enumerate() {
            o.push_str(if k > 0 { ",\n      " } else { "\n      " });
            o.push('{');
            key(o, true, "bone_id");
            o.push_str(&t.bone.to_string());
            key(o, false, "time");
            put_f32(o, t.time);
            for (bit, name, values) in [
                (KEY_POSITION, "pos", &t.pos[..]),
                (KEY_ROTATION, "rot", &t.rot[..]),
                (KEY_SCALE, "scl", &t.scl[..]),
            ] {
                if t.flags as u16 & bit != 0 {
                    key(o, false, name);
                    put_floats(o, values);
                }
            }
            o.push('}');
        }
        o.push_str(if a.tracks.is_empty() { "]" } else { "\n    ]" });
        o.push('}');
    });
    out.push_str("\n}\n");
    out
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn material_keys_end_with_the_flags() {
        assert_eq!(MATERIAL_KEYS[MATERIAL_KEYS.len() - 12..], MATERIAL_FLAGS);
    }
}
