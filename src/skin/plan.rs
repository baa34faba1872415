//! The layout a mesh gets at load for the skinning kernels: its vertices grouped so that one
//! matrix serves a whole group.
//!
//! - A vertex with one influence is `A (o, f)`: it joins its bone's group and is transformed by
//!   the caller's bone matrix itself, exactly the stored formula.
//! - A vertex with several influences whose influences agree on one bind point `v` (every
//!   `o_k = f_k B_k^-1 v` and `n_k = f_k R_k^-1 n`, `B_k` the bone's bind pose; real files do to
//!   about 1e-7 of their size) is `sum_k f_k A_k B_k^-1 (v, 1)`: one blended matrix per distinct
//!   set of (bone, weight) pairs, DarkPlaces' palette, applied to the stored `(v, 1, n, 0)`.
//!   Every influence stays, with its exact weight; only the order of the sums changes. The
//!   agreement is checked per vertex in the bind pose, and a vertex whose influences disagree by
//!   more than [`AGREEMENT`] of the model's size (normals: of their length) is not put in the
//!   palette, nor one using a bone whose bind matrix has no accurate inverse.
//! - Every other vertex is skinned influence by influence.
//!
//! Within a group vertices ascend, so a range of vertices is a run of each group. Building it is
//! linear: one pass to classify, a small direct-mapped cache to find repeated sets (it may miss a
//! repeat, which only costs a second copy of the set), one counting sort.

use crate::math::Mat3x4;
use crate::model::Influence;

/// How far (relative to the model's size, in the bind pose) a palette vertex may land from where
/// its influences put it: ten times below the tolerance the benchmarks check skinning against.
pub(crate) const AGREEMENT: f32 = 1e-6;

/// Most distinct bones the palette's sets may use: their `pose * inverse bind` matrices are
/// computed per call into a stack buffer of this many (12 KiB). A mesh using more skins its
/// multi-influence vertices influence by influence.
pub(crate) const MAX_PALETTE_BONES: usize = 256;

/// A palette vertex's operand: bind position, 1, bind normal, 0. Aligned for one 32-byte load.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct BindPoint(pub [f32; 8]);

/// A run of `SkinPlan::vertices`: `[start, end)`; `key` is the bone of a bone group, the first
/// member of a set (whose members run to the next set's first, or the end).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Group {
    pub start: u32,
    pub end: u32,
    pub key: u32,
    pub members_end: u32,
}

/// One influence of a palette set: the bone's slot in `SkinPlan::palette_bones`, its weight.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Member {
    pub slot: u32,
    pub weight: f32,
}

#[derive(Debug, Default)]
pub(crate) struct SkinPlan {
    /// Vertex indices: bone groups' vertices, then the sets' vertices.
    pub vertices: Vec<u32>,
    pub bone_groups: Vec<Group>,
    /// Sets' `start`/`end` index `vertices`; their bind points are `points[start - sets_from..]`.
    pub sets: Vec<Group>,
    pub sets_from: u32,
    pub members: Vec<Member>,
    /// The bones the sets use, ascending.
    pub palette_bones: Vec<u32>,
    pub points: Vec<BindPoint>,
    /// Vertices skinned influence by influence, ascending.
    pub direct: Vec<u32>,
}

/// What pass one decides for a vertex.
const DIRECT: u32 = u32::MAX;
const SET_BIT: u32 = 1 << 31;

/// How a mesh's vertices are skinned, counted: see [`crate::Mesh::skin_layout`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SkinLayout {
    /// Vertices with one influence: transformed by their bone's matrix.
    pub one_bone: usize,
    /// Vertices whose influences agree on a bind point: transformed by their set's blend.
    pub palette: usize,
    /// Distinct sets of (bone, weight) pairs among the palette's vertices.
    pub sets: usize,
    /// Vertices skinned influence by influence (influences that disagree, or none).
    pub direct: usize,
    /// Heap the layout takes, in bytes.
    pub heap_bytes: usize,
}

impl SkinPlan {
    pub fn layout(&self) -> SkinLayout {
        SkinLayout {
            one_bone: self.sets_from as usize,
            palette: self.points.len(),
            sets: self.sets.len(),
            direct: self.direct.len(),
            heap_bytes: self.heap_bytes(),
        }
    }

    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.vertices.len() * 4
            + (self.bone_groups.len() + self.sets.len()) * size_of::<Group>()
            + self.members.len() * size_of::<Member>()
            + self.palette_bones.len() * 4
            + self.points.len() * size_of::<BindPoint>()
            + self.direct.len() * 4
    }

    /// Lays out a checked mesh (every bone index below `bind.len()`); `size` is the model's
    /// size, the scale of the palette's tolerance.
    pub fn build(
        starts: &[u32],
        influences: &[Influence],
        bind: &[Mat3x4],
        inverse_bind: &[Mat3x4],
        size: f32,
    ) -> SkinPlan {
        let vc = starts.len().saturating_sub(1);
        let nb = bind.len();
        let tolerance = AGREEMENT * size.max(f32::MIN_POSITIVE);
        let invertible = invertible(bind, inverse_bind);
        // Pass one: each vertex's bone group, set, or DIRECT; sets found through a small cache.
        let mut class = Vec::with_capacity(vc);
        let mut sets: Vec<Group> = Vec::new();
        let mut members: Vec<Member> = Vec::new();
        let mut points: Vec<BindPoint> = Vec::new();
        let multi = starts.windows(2).filter(|w| w[1] - w[0] > 1).count();
        let cache_len = (multi / 4).clamp(64, 1 << 14).next_power_of_two();
        let mut cache = vec![u32::MAX; cache_len];
        for w in starts.windows(2) {
            let infl = influences.get(w[0] as usize..w[1] as usize).unwrap_or(&[]);
            let c = match infl {
                [one] if (one.bone as usize) < nb => one.bone,
                [_, _, ..] => match bind_point(infl, bind, &invertible, tolerance) {
                    Some(point) => {
                        let set = find_or_add_set(infl, &mut cache, &mut sets, &mut members);
                        points.push(point);
                        SET_BIT | set
                    }
                    None => DIRECT,
                },
                _ => DIRECT,
            };
            class.push(c);
        }

        // Counted a run of equal classes at a time: neighbours tend to share a bone or set, and a
        // counter bumped per vertex would wait on its own previous store.
        let mut bone_counts = vec![0u32; nb];
        let mut set_counts = vec![0u32; sets.len()];
        for (c, _, len) in runs(&class) {
            let n = if c == DIRECT {
                None
            } else if c & SET_BIT != 0 {
                set_counts.get_mut((c & !SET_BIT) as usize)
            } else {
                bone_counts.get_mut(c as usize)
            };
            if let Some(n) = n {
                *n += len as u32;
            }
        }

        // Members name bones until here; the kernels want slots of the palette's bone list.
        let mut slot_of = vec![u32::MAX; nb];
        for m in &members {
            if let Some(s) = slot_of.get_mut(m.slot as usize) {
                *s = 0;
            }
        }
        let mut palette_bones = Vec::new();
        for (b, s) in slot_of.iter_mut().enumerate() {
            if *s == 0 {
                *s = palette_bones.len() as u32;
                palette_bones.push(b as u32);
            }
        }
        if palette_bones.len() > MAX_PALETTE_BONES {
            // Too many bones for the per-call buffer: every multi-influence vertex goes direct.
            for c in class
                .iter_mut()
                .filter(|c| **c != DIRECT && **c & SET_BIT != 0)
            {
                *c = DIRECT;
            }
            sets.clear();
            set_counts.clear();
            members.clear();
            points.clear();
            palette_bones.clear();
        }
        for m in &mut members {
            m.slot = slot_of.get(m.slot as usize).copied().unwrap_or(0);
        }

        // Counting sort: bone groups in bone order, then sets in order of first appearance.
        let mut bone_groups = Vec::new();
        let mut next = 0u32;
        let mut bone_at = vec![0u32; nb];
        for (b, &n) in bone_counts.iter().enumerate() {
            if n > 0 {
                if let Some(at) = bone_at.get_mut(b) {
                    *at = next;
                }
                bone_groups.push(Group {
                    start: next,
                    end: next + n,
                    key: b as u32,
                    members_end: 0,
                });
                next += n;
            }
        }
        let sets_from = next;
        let mut set_at = Vec::with_capacity(sets.len());
        for (set, &n) in sets.iter_mut().zip(&set_counts) {
            set.start = next;
            set.end = next + n;
            set_at.push(next);
            next += n;
        }
        let mut vertices = vec![0u32; next as usize];
        let mut sorted_points = vec![BindPoint::default(); points.len()];
        let mut direct = Vec::new();
        let mut point_at = 0usize;
        for (c, start, len) in runs(&class) {
            let range = start as u32..(start + len) as u32;
            let at = if c == DIRECT {
                direct.extend(range);
                continue;
            } else if c & SET_BIT != 0 {
                let Some(at) = set_at.get_mut((c & !SET_BIT) as usize) else {
                    continue;
                };
                let to = (*at - sets_from) as usize;
                if let (Some(slots), Some(from)) = (
                    sorted_points.get_mut(to..to + len),
                    points.get(point_at..point_at + len),
                ) {
                    slots.copy_from_slice(from);
                }
                point_at += len;
                at
            } else {
                let Some(at) = bone_at.get_mut(c as usize) else {
                    continue;
                };
                at
            };
            if let Some(slots) = vertices.get_mut(*at as usize..*at as usize + len) {
                for (slot, v) in slots.iter_mut().zip(range) {
                    *slot = v;
                }
            }
            *at += len as u32;
        }
        SkinPlan {
            vertices,
            bone_groups,
            sets,
            sets_from,
            members,
            palette_bones,
            points: sorted_points,
            direct,
        }
    }
}

/// Runs of equal values: (value, first index, length).
fn runs(class: &[u32]) -> impl Iterator<Item = (u32, usize, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        let &c = class.get(i)?;
        let start = i;
        while class.get(i) == Some(&c) {
            i += 1;
        }
        Some((c, start, i - start))
    })
}

/// The set of `infl`'s (bone, weight) pairs: one already seen when the cache remembers it, else
/// a new one. Members still name bones here.
fn find_or_add_set(
    infl: &[Influence],
    cache: &mut [u32],
    sets: &mut Vec<Group>,
    members: &mut Vec<Member>,
) -> u32 {
    let mut h: u32 = infl.len() as u32;
    for i in infl {
        h = (h.rotate_left(5) ^ i.bone ^ i.weight.to_bits()).wrapping_mul(0x9e37_79b9);
    }
    let entry = (h >> 18) as usize & (cache.len() - 1);
    let same = |set: &Group| {
        members
            .get(set.key as usize..set.members_end as usize)
            .is_some_and(|m| {
                m.len() == infl.len()
                    && m.iter()
                        .zip(infl)
                        .all(|(m, i)| m.slot == i.bone && m.weight.to_bits() == i.weight.to_bits())
            })
    };
    if let Some(&id) = cache.get(entry)
        && let Some(set) = sets.get(id as usize)
        && same(set)
    {
        return id;
    }
    let id = sets.len() as u32;
    let key = members.len() as u32;
    members.extend(infl.iter().map(|i| Member {
        slot: i.bone,
        weight: i.weight,
    }));
    sets.push(Group {
        start: 0,
        end: 0,
        key,
        members_end: members.len() as u32,
    });
    if let Some(e) = cache.get_mut(entry) {
        *e = id;
    }
    id
}

/// Most influences a palette vertex may have (more are skinned one by one; real files have up to
/// 11): the check keeps each influence's bind-pose point on the stack.
const MAX_PALETTE_INFLUENCES: usize = 16;

/// Most a bone's bind matrix may stretch any direction more than another (estimated as the
/// largest element of its 3x3 part times the largest of its inverse's) for the palette to use it:
/// past that, `pose * inverse bind` magnifies a pose's rounding, or overflows where the bind
/// pose nearly collapses a bone, while skinning influence by influence stays exact.
const MAX_BIND_CONDITION: f32 = 1e4;

/// Whether each bone's inverse bind matrix undoes its bind matrix to within rounding, and is
/// well conditioned, so that a point checked in the bind pose is where `pose * inverse bind`
/// takes it.
fn invertible(bind: &[Mat3x4], inverse_bind: &[Mat3x4]) -> Vec<bool> {
    let largest_3x3 = |m: &Mat3x4| {
        [0, 1, 2, 4, 5, 6, 8, 9, 10]
            .iter()
            .fold(0.0f32, |a, &k| a.max(m.m.get(k).map_or(0.0, |x| x.abs())))
    };
    bind.iter()
        .zip(inverse_bind)
        .map(|(b, i)| {
            let condition = largest_3x3(b) * largest_3x3(i);
            // NaN (an inverse that overflowed) fails this too.
            if !condition.is_finite() || condition > MAX_BIND_CONDITION {
                return false;
            }
            let p = b.mul(i);
            let scale = b.m.iter().chain(&i.m).fold(1.0f32, |m, x| m.max(x.abs()));
            p.m.iter()
                .zip(&Mat3x4::IDENTITY.m)
                .all(|(x, y)| (x - y).abs() <= 1e-5 * scale)
        })
        .collect()
}

/// The bind point and normal the influences agree on, or `None` when they do not (to within
/// `tolerance` in the bind pose), cannot (no positive total weight, a bone without an inverse)
/// or are too many to check.
///
/// Influence k puts the vertex at `w_k = B_k (o_k, f_k)` (weighted) in the bind pose; they agree
/// when every `w_k` is `f_k v` for the weighted mean `v`; then `f_k B_k^-1 (v, 1)` is `(o_k, f_k)`
/// and the palette's blend gives the stored sum. Normals likewise with the 3x3 parts.
fn bind_point(
    infl: &[Influence],
    bind: &[Mat3x4],
    invertible: &[bool],
    tolerance: f32,
) -> Option<BindPoint> {
    if infl.len() > MAX_PALETTE_INFLUENCES {
        return None;
    }
    let mut points = [[0.0f32; 6]; MAX_PALETTE_INFLUENCES];
    let mut p = [0.0f32; 3];
    let mut n = [0.0f32; 3];
    let mut total = 0.0f32;
    let mut normal_scale = 0.0f32;
    for (i, w) in infl.iter().zip(&mut points) {
        if !invertible.get(i.bone as usize).copied().unwrap_or(false) {
            return None;
        }
        let b = bind.get(i.bone as usize)?;
        let q = b.transform_vector(i.origin);
        let r = b.transform_vector(i.normal);
        let t = b.translation();
        for a in 0..3 {
            w[a] = q[a] + i.weight * t[a];
            w[3 + a] = r[a];
            p[a] += w[a];
            n[a] += r[a];
            normal_scale += i.normal[a].abs();
        }
        total += i.weight;
    }
    // Zero, negative or NaN: no point to divide by.
    if total.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let inv = 1.0 / total;
    let v = [p[0] * inv, p[1] * inv, p[2] * inv];
    let nb = [n[0] * inv, n[1] * inv, n[2] * inv];
    let mut position_error = 0.0f32;
    let mut normal_error = 0.0f32;
    for (i, w) in infl.iter().zip(&points) {
        for a in 0..3 {
            position_error += (w[a] - i.weight * v[a]).abs();
            normal_error += (w[3 + a] - i.weight * nb[a]).abs();
        }
    }
    let normal_tolerance = AGREEMENT * normal_scale;
    if position_error <= tolerance && normal_error <= normal_tolerance {
        Some(BindPoint([v[0], v[1], v[2], 1.0, nb[0], nb[1], nb[2], 0.0]))
    } else {
        None
    }
}
