//! A parsed glTF made into ossa's model: which nodes become bones, the bind pose, meshes and
//! their influences, sampled animations, and the mapping back to an ossa export's source frame.

// Every index used here is a node, bone, joint, skin or vertex number checked against its table
// where it was read (children, joints, skins, indices), so plain indexing stays inside them.
#![allow(clippy::indexing_slicing)]

use std::collections::HashMap;

use glam::Quat;
use gltf_json::accessor::{ComponentType, Type};
use gltf_json::animation::{Interpolation as GltfInterpolation, Property};
use gltf_json::mesh::{Mode, Semantic};
use gltf_json::validation::Checked;

use super::accessor::{Buffers, Decoded, Want};
use super::axes::Axes;
use super::doc::{Doc as Root, Node, Transform};
use super::read::{data_uri, extras_of, source_frame};
use super::sample::{Interpolation, Track};
use crate::error::{Error, Result, ResultExt};
use crate::format::binary::{SUM_EXACT, SUM_TOLERATED};
use crate::format::{Budget, Checker, Format, LoadOptions, try_vec};
use crate::math::Mat3x4;
use crate::model::{
    Animation, BONE_ATTACHMENT, BONE_SYNTHETIC, Bone, Frame, Influence, Material, MeshParts,
    ModelParts, Name, Texture,
};

/// Frames, the bind pose included, at most: sampling turns a few keys into many frames.
const MAX_FRAMES: u64 = 65536;
/// Sampling rates a caller may ask for.
const FPS_RANGE: std::ops::RangeInclusive<f32> = 0.01..=1000.0;

const FLOATS: &[ComponentType] = &[ComponentType::F32];
const UNORMS: &[ComponentType] = &[ComponentType::F32, ComponentType::U8, ComponentType::U16];
const SNORMS: &[ComponentType] = &[
    ComponentType::F32,
    ComponentType::I8,
    ComponentType::U8,
    ComponentType::I16,
    ComponentType::U16,
];
const UINTS: &[ComponentType] = &[ComponentType::U8, ComponentType::U16, ComponentType::U32];

fn want<'w>(what: &'w str, types: &'w [Type], components: &'w [ComponentType]) -> Want<'w> {
    Want {
        what,
        types,
        components,
        indices: false,
    }
}

fn from_column_major(c: &[f32; 16]) -> Mat3x4 {
    let mut m = [0.0f32; 12];
    for (i, slot) in m.iter_mut().enumerate() {
        let (row, col) = (i / 4, i % 4);
        *slot = c.get(col * 4 + row).copied().unwrap_or_default();
    }
    Mat3x4 { m }
}

/// A node's translation, rotation and scale, where it has them rather than a matrix.
#[derive(Clone, Copy)]
struct Trs {
    t: [f32; 3],
    r: [f32; 4],
    s: [f32; 3],
}

impl Trs {
    const REST: Trs = Trs {
        t: [0.0; 3],
        r: [0.0, 0.0, 0.0, 1.0],
        s: [1.0; 3],
    };

    fn matrix(&self) -> Mat3x4 {
        Mat3x4::from_rotation_translation_scale(unit(self.r), self.t, self.s)
    }
}

/// A node's local matrix (from its matrix, else its TRS), made again where it is needed rather
/// than kept for every node.
fn local_of(node: &Node) -> Mat3x4 {
    match node.transform.as_deref() {
        Some(Transform::Matrix(m)) => from_column_major(m),
        Some(&Transform::Trs { t, r, s }) => Trs { t, r, s }.matrix(),
        None => Trs::REST.matrix(),
    }
}

/// A node's translation, rotation and scale: a matrix's decomposed.
fn trs_of_node(node: &Node) -> Trs {
    match node.transform.as_deref() {
        Some(Transform::Matrix(m)) => {
            let d = from_column_major(m).decompose();
            Trs {
                t: d.translation,
                r: d.rotation.to_array(),
                s: d.scale,
            }
        }
        Some(&Transform::Trs { t, r, s }) => Trs { t, r, s },
        None => Trs::REST,
    }
}

/// Heap per node while the nodes are made into bones: parent, breadth-first order, nearest
/// kept ancestor, bone, folded transform, and flags.
const NODE_SCRATCH: u64 = (2 * size_of::<Option<u32>>()
    + size_of::<u32>()
    + size_of::<Option<u32>>()
    + size_of::<u32>()
    + 2) as u64;
/// Heap per mesh made of a primitive: the mesh here, in the list that grows to hold it, and in
/// the model.
const MESH_COST: u64 = (3 * size_of::<MeshParts>() + 128) as u64;
/// Heap per vertex besides its decoded accessors: one influence at least and its start, its
/// normal (made from the faces in f64 where the file has none), texcoord and colour, and what
/// the model's skinning plan keeps of it.
const VERTEX_COST: u64 = (size_of::<Influence>() + 4 + 24 + 12 + 8 + 4 + 32) as u64;
/// The bone of a vertex no joint weighs until the root bone it is bound to is made.
const ROOTLESS: u32 = u32::MAX;

/// Heap per bone: its node, bind pose (world and local), the model's bone, its name's slot in
/// the table of names taken; then the model's bind and inverse bind, world pose and name index.
const BONE_COST: u64 = (size_of::<usize>()
    + 2 * size_of::<Mat3x4>()
    + size_of::<Bone>()
    + 32
    + 3 * size_of::<Mat3x4>()
    + 16) as u64;

fn unit(r: [f32; 4]) -> Quat {
    let q = Quat::from_array(r);
    let len = q.length();
    if len > 0.0 && len.is_finite() {
        q / len
    } else {
        Quat::IDENTITY
    }
}

pub(crate) fn build(
    root: &Root,
    bufs: &Buffers,
    binary: bool,
    ck: &mut Checker,
    options: &LoadOptions,
    budget: &mut Budget,
) -> Result<ModelParts> {
    let (mut axes, mut scale, mut source) = source_frame(root, ck)?;
    // A file whose nodes name a VitaMoo skeleton holds a Sims character: where no ossa export
    // recorded the frame (a tool may drop the asset's extras), it is the Sims frame at scale 1.
    let vitamoo_frame = source.is_none() && super::vitamoo::names_skeleton(root);
    if vitamoo_frame {
        axes = Axes::for_format(Format::SimsCmx);
        scale = 1.0;
        source = Some(Format::SimsCmx);
    }
    let nn = root.nodes.len();
    if u32::try_from(nn).is_err() {
        return Err(Error::limit(format!("{nn} nodes, more than 2^32")));
    }
    budget.add(ck, nn as u64, NODE_SCRATCH)?;

    // Parents: each node at most one; children that exist.
    let mut parent: Vec<Option<u32>> = vec![None; nn];
    for (p, node) in root.nodes.iter().enumerate() {
        for &c in node.children() {
            let c = c as usize;
            let slot = parent.get_mut(c).ok_or_else(|| {
                Error::malformed(format!(
                    "node {p}: child {c} does not exist (the file has {nn} nodes)"
                ))
            })?;
            if let Some(q) = *slot {
                return Err(Error::malformed(format!(
                    "node {c} has two parents, node {q} and node {p}"
                )));
            }
            *slot = Some(p as u32);
        }
    }
    // Parents before children, breadth first from the roots; a node never reached lies on or
    // under a cycle.
    let mut order: Vec<u32> = Vec::with_capacity(nn);
    order.extend((0..nn as u32).filter(|&i| parent[i as usize].is_none()));
    let mut k = 0;
    while let Some(&n) = order.get(k) {
        k += 1;
        order.extend_from_slice(root.nodes[n as usize].children());
    }
    if order.len() < nn {
        let mut seen = vec![false; nn];
        for &n in &order {
            seen[n as usize] = true;
        }
        let first = seen.iter().position(|s| !s).unwrap_or(0);
        return Err(Error::malformed(format!(
            "node {first}: its chain of parents is a cycle"
        )));
    }

    // Local transforms, checked here and made again where they are used.
    for (i, node) in root.nodes.iter().enumerate() {
        if node.transform.is_some() && !local_of(node).is_finite() {
            return Err(Error::malformed(format!(
                "node {i}: its transform holds a NaN or infinity"
            )));
        }
    }

    // Scene roots.
    let scene = match root.scene {
        Some(s) => Some(s.value()),
        None if !root.scenes.is_empty() => Some(0),
        None => None,
    };
    let mut in_scene = vec![scene.is_none(); nn];
    if let Some(s) = scene {
        let sc = root.scenes.get(s).ok_or_else(|| {
            Error::malformed(format!(
                "scene {s} does not exist (the file has {})",
                root.scenes.len()
            ))
        })?;
        let mut stack = Vec::new();
        for r in &sc.nodes {
            let r = r.value();
            match parent.get(r) {
                None => {
                    return Err(Error::malformed(format!(
                        "scene {s}: node {r} does not exist"
                    )));
                }
                Some(&Some(p)) => {
                    return Err(Error::malformed(format!(
                        "scene {s}: node {r} is a child of node {p}, not a root"
                    )));
                }
                Some(None) => stack.push(r),
            }
        }
        while let Some(n) = stack.pop() {
            if !in_scene[n] {
                in_scene[n] = true;
                stack.extend(root.nodes[n].children().iter().map(|&c| c as usize));
            }
        }
    }

    // Which nodes become bones: joints, meshes without a skin, and animated nodes. The nodes
    // between them never move, and are folded into their children's poses.
    let mut keep = vec![false; nn];
    // Per joint node: its inverse bind matrix and the first skin that gives it.
    let mut ibm: HashMap<usize, (Mat3x4, usize)> = HashMap::new();
    let mut skin_ibms: Vec<Vec<Mat3x4>> = Vec::with_capacity(root.skins.len());
    for (s, skin) in root.skins.iter().enumerate() {
        let matrices = match skin.inverse_bind_matrices {
            Some(a) => {
                let d = bufs
                    .floats(
                        a.value(),
                        want("inverse bind matrices", &[Type::Mat4], FLOATS),
                        ck,
                        budget,
                    )
                    .within(|| format!("skin {s}"))?;
                if d.count() != skin.joints.len() {
                    return Err(Error::malformed(format!(
                        "skin {s}: {} inverse bind matrices for {} joints",
                        d.count(),
                        skin.joints.len()
                    )));
                }
                (0..d.count())
                    .map(|i| {
                        let mut c = [0.0f32; 16];
                        c.copy_from_slice(d.element(i));
                        from_column_major(&c)
                    })
                    .collect()
            }
            None => vec![Mat3x4::IDENTITY; skin.joints.len()],
        };
        for (j, node) in skin.joints.iter().enumerate() {
            let n = node.value();
            if n >= nn {
                return Err(Error::malformed(format!(
                    "skin {s} joint {j}: node {n} does not exist (the file has {nn} nodes)"
                )));
            }
            keep[n] = true;
            let m = matrices[j];
            match ibm.get(&n) {
                Some(&(prev, from)) if !close(&prev, &m) => {
                    return Err(Error::unsupported(format!(
                        "skins {from} and {s} give joint node {n} different inverse bind \
                         matrices: one skeleton cannot skin both exactly"
                    )));
                }
                Some(_) => {}
                None => {
                    ibm.insert(n, (m, s));
                }
            }
        }
        skin_ibms.push(matrices);
    }
    for (i, node) in root.nodes.iter().enumerate() {
        if node.mesh.is_some() && node.skin.is_none() && in_scene[i] {
            keep[i] = true;
        }
    }
    // A file without meshes is a skeleton: each of its nodes is a bone.
    if !root
        .nodes
        .iter()
        .enumerate()
        .any(|(i, n)| n.mesh.is_some() && in_scene[i])
    {
        for (k, s) in keep.iter_mut().zip(&in_scene) {
            *k |= *s;
        }
    }
    for (a, anim) in root.animations.iter().enumerate() {
        for (c, ch) in anim.channels.iter().enumerate() {
            let n = ch.target.node.value();
            if n >= nn {
                return Err(Error::malformed(format!(
                    "animation {a} channel {c}: node {n} does not exist"
                )));
            }
            if matches!(
                ch.target.path,
                Checked::Valid(Property::Translation | Property::Rotation | Property::Scale)
            ) {
                keep[n] = true;
            }
        }
    }

    // Bones in breadth-first order; each node's nearest kept ancestor and the fixed transform of
    // the folded nodes between.
    // The folded transform is kept once per node under a folded node (`prefixes`, the first
    // the identity); a node names its own by index.
    let mut bone_of = vec![None::<u32>; nn];
    let mut kept_parent = vec![None::<u32>; nn];
    let mut prefix = vec![0u32; nn];
    let mut prefixes = vec![Mat3x4::IDENTITY];
    for &n in &order {
        let n = n as usize;
        if let Some(p) = parent[n] {
            let p = p as usize;
            if keep[p] {
                kept_parent[n] = Some(p as u32);
            } else {
                kept_parent[n] = kept_parent[p];
                let folded = prefixes[prefix[p] as usize].mul(&local_of(&root.nodes[p]));
                budget.add(ck, 1, size_of::<Mat3x4>() as u64 * 2)?;
                prefix[n] = u32::try_from(prefixes.len())
                    .map_err(|_| Error::limit("more than 2^32 folded nodes"))?;
                prefixes.push(folded);
            }
        }
    }
    // Bones in the nodes' own order where it has parents first (as an ossa export writes
    // them), else breadth first.
    let in_index_order = (0..nn).all(|n| kept_parent[n].is_none_or(|p| (p as usize) < n));
    let bone_nodes: Vec<usize> = if in_index_order {
        (0..nn).filter(|&n| keep[n]).collect()
    } else {
        order
            .iter()
            .map(|&n| n as usize)
            .filter(|&n| keep[n])
            .collect()
    };
    // Mesh nodes in the scene, parents first; the rest of the order and the parents are done.
    let mesh_nodes: Vec<usize> = order
        .iter()
        .map(|&n| n as usize)
        .filter(|&n| root.nodes[n].mesh.is_some() && in_scene[n])
        .collect();
    drop(order);
    drop(parent);
    budget.add(ck, bone_nodes.len() as u64, BONE_COST)?;
    for (b, &n) in bone_nodes.iter().enumerate() {
        bone_of[n] = Some(b as u32);
    }
    let mut bones = Vec::with_capacity(bone_nodes.len() + 1);
    let mut taken: HashMap<&str, u32> = HashMap::new();
    let mut unnamed = 0usize;
    let mut renamed = 0usize;
    for &n in &bone_nodes {
        let node = &root.nodes[n];
        let extras = node.extras.as_deref();
        let own = extras.and_then(|e| e.name.as_deref()).map(str::to_owned);
        let flags = extras
            .and_then(|e| e.flags)
            .map_or(0, |f| f as u32 & (BONE_ATTACHMENT | BONE_SYNTHETIC));
        let name = match (own, node.name.as_deref()) {
            // The export's record of the model's own name, which may repeat.
            (Some(own), _) => own,
            (None, Some(name)) if !name.is_empty() => {
                let count = taken.entry(name).or_insert(0);
                *count += 1;
                if *count > 1 {
                    renamed += 1;
                    format!("{name}~{count}")
                } else {
                    name.to_owned()
                }
            }
            _ => {
                unnamed += 1;
                format!("node_{n}")
            }
        };
        bones.push(Bone {
            name: Name::from(name.as_str()),
            parent: kept_parent[n]
                .and_then(|p| bone_of[p as usize])
                .map_or(-1, |b| b as i32),
            flags,
        });
    }
    if unnamed > 0 {
        ck.tolerate(Error::malformed(format!(
            "{unnamed} bone nodes have no name; they are called node_N after their index"
        )))?;
    }
    if renamed > 0 {
        ck.tolerate(Error::malformed(format!(
            "{renamed} bone nodes repeat an earlier node's name; a repeat is called NAME~2, ~3..."
        )))?;
    }

    // Frame 0, the bind pose: a joint's world matrix is its inverse bind's inverse, the other
    // bones keep their place under their parents.
    let nb = bone_nodes.len();
    let mut bind_world = vec![Mat3x4::IDENTITY; nb];
    let mut frame0 = Vec::with_capacity(nb);
    let mut collapsed = 0usize;
    for (b, &n) in bone_nodes.iter().enumerate() {
        let rel = prefixes[prefix[n] as usize].mul(&local_of(&root.nodes[n]));
        let parent_world = kept_parent[n]
            .and_then(|p| bone_of[p as usize])
            .map(|p| bind_world[p as usize]);
        // A joint whose inverse bind cannot be inverted (a bone collapsed to a point, which an
        // ossa export writes as a zero matrix) takes its node's rest pose as its bind pose.
        let joint = ibm.get(&n);
        let bind = joint.and_then(|(m, _)| m.inverse());
        if joint.is_some() && bind.is_none() {
            collapsed += 1;
        }
        let (world, local0) = match bind {
            Some(world) => {
                let l = match parent_world {
                    Some(pw) => pw
                        .inverse()
                        .ok_or_else(|| {
                            Error::malformed(format!(
                                "node {n}: its parent's bind pose cannot be inverted"
                            ))
                        })?
                        .mul(&world),
                    None => world,
                };
                (world, l)
            }
            None => (parent_world.map_or(rel, |pw| pw.mul(&rel)), rel),
        };
        // Products of finite matrices can still overflow f32.
        if !local0.is_finite() || !world.is_finite() {
            return Err(Error::malformed(format!(
                "node {n}: its bind pose is beyond f32 (from its inverse bind matrix, its \
                 parent's, or the transforms of the nodes above it)"
            )));
        }
        bind_world[b] = world;
        frame0.push(local0);
    }
    drop(bind_world);
    drop(kept_parent);
    drop(ibm);

    if collapsed > 0 {
        ck.tolerate(Error::malformed(format!(
            "{collapsed} joints have an inverse bind matrix that cannot be inverted; their bind \
             pose is their node's rest pose"
        )))?;
    }
    let mut parts = ModelParts::new(if binary { Format::Glb } else { Format::Gltf });
    parts.bones = bones;

    // Meshes: every primitive of every mesh node in the scene, made into the model's meshes as
    // they are read (in the source's frame), so that nothing but the decoded accessors is held
    // beside them. A vertex no joint weighs is bound to a root bone made once all are read.
    let to_native = axes.inverse_matrix(scale);
    let rotate = axes.inverse_matrix(1.0);
    let mirror = axes.determinant() < 0.0;
    let mut meshes: Vec<MeshParts> = Vec::new();
    // Per mesh, the node it was read from.
    let mut mesh_node_of: Vec<usize> = Vec::new();
    let mut materials = Materials::default();
    let mut needs_root = false;
    let mut skipped_modes = 0usize;
    for &n in &mesh_nodes {
        let node = &root.nodes[n];
        let Some(m) = node.mesh.map(|m| m as usize) else {
            continue;
        };
        let mesh = root
            .meshes
            .get(m)
            .ok_or_else(|| Error::malformed(format!("node {n}: mesh {m} does not exist")))?;
        let skin = match node.skin {
            Some(s) => {
                let s = s as usize;
                Some((
                    s,
                    root.skins.get(s).ok_or_else(|| {
                        Error::malformed(format!("node {n}: skin {s} does not exist"))
                    })?,
                ))
            }
            None => None,
        };
        let mesh_name = extras_of(&mesh.extras)
            .and_then(|e| e.get("name").and_then(|v| v.as_str()).map(str::to_owned))
            .or_else(|| mesh.name.clone())
            .unwrap_or_default();
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let what = || format!("mesh {m} primitive {p}");
            let mode = match prim.mode {
                Checked::Valid(mode) => mode,
                Checked::Invalid => {
                    return Err(Error::malformed(format!("{}: mode is invalid", what())));
                }
            };
            if !matches!(
                mode,
                Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
            ) {
                skipped_modes += 1;
                continue;
            }
            // Every primitive of every node that draws it is a mesh of its own: charged before
            // anything of it is made.
            budget.add(ck, 1, MESH_COST)?;
            let attr = |sem: Semantic| prim.attributes.get(&Checked::Valid(sem)).map(|a| a.value());
            let pos_a = attr(Semantic::Positions)
                .ok_or_else(|| Error::malformed(format!("{}: no POSITION", what())))?;
            let pos = bufs
                .floats(pos_a, want("POSITION", &[Type::Vec3], FLOATS), ck, budget)
                .within(what)?;
            let nv = pos.count();
            budget.add(ck, nv as u64, VERTEX_COST)?;
            let same = |d_count: usize, name: &str| -> Result<()> {
                if d_count != nv {
                    Err(Error::malformed(format!(
                        "{}: {name} has {d_count} elements for {nv} vertices",
                        what()
                    )))
                } else {
                    Ok(())
                }
            };
            // Triangles.
            let corners: Vec<u32> = match prim.indices {
                Some(a) => {
                    let d = bufs
                        .uints(
                            a.value(),
                            Want {
                                indices: true,
                                ..want("indices", &[Type::Scalar], UINTS)
                            },
                            ck,
                            budget,
                        )
                        .within(what)?;
                    if let Some(i) = d.values.iter().position(|&x| x as usize >= nv) {
                        return Err(Error::malformed(format!(
                            "{}: index {i} is {}, past its {nv} vertices",
                            what(),
                            d.values[i]
                        )));
                    }
                    d.values
                }
                None => {
                    budget.add(ck, nv as u64, 4)?;
                    (0..nv as u32).collect()
                }
            };
            let c = corners.len();
            let triangles = match mode {
                Mode::Triangles => c / 3,
                _ => c.saturating_sub(2),
            };
            budget.add(ck, triangles as u64, 12)?;
            let mut indices = try_vec(triangles.saturating_mul(3), what)?;
            let get = |i: usize| corners.get(i).copied().unwrap_or(0);
            match mode {
                Mode::Triangles => indices.extend(corners.chunks_exact(3).flatten()),
                Mode::TriangleStrip => {
                    for i in 0..c.saturating_sub(2) {
                        if i % 2 == 0 {
                            indices.extend([get(i), get(i + 1), get(i + 2)]);
                        } else {
                            indices.extend([get(i + 1), get(i), get(i + 2)]);
                        }
                    }
                }
                _ => {
                    for i in 0..c.saturating_sub(2) {
                        indices.extend([get(i + 1), get(i + 2), get(0)]);
                    }
                }
            }
            drop(corners);
            let position = |v: usize| {
                let e = pos.element(v);
                [e[0], e[1], e[2]]
            };
            let normals: Vec<[f32; 3]> = match attr(Semantic::Normals) {
                Some(a) => {
                    let d = bufs
                        .floats(a, want("NORMAL", &[Type::Vec3], FLOATS), ck, budget)
                        .within(what)?;
                    same(d.count(), "NORMAL")?;
                    (0..nv)
                        .map(|v| {
                            let e = d.element(v);
                            [e[0], e[1], e[2]]
                        })
                        .collect()
                }
                None => {
                    ck.tolerate(Error::malformed(format!(
                        "{}: no NORMAL; normals are made from the faces",
                        what()
                    )))?;
                    face_normals(nv, position, &indices)
                }
            };
            let texcoords = match attr(Semantic::TexCoords(0)) {
                Some(a) => {
                    let d = bufs
                        .floats(a, want("TEXCOORD_0", &[Type::Vec2], UNORMS), ck, budget)
                        .within(what)?;
                    same(d.count(), "TEXCOORD_0")?;
                    Some(
                        (0..nv)
                            .map(|v| {
                                let e = d.element(v);
                                [e[0], e[1]]
                            })
                            .collect(),
                    )
                }
                None => None,
            };
            let colors = match attr(Semantic::Colors(0)) {
                Some(a) => {
                    let d = bufs
                        .floats(
                            a,
                            want("COLOR_0", &[Type::Vec3, Type::Vec4], UNORMS),
                            ck,
                            budget,
                        )
                        .within(what)?;
                    same(d.count(), "COLOR_0")?;
                    let byte = |x: f32| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
                    Some(
                        (0..nv)
                            .map(|v| {
                                let e = d.element(v);
                                let g = |i: usize| e.get(i).copied().unwrap_or(1.0);
                                [byte(g(0)), byte(g(1)), byte(g(2)), byte(g(3))]
                            })
                            .collect(),
                    )
                }
                None => None,
            };
            // Influences: every JOINTS_n/WEIGHTS_n set of a skinned mesh; a mesh node without a
            // skin is its own bone.
            let mut sets: Vec<(Decoded<u32>, Decoded<f32>)> = Vec::new();
            if let Some((s, skin)) = skin {
                let mut set = 0u32;
                while let (Some(ja), Some(wa)) =
                    (attr(Semantic::Joints(set)), attr(Semantic::Weights(set)))
                {
                    let label = format!("JOINTS_{set}");
                    let j: Decoded<u32> = bufs
                        .uints(ja, want(&label, &[Type::Vec4], &UINTS[..2]), ck, budget)
                        .within(what)?;
                    let label = format!("WEIGHTS_{set}");
                    let w = bufs
                        .floats(wa, want(&label, &[Type::Vec4], UNORMS), ck, budget)
                        .within(what)?;
                    same(j.count(), "JOINTS")?;
                    same(w.count(), "WEIGHTS")?;
                    if let Some((v, &joint)) = j
                        .values
                        .iter()
                        .enumerate()
                        .find(|&(_, &joint)| joint as usize >= skin.joints.len())
                    {
                        return Err(Error::malformed(format!(
                            "{} vertex {}: joint {joint} is past skin {}'s {} joints",
                            what(),
                            v / 4,
                            s,
                            skin.joints.len()
                        )));
                    }
                    // Each of the set's four slots may become an influence.
                    budget.add(ck, nv as u64 * 4, size_of::<Influence>() as u64)?;
                    sets.push((j, w));
                    set += 1;
                }
            }
            let mut influence_start = try_vec(nv + 1, what)?;
            influence_start.push(0u32);
            let mut influences = try_vec(nv, what)?;
            // Bone-space influence of a point and normal through an inverse bind (glTF skins
            // `joint world x inverse bind x p`: the bone-space point is exact).
            let influence = |bone: u32, w: f32, ibm: Option<&Mat3x4>, p, nrm| {
                let (p, nrm) = match ibm {
                    Some(ibm) => (ibm.transform_point(p), ibm.transform_vector(nrm)),
                    None => (p, nrm),
                };
                let o = to_native.transform_point(p);
                let d = unit3(rotate.transform_vector(nrm));
                Influence {
                    origin: o.map(|x| x * w),
                    weight: w,
                    normal: d.map(|x| x * w),
                    bone,
                }
            };
            let mut off = 0usize;
            let mut worst = (0usize, 1.0f32);
            for (v, &nrm) in normals.iter().enumerate() {
                let p = position(v);
                let first = influences.len();
                match skin {
                    Some((s, skin)) => {
                        let mut sum = 0.0f32;
                        for (j, w) in &sets {
                            for (&joint, &weight) in j.element(v).iter().zip(w.element(v)) {
                                if weight == 0.0 {
                                    continue;
                                }
                                sum += weight;
                                let node = skin.joints[joint as usize].value();
                                let bone = bone_of[node].unwrap_or(0);
                                let ibm = &skin_ibms[s][joint as usize];
                                let infl = influence(bone, weight, Some(ibm), p, nrm);
                                if !infl.origin.iter().all(|x| x.is_finite()) {
                                    return Err(Error::limit(format!(
                                        "{} vertex {v}: its bone-space position is not a \
                                         finite float",
                                        what()
                                    )));
                                }
                                influences.push(infl);
                            }
                        }
                        if influences.len() == first {
                            needs_root = true;
                            influences.push(influence(ROOTLESS, 1.0, None, p, nrm));
                        } else if (sum - 1.0).abs() > SUM_TOLERATED {
                            ck.problem(Error::malformed(format!(
                                "{} vertex {v}: weights sum to {sum} (must be 1 within \
                                 {SUM_TOLERATED})",
                                what()
                            )))?;
                        } else if (sum - 1.0).abs() > SUM_EXACT {
                            off += 1;
                            if (sum - 1.0).abs() > (worst.1 - 1.0).abs() {
                                worst = (v, sum);
                            }
                        }
                    }
                    None => {
                        let bone = bone_of[n].unwrap_or(0);
                        influences.push(influence(bone, 1.0, None, p, nrm));
                    }
                }
                let end = u32::try_from(influences.len())
                    .map_err(|_| Error::limit("a mesh has more than 2^32 influences"))?;
                influence_start.push(end);
            }
            if off > 0 {
                ck.tolerate(Error::malformed(format!(
                    "{}: {off} vertices have weights summing off 1 by more than {SUM_EXACT}; \
                     the worst, vertex {}, sums to {}",
                    what(),
                    worst.0,
                    worst.1
                )))?;
            }
            if mirror {
                for t in indices.chunks_exact_mut(3) {
                    t.swap(1, 2);
                }
            }
            let material = match prim.material {
                Some(i) => Some(
                    materials
                        .take(root, bufs, i.value(), ck, budget)
                        .within(|| format!("{} material {}", what(), i.value()))?,
                ),
                None => None,
            };
            let shader = prim
                .material
                .and_then(|i| root.materials.get(i.value()))
                .and_then(|mat| mat.name.clone())
                .unwrap_or_default();
            mesh_node_of.push(n);
            meshes.push(MeshParts {
                name: Name::from(
                    if mesh.primitives.len() == 1 {
                        mesh_name.clone()
                    } else {
                        format!("{mesh_name} {p}").trim_start().to_owned()
                    }
                    .as_str(),
                ),
                shader: Name::from(shader.as_str()),
                indices,
                texcoords,
                colors,
                material,
                influence_start,
                influences,
                ..MeshParts::default()
            });
        }
    }
    if skipped_modes > 0 {
        ck.tolerate(Error::unsupported(format!(
            "{skipped_modes} primitives of points or lines are left out"
        )))?;
    }
    let root_bone = needs_root.then(|| {
        parts.bones.push(Bone {
            name: Name::from("root"),
            parent: -1,
            flags: BONE_SYNTHETIC,
        });
        (parts.bones.len() - 1) as u32
    });
    let nbones = parts.bones.len();

    // A bind pose out of range fails the load (Model's check): found here, before its
    // animations are sampled into frames that would only be dropped.
    let from_native = axes.matrix(scale);
    let conj = |m: &Mat3x4| to_native.mul(m).mul(&from_native);
    crate::poses::Poses::from(poses_in_native(&frame0, root_bone.is_some(), &conj)).check_chained(
        &parts.bones,
        &[Frame::named("bind")],
        None,
    )?;

    // Animations, sampled.
    let fps_asked = options.sample_fps;
    if fps_asked != 0.0 && !FPS_RANGE.contains(&fps_asked) {
        return Err(Error::invalid_argument(format!(
            "sample_fps {fps_asked} is not 0 (automatic) or a rate from 0.01 to 1000"
        )));
    }
    let mut frames = vec![Frame::named("bind")];
    let mut poses = frame0;
    if root_bone.is_some() {
        poses.reserve_exact(1);
        poses.push(Mat3x4::IDENTITY);
    }
    // The bones' rest TRS, which animation channels override.
    let bone_trs: Vec<Trs> = if root.animations.is_empty() {
        Vec::new()
    } else {
        budget.add(ck, nb as u64, 2 * size_of::<Trs>() as u64)?;
        bone_nodes
            .iter()
            .map(|&n| trs_of_node(&root.nodes[n]))
            .collect()
    };
    let mut skipped_weights = 0usize;
    let mut skipped_nodes = 0usize;
    // The skills' scenes as the root node records them, for animations whose extras are gone.
    let skills = if root.animations.is_empty() {
        serde_json::Map::new()
    } else {
        super::vitamoo::stored_skills(root, ck, budget)?
    };
    for (a, anim) in root.animations.iter().enumerate() {
        let what = || format!("animation {a}");
        struct Channel {
            bone: usize,
            path: Property,
            times: Vec<f32>,
            values: Vec<f32>,
            interpolation: Interpolation,
        }
        let mut channels = Vec::new();
        for (c, ch) in anim.channels.iter().enumerate() {
            let path = match ch.target.path {
                Checked::Valid(Property::MorphTargetWeights) => {
                    skipped_weights += 1;
                    continue;
                }
                Checked::Valid(p) => p,
                Checked::Invalid => {
                    return Err(Error::malformed(format!(
                        "{} channel {c}: path is invalid",
                        what()
                    )));
                }
            };
            let node = ch.target.node.value();
            let Some(bone) = bone_of.get(node).copied().flatten() else {
                skipped_nodes += 1;
                continue;
            };
            let s = ch.sampler.value();
            let sampler = anim.samplers.get(s).ok_or_else(|| {
                Error::malformed(format!(
                    "{} channel {c}: sampler {s} does not exist",
                    what()
                ))
            })?;
            let interpolation = match sampler.interpolation {
                Checked::Valid(GltfInterpolation::Linear) => Interpolation::Linear,
                Checked::Valid(GltfInterpolation::Step) => Interpolation::Step,
                Checked::Valid(GltfInterpolation::CubicSpline) => Interpolation::CubicSpline,
                Checked::Invalid => {
                    return Err(Error::malformed(format!(
                        "{} sampler {s}: interpolation is invalid",
                        what()
                    )));
                }
            };
            let times = bufs
                .floats(
                    sampler.input.value(),
                    want("key times", &[Type::Scalar], FLOATS),
                    ck,
                    budget,
                )
                .within(|| format!("{} sampler {s}", what()))?
                .values;
            if let Some(k) = times.windows(2).position(|w| w[1] <= w[0]) {
                return Err(Error::malformed(format!(
                    "{} sampler {s}: key time {} is not after key time {k}",
                    what(),
                    k + 1
                )));
            }
            if times.first().is_some_and(|&t| t < 0.0) {
                return Err(Error::malformed(format!(
                    "{} sampler {s}: a key time is negative",
                    what()
                )));
            }
            let (types, components, width): (&[Type], &[ComponentType], usize) = match path {
                Property::Rotation => (&[Type::Vec4], SNORMS, 4),
                _ => (&[Type::Vec3], FLOATS, 3),
            };
            let values = bufs
                .floats(
                    sampler.output.value(),
                    want("key values", types, components),
                    ck,
                    budget,
                )
                .within(|| format!("{} sampler {s}", what()))?;
            let per_key = if interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            if values.count() != times.len() * per_key || times.is_empty() {
                return Err(Error::malformed(format!(
                    "{} sampler {s}: {} values for {} keys of {interpolation:?}",
                    what(),
                    values.count(),
                    times.len()
                )));
            }
            debug_assert_eq!(values.width, width);
            channels.push(Channel {
                bone: bone as usize,
                path,
                times,
                values: values.values,
                interpolation,
            });
        }
        // Where several channels drive one property, the last one wins: the others are dropped
        // before sampling, so that the work stays within frames x bones x 3.
        let mut seen = std::collections::HashSet::new();
        let mut last_first: Vec<Channel> = Vec::with_capacity(channels.len());
        for c in channels.into_iter().rev() {
            if seen.insert((c.bone, c.path as u32)) {
                last_first.push(c);
            }
        }
        last_first.reverse();
        let channels = last_first;
        let duration = channels
            .iter()
            .filter_map(|c| c.times.last().copied())
            .fold(0.0f32, f32::max);
        // The scene an ossa export describes in the animation's extras, where its keys agree;
        // else the keys' own rate.
        // Else the scene the root node records for a skill of its name (a tool that drops
        // animation extras, as Blender's importer does, also resamples the keys at its own
        // rate: the record's frames are sampled from them wherever they fall).
        let stored = (fps_asked == 0.0)
            .then(|| {
                let times = channels.iter().map(|c| c.times.as_slice());
                match extras_of(&anim.extras).filter(|e| e.get("fps").is_some()) {
                    Some(own) => stored_scene(&own, times, false),
                    None => {
                        let recorded = skills.get(anim.name.as_deref()?)?;
                        stored_scene(recorded, times, true)
                    }
                }
            })
            .flatten();
        let (fps, count, looping) = match stored {
            Some(ref s) => (s.fps, s.frames, s.looping),
            None => {
                let fps = if fps_asked > 0.0 {
                    fps_asked
                } else {
                    key_rate(channels.iter().map(|c| c.times.as_slice()))
                };
                let count =
                    ((f64::from(duration) * f64::from(fps)).round() as u64).saturating_add(1);
                (fps, count, false)
            }
        };
        let first = frames.len() as u64;
        if first.saturating_add(count) > MAX_FRAMES {
            return Err(Error::limit(format!(
                "{}: {count} frames at {fps} fps make more than {MAX_FRAMES} frames in all",
                what()
            )));
        }
        budget.add(ck, count.saturating_mul(nbones as u64), 48)?;
        let name = anim
            .name
            .clone()
            .unwrap_or_else(|| format!("animation {a}"));
        poses
            .try_reserve_exact((count as usize).saturating_mul(nbones))
            .map_err(|_| {
                Error::out_of_memory(format!(
                    "{}: {count} frames of {nbones} bones could not be allocated",
                    what()
                ))
            })?;
        let mut pose = bone_trs.clone();
        for i in 0..count {
            let t = if i + 1 == count && stored.is_none() {
                duration
            } else {
                (i as f64 / f64::from(fps)) as f32
            };
            pose.copy_from_slice(&bone_trs);
            for c in &channels {
                let track = Track {
                    times: &c.times,
                    values: &c.values,
                    width: if c.path == Property::Rotation { 4 } else { 3 },
                    interpolation: c.interpolation,
                    rotation: c.path == Property::Rotation,
                };
                let slot = &mut pose[c.bone];
                match c.path {
                    Property::Translation => track.sample(t, &mut slot.t),
                    Property::Rotation => track.sample(t, &mut slot.r),
                    _ => track.sample(t, &mut slot.s),
                }
            }
            for (b, &n) in bone_nodes.iter().enumerate() {
                poses.push(prefixes[prefix[n] as usize].mul(&pose[b].matrix()));
            }
            if root_bone.is_some() {
                poses.push(Mat3x4::IDENTITY);
            }
            frames.push(Frame::named(&format!("{name} {i}")));
        }
        parts.animations.push(Animation {
            name: Name::from(name.as_str()),
            first_frame: first as u32,
            frame_count: count as u32,
            fps,
            looping,
            ..Animation::default()
        });
    }
    if skipped_weights > 0 {
        ck.tolerate(Error::unsupported(format!(
            "{skipped_weights} morph target weight channels are left out"
        )))?;
    }
    if skipped_nodes > 0 {
        ck.tolerate(Error::unsupported(format!(
            "{skipped_nodes} channels animate nodes that are not bones, and are left out"
        )))?;
    }

    // Into the source's frame: every matrix conjugated (points and vectors were mapped as the
    // meshes were made).
    let identity_frame = axes == Axes::IDENTITY && scale == 1.0;
    if !identity_frame {
        for p in poses.iter_mut() {
            *p = conj(p);
        }
    }
    if let Some(root) = root_bone {
        for infl in meshes.iter_mut().flat_map(|m| m.influences.iter_mut()) {
            if infl.bone == ROOTLESS {
                infl.bone = root;
            }
        }
    }
    parts.meshes = meshes;
    if nbones == 0 {
        // Frames pose bones: a model without bones has none, and its animations move nothing.
        if !parts.animations.is_empty() {
            parts.warnings.push(format!(
                "{} animations move no bone of the model and are dropped",
                parts.animations.len()
            ));
        }
        parts.animations.clear();
        frames.clear();
    }
    parts.materials = materials.materials;
    parts.textures = materials.textures;
    parts.poses = poses.into();
    parts.frames = frames;
    parts.up_axis = axes.from[1] as u32;
    parts.handedness = if axes.determinant() < 0.0 { -1 } else { 1 };
    parts.frame_format = source;
    super::vitamoo::read(
        root,
        &super::vitamoo::Places {
            bone_nodes: &bone_nodes,
            mesh_nodes: &mesh_node_of,
            scale,
        },
        &mut parts,
        ck,
        budget,
    )?;
    if vitamoo_frame {
        parts.warnings.push(
            "the file's nodes name a VitaMoo skeleton: it is a Sims character, read in the Sims \
             frame (glTF's x mirrored, y up)"
                .to_owned(),
        );
    } else if let Some(f) = source {
        parts.warnings.push(format!(
            "the file is an ossa export of a {} model; it is read back in that model's axes and units",
            f.name()
        ));
    }
    Ok(parts)
}

fn unit3(v: [f32; 3]) -> [f32; 3] {
    let len = v.iter().map(|c| f64::from(*c).powi(2)).sum::<f64>().sqrt();
    if len > 1e-12 && len.is_finite() {
        v.map(|c| (f64::from(c) / len) as f32)
    } else {
        [0.0, 0.0, 0.0]
    }
}

fn close(a: &Mat3x4, b: &Mat3x4) -> bool {
    a.m.iter()
        .zip(&b.m)
        .all(|(x, y)| (x - y).abs() <= 1e-5 * (1.0 + x.abs().max(y.abs())))
}

/// Area-weighted face normals at each vertex.
fn face_normals(
    count: usize,
    position: impl Fn(usize) -> [f32; 3],
    indices: &[u32],
) -> Vec<[f32; 3]> {
    let mut acc = vec![[0.0f64; 3]; count];
    for t in indices.chunks_exact(3) {
        // Indices were checked against the vertex count.
        let p = |i: u32| position(i as usize).map(f64::from);
        let (a, b, c) = (p(t[0]), p(t[1]), p(t[2]));
        let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        let n = [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ];
        for &i in t {
            if let Some(s) = acc.get_mut(i as usize) {
                for k in 0..3 {
                    s[k] += n[k];
                }
            }
        }
    }
    acc.into_iter()
        .map(|n| unit3(n.map(|c| c as f32)))
        .collect()
}

/// Frames a second for keys: the keys' own rate where every channel's keys are evenly spaced at
/// one interval, else [`super::read::DEFAULT_FPS`].
fn key_rate<'t>(channels: impl Iterator<Item = &'t [f32]>) -> f32 {
    let mut interval: Option<f64> = None;
    for times in channels {
        for w in times.windows(2) {
            let d = f64::from(w[1]) - f64::from(w[0]);
            match interval {
                None => interval = Some(d),
                // Key times are f32: far from 0 their spacing is only as exact as their ulp.
                Some(i) if (d - i).abs() <= 1e-3 * i + 2.0 * ulp(w[1]) => {}
                Some(_) => return super::read::DEFAULT_FPS,
            }
        }
    }
    match interval {
        Some(i) if i > 0.0 => {
            let fps = (1.0 / i) as f32;
            // Rates a float key time rounds to, such as 24.000002, are the whole number.
            let fps = if (fps - fps.round()).abs() < 1e-3 {
                fps.round()
            } else {
                fps
            };
            if FPS_RANGE.contains(&fps) {
                fps
            } else {
                super::read::DEFAULT_FPS
            }
        }
        _ => super::read::DEFAULT_FPS,
    }
}

/// The bind frame's poses in the source's frame, with the root bone's where there is one.
fn poses_in_native(
    frame0: &[Mat3x4],
    root: bool,
    conj: &impl Fn(&Mat3x4) -> Mat3x4,
) -> Vec<Mat3x4> {
    let mut out: Vec<Mat3x4> = frame0.iter().map(conj).collect();
    if root {
        out.push(Mat3x4::IDENTITY);
    }
    out
}

/// The distance from `t` to the next f32, as f64.
fn ulp(t: f32) -> f64 {
    f64::from(f32::from_bits(t.abs().to_bits().saturating_add(1))) - f64::from(t.abs())
}

/// A scene as an ossa export describes it in an animation's extras.
struct StoredScene {
    fps: f32,
    frames: u64,
    looping: bool,
}

/// The scene in `extras` (`fps`, `frames`, `looping`, as ossa's export writes them), where
/// every key time lies on its frames (within the f32 times' precision; `anywhere`: at any time)
/// and inside its span:
/// then the scene comes back with its own rate and length, however long, instead of what its
/// keys suggest.
fn stored_scene<'t>(
    e: &serde_json::Value,
    channels: impl Iterator<Item = &'t [f32]>,
    anywhere: bool,
) -> Option<StoredScene> {
    let fps = e.get("fps")?.as_f64()? as f32;
    let frames = e.get("frames")?.as_u64()?;
    let looping = e.get("looping").and_then(|l| l.as_bool()).unwrap_or(false);
    if !FPS_RANGE.contains(&fps) || frames == 0 || frames > MAX_FRAMES {
        return None;
    }
    // A looping scene's export adds a key one frame past its last, back at its first.
    let last = if looping && frames > 1 {
        frames
    } else {
        frames - 1
    };
    let fps64 = f64::from(fps);
    for times in channels {
        for &t in times {
            let k = f64::from(t) * fps64;
            let tolerance = 1e-3 + 2.0 * ulp(t) * fps64;
            let off_frame = !anywhere && (k - k.round()).abs() > tolerance;
            if off_frame || k.round() > last as f64 || k < -tolerance {
                return None;
            }
        }
    }
    Some(StoredScene {
        fps,
        frames,
        looping,
    })
}

/// The materials meshes use, each once, and the base colour images they name.
#[derive(Default)]
struct Materials {
    by_index: HashMap<usize, u32>,
    images: HashMap<usize, u32>,
    materials: Vec<Material>,
    textures: Vec<Texture>,
}

impl Materials {
    /// The model's material for glTF material `i`.
    fn take(
        &mut self,
        root: &Root,
        bufs: &Buffers,
        i: usize,
        ck: &Checker,
        budget: &mut Budget,
    ) -> Result<u32> {
        if let Some(&m) = self.by_index.get(&i) {
            return Ok(m);
        }
        let mat = root
            .materials
            .get(i)
            .ok_or_else(|| Error::malformed("does not exist"))?;
        let pbr = &mat.pbr_metallic_roughness;
        let texture = match &pbr.base_color_texture {
            Some(info) => Some(self.image(root, bufs, info.index.value(), ck, budget)?),
            None => None,
        };
        let [r, g, b] = mat.emissive_factor.0;
        let m = self.materials.len() as u32;
        self.materials.push(Material {
            id: i16::try_from(i).unwrap_or(i16::MAX),
            name: Name::from(
                mat.name
                    .clone()
                    .unwrap_or_else(|| format!("material {i}"))
                    .as_str(),
            ),
            texture,
            face_side: if mat.double_sided { 2 } else { 0 },
            diffuse: pbr.base_color_factor.0,
            emissive: [r, g, b, 1.0],
            ..Material::default()
        });
        self.by_index.insert(i, m);
        Ok(m)
    }

    /// The model's texture for glTF texture `t`: its image's name, and its bytes where the file
    /// holds them (a buffer view or a data URI), undecoded.
    fn image(
        &mut self,
        root: &Root,
        bufs: &Buffers,
        t: usize,
        ck: &Checker,
        budget: &mut Budget,
    ) -> Result<u32> {
        let tex = root
            .textures
            .get(t)
            .ok_or_else(|| Error::malformed(format!("texture {t} does not exist")))?;
        let s = tex.source.value();
        if let Some(&k) = self.images.get(&s) {
            return Ok(k);
        }
        let image = root
            .images
            .get(s)
            .ok_or_else(|| Error::malformed(format!("texture {t}: image {s} does not exist")))?;
        let name = image
            .name
            .clone()
            .or_else(|| {
                image
                    .uri
                    .as_deref()
                    .filter(|u| !u.starts_with("data:"))
                    .map(|u| u.rsplit('/').next().unwrap_or(u).to_owned())
            })
            .unwrap_or_else(|| format!("image_{s}"));
        let bytes = match (&image.buffer_view, image.uri.as_deref()) {
            (Some(v), _) => {
                let (b, _) = bufs.view(v.value()).within(|| format!("image {s}"))?;
                budget.add(ck, b.len() as u64, 1)?;
                b.to_vec()
            }
            (None, Some(uri)) if uri.starts_with("data:") => {
                data_uri(uri, ck, budget).within(|| format!("image {s}"))?
            }
            // A file beside the model, read (and charged) with the buffers; else the name alone.
            _ => match bufs.images.get(s).copied().flatten() {
                Some(b) => {
                    budget.add(ck, b.len() as u64, 1)?;
                    b.to_vec()
                }
                None => Vec::new(),
            },
        };
        // A PNG's size is in its header; other images keep 0 x 0 (nothing is decoded).
        let (width, height) = png_size(&bytes).unwrap_or((0, 0));
        let wrap = |w: &Checked<gltf_json::texture::WrappingMode>| match w {
            Checked::Valid(gltf_json::texture::WrappingMode::ClampToEdge) => 0,
            Checked::Valid(gltf_json::texture::WrappingMode::MirroredRepeat) => 1,
            _ => 2,
        };
        let sampler = tex.sampler.and_then(|i| root.samplers.get(i.value()));
        let k = self.textures.len() as u32;
        self.textures.push(Texture {
            id: i16::try_from(s).unwrap_or(i16::MAX),
            name: Name::from(name.as_str()),
            width,
            height,
            flip_y: 0,
            wrap_s: sampler.map_or(2, |x| wrap(&x.wrap_s)),
            wrap_t: sampler.map_or(2, |x| wrap(&x.wrap_t)),
            image: bytes,
        });
        self.images.insert(s, k);
        Ok(k)
    }
}

/// Width and height from a PNG's IHDR, where they fit 16 bits.
fn png_size(b: &[u8]) -> Option<(u16, u16)> {
    if !b.starts_with(b"\x89PNG\r\n\x1a\n") {
        return None;
    }
    let be = |at: usize| -> Option<u32> {
        let w = b.get(at..at.checked_add(4)?)?;
        Some(u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
    };
    Some((u16::try_from(be(16)?).ok()?, u16::try_from(be(20)?).ok()?))
}
