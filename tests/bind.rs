//! Meshes that come without their skeleton (SKM, Sims meshes) bind to one by index or by name,
//! share it in memory, and then skin exactly as the model they were split from.

use ossa::synth::TubeRig;
use ossa::{BoneSlots, ErrorCode, FrameBlend, Mat3x4, Model, ModelParts, Name, Poses, Strided};

fn skeleton_only(parts: &ModelParts) -> Model {
    let mut p = parts.clone();
    p.meshes.clear();
    Model::from_parts(p).unwrap()
}

fn meshes_only(parts: &ModelParts, slots: BoneSlots) -> ModelParts {
    let mut p = parts.clone();
    p.bones.clear();
    p.frames.clear();
    p.poses = Poses::default();
    p.animations.clear();
    p.unbound = Some(slots);
    p
}

fn skin(model: &Model, frame: u32) -> Vec<f32> {
    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(&[FrameBlend { frame, weight: 1.0 }], None, &mut bones)
        .unwrap();
    let n = model.meshes()[0].vertex_count();
    let mut out = vec![0.0f32; n * 3];
    let mut normals = vec![0.0f32; n * 3];
    let mut target = Strided::new(&mut out, 3)
        .unwrap()
        .with_normals(&mut normals, 3)
        .unwrap();
    model.skin_mesh(0, &bones, 0, n, 0, &mut target).unwrap();
    out.extend_from_slice(&normals);
    out
}

#[test]
fn binding_by_index_skins_like_the_whole_model() {
    let parts = TubeRig::default().parts();
    let whole = Model::from_parts(parts.clone()).unwrap();
    let skeleton = skeleton_only(&parts);
    let meshes = Model::from_parts(meshes_only(&parts, BoneSlots::ByIndex(5))).unwrap();
    assert_eq!(meshes.unbound(), Some(&BoneSlots::ByIndex(5)));
    assert!(meshes.bones().is_empty());

    let bound = Model::bind(&meshes, &skeleton).unwrap();
    assert!(bound.unbound().is_none());
    assert_eq!(bound.bones().len(), 5);
    assert_eq!(bound.frames().len(), 4);
    assert_eq!(bound.bounds(), whole.bounds());
    for frame in 0..4 {
        assert_eq!(skin(&bound, frame), skin(&whole, frame), "frame {frame}");
    }

    // A second mesh set (a LOD) bound to the same skeleton shares it.
    let lod = Model::bind(&meshes, &skeleton).unwrap();
    assert!(lod.shares_skeleton(&bound));
    assert!(bound.shares_skeleton(&skeleton));
    assert!(!whole.shares_skeleton(&bound));
}

#[test]
fn binding_by_name_ignores_case_and_order() {
    let mut parts = TubeRig::default().parts();
    let whole = Model::from_parts(parts.clone()).unwrap();
    // The meshes list the bones in reverse order, in upper case.
    let names: Vec<Name> = (0..5)
        .rev()
        .map(|i| Name::from(format!("BONE{i}").as_str()))
        .collect();
    for inf in &mut parts.meshes[0].influences {
        inf.bone = 4 - inf.bone;
    }
    let meshes = Model::from_parts(meshes_only(&parts, BoneSlots::ByName(names))).unwrap();
    let bound = Model::bind(&meshes, &skeleton_only(&TubeRig::default().parts())).unwrap();
    assert_eq!(skin(&bound, 2), skin(&whole, 2));
}

#[test]
fn binding_errors_say_what_does_not_fit() {
    let parts = TubeRig::default().parts();
    let skeleton = skeleton_only(&parts);
    let whole = Model::from_parts(parts.clone()).unwrap();

    let six = Model::from_parts(meshes_only(&parts, BoneSlots::ByIndex(6))).unwrap();
    let e = Model::bind(&six, &skeleton).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Mismatch);
    assert!(e.to_string().contains("6 bones"), "{e}");

    let mut names: Vec<Name> = (0..5)
        .map(|i| Name::from(format!("bone{i}").as_str()))
        .collect();
    names[3] = Name::from("tail");
    let missing = Model::from_parts(meshes_only(&parts, BoneSlots::ByName(names))).unwrap();
    let e = Model::bind(&missing, &skeleton).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert!(e.to_string().contains("\"tail\""), "{e}");

    // Bound meshes do not bind again; a model without bones is no skeleton.
    assert_eq!(
        Model::bind(&whole, &skeleton).unwrap_err().code(),
        ErrorCode::Mismatch
    );
    let meshes = Model::from_parts(meshes_only(&parts, BoneSlots::ByIndex(5))).unwrap();
    assert_eq!(
        Model::bind(&meshes, &meshes).unwrap_err().code(),
        ErrorCode::Mismatch
    );

    // Unbound meshes cannot be skinned, and a slot past the list is rejected at build time.
    let mut out = vec![0.0f32; 3];
    let mut target = Strided::new(&mut out, 3).unwrap();
    let e = meshes.skin_mesh(0, &[], 0, 1, 0, &mut target).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        Model::from_parts(meshes_only(&parts, BoneSlots::ByIndex(2)))
            .unwrap_err()
            .code(),
        ErrorCode::Malformed
    );
}
