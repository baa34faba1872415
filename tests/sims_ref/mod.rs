//! The Sims 1 files read again for the tests, from FORMATS §4 and without ossa's readers or math
//! (so that a misreading of the format cannot hide in both): SKN text and BMF meshes, the first
//! skeleton of a CMX text file, and the rest pose in f64 (`local = T(t) R(q)^T`, absolute =
//! parent * local).
//!
//! Each test binary uses a different subset of this module.
#![allow(dead_code)]

use ossa::Influence;

// ---------------------------------------------------------------------------------------------
// Meshes (FORMATS §4.1)
// ---------------------------------------------------------------------------------------------

pub struct RefSkn {
    pub name: String,
    pub texture: String,
    pub bones: Vec<String>,
    pub faces: Vec<[u32; 3]>,
    /// bone, first real, real count, first blend, blend count
    pub bindings: Vec<[i64; 5]>,
    pub uvs: Vec<[f32; 2]>,
    /// target, raw weight
    pub blends: Vec<(usize, u32)>,
    pub vectors: Vec<[f32; 6]>,
}

impl RefSkn {
    /// SKN text: one value or record per line, fields split on whitespace.
    pub fn parse(text: &str) -> RefSkn {
        read(&mut Text(text.lines()))
    }

    /// BMF: the same sections little-endian, strings as a length byte and the bytes, counts and
    /// indices u32 (a binding's first blend signed), numbers f32, blends weight first.
    pub fn parse_bmf(data: &[u8]) -> RefSkn {
        let mut r = Le { data, at: 0 };
        let mesh = read(&mut r);
        assert_eq!(r.at, data.len(), "bytes after the vectors");
        mesh
    }

    /// The bone (an index into [`RefSkn::bones`]) of each real vertex and of each blend, from the
    /// bindings; every one must have a binding.
    pub fn owners(&self) -> (Vec<usize>, Vec<usize>) {
        let mut real_bone = vec![usize::MAX; self.uvs.len()];
        let mut blend_bone = vec![usize::MAX; self.blends.len()];
        for &[bone, fr, rc, fb, bc] in &self.bindings {
            for v in fr..fr + rc {
                real_bone[v as usize] = bone as usize;
            }
            for k in fb..fb + bc {
                blend_bone[k as usize] = bone as usize;
            }
        }
        assert!(
            !real_bone.contains(&usize::MAX),
            "a real vertex with no binding"
        );
        assert!(!blend_bone.contains(&usize::MAX), "a blend with no binding");
        (real_bone, blend_bone)
    }

    /// The influences FORMATS §4.4-4.5 give each real vertex: its bone's point with weight 1, or
    /// with a blend `{(1 - w) p, 1 - w, n}` and `{w q, w, 0}`.
    pub fn influences(&self) -> Vec<Vec<Influence>> {
        let real = self.uvs.len();
        let (real_bone, blend_bone) = self.owners();
        let mut out: Vec<Vec<Influence>> = (0..real)
            .map(|v| {
                let [px, py, pz, nx, ny, nz] = self.vectors[v];
                vec![Influence {
                    origin: [px, py, pz],
                    weight: 1.0,
                    normal: [nx, ny, nz],
                    bone: real_bone[v] as u32,
                }]
            })
            .collect();
        for (k, &(target, raw)) in self.blends.iter().enumerate() {
            let w = raw as f32 / 32768.0;
            let keep = 1.0 - w;
            let [px, py, pz, nx, ny, nz] = self.vectors[target];
            let [qx, qy, qz, ..] = self.vectors[real + k];
            out[target] = vec![
                Influence {
                    origin: [keep * px, keep * py, keep * pz],
                    weight: keep,
                    normal: [nx, ny, nz],
                    bone: real_bone[target] as u32,
                },
                Influence {
                    origin: [w * qx, w * qy, w * qz],
                    weight: w,
                    normal: [0.0; 3],
                    bone: blend_bone[k] as u32,
                },
            ];
        }
        out
    }
}

/// How the sections of a mesh file are read: names, counts, and records of N numbers.
trait Sections {
    /// Whether a blend gives its weight before its target vertex (BMF) or after it (SKN).
    const WEIGHT_FIRST: bool;
    fn name(&mut self) -> String;
    fn count(&mut self) -> usize;
    fn ints<const N: usize>(&mut self) -> [i64; N];
    fn floats<const N: usize>(&mut self) -> [f32; N];
}

fn read<R: Sections>(r: &mut R) -> RefSkn {
    let name = r.name();
    let texture = r.name();
    let nb = r.count();
    let bones = (0..nb).map(|_| r.name()).collect();
    let nf = r.count();
    let faces = (0..nf).map(|_| r.ints::<3>().map(|i| i as u32)).collect();
    let nbind = r.count();
    let bindings = (0..nbind).map(|_| r.ints::<5>()).collect();
    let nu = r.count();
    let uvs = (0..nu).map(|_| r.floats::<2>()).collect();
    let nk = r.count();
    let blends = (0..nk)
        .map(|_| {
            let [a, b] = r.ints::<2>();
            let (target, weight) = if R::WEIGHT_FIRST { (b, a) } else { (a, b) };
            (target as usize, weight as u32)
        })
        .collect();
    let nv = r.count();
    assert_eq!(nv, nu + nk, "vector count");
    let vectors = (0..nv).map(|_| r.floats::<6>()).collect();
    RefSkn {
        name,
        texture,
        bones,
        faces,
        bindings,
        uvs,
        blends,
        vectors,
    }
}

/// SKN lines, trimmed; a record's fields split on whitespace.
struct Text<'a>(std::str::Lines<'a>);

impl Text<'_> {
    fn line(&mut self) -> &str {
        self.0.next().expect("a line").trim()
    }
    fn fields<T: std::str::FromStr, const N: usize>(&mut self) -> [T; N]
    where
        T::Err: std::fmt::Debug,
    {
        let fields: Vec<&str> = self.line().split_whitespace().collect();
        std::array::from_fn(|i| fields[i].parse().unwrap())
    }
}

impl Sections for Text<'_> {
    const WEIGHT_FIRST: bool = false;
    fn name(&mut self) -> String {
        self.line().to_owned()
    }
    fn count(&mut self) -> usize {
        self.line().parse().expect("a count")
    }
    fn ints<const N: usize>(&mut self) -> [i64; N] {
        self.fields()
    }
    fn floats<const N: usize>(&mut self) -> [f32; N] {
        self.fields()
    }
}

/// BMF: little-endian, read to the end and no further (the reference reads well-formed files).
struct Le<'a> {
    data: &'a [u8],
    at: usize,
}

impl Le<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        self.at += n;
        &self.data[self.at - n..self.at]
    }
    fn word(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
}

impl Sections for Le<'_> {
    const WEIGHT_FIRST: bool = true;
    fn name(&mut self) -> String {
        let len = self.take(1)[0] as usize;
        String::from_utf8_lossy(self.take(len)).into_owned()
    }
    fn count(&mut self) -> usize {
        self.word() as usize
    }
    /// Words read as signed: only a binding's first blend can be negative (-1 when it has none).
    fn ints<const N: usize>(&mut self) -> [i64; N] {
        std::array::from_fn(|_| self.word() as i32 as i64)
    }
    fn floats<const N: usize>(&mut self) -> [f32; N] {
        std::array::from_fn(|_| f32::from_bits(self.word()))
    }
}

// ---------------------------------------------------------------------------------------------
// Skeletons (FORMATS §4.2) and the rest pose (§4.3)
// ---------------------------------------------------------------------------------------------

pub struct RawBone {
    pub name: String,
    pub parent: String,
    pub t: [f64; 3],
    pub q: [f64; 4],
}

/// The bones of the first skeleton of a version 300 CMX, read line by line.
pub fn raw_skeleton(text: &[u8]) -> Vec<RawBone> {
    let text = String::from_utf8_lossy(text);
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//"))
        .skip(1); // version
    let mut next = || lines.next().unwrap().to_owned();
    let skeletons: usize = next().parse().unwrap();
    assert!(skeletons >= 1);
    let _name = next();
    let count: usize = next().parse().unwrap();
    let nums = |l: String| -> Vec<f64> {
        l.trim_matches('|')
            .split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect()
    };
    (0..count)
        .map(|_| {
            let name = next();
            let parent = next();
            let lists: usize = next().parse().unwrap();
            for _ in 0..lists {
                let props: usize = next().parse().unwrap();
                for _ in 0..2 * props {
                    next();
                }
            }
            let t = nums(next());
            let q = nums(next());
            for _ in 0..5 {
                next();
            }
            RawBone {
                name,
                parent,
                t: [t[0], t[1], t[2]],
                q: [q[0], q[1], q[2], q[3]],
            }
        })
        .collect()
}

#[path = "../ref_math/mod.rs"]
mod ref_math;
// Each test binary uses a different part of the reference math.
#[allow(unused_imports)]
pub use ref_math::{IDENTITY, M3, Q4, apply, mul, qdot, qnorm, rot, transpose};

/// Model-space joint rotations and positions: local = T(t) R(q)^T, absolute = parent * local.
pub fn joints(bones: &[RawBone]) -> Vec<(M3, [f64; 3])> {
    joints_turned(bones, |_| IDENTITY)
}

/// The same with each bone's local rotation followed by `turn(bone)`: local = T(t) R(q)^T X.
pub fn joints_turned(bones: &[RawBone], turn: impl Fn(usize) -> M3) -> Vec<(M3, [f64; 3])> {
    let mut out: Vec<(M3, [f64; 3])> = Vec::new();
    for (i, b) in bones.iter().enumerate() {
        let local = mul(transpose(rot(b.q)), turn(i));
        let abs = match bones.iter().position(|p| p.name == b.parent) {
            Some(p) => {
                let (pr, pt) = out[p];
                let t = apply(pr, b.t);
                (mul(pr, local), [t[0] + pt[0], t[1] + pt[1], t[2] + pt[2]])
            }
            None => (local, b.t),
        };
        out.push(abs);
    }
    out
}
