//! A file loads only if every frame's model-space pose, every blend of frames, the bind pose's
//! inverses and the bounds stay within `MAX_MAGNITUDE` (1e9): then nothing a caller does with a
//! model that loaded (posing, blending, skinning, GPU matrices) yields an infinity or a NaN.
//! Each format's files are generated here, with poses that overflow when chained.

mod common;

use common::*;
use ossa::synth::TubeRig;
use ossa::{
    ErrorCode, Format, FrameBlend, LoadOptions, Mat3x4, Model, SKIN_NORMALIZE, Strided, skm,
};

fn load_as(bytes: &[u8], format: Format) -> ossa::Result<Model> {
    Model::load(
        bytes,
        &LoadOptions {
            format,
            ..LoadOptions::default()
        },
    )
}

/// The message of a load that must fail for a value beyond the range.
#[track_caller]
fn refused(bytes: &[u8], format: Format) -> String {
    match load_as(bytes, format) {
        Ok(_) => panic!("loaded"),
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::Limit, "{e}");
            e.to_string()
        }
    }
}

/// The chain fixture (root <- mid <- tip) with frame `f`'s poses replaced.
fn chain_with(f: usize, poses: [[f32; 12]; 3]) -> Vec<u8> {
    let mut fx = chain_fixture();
    fx.frames[f].poses = poses.to_vec();
    fx.build().0
}

#[test]
fn dpm_bind_pose_of_bones_translating_3e38_is_refused() {
    let t = tr(3e38, 0.0, 0.0);
    let e = refused(&chain_with(0, [t, t, t]), Format::Dpm);
    assert_eq!(
        e,
        "frame 0 (bind) bone 0 (root): its model-space pose (chained through the parents) \
         holds 3e38, beyond 1e9"
    );
}

#[test]
fn dpm_poses_that_overflow_only_when_chained_are_refused() {
    // Each pose alone is within range; chained, mid's origin is 1.2e9.
    let t = tr(6e8, 0.0, 0.0);
    let e = refused(&chain_with(0, [t, t, t]), Format::Dpm);
    assert_eq!(
        e,
        "frame 0 (bind) bone 1 (mid): its model-space pose (chained through the parents) \
         holds 1.2e9, beyond 1e9"
    );
    // A later frame: bend_b's tip, 3e38 from mid.
    let e = refused(
        &chain_with(2, [IDENT, tr(0.0, 0.0, 10.0), tr(0.0, 0.0, 3e38)]),
        Format::Dpm,
    );
    assert_eq!(
        e,
        "frame 2 (bend_b) bone 2 (tip): its model-space pose (chained through the parents) \
         holds 3e38, beyond 1e9"
    );
    // A scale chained into a translation overflows f32 itself: 1e20 * 1e20.
    let scaled = [1e20, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    let e = refused(
        &chain_with(1, [scaled, tr(1e20, 0.0, 0.0), IDENT]),
        Format::Dpm,
    );
    assert!(
        e.starts_with("frame 1 (bend_a) bone 0 (root): ") && e.ends_with("holds 1e20, beyond 1e9"),
        "{e}"
    );
}

#[test]
fn dpm_frames_whose_blends_can_overflow_are_refused() {
    // bend_a scales root by 1e5 and keeps mid 1 from it; bend_b keeps root and moves mid 1e5
    // away. Each frame alone stays within 1e5, but blended half and half, mid is 5e4 * 5e4
    // (2.5e9) from the origin: the file is refused, naming the bone.
    let mut big = IDENT;
    for k in [0, 5, 10] {
        big[k] = 1e5;
    }
    let mut fx = chain_fixture();
    fx.frames[1].poses = vec![big, tr(0.0, 0.0, 1.0), IDENT];
    fx.frames[2].poses = vec![IDENT, tr(0.0, 0.0, 1e5), IDENT];
    let e = refused(&fx.build().0, Format::Dpm);
    assert!(
        e.starts_with(
            "bone 1 (mid): a blend of frames can give it a model-space pose that holds 1.0000"
        ) && e.ends_with("e10, beyond 1e9"),
        "{e}"
    );
}

#[test]
fn dpm_influences_beyond_the_range_are_refused() {
    let (mut bytes, layout) = chain_fixture().build();
    set_f32(&mut bytes, layout.influence(0, 1, 1, 0), 2e9);
    let e = refused(&bytes, Format::Dpm);
    assert_eq!(
        e,
        "mesh 0: influence 2: origin, weight or normal holds 2e9, beyond 1e9"
    );
}

/// A 3-bone, 2-frame tube as SKP, and the byte of frame `f` bone `b`'s pose.
fn skp() -> (Vec<u8>, impl Fn(&[u8], usize, usize) -> usize) {
    let model = Model::from_parts(
        TubeRig {
            bones: 3,
            rings_per_bone: 1,
            sides: 3,
            frames: 2,
            ..TubeRig::default()
        }
        .parts(),
    )
    .unwrap();
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let pose = move |b: &[u8], f: usize, bone: usize| {
        let frames = u32_at(b, 24) as usize;
        u32_at(b, frames + 68 * f + 64) as usize + 28 * bone
    };
    (skm::write_skp(&model).unwrap(), pose)
}

#[test]
fn skp_origins_that_overflow_when_chained_are_refused() {
    let (mut bytes, pose) = skp();
    // Frame 1: every bone unrotated, 9e8 along x from its parent.
    for b in 0..3 {
        let at = pose(&bytes, 1, b);
        for (k, v) in [0.0f32, 0.0, 0.0, 1.0, 9e8, 0.0, 0.0].iter().enumerate() {
            bytes[at + 4 * k..at + 4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    let model = Model::from_parts(TubeRig::default().parts()).unwrap();
    let names = (model.frames()[1].name.to_string(), "bone1");
    let e = refused(&bytes, Format::Skp);
    assert!(
        e.ends_with(&format!(
            "frame 1 ({}) bone 1 ({}): its model-space pose (chained through the parents) \
             holds 1.8e9, beyond 1e9",
            names.0, names.1
        )),
        "{e}"
    );
}

/// The three-bone CMX skeleton of tests/sims_skills.rs, ROOT and CHEST moved by `root` and
/// `chest`.
fn cmx(root: &str, chest: &str) -> String {
    format!(
        "// Character File. Copyright 1997, Maxis Inc.
version 300
1
tiny
3
ROOT
NULL
0
| {root} |
| 0 0 0 1 |
1
1
0
0
0
CHEST
ROOT
0
| {chest} |
| 0 0 0 1 |
0
1
1
0
0
HEAD
CHEST
0
| 0 1 0 |
| 0 0.7071068 0 0.7071068 |
0
1
1
0
0
0
0
"
    )
}

#[test]
fn cmx_translations_that_overflow_are_refused() {
    assert!(load_as(cmx("0 3 0", "0 1 0").as_bytes(), Format::SimsCmx).is_ok());
    let e = refused(cmx("0 3e38 0", "0 1 0").as_bytes(), Format::SimsCmx);
    assert!(e.ends_with("bone 0 (ROOT): its model-space pose (chained through the parents) holds 3e38, beyond 1e9"), "{e}");
    assert!(e.contains("frame 0 ("), "{e}");
    let e = refused(cmx("0 9e8 0", "0 9e8 0").as_bytes(), Format::SimsCmx);
    assert!(e.ends_with("bone 1 (CHEST): its model-space pose (chained through the parents) holds 1.8e9, beyond 1e9"), "{e}");
}

/// Lines joined with LF, ending with one.
fn lines(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn mm2_offsets_that_overflow_are_refused() {
    let skel = |hips: &str, chest: &str| {
        lines(&[
            "NumBones 2",
            "bone hips {",
            &format!("\toffset {hips}"),
            "\tbone chest {",
            &format!("\t\toffset {chest}"),
            "\t}",
            "}",
        ])
    };
    assert!(load_as(skel("0 1 0", "0 0.5 0").as_bytes(), Format::Mm2Skel).is_ok());
    let e = refused(skel("0 3e38 0", "0 3e38 0").as_bytes(), Format::Mm2Skel);
    assert!(e.ends_with("bone 0 (hips): its model-space pose (chained through the parents) holds 3e38, beyond 1e9"), "{e}");
    // The reader names the offset's line.
    let e = load_as(skel("0 9e8 0", "0 9e8 0").as_bytes(), Format::Mm2Skel).unwrap_err();
    assert_eq!((e.code(), e.line()), (ErrorCode::Limit, Some(5)), "{e}");
    let e = e.to_string();
    assert!(e.ends_with("bone 1 (chest): its model-space pose (chained through the parents) holds 1.8e9, beyond 1e9"), "{e}");
    assert!(e.contains("frame 0 ("), "{e}");
}

#[test]
fn roots_beyond_the_range_are_refused() {
    let model = load_as(&chain_fixture().build().0, Format::Dpm).unwrap();
    let mut out = vec![Mat3x4::IDENTITY; 3];
    let blend = [FrameBlend {
        frame: 1,
        weight: 1.0,
    }];
    for v in [f32::INFINITY, f32::NAN, 3e38, -2e9] {
        let mut root = Mat3x4::IDENTITY;
        root.m[7] = v;
        let e = model
            .pose_frames(&blend, Some(&root), &mut out)
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{v}");
        assert_eq!(
            e.to_string(),
            format!("the root matrix holds {v:e}, beyond 1e9")
        );
        let local = vec![Mat3x4::IDENTITY; 3];
        let e = model
            .pose_concat(&local, Some(&root), &mut out)
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{v}");
    }
    // Caller-made local poses are held to the rule a file's frames are, before anything is
    // written: each within range, mid's chained 1.2e9 away.
    let far = Mat3x4::from_translation([6e8, 0.0, 0.0]);
    out.fill(Mat3x4::from_translation([7.0; 3]));
    let e = model.pose_concat(&[far; 3], None, &mut out).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        e.to_string(),
        "bone 1: the local poses chained through the parents hold 1.2e9, beyond 1e9"
    );
    assert_eq!(out, [Mat3x4::from_translation([7.0; 3]); 3]);
    let mut nan = Mat3x4::IDENTITY;
    nan.m[5] = f32::NAN;
    let e = model.pose_concat(&[Mat3x4::IDENTITY, nan, Mat3x4::IDENTITY], None, &mut out);
    assert_eq!(
        e.unwrap_err().to_string(),
        "bone 1: the local poses chained through the parents hold NaN, beyond 1e9"
    );
}

/// Every element finite.
#[track_caller]
fn all_finite(values: &[f32], what: &str) {
    assert!(values.iter().all(|v| v.is_finite()), "{what}: {values:?}");
}

#[test]
fn large_but_finite_models_pose_and_skin_finite() {
    // Bones 2.6e8 apart (the tip up to 7.8e8 away), turned, scaled and far apart from frame to
    // frame, and influences at 9e8: near the largest a model may hold.
    let mut fx = chain_fixture();
    let far = |x: f32| tr(x, -x, x);
    let turned = |a: f32, t: [f32; 3]| rot_x(a, t);
    let mut shrunk = IDENT;
    for k in [0, 5, 10] {
        shrunk[k] = 1e-3;
    }
    fx.frames[0].poses = vec![far(1.5e8), turned(0.3, [0.0, 2.6e8, 0.0]), far(-1.5e8)];
    fx.frames[1].poses = vec![far(-1.5e8), turned(2.9, [1.5e8, 0.0, -1.5e8]), shrunk];
    fx.frames[2].poses = vec![shrunk, far(1.5e8), turned(-1.5, [1.5e8; 3])];
    for v in &mut fx.meshes[0].vertices {
        for i in v.iter_mut() {
            i.origin = [9e8, -9e8, 9e8];
            i.normal = [1e9, 1e9, -1e9];
        }
    }
    large_model_poses_and_skins_finite(&load_as(&fx.build().0, Format::Dpm).unwrap());
}

fn large_model_poses_and_skins_finite(model: &Model) {
    let (mins, maxs) = model.bounds();
    all_finite(&[mins, maxs].concat(), "bounds");
    let mut inverse = vec![Mat3x4::IDENTITY; 3];
    model.inverse_bind(&mut inverse).unwrap();
    all_finite(
        &inverse.iter().flat_map(|m| m.m).collect::<Vec<_>>(),
        "inverse bind",
    );

    // The largest root a caller may give.
    let mut root = Mat3x4::IDENTITY;
    root.m = [
        1e9, -1e9, 1e9, 1e9, 1e9, 1e9, -1e9, -1e9, 1e9, 1e9, 1e9, 1e9,
    ];
    let weights = [1.0f32, 0.5, 1e-6, 1e6];
    let vc = model.meshes()[0].vertex_count();
    for r in [None, Some(&root)] {
        for a in 0..3u32 {
            for b in 0..3u32 {
                for &w in &weights {
                    let blend = [
                        FrameBlend {
                            frame: a,
                            weight: 1.0,
                        },
                        FrameBlend {
                            frame: b,
                            weight: w,
                        },
                    ];
                    let what = format!("frames {a} and {b} at {w}, root {}", r.is_some());
                    let mut bones = vec![Mat3x4::IDENTITY; 3];
                    model.pose_frames(&blend, r, &mut bones).unwrap();
                    all_finite(&bones.iter().flat_map(|m| m.m).collect::<Vec<_>>(), &what);
                    let mut gpu = vec![Mat3x4::IDENTITY; 3];
                    model.skinning_matrices(&bones, &mut gpu).unwrap();
                    all_finite(&gpu.iter().flat_map(|m| m.m).collect::<Vec<_>>(), &what);
                    for flags in [0, SKIN_NORMALIZE] {
                        let mut p = vec![0.0f32; 3 * vc];
                        let mut n = vec![0.0f32; 3 * vc];
                        let mut target = Strided::new(&mut p, 3)
                            .unwrap()
                            .with_normals(&mut n, 3)
                            .unwrap();
                        model
                            .skin_mesh(0, &bones, 0, vc, flags, &mut target)
                            .unwrap();
                        all_finite(&p, &what);
                        all_finite(&n, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn long_chains_of_turns_are_not_refused() {
    // 2000 bones, each turned and 1 unit from its parent, in two frames: a rotation stretches by
    // 1, so the bound does not grow down the chain (the tip is at most 2000 away).
    let nb = 2000;
    let mut parts = ossa::ModelParts::new(Format::Dpm);
    parts.bones = (0..nb)
        .map(|i| ossa::Bone {
            name: format!("b{i}").as_str().into(),
            parent: i as i32 - 1,
            flags: 0,
        })
        .collect();
    parts.frames = vec![ossa::Frame::named("a"), ossa::Frame::named("b")];
    let turn = |a: f32| {
        let m = rot_x(a, [1.0, 0.0, 0.0]);
        Mat3x4 { m }
    };
    parts.poses = (0..2 * nb)
        .map(|i| turn(0.3 + i as f32 * 1e-3))
        .collect::<Vec<_>>()
        .into();
    let model = Model::from_parts(parts.clone()).unwrap();
    let mut bones = vec![Mat3x4::IDENTITY; nb];
    let blend = [
        FrameBlend {
            frame: 0,
            weight: 1.0,
        },
        FrameBlend {
            frame: 1,
            weight: 1.0,
        },
    ];
    model.pose_frames(&blend, None, &mut bones).unwrap();
    all_finite(&bones.iter().flat_map(|m| m.m).collect::<Vec<_>>(), "blend");
    // Rigid poses (as SKP stores them) alike, their quaternions off unit length by the most
    // the format tolerates.
    parts.poses = (0..2 * nb)
        .map(|i| {
            let h = (0.15 + i as f32 * 5e-4, 1.0001f32.sqrt());
            ossa::RigidPose {
                rotation: [h.0.sin() * h.1, 0.0, 0.0, h.0.cos() * h.1],
                translation: [1.0, 0.0, 0.0],
            }
        })
        .collect::<Vec<_>>()
        .into();
    assert!(Model::from_parts(parts).is_ok());
}
