//! An O(1) lookup from a name to the first index that bears it. It holds only indices (the names
//! stay in the bones and frames they belong to) and hashes with a per-model random key, so that
//! names crafted to collide cannot slow a load down.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

const EMPTY: u32 = u32::MAX;

#[derive(Debug)]
pub(crate) struct NameIndex {
    slots: Box<[u32]>,
    hasher: RandomState,
}

impl NameIndex {
    /// Indexes `count` names, `name_of(i)` giving the i-th; the first of equal names wins.
    pub fn build<'a>(count: usize, name_of: impl Fn(usize) -> &'a [u8]) -> NameIndex {
        let size = (count * 2).max(8).next_power_of_two();
        let mut index = NameIndex {
            slots: vec![EMPTY; size].into_boxed_slice(),
            hasher: RandomState::new(),
        };
        let mask = size - 1;
        for i in 0..count.min(EMPTY as usize) {
            let name = name_of(i);
            let mut at = index.hasher.hash_one(name) as usize & mask;
            loop {
                match index.slots.get(at).copied() {
                    Some(EMPTY) => {
                        if let Some(slot) = index.slots.get_mut(at) {
                            *slot = i as u32;
                        }
                        break;
                    }
                    Some(j) if name_of(j as usize) == name => break,
                    Some(_) => at = (at + 1) & mask,
                    None => break,
                }
            }
        }
        index
    }

    pub fn find<'a>(&self, name: &[u8], name_of: impl Fn(usize) -> &'a [u8]) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut at = self.hasher.hash_one(name) as usize & mask;
        loop {
            match self.slots.get(at).copied() {
                None | Some(EMPTY) => return None,
                Some(j) if name_of(j as usize) == name => return Some(j),
                Some(_) => at = (at + 1) & mask,
            }
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.slots.len() * 4
    }
}

#[cfg(test)]
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
}
