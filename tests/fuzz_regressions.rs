//! What the fuzz targets (`fuzz/`, run by `fuzz/run.sh`) found, each kept as a test of the clean
//! result it gives now. Each test names the target and gives the input it found.

use ossa::{
    Bone, Format, Frame, FrameBlend, Influence, LoadOptions, Mat3x4, MeshParts, Model, ModelParts,
    Name, Strided,
};

fn blend(frame: u32, weight: f32) -> FrameBlend {
    FrameBlend { frame, weight }
}

/// A tube rig saved as DPM and loaded again: without a `.framegroups` file every frame is a
/// looping scene of its own at 10 fps, as the pose_skin target's models are.
fn tube_dpm(frames: u32) -> Model {
    let rig = ossa::synth::TubeRig {
        bones: 2,
        frames,
        ..ossa::synth::TubeRig::default()
    };
    let bytes = ossa::dpm::write(&rig.build().unwrap()).unwrap();
    let options = LoadOptions {
        format: Format::Dpm,
        ..LoadOptions::default()
    };
    Model::load(&bytes, &options).unwrap()
}

/// pose_skin, input `00 00 02 23 90 80 80 80 c7 22 80 bd b2 b2 06 00 00 06 00 01 80 c8 2f 05 b2
/// b2 90 80 00 01 01 01 46 00 02` (`ossa_animation_blend` of scene 0 of the static tube at
/// -5.94e-300 s): a time a hair before a looping scene's start wrapped round to the scene's frame
/// count itself, so the blend named the frame after the scene (here past the model's last frame,
/// which ossa_pose_frames then refused). And a time so large that the time times the rate
/// overflows gave two blends of NaN weight. Both are the loop's start now.
#[test]
fn a_looping_scene_blends_its_start_a_hair_before_it_and_at_an_overflowing_time() {
    let one = tube_dpm(1);
    let scene = &one.animations()[0];
    assert_eq!(
        (scene.first_frame, scene.frame_count, scene.looping),
        (0, 1, true)
    );
    for seconds in [
        -5.944695516882561e-300,
        -1e-300,
        -1e-18,
        f64::MAX,
        -f64::MAX,
        1e306,
    ] {
        let (blends, n) = one.animation_blend(0, seconds).unwrap();
        assert_eq!((n, blends[0]), (1, blend(0, 1.0)), "{seconds} s");
        let mut bones = vec![Mat3x4::IDENTITY; one.bones().len()];
        one.pose_frames(&blends[..n], None, &mut bones).unwrap();
    }

    // A scene of several frames (frame k of the tube is scene k; one scene spans them all only
    // through a `.framegroups` file, so the three-frame case is the blend arithmetic's own).
    let three = ossa::model::Animation {
        name: ossa::Name::from("wave"),
        first_frame: 2,
        frame_count: 3,
        fps: 30.0,
        looping: true,
        ..Default::default()
    };
    for seconds in [-1e-18, f64::MAX, 1e307] {
        let (blends, n) = ossa::animation::blend_at(&three, seconds);
        assert_eq!((n, blends[0]), (1, blend(2, 1.0)), "{seconds} s");
    }
    // A third of a frame before the start: on the way from the last frame round to the first.
    let (blends, n) = ossa::animation::blend_at(&three, -0.01);
    assert_eq!(n, 2);
    assert_eq!((blends[0].frame, blends[1].frame), (4, 2));
    assert!((blends[0].weight - 0.3).abs() < 1e-5, "{blends:?}");
    assert!((blends[1].weight - 0.7).abs() < 1e-5, "{blends:?}");

    // A scene that does not loop holds its ends, however far off the time.
    let held = ossa::model::Animation {
        looping: false,
        ..three
    };
    assert_eq!(
        ossa::animation::blend_at(&held, f64::MAX),
        ([blend(4, 1.0); 2], 1)
    );
    assert_eq!(
        ossa::animation::blend_at(&held, -f64::MAX),
        ([blend(2, 1.0); 2], 1)
    );
    assert_eq!(
        ossa::animation::blend_at(&held, f64::NAN),
        ([blend(2, 1.0); 2], 1)
    );
}

/// A DMF document with the given skeleton, vertices and faces.
fn dmf_json(skeleton: &str, vertices: &str, faces: &str) -> Vec<u8> {
    format!(
        r#"{{"format": "DASH", "version": "1.5", "textures": [],
  "materials": [{{"id": 0, "name": "m", "texture": -1}}],
  "vertices": [{vertices}], "faces": [{faces}], "skeleton": [{skeleton}], "animations": []}}"#
    )
    .into_bytes()
}

fn load_dmf_json(bytes: &[u8]) -> ossa::Result<Model> {
    let options = LoadOptions {
        format: Format::DmfJson,
        ..LoadOptions::default()
    };
    Model::load(bytes, &options)
}

/// load_dmf_json: a document whose vertices no face uses (so none is kept) and without a
/// skeleton gave a model of no bones but one frame, the bind pose of nothing. It has no frames now.
#[test]
fn a_dmf_without_bones_or_used_vertices_has_no_frames() {
    let vertex =
        r#"{"pos": [1, 0, 0], "skin_index": [0, -1, -1, -1], "skin_weight": [1, 0, 0, 0]}"#;
    let m = load_dmf_json(&dmf_json("", vertex, "")).unwrap();
    assert_eq!(
        (m.bones().len(), m.frames().len(), m.meshes().len()),
        (0, 0, 0)
    );
    assert!(
        m.warnings()[0].to_string().contains("used by no face"),
        "{:?}",
        m.warnings()
    );
}

/// load_dmf and load_dmf_json, input (JSON) `{"format": "DASH", "version": "1.5", "textures":
/// [], "materials": [...], "animations": [{"id": 0, "name": "wave", "fps": 10, "duration": 0.1,
/// "tracks": []}]}`: a document without bones whose animation has no tracks. The model dropped
/// the animation, having no pose, but kept its keyframe set, which then named an animation out of
/// range; debug builds caught it. Both go now, with a warning (the binary form is tested in
/// `src/format/dmf/mod.rs`).
#[test]
fn a_dmf_without_bones_drops_its_animations_with_their_keyframes() {
    let doc = r#"{"format": "DASH", "version": "1.5", "textures": [],
  "materials": [{"id": 0, "name": "m", "texture": -1}],
  "animations": [{"id": 0, "name": "wave", "fps": 10, "duration": 0.1, "tracks": []}]}"#;
    let m = load_dmf_json(doc.as_bytes()).unwrap();
    assert_eq!(
        (m.bones().len(), m.frames().len(), m.animations().len()),
        (0, 0, 0)
    );
    assert!(m.keyframes().is_empty());
    assert_eq!(
        m.warnings()[0].to_string(),
        "the model has no bones, so its animation is left out"
    );

    // Two such animations: both go, and the warning counts them.
    let doc = r#"{"format": "DASH", "version": "1.5", "textures": [],
  "materials": [{"id": 0, "name": "m", "texture": -1}],
  "animations": [{"id": 0, "name": "wave", "fps": 10, "duration": 0.1, "tracks": []},
                 {"id": 1, "name": "bow", "fps": 10, "duration": 0.2, "tracks": []}]}"#;
    let m = load_dmf_json(doc.as_bytes()).unwrap();
    assert_eq!((m.animations().len(), m.keyframes().len()), (0, 0));
    assert_eq!(
        m.warnings()[0].to_string(),
        "the model has no bones, so its 2 animations are left out"
    );
}

/// load_dmf, load_auto: a large position through the inverse of a tiny bind scale is finite in
/// the file but not in the bone's bind space; debug builds caught the model's NaN check. It is
/// refused at load now, naming the vertex.
#[test]
fn a_dmf_vertex_that_overflows_its_bind_space_is_refused() {
    let bone = r#"{"name": "b", "id": 0, "parent_id": -1,
        "matrix": [1e-10, 0, 0, 0, 0, 1e-10, 0, 0, 0, 0, 1e-10, 0, 0, 0, 0, 1]}"#;
    let vertex =
        r#"{"pos": [3e38, 0, 0], "skin_index": [0, -1, -1, -1], "skin_weight": [1, 0, 0, 0]}"#;
    let face = r#"{"material": 0, "indices": [0, 0, 0],
        "vertex_color": ["rgba(0,0,0,1)", "rgba(0,0,0,1)", "rgba(0,0,0,1)"],
        "normals": [[0, 0, 1], [0, 0, 1], [0, 0, 1]], "diffuse_uv": [[0, 0], [0, 0], [0, 0]]}"#;
    let e = load_dmf_json(&dmf_json(bone, vertex, face)).unwrap_err();
    assert_eq!(e.code(), ossa::ErrorCode::Malformed, "{e}");
    assert!(
        e.to_string().contains(
            "vertices[0]: its position or normal in bone 0's bind space is not a finite float"
        ),
        "{e}"
    );
}

/// load_dmf_json: two file vertices alike in position and skin (here with no skeleton, so the
/// skins are ignored) stayed two vertices, which the writer stores as one, so the model saved and
/// loaded again had fewer. Alike vertices are one vertex now.
#[test]
fn alike_dmf_vertices_are_one_vertex() {
    let vertices = r#"{"pos": [0, 0, 0], "skin_index": [0, -1, -1, -1], "skin_weight": [1, 0, 0, 0]},
        {"pos": [0, 0, 0], "skin_index": [0, 1, -1, -1], "skin_weight": [0.5, 0.5, 0, 0]},
        {"pos": [0, 1, 0], "skin_index": [1, -1, -1, -1], "skin_weight": [1, 0, 0, 0]}"#;
    let face = r#"{"material": 0, "indices": [0, 1, 2],
        "vertex_color": ["rgba(0,0,0,1)", "rgba(0,0,0,1)", "rgba(0,0,0,1)"],
        "normals": [[0, 0, 1], [0, 0, 1], [0, 0, 1]], "diffuse_uv": [[0, 0], [0, 0], [0, 0]]}"#;
    let m = load_dmf_json(&dmf_json("", vertices, face)).unwrap();
    let mesh = &m.meshes()[0];
    assert_eq!(mesh.vertex_count(), 2);
    assert_eq!(mesh.indices(), &[0, 0, 1]);
    let again = load_dmf_json(&m.save(Format::DmfJson).unwrap()).unwrap();
    assert_eq!(again.meshes()[0].vertex_count(), 2);
    assert_eq!(again.meshes()[0].indices(), &[0, 0, 1]);
}

/// load_dmf: a 3 KB file whose animation plays 0.2 s at 63497 fps asks for 12700 frames, 2.7 MB
/// of poses; the fuzz targets' memory check counted them against the input's size and called
/// the load too hungry. Frames sampled from keys are the file's own request and the library's
/// ceiling bounds them, so the check counts them on top now. Here: the frames are all there and
/// sample the key, and a ceiling below them refuses the file.
#[test]
fn a_dmf_animation_at_a_high_rate_samples_every_frame_within_the_ceiling() {
    let bone = r#"{"name": "b", "id": 0, "parent_id": -1,
        "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]}"#;
    let vertex =
        r#"{"pos": [1, 0, 0], "skin_index": [0, -1, -1, -1], "skin_weight": [1, 0, 0, 0]}"#;
    let face = r#"{"material": 0, "indices": [0, 0, 0],
        "vertex_color": ["rgba(0,0,0,1)", "rgba(0,0,0,1)", "rgba(0,0,0,1)"],
        "normals": [[0, 0, 1], [0, 0, 1], [0, 0, 1]], "diffuse_uv": [[0, 0], [0, 0], [0, 0]]}"#;
    let doc = String::from_utf8(dmf_json(bone, vertex, face)).unwrap();
    let doc = doc.replace(
        r#""animations": []"#,
        r#""animations": [{"id": 0, "name": "wave", "fps": 63497, "duration": 0.2,
            "tracks": [{"bone_id": 0, "time": 0, "pos": [0, 0, 0]},
                       {"bone_id": 0, "time": 0.2, "pos": [0, 2, 0]}]}]"#,
    );
    let m = load_dmf_json(doc.as_bytes()).unwrap();
    let scene = &m.animations()[0];
    assert_eq!((scene.first_frame, scene.frame_count), (1, 12700));
    assert_eq!(m.frames().len(), 12701);
    let middle = m.skeleton().frame_poses(1 + 6350).unwrap()[0];
    assert!((middle.m[7] - 1.0).abs() < 1e-3, "{middle:?}");
    let last = m.skeleton().frame_poses(12700).unwrap()[0];
    assert!((last.m[7] - 2.0).abs() < 1e-3, "{last:?}");

    let tight = LoadOptions {
        format: Format::DmfJson,
        max_bytes: 1 << 20,
        ..LoadOptions::default()
    };
    let e = Model::load(doc.as_bytes(), &tight).unwrap_err();
    assert_eq!(e.code(), ossa::ErrorCode::Limit, "{e}");
}

fn translation(x: f32, y: f32, z: f32) -> Mat3x4 {
    Mat3x4 {
        m: [1.0, 0.0, 0.0, x, 0.0, 1.0, 0.0, y, 0.0, 0.0, 1.0, z],
    }
}

/// load_dpm: a root whose bind pose squeezes x to 5.8e-39 has an inverse of 1.7e38, and the
/// palette's `pose * inverse bind` overflowed for vertices that agree on one bind point, skinning
/// moderate numbers to infinity. Such bones were skinned influence by influence; now a bind pose
/// whose inverse is beyond 1e9 is refused, and one squeezed as far as that allows (2e-9, an
/// inverse of 5e8) skins to the exact points.
#[test]
fn a_nearly_collapsed_bind_pose_skins_to_finite_exact_points() {
    let bone = |name: &str, parent: i32| Bone {
        name: Name::from(name),
        parent,
        flags: 0,
    };
    let mut squeeze = Mat3x4::IDENTITY;
    squeeze.m[0] = 2e-9;
    let turn = Mat3x4 {
        // 90 degrees about z, then 4 up z.
        m: [0.0, -1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 4.0],
    };
    let mut parts = ModelParts::new(Format::Dpm);
    parts.bones = vec![bone("root", -1), bone("mid", 0), bone("tip", 1)];
    parts.frames = vec![Frame::named("bind"), Frame::named("turned")];
    let mut stretch = Mat3x4::IDENTITY;
    stretch.m[0] = 4.0;
    parts.poses = vec![
        squeeze,
        translation(0.0, 0.0, 4.0),
        translation(0.0, 0.0, 4.0),
        stretch,
        translation(0.0, 0.0, 4.0),
        turn,
    ]
    .into();
    // Both influences put the vertex at (0, 0, 4) in the bind pose: a palette candidate.
    let infl = |origin: [f32; 3], bone: u32| Influence {
        origin,
        weight: 0.5,
        normal: [0.5, 0.0, 0.0],
        bone,
    };
    parts.meshes = vec![MeshParts {
        influence_start: vec![0, 2, 4, 6],
        influences: vec![
            infl([0.5, 0.0, 2.0], 1),
            infl([0.5, 0.0, 0.0], 2),
            infl([0.5, 0.0, 2.0], 1),
            infl([0.5, 0.0, 0.0], 2),
            infl([0.5, 0.0, 2.0], 1),
            infl([0.5, 0.0, 0.0], 2),
        ],
        indices: vec![0, 1, 2],
        ..MeshParts::default()
    }];
    let mut collapsed = parts.clone();
    let mut poses = collapsed.poses.to_matrices();
    poses[0].m[0] = 5.785636e-39;
    collapsed.poses = poses.into();
    let e = Model::from_parts(collapsed).unwrap_err();
    assert_eq!(e.code(), ossa::ErrorCode::Limit, "{e}");
    assert_eq!(
        e.to_string(),
        "frame 0 (bind) bone 0 (root): the inverse of its bind pose holds 1.7284185e38, beyond \
         1e9 (the bone is all but collapsed)"
    );
    let model = Model::from_parts(parts).unwrap();
    let mut bones = vec![Mat3x4::IDENTITY; 3];
    model
        .pose_frames(
            &[FrameBlend {
                frame: 1,
                weight: 1.0,
            }],
            None,
            &mut bones,
        )
        .unwrap();
    let mut positions = vec![0.0f32; 9];
    let mut target = Strided::new(&mut positions, 3).unwrap();
    model.skin_mesh(0, &bones, 0, 3, 0, &mut target).unwrap();
    // Origins are pre-weighted; the root stretches x by 4 in the turned frame:
    // S (0.5, 0, 2) + 0.5 (0, 0, 4) + S Rz90 (0.5, 0, 0) + 0.5 (0, 0, 8) = (2, 0.5, 8).
    for v in positions.chunks(3) {
        for (got, want) in v.iter().zip([2.0f32, 0.5, 8.0]) {
            assert!((got - want).abs() < 1e-6, "{v:?}");
        }
    }
}

/// optimize_save, input `07` then an MM2 skeleton of one bone, `NumBones 1\r\nbone bone0 {\r\n
///    offset 0.000000 0.000000 0.000000\r\n}\r\n`: optimising a skeleton without meshes with
/// every flag removed its one bone, as no vertex used it, leaving a frame of no bones (which
/// poses nothing and breaks the model's rule that frames and bones go together). A model whose
/// vertices use no bone keeps them all now.
#[test]
fn optimising_a_skeleton_without_meshes_keeps_its_bones() {
    let text = b"NumBones 1\r\nbone bone0 {\r\n   offset 0.000000 0.000000 0.000000\r\n}\r\n";
    let model = Model::load(text, &LoadOptions::default()).unwrap();
    assert_eq!(model.format(), Format::Mm2Skel);
    assert_eq!((model.bones().len(), model.frames().len()), (1, 1));
    let (optimized, report) = model.optimized(ossa::optimize::OPTIMIZE_ALL).unwrap();
    assert_eq!((report.bones_before, report.bones_after), (1, 1));
    assert_eq!(optimized.bones(), model.bones());
    assert_eq!(optimized.frames().len(), 1);
    let saved = optimized.save(Format::Mm2Skel).unwrap();
    let again = Model::load(&saved, &LoadOptions::default()).unwrap();
    assert_eq!(again.bones()[0].name.to_string(), "bone0");
}

/// optimize_save, input `01` then a DPM of one bone whose frame 0 is a matrix of rank 2 (found as
/// a mutation of a tube's DPM): saved as DMF it wrote the bone's matrix as its bind matrix, and
/// the DMF reader refused what the writer wrote, since it weights vertices against that
/// matrix's inverse. The writer refuses such a model now, as a DMF cannot hold it.
#[test]
fn a_model_weighted_to_a_singular_bind_matrix_is_not_saved_as_dmf() {
    let mut parts = ossa::synth::TubeRig {
        bones: 1,
        ..ossa::synth::TubeRig::default()
    }
    .parts();
    let mut poses: Vec<Mat3x4> = parts.poses.range(0, parts.poses.len()).unwrap().to_vec();
    // The bone flattened along y in every frame.
    for pose in &mut poses {
        pose.m[1] = 0.0;
        pose.m[5] = 0.0;
        pose.m[9] = 0.0;
    }
    parts.poses = poses.into();
    let model = Model::from_parts(parts).unwrap();
    assert_eq!(model.bones().len(), 1);
    for format in [Format::Dmf, Format::DmfJson] {
        let e = model.save(format).unwrap_err();
        assert_eq!(e.code(), ossa::ErrorCode::Unsupported, "{e}");
        assert_eq!(
            e.to_string(),
            "mesh 0 vertex 0: bone 0's bind matrix cannot be inverted, and a DMF vertex is weighted against its inverse"
        );
    }
}

/// optimize_save, input `07` then a DPM of one bone whose frame 0 mixes scales from 1e-45 to
/// 7e28 (a mutation of a tube's DPM): saved as DMF, the reader took the first vertex through
/// the inverse of that bind matrix past a float and refused the file the writer wrote. The
/// writer refuses such a model now.
#[test]
fn a_model_whose_bind_space_overflows_is_not_saved_as_dmf() {
    let mut parts = ossa::synth::TubeRig {
        bones: 1,
        ..ossa::synth::TubeRig::default()
    }
    .parts();
    let pose = Mat3x4 {
        m: [
            1.4428048e-37,
            1.7640646e28,
            0.0,
            0.0,
            0.0,
            1e-45,
            1029394560.0,
            7.3780077e28,
            1.5166204e-19,
            1.10418165e21,
            1.9179814e-19,
            5.198348e22,
        ],
    };
    parts.poses = vec![pose; parts.poses.len()].into();
    // Such a pose is beyond the range every model keeps to, so no model holds it to be saved;
    // the writer's own refusal stays for poses within it.
    let e = Model::from_parts(parts).unwrap_err();
    assert_eq!(e.code(), ossa::ErrorCode::Limit, "{e}");
    assert_eq!(
        e.to_string(),
        "frame 0 (bind) bone 0 (bone0): its model-space pose (chained through the parents) holds 1.7640646e28, beyond 1e9"
    );
}

/// optimize_save, input `04` then a binary DMF whose vertex 11 lies at y = 1.15e36 (a mutation
/// of a tube's DMF): saved as DPM, the header's radius was computed in f32, whose squares
/// overflow, and written as infinity, which the DPM reader refuses. The radius is computed in
/// f64 now, and one past a float is refused as a limit.
#[test]
fn a_dpm_radius_is_computed_without_overflow() {
    let mut parts = ossa::synth::TubeRig {
        bones: 1,
        ..ossa::synth::TubeRig::default()
    }
    .parts();
    // A vertex that far is beyond the range every model keeps to, so no model holds it to be
    // saved; the writer computes its radius in f64 all the same.
    parts.meshes[0].influences[0].origin[1] = 1.1511452e36;
    let e = Model::from_parts(parts.clone()).unwrap_err();
    assert_eq!(e.code(), ossa::ErrorCode::Limit, "{e}");
    assert_eq!(
        e.to_string(),
        "mesh 0: influence 0: origin, weight or normal holds 1.1511452e36, beyond 1e9"
    );
    // Within the range, the header's radius is the farthest vertex's distance.
    parts.meshes[0].influences[0].origin = [6e8, 8e8, 0.0];
    let model = Model::from_parts(parts).unwrap();
    let saved = ossa::dpm::write(&model).unwrap();
    let again = Model::load(&saved, &LoadOptions::default()).unwrap();
    let radius = again.declared_extent().unwrap().radius;
    assert!((radius / 1e9 - 1.0).abs() < 1e-6, "{radius}");
}

/// optimize_save, an SKM of 293 bytes whose scene came out named in 57 bytes: the DMF JSON
/// writer wrote the name, and its reader (DMF holds 32 bytes a name) refused the file. Both DMF
/// writers now refuse such a model with `OSSA_ERR_LIMIT`, naming the animation (as they refuse a
/// long bone name), and so a texture's or a material's.
#[test]
fn dmf_writers_refuse_a_name_longer_than_a_dmf_holds() {
    let mut parts = ossa::synth::TubeRig {
        bones: 2,
        frames: 2,
        ..ossa::synth::TubeRig::default()
    }
    .parts();
    assert!(!parts.animations.is_empty());
    let long = "a".repeat(57);
    parts.animations[0].name = Name::from(long.as_str());
    let model = Model::from_parts(parts).unwrap();
    for write in [ossa::dmf::write_binary, ossa::dmf::write_json] {
        let e = write(&model).unwrap_err();
        assert_eq!(e.code(), ossa::ErrorCode::Limit, "{e}");
        assert!(
            e.to_string().contains(&format!(
                "animation 0: name \"{long}\" is 57 bytes; a DMF name holds 32"
            )),
            "{e}"
        );
    }
    // 32 bytes fit, and load back.
    let mut parts = model.to_parts();
    let fits = "b".repeat(32);
    parts.animations[0].name = Name::from(fits.as_str());
    let model = Model::from_parts(parts).unwrap();
    let options = LoadOptions {
        format: Format::DmfJson,
        ..LoadOptions::default()
    };
    let again = Model::load(&ossa::dmf::write_json(&model).unwrap(), &options).unwrap();
    assert_eq!(again.animations()[0].name.as_bytes(), fits.as_bytes());
}
