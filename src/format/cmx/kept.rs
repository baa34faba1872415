//! A character file's skeleton as a model keeps it for saving.

use super::{Bone, PropertyList, Skeleton};
use crate::model::Name;

/// What a character file's skeleton holds that a model has no place for, kept with the model
/// ([`Kept::cmx_skeleton`](crate::model::Kept::cmx_skeleton)) so that saving it as CMX or BCF
/// writes the file's own: the skeleton's name and, per bone (by name), its flags, wiggle values,
/// property lists and stored quaternion. The translation is the rest pose's (a pose holds it
/// exactly) and the parent the model's: neither is kept twice.
#[derive(Clone, Debug, PartialEq)]
pub struct KeptSkeleton {
    name: Name,
    bones: Vec<KeptBone>,
    /// Every bone's name, one after another: bone `b`'s ends at `name_ends[b]`.
    names: Vec<u8>,
    name_ends: Vec<u32>,
    /// The property lists of the bones that have any, by bone.
    property_lists: Vec<(u32, Vec<PropertyList>)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct KeptBone {
    rotation: [f32; 4],
    wiggle: [f32; 2],
    /// Can-translate, can-rotate and can-blend, bits 0, 1 and 2.
    flags: u8,
}

const CAN_TRANSLATE: u8 = 1;
const CAN_ROTATE: u8 = 2;
const CAN_BLEND: u8 = 4;

impl KeptSkeleton {
    /// The record of `skeleton`, which it takes apart (its property lists move, not copied).
    pub fn new(skeleton: Skeleton) -> KeptSkeleton {
        let n = skeleton.bones.len();
        let mut kept = KeptSkeleton {
            name: skeleton.name,
            bones: Vec::with_capacity(n),
            names: Vec::with_capacity(
                (skeleton.bones.iter())
                    .fold(0usize, |s, b| s.saturating_add(b.name.as_bytes().len())),
            ),
            name_ends: Vec::with_capacity(n),
            property_lists: Vec::new(),
        };
        for (b, bone) in skeleton.bones.into_iter().enumerate() {
            let flag = |set: bool, bit: u8| if set { bit } else { 0 };
            let flags = flag(bone.can_translate, CAN_TRANSLATE)
                | flag(bone.can_rotate, CAN_ROTATE)
                | flag(bone.can_blend, CAN_BLEND);
            kept.bones.push(KeptBone {
                rotation: bone.rotation,
                wiggle: [bone.wiggle_value, bone.wiggle_power],
                flags,
            });
            kept.names.extend_from_slice(bone.name.as_bytes());
            // A skeleton's names came from a file, which a 32-bit count of bytes sizes.
            kept.name_ends
                .push(u32::try_from(kept.names.len()).unwrap_or(u32::MAX));
            if !bone.property_lists.is_empty() {
                kept.property_lists
                    .push((u32::try_from(b).unwrap_or(u32::MAX), bone.property_lists));
            }
        }
        kept
    }

    /// The memory [`KeptSkeleton::new`] takes for `skeleton`, itself and on the heap (charged to
    /// a load's limit before it is made).
    pub(crate) fn bytes_for(skeleton: &Skeleton) -> u64 {
        let per_bone = (size_of::<KeptBone>() as u64).saturating_add(size_of::<u32>() as u64);
        let mut total = size_of::<KeptSkeleton>() as u64;
        for bone in &skeleton.bones {
            total = total
                .saturating_add(per_bone)
                .saturating_add(bone.name.as_bytes().len() as u64);
            if !bone.property_lists.is_empty() {
                total = total.saturating_add(lists_bytes(&bone.property_lists));
            }
        }
        total
    }

    /// Its memory, itself and on the heap.
    pub(crate) fn heap_bytes(&self) -> usize {
        let lists = (self.property_lists.iter())
            .map(|(_, l)| lists_bytes(l) as usize)
            .fold(0usize, usize::saturating_add);
        [
            size_of::<KeptSkeleton>(),
            self.name.heap_bytes(),
            self.bones.capacity().saturating_mul(size_of::<KeptBone>()),
            self.names.capacity(),
            self.name_ends.capacity().saturating_mul(size_of::<u32>()),
            lists,
        ]
        .into_iter()
        .fold(0, usize::saturating_add)
    }

    /// The skeleton's name.
    pub fn name(&self) -> &Name {
        &self.name
    }

    /// How many bones it has.
    pub fn len(&self) -> usize {
        self.bones.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bones.is_empty()
    }

    /// Bone `b`'s name; empty past the last.
    pub fn bone_name(&self, b: usize) -> &[u8] {
        let end = self.name_ends.get(b).map_or(0, |&e| e as usize);
        let start = match b.checked_sub(1) {
            Some(p) => self.name_ends.get(p).map_or(0, |&e| e as usize),
            None => 0,
        };
        self.names.get(start..end).unwrap_or_default()
    }

    /// Bone `b` as the file held it, but for what a model keeps itself: no parent (`parent`
    /// None, `parent_index` -1) and translation 0.
    pub fn bone(&self, b: usize) -> Option<Bone> {
        let kept = self.bones.get(b)?;
        let b32 = u32::try_from(b).ok()?;
        let property_lists = (self.property_lists)
            .binary_search_by_key(&b32, |(k, _)| *k)
            .ok()
            .and_then(|at| self.property_lists.get(at))
            .map(|(_, l)| l.clone())
            .unwrap_or_default();
        Some(Bone {
            name: Name::new(self.bone_name(b)),
            parent: None,
            parent_index: -1,
            translation: [0.0; 3],
            rotation: kept.rotation,
            can_translate: kept.flags & CAN_TRANSLATE != 0,
            can_rotate: kept.flags & CAN_ROTATE != 0,
            can_blend: kept.flags & CAN_BLEND != 0,
            wiggle_value: kept.wiggle[0],
            wiggle_power: kept.wiggle[1],
            property_lists,
        })
    }
}

/// The memory property lists take, beside their bone.
fn lists_bytes(lists: &[PropertyList]) -> u64 {
    let mut total = 0u64;
    for list in lists {
        total = total.saturating_add(size_of::<PropertyList>() as u64);
        for p in list {
            total = total
                .saturating_add(size_of::<super::Property>() as u64)
                .saturating_add(p.key.heap_bytes() as u64)
                .saturating_add(p.value.heap_bytes() as u64);
        }
    }
    total
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_skeleton_gives_back_its_bones_but_translations_and_parents() {
        let bone = |name: &str, lists: Vec<PropertyList>, flags: [bool; 3]| Bone {
            name: Name::from(name),
            parent: Some(Name::from("ROOT")),
            parent_index: 0,
            translation: [1.0, 2.0, 3.0],
            rotation: [0.0, 0.6, 0.0, 0.8],
            can_translate: flags[0],
            can_rotate: flags[1],
            can_blend: flags[2],
            wiggle_value: 0.5,
            wiggle_power: 2.0,
            property_lists: lists,
        };
        let lists = vec![vec![super::super::Property {
            key: Name::from("k"),
            value: Name::from("v"),
        }]];
        let skeleton = Skeleton {
            name: Name::from("adult"),
            bones: vec![
                bone("ROOT", Vec::new(), [true, false, true]),
                bone("", Vec::new(), [false, false, false]),
                bone("HEAD", lists.clone(), [false, true, false]),
            ],
        };
        let bytes = KeptSkeleton::bytes_for(&skeleton);
        let kept = KeptSkeleton::new(skeleton.clone());
        assert!(kept.heap_bytes() as u64 <= bytes + 64, "{bytes}");
        assert_eq!(kept.name().to_string(), "adult");
        assert_eq!(kept.len(), 3);
        assert_eq!(kept.bone_name(2), b"HEAD");
        assert_eq!(kept.bone_name(1), b"");
        assert_eq!(kept.bone_name(3), b"");
        for (b, original) in skeleton.bones.iter().enumerate() {
            let back = kept.bone(b).unwrap();
            assert_eq!(
                Bone {
                    parent: original.parent.clone(),
                    parent_index: original.parent_index,
                    translation: original.translation,
                    ..back
                },
                *original
            );
        }
        assert!(kept.bone(3).is_none());
    }
}
