//! The rules of DMF 1.5, checked once for both forms, and the model they give: vertices split at
//! face corners, one mesh per material, influences in bone space through the inverse bind pose,
//! and keyframe tracks sampled into frames.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::collections::HashMap;

use glam::Quat;

use super::{BONE_NAME_MAX, DFace, DVertex, Doc, Field, Locate, NAME_SIZE, Table, TrackField};
use crate::error::{Error, Result, amount};
use crate::format::binary::{SUM_EXACT, SUM_TOLERATED};
use crate::format::{Checker, Format};
use crate::math::{Decomposed, Mat3x4};
use crate::model::{
    Animation, BONE_SYNTHETIC, Bone, Frame, Influence, KEY_POSITION, KEY_ROTATION, KEY_SCALE,
    KeyedAnimation, Keyframe, MeshParts, ModelParts, Name, Texture, concat_into,
};

/// A model's frames, the bind pose included, are at most this many: sampling turns a few bytes
/// of keys into frames at the animation's rate, and this keeps what a file can ask for in
/// proportion (about 18 minutes at 60 fps).
pub(crate) const MAX_FRAMES: u64 = 65536;
/// How far a bone matrix's last row may be from (0, 0, 0, 1).
const AFFINE_TOLERANCE: f32 = 1e-4;
pub(crate) const PNG_SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";
/// A skin slot bound to no bone: the vertex part that stays where the bind pose puts it.
const ROOT: u32 = u32::MAX;
/// Bytes a file vertex takes while the model is built: its skin, whether a face uses it, and
/// its place among equal vertices.
const VERTEX_WORK: u64 = std::mem::size_of::<Skin>() as u64 + 1 + 8;

/// The checker and the file's places together: every rule reports through them.
struct Rules<'c, 'k> {
    at: &'c dyn Locate,
    ck: &'k mut Checker,
}

impl Rules<'_, '_> {
    fn problem(&mut self, message: String, table: Table, index: usize, field: Field) -> Result<()> {
        let e = self
            .at
            .place(Error::malformed(message), table, index, field);
        self.ck.problem(e)
    }

    fn tolerate(
        &mut self,
        message: String,
        table: Table,
        index: usize,
        field: Field,
    ) -> Result<()> {
        let e = self
            .at
            .place(Error::malformed(message), table, index, field);
        self.ck.tolerate(e)
    }

    fn name(&mut self, name: &Name, max: usize, table: Table, index: usize) -> Result<()> {
        let n = name.as_bytes().len();
        if n > max {
            self.problem(
                format!("name is {n} bytes; the format holds {max}"),
                table,
                index,
                Field::Name,
            )?;
        }
        Ok(())
    }

    /// `v`, or 0 after reporting it, when it is not finite.
    fn finite(&mut self, v: f32, table: Table, index: usize, field: Field) -> Result<f32> {
        if v.is_finite() {
            return Ok(v);
        }
        self.problem(format!("{v} is not a finite number"), table, index, field)?;
        Ok(0.0)
    }
}

/// The parent-relative 3x4 matrix of a column-major 4x4 one (its last row is checked apart).
pub(crate) fn from_column_major(c: &[f32; 16]) -> Mat3x4 {
    let mut m = [0.0f32; 12];
    for (i, slot) in m.iter_mut().enumerate() {
        let (row, col) = (i / 4, i % 4);
        *slot = c
            .get(col.wrapping_mul(4).wrapping_add(row))
            .copied()
            .unwrap_or_default();
    }
    Mat3x4 { m }
}

/// The skin of one file vertex: up to four (bone or [`ROOT`], weight) pairs.
#[derive(Clone, Copy, Default)]
struct Skin {
    count: usize,
    slots: [(u32, f32); 4],
}

impl Skin {
    fn push(&mut self, bone: u32, weight: f32) {
        if let Some(slot) = self.slots.get_mut(self.count) {
            *slot = (bone, weight);
            self.count = self.count.saturating_add(1);
        }
    }

    fn used(&self) -> &[(u32, f32)] {
        self.slots.get(..self.count).unwrap_or_default()
    }
}

/// Counts of what the model will hold, for the memory estimate before allocating it.
/// Heap per key while a model is built: see [`estimate`].
const KEY_HELD: u64 = 3 * size_of::<Keyframe>() as u64;

fn estimate(doc: &Doc, frames: u64, bones: u64) -> u64 {
    let corners = (doc.faces.len() as u64).saturating_mul(3);
    let per_corner = 4 * 32 + 4 + 8 + 4 + 12 + 12 + 24 + 4;
    let images: u64 = doc.textures.iter().map(|t| t.image.len() as u64).sum();
    let keys: u64 = doc.animations.iter().map(|a| a.tracks.len() as u64).sum();
    corners
        .saturating_mul(per_corner)
        .saturating_add(frames.saturating_mul(bones.saturating_mul(48).saturating_add(96)))
        .saturating_add(images)
        // The model's keys, and while frames are sampled from them, each bone's keys gathered
        // and the sampler's own list (measured: about 245 bytes a key with its frame's pose).
        .saturating_add(keys.saturating_mul(KEY_HELD))
        .saturating_add(bones.saturating_mul(200))
}

pub(crate) fn build(
    doc: &Doc,
    at: &dyn Locate,
    ck: &mut Checker,
    format: Format,
) -> Result<ModelParts> {
    let mut r = Rules { at, ck };
    let mut parts = ModelParts::new(format);
    parts.up_axis = 1;
    parts.handedness = 1;

    for (t, tex) in doc.textures.iter().enumerate() {
        r.name(&tex.name, NAME_SIZE, Table::Textures, t)?;
        if !tex.image.starts_with(PNG_SIGNATURE) {
            r.tolerate(
                "image is not a PNG (it does not start with the PNG signature)".to_owned(),
                Table::Textures,
                t,
                Field::Image,
            )?;
        }
    }
    let nt = doc.textures.len();
    for (m, mat) in doc.materials.iter().enumerate() {
        r.name(&mat.name, NAME_SIZE, Table::Materials, m)?;
        let texture = match usize::try_from(mat.texture) {
            Ok(t) if t < nt => Some(t as u32),
            _ if mat.texture == -1 => None,
            _ => {
                r.problem(
                    format!(
                        "texture {} is neither a texture (the file has {nt}) nor -1",
                        mat.texture
                    ),
                    Table::Materials,
                    m,
                    Field::Texture,
                )?;
                None
            }
        };
        let mut checked = mat.clone();
        for (k, v) in checked.colours.iter_mut().enumerate() {
            *v = r.finite(*v, Table::Materials, m, Field::Colour(k))?;
        }
        parts.materials.push(checked.to_model(texture));
    }

    let (mut bones, mut local) = read_bones(doc, &mut r)?;
    let nb = bones.len();
    let mut bind = vec![Mat3x4::IDENTITY; nb];
    concat_into(&bones, &local, None, &mut bind);
    let inverse: Vec<Option<Mat3x4>> = bind.iter().map(Mat3x4::inverse).collect();

    let skins = read_skins(doc, &bones, &inverse, &mut r)?;
    let faces = read_faces(doc, &mut r)?;

    // Vertices no face uses have no mesh to go to.
    let mut used = vec![false; doc.vertices.len()];
    for &f in &faces {
        for &i in doc
            .faces
            .get(f)
            .map(|f| f.indices)
            .unwrap_or_default()
            .iter()
        {
            if let Some(u) = used.get_mut(i as usize) {
                *u = true;
            }
        }
    }
    let unused = used.iter().filter(|&&u| !u).count();
    if unused > 0 {
        parts.warnings.push(format!(
            "{unused} of the file's {} vertices {} used by no face and left out",
            doc.vertices.len(),
            if unused == 1 { "is" } else { "are" }
        ));
    }
    let needs_root = skins
        .iter()
        .zip(&used)
        .any(|(s, &u)| u && s.used().iter().any(|&(b, _)| b == ROOT));
    let root = needs_root.then_some(nb as u32);
    if needs_root {
        bones.push(Bone {
            name: Name::empty(),
            parent: -1,
            flags: BONE_SYNTHETIC,
        });
        local.push(Mat3x4::IDENTITY);
    }

    let (mut keyframes, counts) = read_animations(doc, nb, &mut r)?;
    let total_frames = counts.iter().fold(1u64, |a, &c| a.saturating_add(c));
    if total_frames > MAX_FRAMES {
        return Err(Error::limit(format!(
            "the animations sample into {total_frames} frames, more than {MAX_FRAMES}"
        )));
    }
    // The document and what the rules made of its vertices are held while the model is built.
    let held = doc
        .heap_bytes()
        .saturating_add(r.at.held())
        .saturating_add((doc.vertices.len() as u64).saturating_mul(VERTEX_WORK));
    r.ck.reserve(
        estimate(doc, total_frames, bones.len() as u64).saturating_add(held),
        "the model",
    )?;

    parts.textures = doc
        .textures
        .iter()
        .map(|t| Texture {
            id: t.id,
            name: t.name.clone(),
            width: t.width,
            height: t.height,
            flip_y: t.flip_y,
            wrap_s: t.wrap_s,
            wrap_t: t.wrap_t,
            image: t.image.to_vec(),
        })
        .collect();
    parts.meshes = build_meshes(doc, &faces, &skins, &used, &inverse, root)?;

    // Frame 0 is the bind pose; each animation's frames follow.
    let nbt = bones.len();
    let mut poses = Vec::with_capacity((total_frames as usize).saturating_mul(nbt));
    let mut frames = Vec::with_capacity(total_frames as usize);
    frames.push(Frame::named("bind"));
    poses.extend_from_slice(&local);
    let decomposed: Vec<Decomposed> = local.iter().map(Mat3x4::decompose).collect();
    for ((a, anim), (set, &count)) in doc
        .animations
        .iter()
        .enumerate()
        .zip(keyframes.iter().zip(&counts))
    {
        let first_frame = frames.len() as u32;
        let fps = anim.fps.max(1);
        sample(&set.keys, &local, &decomposed, fps, count, &mut poses);
        for i in 0..count {
            let mut name = anim.name.as_bytes().to_vec();
            name.extend_from_slice(format!(" {i}").as_bytes());
            frames.push(Frame {
                name: Name::new(&name),
                ..Frame::named("")
            });
        }
        parts.animations.push(Animation {
            name: anim.name.clone(),
            first_frame,
            frame_count: count as u32,
            fps: f32::from(fps),
            looping: false,
            ..Animation::default()
        });
        debug_assert_eq!(set.animation as usize, a);
    }
    // A model without bones (no skeleton, no vertex that needed the synthetic one) has no pose,
    // so neither animations nor their keyframes: their tracks, which name bones, are empty.
    if bones.is_empty() {
        frames.clear();
        poses.clear();
        let what = match parts.animations.len() {
            0 => None,
            1 => Some("its animation is".to_owned()),
            n => Some(format!("its {n} animations are")),
        };
        if let Some(what) = what {
            parts
                .warnings
                .push(format!("the model has no bones, so {what} left out"));
        }
        parts.animations.clear();
        keyframes.clear();
    }
    parts.bones = bones;
    parts.frames = frames;
    parts.poses = poses.into();
    parts.keyframes = keyframes;
    Ok(parts)
}

fn read_bones(doc: &Doc, r: &mut Rules) -> Result<(Vec<Bone>, Vec<Mat3x4>)> {
    let nb = doc.bones.len();
    let mut bones = Vec::with_capacity(nb.saturating_add(1));
    let mut local = Vec::with_capacity(nb.saturating_add(1));
    let mut names: HashMap<&[u8], usize> = HashMap::with_capacity(nb);
    for (i, b) in doc.bones.iter().enumerate() {
        let place = |f: Field| (Table::Bones, i, f);
        if usize::try_from(b.id).ok() != Some(i) {
            let (t, n, f) = place(Field::Id);
            r.problem(
                format!("id {} does not match the bone's position {i}", b.id),
                t,
                n,
                f,
            )?;
        }
        let name = b.name.as_bytes();
        if name.is_empty() {
            r.problem(
                "name is empty (bone names are unique and not empty)".to_owned(),
                Table::Bones,
                i,
                Field::Name,
            )?;
        } else if let Some(&j) = names.get(name) {
            r.problem(
                format!(
                    "name {:?} is bone {j}'s too (bone names are unique)",
                    b.name
                ),
                Table::Bones,
                i,
                Field::Name,
            )?;
        } else {
            names.insert(name, i);
        }
        r.name(&b.name, BONE_NAME_MAX, Table::Bones, i)?;
        let mut parent = i32::from(b.parent);
        if parent < -1 {
            r.problem(
                format!("parent {parent} is neither a bone nor -1"),
                Table::Bones,
                i,
                Field::Parent,
            )?;
            parent = -1;
        } else if parent >= 0 && parent as usize >= i {
            r.problem(
                format!(
                    "parent {parent} does not come before the bone (parents precede their children)"
                ),
                Table::Bones,
                i,
                Field::Parent,
            )?;
            parent = -1;
        }
        let mut sound = true;
        for (k, v) in b.matrix.iter().enumerate() {
            if !v.is_finite() {
                r.problem(
                    format!("{v} is not a finite number"),
                    Table::Bones,
                    i,
                    Field::Matrix(k),
                )?;
                sound = false;
            }
        }
        let [_, _, _, m3, _, _, _, m7, _, _, _, m11, _, _, _, m15] = b.matrix;
        let off = [m3, m7, m11, m15 - 1.0];
        if sound && off.iter().any(|v| v.abs() > AFFINE_TOLERANCE) {
            r.problem(
                format!(
                    "matrix is not affine: its last row is ({m3}, {m7}, {m11}, {m15}), not (0, 0, 0, 1)"
                ),
                Table::Bones,
                i,
                Field::Matrix(3),
            )?;
            sound = false;
        }
        local.push(if sound {
            from_column_major(&b.matrix)
        } else {
            Mat3x4::IDENTITY
        });
        bones.push(Bone {
            name: b.name.clone(),
            parent,
            flags: 0,
        });
    }
    Ok((bones, local))
}

/// Each vertex's skin: slots with weight above 0, bound to their bone or, for index -1 (the
/// spec's "bind pose"), to [`ROOT`]; a vertex with none is bound wholly to [`ROOT`]. Without
/// bones the skin is ignored, as the spec allows.
fn read_skins(
    doc: &Doc,
    bones: &[Bone],
    inverse: &[Option<Mat3x4>],
    r: &mut Rules,
) -> Result<Vec<Skin>> {
    let nb = bones.len();
    let mut skins = Vec::with_capacity(doc.vertices.len());
    let mut off_sums = 0usize;
    let mut worst: Option<(usize, f32, f32)> = None;
    for (v, vert) in doc.vertices.iter().enumerate() {
        let DVertex {
            pos,
            skin_index,
            skin_weight,
        } = vert;
        for (k, p) in pos.iter().enumerate() {
            r.finite(*p, Table::Vertices, v, Field::Pos(k))?;
        }
        let mut skin = Skin::default();
        if nb == 0 {
            skin.push(ROOT, 1.0);
            skins.push(skin);
            continue;
        }
        let mut sum = 0.0f32;
        for (k, (&index, &w)) in skin_index.iter().zip(skin_weight).enumerate() {
            if !w.is_finite() {
                r.problem(
                    format!("{w} is not a finite number"),
                    Table::Vertices,
                    v,
                    Field::SkinWeight(k),
                )?;
                continue;
            }
            if w < 0.0 {
                r.problem(
                    format!("{w} is negative (weights are 0 to 1)"),
                    Table::Vertices,
                    v,
                    Field::SkinWeight(k),
                )?;
                continue;
            }
            let bone = match usize::try_from(index) {
                Ok(b) if b < nb => b as u32,
                _ if index == -1 => ROOT,
                _ => {
                    r.problem(
                        format!("{index} is neither a bone (the file has {nb}) nor -1"),
                        Table::Vertices,
                        v,
                        Field::SkinIndex(k),
                    )?;
                    continue;
                }
            };
            if w == 0.0 {
                continue;
            }
            if bone != ROOT && inverse.get(bone as usize).is_none_or(Option::is_none) {
                r.problem(
                    format!(
                        "bone {bone} ({}) has a bind matrix that cannot be inverted, so no vertex can be weighted to it",
                        bones.get(bone as usize).map(|b| &b.name).unwrap_or(&Name::empty())
                    ),
                    Table::Vertices,
                    v,
                    Field::SkinIndex(k),
                )?;
                continue;
            }
            skin.push(bone, w);
            sum += w;
        }
        if skin.count == 0 {
            skin.push(ROOT, 1.0);
        } else {
            let off = (sum - 1.0).abs();
            if off > SUM_TOLERATED {
                r.problem(
                    format!("weights sum to {sum} (must be 1 within {SUM_TOLERATED})"),
                    Table::Vertices,
                    v,
                    Field::Record,
                )?;
            } else if off > SUM_EXACT {
                off_sums = off_sums.saturating_add(1);
                if worst.is_none_or(|(_, _, o)| off > o) {
                    worst = Some((v, sum, off));
                }
            }
        }
        skins.push(skin);
    }
    if let Some((v, sum, _)) = worst {
        r.tolerate(
            format!(
                "{off_sums} vertices have weights summing off 1 by more than {SUM_EXACT}; the worst sums to {sum}"
            ),
            Table::Vertices,
            v,
            Field::Record,
        )?;
    }
    Ok(skins)
}

/// The faces that pass the rules, grouped by material in file order.
fn read_faces(doc: &Doc, r: &mut Rules) -> Result<Vec<usize>> {
    let (nm, nv) = (doc.materials.len(), doc.vertices.len());
    let mut good = Vec::with_capacity(doc.faces.len());
    for (f, face) in doc.faces.iter().enumerate() {
        let DFace {
            material,
            indices,
            normals,
            uvs,
            ..
        } = face;
        let mut ok = true;
        if *material as usize >= nm {
            r.problem(
                format!(
                    "material {material} out of range (the file has {})",
                    amount(nm as u64, "material", "materials")
                ),
                Table::Faces,
                f,
                Field::Material,
            )?;
            ok = false;
        }
        for (k, &i) in indices.iter().enumerate() {
            if i as usize >= nv {
                r.problem(
                    format!("vertex {i} out of range (the file has {nv} vertices)"),
                    Table::Faces,
                    f,
                    Field::Index(k),
                )?;
                ok = false;
            }
        }
        for (k, (n, uv)) in normals.iter().zip(uvs).enumerate() {
            if n.iter().any(|v| !v.is_finite()) {
                r.problem(
                    format!("normal {n:?} is not finite"),
                    Table::Faces,
                    f,
                    Field::Normal(k),
                )?;
                ok = false;
            }
            if uv.iter().any(|v| !v.is_finite()) {
                r.problem(
                    format!("texcoord {uv:?} is not finite"),
                    Table::Faces,
                    f,
                    Field::Uv(k),
                )?;
                ok = false;
            }
        }
        if ok {
            good.push(f);
        }
    }
    good.sort_by_key(|&f| doc.faces.get(f).map_or(0, |face| face.material));
    Ok(good)
}

type CornerKey = (u32, [u32; 3], [u32; 2], [u8; 4]);

/// For each file vertex a face uses, the first such vertex with the same position and skin
/// (bit for bit): vertices that repeat one another are one vertex of the model, as the writers
/// store them, so a model saved and loaded again keeps its vertex count. Found by sorting the
/// used vertices' indices (4 bytes a vertex) rather than hashing their keys (about 130).
fn first_equal_vertices(doc: &Doc, skins: &[Skin], used: &[bool]) -> Vec<u32> {
    let key = |i: u32| {
        let v = doc
            .vertices
            .get(i as usize)
            .map(|v| v.pos)
            .unwrap_or_default();
        let skin = skins.get(i as usize).copied().unwrap_or_default();
        (
            v.map(f32::to_bits),
            skin.count,
            skin.slots.map(|(b, w)| (b, w.to_bits())),
        )
    };
    let mut first: Vec<u32> = (0..doc.vertices.len())
        .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
        .collect();
    let mut order: Vec<u32> = first
        .iter()
        .zip(used)
        .filter_map(|(&i, &u)| u.then_some(i))
        .collect();
    // Equal keys in index order, so each run starts with its first vertex.
    order.sort_unstable_by(|&a, &b| key(a).cmp(&key(b)).then(a.cmp(&b)));
    let mut run: Option<(u32, _)> = None;
    for &i in &order {
        let k = key(i);
        let head = match run {
            Some((head, ref hk)) if *hk == k => head,
            _ => {
                run = Some((i, k));
                i
            }
        };
        if let Some(f) = first.get_mut(i as usize) {
            *f = head;
        }
    }
    first
}

fn build_meshes(
    doc: &Doc,
    faces: &[usize],
    skins: &[Skin],
    used: &[bool],
    inverse: &[Option<Mat3x4>],
    root: Option<u32>,
) -> Result<Vec<MeshParts>> {
    let mut meshes: Vec<MeshParts> = Vec::new();
    let mut corners: HashMap<CornerKey, u32> = HashMap::new();
    let first_equal = first_equal_vertices(doc, skins, used);
    for &f in faces {
        let Some(face) = doc.faces.get(f) else {
            continue;
        };
        let material = u32::from(face.material);
        if meshes.last().and_then(|m| m.material) != Some(material) {
            corners.clear();
            meshes.push(MeshParts {
                shader: doc
                    .materials
                    .get(material as usize)
                    .map(|m| m.name.clone())
                    .unwrap_or_default(),
                influence_start: vec![0],
                texcoords: Some(Vec::new()),
                material: Some(material),
                colors: Some(Vec::new()),
                bind_positions: Some(Vec::new()),
                bind_normals: Some(Vec::new()),
                ..MeshParts::default()
            });
        }
        let Some(mesh) = meshes.last_mut() else {
            continue;
        };
        for k in 0..3 {
            let (Some(&i), Some(n), Some(uv), Some(&color)) = (
                face.indices.get(k),
                face.normals.get(k),
                face.uvs.get(k),
                face.colors.get(k),
            ) else {
                continue;
            };
            let same = first_equal.get(i as usize).copied().unwrap_or(i);
            let key = (same, n.map(f32::to_bits), uv.map(f32::to_bits), color);
            let next = u32::try_from(mesh.influence_start.len().saturating_sub(1))
                .map_err(|_| Error::limit("a mesh has more than 2^32 vertices"))?;
            let v = *corners.entry(key).or_insert(next);
            if v == next {
                let p = doc
                    .vertices
                    .get(i as usize)
                    .map(|v| v.pos)
                    .unwrap_or_default();
                let skin = skins.get(i as usize).copied().unwrap_or_default();
                for &(bone, w) in skin.used() {
                    let (bone, space) = if bone == ROOT {
                        (root.unwrap_or_default(), Mat3x4::IDENTITY)
                    } else {
                        let inv = inverse.get(bone as usize).copied().flatten();
                        (bone, inv.unwrap_or(Mat3x4::IDENTITY))
                    };
                    let o = space.transform_point(p);
                    let d = space.transform_vector(*n);
                    // Each part is finite, but a large position through a large inverse may
                    // not be.
                    if !o.iter().chain(&d).all(|x| (x * w).is_finite()) {
                        return Err(Error::malformed(format!(
                            "vertices[{i}]: its position or normal in bone {bone}'s bind space \
                             is not a finite float (the position or the bind matrix is too large)"
                        )));
                    }
                    mesh.influences.push(Influence {
                        origin: o.map(|x| x * w),
                        weight: w,
                        normal: d.map(|x| x * w),
                        bone,
                    });
                }
                let end = u32::try_from(mesh.influences.len())
                    .map_err(|_| Error::limit("a mesh has more than 2^32 influences"))?;
                mesh.influence_start.push(end);
                for (list, value) in [(&mut mesh.bind_positions, p), (&mut mesh.bind_normals, *n)] {
                    if let Some(l) = list {
                        l.push(value);
                    }
                }
                if let Some(t) = &mut mesh.texcoords {
                    t.push(*uv);
                }
                if let Some(c) = &mut mesh.colors {
                    c.push(color);
                }
            }
            mesh.indices.push(v);
        }
    }
    Ok(meshes)
}

/// Each animation's checked keys (a bad key is left out when validating) and its frame count:
/// samples at `i / fps` seconds for `i` in `0..=round(duration * fps)`, so the last frame is
/// the pose at the duration (within half a frame).
fn read_animations(doc: &Doc, nb: usize, r: &mut Rules) -> Result<(Vec<KeyedAnimation>, Vec<u64>)> {
    let mut sets = Vec::with_capacity(doc.animations.len());
    let mut counts = Vec::with_capacity(doc.animations.len());
    for (a, anim) in doc.animations.iter().enumerate() {
        r.name(&anim.name, NAME_SIZE, Table::Animations, a)?;
        if anim.fps == 0 {
            r.problem(
                "fps is 0; an animation plays at 1 frame a second or more".to_owned(),
                Table::Animations,
                a,
                Field::Fps,
            )?;
        }
        let mut duration = anim.duration;
        if !(duration.is_finite() && duration >= 0.0) {
            r.problem(
                format!("duration {duration} is not a finite number of seconds"),
                Table::Animations,
                a,
                Field::Duration,
            )?;
            duration = 0.0;
        }
        let frames = (f64::from(duration) * f64::from(anim.fps.max(1))).round();
        // Past the limit the count saturates; the caller rejects it.
        let count = if frames < MAX_FRAMES as f64 {
            (frames as u64).saturating_add(1)
        } else {
            MAX_FRAMES.saturating_add(1)
        };
        let mut keys = Vec::with_capacity(anim.tracks.len());
        for (k, t) in anim.tracks.iter().enumerate() {
            let place = |f: TrackField| Field::Track(k, f);
            let bone = match usize::try_from(t.bone) {
                Ok(b) if b < nb => b as u32,
                _ => {
                    r.problem(
                        format!(
                            "bone {} out of range (the file has {})",
                            t.bone,
                            amount(nb as u64, "bone", "bones")
                        ),
                        Table::Animations,
                        a,
                        place(TrackField::Bone),
                    )?;
                    continue;
                }
            };
            let flags = t.flags as u16;
            let all = KEY_POSITION | KEY_ROTATION | KEY_SCALE;
            if t.flags <= 0 || flags & !all != 0 {
                r.problem(
                    if t.flags == 0 {
                        "the key has no channel: it needs a position, a rotation or a scale"
                            .to_owned()
                    } else {
                        format!(
                            "flags {} set bits other than 0 (position), 1 (rotation) and 2 (scale)",
                            t.flags
                        )
                    },
                    Table::Animations,
                    a,
                    place(TrackField::Flags),
                )?;
                continue;
            }
            if !(t.time.is_finite() && t.time >= 0.0) {
                r.problem(
                    format!("time {} is not a finite number of seconds from 0", t.time),
                    Table::Animations,
                    a,
                    place(TrackField::Time),
                )?;
                continue;
            }
            let mut key = Keyframe {
                bone,
                flags,
                time: t.time,
                ..Keyframe::default()
            };
            let mut ok = true;
            if flags & KEY_POSITION != 0 {
                ok &= channel(r, &t.pos, a, place(TrackField::Position))?;
                key.position = t.pos;
            }
            if flags & KEY_ROTATION != 0 {
                ok &= channel(r, &t.rot, a, place(TrackField::Rotation))?;
                if ok && t.rot.iter().all(|&v| v == 0.0) {
                    r.problem(
                        "rotation is the zero quaternion".to_owned(),
                        Table::Animations,
                        a,
                        place(TrackField::Rotation),
                    )?;
                    ok = false;
                }
                key.rotation = t.rot;
            }
            if flags & KEY_SCALE != 0 {
                ok &= channel(r, &t.scl, a, place(TrackField::Scale))?;
                key.scale = t.scl;
            }
            if ok {
                keys.push(key);
            }
        }
        sets.push(KeyedAnimation {
            animation: a as u32,
            id: anim.id,
            duration,
            keys,
        });
        counts.push(count);
    }
    Ok((sets, counts))
}

fn channel(r: &mut Rules, values: &[f32], a: usize, field: Field) -> Result<bool> {
    if let Some(v) = values.iter().find(|v| !v.is_finite()) {
        r.problem(
            format!("{v} is not a finite number"),
            Table::Animations,
            a,
            field,
        )?;
        return Ok(false);
    }
    Ok(true)
}

/// One channel's keys of one bone, sorted by time: (time, key index).
type Channel = Vec<(f32, usize)>;

/// The channel's value at `t`: the first key before it, the last after it, and between two keys
/// the mix of both by `mix(a, b, fraction)`.
fn at_time<T>(
    channel: &[(f32, usize)],
    t: f64,
    value: impl Fn(usize) -> T,
    mix: impl Fn(T, T, f64) -> T,
) -> Option<T> {
    let j = channel.partition_point(|&(time, _)| f64::from(time) <= t);
    let before = j.checked_sub(1).and_then(|i| channel.get(i));
    match (before, channel.get(j)) {
        (Some(&(ta, a)), Some(&(tb, b))) => {
            let span = f64::from(tb) - f64::from(ta);
            let f = if span > 0.0 {
                (t - f64::from(ta)) / span
            } else {
                0.0
            };
            Some(mix(value(a), value(b), f))
        }
        (Some(&(_, a)), None) | (None, Some(&(_, a))) => Some(value(a)),
        (None, None) => None,
    }
}

fn lerp3(a: [f32; 3], b: [f32; 3], f: f64) -> [f32; 3] {
    let mut out = [0.0f32; 3];
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = (f64::from(x) + (f64::from(y) - f64::from(x)) * f) as f32;
    }
    out
}

/// The unit quaternion of a key, in f64.
fn unit(q: [f32; 4]) -> [f64; 4] {
    let q = q.map(f64::from);
    let len = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    if len > 0.0 && len.is_finite() {
        q.map(|v| v / len)
    } else {
        [0.0, 0.0, 0.0, 1.0]
    }
}

/// Spherical interpolation of unit quaternions along the shorter arc (the second is negated
/// when they lie in opposite hemispheres); nearly equal ones are mixed linearly.
pub(crate) fn slerp(a: [f64; 4], b: [f64; 4], f: f64) -> [f64; 4] {
    let mut dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    let mut b = b;
    if dot < 0.0 {
        b = b.map(|v| -v);
        dot = -dot;
    }
    let (wa, wb) = if dot > 0.9995 {
        (1.0 - f, f)
    } else {
        let theta = dot.min(1.0).acos();
        let s = theta.sin();
        (((1.0 - f) * theta).sin() / s, (f * theta).sin() / s)
    };
    let mut q = [0.0f64; 4];
    for ((o, x), y) in q.iter_mut().zip(a).zip(b) {
        *o = wa * x + wb * y;
    }
    unit(q.map(|v| v as f32))
}

/// Appends `count` frames of one animation to `poses`: frame `i` at `i / fps` seconds. A bone
/// without keys keeps its bind pose exactly; a channel without keys keeps the bind pose's value.
fn sample(
    keys: &[Keyframe],
    local: &[Mat3x4],
    bind: &[Decomposed],
    fps: u16,
    count: u64,
    poses: &mut Vec<Mat3x4>,
) {
    let nb = local.len();
    // Per bone, per channel (position, rotation, scale): its keys sorted by time; the sort is
    // stable, so of keys at one time the last in the file wins.
    let mut channels: Vec<[Channel; 3]> = vec![Default::default(); nb];
    for (k, key) in keys.iter().enumerate() {
        if let Some(c) = channels.get_mut(key.bone as usize) {
            for (bit, list) in [KEY_POSITION, KEY_ROTATION, KEY_SCALE]
                .iter()
                .zip(c.iter_mut())
            {
                if key.flags & bit != 0 {
                    list.push((key.time, k));
                }
            }
        }
    }
    for c in &mut channels {
        for list in c.iter_mut() {
            list.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    let rotations: Vec<[f64; 4]> = keys.iter().map(|k| unit(k.rotation)).collect();
    let key = |k: usize| keys.get(k).copied().unwrap_or_default();
    for i in 0..count {
        let t = i as f64 / f64::from(fps);
        for (c, (l, d)) in channels.iter().zip(local.iter().zip(bind)) {
            let [pos, rot, scl] = c;
            if pos.is_empty() && rot.is_empty() && scl.is_empty() {
                poses.push(*l);
                continue;
            }
            let translation = at_time(pos, t, |k| key(k).position, lerp3).unwrap_or(d.translation);
            let scale = at_time(scl, t, |k| key(k).scale, lerp3).unwrap_or(d.scale);
            let rotation = at_time(
                rot,
                t,
                |k| rotations.get(k).copied().unwrap_or([0.0, 0.0, 0.0, 1.0]),
                slerp,
            )
            .map_or(d.rotation, |[x, y, z, w]| {
                Quat::from_xyzw(x as f32, y as f32, z as f32, w as f32)
            });
            poses.push(
                Decomposed {
                    rotation,
                    translation,
                    scale,
                }
                .compose(),
            );
        }
    }
}
