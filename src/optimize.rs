//! The savers' optimisations the original format documents ask for: remove bones nothing uses
//! (keeping attachments and every ancestor of a kept bone), order triangles for the vertex
//! cache, renumber vertices by first use, and renumber bones by first use. Each returns a new
//! model and says what changed. [`Model::with_max_influences`] is the lossy step a saver of a
//! format with fewer influences a vertex needs first.

use crate::error::Result;
use crate::model::{BONE_ATTACHMENT, Influence, MeshParts, Model, ModelParts};

/// Remove bones no vertex uses, keeping attachment bones and the ancestors of kept bones (a
/// model whose vertices use no bone at all, a skeleton alone, keeps every bone).
pub const OPTIMIZE_UNUSED_BONES: u32 = 1;
/// Order each mesh's triangles for a post-transform vertex cache (Forsyth's algorithm).
pub const OPTIMIZE_TRIANGLE_ORDER: u32 = 2;
/// Renumber each mesh's vertices in order of first use by its triangles; unused ones go last.
pub const OPTIMIZE_VERTEX_ORDER: u32 = 4;
/// Renumber bones in the order the vertices first use them (meshes in order, each vertex's
/// influences in order), parents still before children: a pre-order of the bone tree whose
/// children are taken by the first use anywhere in their subtree, so a bone's subtree stays
/// together (MM2's `.skel` numbers bones so). Bones no vertex uses keep their order after the
/// used ones among their siblings; a model whose vertices use no bone (a skeleton alone) keeps
/// its order. Runs after the vertex and triangle orders, which it follows.
pub const OPTIMIZE_BONE_ORDER: u32 = 8;
/// Renumber each mesh's vertices so that those of one influence set (the same bones with the
/// same weights, skinned alike: one bone, one palette blend, or influence by influence) are
/// contiguous: sets in the order the triangles first use them, and within a set its vertices
/// in the order the triangles first use them. Triangles keep their order (and so the GPU's
/// vertex cache its hits) and name the new numbers. The skinning kernels then meet long runs
/// of vertices under one matrix, which they transform several at a time. Runs after the
/// vertex and triangle orders, whose within-set order it keeps.
pub const OPTIMIZE_SKIN_ORDER: u32 = 16;
/// What the formats' documents ask of a saver (skin order is the engine's choice, not the
/// format's).
pub const OPTIMIZE_ALL: u32 =
    OPTIMIZE_UNUSED_BONES | OPTIMIZE_TRIANGLE_ORDER | OPTIMIZE_VERTEX_ORDER | OPTIMIZE_BONE_ORDER;
/// Every optimisation flag.
pub const OPTIMIZE_KNOWN: u32 = OPTIMIZE_ALL | OPTIMIZE_SKIN_ORDER;

/// The FIFO cache size the reported miss ratios are measured with.
pub const CACHE_SIZE: usize = 16;

/// Most live triangles of one cached vertex the triangle order scores per step (see
/// `forsyth_order`).
const SCAN: usize = 32;

/// What an optimisation changed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OptimizeReport {
    pub bones_before: u32,
    pub bones_after: u32,
    /// Triangles that moved in their mesh's order.
    pub triangles_moved: u32,
    /// Vertices that got another number.
    pub vertices_moved: u32,
    /// Bones that got another number by [`OPTIMIZE_BONE_ORDER`] (not counting those removed).
    pub bones_moved: u32,
    /// Vertex-cache misses per triangle over all meshes, before and after (FIFO of [`CACHE_SIZE`]).
    pub acmr_before: f32,
    pub acmr_after: f32,
}

/// Vertex-cache misses of an index list in a FIFO cache of `size` entries.
pub fn cache_misses(indices: &[u32], size: usize) -> usize {
    // A table over the vertex numbers, where they are not many more than the indices (a mesh's
    // are fewer): one look-up an index instead of a search of the ring. Bounded by the list, so
    // that many small lists do not each clear a large table.
    let most = indices.iter().max().map_or(0, |&m| m as usize);
    if size > 0 && most < indices.len().saturating_mul(4) {
        return misses_by_stamp(indices, size, most + 1);
    }
    match size {
        0 => indices.len(),
        // The size the reports use, its search unrolled.
        CACHE_SIZE => misses_in_ring(indices, [0u32; CACHE_SIZE]),
        _ => misses_in_ring(indices, vec![0u32; size]),
    }
}

fn misses_in_ring<R: AsMut<[u32]>>(indices: &[u32], mut ring: R) -> usize {
    let ring = ring.as_mut();
    let size = ring.len();
    // The empty ring holds a number no index has, so that it is searched whole from the
    // start; only an index list that uses every u32 lacks one, and it fills the ring first.
    let unused = match indices.iter().max() {
        Some(&most) if most < u32::MAX => most + 1,
        Some(_) => return misses_filling_first(indices, ring),
        None => return 0,
    };
    ring.fill(unused);
    // Searched whole, without an early exit (a few vector compares), and a miss taken without
    // a branch: the ring's next entry is written either way, with the index or with what it
    // held. A branch on the hit was mispredicted about once a triangle.
    let (mut next, mut misses) = (0usize, 0usize);
    for &i in indices {
        let hit = ring.iter().fold(false, |hit, &c| hit | (c == i));
        let slot = &mut ring[next];
        *slot = if hit { *slot } else { i };
        misses += usize::from(!hit);
        next += usize::from(!hit);
        if next == size {
            next = 0;
        }
    }
    misses
}

/// The misses of a FIFO cache of `size`, from when each vertex last entered it: the cache
/// drops its entries in the order they came, so a vertex is still in it while fewer than `size`
/// misses have come after its own. `count`: more than the largest index.
fn misses_by_stamp(indices: &[u32], size: usize, count: usize) -> usize {
    // The miss count at which the vertex leaves the cache: `size` more than just after it came
    // in; 0 for one that never did. Kept so, a hit is one compare with the running count, the
    // only link from one index to the next.
    let mut leaves = vec![0usize; count];
    let mut misses = 0usize;
    for &i in indices {
        let Some(l) = leaves.get_mut(i as usize) else {
            continue;
        };
        // No branch on the hit, which would be mispredicted about once a triangle.
        let miss = *l <= misses;
        misses += usize::from(miss);
        *l = if miss {
            misses.saturating_add(size)
        } else {
            *l
        };
    }
    misses
}

/// [`misses_in_ring`] for an index list that uses every u32: only the filled entries of the ring
/// count until it is full.
fn misses_filling_first(indices: &[u32], ring: &mut [u32]) -> usize {
    let size = ring.len();
    let (mut filled, mut next, mut misses) = (0usize, 0usize, 0usize);
    for &i in indices {
        if !ring[..filled].contains(&i) {
            misses += 1;
            ring[next] = i;
            next = if next + 1 == size { 0 } else { next + 1 };
            filled = (filled + 1).min(size);
        }
    }
    misses
}

fn acmr(meshes: &[MeshParts]) -> f32 {
    acmr_of(meshes.iter().map(|m| m.indices.as_slice()))
}

/// Vertex-cache misses per triangle over the index lists together.
fn acmr_of<'a>(lists: impl Iterator<Item = &'a [u32]>) -> f32 {
    let (misses, triangles) = lists.fold((0, 0), |(misses, triangles), indices| {
        (
            misses + cache_misses(indices, CACHE_SIZE),
            triangles + indices.len() / 3,
        )
    });
    if triangles == 0 {
        0.0
    } else {
        misses as f32 / triangles as f32
    }
}

/// Forsyth's linear-speed vertex cache optimisation: repeatedly emit the best-scoring triangle,
/// scores favouring vertices recently used and vertices with few triangles left.
///
/// Each step looks at no more than [`SCAN`] live triangles of each cached vertex, so a step
/// costs at most `CACHE * SCAN` scores whatever a vertex's valence (a fan's hub, or one
/// triangle repeated, would otherwise make every step scan all of its triangles). Real meshes'
/// vertices have far fewer triangles than that, and are ordered exactly as by a full scan.
///
/// Returns the triangles' numbers in their new order.
fn forsyth_order(indices: &[u32], vertex_count: usize) -> Vec<u32> {
    const CACHE: usize = 32;
    const DECAY: f32 = 1.5;
    const LAST_TRIANGLE: f32 = 0.75;
    const VALENCE_SCALE: f32 = 2.0;
    const VALENCE_POWER: f32 = -0.5;
    const NONE: u32 = u32::MAX;

    let triangles = indices.len() / 3;
    // Corners are numbered in u32 links; a mesh past that (16 GiB of indices) keeps its order.
    if indices.len() >= NONE as usize {
        return (0..triangles as u32).collect();
    }
    let mut remaining = vec![0u32; vertex_count];
    for &i in indices {
        remaining[i as usize] += 1;
    }
    // The live corners of each vertex, a doubly linked list in triangle order: emitting a
    // triangle unlinks its corners at once, and a scan walks live triangles only.
    let mut head = vec![NONE; vertex_count];
    let mut next = vec![NONE; indices.len()];
    let mut prev = vec![NONE; indices.len()];
    for c in (0..indices.len()).rev() {
        let v = indices[c] as usize;
        next[c] = head[v];
        if head[v] != NONE {
            prev[head[v] as usize] = c as u32;
        }
        head[v] = c as u32;
    }
    // Both halves of a vertex's score, computed once for every cache position and for the
    // common counts of triangles left.
    let cache_score: [f32; CACHE] = std::array::from_fn(|pos| {
        if pos < 3 {
            LAST_TRIANGLE
        } else {
            (1.0 - (pos - 3) as f32 / (CACHE - 3) as f32).powf(DECAY)
        }
    });
    let valence = |left: u32| VALENCE_SCALE * (left as f32).powf(VALENCE_POWER);
    let valence_score: [f32; 64] = std::array::from_fn(|left| valence(left as u32));
    let score_of = |pos: Option<usize>, left: u32| -> f32 {
        if left == 0 {
            return -1.0;
        }
        let cache = pos.map_or(0.0, |p| cache_score[p]);
        cache
            + valence_score
                .get(left as usize)
                .copied()
                .unwrap_or_else(|| valence(left))
    };
    let mut vertex_score: Vec<f32> = (0..vertex_count)
        .map(|v| score_of(None, remaining[v]))
        .collect();
    let mut added = vec![false; triangles];
    let triangle_score = |t: usize, vs: &[f32]| -> f32 {
        indices[3 * t..3 * t + 3]
            .iter()
            .map(|&i| vs[i as usize])
            .sum()
    };
    let mut out = Vec::with_capacity(triangles);
    let mut cache: Vec<u32> = Vec::with_capacity(CACHE + 3);
    let mut next_unadded = 0;
    for _ in 0..triangles {
        // The best triangle touching the cache; else the first not yet emitted.
        let mut best: Option<(usize, f32)> = None;
        for &v in &cache {
            let mut c = head[v as usize];
            for _ in 0..SCAN {
                if c == NONE {
                    break;
                }
                let t = c as usize / 3;
                let s = triangle_score(t, &vertex_score);
                if best.is_none_or(|(_, b)| s > b) {
                    best = Some((t, s));
                }
                c = next[c as usize];
            }
        }
        let t = match best {
            Some((t, _)) => t,
            None => {
                while added[next_unadded] {
                    next_unadded += 1;
                }
                next_unadded
            }
        };
        added[t] = true;
        let tri = [indices[3 * t], indices[3 * t + 1], indices[3 * t + 2]];
        out.push(t as u32);
        for c in 3 * t..3 * t + 3 {
            let v = indices[c] as usize;
            remaining[v] -= 1;
            let (p, n) = (prev[c], next[c]);
            if p == NONE {
                head[v] = n;
            } else {
                next[p as usize] = n;
            }
            if n != NONE {
                prev[n as usize] = p;
            }
        }
        // The triangle's vertices move to the front of the cache; the oldest fall out.
        cache.retain(|v| !tri.contains(v));
        for &v in tri.iter().rev() {
            cache.insert(0, v);
        }
        for &v in cache.iter().skip(CACHE) {
            vertex_score[v as usize] = score_of(None, remaining[v as usize]);
        }
        cache.truncate(CACHE);
        for (pos, &v) in cache.iter().enumerate() {
            vertex_score[v as usize] = score_of(Some(pos), remaining[v as usize]);
        }
    }
    out
}

/// Vertex `old` becomes `map[old]`: first-use order, then the vertices no triangle uses.
fn first_use_order(indices: &[u32], vertex_count: usize) -> Vec<u32> {
    let mut map = vec![u32::MAX; vertex_count];
    let mut next = 0u32;
    for &i in indices {
        if map[i as usize] == u32::MAX {
            map[i as usize] = next;
            next += 1;
        }
    }
    // Vertices no triangle uses keep their order, after the others.
    for slot in &mut map {
        if *slot == u32::MAX {
            *slot = next;
            next += 1;
        }
    }
    map
}

/// The map's hasher for keys that are hashes already: the key itself, its high bits (which the
/// map's buckets and tags take) mixed from the low ones.
#[derive(Default)]
struct Spread(u64);

impl std::hash::Hasher for Spread {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

/// Vertex `old` becomes `map[old]`: the vertices of each influence set together, sets in the
/// order the triangles first use them (unused vertices last), each set's vertices in the order
/// the triangles first use them, those the layout blends (`direct` false) before those it skins
/// influence by influence, so that the blended ones make one run. A set is a vertex's
/// influences, bone and weight bit for bit. Linear: the vertices are visited in first-use
/// order, each set numbered as it first appears (found by a hash of its influences, checked
/// against its first vertex's), then counted and placed.
fn skin_order(
    starts: &[u32],
    influences: &[Influence],
    indices: &[u32],
    direct: &[bool],
) -> Vec<u32> {
    use std::collections::HashMap;
    use std::hash::BuildHasherDefault;

    let vc = starts.len().saturating_sub(1);
    let influences_of = |v: usize| -> &[Influence] {
        let (s, e) = (starts[v] as usize, starts[v + 1] as usize);
        &influences[s..e]
    };
    let same = |a: usize, b: usize| {
        influences_of(a).len() == influences_of(b).len()
            && influences_of(a)
                .iter()
                .zip(influences_of(b))
                .all(|(x, y)| x.bone == y.bone && x.weight.to_bits() == y.weight.to_bits())
    };
    // A multiplicative hash of the set (FxHash's step): sets are few and not chosen to collide,
    // a collision is only probed onward, and SipHash, twice (here and in the map), was a third
    // of the skin order's time.
    let hash_of = |v: usize| {
        influences_of(v).iter().fold(0u64, |h, i| {
            let x = u64::from(i.bone) << 32 | u64::from(i.weight.to_bits());
            (h.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95)
        })
    };
    let rank = first_use_order(indices, vc);
    let mut by_rank = vec![0u32; vc];
    for (v, &r) in rank.iter().enumerate() {
        by_rank[r as usize] = v as u32;
    }
    // Sets by hash; a hash two different sets share is probed onward.
    let mut found: HashMap<u64, u32, BuildHasherDefault<Spread>> =
        HashMap::with_capacity_and_hasher(vc.min(1 << 16), BuildHasherDefault::default());
    let mut first_vertex: Vec<u32> = Vec::new();
    let mut set_of = vec![0u32; vc];
    // The set of the vertex before in first-use order: neighbours mostly share one (a one-bone
    // mesh has a single set), found so without hashing.
    let mut last: Option<u32> = None;
    for &v in &by_rank {
        let v = v as usize;
        if let Some(s) = last.filter(|&s| same(first_vertex[s as usize] as usize, v)) {
            set_of[v] = s;
            continue;
        }
        let mut h = hash_of(v);
        let set = loop {
            match found.get(&h) {
                Some(&s) if same(first_vertex[s as usize] as usize, v) => break s,
                Some(_) => h = h.wrapping_add(0x9E37_79B9_7F4A_7C15),
                None => {
                    let s = first_vertex.len() as u32;
                    found.insert(h, s);
                    first_vertex.push(v as u32);
                    break s;
                }
            }
        };
        set_of[v] = set;
        last = Some(set);
    }
    // Per set: where its blended vertices go next, then where its direct ones do.
    let sets = first_vertex.len();
    let mut blended = vec![0u32; sets];
    let mut count = vec![0u32; sets];
    // Counted a run of one set at a time in registers: a count kept in memory is a chain of
    // stores and loads from one vertex to the next (a one-bone mesh is a single run).
    let mut v = 0;
    while v < vc {
        let s = set_of[v];
        let end = (v..vc).find(|&u| set_of[u] != s).unwrap_or(vc);
        count[s as usize] += (end - v) as u32;
        blended[s as usize] += direct[v..end].iter().map(|&d| u32::from(!d)).sum::<u32>();
        v = end;
    }
    let mut next_blended = vec![0u32; sets];
    let mut next_direct = vec![0u32; sets];
    let mut at = 0u32;
    for s in 0..sets {
        next_blended[s] = at;
        next_direct[s] = at + blended[s];
        at += count[s];
    }
    let mut map = vec![0u32; vc];
    // The number the current set's next vertex takes, in a register while the set (and whether
    // it is skinned directly) stays the same, as it does along runs.
    let mut at: Option<((usize, bool), u32)> = None;
    for &v in &by_rank {
        let key = (set_of[v as usize] as usize, direct[v as usize]);
        let next = match at {
            Some((k, n)) if k == key => n,
            _ => {
                if let Some(((s, d), n)) = at {
                    *(if d {
                        &mut next_direct[s]
                    } else {
                        &mut next_blended[s]
                    }) = n;
                }
                if key.1 {
                    next_direct[key.0]
                } else {
                    next_blended[key.0]
                }
            }
        };
        map[v as usize] = next;
        at = Some((key, next + 1));
    }
    map
}

fn renumber(mesh: &mut MeshParts, map: &[u32]) -> u32 {
    let vc = map.len();
    let mut inverse = vec![0usize; vc];
    for (old, &new) in map.iter().enumerate() {
        inverse[new as usize] = old;
    }
    let mut starts = Vec::with_capacity(vc + 1);
    let mut influences: Vec<Influence> = Vec::with_capacity(mesh.influences.len());
    starts.push(0u32);
    for &old in &inverse {
        let (s, e) = (
            mesh.influence_start[old] as usize,
            mesh.influence_start[old + 1] as usize,
        );
        influences.extend_from_slice(&mesh.influences[s..e]);
        starts.push(influences.len() as u32);
    }
    mesh.influence_start = starts;
    mesh.influences = influences;
    // Every per-vertex list follows its vertices.
    fn reorder<T: Copy>(list: &mut Option<Vec<T>>, inverse: &[usize]) {
        if let Some(l) = list {
            *l = inverse.iter().map(|&old| l[old]).collect();
        }
    }
    reorder(&mut mesh.texcoords, &inverse);
    reorder(&mut mesh.colors, &inverse);
    reorder(&mut mesh.bind_positions, &inverse);
    reorder(&mut mesh.bind_normals, &inverse);
    if let Some(l) = &mut mesh.msh {
        l.vertices = inverse.iter().map(|&old| l.vertices[old]).collect();
        for (v, _) in &mut l.bad_normals {
            *v = map[*v as usize];
        }
    }
    for i in &mut mesh.indices {
        *i = map[*i as usize];
    }
    map.iter()
        .enumerate()
        .filter(|&(old, &new)| old != new as usize)
        .count() as u32
}

impl Model {
    /// A copy with the optimisations of `flags` (`OPTIMIZE_*`) applied, and what they changed.
    /// Poses, bind mesh and skinning are unchanged, up to the order of vertices and triangles.
    pub fn optimized(&self, flags: u32) -> Result<(Model, OptimizeReport)> {
        // An order of vertices or triangles leaves the skeleton as it is: the new model shares
        // it, and only its meshes are copied (the poses of a long animation are most of a
        // model), not checked again (they hold what the model's held, in another order).
        let bones_stay = flags & (OPTIMIZE_UNUSED_BONES | OPTIMIZE_BONE_ORDER) == 0;
        // A skin order alone is found from the model's own meshes first: where every mesh has
        // it already (one-bone models often do), nothing is copied to be reordered.
        let alone = OPTIMIZE_SKIN_ORDER | OPTIMIZE_TRIANGLE_ORDER | OPTIMIZE_VERTEX_ORDER;
        let mut skin_maps: Vec<Vec<u32>> = Vec::new();
        if bones_stay && flags & alone == OPTIMIZE_SKIN_ORDER {
            skin_maps = (self.meshes().iter())
                .map(|m| {
                    let direct = m.skinned_directly();
                    skin_order(
                        m.influence_start(),
                        m.all_influences(),
                        m.indices(),
                        &direct,
                    )
                })
                .collect();
            let identity = |map: &Vec<u32>| map.iter().enumerate().all(|(o, &n)| o == n as usize);
            if skin_maps.iter().all(identity) {
                let acmr = acmr_of(self.meshes().iter().map(|m| m.indices()));
                let report = OptimizeReport {
                    bones_before: self.bones().len() as u32,
                    bones_after: self.bones().len() as u32,
                    acmr_before: acmr,
                    acmr_after: acmr,
                    ..OptimizeReport::default()
                };
                return Ok((self.with_meshes_unmoved(), report));
            }
        }
        let mut parts: ModelParts = if bones_stay {
            ModelParts {
                meshes: self.mesh_parts(),
                ..ModelParts::new(self.format())
            }
        } else {
            self.to_parts()
        };
        let mut report = OptimizeReport {
            bones_before: self.bones().len() as u32,
            acmr_before: acmr(&parts.meshes),
            ..OptimizeReport::default()
        };
        // Without an influence (a skeleton alone, or meshes without vertices) nothing tells
        // used bones from unused ones: they all stay, as the frames need bones to pose.
        let influenced = parts.meshes.iter().any(|m| !m.influences.is_empty());
        if flags & OPTIMIZE_UNUSED_BONES != 0 && self.unbound().is_none() && influenced {
            drop_unused_bones(&mut parts);
        }
        // Which vertices the loaded layout skins influence by influence: a set's vertices
        // skinned so stay apart from its palette vertices. In the model's numbering, followed
        // through the renumberings below.
        let mut direct: Vec<Vec<bool>> = if flags & OPTIMIZE_SKIN_ORDER != 0 && skin_maps.is_empty()
        {
            self.meshes().iter().map(|m| m.skinned_directly()).collect()
        } else {
            Vec::new()
        };
        for (m, mesh) in parts.meshes.iter_mut().enumerate() {
            let vc = mesh.influence_start.len().saturating_sub(1);
            // Where each of the model's vertices is now, over every renumbering.
            let mut now: Vec<u32> = (0..vc as u32).collect();
            if flags & OPTIMIZE_TRIANGLE_ORDER != 0 {
                let order = forsyth_order(&mesh.indices, vc);
                let ordered: Vec<u32> = order
                    .iter()
                    .flat_map(|&t| {
                        let t = t as usize;
                        [
                            mesh.indices[3 * t],
                            mesh.indices[3 * t + 1],
                            mesh.indices[3 * t + 2],
                        ]
                    })
                    .collect();
                report.triangles_moved += ordered
                    .chunks_exact(3)
                    .zip(mesh.indices.chunks_exact(3))
                    .filter(|(a, b)| a != b)
                    .count() as u32;
                mesh.indices = ordered;
                // Group ids follow their triangles.
                if let Some(g) = &mut mesh.group_ids {
                    *g = order.iter().map(|&t| g[t as usize]).collect();
                }
                if let Some(l) = &mut mesh.msh {
                    l.faces = order.iter().map(|&t| l.faces[t as usize]).collect();
                }
            }
            if flags & OPTIMIZE_VERTEX_ORDER != 0 {
                let map = first_use_order(&mesh.indices, vc);
                renumber(mesh, &map);
                now.iter_mut().for_each(|v| *v = map[*v as usize]);
            }
            if flags & OPTIMIZE_SKIN_ORDER != 0 {
                // Found above already where the skin order is the only one.
                let map = match skin_maps.get_mut(m) {
                    Some(map) => std::mem::take(map),
                    None => {
                        let mut is_direct = vec![false; vc];
                        if let Some(marks) = direct.get_mut(m) {
                            for (old, &d) in marks.iter().enumerate() {
                                let new = now.get(old).and_then(|&n| is_direct.get_mut(n as usize));
                                if let Some(x) = new {
                                    *x = d;
                                }
                            }
                            marks.clear();
                        }
                        skin_order(
                            &mesh.influence_start,
                            &mesh.influences,
                            &mesh.indices,
                            &is_direct,
                        )
                    }
                };
                renumber(mesh, &map);
                now.iter_mut().for_each(|v| *v = map[*v as usize]);
            }
            report.vertices_moved += now
                .iter()
                .enumerate()
                .filter(|&(old, &new)| old != new as usize)
                .count() as u32;
        }
        // Likewise without an influence there is no first use to order by: the order stays.
        if flags & OPTIMIZE_BONE_ORDER != 0 && self.unbound().is_none() && influenced {
            let order = bone_order(&parts);
            report.bones_moved = order
                .iter()
                .enumerate()
                .filter(|&(new, &old)| new != old as usize)
                .count() as u32;
            if report.bones_moved > 0 {
                reorder_bones(&mut parts, &order);
            }
        }
        report.bones_after = if bones_stay {
            report.bones_before
        } else {
            parts.bones.len() as u32
        };
        // Renumbering vertices is one to one, which leaves every cache hit and miss as it was:
        // only a new triangle order changes the misses.
        report.acmr_after = if flags & OPTIMIZE_TRIANGLE_ORDER != 0 {
            acmr(&parts.meshes)
        } else {
            report.acmr_before
        };
        let model = if bones_stay {
            self.with_reordered_meshes(parts.meshes)
        } else {
            Model::from_parts(parts)?
        };
        Ok((model, report))
    }
}

/// Removes the bones no influence uses, keeping attachments and every ancestor of a kept bone;
/// parents, influences, poses and references are renumbered.
fn drop_unused_bones(parts: &mut ModelParts) {
    let nb = parts.bones.len();
    let mut keep = vec![false; nb];
    for m in &parts.meshes {
        for i in &m.influences {
            keep[i.bone as usize] = true;
        }
    }
    for (b, bone) in parts.bones.iter().enumerate() {
        keep[b] |= bone.flags & BONE_ATTACHMENT != 0;
    }
    // Children come after parents, so one backward pass keeps every ancestor.
    for b in (0..nb).rev() {
        if keep[b] && parts.bones[b].parent >= 0 {
            keep[parts.bones[b].parent as usize] = true;
        }
    }
    let mut map = vec![0u32; nb];
    let mut next = 0u32;
    for b in 0..nb {
        map[b] = next;
        next += u32::from(keep[b]);
    }
    let old_bones = std::mem::take(&mut parts.bones);
    parts.bones = old_bones
        .into_iter()
        .enumerate()
        .filter(|(b, _)| keep[*b])
        .map(|(_, mut bone)| {
            if bone.parent >= 0 {
                bone.parent = map[bone.parent as usize] as i32;
            }
            bone
        })
        .collect();
    parts.poses.retain_bones(nb, &keep);
    renumber_references(parts, &keep, &map);
}

/// Points what refers to bones (keys, influences, references, events) at their new numbers,
/// `map[old]`. What refers to a bone `keep` leaves out goes with it: its keys and references are
/// dropped, and its events are carried by no bone (-1), as where a skeleton has no such bone.
fn renumber_references(parts: &mut ModelParts, keep: &[bool], map: &[u32]) {
    let kept = |b: u32| keep.get(b as usize).copied().unwrap_or(false);
    for set in &mut parts.keyframes {
        set.keys.retain(|k| kept(k.bone));
        for k in &mut set.keys {
            k.bone = map[k.bone as usize];
        }
    }
    for m in &mut parts.meshes {
        for i in &mut m.influences {
            i.bone = map[i.bone as usize];
        }
        if let Some(r) = &mut m.references {
            r.retain(|&b| kept(b));
            for b in r.iter_mut() {
                *b = map[*b as usize];
            }
            // A file lists its references in bone order.
            r.sort_unstable();
        }
    }
    for e in &mut parts.events {
        if let Ok(b) = u32::try_from(e.bone) {
            e.bone = if kept(b) { map[b as usize] as i32 } else { -1 };
        }
    }
}

/// The bones' new order (`order[new] = old`): a pre-order of the tree, each bone's children
/// (and the roots) taken by the first use anywhere in their subtree, then by number.
fn bone_order(parts: &ModelParts) -> Vec<u32> {
    let nb = parts.bones.len();
    let mut first = vec![u64::MAX; nb];
    let mut at = 0u64;
    for m in &parts.meshes {
        for i in &m.influences {
            if let Some(f) = first.get_mut(i.bone as usize) {
                *f = (*f).min(at);
            }
            at += 1;
        }
    }
    // Children come after parents, so one backward pass gives each bone its subtree's first use.
    for b in (0..nb).rev() {
        if let Ok(p) = usize::try_from(parts.bones[b].parent) {
            first[p] = first[p].min(first[b]);
        }
    }
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); nb];
    let mut roots = Vec::new();
    for (b, bone) in parts.bones.iter().enumerate() {
        match usize::try_from(bone.parent) {
            Ok(p) => children[p].push(b as u32),
            Err(_) => roots.push(b as u32),
        }
    }
    let key = |&b: &u32| (first[b as usize], b);
    roots.sort_unstable_by_key(key);
    for c in &mut children {
        c.sort_unstable_by_key(key);
    }
    // Depth-first without recursion (a chain may be 65,535 bones deep): the stack holds the
    // siblings still to visit, the next one last.
    let mut order = Vec::with_capacity(nb);
    let mut stack: Vec<u32> = roots.into_iter().rev().collect();
    while let Some(b) = stack.pop() {
        order.push(b);
        stack.extend(children[b as usize].iter().rev());
    }
    order
}

/// Renumbers the bones as `order` (`order[new] = old`, parents before children): parents,
/// poses, keys, influences, references and events follow.
fn reorder_bones(parts: &mut ModelParts, order: &[u32]) {
    let nb = order.len();
    let mut map = vec![0u32; nb];
    for (new, &old) in order.iter().enumerate() {
        map[old as usize] = new as u32;
    }
    let old_bones = std::mem::take(&mut parts.bones);
    parts.bones = order
        .iter()
        .map(|&old| {
            let mut bone = old_bones[old as usize].clone();
            if bone.parent >= 0 {
                bone.parent = map[bone.parent as usize] as i32;
            }
            bone
        })
        .collect();
    parts.poses.permute_bones(order);
    renumber_references(parts, &vec![true; order.len()], &map);
}

/// What [`Model::with_max_influences`] dropped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InfluenceReport {
    /// Vertices that had more influences (on distinct bones) than the cap.
    pub vertices: u32,
    /// The most influences one vertex lost.
    pub most_dropped: u32,
    /// The largest share of a vertex's weight that went with its dropped influences (0 to 1).
    pub most_weight: f32,
}

impl InfluenceReport {
    /// `dropped influences: 120 vertices, at most 0.18 of a vertex's weight`.
    pub fn describe(&self) -> String {
        let vertices = if self.vertices == 1 {
            "vertex"
        } else {
            "vertices"
        };
        format!(
            "dropped influences: {} {vertices}, at most {} of a vertex's weight",
            self.vertices,
            short(self.most_weight)
        )
    }
}

/// A share as the fewest decimals that tell it from its neighbours at 1e-4, at least two.
fn short(x: f32) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0');
    if s.len() < 4 {
        format!("{x:.2}")
    } else {
        s.to_owned()
    }
}

impl Model {
    /// A copy in which each vertex keeps at most `n` influences (0: all): several on one bone
    /// become one first (their weights, origins and normals added, which skins alike), then the
    /// strongest `n` stay (ties in the file's order) and are scaled to the vertex's whole weight
    /// (1 where the weights summed to 1 within 1e-5; exactly 1 for a single influence), so that
    /// each kept bone still carries the vertex to the same bind-space point. Vertices
    /// within the cap are untouched. The report says how many vertices lost influences and the
    /// largest share of weight one lost.
    pub fn with_max_influences(&self, n: usize) -> Result<(Model, InfluenceReport)> {
        let mut report = InfluenceReport::default();
        if n == 0
            || self
                .meshes()
                .iter()
                .all(|m| (0..m.vertex_count()).all(|v| m.influences(v).len() <= n))
        {
            return Ok((Model::from_parts(self.to_parts())?, report));
        }
        let mut parts = self.to_parts();
        for mesh in &mut parts.meshes {
            let vc = mesh.influence_start.len().saturating_sub(1);
            let mut starts = Vec::with_capacity(vc + 1);
            let mut out: Vec<Influence> = Vec::with_capacity(mesh.influences.len());
            starts.push(0u32);
            for v in 0..vc {
                let own = &mesh.influences
                    [mesh.influence_start[v] as usize..mesh.influence_start[v + 1] as usize];
                if own.len() <= n {
                    out.extend_from_slice(own);
                } else {
                    cap_vertex(own, n, &mut out, &mut report);
                }
                starts.push(out.len() as u32);
            }
            mesh.influence_start = starts;
            mesh.influences = out;
        }
        Ok((Model::from_parts(parts)?, report))
    }
}

/// One vertex's influences within `n`: merged by bone, the strongest kept and scaled up.
fn cap_vertex(own: &[Influence], n: usize, out: &mut Vec<Influence>, report: &mut InfluenceReport) {
    // One per bone at the bone's first place: sorted by bone, merged, put back in file order.
    let mut by_bone: Vec<(usize, Influence)> = own.iter().copied().enumerate().collect();
    by_bone.sort_by_key(|&(k, i)| (i.bone, k));
    let mut merged: Vec<(usize, Influence)> = Vec::with_capacity(by_bone.len());
    for (k, i) in by_bone {
        match merged.last_mut() {
            Some((_, last)) if last.bone == i.bone => {
                last.weight += i.weight;
                for a in 0..3 {
                    last.origin[a] += i.origin[a];
                    last.normal[a] += i.normal[a];
                }
            }
            _ => merged.push((k, i)),
        }
    }
    merged.sort_by_key(|&(k, _)| k);
    let mut merged: Vec<Influence> = merged.into_iter().map(|(_, i)| i).collect();
    if merged.len() <= n {
        out.extend_from_slice(&merged);
        return;
    }
    let total: f64 = merged.iter().map(|i| f64::from(i.weight)).sum();
    // Stable: ties keep the file's order.
    merged.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    let dropped = merged.len() - n;
    merged.truncate(n);
    let kept: f64 = merged.iter().map(|i| f64::from(i.weight)).sum();
    report.vertices += 1;
    report.most_dropped = report.most_dropped.max(dropped as u32);
    if total > 0.0 && total.is_finite() {
        let lost = ((total - kept) / total) as f32;
        report.most_weight = report.most_weight.max(lost);
    }
    // Weights that summed to 1 sum to 1 again, exactly for a single influence (an MM2 vertex
    // follows one bone with weight 1); others keep their sum.
    let whole = if (total - 1.0).abs() <= 1e-5 {
        1.0
    } else {
        total
    };
    // Scaling weight, origin and normal alike keeps each bone's bind-space point and normal.
    let scale = if kept > 0.0 && kept.is_finite() {
        whole / kept
    } else {
        1.0
    };
    let single = merged.len() == 1 && merged[0].weight > 0.0;
    out.extend(merged.into_iter().map(|i| {
        let s = if single {
            whole / f64::from(i.weight)
        } else {
            scale
        };
        let by = |x: f32| (f64::from(x) * s) as f32;
        Influence {
            origin: i.origin.map(by),
            weight: if single { whole as f32 } else { by(i.weight) },
            normal: i.normal.map(by),
            bone: i.bone,
        }
    }));
}

#[cfg(test)]
mod cache_tests {
    use super::cache_misses;

    /// The FIFO as plainly written: a queue searched front to back.
    fn misses_plainly(indices: &[u32], size: usize) -> usize {
        let mut cache = std::collections::VecDeque::new();
        let mut misses = 0;
        for &i in indices {
            if !cache.contains(&i) {
                misses += 1;
                if cache.len() == size {
                    cache.pop_front();
                }
                if size > 0 {
                    cache.push_back(i);
                }
            }
        }
        misses
    }

    #[test]
    fn the_ring_counts_the_misses_a_plain_fifo_counts() {
        // A xorshift's indices over a few small ranges, so that hits and misses both come.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |range: u32| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % u64::from(range)) as u32
        };
        for range in [1, 5, 17, 40, 300] {
            let indices: Vec<u32> = (0..3000).map(|_| next(range)).collect();
            for size in [0, 1, 3, 16, 32] {
                let want = misses_plainly(&indices, size);
                assert_eq!(
                    cache_misses(&indices, size),
                    want,
                    "range {range}, size {size}"
                );
            }
        }
        // Vertex numbers far apart (as a list's own numbers would not be): the ring's search.
        let sparse: Vec<u32> = (0..3000).map(|_| next(40) * 25_000).collect();
        for size in [1, 3, 16, 32] {
            assert_eq!(cache_misses(&sparse, size), misses_plainly(&sparse, size));
        }
        // Every u32 may be an index, u32::MAX too (no number is free to mark empty entries).
        let edge = [u32::MAX, 0, u32::MAX, 7, u32::MAX - 1, 0, u32::MAX];
        for size in [1, 2, 16] {
            assert_eq!(cache_misses(&edge, size), misses_plainly(&edge, size));
        }
        assert_eq!(cache_misses(&[], 16), 0);
        assert_eq!(cache_misses(&[4, 4, 4], 16), 1);
    }
}
