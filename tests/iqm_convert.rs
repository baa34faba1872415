//! Models converted into IQM, checked by the reference reader of `tests/iqm_ref` (written from
//! `iqm.txt`, sharing nothing with ossa), and IQM round trips.
//!
//! - Into IQM: every corpus DPM (with its `.framegroups`), SKM + SKP pair, Blender glTF and IQM
//!   with meshes (rebuilt from its parts, so that it is written anew) is saved with
//!   `Model::save` and, for the DPMs and glTFs, with `ossa convert`. The reference reader finds
//!   the spec's layout, the bones as joints, the scenes as anims, the meshes and triangles, and
//!   blends that are the model's influences in bytes; it skins the file as ossa skins the model
//!   at the bind pose and at the first, middle and last frame of every anim, and the stored
//!   bounds hold ossa's vertices.
//! - Round trips, at every frame: DPM -> IQM -> DPM, SKM -> IQM -> SKM, glTF -> IQM -> glTF and
//!   IQM -> IQM (animation-only files included).
//! - `lsz_mrfixit.iqm` saved unchanged is its own bytes; written anew, which blocks are the
//!   file's and how far the others are from it.
//! - A vertex of more than four bones is refused naming it; `--max-influences 4` converts.
//!
//! How far a written file may be from its model. IQM holds one position a vertex, its bones'
//! weights in bytes and the poses quantised to 16 bits a channel. The first two are accounted
//! for exactly at each vertex ([`loss`]: what the byte weights move and where the model's
//! influences place the vertex at rest other than at the one position), the third is held to
//! `max(half a translation step x twice the longest chain of joints, 1e-5 of the size)` (the
//! worst seen is 0.56 of it). Beside that accounting every file but three is within 1e-3 of the
//! model's size of it (largest bind-pose extent, at least 1); the three are named in
//! [`BEYOND_TOLERANCE`] with what their bytes cost. `--nocapture` prints the figures.

#![cfg(all(feature = "gltf", feature = "cli"))]

mod cli_support;
mod corpus;
mod iqm_ref;
mod ref_math;

use std::path::{Path, PathBuf};

use ossa::synth::TubeRig;
use ossa::{ErrorCode, Format, FrameBlend, Influence, LoadOptions, Mat3x4, Model, Strided};

use cli_support::TempDir;
use iqm_ref::Iqm;

type P = [f64; 3];

/// Largest distance between a written file's vertex (as the reference skins it, or as ossa
/// skins the file read back) and the model's, as a fraction of the model's size.
const TOLERANCE: f64 = 1e-3;

/// The sources whose files are further from them than [`TOLERANCE`], and how far they may be;
/// every vertex of theirs is within what [`loss`] accounts for. They spread their vertices'
/// weights over bones that move far apart (DPM and SKM of up to eight influences a vertex,
/// capped to four), so that the weights rounded to bytes (within 1.5 / 255) account for up to
/// 2.4e-3 of the size at some frames; the zombie's influences also place vertices at rest up
/// to 7e-4 of its size from the one position their weighted sum gives. Worst seen: 2.26e-3,
/// 1.13e-3 and 1.26e-3 (the uncapped `wsw05sdk_monada_tris.skm`: 9.3e-4).
const BEYOND_TOLERANCE: &[(&str, f64)] = &[
    ("xon_zombie.dpm", 3e-3),
    ("wsw05sdk_monada_tris_2.skm+wsw05sdk_monada_tris.skp", 2e-3),
    ("wsw05sdk_monada_tris_3.skm+wsw05sdk_monada_tris.skp", 2e-3),
];

fn tolerance(name: &str) -> f64 {
    (BEYOND_TOLERANCE.iter())
        .find(|(n, _)| *n == name)
        .map_or(TOLERANCE, |(_, t)| *t)
}

// ---------------------------------------------------------------------------------------------
// Posing, skinning and sizes
// ---------------------------------------------------------------------------------------------

/// Model-space bone matrices of `model` at `frame`.
fn pose(model: &Model, frame: u32) -> Vec<Mat3x4> {
    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(&[FrameBlend { frame, weight: 1.0 }], None, &mut bones)
        .unwrap();
    bones
}

/// Every vertex of every mesh, meshes in order, skinned by ossa at `frame`.
fn skinned(model: &Model, frame: u32) -> Vec<P> {
    let bones = pose(model, frame);
    let mut out = Vec::new();
    for (m, mesh) in model.meshes().iter().enumerate() {
        let n = mesh.vertex_count();
        let mut pos = vec![[0.0f32; 3]; n];
        let mut target = Strided::new(pos.as_flattened_mut(), 3).unwrap();
        model.skin_mesh(m, &bones, 0, n, 0, &mut target).unwrap();
        out.extend(pos.into_iter().map(|p| p.map(f64::from)));
    }
    out
}

/// The largest extent of `points` along an axis, at least 1.
fn extent(points: &[P]) -> f64 {
    (0..3)
        .map(|k| {
            let lo = points.iter().map(|v| v[k]).fold(f64::INFINITY, f64::min);
            let hi = points
                .iter()
                .map(|v| v[k])
                .fold(f64::NEG_INFINITY, f64::max);
            hi - lo
        })
        .fold(1.0, f64::max)
}

/// The model's size: the largest extent of its bind-pose vertices, at least 1.
fn size(model: &Model) -> f64 {
    extent(&skinned(model, 0))
}

fn distance(a: P, b: P) -> f64 {
    (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>().sqrt()
}

fn wide(p: [f32; 3]) -> P {
    p.map(f64::from)
}

fn wide2(p: [f32; 2]) -> [f64; 2] {
    p.map(f64::from)
}

/// The longest chain of joints from a root, counted in joints.
fn depth(model: &Model) -> usize {
    let bones = model.bones();
    let mut d = vec![0usize; bones.len()];
    for (i, b) in bones.iter().enumerate() {
        d[i] = 1 + usize::try_from(b.parent)
            .ok()
            .filter(|&p| p < i)
            .map_or(0, |p| d[p]);
    }
    d.into_iter().max().unwrap_or(0)
}

fn bone_tree(model: &Model) -> Vec<(String, i32)> {
    (model.bones().iter())
        .map(|b| (b.name.to_string_lossy(), b.parent))
        .collect()
}

fn scenes(model: &Model) -> Vec<(String, u32, u32, f32, bool)> {
    (model.animations().iter())
        .map(|a| {
            let name = a.name.to_string_lossy();
            (name, a.first_frame, a.frame_count, a.fps, a.looping)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// How a model's frames become the file's
// ---------------------------------------------------------------------------------------------

/// The model frame the file's frame 0 is (the writer's documented rule): 1 when no scene plays
/// frame 0 (the bind pose the joints hold) and there are other frames, 0 when a scene plays it;
/// `None` when the file has no frames (no bones, or nothing but the bind pose).
fn first_written(model: &Model) -> Option<usize> {
    if model.bones().is_empty() {
        return None;
    }
    let plays_bind = (model.animations().iter()).any(|a| a.first_frame == 0 && a.frame_count > 0);
    if plays_bind {
        Some(0)
    } else if model.frames().len() > 1 {
        Some(1)
    } else {
        None
    }
}

/// The frames of the model read back from a file written from `source` that show `source`'s
/// frame `f`: the bind pose is frame 0 of both (the joints), and file frame `k` (`source`'s
/// frame `k + first_written`) is frame `k + 1` once read; a frame 0 that a scene plays is both.
fn read_back_frames(source: &Model, f: usize) -> Vec<usize> {
    let mut out = Vec::new();
    if f == 0 {
        out.push(0);
    }
    if let Some(start) = first_written(source)
        && f >= start
    {
        out.push(f - start + 1);
    }
    out
}

/// The first, middle and last of `count` frames from `first`.
fn three(first: usize, count: usize) -> [usize; 3] {
    let last = count.saturating_sub(1);
    [first, first + last / 2, first + last]
}

// ---------------------------------------------------------------------------------------------
// The sources
// ---------------------------------------------------------------------------------------------

struct Source {
    name: String,
    model: Model,
    /// Whether the influences had to be capped to four a vertex to be written.
    capped: bool,
    /// The file `ossa convert` reads, where it is run on this source.
    cli: Option<PathBuf>,
}

/// `model` as IQM can hold it: as it is when the writer takes it, else (the refusal naming a
/// vertex) with each vertex's four strongest influences.
fn writable(name: &str, model: Model) -> (Model, bool) {
    match model.save(Format::Iqm) {
        Ok(_) => (model, false),
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::Unsupported, "{name}: {e}");
            let message = e.to_string();
            assert!(
                message.contains(" vertex ") && message.contains("--max-influences 4"),
                "{name}: {message}"
            );
            let (capped, report) = model.with_max_influences(4).unwrap();
            assert!(report.vertices > 0, "{name}");
            (capped, true)
        }
    }
}

/// Every corpus DPM, read with its sidecars (`.framegroups`).
fn dpm_sources(test: &str) -> Vec<Source> {
    let Some(dir) = corpus::corpus_subdir("dpm", test) else {
        return Vec::new();
    };
    let files = corpus::files_ending(&dir, &[".dpm"]);
    assert!(!files.is_empty(), "no .dpm in {}", dir.display());
    (files.into_iter())
        .map(|n| {
            let path = dir.join(&n);
            let model = Model::load_file(&path, &LoadOptions::default())
                .unwrap_or_else(|e| panic!("{n}: {e}"));
            let (model, capped) = writable(&n, model);
            Source {
                name: n,
                model,
                capped,
                cli: Some(path),
            }
        })
        .collect()
}

/// Each `.skm` of the corpus with the `.skp` whose stem is the longest that starts its own.
fn skm_pairs(test: &str) -> Vec<(String, PathBuf, PathBuf)> {
    let Some(dir) = corpus::corpus_subdir("skm", test) else {
        return Vec::new();
    };
    let skps = corpus::files_ending(&dir, &[".skp"]);
    (corpus::files_ending(&dir, &[".skm"]).into_iter())
        .map(|skm| {
            let stem = skm.trim_end_matches(".skm");
            let skp = (skps.iter())
                .filter(|p| stem.starts_with(p.trim_end_matches(".skp")))
                .max_by_key(|p| p.len())
                .unwrap_or_else(|| panic!("no .skp for {skm}"));
            (format!("{skm}+{skp}"), dir.join(&skm), dir.join(skp))
        })
        .collect()
}

fn load_as(what: &str, bytes: &[u8], name: &str) -> Model {
    let options = LoadOptions {
        name: Some(name.to_owned()),
        ..LoadOptions::default()
    };
    Model::load(bytes, &options).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// The `.skm`'s meshes on the `.skp`'s skeleton (each read without sidecars: the `.skp` beside
/// an `.skm` of its stem would bind it already).
fn bind_skm(skm: &Path, skp: &Path) -> Model {
    let load = |p: &Path| {
        let name = p.file_name().unwrap().to_string_lossy();
        load_as(&name, &std::fs::read(p).unwrap(), &name)
    };
    Model::bind(&load(skm), &load(skp)).unwrap()
}

fn skm_sources(test: &str) -> Vec<Source> {
    (skm_pairs(test).into_iter())
        .map(|(name, skm, skp)| {
            let (model, capped) = writable(&name, bind_skm(&skm, &skp));
            Source {
                name,
                model,
                capped,
                cli: None,
            }
        })
        .collect()
}

fn gltf_sources(test: &str) -> Vec<Source> {
    (corpus::blender_gltf_files(test).into_iter())
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let model = Model::load_file(&path, &LoadOptions::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let (model, capped) = writable(&name, model);
            Source {
                name,
                model,
                capped,
                cli: Some(path),
            }
        })
        .collect()
}

/// The corpus IQMs (not the one cut short on purpose), each rebuilt from its parts so that
/// saving writes it anew rather than giving back the file's bytes; with meshes or without.
fn iqm_sources(test: &str, with_meshes: bool) -> Vec<Source> {
    let Some(dir) = corpus::corpus_subdir("iqm", test) else {
        return Vec::new();
    };
    (corpus::files_ending(&dir, &[".iqm"]).into_iter())
        .filter(|n| n != "asp_InvalidMeshOffset.iqm")
        .filter_map(|n| {
            let model = Model::load_file(dir.join(&n), &LoadOptions::default())
                .unwrap_or_else(|e| panic!("{n}: {e}"));
            if model.meshes().is_empty() == with_meshes {
                return None;
            }
            let model = Model::from_parts(model.to_parts()).unwrap();
            assert!(model.source_bytes().is_none(), "{n}");
            let (model, capped) = writable(&n, model);
            Some(Source {
                name: n,
                model,
                capped,
                cli: None,
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// What a file holds of its model's vertices
// ---------------------------------------------------------------------------------------------

/// One bone's share of a vertex: its weight (the model's influences on it summed) and where
/// they put the vertex in its space (their origins, which hold it times their weight, over
/// that sum).
struct Share {
    bone: u32,
    weight: f64,
    point: [f32; 3],
}

/// Every vertex's shares, meshes in order.
fn shares(model: &Model) -> Vec<Vec<Share>> {
    let mut out = Vec::new();
    for mesh in model.meshes() {
        for v in 0..mesh.vertex_count() {
            let mut merged: Vec<(u32, f64, P)> = Vec::new();
            for i in mesh.influences(v) {
                let at = match merged.iter().position(|s| s.0 == i.bone) {
                    Some(at) => at,
                    None => {
                        merged.push((i.bone, 0.0, [0.0; 3]));
                        merged.len() - 1
                    }
                };
                merged[at].1 += f64::from(i.weight);
                for (sum, o) in merged[at].2.iter_mut().zip(i.origin) {
                    *sum += f64::from(o);
                }
            }
            out.push(
                (merged.into_iter())
                    .filter(|s| s.1 != 0.0)
                    .map(|(bone, weight, o)| Share {
                        bone,
                        weight,
                        point: o.map(|x| (x / weight) as f32),
                    })
                    .collect(),
            );
        }
    }
    out
}

/// The file's blend of vertex `v`: four joints and their weights (bytes / 255).
fn blend_of(iqm: &Iqm, v: usize) -> ([u32; 4], [f64; 4]) {
    match (&iqm.blend_indexes, &iqm.blend_weights) {
        (Some(i), Some(w)) => (i[v], w[v]),
        _ => ([0; 4], [0.0; 4]),
    }
}

/// The file's blends are the model's influences as `iqm.txt`'s compiler weighs them: on each
/// vertex the bones of more than 1e-3 of its weight (an influence or several on one bone), at
/// most four, with bytes within 1.5 / 255 of their share of those bones' sum (rounded half up,
/// then at most one taken from or given to a slot to make 255).
fn check_blends(what: &str, shares: &[Vec<Share>], iqm: &Iqm) {
    if iqm.blend_indexes.is_none() {
        assert!(shares.iter().all(|s| s.is_empty()), "{what}: no blends");
        return;
    }
    for (v, shares) in shares.iter().enumerate() {
        let (indexes, weights) = blend_of(iqm, v);
        let kept: Vec<&Share> = shares.iter().filter(|s| s.weight > 1e-3).collect();
        let total: f64 = kept.iter().map(|s| s.weight).sum();
        let at = || format!("{what} vertex {v}: joints {indexes:?}, weights {weights:?}");
        let sum: f64 = weights.iter().sum();
        if kept.is_empty() {
            assert_eq!(sum, 0.0, "{}", at());
            continue;
        }
        assert!((sum - 1.0).abs() < 1e-9, "{}", at());
        for (&j, &w) in indexes.iter().zip(&weights) {
            assert!(
                w == 0.0 || kept.iter().any(|s| s.bone == j),
                "{}: joint {j} is not one of the vertex's bones",
                at()
            );
        }
        for s in &kept {
            let file: f64 = (indexes.iter().zip(&weights))
                .filter(|(j, _)| **j == s.bone)
                .map(|(_, w)| w)
                .sum();
            assert!(
                (file - s.weight / total).abs() <= 1.5 / 255.0 + 1e-9,
                "{}: bone {} weighs {}",
                at(),
                s.bone,
                s.weight / total
            );
        }
    }
}

/// How far a vertex of the file may be from the model's at a frame, its poses taken exact:
/// `p' - p = Σ_b (w'_b - W_b) q_b + Σ_b w'_b (r_b - q_b)`, with `W_b` and `q_b` the model's
/// weight and place of the vertex on bone `b` at the frame (`p = Σ_b W_b q_b`), `w'_b` the
/// file's byte weight and `r_b = A_b B_b^-1 P` the file's one position `P` carried by the bone.
/// Returns the first term's bound, `Σ_b |w'_b - W_b| |q_b - p| + |1 - Σ_b W_b| |p|` (the
/// weights rounded to bytes, the dropped ones among them), and the second's,
/// `Σ_b w'_b |A_b (B_b^-1 P - ô_b)|` (the model's influences placing the vertex at rest other
/// than at the one position IQM holds; `ô_b` is the vertex in bone `b`'s space).
fn loss(
    shares: &[Share],
    (indexes, weights): ([u32; 4], [f64; 4]),
    file_position: P,
    inverse_bind: &[Mat3x4],
    posed: &[Mat3x4],
    p: P,
) -> (f64, f64) {
    let file_weight = |bone: u32| -> f64 {
        (indexes.iter().zip(&weights))
            .filter(|(j, _)| **j == bone)
            .map(|(_, w)| w)
            .sum()
    };
    let total: f64 = shares.iter().map(|s| s.weight).sum();
    let mut rounding = (1.0 - total).abs() * distance(p, [0.0; 3]);
    let mut apart = 0.0;
    for s in shares {
        let m = &posed[s.bone as usize];
        let w = file_weight(s.bone);
        rounding += (w - s.weight).abs() * distance(wide(m.transform_point(s.point)), p);
        if w > 0.0 {
            let at_rest =
                inverse_bind[s.bone as usize].transform_point(file_position.map(|x| x as f32));
            let off: [f32; 3] = std::array::from_fn(|k| at_rest[k] - s.point[k]);
            apart += w * distance(wide(m.transform_vector(off)), [0.0; 3]);
        }
    }
    (rounding, apart)
}

/// `model` reduced to what the file holds of it, by ossa's own math: each vertex at the file's
/// one position, on the joints of its blend with their byte weights, its origin in each bone's
/// space that position under the model's inverse bind matrix. Its skinning differs from the
/// reference's by the quantisation of the poses alone (and float rounding).
fn held_as_file(model: &Model, iqm: &Iqm) -> Model {
    let positions = iqm.positions.as_deref().unwrap_or_default();
    let normals = iqm.normals.as_deref().unwrap_or_default();
    let inverse = model.skeleton().inverse_bind();
    let mut parts = model.to_parts();
    let mut g = 0;
    for mesh in &mut parts.meshes {
        let mut influences = Vec::with_capacity(mesh.influences.len());
        let mut starts = vec![0u32];
        for _ in 1..mesh.influence_start.len() {
            let p = positions[g].map(|x| x as f32);
            let n = normals[g].map(|x| x as f32);
            let (indexes, weights) = blend_of(iqm, g);
            for (&bone, &w) in indexes.iter().zip(&weights).filter(|(_, w)| **w > 0.0) {
                let m = inverse[bone as usize];
                let w = w as f32;
                influences.push(Influence {
                    origin: m.transform_point(p).map(|x| x * w),
                    weight: w,
                    normal: m.transform_vector(n).map(|x| x * w),
                    bone,
                });
            }
            starts.push(influences.len() as u32);
            g += 1;
        }
        mesh.influences = influences;
        mesh.influence_start = starts;
    }
    Model::from_parts(parts).unwrap()
}

/// `max(half a translation step x twice the longest chain, 1e-5 of the size)`: how far the
/// poses' quantisation moves a vertex (0.56 of it is the worst seen).
fn fine_bound(iqm: &Iqm, depth: usize, size: f64) -> f64 {
    (iqm_ref::quantisation_step(iqm) * depth as f64).max(1e-5 * size)
}

/// How far the poses' quantisation can move a point `lever` from the joints, worked out: each
/// channel decodes within half its step, so at each joint of a chain of `depth` a translation
/// by at most `√3 / 2` of the largest translation step, a rotation by twice the quaternion's
/// error (at most the largest rotation step) over the lever, and a scale by `√3 / 2` of the
/// largest scale step over it. For bones alone, where the lever is explicit.
fn worked_out_bound(iqm: &Iqm, depth: usize, lever: f64) -> f64 {
    let step = |channels: std::ops::Range<usize>| {
        (iqm.poses.iter())
            .flat_map(|p| p.scale[channels.clone()].iter().copied())
            .fold(0.0, f64::max)
    };
    let (t, q, s) = (step(0..3), step(3..7), step(7..10));
    let half_diagonal = 0.5 * 3f64.sqrt();
    depth as f64 * (half_diagonal * t + 2.0 * q * lever + half_diagonal * s * lever)
}

// ---------------------------------------------------------------------------------------------
// A written file against its model
// ---------------------------------------------------------------------------------------------

/// The reference's skinning of `iqm` at `frame` (the bind pose for `None`). Where a joint's bind
/// matrix cannot be inverted (a bone collapsed to a point at rest, as Xonotic's hidden parts
/// are), which the reference refuses, no vertex may weigh on it: the skinning is then the
/// reference's formula over the joints that can be, from the reference's own matrices.
fn reference_skin(what: &str, iqm: &Iqm, frame: Option<usize>) -> Vec<P> {
    match iqm_ref::skin(iqm, frame) {
        Ok(p) => return p,
        Err(e) => assert!(e.contains("cannot be inverted"), "{what}: {e}"),
    }
    let bind = iqm_ref::bind_matrices(iqm);
    let posed = match frame {
        None => bind.clone(),
        Some(f) => iqm_ref::frame_matrices(iqm, f).unwrap(),
    };
    let skinning: Vec<Option<iqm_ref::M34>> = (bind.iter().zip(&posed))
        .map(|(b, a)| iqm_ref::inverse(b).map(|ib| iqm_ref::mul(a, &ib)))
        .collect();
    let positions = iqm.positions.as_deref().unwrap_or_default();
    (positions.iter().enumerate())
        .map(|(v, p)| {
            let (indexes, weights) = blend_of(iqm, v);
            if weights.iter().all(|&w| w <= 0.0) {
                return *p;
            }
            let mut sum = [0.0; 3];
            for (&j, &w) in indexes.iter().zip(&weights).filter(|(_, w)| **w > 0.0) {
                let m = skinning[j as usize].unwrap_or_else(|| {
                    panic!("{what}: vertex {v} weighs on joint {j}, whose bind is singular")
                });
                let q = iqm_ref::transform(&m, *p);
                for (s, x) in sum.iter_mut().zip(q) {
                    *s += w * x;
                }
            }
            sum
        })
        .collect()
}

/// How far another skinning (the reference reader's of the written file, or ossa's of the file
/// read back) is from ossa's of the model, in the model's units, against what the written file
/// accounts for at each vertex.
#[derive(Default)]
struct Agreement {
    size: f64,
    /// The fine bound of the poses' quantisation, [`fine_bound`].
    fine: f64,
    /// Largest distance between a vertex as the other skins it and as ossa does, at the bind
    /// pose.
    bind: f64,
    /// The same over the posed frames compared.
    posed: f64,
    /// The largest of [`loss`]'s two terms over the vertices and frames.
    rounding: f64,
    apart: f64,
    /// The largest distance at a vertex beyond what [`loss`] accounts for at it: the poses'
    /// quantisation, and float rounding.
    unexplained: f64,
}

impl Agreement {
    /// Nothing compared yet, for `model` written as `iqm`.
    fn new(model: &Model, iqm: &Iqm) -> Agreement {
        let size = size(model);
        Agreement {
            size,
            fine: fine_bound(iqm, depth(model), size),
            ..Agreement::default()
        }
    }

    /// The bind pose: `ours` as ossa skins the model, `theirs` as the other does.
    fn bind(&mut self, ours: &[P], theirs: &[P]) {
        self.bind = (ours.iter().zip(theirs))
            .map(|(a, b)| distance(*a, *b))
            .fold(self.bind, f64::max);
    }

    /// A posed frame, vertex by vertex: `ours` as ossa skins `model` with the model-space bones
    /// `posed` (`shares`: its influences), `theirs` as the other does; each vertex's distance
    /// against its [`loss`] in `iqm`.
    fn frame(
        &mut self,
        model: &Model,
        shares: &[Vec<Share>],
        iqm: &Iqm,
        posed: &[Mat3x4],
        ours: &[P],
        theirs: &[P],
    ) {
        let inverse = model.skeleton().inverse_bind();
        let positions = iqm.positions.as_deref().unwrap_or_default();
        for (v, (a, b)) in ours.iter().zip(theirs).enumerate() {
            let d = distance(*a, *b);
            let (rounding, apart) = loss(
                &shares[v],
                blend_of(iqm, v),
                positions[v],
                inverse,
                posed,
                *a,
            );
            self.posed = self.posed.max(d);
            self.rounding = self.rounding.max(rounding);
            self.apart = self.apart.max(apart);
            self.unexplained = self.unexplained.max(d - rounding - apart);
        }
    }

    /// Holds the distances to what the file can be: the bind pose exact (the joints and
    /// positions are not quantised), every vertex within [`loss`] and the fine bound, and within
    /// the source `name`'s tolerance.
    fn assert_within(&self, what: &str, name: &str) {
        let s = self.size;
        assert!(self.bind <= 1e-6 * s, "{what}: bind pose {}", self.bind / s);
        assert!(
            self.unexplained <= self.fine,
            "{what}: {} beyond the weights and positions",
            self.unexplained / s
        );
        assert!(
            self.posed <= tolerance(name) * s,
            "{what}: {} of the size",
            self.posed / s
        );
    }
}

/// What one check of a written file found; distances in the model's units.
struct Figures {
    poses: usize,
    /// The reference's skinning of the file against ossa's of the model.
    agreement: Agreement,
    /// The largest distance at the frames between the reference's skinning and ossa's of the
    /// model [`held_as_file`]: the poses' quantisation alone.
    poses_alone: f64,
    /// Largest distance a vertex as ossa skins the model lies outside its frame's stored
    /// bounds, and as the reference skins the file.
    outside: f64,
    outside_file: f64,
}

/// The written file `bytes` of `model`, read by the reference reader: laid out as the spec
/// asks, its joints, anims, meshes and triangles the model's, its blends the model's influences
/// ([`check_blends`]), and it skins as ossa skins the model at the bind pose and at the first,
/// middle and last frame of every anim (of all the frames when it has no anims).
fn check_file(what: &str, model: &Model, bytes: &[u8]) -> Figures {
    let iqm = iqm_ref::parse(bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        iqm_ref::laid_out_as_spec(&iqm),
        "{what}: {:?}",
        iqm_ref::layout_problems(&iqm)
    );
    assert_eq!(iqm.version, 2, "{what}");

    // Joints are the bones.
    let joints: Vec<(String, i32)> = (iqm.joints.iter())
        .map(|j| (j.name.clone(), j.parent.max(-1)))
        .collect();
    assert_eq!(joints, bone_tree(model), "{what}");

    // Anims are the scenes with frames, over the written frames.
    let start = first_written(model);
    let frames = start.map_or(0, |s| model.frames().len() - s);
    assert_eq!(iqm.header.num_frames as usize, frames, "{what}");
    let with_frames: Vec<_> = (model.animations().iter())
        .filter(|a| a.frame_count > 0 && frames > 0)
        .collect();
    assert_eq!(iqm.anims.len(), with_frames.len(), "{what}");
    for (a, s) in iqm.anims.iter().zip(&with_frames) {
        let at = format!("{what} anim {}", a.name);
        assert_eq!(a.name, s.name.to_string_lossy(), "{at}");
        assert_eq!(a.framerate, f64::from(s.fps), "{at}");
        assert_eq!(a.looping(), s.looping, "{at}");
        assert_eq!(a.num_frames, s.frame_count, "{at}");
        assert_eq!(
            a.first_frame as usize + start.unwrap_or_default(),
            s.first_frame as usize,
            "{at}"
        );
    }

    // Meshes, vertices in the model's order, and triangles wound back.
    assert_eq!(iqm.meshes.len(), model.meshes().len(), "{what}");
    let vertices: usize = model.meshes().iter().map(|m| m.vertex_count()).sum();
    let triangles: usize = model.meshes().iter().map(|m| m.triangle_count()).sum();
    assert_eq!(iqm.num_vertexes, vertices, "{what}");
    assert_eq!(iqm.triangles.len(), triangles, "{what}");
    let mut first = 0;
    for (m, (r, mesh)) in iqm.meshes.iter().zip(model.meshes()).enumerate() {
        let at = format!("{what} mesh {m}");
        // A mesh without a name is written under its shader (see written_mesh_name).
        let name = ossa::iqm::written_mesh_name(mesh);
        assert_eq!(r.name, name.to_string_lossy(), "{at}");
        assert_eq!(r.material, mesh.shader().to_string_lossy(), "{at}");
        assert_eq!(r.first_vertex as usize, first, "{at}");
        assert_eq!(r.num_vertexes as usize, mesh.vertex_count(), "{at}");
        assert_eq!(r.num_triangles as usize, mesh.triangle_count(), "{at}");
        first += mesh.vertex_count();
        // IQM's front faces wind clockwise: ossa's triangle (a, b, c) is the file's (a, c, b).
        let ours: Vec<[u32; 3]> = (mesh.indices().chunks_exact(3))
            .map(|t| [t[0], t[2], t[1]].map(|i| i + r.first_vertex))
            .collect();
        assert!(
            ours == iqm_ref::mesh_triangles(&iqm, m),
            "{at}: triangles differ"
        );
        if let (Some(uv), Some(file)) = (mesh.texcoords(), &iqm.texcoords) {
            let file = &file[r.first_vertex as usize..][..uv.len()];
            assert!(
                uv.iter().zip(file).all(|(a, b)| wide2(*a) == *b),
                "{at}: texture coordinates differ"
            );
        }
    }
    let shares = shares(model);
    check_blends(what, &shares, &iqm);

    // The poses compared, as (model frame, file frame): the bind pose, then the first, middle
    // and last frame of every anim.
    let mut poses: Vec<(u32, Option<usize>)> = vec![(0, None)];
    if let Some(start) = start {
        let mut file_frames: Vec<usize> = if iqm.anims.is_empty() {
            three(0, frames).to_vec()
        } else {
            (iqm.anims.iter())
                .flat_map(|a| three(a.first_frame as usize, a.num_frames as usize))
                .collect()
        };
        file_frames.sort();
        file_frames.dedup();
        poses.extend(
            file_frames
                .into_iter()
                .map(|f| ((f + start) as u32, Some(f))),
        );
    }
    let mut figures = Figures {
        poses: poses.len(),
        agreement: Agreement::new(model, &iqm),
        poses_alone: 0.0,
        outside: 0.0,
        outside_file: 0.0,
    };
    let held = held_as_file(model, &iqm);
    for &(f, file_frame) in &poses {
        let ours = skinned(model, f);
        let theirs = reference_skin(what, &iqm, file_frame);
        let Some(k) = file_frame else {
            figures.agreement.bind(&ours, &theirs);
            continue;
        };
        let posed = pose(model, f);
        (figures.agreement).frame(model, &shares, &iqm, &posed, &ours, &theirs);
        let alone = skinned(&held, f);
        for (v, b) in theirs.iter().enumerate().take(ours.len()) {
            figures.poses_alone = figures.poses_alone.max(distance(alone[v], *b));
        }

        // The stored bounds are the frame's as ossa skins the model.
        if let Some(bounds) = &iqm.bounds {
            let b = &bounds[k];
            let outside = |p: &P| {
                let xy = (p[0] * p[0] + p[1] * p[1]).sqrt();
                let r = (xy * xy + p[2] * p[2]).sqrt();
                (0..3)
                    .map(|a| (b.bbmin[a] - p[a]).max(p[a] - b.bbmax[a]))
                    .fold((xy - b.xyradius).max(r - b.radius), f64::max)
            };
            for p in &ours {
                figures.outside = figures.outside.max(outside(p));
            }
            for p in &theirs {
                figures.outside_file = figures.outside_file.max(outside(p));
            }
        }
    }
    match &iqm.bounds {
        Some(bounds) => assert_eq!(bounds.len(), frames, "{what}"),
        None => assert!(
            frames == 0 || vertices == 0,
            "{what}: no bounds for {frames} frames"
        ),
    }
    figures
}

/// Prints the figures and holds them to what the file can be: the bind pose exact (the joints
/// and positions are not quantised), every vertex within [`loss`] and the fine bound, the poses
/// alone within the fine bound, every vertex within the source's tolerance, and the bounds
/// holding ossa's vertices.
fn assert_figures(what: &str, name: &str, f: &Figures) {
    let a = &f.agreement;
    let s = a.size;
    println!(
        "{what}: {} poses, size {s:.3}; of the size: bind pose {:.2e}, frames {:.2e} (the \
         weights' bytes account for up to {:.2e}, the one position {:.2e}; beyond them {:.2e} = \
         {:.2} of the fine bound), the poses alone {:.2e} = {:.2} of it; outside the bounds \
         {:.2e} ({:.2e} as the file skins)",
        f.poses,
        a.bind / s,
        a.posed / s,
        a.rounding / s,
        a.apart / s,
        a.unexplained / s,
        a.unexplained / a.fine,
        f.poses_alone / s,
        f.poses_alone / a.fine,
        f.outside / s,
        f.outside_file / s,
    );
    a.assert_within(what, name);
    assert!(
        f.poses_alone <= a.fine,
        "{what}: poses alone {}",
        f.poses_alone / s
    );
    assert!(f.outside <= 1e-6 * s, "{what}: outside {}", f.outside / s);
    assert!(
        f.outside_file <= a.posed + 1e-6 * s,
        "{what}: outside {}",
        f.outside_file / s
    );
}

fn run_convert(dir: &TempDir, input: &Path, output: &Path, extra: &[&str]) -> cli_support::Run {
    let mut args = vec![
        "convert",
        input.to_str().unwrap(),
        "-o",
        output.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    cli_support::ossa(dir, &args)
}

#[test]
fn models_converted_into_iqm_skin_as_the_reference_reader_reads_them() {
    let test = "models_converted_into_iqm_skin_as_the_reference_reader_reads_them";
    let dir = TempDir::new("iqm-convert", "readers");
    let mut sources = dpm_sources(test);
    sources.extend(skm_sources(test));
    sources.extend(gltf_sources(test));
    sources.extend(iqm_sources(test, true));
    let mut by_cli = 0;
    for s in &sources {
        let what = format!("{}{}", s.name, if s.capped { " (capped to 4)" } else { "" });
        let bytes = s.model.save(Format::Iqm).unwrap();
        assert_figures(&what, &s.name, &check_file(&what, &s.model, &bytes));
        let Some(input) = &s.cli else {
            continue;
        };
        let out = dir.path(&format!("{}.iqm", s.name));
        let run = run_convert(&dir, input, &out, &[]);
        if s.capped {
            // The CLI names the vertex that does not fit, as the writer does.
            assert_ne!(run.code, 0, "{what}");
            assert!(
                run.stderr.contains("OSSA_ERR_UNSUPPORTED") && run.stderr.contains(" vertex "),
                "{what}: {}",
                run.stderr
            );
            continue;
        }
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        // `convert` writes IQM in the model's order: the library's bytes.
        let written = std::fs::read(&out).unwrap();
        assert!(written == bytes, "{what}: the CLI wrote other bytes");
        by_cli += 1;
    }
    if !sources.is_empty() {
        assert!(by_cli >= 15, "{by_cli} files converted by the CLI");
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

/// `bytes` read by ossa as an IQM, strictly: the writer writes nothing a reader must repair.
fn load_iqm(what: &str, bytes: &[u8]) -> Model {
    let options = LoadOptions {
        name: Some("written.iqm".to_owned()),
        strict: true,
        ..LoadOptions::default()
    };
    Model::load(bytes, &options).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// ossa's skinning of `source` at every frame against `back`'s at each frame that shows it
/// (`frames_of`), vertex by vertex: the bind pose exact, and every vertex within [`loss`] of the
/// written file `bytes` and the fine bound of its quantisation, and within the source's
/// tolerance. The bones, vertices and triangles are the source's.
fn check_round_trip(
    what: &str,
    name: &str,
    source: &Model,
    bytes: &[u8],
    back: &Model,
    frames_of: &dyn Fn(usize) -> Vec<usize>,
) {
    let iqm = iqm_ref::parse(bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(bone_tree(back), bone_tree(source), "{what}");
    assert_eq!(back.meshes().len(), source.meshes().len(), "{what}");
    for (m, (a, b)) in source.meshes().iter().zip(back.meshes()).enumerate() {
        assert_eq!(a.name(), b.name(), "{what} mesh {m}");
        assert_eq!(a.vertex_count(), b.vertex_count(), "{what} mesh {m}");
        assert!(a.indices() == b.indices(), "{what} mesh {m}: triangles");
    }
    let shares = shares(source);
    let mut r = Agreement::new(source, &iqm);
    let mut frames = 0;
    for f in 0..source.frames().len() {
        let ours = skinned(source, f as u32);
        let posed = pose(source, f as u32);
        for fb in frames_of(f) {
            let theirs = skinned(back, fb as u32);
            frames += 1;
            if fb == 0 {
                r.bind(&ours, &theirs);
            } else {
                r.frame(source, &shares, &iqm, &posed, &ours, &theirs);
            }
        }
    }
    let size = r.size;
    println!(
        "{what}: {frames} frames, size {size:.3}; of the size: bind pose {:.2e}, frames {:.2e}, \
         beyond the file's weights and positions {:.2e} = {:.2} of the fine bound",
        r.bind / size,
        r.posed / size,
        r.unexplained / size,
        r.unexplained / r.fine,
    );
    assert_eq!(
        frames,
        source.frames().len() + usize::from(first_written(source) == Some(0))
    );
    r.assert_within(what, name);
}

/// DPM -> IQM -> DPM: a DPM keeps every frame, the bind pose first.
#[test]
fn dpm_to_iqm_to_dpm_skins_the_same_at_every_frame() {
    for s in dpm_sources("dpm_to_iqm_to_dpm_skins_the_same_at_every_frame") {
        let what = format!("{} -> IQM -> DPM", s.name);
        let bytes = s.model.save(Format::Iqm).unwrap();
        let iqm = load_iqm(&what, &bytes);
        let back = load_as(&what, &iqm.save(Format::Dpm).unwrap(), "back.dpm");
        assert_eq!(back.frames().len(), iqm.frames().len(), "{what}");
        let frames_of = |f: usize| read_back_frames(&s.model, f);
        check_round_trip(&what, &s.name, &s.model, &bytes, &back, &frames_of);
    }
}

/// SKM -> IQM -> SKM + SKP, bound again.
#[test]
fn skm_to_iqm_to_skm_skins_the_same_at_every_frame() {
    for s in skm_sources("skm_to_iqm_to_skm_skins_the_same_at_every_frame") {
        let what = format!("{} -> IQM -> SKM + SKP", s.name);
        let bytes = s.model.save(Format::Iqm).unwrap();
        let iqm = load_iqm(&what, &bytes);
        let skm = load_as(&what, &iqm.save(Format::Skm).unwrap(), "back.skm");
        let skp = load_as(&what, &iqm.save(Format::Skp).unwrap(), "back.skp");
        let back = Model::bind(&skm, &skp).unwrap();
        assert_eq!(back.frames().len(), iqm.frames().len(), "{what}");
        let frames_of = |f: usize| read_back_frames(&s.model, f);
        check_round_trip(&what, &s.name, &s.model, &bytes, &back, &frames_of);
    }
}

/// glTF -> IQM -> glTF: the animations come back as the same scenes over the same frames.
#[test]
fn gltf_to_iqm_to_gltf_skins_the_same_at_every_frame() {
    for s in gltf_sources("gltf_to_iqm_to_gltf_skins_the_same_at_every_frame") {
        let what = format!("{} -> IQM -> glTF", s.name);
        let bytes = s.model.save(Format::Iqm).unwrap();
        let iqm = load_iqm(&what, &bytes);
        let back = load_as(&what, &iqm.save(Format::Glb).unwrap(), "back.glb");
        assert_eq!(scenes(&iqm), scenes(&s.model), "{what}");
        assert_eq!(scenes(&back), scenes(&s.model), "{what}");
        assert_eq!(back.frames().len(), s.model.frames().len(), "{what}");
        let frames_of = |f: usize| read_back_frames(&s.model, f);
        check_round_trip(&what, &s.name, &s.model, &bytes, &back, &frames_of);
    }
}

/// IQM -> IQM: read, written anew, read again: the same bones, scenes and meshes, every frame
/// within the quantisation; and the file read back saves as its own bytes.
#[test]
fn iqm_to_iqm_keeps_bones_scenes_meshes_and_every_frame() {
    let test = "iqm_to_iqm_keeps_bones_scenes_meshes_and_every_frame";
    for s in iqm_sources(test, true) {
        let what = format!("{} -> IQM", s.name);
        let bytes = s.model.save(Format::Iqm).unwrap();
        let back = load_iqm(&what, &bytes);
        assert_eq!(scenes(&back), scenes(&s.model), "{what}");
        assert_eq!(back.frames().len(), s.model.frames().len(), "{what}");
        for (m, (a, b)) in s.model.meshes().iter().zip(back.meshes()).enumerate() {
            assert_eq!(a.shader(), b.shader(), "{what} mesh {m}");
            assert_eq!(a.texcoords(), b.texcoords(), "{what} mesh {m}");
            assert_eq!(a.colors(), b.colors(), "{what} mesh {m}");
        }
        let frames_of = |f: usize| read_back_frames(&s.model, f);
        check_round_trip(&what, &s.name, &s.model, &bytes, &back, &frames_of);
        assert!(
            back.save(Format::Iqm).unwrap() == bytes,
            "{what}: saved again"
        );
    }

    // Files of animations alone: the bones at every frame, a point at the skeleton's size from
    // each joint within the worked-out quantisation bound.
    for s in iqm_sources(test, false) {
        let what = format!("{} -> IQM", s.name);
        let bytes = s.model.save(Format::Iqm).unwrap();
        let iqm = iqm_ref::parse(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(iqm_ref::laid_out_as_spec(&iqm), "{what}");
        let back = load_iqm(&what, &bytes);
        assert_eq!(bone_tree(&back), bone_tree(&s.model), "{what}");
        assert_eq!(scenes(&back), scenes(&s.model), "{what}");
        assert_eq!(back.frames().len(), s.model.frames().len(), "{what}");
        let joints: Vec<P> = pose(&s.model, 0)
            .iter()
            .map(|m| wide(m.translation()))
            .collect();
        let lever = extent(&joints);
        let bound = worked_out_bound(&iqm, depth(&s.model), lever).max(1e-5 * lever);
        let l = lever as f32;
        let mut worst = 0.0f64;
        for f in 0..s.model.frames().len() {
            let a = pose(&s.model, f as u32);
            for fb in read_back_frames(&s.model, f) {
                let b = pose(&back, fb as u32);
                for (x, y) in a.iter().zip(&b) {
                    for p in [[0.0; 3], [l, 0.0, 0.0], [0.0, l, 0.0], [0.0, 0.0, l]] {
                        let d = distance(wide(x.transform_point(p)), wide(y.transform_point(p)));
                        worst = worst.max(d);
                    }
                }
            }
        }
        println!(
            "{what}: {} bones, {} frames, skeleton {lever:.3}; worst {:.2e} of it = {:.2} of \
             the worked-out bound",
            s.model.bones().len(),
            s.model.frames().len(),
            worst / lever,
            worst / bound
        );
        assert!(worst <= bound, "{what}: {worst} against {bound}");
    }
}

// ---------------------------------------------------------------------------------------------
// A file saved unchanged, and written anew
// ---------------------------------------------------------------------------------------------

/// The bytes of `len` at `at`.
fn block(bytes: &[u8], at: u32, len: usize) -> &[u8] {
    &bytes[at as usize..at as usize + len]
}

/// `q` turned to the hemisphere of `like` (`q` and `-q` are one rotation).
fn aligned(q: &[f64], like: &[f64]) -> Vec<f64> {
    let dot: f64 = q.iter().zip(like).map(|(a, b)| a * b).sum();
    q.iter().map(|x| if dot < 0.0 { -x } else { *x }).collect()
}

fn max_difference<const N: usize>(a: &[[f64; N]], b: &[[f64; N]]) -> (f64, usize) {
    let mut worst = 0.0f64;
    let mut differ = 0;
    for (x, y) in a.iter().zip(b) {
        if x != y {
            differ += 1;
        }
        for (p, q) in x.iter().zip(y) {
            worst = worst.max((p - q).abs());
        }
    }
    (worst, differ)
}

/// `lsz_mrfixit.iqm` (the SDK's compiler's output) read and saved unchanged is its own bytes.
/// Written anew from what the model holds, its header, text, meshes, vertex array descriptors,
/// texture coordinates, blends, triangles and anims are the file's, byte for byte; the rest is
/// the file's within what the model keeps of it:
/// - positions (within 4 ulp: ossa skins them from the bind pose), normals, tangents (computed
///   again from those positions);
/// - joints, to 1e-6, two of them with the quaternion negated (the compiler's w <= 0);
/// - poses and frames: quantised again, 311 channels where the file has 333 (22 of its channels
///   vary by less than a float's step once decoded), each value within half of the new step;
/// - adjacency: the file's neighbours and 688 more, each sharing its edge's positions and
///   blends in the file too (the compiler's are a subset of what its rule gives);
/// - bounds: ossa's are those of the file's vertices as the reference skins them; the file's
///   are up to 7.9e-4 of the size off them (the compiler's come from its unquantised poses and
///   weights);
/// - the file is shorter by the 22 channels x 101 frames.
#[test]
fn lsz_mrfixit_saves_as_its_own_bytes_and_written_anew_keeps_its_layout() {
    let test = "lsz_mrfixit_saves_as_its_own_bytes_and_written_anew_keeps_its_layout";
    let Some(dir) = corpus::corpus_subdir("iqm", test) else {
        return;
    };
    let bytes = std::fs::read(dir.join("lsz_mrfixit.iqm")).unwrap();
    let model = load_as("lsz_mrfixit", &bytes, "lsz_mrfixit.iqm");
    assert!(model.save(Format::Iqm).unwrap() == bytes, "saved unchanged");
    let anew = Model::from_parts(model.to_parts()).unwrap();
    let again = anew.save(Format::Iqm).unwrap();
    let a = iqm_ref::parse(&bytes).unwrap();
    let b = iqm_ref::parse(&again).unwrap();
    assert!(iqm_ref::laid_out_as_spec(&a) && iqm_ref::laid_out_as_spec(&b));

    // The header: the same but for the frames' channels, the bounds after them and the size.
    let (ha, hb) = (a.header, b.header);
    assert_eq!((ha.num_framechannels, hb.num_framechannels), (333, 311));
    let frames_shorter = 2 * (333 - 311) * ha.num_frames;
    assert_eq!(hb.ofs_bounds, ha.ofs_bounds - frames_shorter);
    assert_eq!(hb.filesize, ha.filesize - frames_shorter);
    assert_eq!(
        iqm_ref::Header {
            num_framechannels: ha.num_framechannels,
            ofs_bounds: ha.ofs_bounds,
            filesize: ha.filesize,
            ..hb
        },
        ha
    );

    // Byte for byte: text, meshes, vertex array descriptors, triangles, anims, and the texture
    // coordinates, blend indexes and blend weights.
    let same = [
        ("text", ha.ofs_text, ha.num_text as usize),
        ("meshes", ha.ofs_meshes, 24 * ha.num_meshes as usize),
        (
            "vertex arrays",
            ha.ofs_vertexarrays,
            20 * ha.num_vertexarrays as usize,
        ),
        (
            "triangles",
            ha.ofs_triangles,
            12 * ha.num_triangles as usize,
        ),
        ("anims", ha.ofs_anims, 20 * ha.num_anims as usize),
    ];
    for (name, at, len) in same {
        assert!(block(&bytes, at, len) == block(&again, at, len), "{name}");
    }
    assert_eq!(a.vertex_arrays, b.vertex_arrays);
    let nv = a.num_vertexes;
    for va in &a.vertex_arrays {
        let len = nv * va.size as usize * iqm_ref::format_size(va.format).unwrap();
        let equal = block(&bytes, va.offset, len) == block(&again, va.offset, len);
        let kept = matches!(
            va.kind,
            iqm_ref::TEXCOORD | iqm_ref::BLENDINDEXES | iqm_ref::BLENDWEIGHTS
        );
        assert_eq!(equal, kept, "vertex array of type {}", va.kind);
    }
    // The model's triangles are the file's, wound the other way.
    let ours: Vec<[u32; 3]> = (model.meshes().iter().zip(&a.meshes))
        .flat_map(|(mesh, r)| {
            (mesh.indices().chunks_exact(3))
                .map(move |t| [t[0], t[2], t[1]].map(|i| i + r.first_vertex))
        })
        .collect();
    assert!(ours == a.triangles);

    // Vertices: positions within 4 ulp of the file's (ossa skins them from the bind pose),
    // normals within 1 ulp, tangents computed again from the positions.
    let size = extent(a.positions.as_deref().unwrap());
    let (p, pn) = max_difference(
        a.positions.as_deref().unwrap(),
        b.positions.as_deref().unwrap(),
    );
    let (n, nn) = max_difference(a.normals.as_deref().unwrap(), b.normals.as_deref().unwrap());
    println!("positions: {pn} of {nv} differ, by up to {p:.2e}; normals {nn}, {n:.2e}");
    assert!(p <= 4.0 * f64::from(f32::EPSILON) * size, "positions {p}");
    assert!(n <= 2.0 * f64::from(f32::EPSILON), "normals {n}");
    // w is a sign: 4 of them flip with the recomputed positions.
    let flipped = (a
        .tangents
        .as_ref()
        .unwrap()
        .iter()
        .zip(b.tangents.as_ref().unwrap()))
    .filter(|(x, y)| x[3] != y[3])
    .count();
    assert!(flipped <= 8, "{flipped} bitangent signs");
    let (t3, _) = max_difference(
        &(a.tangents.as_ref().unwrap().iter())
            .map(|t| [t[0], t[1], t[2]])
            .collect::<Vec<_>>(),
        &(b.tangents.as_ref().unwrap().iter())
            .map(|t| [t[0], t[1], t[2]])
            .collect::<Vec<_>>(),
    );
    println!("tangents: within {t3:.2e}, {flipped} bitangent signs flipped");
    assert!(t3 <= 1e-4, "tangents {t3}");

    // Joints: names and parents, and their transforms to 1e-6 (two of them stored negated).
    let mut worst = 0.0f64;
    let mut negated = 0;
    for (x, y) in a.joints.iter().zip(&b.joints) {
        assert_eq!((&x.name, x.parent), (&y.name, y.parent));
        let q = aligned(&y.rotate, &x.rotate);
        if q != y.rotate {
            negated += 1;
        }
        let d = (x.translate.iter().chain(&x.scale).chain(&x.rotate))
            .zip(y.translate.iter().chain(&y.scale).chain(&q))
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        worst = worst.max(d);
    }
    println!("joints: within {worst:.2e}, {negated} negated");
    assert!(worst <= 1e-6, "joints {worst}");
    assert_eq!(negated, 2);

    // Frames: each channel of each pose within half of the new step of the file's value, its
    // rotation made unit length as it is read (and a float's rounding of the value: the model
    // holds it as a matrix).
    let mut beyond = 0.0f64;
    for f in 0..a.frames.len() {
        let (ca, cb) = (
            iqm_ref::pose_channels(&a, f).unwrap(),
            iqm_ref::pose_channels(&b, f).unwrap(),
        );
        for (j, (x, y)) in ca.iter().zip(&cb).enumerate() {
            let mut x = x.clone();
            let length = x[3..7].iter().map(|c| c * c).sum::<f64>().sqrt();
            x[3..7].iter_mut().for_each(|c| *c /= length);
            let mut y = y.clone();
            let q = aligned(&y[3..7], &x[3..7]);
            y[3..7].copy_from_slice(&q);
            for c in 0..10 {
                let half = 0.5 * b.poses[j].scale[c];
                beyond = beyond.max((x[c] - y[c]).abs() - half);
            }
        }
    }
    println!("frames: each channel within half a step and {beyond:.2e}");
    assert!(beyond <= 1e-6, "frames {beyond}");

    // Adjacency: every neighbour the file names, and more, each sharing its edge's positions
    // and blends in the file.
    let (na, nb) = (a.adjacency.as_ref().unwrap(), b.adjacency.as_ref().unwrap());
    let none = u32::MAX;
    let mut extra = 0;
    let positions = a.positions.as_ref().unwrap();
    for (t, (x, y)) in na.iter().zip(nb).enumerate() {
        for k in 0..3 {
            if x[k] != none {
                assert_eq!(x[k], y[k], "triangle {t} edge {k}");
            } else if y[k] != none {
                extra += 1;
                let ends = [a.triangles[t][k], a.triangles[t][(k + 1) % 3]];
                let other = a.triangles[y[k] as usize];
                for e in ends {
                    let matching = other.iter().any(|&o| {
                        positions[o as usize] == positions[e as usize]
                            && blend_of(&a, o as usize) == blend_of(&a, e as usize)
                    });
                    assert!(matching, "triangle {t} edge {k}: neighbour {}", y[k]);
                }
            }
        }
    }
    println!("adjacency: {extra} neighbours more than the file names");
    assert_eq!(extra, 688);

    // Bounds: ossa's hold the file's vertices as the reference skins them, to 1e-6 of the size
    // (1e-7 seen), where the file's are up to 7.9e-4 of the size off them (the compiler's come
    // from its unquantised poses and weights).
    let mut off = [0.0f64; 2];
    let mut apart = 0.0f64;
    for f in 0..a.frames.len() {
        let points = iqm_ref::skin(&a, Some(f)).unwrap();
        let (x, y) = (
            &a.bounds.as_ref().unwrap()[f],
            &b.bounds.as_ref().unwrap()[f],
        );
        for k in 0..3 {
            let lo = points.iter().map(|p| p[k]).fold(f64::INFINITY, f64::min);
            let hi = points
                .iter()
                .map(|p| p[k])
                .fold(f64::NEG_INFINITY, f64::max);
            for (o, bounds) in off.iter_mut().zip([x, y]) {
                *o = o
                    .max((bounds.bbmin[k] - lo).abs())
                    .max((bounds.bbmax[k] - hi).abs());
            }
            apart = apart.max((x.bbmin[k] - y.bbmin[k]).abs());
            apart = apart.max((x.bbmax[k] - y.bbmax[k]).abs());
        }
        apart = apart.max(
            (x.xyradius - y.xyradius)
                .abs()
                .max((x.radius - y.radius).abs()),
        );
    }
    println!(
        "bounds: the file's {:.2e} of the size from its skinned vertices, ossa's {:.2e}; \
         {:.2e} apart",
        off[0] / size,
        off[1] / size,
        apart / size
    );
    assert!(off[1] <= 1e-6 * size, "bounds {}", off[1] / size);
    assert!(apart <= 2e-3 * size, "bounds {}", apart / size);
}

// ---------------------------------------------------------------------------------------------
// More than four influences
// ---------------------------------------------------------------------------------------------

/// A tube of six bones whose vertex `VERTEX` six bones weigh on.
const VERTEX: usize = 40;

fn six_bone_vertex() -> Model {
    let rig = TubeRig {
        bones: 6,
        ..TubeRig::default()
    };
    let mut parts = rig.parts();
    let model = Model::from_parts(parts.clone()).unwrap();
    let p = skinned(&model, 0)[VERTEX].map(|x| x as f32);
    let mesh = &mut parts.meshes[0];
    let (from, to) = (
        mesh.influence_start[VERTEX] as usize,
        mesh.influence_start[VERTEX + 1] as usize,
    );
    let normal = mesh.influences[from]
        .normal
        .map(|x| x / mesh.influences[from].weight);
    // In the bind pose bone b is at (0, 0, b x length), unturned.
    let shares = [0.3f32, 0.2, 0.2, 0.1, 0.1, 0.1];
    let six: Vec<Influence> = (shares.iter().enumerate())
        .map(|(b, &w)| {
            let joint = b as f32 * rig.bone_length;
            Influence {
                origin: [w * p[0], w * p[1], w * (p[2] - joint)],
                weight: w,
                normal: normal.map(|x| x * w),
                bone: b as u32,
            }
        })
        .collect();
    let added = six.len() as i64 - (to - from) as i64;
    mesh.influences.splice(from..to, six);
    for s in &mut mesh.influence_start[VERTEX + 1..] {
        *s = (*s as i64 + added) as u32;
    }
    Model::from_parts(parts).unwrap()
}

/// The writer refuses a vertex of more than four bones naming it and the option that fits it;
/// `ossa convert` says the same, and with `--max-influences 4` writes the file, which the
/// reference reader finds to be the model with each vertex's four strongest influences.
#[test]
fn a_vertex_of_six_bones_is_refused_naming_it_and_max_influences_4_converts() {
    let model = six_bone_vertex();
    assert_eq!(model.meshes()[0].influences(VERTEX).len(), 6);
    let e = model.save(Format::Iqm).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported, "{e}");
    let message = e.to_string();
    assert!(
        message.contains(&format!("mesh 0 vertex {VERTEX}: 6 bones"))
            && message.contains("--max-influences 4"),
        "{message}"
    );

    let dir = TempDir::new("iqm-convert", "influences");
    dir.write("six.dpm", ossa::dpm::write(&model).unwrap());
    let run = run_convert(&dir, &dir.path("six.dpm"), &dir.path("six.iqm"), &[]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("OSSA_ERR_UNSUPPORTED")
            && run.stderr.contains(&format!("vertex {VERTEX}: 6 bones")),
        "{}",
        run.stderr
    );

    let out = dir.path("four.iqm");
    let run = run_convert(&dir, &dir.path("six.dpm"), &out, &["--max-influences", "4"]);
    assert_eq!(
        run.code, 0,
        "`ossa convert --max-influences 4` into IQM: {}",
        run.stderr
    );
    // The CLI converts the DPM as read back from disk (its floats rounded as DPM stores them).
    let dpm = Model::load_file(dir.path("six.dpm"), &LoadOptions::default()).unwrap();
    let (capped, _) = dpm.with_max_influences(4).unwrap();
    let f = check_file("six bones, capped", &capped, &std::fs::read(&out).unwrap());
    assert_figures("six bones, capped", "", &f);
}
