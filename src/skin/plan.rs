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
//!   more than [`AGREEMENT`] of the model's size (normals: [`NORMAL_AGREEMENT`] of their length)
//!   is not put in the palette, nor one using a bone whose bind matrix has no accurate inverse.
//! - Every other vertex is skinned influence by influence.
//!
//! A kernel transforms operands: 32-byte records `(o, f, n, _)`, the last lane ignored. An
//! [`Influence`] is one (`origin, weight, normal, bone`), and a palette vertex's operand, its
//! bind point `(v, 1, n)`, is stored as a record of the same shape.
//!
//! Within a group, vertices ascend and are cut into runs of consecutive vertices. A run of at
//! least [`RUN_MIN`] one-influence vertices has its operands in the mesh already, consecutive (a
//! vertex's influence follows the one before it): a [`Run`] names where they start and the
//! layout keeps no copy. Kernels load several records at a time and transpose them in
//! registers, one vertex per lane, and store whole output elements at once. A set's runs keep
//! their bind points in the layout's [`SkinPlan::points`], read the same way.
//!
//! Vertices of shorter runs are loose, and consecutive loose vertices form a [`Stretch`]: the
//! layout keeps their operands in vertex order, each a copy naming its matrix's slot in a table
//! that a call fills first (the bones' matrices the stretches use, then every set's blend).
//! Kernels then go through a stretch in vertex order, each vertex with its own matrix (AVX2
//! stores each result as 16 bytes, the next element's store overwriting the last 4). Where a
//! run's transform differs from a stretch's only by keeping its matrix in registers (AVX2's), a
//! run's end is a branch the CPU may guess wrong: a runs' minimum of 24 was the fastest on the
//! corpus (16 to 48 within 2% of each other, 12 and below slower: okrobot1.dpm 2.96 ns a vertex
//! at 24, 3.11 at 12, 3.8 at 4).
//! (Reading a one-influence vertex's influence where it lies was measured slower, by a fifth on
//! meshes with thousands of loose vertices: scattered loads through `influence_start` where the
//! copies stream.)
//!
//! Building it is linear: a survey transforms every vertex into the bind pose once (for the
//! agreement check and the model's bounds alike, [`Survey`]; four lanes at a time, or a point and
//! its normal in eight where the CPU has AVX, the same bits either way); then a small
//! direct-mapped cache finds repeated sets (it may miss a repeat, which only costs a second copy
//! of the set) and two passes over runs of equal class, one counting, one placing, order the
//! vertices.
//!
//! Its heap per vertex: nothing for a one-influence vertex in a run, 32 bytes for a palette
//! vertex in a run or any vertex in a stretch, 4 for one skinned influence by influence; 12
//! bytes per run, 16 per stretch, 28 per group, 4 per bone a stretch uses and 4 per set with
//! runs besides. (The table is each thread's, 64 bytes a slot, kept from call to call.)

#[cfg(target_arch = "x86_64")]
use super::f4::F8;
use super::f4::{F4, F4x2, Pair};
use crate::math::Mat3x4;
use crate::model::Influence;

/// How far (relative to the model's size, in the bind pose) a palette vertex may land from where
/// its influences put it: ten times below the tolerance the benchmarks check skinning against.
pub(crate) const AGREEMENT: f32 = 1e-6;

/// How far (relative to their length) the bind-pose normals of a palette vertex's influences may
/// disagree. Exporters write a weighted normal `f_k n_k` with `f_k` rounded to six digits (a
/// byte weight such as 179/255 = 0.701961), so the normals of vertices that agree exactly differ
/// by that rounding, up to a few times 1e-6: at 1e-6, 79 of xon_okmale1.dpm's 87 two-bone
/// vertices outside the palette were such, and skinning them influence by influence cost that
/// model 8% of its time. A palette normal is the blend applied to the influences' mean, as
/// DarkPlaces skins every normal; it differs from the per-influence sum by at most this much.
pub(crate) const NORMAL_AGREEMENT: f32 = 1e-5;

/// Most distinct bones the palette's sets may use: their `pose * inverse bind` matrices are
/// computed per call into a stack buffer of this many (16 KiB). A mesh using more skins its
/// multi-influence vertices influence by influence.
pub(crate) const MAX_PALETTE_BONES: usize = 256;

/// Shortest run of consecutive vertices sharing a matrix that kernels transform several at a
/// time with it; shorter runs join stretches.
pub(crate) const RUN_MIN: usize = 24;

// The most heap laying out meshes holds at once, for loaders to charge to the memory limit
// before the model is made: the surveys of every mesh (held until each is laid out), the plans
// made so far, and what laying out the mesh at hand takes meanwhile. Bounds, for any input: a
// vertex may be a set of its own (two influences with weights no other vertex has), lists that
// grow may hold twice their items, and a mesh is laid out over every bone of the model.
/// Per vertex: its class and its survey point (position error, set hash); its set, found (in
/// the finder's list and the plan's, each up to twice over as they grow), renumbered (a key,
/// seven words of scratch, a head, a list's range, its new number and its place in the order),
/// with its run counters and span (two pairs of words) and a word in `sets_with_runs`; its
/// operand in the plan, a word in `direct` (twice) and its share of the stretches (one at most
/// every two vertices, twice) and of the runs and their groups (one every [`RUN_MIN`]
/// vertices); two bytes of the set finder's cache.
pub(crate) const LAYOUT_VERTEX: u64 = (4
    + size_of::<Influence>()
    + 4
    + 4
    + 4 * size_of::<Group>()
    + size_of::<Option<(u64, u8)>>()
    + 7 * 4
    + 4
    + size_of::<(u32, u32)>()
    + 4
    + 4
    + 2 * 8
    + 4
    + size_of::<Influence>()
    + 2 * 4
    + size_of::<Stretch>()
    + (size_of::<Run>() + 2 * size_of::<Group>()).div_ceil(RUN_MIN)
    + 2) as u64;
/// Per influence: its member in the set finder (twice, as the list grows), and its copy
/// renumbered when a mesh uses few of many bones.
pub(crate) const LAYOUT_INFLUENCE: u64 = (2 * size_of::<Member>() + size_of::<Influence>()) as u64;
/// Per bone, for the one mesh being laid out over them: its number among the mesh's bones; the
/// survey's matrix columns (and side by side, eight lanes) and whether its bind pose inverts,
/// with its bind pose and inverse picked for a mesh of few bones; the plan's slots, palette and
/// stretch bone lists (twice), run counters, span and group (twice).
pub(crate) const LAYOUT_BONE: u64 = (4
    + 3 * size_of::<Columns>()
    + 1
    + 2 * size_of::<Mat3x4>()
    + 4
    + 2 * 4
    + 8
    + 4
    + 2 * 4
    + 8
    + 2 * size_of::<Group>()) as u64;
/// Per mesh: its survey and the set finder's smallest cache, the lists of sets of one member
/// count, and a run and its group beyond the vertices' share.
pub(crate) const LAYOUT_MESH: u64 = (size_of::<Survey>()
    + 64 * 4
    + (LIST_MAX + 2) * size_of::<(u32, u32)>()
    + size_of::<Run>()
    + 2 * size_of::<Group>()) as u64;

/// Vertices `[first, first + len)`, whose operands are the records `[at, at + len)`: of the
/// mesh's influences in a bone group, of [`SkinPlan::points`] in a set.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Run {
    pub first: u32,
    pub len: u32,
    pub at: u32,
}

/// The vertices one matrix skins: `runs[runs.0..runs.1]`, and for a set its vertices in
/// stretches, all between vertices `lo` and `hi`. `key` is the bone of a bone group, the first
/// member of a set (whose members end at `members_end`). `weight_one`: every run operand's
/// weight is 1 (always so in a set), so kernels need not multiply the translation by it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Group {
    pub key: u32,
    pub members_end: u32,
    pub lo: u32,
    pub hi: u32,
    pub runs: (u32, u32),
    pub weight_one: bool,
}

impl Group {
    pub fn has_runs(&self) -> bool {
        self.runs.0 != self.runs.1
    }
}

/// Consecutive loose vertices `[first, first + len)`, whose operands are `points[at..at + len]`,
/// each naming in its last field (where an influence has its bone) the slot of its matrix in the
/// per-call table: a bone's, or a set's. `weight_one`: every operand's weight is 1.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Stretch {
    pub first: u32,
    pub len: u32,
    pub at: u32,
    pub weight_one: bool,
}

/// One influence of a palette set: the bone's slot in `SkinPlan::palette_bones`, its weight.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Member {
    pub slot: u32,
    pub weight: f32,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct SkinPlan {
    pub bone_groups: Vec<Group>,
    pub sets: Vec<Group>,
    pub members: Vec<Member>,
    /// The bones the sets use, ascending.
    pub palette_bones: Vec<u32>,
    /// Runs of at least [`RUN_MIN`] vertices, each group's together.
    pub runs: Vec<Run>,
    /// The vertices of runs shorter than [`RUN_MIN`], consecutive ones together, ascending.
    pub stretches: Vec<Stretch>,
    /// The bones whose matrices the stretches use: table slot `i` is bone `stretch_bones[i]`'s
    /// matrix, and slot `stretch_bones.len() + s` set `s`'s blend.
    pub stretch_bones: Vec<u32>,
    /// Operands the layout keeps: the sets' runs' (their vertices' bind points, `(v, 1, n)`),
    /// each set's together, then the stretches' (bind points, or copies of one-influence
    /// vertices' influences), with their table slots.
    pub points: Vec<Influence>,
    /// Vertices skinned influence by influence, ascending.
    pub direct: Vec<u32>,
    /// The sets that have runs, ascending: few, where meshes mix matrices from vertex to vertex,
    /// so that a call need not look at every set for them.
    pub sets_with_runs: Vec<u32>,
    /// `sets[from..to]`, two sets or more whose members name the same slots in the same order
    /// (with other weights), each list as long as it goes; the sets after the last list are
    /// alone. A kernel can load a list's matrices once for all its sets. Sets of the same bones
    /// are common where vertices blend between a few bones (xon_zombie.dpm: 427 of its 449
    /// sets share their bones with another, in 31 lists).
    pub lists: Vec<(u32, u32)>,
    /// The sets after the last list, `sets[from..to]` of one member count each (up to
    /// [`LIST_MAX`]; longer sets together in the last range), so that a kernel blends each
    /// range with code for that count: no branch on a set's length that the CPU would guess
    /// wrong from set to set (xon_wyvern_lod2.dpm: 138 such sets, of two to eight members).
    pub alone: Vec<(u32, u32)>,
    one_bone: u32,
    palette: u32,
}

/// The survey and the plan of each mesh over the bones it uses, numbered densely: both keep
/// tables per bone, so laying out each of many small meshes over every bone of a large skeleton
/// is quadratic (3,000 one-triangle meshes on 65,535 bones took a minute). A mesh with more than
/// a quarter as many influences as there are bones is laid out over all the bones, which costs
/// no more than its influences (and spares the common case, one large mesh, a pass over them);
/// the plans are the same either way but for the bones' numbers.
pub(crate) struct MeshBones {
    /// A bone's number among the bones of the mesh at hand; `UNUSED` between meshes.
    local: Vec<u32>,
}

const UNUSED: u32 = u32::MAX;

impl MeshBones {
    pub fn new(bone_count: usize) -> MeshBones {
        MeshBones {
            local: vec![UNUSED; bone_count],
        }
    }

    /// The bones `influences` use, ascending, and the influences with those bones' positions in
    /// that list; None when there are a quarter as many influences as bones, or more.
    fn subset(&mut self, influences: &[Influence]) -> Option<(Vec<u32>, Vec<Influence>)> {
        if influences.len().saturating_mul(4) >= self.local.len() {
            return None;
        }
        let mut used = Vec::new();
        for i in influences {
            if let Some(l) = self.local.get_mut(i.bone as usize)
                && *l == UNUSED
            {
                *l = 0;
                used.push(i.bone);
            }
        }
        used.sort_unstable();
        for (k, &b) in used.iter().enumerate() {
            if let Some(l) = self.local.get_mut(b as usize) {
                *l = k as u32;
            }
        }
        let renumbered = influences
            .iter()
            .map(|i| Influence {
                bone: self.local.get(i.bone as usize).copied().unwrap_or(i.bone),
                ..*i
            })
            .collect();
        for &b in &used {
            if let Some(l) = self.local.get_mut(b as usize) {
                *l = UNUSED;
            }
        }
        Some((used, renumbered))
    }

    /// [`Survey::new`] of a checked mesh.
    pub fn survey(
        &mut self,
        starts: &[u32],
        influences: &[Influence],
        bind: &[Mat3x4],
        inverse_bind: &[Mat3x4],
    ) -> Survey {
        match self.subset(influences) {
            None => Survey::new(starts, influences, bind, inverse_bind),
            Some((used, local)) => {
                let pick = |all: &[Mat3x4]| -> Vec<Mat3x4> {
                    let at = |b: u32| all.get(b as usize).copied().unwrap_or(Mat3x4::IDENTITY);
                    used.iter().map(|&b| at(b)).collect()
                };
                Survey::new(starts, &local, &pick(bind), &pick(inverse_bind))
            }
        }
    }

    /// [`SkinPlan::build`] of a mesh from its survey by [`MeshBones::survey`].
    pub fn plan(
        &mut self,
        survey: Survey,
        starts: &[u32],
        influences: &[Influence],
        size: f32,
    ) -> SkinPlan {
        let bone_count = self.local.len();
        match self.subset(influences) {
            None => SkinPlan::build(survey, starts, influences, bone_count, size),
            Some((used, local)) => {
                let mut plan = SkinPlan::build(survey, starts, &local, used.len(), size);
                let global = |b: &mut u32| *b = used.get(*b as usize).copied().unwrap_or(*b);
                plan.palette_bones.iter_mut().for_each(global);
                plan.stretch_bones.iter_mut().for_each(global);
                for g in &mut plan.bone_groups {
                    global(&mut g.key);
                }
                plan
            }
        }
    }
}

/// What the survey decides for a vertex: a bone (one influence), a palette candidate, or direct.
const DIRECT: u32 = u32::MAX;
const CANDIDATE: u32 = u32::MAX - 1;
/// After the decision: a set, `SET_BIT | set`.
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
    /// Of the one-bone and palette vertices, those in runs of at least 24 consecutive vertices
    /// sharing a matrix, which kernels transform several at a time.
    pub in_runs: usize,
    /// Heap the layout takes, in bytes.
    pub heap_bytes: usize,
}

impl SkinPlan {
    pub fn layout(&self) -> SkinLayout {
        SkinLayout {
            one_bone: self.one_bone as usize,
            palette: self.palette as usize,
            sets: self.sets.len(),
            direct: self.direct.len(),
            in_runs: self.runs.iter().map(|r| r.len as usize).sum(),
            heap_bytes: self.heap_bytes(),
        }
    }

    /// Where to cut vertices `[0, vertex_count)` into `parts` ranges of about equal work, each
    /// cut a multiple of `grain` vertices; `parts + 1` ascending bounds from 0 to the count.
    /// Work is estimated per vertex from how it is skinned, a set's blend spread over its
    /// vertices (a set cut in two is blended twice; that is not counted).
    pub fn split(&self, starts: &[u32], parts: usize, grain: usize) -> Vec<usize> {
        // Rough costs relative to each other, from the benchmarks' figures per vertex.
        const RUN: f32 = 1.0;
        const LOOSE: f32 = 1.5;
        const DIRECT: f32 = 2.0;
        const PER_INFLUENCE: f32 = 1.5;
        const BLEND: f32 = 2.0;
        const PER_MEMBER: f32 = 1.0;
        let vc = starts.len().saturating_sub(1);
        let mut cost = vec![0.0f32; vc];
        let mut add = |v: u32, c: f32| {
            if let Some(x) = cost.get_mut(v as usize) {
                *x += c;
            }
        };
        // A set's vertices: in its runs and in stretches (counted by table slot).
        let set_slot = self.stretch_bones.len();
        let mut in_stretches = vec![0u32; self.sets.len()];
        for s in &self.stretches {
            let at = s.at as usize;
            for x in self.points.get(at..at + s.len as usize).unwrap_or_default() {
                if let Some(n) = (x.bone as usize)
                    .checked_sub(set_slot)
                    .and_then(|k| in_stretches.get_mut(k))
                {
                    *n += 1;
                }
            }
        }
        let run_vertices = |g: &Group| -> &[Run] {
            self.runs
                .get(g.runs.0 as usize..g.runs.1 as usize)
                .unwrap_or_default()
        };
        let mut blend_share = vec![0.0f32; self.sets.len()];
        for ((g, share), &loose) in self.sets.iter().zip(&mut blend_share).zip(&in_stretches) {
            let n = run_vertices(g).iter().map(|r| r.len).sum::<u32>() + loose;
            *share =
                (BLEND + PER_MEMBER * g.members_end.saturating_sub(g.key) as f32) / n.max(1) as f32;
        }
        let groups = self.bone_groups.iter().map(|g| (g, 0.0));
        for (g, blend) in groups.chain(self.sets.iter().zip(blend_share.iter().copied())) {
            for r in run_vertices(g) {
                for v in r.first..r.first + r.len {
                    add(v, RUN + blend);
                }
            }
        }
        for s in &self.stretches {
            let at = s.at as usize;
            let operands = self.points.get(at..at + s.len as usize).unwrap_or_default();
            for (v, x) in (s.first..).zip(operands) {
                let blend = (x.bone as usize)
                    .checked_sub(set_slot)
                    .and_then(|k| blend_share.get(k))
                    .copied()
                    .unwrap_or(0.0);
                add(v, LOOSE + blend);
            }
        }
        for &v in &self.direct {
            let n = influences_of_count(starts, v as usize);
            add(v, DIRECT + PER_INFLUENCE * n as f32);
        }
        let total: f32 = cost.iter().sum();
        let grain = grain.max(1);
        let mut bounds = vec![0];
        let mut sum = 0.0f32;
        let mut v = 0;
        for part in 1..parts.max(1) {
            let target = total * part as f32 / parts as f32;
            while v < vc && sum + cost.get(v).copied().unwrap_or(0.0) / 2.0 < target {
                sum += cost.get(v).copied().unwrap_or(0.0);
                v += 1;
            }
            let cut = (v + grain / 2) / grain * grain;
            bounds.push(cut.clamp(bounds.last().copied().unwrap_or(0), vc));
        }
        bounds.push(vc);
        bounds
    }

    /// How many matrices the stretches read per call: [`SkinPlan::stretch_bones`]'s, then one
    /// per set.
    pub fn table_len(&self) -> usize {
        self.stretch_bones.len() + self.sets.len()
    }

    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        (self.bone_groups.len() + self.sets.len()) * size_of::<Group>()
            + self.members.len() * size_of::<Member>()
            + self.palette_bones.len() * 4
            + self.runs.len() * size_of::<Run>()
            + self.stretches.len() * size_of::<Stretch>()
            + self.stretch_bones.len() * 4
            + self.points.len() * size_of::<Influence>()
            + self.direct.len() * 4
            + self.sets_with_runs.len() * 4
            + (self.lists.len() + self.alone.len()) * size_of::<(u32, u32)>()
    }

    /// Lays out a checked mesh from its survey; `size` is the model's size, the scale of the
    /// palette's tolerance.
    pub fn build(
        survey: Survey,
        starts: &[u32],
        influences: &[Influence],
        bone_count: usize,
        size: f32,
    ) -> SkinPlan {
        let Survey {
            mut class,
            points: mut candidates,
            errors,
            hashes,
            ..
        } = survey;
        let tolerance = AGREEMENT * size.max(f32::MIN_POSITIVE);

        // The candidates close enough to their bind point join a set; the others go direct.
        let mut finder = SetFinder::new(candidates.len());
        let mut accepted = 0usize;
        let mut candidate = 0usize;
        for (v, c) in class.iter_mut().enumerate() {
            if *c != CANDIDATE {
                continue;
            }
            let (error, hash) = (errors.get(candidate), hashes.get(candidate));
            candidate += 1;
            let infl = influences_of(starts, influences, v);
            *c = match (error, hash) {
                (Some(&e), Some(&h)) if e <= tolerance => {
                    // The accepted points move down to their rank among the accepted.
                    candidates.swap(accepted, candidate - 1);
                    accepted += 1;
                    SET_BIT | finder.find_or_add(infl, h)
                }
                _ => DIRECT,
            };
        }
        candidates.truncate(accepted);
        let SetFinder {
            mut sets,
            mut members,
            ..
        } = finder;

        // Members name bones until here; the kernels want slots of the palette's bone list.
        let mut slot_of = vec![u32::MAX; bone_count];
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
            for c in class.iter_mut().filter(|c| **c & SET_BIT != 0) {
                *c = DIRECT;
            }
            sets.clear();
            members.clear();
            palette_bones.clear();
            accepted = 0;
        }
        for m in &mut members {
            m.slot = slot_of.get(m.slot as usize).copied().unwrap_or(0);
        }
        let (lists, alone, numbers) = group_by_slots(&sets, &members);

        let mut plan = SkinPlan {
            members,
            lists,
            alone,
            palette_bones,
            palette: accepted as u32,
            ..SkinPlan::default()
        };
        plan.arrange(
            &class,
            bone_count,
            (&sets, &numbers),
            starts,
            influences,
            &candidates,
        );
        plan.sets_with_runs = (0u32..)
            .zip(&plan.sets)
            .filter_map(|(i, s)| s.has_runs().then_some(i))
            .collect();
        plan
    }

    /// Sorts the vertices into their groups and stretches: bone groups (those with runs) in
    /// bone order, then every set in its new order (`numbers`, from [`group_by_slots`]), then
    /// the stretches in vertex order. A run of consecutive vertices of one group is a run of
    /// equal classes in vertex order, so two passes over those runs do it: one counts, one
    /// places.
    fn arrange(
        &mut self,
        class: &[u32],
        bone_count: usize,
        (sets, numbers): (&[Group], &Numbers),
        starts: &[u32],
        influences: &[Influence],
        candidates: &[Influence],
    ) {
        // A set's key is its new number's (see group_by_slots).
        let key_of = |c: u32| -> Option<usize> {
            if c == DIRECT || c == CANDIDATE {
                None
            } else if c & SET_BIT != 0 {
                let set = numbers.new.get((c & !SET_BIT) as usize)?;
                Some(bone_count + *set as usize)
            } else {
                Some(c as usize)
            }
        };
        // Per group: its runs and its runs' operands in `points` (only a set keeps them);
        // counted, then where the next of each goes. The bones of loose one-influence vertices
        // get table slots, in bone order, ahead of the sets'.
        let keys = bone_count + sets.len();
        let mut at = vec![[0u32; 2]; keys];
        let mut loose = 0usize;
        let mut stretch_slot = vec![u32::MAX; bone_count];
        for (c, _, len) in runs(class) {
            let Some(k) = key_of(c) else {
                continue;
            };
            if len < RUN_MIN {
                loose += len;
                if let Some(s) = stretch_slot.get_mut(k) {
                    *s = 0;
                }
            } else if let Some(n) = at.get_mut(k) {
                n[0] += 1;
                if k >= bone_count {
                    n[1] += len as u32;
                }
            }
        }
        for (b, s) in stretch_slot.iter_mut().enumerate() {
            if *s == 0 {
                *s = self.stretch_bones.len() as u32;
                self.stretch_bones.push(b as u32);
            }
        }
        let set_slot = self.stretch_bones.len() as u32;
        let mut next = [0u32; 2];
        for n in at.iter_mut() {
            let counts = *n;
            *n = next;
            for (x, c) in next.iter_mut().zip(counts) {
                *x += c;
            }
        }
        let [run_count, run_points] = next.map(|n| n as usize);
        self.runs = vec![Run::default(); run_count];
        // The runs' points are placed group by group; the loose ones follow, appended in
        // vertex order into reserved room (not written twice).
        self.points = vec![Influence::default(); run_points];
        self.points.reserve_exact(loose);
        // Each group's first and last vertex.
        let mut span = vec![(u32::MAX, 0u32); keys];

        // The accepted candidates' points are in vertex order.
        let mut point = 0usize;
        for (c, start, len) in runs(class) {
            let Some(k) = key_of(c) else {
                if c == DIRECT {
                    self.direct.extend(start as u32..(start + len) as u32);
                }
                continue;
            };
            let (first, end) = (start as u32, (start + len) as u32);
            if let Some(s) = span.get_mut(k) {
                *s = (s.0.min(first), s.1.max(end - 1));
            }
            // A set's vertices bring their bind points; a bone group's have one influence each,
            // consecutive in the mesh.
            let from = starts.get(start).copied().unwrap_or(0) as usize;
            let operands = if k < bone_count {
                self.one_bone += len as u32;
                influences.get(from..from + len)
            } else {
                point += len;
                candidates.get(point - len..point)
            };
            let Some(operands) = operands else {
                continue;
            };
            if len >= RUN_MIN {
                let Some(next) = at.get_mut(k) else {
                    continue;
                };
                let at = if k < bone_count { from as u32 } else { next[1] };
                if let Some(run) = self.runs.get_mut(next[0] as usize) {
                    *run = Run {
                        first,
                        len: len as u32,
                        at,
                    };
                }
                next[0] += 1;
                if k >= bone_count {
                    let to = next[1] as usize;
                    if let Some(slots) = self.points.get_mut(to..to + len) {
                        slots.copy_from_slice(operands);
                    }
                    next[1] += len as u32;
                }
                continue;
            }
            // Loose: its operands join the stretch that ends here, or start one, each naming
            // its matrix's slot in the table.
            let slot = if k < bone_count {
                stretch_slot.get(k).copied().unwrap_or(0)
            } else {
                set_slot + (k - bone_count) as u32
            };
            let to = self.points.len();
            let mut one = true;
            self.points.extend(operands.iter().map(|x| {
                one &= x.weight.to_bits() == 1.0f32.to_bits();
                Influence { bone: slot, ..*x }
            }));
            match self.stretches.last_mut() {
                Some(s) if s.first + s.len == first => {
                    s.len += len as u32;
                    s.weight_one &= one;
                }
                _ => self.stretches.push(Stretch {
                    first,
                    len: len as u32,
                    at: to as u32,
                    weight_one: one,
                }),
            }
        }

        for (k, &(lo, hi)) in span.iter().enumerate() {
            // After placing, a group's cursor is where the next group's runs start.
            let [runs_from, _] = k
                .checked_sub(1)
                .and_then(|p| at.get(p))
                .copied()
                .unwrap_or_default();
            let [runs_to, _] = at.get(k).copied().unwrap_or_default();
            let runs = self
                .runs
                .get(runs_from as usize..runs_to as usize)
                .unwrap_or_default();
            if k < bone_count {
                if runs.is_empty() {
                    continue;
                }
                let run_ones = runs.iter().all(|r| {
                    let at = r.at as usize;
                    let run = influences.get(at..at + r.len as usize).unwrap_or_default();
                    run.iter().all(|i| i.weight.to_bits() == 1.0f32.to_bits())
                });
                self.bone_groups.push(Group {
                    key: k as u32,
                    lo,
                    hi,
                    runs: (runs_from, runs_to),
                    weight_one: run_ones,
                    ..Group::default()
                });
            } else {
                // Every set, in order: its table slot is its rank. A set's operands are bind
                // points, of weight 1.
                self.sets.push(Group {
                    lo,
                    hi,
                    runs: (runs_from, runs_to),
                    weight_one: true,
                    ..numbers
                        .order
                        .get(k - bone_count)
                        .and_then(|&old| sets.get(old as usize))
                        .copied()
                        .unwrap_or_default()
                });
            }
        }
    }
}

/// The slots of a set of two to [`LIST_MAX`] members, a byte each (slots are below
/// [`MAX_PALETTE_BONES`], 256), and their count: equal keys, equal slots. `None` for other
/// sets, which are never in a list.
fn list_key(members: &[Member], set: &Group) -> Option<(u64, u8)> {
    let m = members.get(set.key as usize..set.members_end as usize)?;
    (2..=LIST_MAX).contains(&m.len()).then(|| {
        let slots = m
            .iter()
            .fold(0u64, |k, m| (k << 8) | u64::from(m.slot & 0xff));
        (slots, m.len() as u8)
    })
}

// list_key gives a slot a byte.
const _: () = assert!(MAX_PALETTE_BONES <= 256);

/// Most members of a set in a list: the kernels keep that many matrices in registers.
pub(crate) const LIST_MAX: usize = 8;

/// New numbers for `sets`, for [`SkinPlan::lists`]: returns the lists and the numbers. First
/// come the sets that share their members' slots (in order) with another, those of a list
/// together, the lists by their sets' member count (so that a kernel's choice of code by that
/// count repeats), then as they first appear; then every other set, by member count (the
/// ranges of [`SkinPlan::alone`], the second result); each list's sets and the others of a
/// count in their first order. The vertices' classes keep the old numbers: arrange() looks
/// the new ones up once per run rather than every class being rewritten. Sets of the same
/// slots are found through an open-addressed table of their [`list_key`]s, and one scratch
/// buffer serves every step (a first version, which sorted the sets and built new vectors,
/// added 5% to loading xon_wyvern_lod2.dpm).
fn group_by_slots(sets: &[Group], members: &[Member]) -> (Ranges, Ranges, Numbers) {
    let n = sets.len();
    if n < 2 {
        let same: Vec<u32> = (0..n as u32).collect();
        return (
            Vec::new(),
            if n == 1 { vec![(0, 1)] } else { Vec::new() },
            Numbers {
                new: same.clone(),
                order: same,
            },
        );
    }
    let keys: Vec<Option<(u64, u8)>> = sets.iter().map(|s| list_key(members, s)).collect();
    let size = (2 * n).next_power_of_two();
    let mut scratch = vec![0u32; size + 3 * n];
    let (seen, rest) = scratch.split_at_mut(size);
    let (first, rest) = rest.split_at_mut(n);
    let (count, next) = rest.split_at_mut(n);
    seen.fill(u32::MAX);
    // Each set's first set of the same slots (`first`), and how many share them (`count`, kept
    // at that first set; 0 at the others).
    for (i, key) in (0u32..).zip(&keys) {
        let mut f = i;
        if let Some((slots, len)) = *key {
            let hash = (slots ^ u64::from(len)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut at = (hash >> 32) as usize & (size - 1);
            while let Some(e) = seen.get_mut(at) {
                if *e == u32::MAX {
                    *e = i;
                    break;
                }
                if keys.get(*e as usize) == Some(key) {
                    f = *e;
                    break;
                }
                at = (at + 1) & (size - 1);
            }
        }
        if let Some(e) = first.get_mut(i as usize) {
            *e = f;
        }
        if let Some(c) = count.get_mut(f as usize) {
            *c += 1;
        }
    }
    // The lists in order, and where each starts: `next`, kept at its first set, which a set
    // alone has too.
    let length = |i: u32| {
        sets.get(i as usize)
            .map_or(0, |s| s.members_end.saturating_sub(s.key))
    };
    let mut heads: Vec<u32> = (0u32..)
        .zip(count.iter())
        .filter(|&(_, &c)| c > 1)
        .map(|(i, _)| i)
        .collect();
    heads.sort_unstable_by_key(|&i| (length(i), i));
    let mut lists = Vec::with_capacity(heads.len());
    let mut at = 0u32;
    for &h in &heads {
        let c = count.get(h as usize).copied().unwrap_or(0);
        if let Some(e) = next.get_mut(h as usize) {
            *e = at;
        }
        lists.push((at, at + c));
        at += c;
    }
    // The sets alone, by member count: a counting sort, longer sets than LIST_MAX together.
    let bucket = |i: usize| length(i as u32).min(LIST_MAX as u32 + 1) as usize;
    let mut starts = [0u32; LIST_MAX + 3];
    for (i, _) in count.iter().enumerate().filter(|&(_, &c)| c == 1) {
        starts[bucket(i) + 1] += 1;
    }
    let mut alone = Vec::new();
    for b in 0..=LIST_MAX + 1 {
        let c = starts[b + 1];
        starts[b] = at;
        if c > 0 {
            alone.push((at, at + c));
        }
        at += c;
    }
    for (i, (e, &c)) in next.iter_mut().zip(count.iter()).enumerate() {
        if c == 1 {
            let start = &mut starts[bucket(i)];
            *e = *start;
            *start += 1;
        }
    }
    // Each set's new number, its first set's next (in `first`, which it replaces).
    for f in first.iter_mut() {
        if let Some(e) = next.get_mut(*f as usize) {
            *f = *e;
            *e += 1;
        }
    }
    let new = first.to_vec();
    let mut order = vec![0u32; n];
    for (i, &k) in (0u32..).zip(&new) {
        if let Some(o) = order.get_mut(k as usize) {
            *o = i;
        }
    }
    (lists, alone, Numbers { new, order })
}

/// Ranges of set numbers, `(from, to)`.
type Ranges = Vec<(u32, u32)>;

/// Sets renumbered: `new[set]` is a set's new number, `order[number]` the set of a number.
struct Numbers {
    new: Vec<u32>,
    order: Vec<u32>,
}

/// How many influences vertex `v` has.
fn influences_of_count(starts: &[u32], v: usize) -> usize {
    match (starts.get(v), starts.get(v + 1)) {
        (Some(&s), Some(&e)) => e.saturating_sub(s) as usize,
        _ => 0,
    }
}

/// The influences of vertex `v`.
#[inline(always)]
fn influences_of<'a>(starts: &[u32], influences: &'a [Influence], v: usize) -> &'a [Influence] {
    match (starts.get(v), starts.get(v + 1)) {
        (Some(&s), Some(&e)) => influences.get(s as usize..e as usize).unwrap_or_default(),
        _ => &[],
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

/// The palette's sets as they are found, each set's (bone, weight) pairs as its members.
struct SetFinder {
    sets: Vec<Group>,
    members: Vec<Member>,
    /// A small direct-mapped cache from a set's hash to the set last filed under it.
    cache: Vec<u32>,
}

impl SetFinder {
    fn new(candidates: usize) -> SetFinder {
        let cache_len = (candidates / 4).clamp(64, 1 << 14).next_power_of_two();
        SetFinder {
            sets: Vec::new(),
            members: Vec::new(),
            cache: vec![u32::MAX; cache_len],
        }
    }

    /// The set of `infl`'s pairs, whose hash is `h`: one already seen when the cache remembers it, else a new one. Members still name bones here.
    fn find_or_add(&mut self, infl: &[Influence], h: u32) -> u32 {
        let entry = (h >> 18) as usize & (self.cache.len() - 1);
        if let Some(&id) = self.cache.get(entry)
            && let Some(set) = self.sets.get(id as usize)
            && let Some(m) = self.members.get(set.key as usize..set.members_end as usize)
            && m.len() == infl.len()
            && m.iter()
                .zip(infl)
                .all(|(m, i)| m.slot == i.bone && m.weight.to_bits() == i.weight.to_bits())
        {
            return id;
        }
        let id = self.sets.len() as u32;
        let start = self.members.len() as u32;
        self.members.extend(infl.iter().map(|i| Member {
            slot: i.bone,
            weight: i.weight,
        }));
        self.sets.push(Group {
            key: start,
            members_end: self.members.len() as u32,
            ..Group::default()
        });
        if let Some(e) = self.cache.get_mut(entry) {
            *e = id;
        }
        id
    }
}

/// Most influences a palette vertex may have (more are skinned one by one; real files have up to
/// 11): the check keeps each influence's bind-pose point on the stack.
const MAX_PALETTE_INFLUENCES: usize = 16;

/// Most a bone's bind matrix may stretch any direction more than another (estimated as the
/// largest element of its 3x3 part times the largest of its inverse's) for the palette to use it:
/// past that, `pose * inverse bind` magnifies a pose's rounding, or overflows where the bind
/// pose nearly collapses a bone, while skinning influence by influence stays exact.
const MAX_BIND_CONDITION: f32 = 1e4;

/// Largest magnitude of an inverse bind element, an influence weight, and a palette point's
/// position or normal for the palette to use them. A palette vertex is
/// `(sum f (root pose inverse)) point`, four factors where skinning influence by influence
/// multiplies three: with roots and poses within `MAX_MAGNITUDE` (1e9, their product 3e18),
/// these keep it below 3 x 16 x 16 x 9e24 x 1e6, about 7e33, far from `f32::MAX`. Real files
/// stay far inside them; a vertex outside is skinned influence by influence.
const MAX_PALETTE_INVERSE: f32 = 1e6;
const MAX_PALETTE_WEIGHT: f32 = 16.0;
const MAX_PALETTE_POINT: f32 = 1e6;

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
            if !i.m.iter().all(|x| x.abs() <= MAX_PALETTE_INVERSE) {
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

/// A bind matrix's columns `(x, y, z, 0)`, the translation last.
#[derive(Clone, Copy, Default)]
struct Columns([F4; 4]);

impl Columns {
    fn of(m: &Mat3x4) -> Columns {
        let c = |j: usize| F4::new([m.m[j], m.m[4 + j], m.m[8 + j], 0.0]);
        Columns([c(0), c(1), c(2), c(3)])
    }

    /// `R (x, y, z)` of `v = (x, y, z, _)`, as [`Mat3x4::transform_vector`] rounds it.
    #[inline(always)]
    fn rotate(&self, v: F4) -> F4 {
        let [c0, c1, c2, _] = self.0;
        c0.mul(v.lane::<0x00>())
            .add(c1.mul(v.lane::<0x55>()))
            .add(c2.mul(v.lane::<0xAA>()))
    }

    /// `R o + f t` of `x = (o, f)`: where an influence puts its vertex (weighted).
    #[inline(always)]
    fn place(&self, x: F4) -> F4 {
        self.rotate(x).add(self.0[3].mul(x.lane::<0xFF>()))
    }
}

/// A mesh's vertices transformed into the bind pose once, before the model's size is known:
/// the model's bounds, and what [`SkinPlan::build`] needs to lay the mesh out.
pub(crate) struct Survey {
    /// Per vertex: its bone, [`CANDIDATE`] or [`DIRECT`].
    class: Vec<u32>,
    /// Per candidate, in vertex order: the bind point (an operand, `(v, 1, n)`), its position
    /// error, the set's hash.
    points: Vec<Influence>,
    errors: Vec<f32>,
    hashes: Vec<u32>,
    /// The bind-pose bounds of the vertices, as `p = sum_k (R_k o_k + f_k t_k)` rounds them;
    /// `None` without vertices.
    pub bounds: Option<([f32; 3], [f32; 3])>,
}

impl Survey {
    /// Surveys a checked mesh (every bone index below `bind.len()`).
    pub fn new(
        starts: &[u32],
        influences: &[Influence],
        bind: &[Mat3x4],
        inverse_bind: &[Mat3x4],
    ) -> Survey {
        Survey::with(starts, influences, bind, inverse_bind, true)
    }

    /// [`Survey::new`], eight lanes wide when `wide` and the CPU has AVX (the same bits either
    /// way).
    fn with(
        starts: &[u32],
        influences: &[Influence],
        bind: &[Mat3x4],
        inverse_bind: &[Mat3x4],
        wide: bool,
    ) -> Survey {
        let vc = starts.len().saturating_sub(1);
        let columns: Vec<Columns> = bind.iter().map(Columns::of).collect();
        let invertible = invertible(bind, inverse_bind);
        // One-influence vertices first, in a loop of their own; then the others, still marked
        // as candidates.
        let mut class = vec![CANDIDATE; vc];
        let (lo, hi) = single_influences(starts, influences, &columns, &mut class);
        let mut survey = Survey {
            points: Vec::new(),
            errors: Vec::new(),
            hashes: Vec::new(),
            bounds: None,
            class: Vec::new(),
        };
        let mut bounds = (lo, hi);
        let several = Several {
            starts,
            influences,
            columns: &columns,
            invertible: &invertible,
        };
        #[cfg(target_arch = "x86_64")]
        if wide && std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU has AVX.
            unsafe { several.avx(&mut class, &mut survey, &mut bounds) };
        } else {
            several.run::<F4x2>(&mut class, &mut survey, &mut bounds);
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = wide;
            several.run::<F4x2>(&mut class, &mut survey, &mut bounds);
        }
        let (lo, hi) = bounds;
        let [a, b, c, _] = lo.get();
        let [d, e, f, _] = hi.get();
        survey.class = class;
        survey.bounds = (vc > 0).then_some(([a, b, c], [d, e, f]));
        survey
    }
}

/// Classifies the one-influence vertices (by their bone), leaves the others' class alone, and
/// gives the bounds of their bind-pose positions. The loop makes no call (nothing may grow), so
/// the bounds stay in registers.
#[inline(never)]
fn single_influences(
    starts: &[u32],
    influences: &[Influence],
    columns: &[Columns],
    class: &mut [u32],
) -> (F4, F4) {
    let zero = Columns::default();
    let mut lo = F4::splat(f32::INFINITY);
    let mut hi = F4::splat(f32::NEG_INFINITY);
    for (c, w) in class.iter_mut().zip(starts.windows(2)) {
        if let Some(one) = influences.get(w[0] as usize).filter(|_| w[1] == w[0] + 1) {
            *c = one.bone;
            let m = columns.get(one.bone as usize).unwrap_or(&zero);
            let p = F4::zero().add(m.place(F4::influence(one).0));
            lo = lo.min(p);
            hi = hi.max(p);
        }
    }
    (lo, hi)
}

impl Survey {
    /// The bind-pose bounds of all the surveyed meshes' vertices; zeros without any.
    pub fn bounds(surveys: &[Survey]) -> ([f32; 3], [f32; 3]) {
        let mut all = surveys.iter().filter_map(|s| s.bounds);
        let Some(first) = all.next() else {
            return ([0.0; 3], [0.0; 3]);
        };
        all.fold(first, |(lo, hi), (l, h)| {
            (
                std::array::from_fn(|a| lo[a].min(l[a])),
                std::array::from_fn(|a| hi[a].max(h[a])),
            )
        })
    }
}

/// The survey of the vertices with other than one influence.
struct Several<'a> {
    starts: &'a [u32],
    influences: &'a [Influence],
    columns: &'a [Columns],
    invertible: &'a [bool],
}

impl Several<'_> {
    /// [`Several::run`] eight lanes wide.
    ///
    /// # Safety
    /// The CPU has AVX.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    unsafe fn avx(&self, class: &mut [u32], survey: &mut Survey, bounds: &mut (F4, F4)) {
        self.run::<F8>(class, survey, bounds);
    }

    /// Surveys every vertex still marked a candidate: its class, its point when it has one, and
    /// the bounds. Kept free of closures: one is compiled without the caller's CPU features.
    #[inline(always)]
    fn run<P: Pair>(&self, class: &mut [u32], survey: &mut Survey, bounds: &mut (F4, F4)) {
        // Each bone's columns side by side, for the point (with the translation) and the
        // normal (without): `[c_j | c_j]`, `[t | 0]`.
        let mut columns = Vec::with_capacity(self.columns.len());
        for c in self.columns {
            let [c0, c1, c2, t] = c.0;
            columns.push([
                P::join(c0, c0),
                P::join(c1, c1),
                P::join(c2, c2),
                P::join(t, F4::zero()),
            ]);
        }
        // Sized up front and written in place: a push may call to grow, around which the loop's
        // registers would be saved.
        let most = class.iter().filter(|&&c| c == CANDIDATE).count();
        let mut points = vec![Influence::default(); most];
        let mut errors = vec![0.0; most];
        let mut hashes = vec![0; most];
        let mut found = 0;
        // Each influence's bind-pose point and normal, reused from vertex to vertex.
        let mut scratch = [P::zero(); MAX_PALETTE_INFLUENCES];
        let (mut lo, mut hi) = *bounds;
        for (v, c) in class.iter_mut().enumerate() {
            if *c != CANDIDATE {
                continue;
            }
            let infl = influences_of(self.starts, self.influences, v);
            let (p, agreed) = self.candidate(infl, &columns, &mut scratch);
            match (
                agreed,
                points.get_mut(found),
                errors.get_mut(found),
                hashes.get_mut(found),
            ) {
                (Some((point, error, hash)), Some(p), Some(e), Some(h)) => {
                    (*p, *e, *h) = (point, error, hash);
                    found += 1;
                }
                _ => *c = DIRECT,
            }
            lo = lo.min(p);
            hi = hi.max(p);
        }
        points.truncate(found);
        errors.truncate(found);
        hashes.truncate(found);
        (survey.points, survey.errors, survey.hashes) = (points, errors, hashes);
        *bounds = (lo, hi);
    }

    /// A vertex's bind-pose position `p = sum_k (R_k o_k + f_k t_k)`, and, when its influences
    /// agree on a bind point and normal, that point (`(v, 1, n)`), the position error and the
    /// hash of its (bone, weight) pairs. They do not agree when they are too many to check, a
    /// bone has no accurate inverse, the total weight is not positive, or the normals disagree
    /// by more than [`NORMAL_AGREEMENT`] of their length (the positions' error is judged once the
    /// model's size is known).
    ///
    /// Influence k puts the vertex at `w_k = B_k (o_k, f_k)` (weighted) in the bind pose; they
    /// agree when every `w_k` is `f_k v` for the weighted mean `v`; then `f_k B_k^-1 (v, 1)` is
    /// `(o_k, f_k)` and the palette's blend gives the stored sum. Normals likewise with the 3x3
    /// parts, side by side with the points: `[w_k | R_k n_k + 0]`.
    #[inline(always)]
    fn candidate<P: Pair>(
        &self,
        infl: &[Influence],
        columns: &[[P; 4]],
        scratch: &mut [P; MAX_PALETTE_INFLUENCES],
    ) -> (F4, Option<(Influence, f32, u32)>) {
        let mut pn = P::zero();
        if infl.len() < 2 || infl.len() > MAX_PALETTE_INFLUENCES {
            for i in infl {
                pn = pn.add(place(columns, i));
            }
            return (pn.halves().0, None);
        }
        let mut scale = P::zero();
        let mut total = 0.0f32;
        let mut all_invertible = true;
        let mut h: u32 = infl.len() as u32;
        for (i, wr) in infl.iter().zip(scratch.iter_mut()) {
            all_invertible &= self
                .invertible
                .get(i.bone as usize)
                .copied()
                .unwrap_or(false)
                && i.weight.abs() <= MAX_PALETTE_WEIGHT;
            *wr = place(columns, i);
            pn = pn.add(*wr);
            scale = scale.add(P::influence(i).abs());
            total += i.weight;
            h = (h.rotate_left(5) ^ i.bone ^ i.weight.to_bits()).wrapping_mul(0x9e37_79b9);
        }
        let p = pn.halves().0;
        // Zero, negative or NaN: no point to divide by.
        if !all_invertible || total.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return (p, None);
        }
        let vn = pn.mul(P::splat(1.0 / total));
        let mut error = P::zero();
        for (i, wr) in infl.iter().zip(scratch.iter()) {
            error = error.add(wr.dist(P::splat(i.weight).mul(vn)));
        }
        let (position_error, normal_error) = error.halves();
        if normal_error.sum3() > NORMAL_AGREEMENT * scale.halves().1.sum3() {
            return (p, None);
        }
        let (v, nb) = vn.halves();
        let [x, y, z, _] = v.get();
        let [a, b, c, _] = nb.get();
        if ![x, y, z, a, b, c]
            .iter()
            .all(|q| q.abs() <= MAX_PALETTE_POINT)
        {
            return (p, None);
        }
        let point = Influence {
            origin: [x, y, z],
            weight: 1.0,
            normal: [a, b, c],
            bone: 0,
        };
        (p, Some((point, position_error.sum3(), h)))
    }
}

/// `[w | r]` of influence `i`: `((c0 x + c1 y) + c2 z) + c3 f` in each half, as
/// [`Columns::place`] rounds the point.
#[inline(always)]
fn place<P: Pair>(columns: &[[P; 4]], i: &Influence) -> P {
    let x = P::influence(i);
    let Some([c0, c1, c2, c3]) = columns.get(i.bone as usize) else {
        return P::zero();
    };
    c0.mul(x.lane::<0x00>())
        .add(c1.mul(x.lane::<0x55>()))
        .add(c2.mul(x.lane::<0xAA>()))
        .add(c3.mul(x.lane::<0xFF>()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::TubeRig;

    /// Sets of the same slots in the same order come together as lists, told apart by their
    /// member count where their slots' bits agree ([0, 5] and [0, 0, 5], and seven and eight
    /// members, whose count a first version's key lost); the lists go by member count, the
    /// sets alone after them by member count (longer than a list allows together), each in
    /// first order.
    #[test]
    fn sets_of_the_same_slots_make_lists() {
        let shapes: [&[u32]; 12] = [
            &[0, 5],
            &[0, 0, 5],
            &[0, 5],
            &[1, 2, 3],
            &[0, 0, 5],
            &[0, 5],
            &[0, 1, 2, 3, 4, 5, 6, 7, 8],
            &[0, 1, 2, 3, 4, 5, 6, 7, 8],
            &[0, 1, 2, 3, 4, 5, 6, 7],
            &[1, 2, 3, 4, 5, 6, 7],
            &[0, 1, 2, 3, 4, 5, 6, 7],
            &[1, 2, 3, 4, 5, 6, 7],
        ];
        let mut members = Vec::new();
        let mut sets = Vec::new();
        for (i, shape) in shapes.iter().enumerate() {
            let key = members.len() as u32;
            members.extend(shape.iter().map(|&slot| Member {
                slot,
                weight: 0.1 * i as f32 + 0.01 * slot as f32,
            }));
            sets.push(Group {
                key,
                members_end: members.len() as u32,
                ..Group::default()
            });
        }
        let (lists, alone, numbers) = group_by_slots(&sets, &members);
        assert_eq!(lists, vec![(0, 3), (3, 5), (5, 7), (7, 9)]);
        assert_eq!(alone, vec![(9, 10), (10, 12)]);
        assert_eq!(numbers.order, vec![0, 2, 5, 1, 4, 9, 11, 8, 10, 3, 6, 7]);
        for (set, &number) in numbers.new.iter().enumerate() {
            assert_eq!(numbers.order[number as usize], set as u32);
        }
        assert_ne!(list_key(&members, &sets[0]), list_key(&members, &sets[1]));
        assert_ne!(list_key(&members, &sets[8]), list_key(&members, &sets[9]));
        assert_eq!(list_key(&members, &sets[0]), list_key(&members, &sets[5]));
        // Nine members: more than the kernels keep in registers, never in a list.
        assert_eq!(list_key(&members, &sets[6]), None);
    }

    /// The eight-lane survey gives the four-lane one's bits: the layout does not depend on the
    /// CPU. On a tube whose influences are nudged so that some agree and some do not.
    #[test]
    fn the_survey_is_the_same_eight_lanes_wide() {
        let model = TubeRig::with_vertices(3000).build().unwrap();
        let bind = model.skeleton().bind_pose();
        let inverse = model.skeleton().inverse_bind();
        let mesh = &model.meshes()[0];
        let mut influences = mesh.all_influences().to_vec();
        for (k, i) in influences.iter_mut().enumerate() {
            match k % 7 {
                0 => i.origin[0] += 1e-3,
                3 => i.normal = [-0.0, 0.0, -0.0],
                5 => i.weight = -i.weight,
                _ => {}
            }
        }
        let starts = mesh.influence_start();
        let narrow = Survey::with(starts, &influences, bind, inverse, false);
        let wide = Survey::with(starts, &influences, bind, inverse, true);
        let bits = |p: &[Influence]| -> Vec<u32> {
            p.iter()
                .flat_map(|p| p.origin.into_iter().chain([p.weight]).chain(p.normal))
                .map(f32::to_bits)
                .collect()
        };
        assert_eq!(narrow.class, wide.class);
        assert!(narrow.class.contains(&CANDIDATE) && narrow.class.contains(&DIRECT));
        assert_eq!(bits(&narrow.points), bits(&wide.points));
        let errors = |s: &Survey| -> Vec<u32> { s.errors.iter().map(|e| e.to_bits()).collect() };
        assert_eq!(errors(&narrow), errors(&wide));
        assert_eq!(narrow.hashes, wide.hashes);
        assert_eq!(narrow.bounds, wide.bounds);
    }

    /// A mesh laid out over the bones it uses gives the plan laid out over all the skeleton's
    /// bones, but for the bones' numbers: a tube's bones spread over a skeleton of more than
    /// four times as many bones as the mesh has influences.
    #[test]
    fn a_plan_over_the_bones_used_is_the_plan_over_all() {
        let model = TubeRig::with_vertices(3000).build().unwrap();
        let mesh = &model.meshes()[0];
        let mut influences = mesh.all_influences().to_vec();
        let total = influences.len() * 4 + 1000;
        let gap = total / model.bones().len();
        let spread: Vec<u32> = (0..model.bones().len())
            .map(|k| (3 + gap * k) as u32)
            .collect();
        let mut bind = vec![Mat3x4::IDENTITY; total];
        let mut inverse = vec![Mat3x4::IDENTITY; total];
        for (&b, (m, i)) in spread.iter().zip(
            model
                .skeleton()
                .bind_pose()
                .iter()
                .zip(model.skeleton().inverse_bind()),
        ) {
            bind[b as usize] = *m;
            inverse[b as usize] = *i;
        }
        for (k, i) in influences.iter_mut().enumerate() {
            i.bone = spread[i.bone as usize];
            if k % 7 == 0 {
                i.origin[0] += 1e-3;
            }
        }
        let starts = mesh.influence_start();
        let full_survey = Survey::new(starts, &influences, &bind, &inverse);
        let mut mesh_bones = MeshBones::new(bind.len());
        let (used, _) = mesh_bones.subset(&influences).unwrap();
        assert_eq!(used, spread);
        let survey = mesh_bones.survey(starts, &influences, &bind, &inverse);
        assert_eq!(full_survey.bounds, survey.bounds);
        let full = SkinPlan::build(full_survey, starts, &influences, bind.len(), 50.0);
        let plan = mesh_bones.plan(survey, starts, &influences, 50.0);
        assert!(mesh_bones.local.iter().all(|&l| l == UNUSED));
        let layout = full.layout();
        assert!(
            layout.one_bone > 0 && layout.palette > 0 && layout.direct > 0,
            "{layout:?}"
        );
        assert!(!full.stretches.is_empty() && !full.runs.is_empty());
        assert_eq!(plan.layout(), layout);
        assert_eq!(plan.bone_groups, full.bone_groups);
        assert_eq!(plan.sets, full.sets);
        assert_eq!(plan.members, full.members);
        assert_eq!(plan.palette_bones, full.palette_bones);
        assert_eq!(plan.runs, full.runs);
        assert_eq!(plan.stretches, full.stretches);
        assert_eq!(plan.stretch_bones, full.stretch_bones);
        assert_eq!(plan.points, full.points);
        assert_eq!(plan.direct, full.direct);
        assert_eq!(plan.sets_with_runs, full.sets_with_runs);
        assert_eq!(plan.lists, full.lists);
    }
}
