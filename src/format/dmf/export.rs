//! A model as a DMF document, for both writers. A model read from DMF gives back its file's
//! structures: vertices joined again from their corners (bind positions, weights), faces grouped
//! by material, bones from frame 0, and each animation's own keys. Another model is written
//! where DMF can hold it: positions and normals from its bind pose, one key per frame and bone.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::{
    BONE_NAME_MAX, DAnimation, DBone, DFace, DMaterial, DTexture, DTrack, DVertex, Doc, NAME_SIZE,
};
use crate::error::{Error, Result};
use crate::math::Mat3x4;
use crate::model::{
    BONE_SYNTHETIC, Bone, KEY_POSITION, KEY_ROTATION, KEY_SCALE, KeyedAnimation, Keyframe,
    Material, Mesh, Model, Name, concat_into,
};
use crate::skin::{SKIN_NORMALIZE, Strided};

/// The column-major 4x4 matrix of a 3x4 one, last row (0, 0, 0, 1).
pub(crate) fn to_column_major(m: &Mat3x4) -> [f32; 16] {
    let mut c = [0.0f32; 16];
    for (i, slot) in c.iter_mut().enumerate() {
        let (col, row) = (i / 4, i % 4);
        *slot = match row {
            3 => {
                if col == 3 {
                    1.0
                } else {
                    0.0
                }
            }
            _ => {
                m.m.get(row.wrapping_mul(4).wrapping_add(col))
                    .copied()
                    .unwrap_or_default()
            }
        };
    }
    c
}

fn to_i16(n: usize, what: &str) -> Result<i16> {
    i16::try_from(n).map_err(|_| Error::limit(format!("{n} {what} do not fit DMF's 16-bit ids")))
}

/// The file's bones: each model bone's new index (None for bones the loader added).
fn bone_map(model: &Model) -> Result<(Vec<DBone>, Vec<Option<i16>>)> {
    let bones = model.bones();
    let poses = model.skeleton().frame_poses(0).unwrap_or_default();
    let mut map: Vec<Option<i16>> = Vec::with_capacity(bones.len());
    let mut out: Vec<DBone> = Vec::with_capacity(bones.len());
    let mut names: HashMap<&[u8], usize> = HashMap::new();
    for (i, b) in bones.iter().enumerate() {
        let parent = usize::try_from(b.parent).ok();
        let parent_new = parent.map(|p| map.get(p).copied().flatten());
        if b.flags & BONE_SYNTHETIC != 0 {
            map.push(None);
            continue;
        }
        if parent_new == Some(None) {
            return Err(Error::unsupported(format!(
                "bone {i} ({}): its parent is a bone the loader added, which a DMF cannot hold",
                b.name
            )));
        }
        let name = b.name.as_bytes();
        if name.is_empty() {
            return Err(Error::unsupported(format!(
                "bone {i} has no name; DMF bones are named"
            )));
        }
        if name.len() > BONE_NAME_MAX {
            return Err(Error::limit(format!(
                "bone {i}: name {:?} is {} bytes; a DMF bone's name holds {BONE_NAME_MAX}",
                b.name,
                name.len()
            )));
        }
        if let Some(j) = names.insert(name, i) {
            return Err(Error::unsupported(format!(
                "bone {i}: name {:?} is bone {j}'s too; DMF bone names are unique",
                b.name
            )));
        }
        let id = to_i16(out.len(), "bones")?;
        out.push(DBone {
            id,
            name: b.name.clone(),
            parent: parent_new.flatten().unwrap_or(-1),
            matrix: to_column_major(poses.get(i).unwrap_or(&Mat3x4::IDENTITY)),
        });
        map.push(Some(id));
    }
    // A bone the loader added may not have children: they would lose their parent.
    for (i, b) in bones.iter().enumerate() {
        if let Ok(p) = usize::try_from(b.parent)
            && map.get(p) == Some(&None)
            && map.get(i) == Some(&None)
        {
            return Err(Error::unsupported(format!(
                "bone {i} ({}): a bone the loader added has a child",
                b.name
            )));
        }
    }
    Ok((out, map))
}

/// The material of a mesh that has none: named after its shader, white, lit.
fn plain_material(mesh: &Mesh) -> Material {
    Material {
        name: mesh.shader().clone(),
        vertex_color: 1,
        diffuse: [1.0; 4],
        ..Material::default()
    }
}

type Points = Vec<[f32; 3]>;

/// How far apart the points a vertex's influences put it at the bind pose may lie, relative to
/// its distance from the origin (plus 1): real DPMs agree to 7e-6 units.
const SHARED_POINT: f32 = 1e-4;

/// Positions and normals of a mesh's vertices in model space at the bind pose: as the file
/// stored them, or from the influences. DMF's linear blend skinning moves one point by every
/// bone, so each influence must put the vertex at the same point `B_k o_k / w_k` (which DPM
/// and SKM files do; a Sims blend vertex does not, and is refused); that point is written, the
/// weights as they are, so that a weight sum off 1 skins as it did. Normals are skinned at frame
/// 0 and made unit length.
fn bind_vertices(model: &Model, m: usize, mesh: &Mesh) -> Result<(Points, Points)> {
    if let (Some(p), Some(n)) = (mesh.bind_positions(), mesh.bind_normals()) {
        return Ok((p.to_vec(), n.to_vec()));
    }
    let vc = mesh.vertex_count();
    let mut p = vec![[0.0f32; 3]; vc];
    let mut n = vec![[0.0f32; 3]; vc];
    let mut target =
        Strided::new(p.as_flattened_mut(), 3)?.with_normals(n.as_flattened_mut(), 3)?;
    model.bind_vertices(m, 0, vc, SKIN_NORMALIZE, &mut target)?;
    let bind = model.skeleton().bind_pose();
    for (v, pos) in p.iter_mut().enumerate() {
        let points: Vec<[f32; 3]> = mesh
            .influences(v)
            .iter()
            .filter(|i| i.weight > 0.0)
            .filter_map(|i| {
                let b = bind.get(i.bone as usize)?;
                Some(b.transform_point(i.origin.map(|x| x / i.weight)))
            })
            .collect();
        let Some(first) = points.first() else {
            continue;
        };
        let size = 1.0 + first.iter().fold(0.0f32, |a, x| a.max(x.abs()));
        let apart = points
            .iter()
            .flat_map(|q| q.iter().zip(first).map(|(a, b)| (a - b).abs()))
            .fold(0.0f32, f32::max);
        if apart > SHARED_POINT * size || apart.is_nan() {
            return Err(Error::unsupported(format!(
                "mesh {m} vertex {v}: its influences put it at points {apart} apart at the bind pose; a DMF vertex is one point"
            )));
        }
        *pos = *first;
    }
    Ok((p, n))
}

/// One vertex's skin slots; a vertex bound only to an added bone has none (all zero).
fn skin(mesh: &Mesh, v: usize, m: usize, map: &[Option<i16>]) -> Result<([i16; 4], [f32; 4])> {
    let influences = mesh.influences(v);
    let mut index = [0i16; 4];
    let mut weight = [0.0f32; 4];
    if let [only] = influences
        && map.get(only.bone as usize) == Some(&None)
        && only.weight == 1.0
    {
        return Ok((index, weight));
    }
    for ((inf, i), w) in influences.iter().zip(&mut index).zip(&mut weight) {
        if inf.weight < 0.0 || inf.weight.is_nan() {
            return Err(Error::unsupported(format!(
                "mesh {m} vertex {v}: weight {} is negative",
                inf.weight
            )));
        }
        *i = map.get(inf.bone as usize).copied().flatten().unwrap_or(-1);
        *w = inf.weight;
    }
    Ok((index, weight))
}

type VertexKey = ([u32; 3], [i16; 4], [u32; 4]);

pub(crate) fn export(model: &Model) -> Result<Doc<'_>> {
    if model.unbound().is_some() {
        return Err(Error::unsupported(
            "the meshes wait for a skeleton; bind them before saving as DMF",
        ));
    }
    let (bones, map) = bone_map(model)?;
    // The reader weights a vertex against the inverse of each bone's bind matrix, the product
    // of the matrices written: a bone whose product cannot be inverted can carry no weight, and
    // a vertex that the inverse takes past a float cannot be written.
    let inverse: Vec<Option<Mat3x4>> = {
        let written: Vec<Bone> = bones
            .iter()
            .map(|b| Bone {
                name: b.name.clone(),
                parent: i32::from(b.parent),
                flags: 0,
            })
            .collect();
        let local: Vec<Mat3x4> = bones
            .iter()
            .map(|b| super::build::from_column_major(&b.matrix))
            .collect();
        let mut bind = vec![Mat3x4::IDENTITY; bones.len()];
        concat_into(&written, &local, None, &mut bind);
        bind.iter().map(Mat3x4::inverse).collect()
    };
    let textures: Vec<DTexture> = model
        .textures()
        .iter()
        .map(|t| DTexture {
            id: t.id,
            name: t.name.clone(),
            flip_y: t.flip_y,
            width: t.width,
            height: t.height,
            wrap_s: t.wrap_s,
            wrap_t: t.wrap_t,
            image: Cow::Borrowed(t.image.as_slice()),
        })
        .collect();
    let mut materials: Vec<DMaterial> = Vec::with_capacity(model.materials().len());
    for m in model.materials() {
        let texture = match m.texture {
            Some(t) => to_i16(t as usize, "textures")?,
            None => -1,
        };
        materials.push(DMaterial::from_model(m, texture));
    }

    let mut vertices: Vec<DVertex> = Vec::new();
    let mut faces: Vec<DFace> = Vec::new();
    let mut unique: HashMap<VertexKey, u32> = HashMap::new();
    for (m, mesh) in model.meshes().iter().enumerate() {
        let material = match mesh.material() {
            Some(k) => k as usize,
            None => {
                let mut plain = DMaterial::from_model(&plain_material(mesh), -1);
                plain.id = to_i16(materials.len(), "materials")?;
                materials.push(plain);
                materials.len().saturating_sub(1)
            }
        };
        let material = u16::try_from(material)
            .map_err(|_| Error::limit(format!("mesh {m}: material {material} past 65535")))?;
        if let Some(v) = (0..mesh.vertex_count()).find(|&v| mesh.influences(v).len() > 4) {
            return Err(Error::unsupported(format!(
                "mesh {m} vertex {v} has {} influences; a DMF vertex holds 4",
                mesh.influences(v).len()
            )));
        }
        let (positions, normals) = bind_vertices(model, m, mesh)?;
        let mut file_vertex = vec![u32::MAX; mesh.vertex_count()];
        let texcoords = mesh.texcoords();
        let colors = mesh.colors();
        for tri in mesh.indices().chunks_exact(3) {
            let mut face = DFace {
                material,
                indices: [0; 3],
                colors: [[255; 4]; 3],
                normals: [[0.0; 3]; 3],
                uvs: [[0.0; 2]; 3],
            };
            for (k, &v) in tri.iter().enumerate() {
                let v = v as usize;
                let slot = file_vertex.get(v).copied().unwrap_or(u32::MAX);
                let index = if slot != u32::MAX {
                    slot
                } else {
                    let pos = positions.get(v).copied().unwrap_or_default();
                    let (skin_index, skin_weight) = skin(mesh, v, m, &map)?;
                    let normal = normals.get(v).copied().unwrap_or_default();
                    for (&b, &w) in skin_index.iter().zip(&skin_weight) {
                        let Ok(b) = usize::try_from(b) else {
                            continue;
                        };
                        if w == 0.0 {
                            continue;
                        }
                        let Some(space) = inverse.get(b).copied().flatten() else {
                            return Err(Error::unsupported(format!(
                                "mesh {m} vertex {v}: bone {b}'s bind matrix cannot be inverted, and a DMF vertex is weighted against its inverse"
                            )));
                        };
                        let o = space.transform_point(pos);
                        let d = space.transform_vector(normal);
                        if !o.iter().chain(&d).all(|x| (x * w).is_finite()) {
                            return Err(Error::unsupported(format!(
                                "mesh {m} vertex {v}: its position or normal in bone {b}'s bind space is past a float, which a DMF reader cannot weigh"
                            )));
                        }
                    }
                    let key = (
                        pos.map(f32::to_bits),
                        skin_index,
                        skin_weight.map(f32::to_bits),
                    );
                    let next = u32::try_from(vertices.len())
                        .map_err(|_| Error::limit("more than 2^32 DMF vertices"))?;
                    let index = match unique.entry(key) {
                        Entry::Occupied(e) => *e.get(),
                        Entry::Vacant(e) => {
                            vertices.push(DVertex {
                                pos,
                                skin_index,
                                skin_weight,
                            });
                            *e.insert(next)
                        }
                    };
                    if let Some(s) = file_vertex.get_mut(v) {
                        *s = index;
                    }
                    index
                };
                if let (Some(i), Some(n), Some(uv), Some(c)) = (
                    face.indices.get_mut(k),
                    face.normals.get_mut(k),
                    face.uvs.get_mut(k),
                    face.colors.get_mut(k),
                ) {
                    *i = index;
                    *n = normals.get(v).copied().unwrap_or_default();
                    *uv = texcoords
                        .and_then(|t| t.get(v))
                        .copied()
                        .unwrap_or_default();
                    *c = colors.and_then(|c| c.get(v)).copied().unwrap_or([255; 4]);
                }
            }
            faces.push(face);
        }
    }

    // Each scene's key set (a model has at most one per scene), found once rather than by a
    // scan of the sets per scene.
    let mut keyed_sets: Vec<Option<&KeyedAnimation>> = vec![None; model.animations().len()];
    for set in model.keyframes() {
        if let Some(slot @ None) = keyed_sets.get_mut(set.animation as usize) {
            *slot = Some(set);
        }
    }
    let mut animations = Vec::with_capacity(model.animations().len());
    for (a, anim) in model.animations().iter().enumerate() {
        // A scene without frames (a Sims skill whose numbers are missing) has no keys to give.
        if anim.frame_count == 0 && keyed_sets.get(a).copied().flatten().is_none() {
            continue;
        }
        let fps = anim.fps;
        if !(fps >= 1.0 && fps <= f32::from(u16::MAX) && fps.fract() == 0.0) {
            return Err(Error::unsupported(format!(
                "animation {a} ({}): {fps} frames a second; a DMF rate is a whole number from 1 to 65535",
                anim.name
            )));
        }
        let fps = fps as u16;
        let keyed = keyed_sets.get(a).copied().flatten();
        let (id, duration, keys) = match keyed {
            Some(set) => (set.id, set.duration, Cow::Borrowed(set.keys.as_slice())),
            None => {
                let keys = frame_keys(model, anim.first_frame, anim.frame_count, fps);
                let duration = anim.frame_count.saturating_sub(1) as f32 / f32::from(fps);
                (to_i16(a, "animations")?, duration, Cow::Owned(keys))
            }
        };
        let tracks = keys
            .iter()
            .filter_map(|k| {
                let bone = map.get(k.bone as usize).copied().flatten()?;
                let has = |bit: u16| k.flags & bit != 0;
                Some(DTrack {
                    bone,
                    flags: k.flags as i16,
                    time: k.time,
                    pos: if has(KEY_POSITION) {
                        k.position
                    } else {
                        [0.0; 3]
                    },
                    rot: if has(KEY_ROTATION) {
                        k.rotation
                    } else {
                        [0.0; 4]
                    },
                    scl: if has(KEY_SCALE) { k.scale } else { [0.0; 3] },
                })
            })
            .collect();
        animations.push(DAnimation {
            id,
            name: anim.name.clone(),
            fps,
            duration,
            tracks,
        });
    }
    // The readers of both forms refuse longer names, so neither writer may write one.
    check_names("texture", textures.iter().map(|t| &t.name))?;
    check_names("material", materials.iter().map(|m| &m.name))?;
    check_names("animation", animations.iter().map(|a| &a.name))?;
    Ok(Doc {
        textures,
        materials,
        vertices,
        faces,
        bones,
        animations,
    })
}

/// A `LIMIT` error naming the first of `names` (of things called `what`) longer than a DMF
/// name holds.
fn check_names<'a>(what: &str, names: impl Iterator<Item = &'a Name>) -> Result<()> {
    for (i, name) in names.enumerate() {
        let n = name.as_bytes().len();
        if n > NAME_SIZE {
            return Err(Error::limit(format!(
                "{what} {i}: name {name:?} is {n} bytes; a DMF name holds {NAME_SIZE}"
            )));
        }
    }
    Ok(())
}

/// One key per frame and bone, all three channels, for a scene that has no keys of its own.
fn frame_keys(model: &Model, first: u32, count: u32, fps: u16) -> Vec<Keyframe> {
    let mut keys = Vec::new();
    for i in 0..count {
        let poses = model
            .skeleton()
            .frame_poses(first.saturating_add(i) as usize)
            .unwrap_or_default();
        for (b, pose) in poses.iter().enumerate() {
            let d = pose.decompose();
            keys.push(Keyframe {
                bone: b as u32,
                flags: KEY_POSITION | KEY_ROTATION | KEY_SCALE,
                time: i as f32 / f32::from(fps),
                position: d.translation,
                rotation: d.rotation.to_array(),
                scale: d.scale,
            });
        }
    }
    keys
}
