//! What the binary formats share: the parts of a file and the check that none overlap, checked
//! tables, fixed-size name fields, and DPM/SKM's per-vertex influence blocks (the same layout
//! in either byte order), read and written.

use std::fmt;
use std::marker::PhantomData;

use byteorder::ByteOrder;

use crate::cursor::{Cursor, record_at, span, table_bytes, u32_at};
use crate::error::{Error, Result, ResultExt};
use crate::format::Checker;
use crate::model::{Bone, Influence, Mesh, Name, parent_ok};

/// Bytes of one stored influence: origin[3], weight, normal[3], bone.
pub(crate) const INFLUENCE_SIZE: u64 = 32;
/// Influence sums further from 1 than this are reported (default mode) or rejected (strict).
pub(crate) const SUM_EXACT: f32 = 1e-4;
/// Influence sums further from 1 than this are rejected in every mode.
pub(crate) const SUM_TOLERATED: f32 = 1e-2;

/// The parts of a file, named in messages about them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Part {
    Header,
    Bones,
    Meshes,
    Frames,
    Vertices(u32),
    Texcoords(u32),
    Indices(u32),
    GroupIds(u32),
    References(u32),
    /// The pose tables of frames `first..=last`, which follow one another in the file.
    Poses(u32, u32),
    Attributes,
    Textures,
    Materials,
    VertexList,
    Faces,
    Animations,
    Tracks(u32),
    Image(u32),
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Part::Header => write!(f, "header"),
            Part::Bones => write!(f, "bone table"),
            Part::Meshes => write!(f, "mesh table"),
            Part::Frames => write!(f, "frame table"),
            Part::Vertices(m) => write!(f, "mesh {m} vertices"),
            Part::Texcoords(m) => write!(f, "mesh {m} texcoords"),
            Part::Indices(m) => write!(f, "mesh {m} indices"),
            Part::GroupIds(m) => write!(f, "mesh {m} group ids"),
            Part::References(m) => write!(f, "mesh {m} references"),
            Part::Poses(a, b) if a == b => write!(f, "frame {a} poses"),
            Part::Poses(a, b) => write!(f, "frames {a} to {b} poses"),
            Part::Attributes => write!(f, "attribute table"),
            Part::Textures => write!(f, "texture table"),
            Part::Materials => write!(f, "material table"),
            Part::VertexList => write!(f, "vertex table"),
            Part::Faces => write!(f, "face table"),
            Part::Animations => write!(f, "animation table"),
            Part::Tracks(a) => write!(f, "animation {a} tracks"),
            Part::Image(t) => write!(f, "texture {t} image"),
        }
    }
}

struct Region {
    start: u64,
    end: u64,
    part: Part,
}

/// Where each part of a file lies, for the check that no two share bytes.
#[derive(Default)]
pub(crate) struct Regions(Vec<Region>);

impl Regions {
    pub fn add(&mut self, start: u64, len: u64, part: Part) {
        if len > 0 {
            self.0.push(Region {
                start,
                end: start.saturating_add(len),
                part,
            });
        }
    }

    /// Frame `f`'s pose table: one region with the previous frame's when it follows that in
    /// the file, as tools write them, so that a long animation adds one region rather than one
    /// per frame to sort.
    pub fn add_poses(&mut self, f: u32, start: u64, len: u64) {
        if let Some(Region {
            end,
            part: Part::Poses(_, last),
            ..
        }) = self.0.last_mut()
            && *end == start
            && last.checked_add(1) == Some(f)
            && len > 0
        {
            *end = start.saturating_add(len);
            *last = f;
            return;
        }
        self.add(start, len, Part::Poses(f, f));
    }

    /// Where the first structure after byte `at` starts, if one does.
    pub fn next_start(&self, at: u64) -> Option<u64> {
        self.0.iter().map(|r| r.start).filter(|&s| s > at).min()
    }

    /// No two structures may share bytes: a file that reuses data would make allocations grow
    /// faster than the file.
    pub fn check_disjoint(mut self) -> Result<()> {
        // Stable, so that it merges the runs the regions come in (tables, then each mesh's
        // data, then guessed vertex blocks) rather than sorting from scratch.
        self.0.sort_by_key(|r| (r.start, r.end));
        for pair in self.0.windows(2) {
            if let [a, b] = pair
                && b.start < a.end
            {
                return Err(Error::malformed(format!(
                    "{} (bytes {:#x}..{:#x}) overlaps {} (bytes {:#x}..{:#x})",
                    b.part, b.start, b.end, a.part, a.start, a.end
                ))
                .at(b.start));
            }
        }
        Ok(())
    }
}

/// The bytes of a table of `count` records of `size` bytes at `offset`, checked against the file.
pub(crate) fn table(data: &[u8], offset: u32, count: u32, size: u64, part: Part) -> Result<&[u8]> {
    let len = table_bytes(count as u64, size).within(|| part)?;
    let (start, end) = span(offset as u64, len, data.len())
        .map_err(|e| e.within(format!("{part} ({count} records of {size} bytes)")))?;
    Ok(data.get(start..end).unwrap_or_default())
}

/// A fixed-size name field at the start of `record`: the bytes up to the first NUL. A name that
/// fills its whole field has no terminator; real tools write such names, so it is kept whole
/// and reported.
pub(crate) fn name_field(
    record: &[u8],
    size: usize,
    at: u64,
    ck: &mut Checker,
    what: impl FnOnce() -> String,
) -> Result<Name> {
    let field = record.get(..size).unwrap_or_default();
    let name = Name::new(field);
    // The name ends at the first NUL: as long as the field, it has none.
    if name.as_bytes().len() == field.len() {
        ck.tolerate(
            Error::malformed(format!(
                "{}: name fills its whole {size}-byte field with no NUL terminator",
                what()
            ))
            .at(at),
        )?;
    }
    Ok(name)
}

/// A bone record: a name field of `name_size` bytes, then `i32 parent` and `u32 flags` (DPM and
/// SKP lay their bones out alike). A parent that is not an earlier bone or -1 is a problem; -1
/// stands in when validating.
pub(crate) fn read_bone<E: ByteOrder>(
    record: &[u8],
    name_size: usize,
    i: usize,
    at: u64,
    ck: &mut Checker,
) -> Result<Bone> {
    let name = name_field(record, name_size, at, ck, || format!("bone {i}"))?;
    let mut parent = u32_at::<E>(record, name_size) as i32;
    if !parent_ok(parent, i) {
        ck.problem(
            Error::malformed(format!(
                "bone {i} ({name}): parent {parent} is not an earlier bone or -1"
            ))
            .at(record_at(at, name_size, 1)),
        )?;
        parent = -1;
    }
    Ok(Bone {
        name,
        parent,
        flags: u32_at::<E>(record, name_size.saturating_add(4)),
    })
}

/// Writes a name into a field of `size` bytes, NUL-padded; `max` is the longest the format keeps.
pub(crate) fn put_name(
    out: &mut Vec<u8>,
    name: &Name,
    size: usize,
    max: usize,
    what: impl FnOnce() -> String,
) -> Result<()> {
    let bytes = name.as_bytes();
    if bytes.len() > max {
        return Err(Error::limit(format!(
            "{}: name is {} bytes, the format holds {max}",
            what(),
            bytes.len()
        )));
    }
    out.extend_from_slice(bytes);
    // `max` is at most `size` for every format, so this pads; it never truncates.
    put_zeros(out, size.saturating_sub(bytes.len()));
    Ok(())
}

pub(crate) fn put_zeros(out: &mut Vec<u8>, n: usize) {
    out.extend(std::iter::repeat_n(0, n));
}

/// Bytes of `count` records of `size` while planning a file to write. Saturating: a size past
/// u64 is past every format's 32-bit offsets, which the writers check before writing.
pub(crate) fn records_len(count: usize, size: u64) -> u64 {
    (count as u64).saturating_mul(size)
}

pub(crate) fn put_u32<E: ByteOrder>(out: &mut Vec<u8>, v: u32) {
    let mut b = [0u8; 4];
    E::write_u32(&mut b, v);
    out.extend_from_slice(&b);
}

pub(crate) fn put_f32<E: ByteOrder>(out: &mut Vec<u8>, v: f32) {
    put_u32::<E>(out, v.to_bits());
}

/// Where a vertex block lies and how many influences it holds: measured by
/// [`measure_vertices`], or guessed by [`guess_vertices`] and confirmed as it is read.
#[derive(Clone, Copy, Default)]
pub(crate) struct VertexBlock {
    pub offset: u32,
    pub num_verts: u32,
    /// Bytes, counts included.
    pub len: u64,
    pub influences: u64,
}

/// Pass one over a vertex block: walks the per-vertex counts without reading the influences,
/// and finds the block's length and its number of influences.
pub(crate) fn measure_vertices<E: ByteOrder>(
    data: &[u8],
    offset: u32,
    num_verts: u32,
    m: usize,
) -> Result<VertexBlock> {
    // Every vertex holds at least its 4-byte count; check that much before walking.
    table(data, offset, num_verts, 4, Part::Vertices(m as u32))?;
    let mut c = Cursor::<E>::at(data, offset as u64)?;
    let mut influences = 0u64;
    for v in 0..num_verts {
        let n = c.u32().within(|| format!("mesh {m} vertex {v}"))?;
        c.skip(u64::from(n).saturating_mul(INFLUENCE_SIZE))
            .within(|| format!("mesh {m} vertex {v}: {n} influences"))?;
        // Each influence just skipped lies inside the data: the count stays below its length.
        influences = influences.saturating_add(u64::from(n));
    }
    Ok(VertexBlock {
        offset,
        num_verts,
        len: c.pos().saturating_sub(offset as u64),
        influences,
    })
}

/// The vertex block that fills the bytes from `offset` to `end`, where the next structure of the
/// file starts, as the tools that write these formats lay them out: its length, and from it its
/// number of influences. None when the bytes cannot be such a block. Reading the block confirms
/// the guess or refutes it, which spares walking the counts twice.
pub(crate) fn guess_vertices(offset: u32, num_verts: u32, end: u64) -> Option<VertexBlock> {
    let len = end.checked_sub(offset.into())?;
    let influence_bytes = len.checked_sub(u64::from(num_verts).checked_mul(4)?)?;
    influence_bytes
        .is_multiple_of(INFLUENCE_SIZE)
        .then_some(VertexBlock {
            offset,
            num_verts,
            len,
            influences: influence_bytes / INFLUENCE_SIZE,
        })
}

/// Largest finite f32 with its sign bit cleared: a word above it, sign cleared, is a NaN or an
/// infinity.
const MAX_FINITE_BITS: u32 = 0x7f7f_ffff;

/// What [`decode_few`] and [`decode_append`] write: a word as it is, or as the float it holds.
pub(crate) trait Word: Copy {
    fn from_bits(bits: u32) -> Self;
}

impl Word for u32 {
    #[inline(always)]
    fn from_bits(bits: u32) -> u32 {
        bits
    }
}

impl Word for f32 {
    #[inline(always)]
    fn from_bits(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
}

/// The start of a DarkPlaces-family header (DPM, SKM, SKP): the id `magic` (checked on the bytes
/// there are, so a file cut inside it is still known for what it is), the whole header of
/// `header_size` bytes, and type 2, the only type that exists. `names` says what the id names,
/// for the message. The cursor is left after the type.
pub(crate) fn header_start<'a, E: ByteOrder>(
    data: &'a [u8],
    magic: &[u8],
    names: &str,
    header_size: u64,
) -> Result<Cursor<'a, E>> {
    let id_len = data.len().min(magic.len());
    if data.get(..id_len) != magic.get(..id_len) {
        let id = String::from_utf8_lossy(magic);
        return Err(Error::unknown_format(format!(
            "header: id is not {:?} (not {names})",
            id.trim_end_matches('\0')
        ))
        .at(0));
    }
    let mut c = Cursor::<E>::at(data, 0)?;
    c.require(header_size).within(|| "header")?;
    c.skip(magic.len() as u64)?;
    let type_at = c.pos();
    let ty = c.u32()?;
    if ty != 2 {
        return Err(Error::unsupported(format!(
            "header: type {ty} (only type 2, hierarchical skeletal pose, exists)"
        ))
        .at(type_at));
    }
    Ok(c)
}

/// A loop over file data, for [`with_simd`].
pub(crate) trait Kernel {
    type Output;
    /// Implementations are `#[inline(always)]`, so that their loop is compiled into each of
    /// [`with_simd`]'s copies rather than called from them.
    fn run(self) -> Self::Output;
}

/// Runs `kernel` compiled for the widest vectors the CPU has: with AVX2, swapping bytes is one
/// shuffle per 32 bytes rather than the eight instructions per 16 bytes of the x86-64 baseline,
/// and big-endian files load at twice the speed. The kernel's code is the same either way.
#[inline(always)]
pub(crate) fn with_simd<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `avx2` needs AVX2, and the CPU has it: checked just above.
        return unsafe { avx2(kernel) };
    }
    kernel.run()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn avx2<K: Kernel>(kernel: K) -> K::Output {
    kernel.run()
}

/// Decodes the 32-bit words of `src` (byte order `E`) into `dst`, as many as both hold, and
/// tells whether any of them, read as a float, is a NaN or an infinity: branch-free, compiled
/// into its caller, for the few words of one record or vertex. Callers look for the culprit,
/// and check each value with its own message and offset, only when this says there is
/// something to find. Whole tables go through [`decode_append`].
#[inline(always)]
pub(crate) fn decode_few<E: ByteOrder, T: Word>(src: &[u8], dst: &mut [T]) -> bool {
    let mut nonfinite = 0u32;
    for (out, word) in dst.iter_mut().zip(src.as_chunks::<4>().0) {
        let bits = E::read_u32(word);
        nonfinite |= u32::from(bits & !(1 << 31) > MAX_FINITE_BITS);
        *out = T::from_bits(bits);
    }
    nonfinite != 0
}

/// A table of `count` records of `W` words each, decoded from `bytes` (which holds them all);
/// the flag says whether some word is a NaN or an infinity as a float. `count` is bounded by
/// the file, as `bytes` lies inside it.
pub(crate) fn decode_table<E: ByteOrder, T: Word, const W: usize>(
    bytes: &[u8],
    count: u32,
) -> (Vec<[T; W]>, bool) {
    let mut out = Vec::new();
    let largest = decode_append::<E, T, W>(bytes, count as usize, &mut out);
    (out, nonfinite(&largest))
}

/// Whether some lane's largest magnitude (as [`decode_append`] gives them) is a NaN or an
/// infinity as a float.
pub(crate) fn nonfinite(largest: &[u32]) -> bool {
    largest.iter().any(|&m| m > MAX_FINITE_BITS)
}

/// Appends to `out` the records of `W` words that `bytes` holds, at most `count` of them, and
/// gives each word's largest magnitude over the records, as the bits of a float without its
/// sign (see [`nonfinite`]; the load-time range check starts from them). The records are
/// written once, into the room reserved for them, rather than over zeros: on a large table the
/// zeroing pass cost as much as the decoding. `count` is bounded by the file.
pub(crate) fn decode_append<E: ByteOrder, T: Word, const W: usize>(
    bytes: &[u8],
    count: usize,
    out: &mut Vec<[T; W]>,
) -> [u32; W] {
    with_simd(DecodeAppend {
        src: bytes,
        dst: out,
        count,
        order: PhantomData::<E>,
    })
}

struct DecodeAppend<'a, E, T, const W: usize> {
    src: &'a [u8],
    dst: &'a mut Vec<[T; W]>,
    count: usize,
    order: PhantomData<E>,
}

impl<E: ByteOrder, T: Word, const W: usize> Kernel for DecodeAppend<'_, E, T, W> {
    type Output = [u32; W];
    #[inline(always)]
    fn run(self) -> [u32; W] {
        let DecodeAppend {
            src, dst, count, ..
        } = self;
        let size = W.saturating_mul(4).max(1);
        let n = count.min(src.len().checked_div(size).unwrap_or(0));
        dst.reserve(n);
        let spare = dst.spare_capacity_mut();
        let spare = spare.get_mut(..n).unwrap_or_default();
        let records = src.get(..n.saturating_mul(size)).unwrap_or_default();
        // Each lane's largest magnitude (as bits), so that the loop has no horizontal step.
        let mut largest = [0u32; W];
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        let done = simd128::decode_records::<E, T, W>(records, spare, &mut largest);
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        let done = false;
        for (slot, record) in spare
            .iter_mut()
            .zip(records.chunks_exact(size))
            .filter(|_| !done)
        {
            let mut words = [T::from_bits(0); W];
            for ((out, word), most) in words
                .iter_mut()
                .zip(record.as_chunks::<4>().0)
                .zip(&mut largest)
            {
                let bits = E::read_u32(word);
                *most = (*most).max(bits & !(1 << 31));
                *out = T::from_bits(bits);
            }
            slot.write(words);
        }
        // As many as the zip above went through.
        let written = spare
            .len()
            .min(records.len().checked_div(size).unwrap_or(0));
        let len = dst.len().saturating_add(written);
        // SAFETY: the loop above (or simd128::decode_records) wrote the first `written` records
        // of the vector's spare capacity, so its first `len` are initialised, and `len` is within
        // its capacity.
        unsafe { dst.set_len(len) };
        largest
    }
}

/// WebAssembly has no byte-swap instruction, and the plain loop of [`DecodeAppend`] stays
/// scalar there: a big-endian table (a DPM's poses, most of a long animation's file) decoded at
/// a third of the native speed. Here sixteen bytes are swapped by one shuffle.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use std::arch::wasm32::{
        i8x16_swizzle, u8x16, u32x4_extract_lane, u32x4_max, u32x4_splat, v128, v128_and,
        v128_load, v128_store,
    };
    use std::mem::MaybeUninit;

    use byteorder::ByteOrder;

    use super::Word;

    /// Decodes every record of `records` into `spare` (as many as both hold), each lane's
    /// largest magnitude into `largest`, as [`super::DecodeAppend`] does; false, having done
    /// nothing, for records of other than 4, 8, 12 or 16 words.
    pub(super) fn decode_records<E: ByteOrder, T: Word, const W: usize>(
        records: &[u8],
        spare: &mut [MaybeUninit<[T; W]>],
        largest: &mut [u32; W],
    ) -> bool {
        let lanes = W / 4;
        if !W.is_multiple_of(4) || lanes == 0 || lanes > 4 || size_of::<T>() != 4 {
            return false;
        }
        let big = E::read_u32(&[0, 0, 0, 1]) == 1;
        let order = if big {
            u8x16(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12)
        } else {
            u8x16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
        };
        let magnitude = u32x4_splat(!(1 << 31));
        let mut most: [v128; 4] = [u32x4_splat(0); 4];
        for (slot, record) in spare
            .iter_mut()
            .zip(records.chunks_exact(W.saturating_mul(4)))
        {
            let out = slot.as_mut_ptr().cast::<u8>();
            for (k, m) in most.iter_mut().enumerate().take(lanes) {
                // SAFETY: the record holds W * 4 bytes and 16 * k + 16 <= W * 4; v128_load
                // reads unaligned bytes.
                let v =
                    unsafe { v128_load(record.as_ptr().add(k.saturating_mul(16)).cast::<v128>()) };
                let v = i8x16_swizzle(v, order);
                *m = u32x4_max(*m, v128_and(v, magnitude));
                // SAFETY: the slot is W words of 4 bytes; v128_store writes 16 unaligned bytes
                // inside it, which are then its words k * 4 to k * 4 + 3.
                unsafe { v128_store(out.add(k.saturating_mul(16)).cast::<v128>(), v) };
            }
        }
        for (k, m) in most.iter().enumerate().take(lanes) {
            let lane = [
                u32x4_extract_lane::<0>(*m),
                u32x4_extract_lane::<1>(*m),
                u32x4_extract_lane::<2>(*m),
                u32x4_extract_lane::<3>(*m),
            ];
            for (j, v) in lane.into_iter().enumerate() {
                if let Some(l) = largest.get_mut(k.saturating_mul(4).saturating_add(j)) {
                    *l = (*l).max(v);
                }
            }
        }
        true
    }
}

/// Worst influence sum seen in a mesh among those the default mode tolerates.
#[derive(Default)]
struct SumReport {
    count: u32,
    worst_vertex: u32,
    worst_sum: f32,
    worst_off: f32,
    worst_at: u64,
}

impl SumReport {
    /// Notes a vertex whose sum is `off` from 1: reported (once, for the worst) past SUM_EXACT.
    fn note(&mut self, v: u32, sum: f32, off: f32, at: u64) {
        if off > SUM_EXACT {
            self.count = self.count.saturating_add(1);
            if off > self.worst_off {
                self.worst_vertex = v;
                self.worst_sum = sum;
                self.worst_off = off;
                self.worst_at = at;
            }
        }
    }
}

/// How far weights summing to `sum` are from 1, and whether that is beyond what any mode accepts.
fn sum_off(sum: f32) -> (f32, bool) {
    let off = (sum - 1.0).abs();
    // One comparison: a NaN compares false, an infinity above.
    let within = off <= SUM_TOLERATED;
    (off, !within)
}

/// An influence from its words as stored: origin[3], weight, normal[3] (floats) and bone.
#[inline(always)]
fn influence_of([ox, oy, oz, w, nx, ny, nz, bone]: [u32; 8]) -> Influence {
    Influence {
        origin: [ox, oy, oz].map(f32::from_bits),
        weight: f32::from_bits(w),
        normal: [nx, ny, nz].map(f32::from_bits),
        bone,
    }
}

/// Guesses every vertex block of a file (see [`guess_vertices`]): each fills the bytes up to the
/// next structure the layout knows of (another block, or the end of the data), and is added to
/// the regions. None when a block cannot be guessed; the caller then measures them all.
pub(crate) fn guess_blocks(
    data_len: usize,
    blocks: &mut [&mut VertexBlock],
    regions: &mut Regions,
) -> Option<()> {
    let starts: Vec<u64> = blocks.iter().map(|b| u64::from(b.offset)).collect();
    for (m, block) in blocks.iter_mut().enumerate() {
        let at = u64::from(block.offset);
        let end = starts
            .iter()
            .copied()
            .filter(|&s| s > at)
            .chain(regions.next_start(at))
            .chain([data_len as u64])
            .min()?;
        **block = guess_vertices(block.offset, block.num_verts, end)?;
        regions.add(at, block.len, Part::Vertices(m as u32));
    }
    Some(())
}

/// Reads a DPM or SKM file with its vertex blocks guessed (`read(false, ..)`, see
/// [`guess_blocks`]): the common file's blocks each fill the bytes up to the next structure, and
/// are read in one walk each. Where a guess is refuted, or anything else is wrong, the file is
/// read again with its blocks measured first (`read(true, ..)`, a second walk), and reported as
/// that reading reports it.
pub(crate) fn read_guessing_first<T>(
    ck: &mut Checker,
    mut read: impl FnMut(bool, &mut Checker) -> Result<Option<T>>,
) -> Result<T> {
    let mark = ck.mark();
    if let Ok(Some(parts)) = read(false, ck) {
        return Ok(parts);
    }
    ck.rewind(mark);
    read(true, ck)?.ok_or_else(|| Error::malformed("the measured vertex blocks do not read"))
}

/// A vertex block read: where each vertex's influences start (`num_verts + 1` entries from 0),
/// the influences, and the sums the default mode tolerates.
pub(crate) struct Vertices {
    influence_start: Vec<u32>,
    influences: Vec<Influence>,
    sums: SumReport,
}

/// Pass two over a vertex block: every influence, with its numbers finite, its bone in range and
/// each vertex's weights summing to 1. `sound` is the block as [`read_sound_vertices`] read it,
/// where it was read already.
pub(crate) fn read_vertices<E: ByteOrder>(
    data: &[u8],
    block: &VertexBlock,
    sound: Option<Vertices>,
    num_bones: u32,
    m: usize,
    ck: &mut Checker,
) -> Result<(Vec<u32>, Vec<Influence>)> {
    let v = match sound.or_else(|| read_sound_vertices::<E>(data, block, num_bones)) {
        Some(v) => v,
        None => check_vertices::<E>(data, block, num_bones, m, ck)?,
    };
    // The sums the default mode tolerates, reported once for the mesh.
    let sums = v.sums;
    if sums.count > 0 {
        ck.tolerate(
            Error::malformed(format!(
                "mesh {m}: {} vertices have influence sums off 1 by more than {SUM_EXACT} (worst: vertex {}, sum {})",
                sums.count, sums.worst_vertex, sums.worst_sum
            ))
            .at(sums.worst_at),
        )?;
    }
    Ok((v.influence_start, v.influences))
}

/// The common case of [`read_vertices`], for a block with nothing to report: no `Result` and no
/// message per value, only flags gathered on the way. None as soon as anything is wrong, or the
/// block is not as long or does not hold as many influences as it was measured or guessed to;
/// [`check_vertices`] then reads it again to report what is wrong where it lies.
pub(crate) fn read_sound_vertices<E: ByteOrder>(
    data: &[u8],
    block: &VertexBlock,
    num_bones: u32,
) -> Option<Vertices> {
    let (start, end) = span(block.offset.into(), block.len, data.len()).ok()?;
    // Empty: the walk reserves what it writes.
    let mut vertices = Vertices {
        influence_start: Vec::new(),
        influences: Vec::new(),
        sums: SumReport::default(),
    };
    let sound = with_simd(SoundVertices {
        bytes: data.get(start..end)?,
        block,
        num_bones,
        vertices: &mut vertices,
        order: PhantomData::<E>,
    });
    sound.then_some(vertices)
}

struct SoundVertices<'a, E> {
    bytes: &'a [u8],
    block: &'a VertexBlock,
    num_bones: u32,
    vertices: &'a mut Vertices,
    order: PhantomData<E>,
}

impl<E: ByteOrder> Kernel for SoundVertices<'_, E> {
    type Output = bool;
    #[inline(always)]
    fn run(self) -> bool {
        let out = self.vertices;
        let (Ok(num_verts), Ok(total)) = (
            usize::try_from(self.block.num_verts),
            usize::try_from(self.block.influences),
        ) else {
            return false;
        };
        // Written into the room reserved for them, with the counts kept in registers: pushing
        // kept each vector's length in memory, a load and a store per influence and vertex.
        // The block lies inside the data, so its counts are bounded by the file's size.
        out.influence_start.reserve(num_verts.saturating_add(1));
        out.influences.reserve(total);
        let Some((first_start, starts)) = out
            .influence_start
            .spare_capacity_mut()
            .get_mut(..num_verts.saturating_add(1))
            .and_then(|s| s.split_first_mut())
        else {
            return false;
        };
        let Some(room) = out.influences.spare_capacity_mut().get_mut(..total) else {
            return false;
        };
        first_start.write(0);
        // Per word of an influence, the largest seen: of the floats without their sign, so
        // that only a NaN or an infinity is above MAX_FINITE_BITS, and of the bone as it is.
        let mut largest = [0u32; 8];
        let mut rest = self.bytes;
        let mut done = 0usize;
        for (v, start) in (0u32..).zip(starts.iter_mut()) {
            let vertex_at = self.bytes.len().saturating_sub(rest.len());
            let Some((count, tail)) = rest.split_first_chunk::<4>() else {
                return false;
            };
            let n = E::read_u32(count) as usize;
            // Within the room measured or guessed for the block.
            let (Some((records, tail)), Some(slots)) = (
                n.checked_mul(INFLUENCE_SIZE as usize)
                    .and_then(|len| tail.split_at_checked(len)),
                done.checked_add(n).and_then(|end| room.get_mut(done..end)),
            ) else {
                return false;
            };
            rest = tail;
            done = done.saturating_add(n);
            let mut sum = 0.0f32;
            for (slot, record) in slots.iter_mut().zip(records.as_chunks::<32>().0) {
                let mut words = [0u32; 8];
                for ((word, bytes), (most, mask)) in words
                    .iter_mut()
                    .zip(record.as_chunks::<4>().0)
                    .zip(largest.iter_mut().zip(LARGEST_MASK))
                {
                    *word = E::read_u32(bytes);
                    *most = (*most).max(*word & mask);
                }
                let influence = influence_of(words);
                // In file order, from 0, as the engine sums them.
                sum += influence.weight;
                slot.write(influence);
            }
            let (off, rejected) = sum_off(sum);
            if rejected {
                return false;
            }
            if off > SUM_EXACT {
                let at = record_at(self.block.offset.into(), vertex_at, 1);
                out.sums.note(v, sum, off, at);
            }
            // At most the block's influence count, which is a u32.
            start.write(u32::try_from(done).unwrap_or(u32::MAX));
        }
        let [floats @ .., bone] = largest;
        let sound = rest.is_empty()
            && done == total
            && floats.iter().all(|&x| x <= MAX_FINITE_BITS)
            && bone < self.num_bones;
        if sound {
            // SAFETY: the loop above went through every vertex (it returns early otherwise),
            // writing the first start and one per vertex, `num_verts + 1` in all, and the
            // influences' first `done` slots (each vertex's own, from where the last ended),
            // which is `total`; both are within the capacities reserved above.
            unsafe {
                out.influence_start.set_len(num_verts.saturating_add(1));
                out.influences.set_len(total);
            }
        }
        sound
    }
}

/// What [`SoundVertices`] keeps of each word of an influence for its largest.
const LARGEST_MASK: [u32; 8] = [
    !(1 << 31),
    !(1 << 31),
    !(1 << 31),
    !(1 << 31),
    !(1 << 31),
    !(1 << 31),
    !(1 << 31),
    !0,
];

/// [`read_vertices`] for a block with something to report: each influence and each vertex is
/// checked in file order, and reported at its byte; when validating, zero numbers and bone 0
/// stand in for what is wrong, and the walk goes on. The block was measured.
fn check_vertices<E: ByteOrder>(
    data: &[u8],
    block: &VertexBlock,
    num_bones: u32,
    m: usize,
    ck: &mut Checker,
) -> Result<Vertices> {
    // The measured block lies inside the data: the counts are bounded by the file's size.
    let mut out = Vertices {
        influence_start: Vec::with_capacity((block.num_verts as usize).saturating_add(1)),
        influences: Vec::with_capacity(block.influences as usize),
        sums: SumReport::default(),
    };
    let mut c = Cursor::<E>::at(data, block.offset.into())?;
    let mut done = 0u32;
    out.influence_start.push(done);
    for v in 0..block.num_verts {
        let vertex_at = c.pos();
        let n = c.u32()?;
        let influences = c.records(n.into(), INFLUENCE_SIZE)?;
        let first = out.influences.len();
        out.influences
            .extend(influences.as_chunks::<32>().0.iter().map(|record| {
                let mut words = [0u32; 8];
                decode_few::<E, u32>(record, &mut words);
                influence_of(words)
            }));
        let vertex = out.influences.get_mut(first..).unwrap_or_default();
        check_influences(vertex, vertex_at, num_bones, m, v, ck)?;
        let sum = vertex.iter().fold(0.0f32, |sum, i| sum + i.weight);
        let (off, rejected) = sum_off(sum);
        if rejected {
            ck.problem(
                Error::malformed(format!(
                    "mesh {m} vertex {v}: {n} influences sum to {sum} (must be 1 within {SUM_TOLERATED})"
                ))
                .at(vertex_at),
            )?;
        } else {
            out.sums.note(v, sum, off, vertex_at);
        }
        // At most the measured count, which the file's bytes bound far below u32's end.
        done = done.saturating_add(n);
        out.influence_start.push(done);
    }
    Ok(out)
}

/// The slow path of one vertex whose influences hold a NaN, an infinity or a bone out of range:
/// each is reported at its byte, and replaced (zero numbers, bone 0) when validating.
fn check_influences(
    influences: &mut [Influence],
    vertex_at: u64,
    num_bones: u32,
    m: usize,
    v: u32,
    ck: &mut Checker,
) -> Result<()> {
    for (k, i) in influences.iter_mut().enumerate() {
        let at = record_at(vertex_at.saturating_add(4), k, INFLUENCE_SIZE);
        let [ox, oy, oz] = i.origin;
        let [nx, ny, nz] = i.normal;
        let floats = [ox, oy, oz, i.weight, nx, ny, nz];
        if let Some((j, x)) = floats.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            ck.problem(
                Error::malformed(format!(
                    "mesh {m} vertex {v} influence {k}: {x} is not a finite number"
                ))
                .at(record_at(at, j, 4)),
            )?;
            *i = Influence {
                bone: i.bone,
                ..Influence::default()
            };
        }
        if i.bone >= num_bones {
            ck.problem(
                Error::malformed(format!(
                    "mesh {m} vertex {v} influence {k}: bone {} out of range (model has {num_bones} bones)",
                    i.bone
                ))
                .at(at.saturating_add(28)),
            )?;
            i.bone = 0;
        }
    }
    Ok(())
}

/// A mesh's texcoords: two finite floats per vertex.
pub(crate) fn read_texcoords<E: ByteOrder>(
    data: &[u8],
    offset: u32,
    num_verts: u32,
    m: usize,
    ck: &mut Checker,
) -> Result<Vec<[f32; 2]>> {
    let bytes = table(data, offset, num_verts, 8, Part::Texcoords(m as u32))?;
    let (mut texcoords, nonfinite) = decode_table::<E, f32, 2>(bytes, num_verts);
    if nonfinite {
        for (v, uv) in texcoords.iter_mut().enumerate() {
            if let Some(j) = uv.iter().position(|x| !x.is_finite()) {
                ck.problem(
                    Error::malformed(format!(
                        "mesh {m} vertex {v}: texcoord is not a finite number"
                    ))
                    .at(record_at(record_at(offset.into(), v, 8), j, 4)),
                )?;
                *uv = [0.0; 2];
            }
        }
    }
    Ok(texcoords)
}

/// A mesh's triangles, each corner below `num_verts`; `reverse` swaps the last two corners of
/// files whose front faces are clockwise.
pub(crate) fn read_triangles<E: ByteOrder>(
    data: &[u8],
    offset: u32,
    num_tris: u32,
    num_verts: u32,
    reverse: bool,
    m: usize,
    ck: &mut Checker,
) -> Result<Vec<u32>> {
    let bytes = table(data, offset, num_tris, 12, Part::Indices(m as u32))?;
    let (mut triangles, _) = decode_table::<E, u32, 3>(bytes, num_tris);
    // The largest corner, in one pass without an early exit, which vectorizes.
    let largest = triangles.as_flattened().iter().fold(0, |a, &i| a.max(i));
    if num_tris > 0 && largest >= num_verts {
        for (t, tri) in triangles.iter_mut().enumerate() {
            for (i, corner) in tri.iter_mut().enumerate() {
                if *corner >= num_verts {
                    ck.problem(
                        Error::malformed(format!(
                            "mesh {m} triangle {t} corner {i}: vertex {corner} out of range (mesh has {num_verts} vertices)"
                        ))
                        .at(record_at(record_at(offset.into(), t, 12), i, 4)),
                    )?;
                    *corner = 0;
                }
            }
        }
    }
    if reverse {
        for tri in &mut triangles {
            let [a, b, c] = *tri;
            *tri = [a, c, b];
        }
    }
    Ok(triangles.into_flattened())
}

/// A table of `count` 32-bit words, as stored.
pub(crate) fn read_words<E: ByteOrder>(
    data: &[u8],
    offset: u32,
    count: u32,
    part: Part,
) -> Result<Vec<u32>> {
    let bytes = table(data, offset, count, 4, part)?;
    let (words, _) = decode_table::<E, u32, 1>(bytes, count);
    Ok(words.into_flattened())
}

/// Writes a mesh's vertex block: per vertex its influence count, then its influences.
pub(crate) fn put_vertices<E: ByteOrder>(out: &mut Vec<u8>, mesh: &Mesh) {
    for v in 0..mesh.vertex_count() {
        let influences = mesh.influences(v);
        put_u32::<E>(out, influences.len() as u32);
        for i in influences {
            for x in i.origin {
                put_f32::<E>(out, x);
            }
            put_f32::<E>(out, i.weight);
            for x in i.normal {
                put_f32::<E>(out, x);
            }
            put_u32::<E>(out, i.bone);
        }
    }
}

/// Bytes of a mesh's vertex block as [`put_vertices`] writes it.
pub(crate) fn vertex_bytes(mesh: &Mesh) -> u64 {
    records_len(mesh.vertex_count(), 4)
        .saturating_add(records_len(mesh.all_influences().len(), INFLUENCE_SIZE))
}
