//! The invariants every loaded model keeps, whatever bytes it came from: for the tests of broken
//! and hostile input. Each test binary that uses it adds `mod invariants;`.

use ossa::{BoneSlots, Model};

/// Parents earlier or -1, every frame a finite pose per bone, every index inside its mesh, every
/// influence on a bone the model (or its slots) has, with finite numbers.
pub fn check_invariants(m: &Model, what: &str) {
    let slots = match m.unbound() {
        Some(BoneSlots::ByIndex(n)) => *n as usize,
        Some(BoneSlots::ByName(names)) => names.len(),
        None => m.bones().len(),
    };
    for (i, b) in m.bones().iter().enumerate() {
        assert!(
            b.parent == -1 || (b.parent >= 0 && (b.parent as usize) < i),
            "{what}"
        );
    }
    for f in 0..m.frames().len() {
        let poses = m.skeleton().frame_poses(f).unwrap();
        assert_eq!(poses.len(), m.bones().len(), "{what}");
        assert!(poses.iter().all(|p| p.is_finite()), "{what}");
    }
    for mesh in m.meshes() {
        let vc = mesh.vertex_count();
        assert_eq!(mesh.indices().len() % 3, 0, "{what}");
        assert!(mesh.indices().iter().all(|&i| (i as usize) < vc), "{what}");
        assert!(
            mesh.all_influences()
                .iter()
                .all(|i| (i.bone as usize) < slots
                    && i.weight.is_finite()
                    && i.origin.iter().chain(&i.normal).all(|v| v.is_finite())),
            "{what}"
        );
        if let Some(r) = mesh.references() {
            assert!(r.iter().all(|&b| (b as usize) < slots), "{what}");
        }
    }
}
