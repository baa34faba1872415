//! Skinning: every stored influence of a vertex, none dropped:
//! `p = sum_k (R_k o_k + f_k t_k)`, `n = sum_k R_k n_k`, with `[R_k | t_k]` the bone's
//! model-space matrix. Indices were checked at load, so the loops only walk.
//!
//! The work is laid out at load ([`plan`]): vertices grouped by the one matrix that skins them
//! (their bone's, or the blend of their bones' for a set of influences shared by many vertices),
//! so that a call transforms each vertex once, and cut into runs of consecutive vertices that
//! kernels transform several at a time, reading a one-influence vertex's influence where the
//! mesh keeps it. Kernels ([`Kernel`]) do the arithmetic: a portable one, on x86-64 SSE2
//! (always there), AVX2 with FMA and AVX-512 (detected at run time), and in WebAssembly built
//! with SIMD128 a kernel over its 128-bit registers. SSE2 and SIMD128 are one four-lane kernel
//! (`simd4`) that computes exactly what the portable kernel computes; AVX2 rounds fewer times
//! (FMA), and AVX-512 gives AVX2's bits sixteen vertices at a time. Every kernel gives a vertex
//! the same bits whichever range it is skinned in and however it is reached.

mod f4;
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod lanes;
mod plan;
mod portable;
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod simd4;
mod whole;
#[cfg(target_arch = "x86_64")]
mod x86;

use std::marker::PhantomData;
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::math::Mat3x4;
use crate::model::{Influence, Mesh, Model};
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
pub(crate) use lanes::Lanes;
pub use plan::SkinLayout;
pub(crate) use plan::Survey;
use plan::{Group, MAX_PALETTE_BONES, Member};
pub(crate) use plan::{LAYOUT_BONE, LAYOUT_INFLUENCE, LAYOUT_MESH, LAYOUT_VERTEX};
pub(crate) use plan::{MeshBones, SkinPlan};

/// Skin flag: make normals unit length.
pub const SKIN_NORMALIZE: u32 = 1;

/// Where skinned vertices go: vertex `first + i` of a range is handed over as element `i`.
pub trait SkinTarget {
    /// How many vertices fit.
    fn capacity(&self) -> usize;
    fn wants_normals(&self) -> bool;
    /// Stores element `i`; `normal` is meaningful only when [`SkinTarget::wants_normals`].
    fn put(&mut self, i: usize, position: [f32; 3], normal: [f32; 3]);
    /// Where the elements live, so that a SIMD kernel can store them itself. Only ossa's own
    /// targets can say (a [`RawTarget`] is made by them alone); others get [`SkinTarget::put`].
    fn raw(&mut self) -> Option<RawTarget<'_>> {
        None
    }
}

/// The addresses of a target's elements: element `i`'s position is the 12 bytes at
/// `positions + i * position_stride`, its normal the 12 at `normals + i * normal_stride` (no
/// normals when null), for `i < capacity`. Made only inside ossa, from buffers it has checked.
/// Only the SIMD kernels read it (the portable kernel writes through `put`).
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )),
    allow(dead_code)
)]
pub struct RawTarget<'a> {
    positions: *mut u8,
    position_stride: usize,
    normals: *mut u8,
    normal_stride: usize,
    capacity: usize,
    _buffers: PhantomData<&'a mut [f32]>,
}

impl RawTarget<'_> {
    /// # Safety
    /// For every `i < capacity`, the 12 bytes at `positions + i * position_stride` (and, when
    /// `normals` is not null, at `normals + i * normal_stride`) are writable for the lifetime,
    /// and nothing else reads or writes them meanwhile.
    pub(crate) unsafe fn new(
        positions: *mut u8,
        position_stride: usize,
        normals: *mut u8,
        normal_stride: usize,
        capacity: usize,
    ) -> Self {
        RawTarget {
            positions,
            position_stride,
            normals,
            normal_stride,
            capacity,
            _buffers: PhantomData,
        }
    }

    /// The address of float `at` of `buf` (past its end when the target has no room; then
    /// nothing is written there).
    fn slice_at(buf: &mut [f32], at: usize) -> *mut u8 {
        buf.as_mut_ptr().wrapping_add(at).cast()
    }
}

fn strided_capacity(len: usize, stride: usize) -> usize {
    if len < 3 || stride < 3 {
        0
    } else {
        (len - 3) / stride + 1
    }
}

#[inline(always)]
fn store(buf: &mut [f32], at: usize, v: [f32; 3]) {
    if let Some(slot) = buf.get_mut(at..at + 3) {
        slot.copy_from_slice(&v);
    }
}

/// Positions (and optionally normals) in separate float buffers, each with its own stride in floats.
pub struct Strided<'a> {
    positions: &'a mut [f32],
    position_stride: usize,
    normals: Option<(&'a mut [f32], usize)>,
}

impl<'a> Strided<'a> {
    /// Packed or strided positions; `stride` counts floats and is at least 3.
    pub fn new(positions: &'a mut [f32], stride: usize) -> Result<Strided<'a>> {
        if stride < 3 {
            return Err(Error::invalid_argument(format!(
                "position stride {stride} floats is below 3"
            )));
        }
        Ok(Strided {
            positions,
            position_stride: stride,
            normals: None,
        })
    }

    pub fn with_normals(mut self, normals: &'a mut [f32], stride: usize) -> Result<Strided<'a>> {
        if stride < 3 {
            return Err(Error::invalid_argument(format!(
                "normal stride {stride} floats is below 3"
            )));
        }
        self.normals = Some((normals, stride));
        Ok(self)
    }
}

impl SkinTarget for Strided<'_> {
    fn capacity(&self) -> usize {
        let p = strided_capacity(self.positions.len(), self.position_stride);
        match &self.normals {
            Some((n, s)) => p.min(strided_capacity(n.len(), *s)),
            None => p,
        }
    }
    fn wants_normals(&self) -> bool {
        self.normals.is_some()
    }
    #[inline]
    fn put(&mut self, i: usize, position: [f32; 3], normal: [f32; 3]) {
        store(self.positions, i * self.position_stride, position);
        if let Some((n, s)) = &mut self.normals {
            store(n, i * *s, normal);
        }
    }
    fn raw(&mut self) -> Option<RawTarget<'_>> {
        let capacity = self.capacity();
        let (normals, normal_stride) = match &mut self.normals {
            Some((n, s)) => (RawTarget::slice_at(n, 0), *s * 4),
            None => (std::ptr::null_mut(), 0),
        };
        // SAFETY: capacity() counts the elements whose 12 bytes lie inside each slice, and the
        // target borrows the slices mutably for as long as the RawTarget lives.
        Some(unsafe {
            RawTarget::new(
                RawTarget::slice_at(self.positions, 0),
                self.position_stride * 4,
                normals,
                normal_stride,
                capacity,
            )
        })
    }
}

/// Positions and normals interleaved in one buffer: `stride` floats per vertex, the position at
/// float `position_at` and the normal at `normal_at` of each vertex's run.
pub struct Interleaved<'a> {
    buffer: &'a mut [f32],
    stride: usize,
    position_at: usize,
    normal_at: Option<usize>,
}

impl<'a> Interleaved<'a> {
    pub fn new(
        buffer: &'a mut [f32],
        stride: usize,
        position_at: usize,
        normal_at: Option<usize>,
    ) -> Result<Self> {
        let fits = |at: usize| at + 3 <= stride;
        let apart = normal_at.is_none_or(|n| n + 3 <= position_at || position_at + 3 <= n);
        if !fits(position_at) || !normal_at.is_none_or(fits) || !apart {
            return Err(Error::invalid_argument(format!(
                "position at {position_at} and normal at {normal_at:?} do not fit apart in {stride} floats"
            )));
        }
        Ok(Interleaved {
            buffer,
            stride,
            position_at,
            normal_at,
        })
    }
}

impl SkinTarget for Interleaved<'_> {
    fn capacity(&self) -> usize {
        let last = self
            .normal_at
            .map_or(self.position_at, |n| n.max(self.position_at))
            + 3;
        if self.buffer.len() < last {
            0
        } else {
            (self.buffer.len() - last) / self.stride + 1
        }
    }
    fn wants_normals(&self) -> bool {
        self.normal_at.is_some()
    }
    #[inline]
    fn put(&mut self, i: usize, position: [f32; 3], normal: [f32; 3]) {
        let base = i * self.stride;
        store(self.buffer, base + self.position_at, position);
        if let Some(n) = self.normal_at {
            store(self.buffer, base + n, normal);
        }
    }
    fn raw(&mut self) -> Option<RawTarget<'_>> {
        let capacity = self.capacity();
        let normals = self.normal_at.map_or(std::ptr::null_mut(), |n| {
            RawTarget::slice_at(self.buffer, n)
        });
        // SAFETY: capacity() counts the elements whose position and normal both lie inside the
        // buffer; new() checked that the two 12-byte fields do not overlap; the target borrows
        // the buffer mutably for as long as the RawTarget lives.
        Some(unsafe {
            RawTarget::new(
                RawTarget::slice_at(self.buffer, self.position_at),
                self.stride * 4,
                normals,
                self.stride * 4,
                capacity,
            )
        })
    }
}

/// Makes `n` unit length (left alone when zero): `n / sqrt((x x + y y) + z z)`, the order every
/// kernel keeps.
#[inline(always)]
pub(crate) fn normalize(n: [f32; 3]) -> [f32; 3] {
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len > 0.0 {
        [n[0] / len, n[1] / len, n[2] / len]
    } else {
        n
    }
}

/// The arithmetic that skins vertices. [`Model::skin_mesh`] uses [`Kernel::selected`];
/// [`Model::skin_mesh_with`] takes one, so that tests can hold each against the portable one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Plain Rust, on every CPU; the reference the others are tested against.
    Portable,
    /// x86-64 SSE2, four lanes: the portable kernel's operations in its order, so the same bits.
    Sse2,
    /// x86-64 AVX2 with FMA, eight lanes (a vertex's position and normal at once): fused
    /// multiply-adds round once where the others round twice, so results may differ from the
    /// portable kernel's in the last bits.
    Avx2,
    /// x86-64 AVX-512 (F and VL) with FMA: AVX2's operations in AVX2's order, so AVX2's bits,
    /// with a run's vertices sixteen at a time and a blend in one 512-bit register.
    Avx512,
    /// WebAssembly SIMD128, four lanes, in a module built with it (`target_feature = "simd128"`):
    /// the SSE2 kernel's code over WebAssembly's registers, so the portable kernel's bits.
    Simd128,
}

impl Kernel {
    /// Every kernel, slowest first (of those on one CPU).
    pub const ALL: [Kernel; 5] = [
        Kernel::Portable,
        Kernel::Sse2,
        Kernel::Simd128,
        Kernel::Avx2,
        Kernel::Avx512,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::Sse2 => "sse2",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512",
            Kernel::Simd128 => "simd128",
        }
    }

    /// Whether this CPU runs it (std caches the CPU's features, so this is cheap).
    pub fn is_available(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Sse2 => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            // Built only by a compiler that has AVX-512's intrinsics (Rust 1.89; build.rs).
            #[cfg(all(target_arch = "x86_64", ossa_avx512))]
            Kernel::Avx512 => {
                Kernel::Avx2.is_available()
                    && std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vl")
            }
            // An engine without SIMD128 refuses the whole module, so a module built with it
            // runs it wherever it runs.
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Kernel::Simd128 => true,
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The kernels this CPU runs, portable first.
    pub fn available() -> impl Iterator<Item = Kernel> {
        Kernel::ALL.into_iter().filter(|k| k.is_available())
    }

    /// The fastest kernel this CPU runs.
    pub fn best() -> Kernel {
        Kernel::available().last().unwrap_or(Kernel::Portable)
    }

    /// The kernel [`Model::skin_mesh`] uses: the one `OSSA_SKIN_KERNEL` names (`portable`,
    /// `sse2`, `avx2`, `avx512`, `simd128`) when this CPU runs it, else [`Kernel::best`]. Read
    /// once per process.
    pub fn selected() -> Kernel {
        static SELECTED: OnceLock<Kernel> = OnceLock::new();
        *SELECTED.get_or_init(|| {
            std::env::var("OSSA_SKIN_KERNEL")
                .ok()
                .and_then(|name| Kernel::from_name(&name))
                .filter(|k| k.is_available())
                .unwrap_or_else(Kernel::best)
        })
    }

    /// The kernel called `name` (as [`Kernel::name`] spells it, ignoring case).
    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name.trim()))
    }
}

/// A matrix as a kernel keeps it for the stretches ([`Backend::save`]): four columns of four
/// floats in every kernel, one cache line, aligned for its loads.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct Slot(pub [f32; 16]);

impl Default for Slot {
    fn default() -> Slot {
        Slot([0.0; 16])
    }
}

thread_local! {
    /// Each thread's table of stretch matrices, kept from call to call so that skinning does
    /// not allocate once it has room for the largest mesh the thread skins.
    static TABLE: std::cell::Cell<Vec<Slot>> = const { std::cell::Cell::new(Vec::new()) };
}

/// One call's work: vertices `[first, first + count)` of a mesh laid out by `plan`.
pub(crate) struct Job<'a> {
    pub plan: &'a SkinPlan,
    pub starts: &'a [u32],
    pub influences: &'a [Influence],
    pub bones: &'a [Mat3x4],
    pub inverse_bind: &'a [Mat3x4],
    pub first: u32,
    pub count: u32,
}

/// What a kernel provides to [`drive`], which walks the plan. `NORMALS`: the target wants
/// normals; `UNIT`: make them unit length.
pub(crate) trait Backend {
    type Out: ?Sized;
    /// A matrix ready to transform many vertices.
    type Mat: Copy;
    /// A palette bone's `pose * inverse bind`, in the form [`Backend::blend`] reads.
    type Rel: Copy;
    fn zero_rel(&self) -> Self::Rel;
    /// `a * i` (a bone's pose times its inverse bind): row `r`, column `j` is
    /// `((a_r0 i_0j + a_r1 i_1j) + a_r2 i_2j) + a_r3 e_j` with `e = (0, 0, 0, 1)`.
    fn relative(&self, a: &Mat3x4, i: &Mat3x4) -> Self::Rel;
    fn bone(&self, m: &Mat3x4) -> Self::Mat;
    /// `f_0 rel_0 + f_1 rel_1 + ...`, summed in member order, element by element.
    fn blend(&self, members: &[Member], rel: &[Self::Rel]) -> Self::Mat;
    /// Each set of a list (one of [`SkinPlan::lists`]: two sets or more whose members name the
    /// same slots in the same order) without runs and with vertices in `range`, blended into
    /// its slot of `table` (the list's slots) with exactly [`Backend::blend`]'s bits.
    #[inline(always)]
    fn blend_list(
        &self,
        list: &[Group],
        members: &[Member],
        rel: &[Self::Rel],
        table: &mut [Slot],
        range: (u32, u32),
    ) {
        blend_each(self, list, members, rel, table, range);
    }
    /// Each set of `sets` (one of [`SkinPlan::alone`]: sets of one member count) without runs
    /// and with vertices in `range`, blended into its slot of `table` (the range's slots) with
    /// exactly [`Backend::blend`]'s bits.
    #[inline(always)]
    fn blend_alone(
        &self,
        sets: &[Group],
        members: &[Member],
        rel: &[Self::Rel],
        table: &mut [Slot],
        range: (u32, u32),
    ) {
        blend_each(self, sets, members, rel, table, range);
    }
    /// A matrix ready for [`Backend::run`].
    type Wide;
    fn widen(&self, m: &Self::Mat) -> Self::Wide;
    /// Element `e` from the operand `x = (o, f, n, _)` (an influence, or a palette point):
    /// `((c3 f + c0 ox) + c1 oy) + c2 oz` and `(c0 nx + c1 ny) + c2 nz`, `c_j` the matrix's
    /// columns. `ONE`: `f` is 1, so `c3 f` is `c3`, bit for bit, and need not be computed.
    fn point<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        m: Self::Mat,
        x: &Influence,
        out: &mut Self::Out,
        e: usize,
    );
    /// Elements `[e, e + x.len())` from the consecutive operands `x`, each exactly as
    /// [`Backend::point`] computes it.
    fn run<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        m: &Self::Wide,
        x: &[Influence],
        out: &mut Self::Out,
        e: usize,
    );
    /// Keeps `m` in a table slot, for [`Backend::stretch`].
    fn save(&self, m: &Self::Mat, slot: &mut Slot);
    /// The matrix [`Backend::save`] kept in `slot`.
    fn load(&self, slot: &Slot) -> Self::Mat;
    /// Elements `[e, e + x.len())` from the consecutive operands `x`, each with the matrix in
    /// the table slot its last field names, exactly as [`Backend::point`] computes it.
    #[inline(always)]
    fn stretch<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        table: &[Slot],
        x: &[Influence],
        out: &mut Self::Out,
        e: usize,
    ) {
        stretch_by_vertex::<Self, NORMALS, UNIT, ONE>(self, table, x, out, e);
    }
    /// Element `e` from its influences one by one: with `x = (o, f, n, 0)` and the rows `r` of
    /// each bone's matrix, eight lanes `acc[r][j] += r[j % 4] x[j]` summed as
    /// `(l0 + l1) + (l2 + l3)` per half.
    fn direct<const NORMALS: bool, const UNIT: bool>(
        &self,
        infl: &[Influence],
        bones: &[Mat3x4],
        out: &mut Self::Out,
        e: usize,
    );
}

/// [`Backend::blend_list`] a set at a time: the default, and what a kernel does with lists it
/// has no faster way for.
#[inline(always)]
pub(crate) fn blend_each<B: Backend + ?Sized>(
    b: &B,
    list: &[Group],
    members: &[Member],
    rel: &[B::Rel],
    table: &mut [Slot],
    (first, end): (u32, u32),
) {
    for (s, slot) in list.iter().zip(table) {
        if !s.has_runs() && overlaps(s, first, end) {
            let members = members
                .get(s.key as usize..s.members_end as usize)
                .unwrap_or_default();
            b.save(&b.blend(members, rel), slot);
        }
    }
}

/// [`Backend::stretch`] vertex by vertex, each through [`Backend::point`] with its slot's matrix:
/// the default, and what a kernel does where it cannot store several elements at once.
#[inline(always)]
pub(crate) fn stretch_by_vertex<
    B: Backend + ?Sized,
    const NORMALS: bool,
    const UNIT: bool,
    const ONE: bool,
>(
    b: &B,
    table: &[Slot],
    x: &[Influence],
    out: &mut B::Out,
    e: usize,
) {
    for (i, x) in x.iter().enumerate() {
        if let Some(slot) = table.get(x.bone as usize) {
            b.point::<NORMALS, UNIT, ONE>(b.load(slot), x, out, e + i);
        }
    }
}

/// Skins the vertices of group `g` in `[first, end)` with `m`, its runs' operands in `records`.
#[inline(always)]
fn skin_group<B: Backend, const NORMALS: bool, const UNIT: bool>(
    b: &B,
    plan: &SkinPlan,
    g: &Group,
    records: &[Influence],
    m: B::Mat,
    range: (u32, u32),
    out: &mut B::Out,
) {
    if g.weight_one {
        group::<B, NORMALS, UNIT, true>(b, plan, g, records, m, range, out);
    } else {
        group::<B, NORMALS, UNIT, false>(b, plan, g, records, m, range, out);
    }
}

/// [`skin_group`], `ONE` when every operand's weight is 1. The group's runs read their
/// operands from `records` (the mesh's influences for a bone group, the layout's points for a
/// set).
#[inline(always)]
fn group<B: Backend, const NORMALS: bool, const UNIT: bool, const ONE: bool>(
    b: &B,
    plan: &SkinPlan,
    g: &Group,
    records: &[Influence],
    m: B::Mat,
    (first, end): (u32, u32),
    out: &mut B::Out,
) {
    let inside = g.lo >= first && g.hi < end;
    let runs = plan
        .runs
        .get(g.runs.0 as usize..g.runs.1 as usize)
        .unwrap_or_default();
    if !runs.is_empty() {
        let wide = b.widen(&m);
        for r in runs {
            let (lo, hi) = if inside {
                (r.first, r.first + r.len)
            } else {
                (r.first.max(first), (r.first + r.len).min(end))
            };
            let at = (r.at + (lo - r.first)) as usize;
            if lo < hi
                && let Some(x) = records.get(at..at + (hi - lo) as usize)
            {
                b.run::<NORMALS, UNIT, ONE>(&wide, x, out, (lo - first) as usize);
            }
        }
    }
}

/// Whether group `g` has vertices in `[first, end)` (it may have none there even so).
#[inline(always)]
pub(crate) fn overlaps(g: &Group, first: u32, end: u32) -> bool {
    g.hi >= first && g.lo < end
}

/// Skins `job` with `b` into `out` ([`walk`] with `normals` and `unit` made constants). Inlined
/// into each kernel's entry, where the kernel's CPU features are on. `table` has
/// [`SkinPlan::table_len`] slots.
#[inline(always)]
pub(crate) fn drive<B: Backend>(
    b: &B,
    job: &Job,
    table: &mut [Slot],
    normals: bool,
    unit: bool,
    out: &mut B::Out,
) {
    match (normals, unit) {
        (true, true) => walk::<_, true, true>(b, job, table, out),
        (true, false) => walk::<_, true, false>(b, job, table, out),
        _ => walk::<_, false, false>(b, job, table, out),
    }
}

/// Walks a job's plan: bone groups' runs, then palette sets' (each set's blend kept in
/// `table`), then the stretches, then the vertices skinned influence by influence.
#[inline(always)]
fn walk<B: Backend, const NORMALS: bool, const UNIT: bool>(
    b: &B,
    job: &Job,
    table: &mut [Slot],
    out: &mut B::Out,
) {
    let plan = job.plan;
    let first = job.first;
    // skin_mesh checked first + count <= the vertex count, which fits u32.
    let end = first.saturating_add(job.count);
    for g in &plan.bone_groups {
        if !overlaps(g, first, end) {
            continue;
        }
        if let Some(bone) = job.bones.get(g.key as usize) {
            let m = b.bone(bone);
            skin_group::<B, NORMALS, UNIT>(b, plan, g, job.influences, m, (first, end), out);
        }
    }

    if plan.sets.iter().any(|s| overlaps(s, first, end)) {
        // The buffer sized in steps, so that a small palette does not pay for clearing a large
        // one; not through a closure, which would lose the kernel's CPU features.
        let sets = table
            .get_mut(plan.stretch_bones.len()..)
            .unwrap_or_default();
        match plan.palette_bones.len() {
            0..=32 => palette::<B, NORMALS, UNIT, 32>(b, job, (first, end), sets, out),
            33..=96 => palette::<B, NORMALS, UNIT, 96>(b, job, (first, end), sets, out),
            _ => palette::<B, NORMALS, UNIT, MAX_PALETTE_BONES>(b, job, (first, end), sets, out),
        }
    }

    let from = plan.stretches.partition_point(|s| s.first + s.len <= first);
    let stretches = plan.stretches.get(from..).unwrap_or_default();
    if stretches.first().is_some_and(|s| s.first < end) {
        for (slot, &bone) in table.iter_mut().zip(&plan.stretch_bones) {
            if let Some(m) = job.bones.get(bone as usize) {
                b.save(&b.bone(m), slot);
            }
        }
    }
    for s in stretches {
        if s.first >= end {
            break;
        }
        let (lo, hi) = (s.first.max(first), (s.first + s.len).min(end));
        let at = (s.at + (lo - s.first)) as usize;
        if let Some(x) = plan.points.get(at..at + (hi - lo) as usize) {
            let e = (lo - first) as usize;
            if s.weight_one {
                b.stretch::<NORMALS, UNIT, true>(table, x, out, e);
            } else {
                b.stretch::<NORMALS, UNIT, false>(table, x, out, e);
            }
        }
    }

    let from = plan.direct.partition_point(|&v| v < first);
    for &v in plan.direct.get(from..).unwrap_or_default() {
        if v >= end {
            break;
        }
        let (Some(&s), Some(&t)) = (job.starts.get(v as usize), job.starts.get(v as usize + 1))
        else {
            continue;
        };
        let infl = job
            .influences
            .get(s as usize..t as usize)
            .unwrap_or_default();
        b.direct::<NORMALS, UNIT>(infl, job.bones, out, (v - first) as usize);
    }
}

/// Blends the sets with vertices in `[first, end)` into their slots of `table` (one per set) and
/// skins their runs, with a stack buffer of `SLOTS` relative matrices (`SLOTS` at least the
/// palette's bones, at most [`MAX_PALETTE_BONES`]).
#[inline(always)]
fn palette<B: Backend, const NORMALS: bool, const UNIT: bool, const SLOTS: usize>(
    b: &B,
    job: &Job,
    range: (u32, u32),
    table: &mut [Slot],
    out: &mut B::Out,
) {
    let plan = job.plan;
    let mut rel = [b.zero_rel(); SLOTS];
    for (slot, &bone) in rel.iter_mut().zip(&plan.palette_bones) {
        let bone = bone as usize;
        if let (Some(a), Some(i)) = (job.bones.get(bone), job.inverse_bind.get(bone)) {
            *slot = b.relative(a, i);
        }
    }
    blend_sets(b, plan, &rel, table, range);
    for &i in &plan.sets_with_runs {
        if let (Some(s), Some(slot)) = (plan.sets.get(i as usize), table.get_mut(i as usize))
            && overlaps(s, range.0, range.1)
        {
            let members = plan
                .members
                .get(s.key as usize..s.members_end as usize)
                .unwrap_or_default();
            let m = b.blend(members, &rel);
            b.save(&m, slot);
            // A set's operands are bind points, of weight 1.
            debug_assert!(s.weight_one);
            group::<B, NORMALS, UNIT, true>(b, plan, s, &plan.points, m, range, out);
        }
    }
}

/// Blends the sets without runs that have vertices in `range` into their slots of `table`, a
/// list at a time: a loop of its own, given the slices it reads, so that it keeps them in
/// registers (inside the loop that also skins the sets' runs, it reloaded them from the stack
/// for every set; zombie.dpm, whose sets have no runs, went from 2.00 to 1.87 ns a vertex).
#[inline(always)]
fn blend_sets<B: Backend>(
    b: &B,
    plan: &SkinPlan,
    rel: &[B::Rel],
    table: &mut [Slot],
    range: (u32, u32),
) {
    let (sets, members) = (&plan.sets[..], &plan.members[..]);
    for &(from, to) in &plan.lists {
        let (from, to) = (from as usize, to as usize);
        if let (Some(list), Some(slots)) = (sets.get(from..to), table.get_mut(from..to)) {
            b.blend_list(list, members, rel, slots, range);
        }
    }
    for &(from, to) in &plan.alone {
        let (from, to) = (from as usize, to as usize);
        if let (Some(run), Some(slots)) = (sets.get(from..to), table.get_mut(from..to)) {
            b.blend_alone(run, members, rel, slots, range);
        }
    }
}

/// Skins `job` into `target` with `kernel`, which the caller checked this CPU runs.
fn run<T: SkinTarget + ?Sized>(
    kernel: Kernel,
    job: &Job,
    normals: bool,
    unit: bool,
    target: &mut T,
) {
    // A thread whose locals are being destroyed gets a table of its own for the call.
    let mut table = TABLE.try_with(std::cell::Cell::take).unwrap_or_default();
    let len = job.plan.table_len();
    if table.len() < len {
        table.resize(len, Slot::default());
    }
    let slots = table.get_mut(..len).unwrap_or_default();
    #[cfg(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ))]
    {
        let raw = if kernel != Kernel::Portable {
            target.raw()
        } else {
            None
        };
        if let Some(mut raw) = raw {
            #[cfg(target_arch = "x86_64")]
            x86::run(kernel, job, slots, normals, unit, &mut raw);
            // Kernel::Simd128, the only other kernel available here.
            #[cfg(target_arch = "wasm32")]
            drive(
                &simd4::Simd4::<std::arch::wasm32::v128>::new(),
                job,
                slots,
                normals,
                unit,
                &mut raw,
            );
        } else {
            portable::run(job, slots, normals, unit, target);
        }
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    {
        let _ = kernel;
        portable::run(job, slots, normals, unit, target);
    }
    // Dropped instead where the thread's locals are gone.
    let _ = TABLE.try_with(|t| t.set(table));
}

/// Cuts between two threads' ranges fall on multiples of this many vertices: with 4-byte
/// floats, 16 elements of any whole number of floats fill whole 64-byte cache lines, so that
/// two threads skinning neighbouring ranges of an aligned buffer never write the same line.
pub const SKIN_SPLIT_GRAIN: usize = 16;

impl Mesh {
    /// Where to cut the mesh's vertices into `parts` ranges of about equal skinning work (for as
    /// many threads): `parts + 1` ascending bounds from 0 to the vertex count, every cut a
    /// multiple of [`SKIN_SPLIT_GRAIN`]. Work is estimated from the layout: a vertex skinned with
    /// others in a run costs less than one alone, one skinned influence by influence more.
    pub fn skin_split(&self, parts: usize) -> Vec<usize> {
        self.plan()
            .split(self.influence_start(), parts, SKIN_SPLIT_GRAIN)
    }
}

impl Model {
    /// Skins vertices `[first, first + count)` of `mesh` with model-space bone matrices from
    /// [`Model::pose_frames`] or [`Model::pose_concat`]; vertex `first + i` lands at element `i`.
    pub fn skin_mesh<T: SkinTarget + ?Sized>(
        &self,
        mesh: usize,
        bones: &[Mat3x4],
        first: usize,
        count: usize,
        flags: u32,
        target: &mut T,
    ) -> Result<()> {
        self.skin_mesh_with(Kernel::selected(), mesh, bones, first, count, flags, target)
    }

    /// [`Model::skin_mesh`] with a chosen kernel; one this CPU does not run is an
    /// `InvalidArgument` error.
    #[allow(clippy::too_many_arguments)]
    pub fn skin_mesh_with<T: SkinTarget + ?Sized>(
        &self,
        kernel: Kernel,
        mesh: usize,
        bones: &[Mat3x4],
        first: usize,
        count: usize,
        flags: u32,
        target: &mut T,
    ) -> Result<()> {
        let m = self.meshes().get(mesh).ok_or_else(|| {
            Error::invalid_argument(format!(
                "mesh {mesh} out of range (model has {} meshes)",
                self.meshes().len()
            ))
        })?;
        if self.unbound().is_some() {
            return Err(Error::invalid_argument(
                "the model's meshes wait for a skeleton: bind them with ossa_model_bind first",
            ));
        }
        if bones.len() != self.bones().len() {
            return Err(Error::invalid_argument(format!(
                "{} bone matrices given, the model has {} bones",
                bones.len(),
                self.bones().len()
            )));
        }
        if flags & !SKIN_NORMALIZE != 0 {
            return Err(Error::invalid_argument(format!(
                "unknown skin flags {flags:#x}"
            )));
        }
        if !kernel.is_available() {
            return Err(Error::invalid_argument(format!(
                "the {} skinning kernel does not run on this CPU",
                kernel.name()
            )));
        }
        let vc = m.vertex_count();
        first
            .checked_add(count)
            .filter(|&e| e <= vc)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "vertices {first}..{first}+{count} out of range (mesh {mesh} has {vc} vertices)"
                ))
            })?;
        if count > target.capacity() {
            return Err(Error::invalid_argument(format!(
                "the target holds {} vertices, {count} asked for",
                target.capacity()
            )));
        }
        let normalize_normals = flags & SKIN_NORMALIZE != 0;
        let wants_normals = target.wants_normals();

        // Mesh sizes were checked against u32 at load (influence_start holds u32 offsets).
        let job = Job {
            plan: m.plan(),
            starts: m.influence_start(),
            influences: m.all_influences(),
            bones,
            inverse_bind: self.skeleton().inverse_bind(),
            first: first as u32,
            count: count as u32,
        };
        run(kernel, &job, wants_normals, normalize_normals, target);
        Ok(())
    }
}
