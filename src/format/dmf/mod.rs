//! DashGL's Dash Model Format 1.5, binary and JSON.
//!
//! Both forms hold the same six lists (textures, materials, vertices, faces, bones, animations)
//! and are read into one document ([`Doc`]) that a single set of rules turns into the shared
//! model (`build`); the writers go the other way (`export`), so that a file ossa writes reads
//! back to the same model and binary, JSON and binary again give the same bytes.
//!
//! Vertices are unique positions with up to four weights, in model space at the bind pose;
//! normals, texcoords and colours belong to face corners, so a vertex splits into one ossa
//! vertex per distinct corner. Each material with faces becomes a mesh. Bones carry local
//! column-major 4x4 matrices whose product down the hierarchy is the bind pose; skinning is
//! linear blend skinning against its inverse. Animations are keyframe tracks, sampled into
//! frames at their rate.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

mod binary;
mod build;
mod export;
mod json;

use std::borrow::Cow;

use super::Checker;
use crate::error::{Error, Result};
use crate::model::{Material, Model, ModelParts, Name};

pub const MAGIC: &[u8; 4] = b"DASH";

/// Whether `data` looks like DMF JSON: an object mentioning `"DASH"` (its format key's value).
pub fn looks_like_json(data: &[u8]) -> bool {
    data.trim_ascii_start().starts_with(b"{") && data.windows(6).any(|w| w == b"\"DASH\"")
}

/// Reads a binary DMF.
pub(crate) fn read_binary(data: &[u8], ck: &mut Checker) -> Result<ModelParts> {
    let (doc, places) = binary::read(data)?;
    build::build(&doc, &places, ck, crate::format::Format::Dmf)
}

/// Reads a DMF JSON file.
pub(crate) fn read_json(data: &[u8], ck: &mut Checker) -> Result<ModelParts> {
    // The document is streamed into the structures the model is built from; what is left of
    // its tree (the few members that are not lists) is dropped before the model is built.
    let (root, streamed) = json::parse(data, ck)?;
    let (doc, places) = json::read(root, streamed, data, ck)?;
    build::build(&doc, &places, ck, crate::format::Format::DmfJson)
}

/// Writes a model as binary DMF 1.5. A model loaded from DMF writes back its own structures;
/// another (a DPM, say) is written where it fits: at most 4 influences per vertex, bone names
/// of 1 to 31 bytes, unique, whole-number frame rates ([`Error`] `Unsupported` or `Limit` else).
pub fn write_binary(model: &Model) -> Result<Vec<u8>> {
    binary::write(&export::export(model)?)
}

/// Writes a model as DMF 1.5 JSON, with the same rules as [`write_binary`]; names must be
/// UTF-8 text, as JSON holds no other (`Unsupported` else).
pub fn write_json(model: &Model) -> Result<Vec<u8>> {
    let doc = export::export(model)?;
    let names = doc
        .textures
        .iter()
        .map(|t| (Table::Textures, &t.name))
        .chain(doc.materials.iter().map(|m| (Table::Materials, &m.name)))
        .chain(doc.bones.iter().map(|b| (Table::Bones, &b.name)))
        .chain(doc.animations.iter().map(|a| (Table::Animations, &a.name)));
    for (table, name) in names {
        if std::str::from_utf8(name.as_bytes()).is_err() {
            return Err(Error::unsupported(format!(
                "{} name {name:?} is not UTF-8 text, which JSON cannot hold",
                table.singular()
            )));
        }
    }
    Ok(json::write(&doc).into_bytes())
}

/// Longest name of a texture, material or animation; bones hold one byte less (their names
/// are NUL-terminated).
pub(crate) const NAME_SIZE: usize = 32;
pub(crate) const BONE_NAME_MAX: usize = 31;

/// The twelve `u16` fields of a material, in file order, and the names JSON gives them.
pub(crate) const MATERIAL_FLAGS: [&str; 12] = [
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

/// A texture as both forms hold it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DTexture<'a> {
    pub id: i16,
    pub name: Name,
    pub flip_y: u16,
    pub width: u16,
    pub height: u16,
    pub wrap_s: u16,
    pub wrap_t: u16,
    pub image: Cow<'a, [u8]>,
}

/// A material: `texture` is -1 for none; `flags` as [`MATERIAL_FLAGS`] orders them; `colours`
/// are alpha_test, diffuse[4], emissive[4], specular[4].
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DMaterial {
    pub id: i16,
    pub name: Name,
    pub texture: i16,
    pub flags: [u16; 12],
    pub colours: [f32; 13],
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct DVertex {
    pub pos: [f32; 3],
    pub skin_index: [i16; 4],
    pub skin_weight: [f32; 4],
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct DFace {
    pub material: u16,
    pub indices: [u32; 3],
    pub colors: [[u8; 4]; 3],
    pub normals: [[f32; 3]; 3],
    pub uvs: [[f32; 2]; 3],
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DBone {
    pub id: i16,
    pub name: Name,
    pub parent: i16,
    /// Column-major: translation in elements 12, 13, 14.
    pub matrix: [f32; 16],
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct DTrack {
    pub bone: i16,
    /// Bit 0 position, bit 1 rotation, bit 2 scale.
    pub flags: i16,
    pub time: f32,
    pub pos: [f32; 3],
    pub rot: [f32; 4],
    pub scl: [f32; 3],
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DAnimation {
    pub id: i16,
    pub name: Name,
    pub fps: u16,
    pub duration: f32,
    pub tracks: Vec<DTrack>,
}

/// A whole file, either form.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Doc<'a> {
    pub textures: Vec<DTexture<'a>>,
    pub materials: Vec<DMaterial>,
    pub vertices: Vec<DVertex>,
    pub faces: Vec<DFace>,
    pub bones: Vec<DBone>,
    pub animations: Vec<DAnimation>,
}

/// The six lists, in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Table {
    Textures,
    Materials,
    Vertices,
    Faces,
    Bones,
    Animations,
}

/// A field of an item of a [`Table`], for placing an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    /// The item as a whole.
    Record,
    Id,
    Name,
    Image,
    /// A material's texture.
    Texture,
    /// A material's float `k`: alpha_test, diffuse[4], emissive[4], specular[4].
    Colour(usize),
    Pos(usize),
    SkinIndex(usize),
    SkinWeight(usize),
    /// A face's material.
    Material,
    Index(usize),
    Normal(usize),
    Uv(usize),
    Parent,
    Matrix(usize),
    Fps,
    Duration,
    Track(usize, TrackField),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TrackField {
    Bone,
    Flags,
    Time,
    Position,
    Rotation,
    Scale,
}

/// Where an item's field lies in the file it was read from: names it in a message and gives
/// its byte offset (binary) or line (JSON).
pub(crate) trait Locate {
    fn place(&self, e: Error, table: Table, index: usize, field: Field) -> Error;

    /// Heap the places hold while the model is built.
    fn held(&self) -> u64 {
        0
    }
}

/// Heap a vector's room holds.
fn room<T>(v: &Vec<T>) -> u64 {
    (v.capacity() as u64).saturating_mul(std::mem::size_of::<T>() as u64)
}

impl Doc<'_> {
    /// Heap the document holds, its images aside (the model's estimate counts them).
    pub fn heap_bytes(&self) -> u64 {
        let names = self
            .textures
            .iter()
            .map(|t| t.name.heap_bytes() as u64)
            .chain(self.materials.iter().map(|m| m.name.heap_bytes() as u64))
            .chain(self.bones.iter().map(|b| b.name.heap_bytes() as u64))
            .chain(
                self.animations
                    .iter()
                    .map(|a| (a.name.heap_bytes() as u64).saturating_add(room(&a.tracks))),
            );
        super::total([self.lists_bytes()].into_iter().chain(names))
    }

    /// Heap the six lists' own room holds, without what their items hold.
    pub fn lists_bytes(&self) -> u64 {
        super::total(
            [
                room(&self.textures),
                room(&self.materials),
                room(&self.vertices),
                room(&self.faces),
                room(&self.bones),
                room(&self.animations),
            ]
            .into_iter(),
        )
    }
}

impl DMaterial {
    pub fn to_model(&self, texture: Option<u32>) -> Material {
        let [
            use_blending,
            blend_equation,
            blend_src,
            blend_dst,
            skinning,
            shader_type,
            face_side,
            shadow_side,
            ignore_lights,
            vertex_color,
            use_alpha,
            skip_render,
        ] = self.flags;
        let [a, c @ ..] = self.colours;
        let part = |k: usize| -> [f32; 4] {
            let mut out = [0.0; 4];
            for (o, v) in out.iter_mut().zip(c.iter().skip(k.saturating_mul(4))) {
                *o = *v;
            }
            out
        };
        Material {
            id: self.id,
            name: self.name.clone(),
            texture,
            use_blending,
            blend_equation,
            blend_src,
            blend_dst,
            skinning,
            shader_type,
            face_side,
            shadow_side,
            ignore_lights,
            vertex_color,
            use_alpha,
            skip_render,
            alpha_test: a,
            diffuse: part(0),
            emissive: part(1),
            specular: part(2),
        }
    }

    pub fn from_model(m: &Material, texture: i16) -> DMaterial {
        let mut colours = [0.0f32; 13];
        for (o, v) in colours.iter_mut().zip(
            [m.alpha_test]
                .iter()
                .chain(&m.diffuse)
                .chain(&m.emissive)
                .chain(&m.specular),
        ) {
            *o = *v;
        }
        DMaterial {
            id: m.id,
            name: m.name.clone(),
            texture,
            flags: [
                m.use_blending,
                m.blend_equation,
                m.blend_src,
                m.blend_dst,
                m.skinning,
                m.shader_type,
                m.face_side,
                m.shadow_side,
                m.ignore_lights,
                m.vertex_color,
                m.use_alpha,
                m.skip_render,
            ],
            colours,
        }
    }
}

/// A step of the path to a field: a key of an object, or a position in an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(&'static str),
    Index(usize),
}

impl Table {
    /// The name of one item in messages about a binary file.
    pub fn singular(self) -> &'static str {
        match self {
            Table::Textures => "texture",
            Table::Materials => "material",
            Table::Vertices => "vertex",
            Table::Faces => "face",
            Table::Bones => "bone",
            Table::Animations => "animation",
        }
    }
}

impl Field {
    /// The path from an item to the field, with the JSON keys as names (binary messages use
    /// them too, so both forms name a field alike).
    pub fn path(self) -> Vec<Seg> {
        use Seg::{Index, Key};
        match self {
            Field::Record => vec![],
            Field::Id => vec![Key("id")],
            Field::Name => vec![Key("name")],
            Field::Image => vec![Key("img")],
            Field::Texture => vec![Key("texture")],
            Field::Colour(0) => vec![Key("alpha_test")],
            Field::Colour(k) => {
                let k = k.saturating_sub(1);
                let key = ["diffuse", "emissive", "specular"]
                    .get(k / 4)
                    .copied()
                    .unwrap_or("specular");
                vec![Key(key), Index(k % 4)]
            }
            Field::Pos(k) => vec![Key("pos"), Index(k)],
            Field::SkinIndex(k) => vec![Key("skin_index"), Index(k)],
            Field::SkinWeight(k) => vec![Key("skin_weight"), Index(k)],
            Field::Material => vec![Key("material")],
            Field::Index(k) => vec![Key("indices"), Index(k)],
            Field::Normal(k) => vec![Key("normals"), Index(k)],
            Field::Uv(k) => vec![Key("diffuse_uv"), Index(k)],
            Field::Parent => vec![Key("parent_id")],
            Field::Matrix(k) => vec![Key("matrix"), Index(k)],
            Field::Fps => vec![Key("fps")],
            Field::Duration => vec![Key("duration")],
            Field::Track(k, f) => {
                let mut p = vec![Key("tracks"), Index(k)];
                match f {
                    TrackField::Flags => {}
                    TrackField::Bone => p.push(Key("bone_id")),
                    TrackField::Time => p.push(Key("time")),
                    TrackField::Position => p.push(Key("pos")),
                    TrackField::Rotation => p.push(Key("rot")),
                    TrackField::Scale => p.push(Key("scl")),
                }
                p
            }
        }
    }
}

/// `segs` as text: `skin_weight[1]`, `tracks[3].time`; `dot` puts a `.` before a leading key.
pub(crate) fn path_text(segs: &[Seg], dot: bool) -> String {
    let mut s = String::new();
    for (i, seg) in segs.iter().enumerate() {
        match seg {
            Seg::Key(k) => {
                if i > 0 || dot {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(n) => s.push_str(&format!("[{n}]")),
        }
    }
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::format::{Format, LoadOptions};

    /// The binary form of the fuzz finding in `tests/fuzz_regressions.rs`: a document without
    /// bones whose animation has no tracks (no writer of models makes one, as a model without
    /// bones has no animations, so the JSON document's structures are written as binary).
    #[test]
    fn a_binary_dmf_without_bones_drops_its_animations_with_their_keyframes() {
        let text = br#"{"format": "DASH", "version": "1.5", "textures": [],
          "materials": [{"id": 0, "name": "m", "texture": -1}],
          "animations": [{"id": 0, "name": "wave", "fps": 10, "duration": 0.1, "tracks": []}]}"#;
        let mut ck = Checker::new(&LoadOptions::default(), false, text.len());
        let (root, streamed) = json::parse(text, &mut ck).unwrap();
        let (doc, _) = json::read(root, streamed, text, &mut ck).unwrap();
        assert_eq!(doc.animations.len(), 1);
        let bytes = binary::write(&doc).unwrap();
        let options = LoadOptions {
            format: Format::Dmf,
            ..LoadOptions::default()
        };
        let m = Model::load(&bytes, &options).unwrap();
        assert_eq!(
            (m.bones().len(), m.animations().len(), m.keyframes().len()),
            (0, 0, 0)
        );
        assert_eq!(
            m.warnings()[0].to_string(),
            "the model has no bones, so its animation is left out"
        );
    }
}
