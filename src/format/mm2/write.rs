//! Writing `.mod` text meshes: version 1.09 without packets (the layout of the retail woman
//! model), one corner per vertex.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::skel::is_translation;
use super::{WHITE, is_word, number, put_line};
use crate::error::{Error, Result};
use crate::model::{BoneSlots, Mesh, Model, Name};

/// The most bones a written mesh may use: MM2's binary meshes keep bone numbers in 16 bits, and
/// `mtxv` and `mtxn` hold one count per bone.
const MAX_BONES: u32 = 1 << 16;

/// Distinct values in order of first use, each with its number.
struct Distinct<K> {
    index: HashMap<K, u32>,
    order: Vec<K>,
}

impl<K: Copy + Eq + std::hash::Hash> Distinct<K> {
    fn new() -> Distinct<K> {
        Distinct {
            index: HashMap::new(),
            order: Vec::new(),
        }
    }

    fn add(&mut self, key: K) -> Result<u32> {
        let next = u32::try_from(self.order.len())
            .map_err(|_| Error::limit("more distinct values than 32 bits count"))?;
        Ok(match self.index.entry(key) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                self.order.push(key);
                *e.insert(next)
            }
        })
    }
}

/// A vector with its bone, keyed by bits so that -0 and 0 stay apart and each value is kept
/// exactly.
type BoneVector = (u32, [u32; 3]);

fn bits(v: [f32; 3]) -> [u32; 3] {
    v.map(f32::to_bits)
}

/// Positions (or normals) grouped by bone for `mtxv` (`mtxn`): each distinct value's final
/// number, the values in file order, and the count per bone.
struct Grouped {
    number: Vec<u32>,
    values: Vec<[u32; 3]>,
    per_bone: Vec<u32>,
}

fn group(distinct: Distinct<BoneVector>, bone_count: u32) -> Result<Grouped> {
    let mut per_bone = vec![0u32; usize::try_from(bone_count).unwrap_or(0)];
    for (bone, _) in &distinct.order {
        if let Some(c) = per_bone.get_mut(*bone as usize) {
            *c = c.saturating_add(1);
        }
    }
    // Stable: values keep their first-use order within a bone.
    let mut order: Vec<u32> =
        (0..u32::try_from(distinct.order.len()).unwrap_or(u32::MAX)).collect();
    order.sort_by_key(|&i| distinct.order.get(i as usize).map_or(0, |v| v.0));
    let mut number = vec![0u32; order.len()];
    let mut values = Vec::with_capacity(order.len());
    for (final_number, &i) in (0u32..).zip(&order) {
        if let Some(slot) = number.get_mut(i as usize) {
            *slot = final_number;
        }
        values.push(distinct.order.get(i as usize).map_or([0; 3], |v| v.1));
    }
    Ok(Grouped {
        number,
        values,
        per_bone,
    })
}

/// One vertex as the file refers to it.
struct Corner {
    position: u32,
    normal: u32,
    color: u32,
    uv: u32,
}

/// The word a mesh is written under: its name, or `material_K` for a mesh without one.
fn material_name(mesh: &Mesh, k: usize) -> Result<Vec<u8>> {
    let name = mesh.name().as_bytes();
    if name.is_empty() {
        return Ok(format!("material_{k}").into_bytes());
    }
    if !is_word(name) {
        return Err(Error::unsupported(format!(
            "mesh {k}: the name {:?} is not one word without braces, as a `mtl` line needs",
            mesh.name()
        )));
    }
    Ok(name.to_vec())
}

/// The texture a mesh names, unless its shader is its name (how the reader fills the shader of a
/// material without texture) or empty.
fn texture_of<'m>(mesh: &'m Mesh, name: &[u8], k: usize) -> Result<Option<&'m Name>> {
    let shader = mesh.shader();
    if shader.is_empty() || shader.as_bytes() == name {
        return Ok(None);
    }
    if shader
        .as_bytes()
        .iter()
        .any(|&b| b == b'"' || b == b'\n' || b == b'\r')
    {
        return Err(Error::unsupported(format!(
            "mesh {k}: the shader {shader:?} holds a quote or a line break, which a `texture:` \
             line cannot keep"
        )));
    }
    Ok(Some(shader))
}

fn line(out: &mut Vec<u8>, text: &str) {
    put_line(out, 0, text.as_bytes());
}

fn numbers<const N: usize>(values: [f32; N], what: impl Fn() -> String) -> Result<String> {
    let mut s = String::new();
    for v in values {
        s.push('\t');
        s.push_str(&number(v, &what)?);
    }
    Ok(s)
}

/// Writes a model's meshes as a `.mod` text mesh, version 1.09 without packets, CRLF lines.
///
/// The model is meshes waiting for a skeleton by bone index (as a `.mod` loads), or bound to
/// one (whose bone count is `matrices:`). Each vertex must follow exactly one bone with weight 1
/// (its origin is written as the position relative to the bone's joint, its normal as the
/// normal). Each mesh is a material: its name (`material_K` when it has none, else one word),
/// and its shader as the material's texture unless the shader is the name. Positions and
/// normals are written once per bone and value, grouped by bone for `mtxv` and `mtxn`; uvs and
/// colours once per value, in order of first use. A colour byte `k` is written as `k / 255`,
/// which the reader's rounding gives back as `k`; the vertices of a mesh without colours are
/// white, so a model without any has the one white colour. Numbers are `%f` where six decimals
/// keep them exactly, else the shortest exact form.
pub fn write_mod(model: &Model) -> Result<Vec<u8>> {
    let bone_count = match model.unbound() {
        Some(BoneSlots::ByIndex(n)) => *n,
        Some(BoneSlots::ByName(_)) => {
            return Err(Error::unsupported(
                "the meshes name their bones, and a .mod numbers them: bind them to a skeleton \
                 first",
            ));
        }
        None => u32::try_from(model.bones().len()).unwrap_or(u32::MAX),
    };
    // A `.mod` vertex is its bone's joint plus an offset, unrotated: a bone that rotates or
    // scales at rest would put its vertices elsewhere once read back.
    if model.unbound().is_none() {
        let rest = model.skeleton().frame_poses(0).unwrap_or_default();
        if let Some((i, bone)) = model
            .bones()
            .iter()
            .enumerate()
            .find(|&(i, _)| rest.get(i).is_some_and(|p| !is_translation(p)))
        {
            return Err(Error::unsupported(format!(
                "bone {i} ({}): its rest pose rotates or scales, and an MM2 vertex is an offset \
                 from its bone's joint",
                bone.name
            )));
        }
    }
    if bone_count == 0 || bone_count > MAX_BONES {
        return Err(Error::limit(format!(
            "a .mod's meshes use 1 to {MAX_BONES} bones; the model has {bone_count}"
        )));
    }
    let meshes = model.meshes();
    let mut positions = Distinct::<BoneVector>::new();
    let mut normals = Distinct::<BoneVector>::new();
    let mut uvs = Distinct::<[u32; 2]>::new();
    let mut uv_values = Vec::new();
    let mut colors = Distinct::<[u8; 4]>::new();
    let textured = meshes.iter().any(|m| m.texcoords().is_some());
    let mut corners: Vec<Corner> = Vec::new();
    for (k, mesh) in meshes.iter().enumerate() {
        for v in 0..mesh.vertex_count() {
            let influence = match mesh.influences(v) {
                [i] if i.weight == 1.0 => i,
                other => {
                    return Err(Error::unsupported(format!(
                        "mesh {k} vertex {v}: {} influences; an MM2 vertex follows exactly one \
                         bone with weight 1",
                        other.len()
                    )));
                }
            };
            let uv = mesh
                .texcoords()
                .and_then(|t| t.get(v))
                .copied()
                .unwrap_or_default();
            let uv_number = uvs.add(uv.map(f32::to_bits))?;
            if uv_number as usize == uv_values.len() {
                uv_values.push(uv);
            }
            let color = mesh.colors().and_then(|c| c.get(v)).copied();
            corners.push(Corner {
                position: positions.add((influence.bone, bits(influence.origin)))?,
                normal: normals.add((influence.bone, bits(influence.normal)))?,
                color: colors.add(color.unwrap_or(WHITE))?,
                uv: uv_number,
            });
        }
    }
    // Without vertices, the white colour a model without colours has.
    if colors.order.is_empty() {
        colors.add(WHITE)?;
    }
    let positions = group(positions, bone_count)?;
    let normals = group(normals, bone_count)?;
    let total_triangles: usize = meshes.iter().map(Mesh::triangle_count).sum();

    let mut out = Vec::with_capacity(
        corners
            .len()
            .saturating_mul(96)
            .saturating_add(total_triangles.saturating_mul(24))
            .saturating_add(1024),
    );
    line(&mut out, "version: 1.09");
    for (key, value) in [
        ("verts", positions.values.len()),
        ("normals", normals.values.len()),
        ("colors", colors.order.len()),
        ("tex1s", if textured { uv_values.len() } else { 0 }),
        ("tex2s", 0),
        ("tangents", 0),
        ("materials", meshes.len()),
        ("adjuncts", corners.len()),
        ("primitives", total_triangles),
        ("matrices", bone_count as usize),
    ] {
        line(&mut out, &format!("{key}: {value}"));
    }
    line(&mut out, "");
    for (i, p) in positions.values.iter().enumerate() {
        let text = numbers(p.map(f32::from_bits), || format!("position {i}"))?;
        line(&mut out, &format!("v{text}"));
    }
    line(&mut out, "");
    for (i, n) in normals.values.iter().enumerate() {
        let text = numbers(n.map(f32::from_bits), || format!("normal {i}"))?;
        line(&mut out, &format!("n{text}"));
    }
    line(&mut out, "");
    for (i, c) in colors.order.iter().enumerate() {
        let text = numbers(c.map(|k| f32::from(k) / 255.0), || format!("colour {i}"))?;
        line(&mut out, &format!("c{text}"));
    }
    line(&mut out, "");
    if textured {
        for (i, uv) in uv_values.iter().enumerate() {
            let text = numbers(*uv, || format!("uv {i}"))?;
            line(&mut out, &format!("t1{text}"));
        }
        line(&mut out, "");
    }
    for (k, mesh) in meshes.iter().enumerate() {
        let name = material_name(mesh, k)?;
        let texture = texture_of(mesh, &name, k)?;
        put_line(&mut out, 0, &[b"mtl ", name.as_slice(), b" {"].concat());
        line(&mut out, &format!("\tadjuncts:\t{}", mesh.vertex_count()));
        line(
            &mut out,
            &format!("\tprimitives:\t{}", mesh.triangle_count()),
        );
        line(
            &mut out,
            &format!("\ttextures:\t{}", u8::from(texture.is_some())),
        );
        line(&mut out, "\tillum:\tdiffuse");
        line(&mut out, "\tambient:\t1.000000 1.000000 1.000000");
        line(&mut out, "\tdiffuse:\t1.000000 1.000000 1.000000");
        line(&mut out, "\tspecular:\t0.000000 0.000000 0.000000");
        if let Some(t) = texture {
            put_line(
                &mut out,
                0,
                &[b"\ttexture: 0 \"", t.as_bytes(), b"\""].concat(),
            );
        }
        line(&mut out, "}");
        line(&mut out, "");
    }
    for c in &corners {
        let p = positions
            .number
            .get(c.position as usize)
            .copied()
            .unwrap_or(0);
        let n = normals.number.get(c.normal as usize).copied().unwrap_or(0);
        let t = if textured { c.uv } else { 0 };
        line(&mut out, &format!("adj\t{p}\t{n}\t{}\t{t}\t0", c.color));
    }
    line(&mut out, "");
    let mut first = 0usize;
    for mesh in meshes {
        for tri in mesh.indices().as_chunks::<3>().0 {
            let [a, b, c] = tri.map(|i| (i as usize).saturating_add(first));
            line(&mut out, &format!("tri\t{a}\t{b}\t{c}"));
        }
        first = first.saturating_add(mesh.vertex_count());
    }
    line(&mut out, "");
    for (key, grouped) in [("mtxv", &positions), ("mtxn", &normals)] {
        let mut text = key.to_owned();
        for c in &grouped.per_bone {
            text.push(' ');
            text.push_str(&c.to_string());
        }
        line(&mut out, &text);
    }
    Ok(out)
}
