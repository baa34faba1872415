//! The binary form: little-endian, a 16-byte header, an attribute table of six entries
//! (label, flags, offset, count) and fixed-size records; textures point at their PNG bytes and
//! animations at their tracks. Every table is checked against the file before it is read, and
//! no two structures may share bytes, so what is allocated is bounded by the file's size.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::borrow::Cow;

use byteorder::{ByteOrder, LittleEndian};

use super::{
    DAnimation, DBone, DFace, DMaterial, DTexture, DTrack, DVertex, Doc, Field, Locate, MAGIC,
    NAME_SIZE, Table, TrackField, path_text,
};
use crate::cursor::{f32_at, span, u32_at};
use crate::error::{Error, Result, ResultExt};
use crate::format::binary::{Part, Regions, put_f32, put_name, put_u32, table};
use crate::model::Name;

type Le = LittleEndian;

const HEADER_SIZE: u64 = 0x10;
const ATTRIBUTE_SIZE: u64 = 0x10;
const ATTRIBUTES: u32 = 6;
/// The attribute labels in table order: "tex\0", "mat\0", "vert", "face", "bone", "anim".
const LABELS: [&[u8; 4]; 6] = [b"tex\0", b"mat\0", b"vert", b"face", b"bone", b"anim"];
const TABLES: [Table; 6] = [
    Table::Textures,
    Table::Materials,
    Table::Vertices,
    Table::Faces,
    Table::Bones,
    Table::Animations,
];
const PARTS: [Part; 6] = [
    Part::Textures,
    Part::Materials,
    Part::VertexList,
    Part::Faces,
    Part::Bones,
    Part::Animations,
];
const TEXTURE_SIZE: usize = 0x40;
const MATERIAL_SIZE: usize = 0x70;
const VERTEX_SIZE: usize = 0x24;
const FACE_SIZE: usize = 0x58;
const BONE_SIZE: usize = 0x70;
const ANIMATION_SIZE: usize = 0x30;
const TRACK_SIZE: usize = 0x30;
/// Record sizes in table order.
const SIZES: [usize; 6] = [
    TEXTURE_SIZE,
    MATERIAL_SIZE,
    VERTEX_SIZE,
    FACE_SIZE,
    BONE_SIZE,
    ANIMATION_SIZE,
];

fn u16_at(rec: &[u8], at: usize) -> u16 {
    rec.get(at..at.wrapping_add(2)).map_or(0, Le::read_u16)
}

fn i16_at(rec: &[u8], at: usize) -> i16 {
    u16_at(rec, at) as i16
}

fn shorts<const N: usize>(rec: &[u8], at: usize) -> [u16; N] {
    let mut out = [0u16; N];
    for (k, v) in out.iter_mut().enumerate() {
        *v = u16_at(rec, at.wrapping_add(k.wrapping_mul(2)));
    }
    out
}

fn floats<const N: usize>(rec: &[u8], at: usize) -> [f32; N] {
    let mut out = [0.0f32; N];
    for (k, v) in out.iter_mut().enumerate() {
        *v = f32_at::<Le>(rec, at.wrapping_add(k.wrapping_mul(4)));
    }
    out
}

/// Where each table and each animation's tracks start, to place errors at their bytes.
pub(crate) struct Places {
    tables: [u64; 6],
    tracks: Vec<u64>,
}

impl Locate for Places {
    fn place(&self, e: Error, table: Table, index: usize, field: Field) -> Error {
        let t = TABLES.iter().position(|&x| x == table).unwrap_or_default();
        let base = self.tables.get(t).copied().unwrap_or_default();
        let size = SIZES.get(t).copied().unwrap_or_default() as u64;
        let record = base.saturating_add((index as u64).saturating_mul(size));
        let within =
            |k: usize, first: u64, step: u64| first.saturating_add((k as u64).saturating_mul(step));
        let at = match (table, field) {
            (_, Field::Record | Field::Name) => record,
            (_, Field::Id) => record.saturating_add(0x20),
            (Table::Textures, _) => record.saturating_add(0x24),
            (Table::Materials, Field::Texture) => record.saturating_add(0x22),
            (Table::Materials, Field::Colour(k)) => record.saturating_add(within(k, 0x3c, 4)),
            (Table::Vertices, Field::Pos(k)) => record.saturating_add(within(k, 0, 4)),
            (Table::Vertices, Field::SkinIndex(k)) => record.saturating_add(within(k, 12, 2)),
            (Table::Vertices, Field::SkinWeight(k)) => record.saturating_add(within(k, 20, 4)),
            (Table::Faces, Field::Index(k)) => record.saturating_add(within(k, 4, 4)),
            (Table::Faces, Field::Normal(k)) => record.saturating_add(within(k, 28, 12)),
            (Table::Faces, Field::Uv(k)) => record.saturating_add(within(k, 64, 8)),
            (Table::Bones, Field::Parent) => record.saturating_add(0x22),
            (Table::Bones, Field::Matrix(k)) => record.saturating_add(within(k, 0x30, 4)),
            (Table::Animations, Field::Fps) => record.saturating_add(0x22),
            (Table::Animations, Field::Duration) => record.saturating_add(0x2c),
            (Table::Animations, Field::Track(k, f)) => {
                let track = self
                    .tracks
                    .get(index)
                    .copied()
                    .unwrap_or_default()
                    .saturating_add(within(k, 0, TRACK_SIZE as u64));
                track.saturating_add(match f {
                    TrackField::Bone => 0,
                    TrackField::Flags => 2,
                    TrackField::Time => 4,
                    TrackField::Position => 8,
                    TrackField::Rotation => 20,
                    TrackField::Scale => 36,
                })
            }
            _ => record,
        };
        let mut what = format!("{} {index}", table.singular());
        let path = path_text(&field.path(), false);
        if !path.is_empty() {
            what.push(' ');
            what.push_str(&path);
        }
        e.within(what).at(at)
    }
}

/// Reads the structure of a binary DMF into a document, checking every table against the
/// file; the rules on the values are [`super::build`]'s.
pub(crate) fn read(data: &[u8]) -> Result<(Doc<'_>, Places)> {
    let n = data.len().min(MAGIC.len());
    if data.get(..n) != MAGIC.get(..n) {
        return Err(
            Error::unknown_format("header: magic is not \"DASH\" (not a binary DMF file)").at(0),
        );
    }
    let header = table(data, 0, 1, HEADER_SIZE, Part::Header)?;
    let (major, minor) = (u16_at(header, 4), u16_at(header, 6));
    if (major, minor) != (1, 5) {
        return Err(Error::unsupported(format!(
            "header: version {major}.{minor}; only DMF 1.5 is read"
        ))
        .at(4));
    }
    let table_at = u32_at::<Le>(header, 8);
    let count = u32_at::<Le>(header, 12);
    if count != ATTRIBUTES {
        return Err(Error::malformed(format!(
            "header: attribute count {count}; DMF 1.5 has {ATTRIBUTES} (textures, materials, vertices, faces, bones, animations)"
        ))
        .at(12));
    }
    let mut regions = Regions::default();
    regions.add(0, HEADER_SIZE, Part::Header);
    let attributes = table(data, table_at, ATTRIBUTES, ATTRIBUTE_SIZE, Part::Attributes)?;
    regions.add(
        u64::from(table_at),
        attributes.len() as u64,
        Part::Attributes,
    );
    let mut lists: [&[u8]; 6] = [&[]; 6];
    let mut tables = [0u64; 6];
    for (i, ((rec, label), ((list, start), (part, size)))) in attributes
        .as_chunks::<16>()
        .0
        .iter()
        .zip(LABELS)
        .zip(
            lists
                .iter_mut()
                .zip(tables.iter_mut())
                .zip(PARTS.iter().zip(SIZES)),
        )
        .enumerate()
    {
        let at = u64::from(table_at).saturating_add((i as u64).saturating_mul(ATTRIBUTE_SIZE));
        if rec.get(..4) != Some(label.as_slice()) {
            return Err(Error::malformed(format!(
                "attribute {i}: label {:?} is not {:?} (the table lists tex, mat, vert, face, bone, anim in this order)",
                String::from_utf8_lossy(rec.get(..4).unwrap_or_default()),
                String::from_utf8_lossy(label)
            ))
            .at(at));
        }
        let offset = u32_at::<Le>(rec, 8);
        let count = u32_at::<Le>(rec, 12);
        *list = table(data, offset, count, size as u64, *part).map_err(|e| {
            e.within(format!(
                "attribute {i} ({})",
                String::from_utf8_lossy(label).trim_end_matches('\0')
            ))
        })?;
        *start = u64::from(offset);
        regions.add(u64::from(offset), list.len() as u64, *part);
    }
    let [textures, materials, vertices, faces, bones, animations] = lists;

    // Second-level structures: each animation's tracks and each texture's image.
    let mut track_lists = Vec::with_capacity(animations.len() / ANIMATION_SIZE);
    let mut track_places = Vec::with_capacity(track_lists.capacity());
    for (a, rec) in animations
        .as_chunks::<ANIMATION_SIZE>()
        .0
        .iter()
        .enumerate()
    {
        let (offset, count) = (u32_at::<Le>(rec, 0x24), u32_at::<Le>(rec, 0x28));
        let part = Part::Tracks(a as u32);
        let bytes = table(data, offset, count, TRACK_SIZE as u64, part)?;
        regions.add(u64::from(offset), bytes.len() as u64, part);
        track_lists.push(bytes);
        track_places.push(u64::from(offset));
    }
    let mut images = Vec::with_capacity(textures.len() / TEXTURE_SIZE);
    for (t, rec) in textures.as_chunks::<TEXTURE_SIZE>().0.iter().enumerate() {
        let (offset, len) = (u32_at::<Le>(rec, 0x24), u32_at::<Le>(rec, 0x28));
        let (start, end) = span(u64::from(offset), u64::from(len), data.len())
            .within(|| format!("texture {t} image ({len} bytes)"))?;
        regions.add(u64::from(offset), u64::from(len), Part::Image(t as u32));
        images.push(data.get(start..end).unwrap_or_default());
    }
    regions.check_disjoint()?;

    let name = |rec: &[u8]| Name::new(rec.get(..NAME_SIZE).unwrap_or_default());
    let doc = Doc {
        textures: textures
            .as_chunks::<TEXTURE_SIZE>()
            .0
            .iter()
            .zip(images)
            .map(|(rec, image)| DTexture {
                id: i16_at(rec, 0x20),
                name: name(rec),
                flip_y: u16_at(rec, 0x22),
                width: u16_at(rec, 0x2c),
                height: u16_at(rec, 0x2e),
                wrap_s: u16_at(rec, 0x30),
                wrap_t: u16_at(rec, 0x32),
                image: Cow::Borrowed(image),
            })
            .collect(),
        materials: materials
            .as_chunks::<MATERIAL_SIZE>()
            .0
            .iter()
            .map(|rec| DMaterial {
                id: i16_at(rec, 0x20),
                name: name(rec),
                texture: i16_at(rec, 0x22),
                flags: shorts(rec, 0x24),
                colours: floats(rec, 0x3c),
            })
            .collect(),
        vertices: vertices
            .as_chunks::<VERTEX_SIZE>()
            .0
            .iter()
            .map(|rec| DVertex {
                pos: floats(rec, 0),
                skin_index: shorts::<4>(rec, 12).map(|v| v as i16),
                skin_weight: floats(rec, 20),
            })
            .collect(),
        faces: faces
            .as_chunks::<FACE_SIZE>()
            .0
            .iter()
            .map(|rec| {
                let mut colors = [[0u8; 4]; 3];
                for (k, c) in colors.iter_mut().enumerate() {
                    let at = 16usize.wrapping_add(k.wrapping_mul(4));
                    if let Some(b) = rec.get(at..at.wrapping_add(4)) {
                        c.copy_from_slice(b);
                    }
                }
                let n: [f32; 9] = floats(rec, 28);
                let uv: [f32; 6] = floats(rec, 64);
                let [n0, n1, n2, n3, n4, n5, n6, n7, n8] = n;
                let [u0, v0, u1, v1, u2, v2] = uv;
                DFace {
                    material: u16_at(rec, 0),
                    indices: [
                        u32_at::<Le>(rec, 4),
                        u32_at::<Le>(rec, 8),
                        u32_at::<Le>(rec, 12),
                    ],
                    colors,
                    normals: [[n0, n1, n2], [n3, n4, n5], [n6, n7, n8]],
                    uvs: [[u0, v0], [u1, v1], [u2, v2]],
                }
            })
            .collect(),
        bones: bones
            .as_chunks::<BONE_SIZE>()
            .0
            .iter()
            .map(|rec| DBone {
                id: i16_at(rec, 0x20),
                name: name(rec),
                parent: i16_at(rec, 0x22),
                matrix: floats(rec, 0x30),
            })
            .collect(),
        animations: animations
            .as_chunks::<ANIMATION_SIZE>()
            .0
            .iter()
            .zip(&track_lists)
            .map(|(rec, tracks)| DAnimation {
                id: i16_at(rec, 0x20),
                name: name(rec),
                fps: u16_at(rec, 0x22),
                duration: f32_at::<Le>(rec, 0x2c),
                tracks: tracks
                    .as_chunks::<TRACK_SIZE>()
                    .0
                    .iter()
                    .map(|t| DTrack {
                        bone: i16_at(t, 0),
                        flags: i16_at(t, 2),
                        time: f32_at::<Le>(t, 4),
                        pos: floats(t, 8),
                        rot: floats(t, 20),
                        scl: floats(t, 36),
                    })
                    .collect(),
            })
            .collect(),
    };
    Ok((
        doc,
        Places {
            tables,
            tracks: track_places,
        },
    ))
}

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_floats(out: &mut Vec<u8>, values: &[f32]) {
    for v in values {
        put_f32::<Le>(out, *v);
    }
}

fn offset(at: usize, what: &str) -> Result<u32> {
    u32::try_from(at).map_err(|_| {
        Error::limit(format!(
            "{what} would start at byte {at}, past the 4 GiB a DMF's offsets reach"
        ))
    })
}

fn count(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::limit(format!("{n} {what} do not fit a DMF's counts")))
}

/// Writes a document: header, attribute table, the six tables in order, each animation's
/// tracks, then each texture's image.
pub(crate) fn write(doc: &Doc) -> Result<Vec<u8>> {
    let lens = [
        doc.textures.len(),
        doc.materials.len(),
        doc.vertices.len(),
        doc.faces.len(),
        doc.bones.len(),
        doc.animations.len(),
    ];
    let mut at =
        HEADER_SIZE.saturating_add(ATTRIBUTE_SIZE.saturating_mul(u64::from(ATTRIBUTES))) as usize;
    let mut starts = [0usize; 6];
    for ((s, n), size) in starts.iter_mut().zip(lens).zip(SIZES) {
        *s = at;
        at = at.saturating_add(n.saturating_mul(size));
    }
    let mut track_starts = Vec::with_capacity(doc.animations.len());
    for a in &doc.animations {
        track_starts.push(at);
        at = at.saturating_add(a.tracks.len().saturating_mul(TRACK_SIZE));
    }
    let mut image_starts = Vec::with_capacity(doc.textures.len());
    for t in &doc.textures {
        image_starts.push(at);
        at = at.saturating_add(t.image.len());
    }
    offset(at, "the end of the file")?;

    let mut out = Vec::with_capacity(at);
    out.extend_from_slice(MAGIC);
    put_u16(&mut out, 1);
    put_u16(&mut out, 5);
    put_u32::<Le>(&mut out, HEADER_SIZE as u32);
    put_u32::<Le>(&mut out, ATTRIBUTES);
    for ((label, start), n) in LABELS.iter().zip(starts).zip(lens) {
        out.extend_from_slice(label.as_slice());
        put_u32::<Le>(&mut out, 0);
        put_u32::<Le>(&mut out, offset(start, "a table")?);
        put_u32::<Le>(&mut out, count(n, "records")?);
    }
    let name = |out: &mut Vec<u8>, n: &Name, what: &dyn Fn() -> String| {
        put_name(out, n, NAME_SIZE, NAME_SIZE, what)
    };
    for ((i, t), image_at) in doc.textures.iter().enumerate().zip(&image_starts) {
        name(&mut out, &t.name, &|| format!("texture {i}"))?;
        out.extend_from_slice(&t.id.to_le_bytes());
        put_u16(&mut out, t.flip_y);
        put_u32::<Le>(&mut out, offset(*image_at, "an image")?);
        put_u32::<Le>(&mut out, count(t.image.len(), "image bytes")?);
        for v in [t.width, t.height, t.wrap_s, t.wrap_t] {
            put_u16(&mut out, v);
        }
        out.resize(out.len().saturating_add(12), 0);
    }
    for (i, m) in doc.materials.iter().enumerate() {
        name(&mut out, &m.name, &|| format!("material {i}"))?;
        out.extend_from_slice(&m.id.to_le_bytes());
        out.extend_from_slice(&m.texture.to_le_bytes());
        for f in m.flags {
            put_u16(&mut out, f);
        }
        put_floats(&mut out, &m.colours);
    }
    for v in &doc.vertices {
        put_floats(&mut out, &v.pos);
        for s in v.skin_index {
            out.extend_from_slice(&s.to_le_bytes());
        }
        put_floats(&mut out, &v.skin_weight);
    }
    for f in &doc.faces {
        put_u16(&mut out, f.material);
        put_u16(&mut out, 0);
        for i in f.indices {
            put_u32::<Le>(&mut out, i);
        }
        for c in &f.colors {
            out.extend_from_slice(c);
        }
        put_floats(&mut out, f.normals.as_flattened());
        put_floats(&mut out, f.uvs.as_flattened());
    }
    for (i, b) in doc.bones.iter().enumerate() {
        name(&mut out, &b.name, &|| format!("bone {i}"))?;
        out.extend_from_slice(&b.id.to_le_bytes());
        out.extend_from_slice(&b.parent.to_le_bytes());
        out.resize(out.len().saturating_add(12), 0);
        put_floats(&mut out, &b.matrix);
    }
    for ((i, a), tracks_at) in doc.animations.iter().enumerate().zip(&track_starts) {
        name(&mut out, &a.name, &|| format!("animation {i}"))?;
        out.extend_from_slice(&a.id.to_le_bytes());
        put_u16(&mut out, a.fps);
        put_u32::<Le>(&mut out, offset(*tracks_at, "a track list")?);
        put_u32::<Le>(&mut out, count(a.tracks.len(), "tracks")?);
        put_f32::<Le>(&mut out, a.duration);
    }
    for a in &doc.animations {
        for t in &a.tracks {
            out.extend_from_slice(&t.bone.to_le_bytes());
            out.extend_from_slice(&t.flags.to_le_bytes());
            put_f32::<Le>(&mut out, t.time);
            put_floats(&mut out, &t.pos);
            put_floats(&mut out, &t.rot);
            put_floats(&mut out, &t.scl);
        }
    }
    for t in &doc.textures {
        out.extend_from_slice(&t.image);
    }
    debug_assert_eq!(out.len(), at);
    Ok(out)
}
