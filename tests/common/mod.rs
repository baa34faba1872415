//! Shared by the DPM integration tests: where the corpus lives, a DPM reader and a DPM builder
//! written from FORMATS.md §2.1 without using ossa's own reader or writer (so that a
//! misunderstanding of the format cannot hide in both), reference math in f64, and small helpers;
//! posing, skinning, model invariants and hostile-input sweeps come from `sweep`, shared with
//! the other formats' tests.
//!
//! Each test binary uses a different subset of this module.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

use ossa::{LoadOptions, Model};

// ---------------------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------------------

#[path = "../corpus/mod.rs"]
mod corpus;
#[allow(unused_imports)]
pub use corpus::{blender_gltf_files, corpus_dir, corpus_subdir};

#[path = "../sweep/mod.rs"]
mod sweep;
pub use sweep::*;

#[path = "../ref_math/mod.rs"]
pub mod ref_math;

/// One corpus file: its bytes, the independent parse, and ossa's model.
pub struct CorpusDpm {
    pub name: String,
    pub bytes: Vec<u8>,
    pub raw: RawDpm,
    pub model: Model,
}

fn load_corpus() -> Vec<CorpusDpm> {
    let dir = corpus_dir().join("dpm");
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("dpm")))
            .collect(),
        Err(_) => return Vec::new(),
    };
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            let raw = RawDpm::parse(&bytes).unwrap_or_else(|e| panic!("{name}: reference: {e}"));
            let model = Model::load(&bytes, &LoadOptions::default())
                .unwrap_or_else(|e| panic!("{name}: ossa: {e}"));
            CorpusDpm {
                name,
                bytes,
                raw,
                model,
            }
        })
        .collect()
}

/// Every `.dpm` of the corpus, parsed and loaded once per test binary; `None` (after saying so)
/// when the corpus is not there.
pub fn corpus_dpms(test: &str) -> Option<&'static [CorpusDpm]> {
    static CORPUS: OnceLock<Vec<CorpusDpm>> = OnceLock::new();
    let dir = corpus_dir().join("dpm");
    let all = CORPUS.get_or_init(load_corpus);
    if all.is_empty() {
        eprintln!("corpus not found at {}; skipping {test}", dir.display());
        return None;
    }
    Some(all)
}

/// The bytes of one corpus file, or `None` (after saying so) when it is not there.
pub fn corpus_file(rel: &str, test: &str) -> Option<Vec<u8>> {
    let path = corpus_dir().join(rel);
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(_) => {
            eprintln!("corpus not found at {}; skipping {test}", path.display());
            None
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Independent big-endian reader (FORMATS.md §2.1)
// ---------------------------------------------------------------------------------------------

pub const MAGIC: &[u8; 16] = b"DARKPLACESMODEL\0";

fn be_u32(d: &[u8], at: usize) -> Result<u32, String> {
    d.get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| format!("read past the end at byte {at}"))
}

fn be_f32(d: &[u8], at: usize) -> Result<f32, String> {
    be_u32(d, at).map(f32::from_bits)
}

/// A 32-byte name field: the bytes before the first NUL, or all 32.
fn name32(d: &[u8], at: usize) -> Result<Vec<u8>, String> {
    let f = d
        .get(at..at + 32)
        .ok_or_else(|| format!("name past the end at byte {at}"))?;
    let end = f.iter().position(|&b| b == 0).unwrap_or(32);
    Ok(f[..end].to_vec())
}

#[derive(Clone, Debug, PartialEq)]
pub struct RawBone {
    pub name: Vec<u8>,
    pub parent: i32,
    pub flags: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RawInfluence {
    pub origin: [f32; 3],
    pub weight: f32,
    pub normal: [f32; 3],
    pub bone: u32,
}

#[derive(Clone, Debug)]
pub struct RawMesh {
    pub shader: Vec<u8>,
    pub num_verts: u32,
    pub num_tris: u32,
    pub vertices: Vec<Vec<RawInfluence>>,
    pub texcoords: Vec<[f32; 2]>,
    pub indices: Vec<u32>,
    pub group_ids: Vec<u32>,
}

#[derive(Clone, Debug)]
pub struct RawFrame {
    pub name: Vec<u8>,
    pub mins: [f32; 3],
    pub maxs: [f32; 3],
    pub yaw_radius: f32,
    pub radius: f32,
    pub ofs_poses: i32,
}

#[derive(Clone, Debug)]
pub struct RawDpm {
    pub file_type: u32,
    pub filesize: u32,
    pub bones: Vec<RawBone>,
    pub meshes: Vec<RawMesh>,
    pub frames: Vec<RawFrame>,
    /// `poses[frame][bone]`, the 12 floats of a row-major 3x4 parent-relative matrix.
    pub poses: Vec<Vec<[f32; 12]>>,
}

impl RawDpm {
    /// Parses a well-formed file; errors only say where this reader gave up.
    pub fn parse(d: &[u8]) -> Result<RawDpm, String> {
        if d.get(..16) != Some(&MAGIC[..]) {
            return Err("bad magic".into());
        }
        let file_type = be_u32(d, 16)?;
        let filesize = be_u32(d, 20)?;
        let num_bones = be_u32(d, 56)? as usize;
        let num_meshs = be_u32(d, 60)? as usize;
        let num_frames = be_u32(d, 64)? as usize;
        let ofs_bones = be_u32(d, 68)? as usize;
        let ofs_meshs = be_u32(d, 72)? as usize;
        let ofs_frames = be_u32(d, 76)? as usize;

        let mut bones = Vec::new();
        for i in 0..num_bones {
            let at = ofs_bones + i * 40;
            bones.push(RawBone {
                name: name32(d, at)?,
                parent: be_u32(d, at + 32)? as i32,
                flags: be_u32(d, at + 36)?,
            });
        }

        let mut meshes = Vec::new();
        for m in 0..num_meshs {
            let at = ofs_meshs + m * 56;
            let shader = name32(d, at)?;
            let num_verts = be_u32(d, at + 32)?;
            let num_tris = be_u32(d, at + 36)?;
            let ofs_verts = be_u32(d, at + 40)? as usize;
            let ofs_tc = be_u32(d, at + 44)? as usize;
            let ofs_ix = be_u32(d, at + 48)? as usize;
            let ofs_gi = be_u32(d, at + 52)? as usize;
            // The vertex block is variable-size: a count, then that many 32-byte influences.
            let mut vertices = Vec::with_capacity(num_verts as usize);
            let mut p = ofs_verts;
            for _ in 0..num_verts {
                let n = be_u32(d, p)? as usize;
                p += 4;
                let mut infl = Vec::with_capacity(n);
                for _ in 0..n {
                    let f = |k: usize| be_f32(d, p + 4 * k);
                    infl.push(RawInfluence {
                        origin: [f(0)?, f(1)?, f(2)?],
                        weight: f(3)?,
                        normal: [f(4)?, f(5)?, f(6)?],
                        bone: be_u32(d, p + 28)?,
                    });
                    p += 32;
                }
                vertices.push(infl);
            }
            let texcoords = (0..num_verts as usize)
                .map(|v| Ok([be_f32(d, ofs_tc + 8 * v)?, be_f32(d, ofs_tc + 8 * v + 4)?]))
                .collect::<Result<Vec<_>, String>>()?;
            let indices = (0..num_tris as usize * 3)
                .map(|i| be_u32(d, ofs_ix + 4 * i))
                .collect::<Result<Vec<_>, String>>()?;
            let group_ids = (0..num_tris as usize)
                .map(|i| be_u32(d, ofs_gi + 4 * i))
                .collect::<Result<Vec<_>, String>>()?;
            meshes.push(RawMesh {
                shader,
                num_verts,
                num_tris,
                vertices,
                texcoords,
                indices,
                group_ids,
            });
        }

        let mut frames = Vec::new();
        let mut poses = Vec::new();
        for f in 0..num_frames {
            let at = ofs_frames + f * 68;
            let v = |k: usize| be_f32(d, at + 32 + 4 * k);
            let frame = RawFrame {
                name: name32(d, at)?,
                mins: [v(0)?, v(1)?, v(2)?],
                maxs: [v(3)?, v(4)?, v(5)?],
                yaw_radius: v(6)?,
                radius: v(7)?,
                ofs_poses: be_u32(d, at + 64)? as i32,
            };
            let base = usize::try_from(frame.ofs_poses).map_err(|_| "negative pose offset")?;
            let mut fp = Vec::with_capacity(num_bones);
            for b in 0..num_bones {
                let mut m = [0.0f32; 12];
                for (k, x) in m.iter_mut().enumerate() {
                    *x = be_f32(d, base + b * 48 + 4 * k)?;
                }
                fp.push(m);
            }
            frames.push(frame);
            poses.push(fp);
        }
        Ok(RawDpm {
            file_type,
            filesize,
            bones,
            meshes,
            frames,
            poses,
        })
    }

    pub fn vertex_count(&self) -> usize {
        self.meshes.iter().map(|m| m.vertices.len()).sum()
    }

    pub fn triangle_count(&self) -> usize {
        self.meshes.iter().map(|m| m.indices.len() / 3).sum()
    }

    pub fn max_influences(&self) -> usize {
        self.meshes
            .iter()
            .flat_map(|m| m.vertices.iter().map(Vec::len))
            .max()
            .unwrap_or(0)
    }

    pub fn parents(&self) -> Vec<i32> {
        self.bones.iter().map(|b| b.parent).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Reference math in f64
// ---------------------------------------------------------------------------------------------

pub type M34 = [f64; 12];

pub fn m64(m: &[f32; 12]) -> M34 {
    m.map(f64::from)
}

/// `a * b` for row-major 3x4 affine matrices acting on column vectors (b applied first).
pub fn mul34(a: &M34, b: &M34) -> M34 {
    let mut r = [0.0f64; 12];
    for i in 0..3 {
        for j in 0..4 {
            r[4 * i + j] = a[4 * i] * b[j] + a[4 * i + 1] * b[4 + j] + a[4 * i + 2] * b[8 + j];
        }
        r[4 * i + 3] += a[4 * i + 3];
    }
    r
}

/// Absolute matrices: each bone's local matrix concatenated down its parent chain.
pub fn absolute(parents: &[i32], local: &[[f32; 12]]) -> Vec<M34> {
    let mut out: Vec<M34> = Vec::with_capacity(local.len());
    for (i, l) in local.iter().enumerate() {
        let l = m64(l);
        let m = match usize::try_from(parents[i]) {
            Ok(p) => mul34(&out[p], &l),
            Err(_) => l,
        };
        out.push(m);
    }
    out
}

/// The direct formula: `p = sum_k (R_k o_k + f_k t_k)`, `n = sum_k R_k n_k`.
pub fn direct_skin(infl: &[RawInfluence], abs: &[M34]) -> ([f64; 3], [f64; 3]) {
    let mut p = [0.0f64; 3];
    let mut n = [0.0f64; 3];
    for i in infl {
        let m = &abs[i.bone as usize];
        let (o, f, nn) = (
            i.origin.map(f64::from),
            f64::from(i.weight),
            i.normal.map(f64::from),
        );
        for r in 0..3 {
            p[r] += m[4 * r] * o[0] + m[4 * r + 1] * o[1] + m[4 * r + 2] * o[2] + f * m[4 * r + 3];
            n[r] += m[4 * r] * nn[0] + m[4 * r + 1] * nn[1] + m[4 * r + 2] * nn[2];
        }
    }
    (p, n)
}

pub fn max_abs_diff(a: [f64; 3], b: [f32; 3]) -> f64 {
    (0..3)
        .map(|k| (a[k] - f64::from(b[k])).abs())
        .fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------------------------
// Driving ossa
// ---------------------------------------------------------------------------------------------

/// Every mesh of a model at frame 0 (one blend, weight 1, no root).
pub fn skin_frame0(model: &Model) -> Vec<SkinOut> {
    let bones = pose(model, &[blend(0, 1.0)], None);
    (0..model.meshes().len())
        .map(|m| skin(model, m, &bones, 0))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// A byte-level DPM builder (FORMATS.md §2.1), independent of ossa::dpm::write
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
pub struct FxBone {
    pub name: Vec<u8>,
    pub parent: i32,
    pub flags: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct FxInfluence {
    pub origin: [f32; 3],
    pub weight: f32,
    pub normal: [f32; 3],
    pub bone: u32,
}

#[derive(Clone, Debug)]
pub struct FxMesh {
    pub shader: Vec<u8>,
    pub vertices: Vec<Vec<FxInfluence>>,
    pub texcoords: Vec<[f32; 2]>,
    pub indices: Vec<u32>,
    pub group_ids: Vec<u32>,
}

#[derive(Clone, Debug)]
pub struct FxFrame {
    pub name: Vec<u8>,
    pub mins: [f32; 3],
    pub maxs: [f32; 3],
    pub yaw_radius: f32,
    pub radius: f32,
    pub poses: Vec<[f32; 12]>,
}

#[derive(Clone, Debug)]
pub struct FxModel {
    pub bones: Vec<FxBone>,
    pub meshes: Vec<FxMesh>,
    pub frames: Vec<FxFrame>,
}

/// Where the builder put each structure, for tests that patch bytes or check error offsets.
#[derive(Clone, Debug, Default)]
pub struct FxLayout {
    pub ofs_bones: usize,
    pub ofs_meshes: usize,
    pub ofs_frames: usize,
    pub meshes: Vec<FxMeshLayout>,
    pub poses: Vec<usize>,
    pub len: usize,
}

#[derive(Clone, Debug, Default)]
pub struct FxMeshLayout {
    pub header: usize,
    /// Byte of each vertex's `numbones`.
    pub vertices: Vec<usize>,
    pub verts_end: usize,
    pub texcoords: usize,
    pub indices: usize,
    pub group_ids: usize,
}

impl FxLayout {
    pub fn bone(&self, i: usize) -> usize {
        self.ofs_bones + 40 * i
    }
    pub fn mesh_header(&self, m: usize) -> usize {
        self.ofs_meshes + 56 * m
    }
    pub fn frame_header(&self, f: usize) -> usize {
        self.ofs_frames + 68 * f
    }
    /// Byte of field `field` (0..8: origin xyz, influence, normal xyz, bonenum) of an influence.
    pub fn influence(&self, m: usize, v: usize, k: usize, field: usize) -> usize {
        self.meshes[m].vertices[v] + 4 + 32 * k + 4 * field
    }
    pub fn pose(&self, f: usize, b: usize, k: usize) -> usize {
        self.poses[f] + 48 * b + 4 * k
    }
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn put_f32(out: &mut Vec<u8>, v: f32) {
    put_u32(out, v.to_bits());
}

fn put_name(out: &mut Vec<u8>, name: &[u8]) {
    assert!(name.len() <= 32, "fixture name longer than 32 bytes");
    out.extend_from_slice(name);
    out.extend(std::iter::repeat_n(0u8, 32 - name.len()));
}

/// Overwrites a big-endian u32 at `at`.
pub fn set_u32(d: &mut [u8], at: usize, v: u32) {
    d[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

pub fn set_i32(d: &mut [u8], at: usize, v: i32) {
    set_u32(d, at, v as u32);
}

pub fn set_f32(d: &mut [u8], at: usize, v: f32) {
    set_u32(d, at, v.to_bits());
}

pub fn get_u32(d: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]])
}

impl FxModel {
    /// Lays the file out as header, bones, mesh headers, frame headers, then every frame's poses,
    /// then each mesh's group ids, indices, texcoords and vertices: not the order the dpmodel
    /// tool (and ossa's writer) use, since offsets are absolute and readers must follow them.
    pub fn build(&self) -> (Vec<u8>, FxLayout) {
        let nb = self.bones.len();
        let mut l = FxLayout {
            ofs_bones: 80,
            ..FxLayout::default()
        };
        l.ofs_meshes = l.ofs_bones + 40 * nb;
        l.ofs_frames = l.ofs_meshes + 56 * self.meshes.len();
        let mut pos = l.ofs_frames + 68 * self.frames.len();
        for f in &self.frames {
            assert_eq!(f.poses.len(), nb, "fixture frame pose count");
            l.poses.push(pos);
            pos += 48 * nb;
        }
        for (m, mesh) in self.meshes.iter().enumerate() {
            let nt = mesh.indices.len() / 3;
            let mut ml = FxMeshLayout {
                header: l.ofs_meshes + 56 * m,
                ..FxMeshLayout::default()
            };
            ml.group_ids = pos;
            pos += 4 * nt;
            ml.indices = pos;
            pos += 12 * nt;
            ml.texcoords = pos;
            pos += 8 * mesh.vertices.len();
            for v in &mesh.vertices {
                ml.vertices.push(pos);
                pos += 4 + 32 * v.len();
            }
            ml.verts_end = pos;
            l.meshes.push(ml);
        }
        l.len = pos;

        let mut out = Vec::with_capacity(pos);
        out.extend_from_slice(MAGIC);
        put_u32(&mut out, 2);
        put_u32(&mut out, pos as u32);
        // Header bounds: any finite values do; readers take bounds from the mesh.
        for v in [-1.0f32, -1.0, -1.0, 1.0, 1.0, 1.0, 1.5, 2.0] {
            put_f32(&mut out, v);
        }
        for v in [
            nb,
            self.meshes.len(),
            self.frames.len(),
            l.ofs_bones,
            l.ofs_meshes,
            l.ofs_frames,
        ] {
            put_u32(&mut out, v as u32);
        }
        for b in &self.bones {
            put_name(&mut out, &b.name);
            put_u32(&mut out, b.parent as u32);
            put_u32(&mut out, b.flags);
        }
        for (mesh, ml) in self.meshes.iter().zip(&l.meshes) {
            put_name(&mut out, &mesh.shader);
            put_u32(&mut out, mesh.vertices.len() as u32);
            put_u32(&mut out, (mesh.indices.len() / 3) as u32);
            let ofs_verts = ml.vertices.first().copied().unwrap_or(ml.verts_end);
            for o in [ofs_verts, ml.texcoords, ml.indices, ml.group_ids] {
                put_u32(&mut out, o as u32);
            }
        }
        for (f, ofs) in self.frames.iter().zip(&l.poses) {
            put_name(&mut out, &f.name);
            for v in f.mins.iter().chain(&f.maxs) {
                put_f32(&mut out, *v);
            }
            put_f32(&mut out, f.yaw_radius);
            put_f32(&mut out, f.radius);
            put_u32(&mut out, *ofs as u32);
        }
        for f in &self.frames {
            for p in &f.poses {
                p.iter().for_each(|v| put_f32(&mut out, *v));
            }
        }
        for mesh in &self.meshes {
            mesh.group_ids.iter().for_each(|&g| put_u32(&mut out, g));
            mesh.indices.iter().for_each(|&i| put_u32(&mut out, i));
            mesh.texcoords
                .iter()
                .flatten()
                .for_each(|&t| put_f32(&mut out, t));
            for v in &mesh.vertices {
                put_u32(&mut out, v.len() as u32);
                for i in v {
                    for x in i.origin.iter().chain([&i.weight]).chain(&i.normal) {
                        put_f32(&mut out, *x);
                    }
                    put_u32(&mut out, i.bone);
                }
            }
        }
        assert_eq!(out.len(), l.len);
        (out, l)
    }
}

pub const IDENT: [f32; 12] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];

/// A translation matrix.
pub fn tr(x: f32, y: f32, z: f32) -> [f32; 12] {
    [1.0, 0.0, 0.0, x, 0.0, 1.0, 0.0, y, 0.0, 0.0, 1.0, z]
}

/// Rotation by `a` radians about +x, then translation.
pub fn rot_x(a: f32, t: [f32; 3]) -> [f32; 12] {
    let (s, c) = a.sin_cos();
    [1.0, 0.0, 0.0, t[0], 0.0, c, -s, t[1], 0.0, s, c, t[2]]
}

fn infl(origin: [f32; 3], weight: f32, normal: [f32; 3], bone: u32) -> FxInfluence {
    FxInfluence {
        origin,
        weight,
        normal,
        bone,
    }
}

/// The hand-built fixture: bones `root` <- `mid` <- `tip` along +z, 10 units apart in the bind
/// pose (no rotations), and four vertices at model-space points
/// v0 (1,0,2) on root; v1 (1,0,9) half root, half mid; v2 (0,1,16) root 1/4, mid 1/4, tip 1/2;
/// v3 (0,-1,22) on tip. Each influence stores `f * (P - joint)` and `f * n`, as the dpmodel
/// tool writes them. Weights are powers of two so that every sum is exact.
///
/// Frames: 0 `bind`; 1 `bend_a`: mid turned +90 degrees about x (exact 0/1 matrix);
/// 2 `bend_b`: root moved to (4,0,0), mid turned +30 degrees about x and moved to (0,2,10).
pub fn chain_fixture() -> FxModel {
    let bones = vec![
        FxBone {
            name: b"root".to_vec(),
            parent: -1,
            flags: 0,
        },
        FxBone {
            name: b"mid".to_vec(),
            parent: 0,
            flags: 0,
        },
        FxBone {
            name: b"tip".to_vec(),
            parent: 1,
            flags: 1,
        },
    ];
    let vertices = vec![
        vec![infl([1.0, 0.0, 2.0], 1.0, [1.0, 0.0, 0.0], 0)],
        vec![
            infl([0.5, 0.0, 4.5], 0.5, [0.5, 0.0, 0.0], 0),
            infl([0.5, 0.0, -0.5], 0.5, [0.5, 0.0, 0.0], 1),
        ],
        vec![
            infl([0.0, 0.25, 4.0], 0.25, [0.0, 0.25, 0.0], 0),
            infl([0.0, 0.25, 1.5], 0.25, [0.0, 0.25, 0.0], 1),
            infl([0.0, 0.5, -2.0], 0.5, [0.0, 0.5, 0.0], 2),
        ],
        vec![infl([0.0, -1.0, 2.0], 1.0, [0.0, -1.0, 0.0], 2)],
    ];
    let mesh = FxMesh {
        shader: b"models/chain/skin".to_vec(),
        vertices,
        texcoords: vec![[0.0, 0.0], [0.5, 0.25], [1.0, 0.5], [0.25, 1.0]],
        indices: vec![0, 1, 2, 0, 2, 3],
        group_ids: vec![7, 9],
    };
    // Exact +90 degrees about x: y -> z, z -> -y.
    let quarter_x = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 1.0, 0.0, 10.0];
    let frame = |name: &str, poses: Vec<[f32; 12]>, k: f32| FxFrame {
        name: name.as_bytes().to_vec(),
        mins: [-1.0 - k, -1.0, 0.0],
        maxs: [1.0, 1.0 + k, 22.0],
        yaw_radius: 1.5 + k,
        radius: 22.0 + k,
        poses,
    };
    FxModel {
        bones,
        meshes: vec![mesh],
        frames: vec![
            frame(
                "bind",
                vec![IDENT, tr(0.0, 0.0, 10.0), tr(0.0, 0.0, 10.0)],
                0.0,
            ),
            frame("bend_a", vec![IDENT, quarter_x, tr(0.0, 0.0, 10.0)], 1.0),
            frame(
                "bend_b",
                vec![
                    tr(4.0, 0.0, 0.0),
                    rot_x(std::f32::consts::FRAC_PI_6, [0.0, 2.0, 10.0]),
                    tr(0.0, 0.0, 10.0),
                ],
                2.0,
            ),
        ],
    }
}

/// Model-space position of each chain-fixture vertex in the bind pose.
pub const CHAIN_BIND: [[f32; 3]; 4] = [
    [1.0, 0.0, 2.0],
    [1.0, 0.0, 9.0],
    [0.0, 1.0, 16.0],
    [0.0, -1.0, 22.0],
];

/// A small TubeRig for tests that walk every byte.
pub fn small_tube() -> ossa::synth::TubeRig {
    ossa::synth::TubeRig {
        bones: 2,
        bone_length: 4.0,
        radius: 1.0,
        rings_per_bone: 1,
        sides: 3,
        frames: 2,
        bend: 0.5,
    }
}
