//! qfusion / Warsow SKM + SKP read again for the tests, from FORMATS.md §3 and without ossa's
//! readers or math (so that a misreading of the format cannot hide in both): the little-endian
//! layout of §3.1, the absolute poses of §3.4 (`q_abs = q_parent q_local`,
//! `t_abs = t_parent + R(q_parent) t_local`) and the direct skinning formula of §3.5 in f64.
//! Malformed input is an `Err` saying where the reader gave up, never a panic.
//!
//! Each test binary uses a different subset of this module.
#![allow(dead_code)]

#[allow(unused_imports)]
// The test crate declares `mod ref_math`, shared with the DMF reader.
pub use crate::ref_math::{Q4, V3, cross, dot, qmul, qnorm, qrot, sub};

// ---------------------------------------------------------------------------------------------
// Little-endian reads (FORMATS.md §3.1)
// ---------------------------------------------------------------------------------------------

fn u32_at(d: &[u8], at: usize) -> Result<u32, String> {
    at.checked_add(4)
        .and_then(|end| d.get(at..end))
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| format!("read past the end at byte {at}"))
}

fn f32_at(d: &[u8], at: usize) -> Result<f32, String> {
    u32_at(d, at).map(f32::from_bits)
}

/// A 64-byte name field: the bytes before the first NUL, or all 64.
fn name64(d: &[u8], at: usize) -> Result<Vec<u8>, String> {
    let f = at
        .checked_add(64)
        .and_then(|end| d.get(at..end))
        .ok_or_else(|| format!("name past the end at byte {at}"))?;
    Ok(f[..f.iter().position(|&b| b == 0).unwrap_or(64)].to_vec())
}

/// `base + k * size`, or an error when it overflows.
fn at(base: usize, k: usize, size: usize) -> Result<usize, String> {
    k.checked_mul(size)
        .and_then(|o| o.checked_add(base))
        .ok_or_else(|| format!("offset {base} + {k} x {size} overflows"))
}

fn header(d: &[u8]) -> Result<(), String> {
    if d.get(..4) != Some(&b"SKM1"[..]) {
        return Err("no SKM1 magic".into());
    }
    match u32_at(d, 4)? {
        2 => Ok(()),
        t => Err(format!("type {t}, not 2")),
    }
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
    pub name: Vec<u8>,
    pub vertices: Vec<Vec<RawInfluence>>,
    pub texcoords: Vec<[f32; 2]>,
    /// In file order (clockwise front).
    pub indices: Vec<u32>,
    pub references: Vec<u32>,
}

#[derive(Clone, Debug)]
pub struct RawSkm {
    pub num_bones: u32,
    pub meshes: Vec<RawMesh>,
}

/// The `.skm` mesh file.
pub fn parse_skm(d: &[u8]) -> Result<RawSkm, String> {
    header(d)?;
    let num_bones = u32_at(d, 12)?;
    let num_meshes = u32_at(d, 16)? as usize;
    let ofs_meshes = u32_at(d, 20)? as usize;
    let mut meshes = Vec::new();
    for m in 0..num_meshes {
        let h = at(ofs_meshes, m, 156)?;
        let nv = u32_at(d, h + 128)? as usize;
        let nt = u32_at(d, h + 132)? as usize;
        let nr = u32_at(d, h + 136)? as usize;
        let (ov, ot, oi, or) = (
            u32_at(d, h + 140)? as usize,
            u32_at(d, h + 144)? as usize,
            u32_at(d, h + 148)? as usize,
            u32_at(d, h + 152)? as usize,
        );
        // Variable-size vertices: a count, then that many 32-byte influences. Nothing is
        // reserved from the counts, which a malformed file may make huge.
        let mut p = ov;
        let mut vertices = Vec::new();
        for _ in 0..nv {
            let n = u32_at(d, p)? as usize;
            p += 4;
            let mut infl = Vec::new();
            for k in 0..n {
                let a = at(p, k, 32)?;
                let f = |o: usize| f32_at(d, a + o);
                infl.push(RawInfluence {
                    origin: [f(0)?, f(4)?, f(8)?],
                    weight: f(12)?,
                    normal: [f(16)?, f(20)?, f(24)?],
                    bone: u32_at(d, a + 28)?,
                });
            }
            p = at(p, n, 32)?;
            vertices.push(infl);
        }
        let texcoords = (0..nv)
            .map(|v| Ok([f32_at(d, at(ot, v, 8)?)?, f32_at(d, at(ot, v, 8)? + 4)?]))
            .collect::<Result<Vec<_>, String>>()?;
        let indices = (0..nt.saturating_mul(3))
            .map(|i| u32_at(d, at(oi, i, 4)?))
            .collect::<Result<Vec<_>, String>>()?;
        let references = (0..nr)
            .map(|i| u32_at(d, at(or, i, 4)?))
            .collect::<Result<Vec<_>, String>>()?;
        meshes.push(RawMesh {
            shader: name64(d, h)?,
            name: name64(d, h + 64)?,
            vertices,
            texcoords,
            indices,
            references,
        });
    }
    Ok(RawSkm { num_bones, meshes })
}

#[derive(Clone, Debug)]
pub struct RawSkp {
    /// Name, parent, flags.
    pub bones: Vec<(Vec<u8>, i32, u32)>,
    pub frames: Vec<Vec<u8>>,
    /// Per frame, per bone: quaternion (x, y, z, w) and origin.
    pub poses: Vec<Vec<([f32; 4], [f32; 3])>>,
}

/// The `.skp` skeleton and animation file.
pub fn parse_skp(d: &[u8]) -> Result<RawSkp, String> {
    header(d)?;
    let nb = u32_at(d, 12)? as usize;
    let nf = u32_at(d, 16)? as usize;
    let (ob, of) = (u32_at(d, 20)? as usize, u32_at(d, 24)? as usize);
    let bones = (0..nb)
        .map(|b| {
            let a = at(ob, b, 72)?;
            Ok((name64(d, a)?, u32_at(d, a + 64)? as i32, u32_at(d, a + 68)?))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let mut frames = Vec::new();
    let mut poses = Vec::new();
    for f in 0..nf {
        let a = at(of, f, 68)?;
        frames.push(name64(d, a)?);
        let op = u32_at(d, a + 64)? as usize;
        poses.push(
            (0..nb)
                .map(|b| {
                    let p = at(op, b, 28)?;
                    let v = (0..7)
                        .map(|k| f32_at(d, p + 4 * k))
                        .collect::<Result<Vec<f32>, String>>()?;
                    Ok(([v[0], v[1], v[2], v[3]], [v[4], v[5], v[6]]))
                })
                .collect::<Result<Vec<_>, String>>()?,
        );
    }
    Ok(RawSkp {
        bones,
        frames,
        poses,
    })
}

// ---------------------------------------------------------------------------------------------
// Reference math in f64: the direct formula of FORMATS §3.4 and §3.5
// ---------------------------------------------------------------------------------------------

pub fn f64v(v: [f32; 3]) -> V3 {
    v.map(|x| x as f64)
}

/// Frame `f`'s absolute (q, t) per bone: `q_abs = q_parent q_local`,
/// `t_abs = t_parent + R(q_parent) t_local`. A parent that does not come before its child
/// (QF assumes it does) is an error.
pub fn absolute(skp: &RawSkp, f: usize) -> Result<Vec<(Q4, V3)>, String> {
    let frame = skp
        .poses
        .get(f)
        .ok_or_else(|| format!("no frame {f} of {}", skp.poses.len()))?;
    let mut abs: Vec<(Q4, V3)> = Vec::new();
    for (b, (_, parent, _)) in skp.bones.iter().enumerate() {
        let (q, t) = frame[b];
        let q = qnorm(q.map(|c| c as f64));
        let t = f64v(t);
        abs.push(if *parent < 0 {
            (q, t)
        } else {
            let (pq, pt) = *abs
                .get(*parent as usize)
                .ok_or_else(|| format!("bone {b}: parent {parent} does not come before it"))?;
            let r = qrot(pq, t);
            (qmul(pq, q), [pt[0] + r[0], pt[1] + r[1], pt[2] + r[2]])
        });
    }
    Ok(abs)
}

/// A mesh posed by the direct formula: `p = sum_k (R_k o_k + f_k t_k)`, `n = sum_k R_k n_k`,
/// with `abs` the absolute poses of one frame (frame 0 gives the bind mesh).
pub fn direct_bind(mesh: &RawMesh, abs: &[(Q4, V3)]) -> Result<(Vec<V3>, Vec<V3>), String> {
    let mut ps = Vec::with_capacity(mesh.vertices.len());
    let mut ns = Vec::with_capacity(mesh.vertices.len());
    for (v, infl) in mesh.vertices.iter().enumerate() {
        let mut p = [0.0; 3];
        let mut n = [0.0; 3];
        for i in infl {
            let (q, t) = *abs
                .get(i.bone as usize)
                .ok_or_else(|| format!("vertex {v}: bone {} out of range", i.bone))?;
            let ro = qrot(q, f64v(i.origin));
            let rn = qrot(q, f64v(i.normal));
            for a in 0..3 {
                p[a] += ro[a] + i.weight as f64 * t[a];
                n[a] += rn[a];
            }
        }
        ps.push(p);
        ns.push(n);
    }
    Ok((ps, ns))
}
