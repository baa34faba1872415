//! What the hostile-input tests of every format share: the error codes a broken file may end
//! in, the invariants every loaded model keeps, posing and skinning a whole model, the lengths
//! to cut a file at, single-bit flips, and random byte runs from a fixed-seed xorshift (the same
//! bytes on every run and platform, and no dependency).
//!
//! Each test binary uses a different subset of this module.
#![allow(dead_code)]

use ossa::{ErrorCode, FrameBlend, Mat3x4, Model, Strided};

/// What broken or hostile bytes may fail with.
pub const CLEAN: [ErrorCode; 5] = [
    ErrorCode::UnknownFormat,
    ErrorCode::Unsupported,
    ErrorCode::Truncated,
    ErrorCode::Malformed,
    ErrorCode::Limit,
];

// ---------------------------------------------------------------------------------------------
// Driving ossa
// ---------------------------------------------------------------------------------------------

pub fn blend(frame: u32, weight: f32) -> FrameBlend {
    FrameBlend { frame, weight }
}

/// Model-space bone matrices of a blend.
pub fn pose(model: &Model, blends: &[FrameBlend], root: Option<&Mat3x4>) -> Vec<Mat3x4> {
    let mut out = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(blends, root, &mut out)
        .expect("pose_frames");
    out
}

/// Positions and normals of every vertex of `mesh`, skinned with `bones` into a Strided target.
pub fn skin(model: &Model, mesh: usize, bones: &[Mat3x4], flags: u32) -> SkinOut {
    let vc = model.meshes()[mesh].vertex_count();
    let mut pos = vec![f32::NAN; vc * 3];
    let mut nrm = vec![f32::NAN; vc * 3];
    {
        let mut target = Strided::new(&mut pos, 3)
            .unwrap()
            .with_normals(&mut nrm, 3)
            .unwrap();
        model
            .skin_mesh(mesh, bones, 0, vc, flags, &mut target)
            .expect("skin_mesh");
    }
    SkinOut {
        positions: pos.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect(),
        normals: nrm.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect(),
    }
}

pub struct SkinOut {
    pub positions: Vec<[f32; 3]>,
    pub normals: Vec<[f32; 3]>,
}

// ---------------------------------------------------------------------------------------------
// Checks every loaded model must pass
// ---------------------------------------------------------------------------------------------

/// The model's own invariants: parents earlier, a frame 0 for every skeleton, influence bones
/// (skeleton bones, or the slots meshes waiting for a skeleton name), triangle indices and
/// references in range, texcoords and group ids sized to the mesh, and, once bound, posing and
/// skinning frame 0, the last frame and a blend of the two without panicking. When every stored
/// number is moderate, these must also give finite values (with values near f32::MAX a finite
/// product can overflow, which says nothing about the loader).
pub fn check_invariants(model: &Model, what: &str) {
    let nb = model.bones().len();
    let slots = model.unbound().map_or(nb, |s| s.count());
    for (i, b) in model.bones().iter().enumerate() {
        assert!(
            b.parent == -1 || (b.parent >= 0 && (b.parent as usize) < i),
            "{what}: bone {i}: parent {}",
            b.parent
        );
    }
    assert!(
        nb == 0 || !model.frames().is_empty(),
        "{what}: a skeleton has frame 0"
    );
    let mut moderate = true;
    for f in 0..model.frames().len() {
        let poses = model.skeleton().frame_poses(f).expect("frame poses");
        assert_eq!(poses.len(), nb, "{what}");
        for p in poses.iter() {
            assert!(p.is_finite(), "{what}: frame {f}");
            moderate &= p.m.iter().all(|v| v.abs() < 1e15);
        }
    }
    for mesh in model.meshes() {
        let vc = mesh.vertex_count();
        assert!(mesh.indices().len().is_multiple_of(3), "{what}");
        for &i in mesh.indices() {
            assert!((i as usize) < vc, "{what}: index {i} of {vc} vertices");
        }
        for v in 0..vc {
            for inf in mesh.influences(v) {
                assert!(
                    (inf.bone as usize) < slots,
                    "{what}: influence bone {}",
                    inf.bone
                );
                let all = inf.origin.iter().chain(&inf.normal).chain([&inf.weight]);
                for x in all {
                    assert!(x.is_finite(), "{what}: vertex {v}");
                    moderate &= x.abs() < 1e15;
                }
            }
        }
        if let Some(tc) = mesh.texcoords() {
            assert_eq!(tc.len(), vc, "{what}");
            assert!(tc.iter().flatten().all(|v| v.is_finite()), "{what}");
        }
        if let Some(g) = mesh.group_ids() {
            assert_eq!(g.len(), mesh.triangle_count(), "{what}");
        }
        if let Some(r) = mesh.references() {
            assert!(r.iter().all(|&b| (b as usize) < slots), "{what}");
        }
    }
    if model.unbound().is_some() || model.frames().is_empty() {
        return;
    }
    let last = model.frames().len() as u32 - 1;
    let blends: [&[FrameBlend]; 3] = [
        &[blend(0, 1.0)],
        &[blend(last, 1.0)],
        &[blend(0, 0.5), blend(last, 0.5)],
    ];
    for b in blends {
        let bones = pose(model, b, None);
        if moderate {
            assert!(
                bones.iter().all(Mat3x4::is_finite),
                "{what}: {b:?} poses {bones:?}"
            );
        }
        for (m, mesh) in model.meshes().iter().enumerate() {
            let out = skin(model, m, &bones, 0);
            assert_eq!(out.positions.len(), mesh.vertex_count(), "{what}");
            if moderate {
                for (p, n) in out.positions.iter().zip(&out.normals) {
                    assert!(
                        p.iter().chain(n).all(|v| v.is_finite()),
                        "{what}: mesh {m}: {b:?} skins to {p:?} {n:?}"
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Hostile bytes
// ---------------------------------------------------------------------------------------------

/// The lengths to cut `n` bytes at: every one when there are at most `spread`, else `spread`
/// spread evenly and the first and last 64, where headers and last records end.
pub fn lengths(n: usize, spread: usize) -> Vec<usize> {
    if n <= spread {
        return (0..n).collect();
    }
    let mut v: Vec<usize> = (0..spread).map(|i| i * n / spread).collect();
    v.extend((1..64.min(n)).chain(n.saturating_sub(64)..n));
    v.sort();
    v.dedup();
    v
}

/// The bytes whose bits to flip: every one of a file of at most `spread` bytes, else the first
/// `spread / 2` (headers and first records) and `spread / 2` spread over the rest.
pub fn flip_positions(n: usize, rng: &mut XorShift, spread: usize) -> Vec<usize> {
    if n <= spread {
        return (0..n).collect();
    }
    let head = spread / 2;
    let mut v: Vec<usize> = (0..head).collect();
    v.extend((0..spread - head).map(|_| head + rng.below(n - head)));
    v
}

/// How many hostile inputs loaded and how many failed.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    pub loaded: usize,
    pub failed: usize,
}

impl Tally {
    pub fn add(&mut self, loaded: bool) {
        if loaded {
            self.loaded += 1;
        } else {
            self.failed += 1;
        }
    }
}

/// Flips each bit of each byte at `positions` in turn and hands every result to `case` with a
/// description; `case` says whether the input loaded.
pub fn flip_bits(
    bytes: &[u8],
    positions: impl IntoIterator<Item = usize>,
    mut case: impl FnMut(&[u8], &str) -> bool,
) -> Tally {
    let mut tally = Tally::default();
    let mut copy = bytes.to_vec();
    for at in positions {
        for bit in 0..8 {
            copy[at] ^= 1 << bit;
            tally.add(case(&copy, &format!("byte {at} bit {bit}")));
            copy[at] ^= 1 << bit;
        }
    }
    tally
}

/// `rounds` copies of `base`, each with one to three runs of 1 to 24 random bytes written at or
/// after byte `keep` (so that a magic number or header can be left alone), handed to `case`.
pub fn random_runs(
    base: &[u8],
    rng: &mut XorShift,
    rounds: usize,
    keep: usize,
    mut case: impl FnMut(&[u8], &str) -> bool,
) -> Tally {
    let mut tally = Tally::default();
    for round in 0..rounds {
        let mut b = base.to_vec();
        for _ in 0..1 + rng.below(3) {
            let len = (1 + rng.below(24)).min(b.len() - keep);
            let at = keep + rng.below(b.len() - len - keep + 1);
            rng.fill(&mut b[at..at + len]);
        }
        tally.add(case(&b, &format!("random run {round}")));
    }
    tally
}

/// xorshift64*: fixed seeds give the same bytes on every run and platform.
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed.max(1))
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn fill(&mut self, out: &mut [u8]) {
        for b in out {
            *b = (self.next_u64() >> 56) as u8;
        }
    }
}
