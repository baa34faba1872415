//! An O(1) lookup from a name to the first index that bears it, exactly or ignoring ASCII case
//! (as The Sims matches bone names). It holds only indices (the names stay in the bones and
//! frames they belong to) and hashes with a per-model random key, so that names crafted to
//! collide cannot slow a load down: a fast keyed hash first, and SipHash (std's hasher, built
//! against such attacks) for a model where a probe runs long.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher as _};

const EMPTY: u32 = u32::MAX;

/// A probe this long, in a table at most half full, is all but impossible with a good hash of
/// real names: the names were chosen to collide, and the index starts over with SipHash.
const LONGEST_PROBE: usize = 48;

#[derive(Debug)]
enum Hasher {
    /// A multiply-and-rotate hash keyed with 64 random bits: several times faster than SipHash
    /// on short names, which a model has thousands of.
    Quick(u64),
    Sip(RandomState),
}

impl Hasher {
    fn hash(&self, name: &[u8], case: Case) -> usize {
        match (self, case) {
            (Hasher::Quick(key), _) => quick_hash(*key, name, case) as usize,
            (Hasher::Sip(state), Case::Exact) => state.hash_one(name) as usize,
            (Hasher::Sip(state), Case::Folded) => {
                let mut h = state.build_hasher();
                h.write_usize(name.len());
                for chunk in name.chunks(32) {
                    let mut lower = [0u8; 32];
                    for (l, c) in lower.iter_mut().zip(chunk) {
                        *l = c.to_ascii_lowercase();
                    }
                    h.write(lower.get(..chunk.len()).unwrap_or_default());
                }
                h.finish() as usize
            }
        }
    }
}

/// How names compare: byte for byte, or ignoring ASCII case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Case {
    Exact,
    Folded,
}

impl Case {
    fn same(self, a: &[u8], b: &[u8]) -> bool {
        match self {
            Case::Exact => a == b,
            Case::Folded => a.eq_ignore_ascii_case(b),
        }
    }
}

// Hashing wraps by design.
const MUL_A: u64 = 0x9e37_79b9_7f4a_7c15;
const MUL_B: u64 = 0xff51_afd7_ed55_8ccd;

/// Two lanes of 8 bytes, mixed independently so that their multiplications overlap, then
/// folded together; for `Case::Folded`, of the name in ASCII lower case.
fn quick_hash(key: u64, name: &[u8], case: Case) -> u64 {
    let mut a = key ^ (name.len() as u64).wrapping_mul(MUL_A);
    let mut b = key.rotate_left(32) ^ MUL_B;
    let (blocks, tail) = name.as_chunks::<16>();
    let mut last = [0u8; 16];
    for (l, t) in last.iter_mut().zip(tail) {
        *l = *t;
    }
    for block in blocks.iter().chain([&last]) {
        let mut block = *block;
        if case == Case::Folded {
            block.make_ascii_lowercase();
        }
        let (lo, hi) = block.split_at(8);
        let word = |half: &[u8]| half.try_into().map_or(0, u64::from_le_bytes);
        a = (a ^ word(lo)).wrapping_mul(MUL_A).rotate_left(29);
        b = (b ^ word(hi)).wrapping_mul(MUL_B).rotate_left(31);
    }
    let h = (a ^ b.rotate_left(17)).wrapping_mul(MUL_B);
    h ^ (h >> 31)
}

#[derive(Debug)]
pub(crate) struct NameIndex {
    slots: Box<[u32]>,
    hasher: Hasher,
    case: Case,
}

impl NameIndex {
    /// Indexes `count` names, `name_of(i)` giving the i-th; the first of equal names wins.
    pub fn build<'a>(count: usize, name_of: impl Fn(usize) -> &'a [u8]) -> NameIndex {
        NameIndex::build_as(count, &name_of, Case::Exact)
    }

    /// Indexes `count` names to be found ignoring ASCII case; the first of names equal but for
    /// case wins.
    pub fn build_ignoring_case<'a>(count: usize, name_of: impl Fn(usize) -> &'a [u8]) -> NameIndex {
        NameIndex::build_as(count, &name_of, Case::Folded)
    }

    fn build_as<'a>(count: usize, name_of: &impl Fn(usize) -> &'a [u8], case: Case) -> NameIndex {
        let random = RandomState::new();
        let key = random.hash_one(count);
        NameIndex::fill(count, name_of, Hasher::Quick(key), case)
            .or_else(|| NameIndex::fill(count, name_of, Hasher::Sip(random), case))
            .unwrap_or_else(|| NameIndex {
                slots: Box::new([]),
                hasher: Hasher::Quick(key),
                case,
            })
    }

    /// The index with `hasher`, or None when a quick hash's probe runs past LONGEST_PROBE.
    fn fill<'a>(
        count: usize,
        name_of: &impl Fn(usize) -> &'a [u8],
        hasher: Hasher,
        case: Case,
    ) -> Option<NameIndex> {
        // At most half full, so that a probe ends soon. The names come from a file's tables, so
        // `count` is far from overflowing; saturating keeps that true of any caller.
        let size = count
            .saturating_mul(2)
            .max(8)
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX / 2 + 1);
        let bounded = matches!(hasher, Hasher::Quick(_));
        let mut index = NameIndex {
            slots: vec![EMPTY; size].into_boxed_slice(),
            hasher,
            case,
        };
        let mask = index.mask();
        for i in 0..count.min(EMPTY as usize) {
            let name = name_of(i);
            let mut at = index.hasher.hash(name, case) & mask;
            for probe in 0.. {
                if bounded && probe > LONGEST_PROBE {
                    return None;
                }
                match index.slots.get(at).copied() {
                    Some(EMPTY) => {
                        if let Some(slot) = index.slots.get_mut(at) {
                            *slot = i as u32;
                        }
                        break;
                    }
                    Some(j) if case.same(name_of(j as usize), name) => break,
                    Some(_) => at = at.wrapping_add(1) & mask,
                    None => break,
                }
            }
        }
        Some(index)
    }

    /// The first index whose name is `name` (ignoring ASCII case for an index built so).
    pub fn find<'a>(&self, name: &[u8], name_of: impl Fn(usize) -> &'a [u8]) -> Option<u32> {
        let mask = self.mask();
        let mut at = self.hasher.hash(name, self.case) & mask;
        // The table is at most half full: the probe meets an empty slot.
        loop {
            match self.slots.get(at).copied() {
                None | Some(EMPTY) => return None,
                Some(j) if self.case.same(name_of(j as usize), name) => return Some(j),
                Some(_) => at = at.wrapping_add(1) & mask,
            }
        }
    }

    /// Slots are a power of two (at least 8), so the mask keeps a probe inside them.
    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.slots)
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_of_equal_names_and_nothing_else() {
        let names: Vec<&[u8]> = vec![b"root", b"spine", b"head", b"spine", b""];
        let index = NameIndex::build(names.len(), |i| names[i]);
        let find = |n: &[u8]| index.find(n, |i| names[i]);
        assert_eq!(find(b"root"), Some(0));
        assert_eq!(find(b"spine"), Some(1));
        assert_eq!(find(b"head"), Some(2));
        assert_eq!(find(b""), Some(4));
        assert_eq!(find(b"tail"), None);
    }

    #[test]
    fn ignoring_case_finds_the_first_of_names_equal_but_for_case() {
        let names: Vec<&[u8]> = vec![
            b"Pelvis",
            b"R_Thigh",
            b"PELVIS",
            b"pelvis",
            b"a_long_name_past_16_bytes_X",
        ];
        let index = NameIndex::build_ignoring_case(names.len(), |i| names[i]);
        let find = |n: &[u8]| index.find(n, |i| names[i]);
        assert_eq!(find(b"pelvis"), Some(0));
        assert_eq!(find(b"PELVIS"), Some(0));
        assert_eq!(find(b"r_thigh"), Some(1));
        assert_eq!(find(b"A_LONG_NAME_PAST_16_BYTES_x"), Some(4));
        assert_eq!(find(b"a_long_name_past_16_bytes_"), None);
        // Only ASCII letters fold: a byte past 0x7f is matched as it is.
        assert_eq!(find(b"PELV\xc9S"), None);
        let exact = NameIndex::build(names.len(), |i| names[i]);
        assert_eq!(exact.find(b"pelvis", |i| names[i]), Some(3));
        assert_eq!(exact.find(b"Pelvis", |i| names[i]), Some(0));
    }

    #[test]
    fn names_that_collide_ignoring_case_fall_back_to_siphash() {
        let key = 11;
        let names: Vec<Vec<u8>> = (0u32..)
            .map(|i| format!("Bone{i}").into_bytes())
            .filter(|n| quick_hash(key, n, Case::Folded) & 127 == 0)
            .take(60)
            .collect();
        let quick = NameIndex::fill(
            names.len(),
            &|i| &names[i],
            Hasher::Quick(key),
            Case::Folded,
        );
        assert!(quick.is_none());
        let sip = NameIndex::fill(
            names.len(),
            &|i| &names[i],
            Hasher::Sip(RandomState::new()),
            Case::Folded,
        );
        let index = sip.unwrap();
        for (i, n) in names.iter().enumerate() {
            let upper = n.to_ascii_uppercase();
            assert_eq!(index.find(&upper, |j| &names[j]), Some(i as u32));
        }
    }

    #[test]
    fn many_names() {
        let names: Vec<Vec<u8>> = (0..5000)
            .map(|i| format!("frame{i}").into_bytes())
            .collect();
        let index = NameIndex::build(names.len(), |i| &names[i]);
        for (i, n) in names.iter().enumerate() {
            assert_eq!(index.find(n, |j| &names[j]), Some(i as u32));
        }
        let empty = NameIndex::build(0, |_| b"");
        assert_eq!(empty.find(b"x", |_| b""), None);
    }

    #[test]
    fn names_that_collide_under_the_quick_key_fall_back_to_siphash() {
        // 60 names whose quick hash under key 7 lands in slot 0 of a 128-slot table: the probe
        // for the last ones runs past LONGEST_PROBE.
        let key = 7;
        let names: Vec<Vec<u8>> = (0u32..)
            .map(|i| format!("bone{i}").into_bytes())
            .filter(|n| quick_hash(key, n, Case::Exact) & 127 == 0)
            .take(60)
            .collect();
        assert!(
            NameIndex::fill(names.len(), &|i| &names[i], Hasher::Quick(key), Case::Exact).is_none()
        );
        let sip = NameIndex::fill(
            names.len(),
            &|i| &names[i],
            Hasher::Sip(RandomState::new()),
            Case::Exact,
        );
        let index = sip.unwrap();
        for (i, n) in names.iter().enumerate() {
            assert_eq!(index.find(n, |j| &names[j]), Some(i as u32));
        }
        assert_eq!(index.find(b"bone", |j| &names[j]), None);
    }
}
