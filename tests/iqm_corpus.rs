//! Every real IQM of the corpus read by ossa and by the reference reader of `tests/iqm_ref`
//! (written from `iqm.txt`, sharing nothing with ossa's parser): the same joints, anims, meshes,
//! triangles (wound the other way), texture coordinates, the stored positions at the bind pose,
//! and the same skinned positions at every frame. The quirks of real files load with the
//! warning that names them and are refused in strict mode.

mod corpus;
mod iqm_corpus_files;
mod iqm_ref;
mod ref_math;
mod sweep;

use iqm_corpus_files::corpus_iqms;
use ossa::{ErrorCode, Format, LoadOptions, Model};

fn load(bytes: &[u8], name: &str, strict: bool) -> ossa::Result<Model> {
    Model::load(
        bytes,
        &LoadOptions {
            name: Some(name.to_owned()),
            strict,
            ..LoadOptions::default()
        },
    )
}

/// For each vertex of each ossa mesh, the file vertex it is: taken from the triangles (which
/// also checks that each was reversed, IQM winding clockwise), else its place in the mesh's
/// range.
fn file_vertices(model: &Model, iqm: &iqm_ref::Iqm, name: &str) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    for (m, mesh) in model.meshes().iter().enumerate() {
        let r = &iqm.meshes[m];
        let mut map: Vec<Option<u32>> = (0..mesh.vertex_count())
            .map(|v| (v < r.num_vertexes as usize).then(|| r.first_vertex + v as u32))
            .collect();
        let tris = iqm_ref::mesh_triangles(iqm, m);
        assert_eq!(mesh.triangle_count(), tris.len(), "{name} mesh {m}");
        for (t, (ours, theirs)) in mesh.indices().chunks_exact(3).zip(tris).enumerate() {
            for (k, file_corner) in [0, 2, 1].into_iter().enumerate() {
                let v = ours[k] as usize;
                let file = theirs[file_corner];
                match map[v] {
                    Some(f) => assert_eq!(
                        iqm.positions.as_ref().unwrap()[f as usize],
                        iqm.positions.as_ref().unwrap()[file as usize],
                        "{name} mesh {m} triangle {t} corner {k}"
                    ),
                    None => map[v] = Some(file),
                }
            }
        }
        out.push(
            map.into_iter()
                .enumerate()
                .map(|(v, f)| f.unwrap_or_else(|| panic!("{name} mesh {m} vertex {v} unplaced")))
                .collect(),
        );
    }
    out
}

fn size_of(iqm: &iqm_ref::Iqm) -> f64 {
    let Some(p) = &iqm.positions else {
        return 1.0;
    };
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for v in p {
        for k in 0..3 {
            lo[k] = lo[k].min(v[k]);
            hi[k] = hi[k].max(v[k]);
        }
    }
    (0..3).map(|k| hi[k] - lo[k]).fold(1.0, f64::max)
}

fn diff(a: [f64; 3], b: [f32; 3]) -> f64 {
    (0..3)
        .map(|k| (a[k] - f64::from(b[k])).abs())
        .fold(0.0, f64::max)
}

#[test]
fn every_corpus_file_reads_as_the_reference_reader_reads_it() {
    let files = corpus_iqms("every_corpus_file_reads_as_the_reference_reader_reads_it");
    let mut checked_frames = 0usize;
    for (name, bytes) in &files {
        let Ok(iqm) = iqm_ref::parse(bytes) else {
            // The one file cut short on purpose: ossa refuses it too.
            assert_eq!(name, "asp_InvalidMeshOffset.iqm");
            let e = load(bytes, name, false).unwrap_err();
            assert_eq!(e.code(), ErrorCode::Truncated, "{e}");
            continue;
        };
        let model = load(bytes, name, false).unwrap_or_else(|e| panic!("{e}"));
        let info = model.info();
        assert_eq!(info.format, Format::Iqm);
        assert_eq!((info.up_axis, info.handedness), (2, 1), "{name}");

        // Joints are the bones; an animation-only file's poses give them without names.
        if !iqm.joints.is_empty() {
            assert_eq!(model.bones().len(), iqm.joints.len(), "{name}");
            for (b, j) in model.bones().iter().zip(&iqm.joints) {
                assert_eq!(b.name.to_string_lossy(), j.name, "{name}");
                assert_eq!(b.parent, j.parent.max(-1), "{name} {}", j.name);
            }
        } else if !iqm.poses.is_empty() {
            assert_eq!(model.bones().len(), iqm.poses.len(), "{name}");
            assert!(model.bones().iter().all(|b| b.name.is_empty()), "{name}");
        }

        // Anims are scenes after the bind pose; frames follow it when there are poses.
        let has_frames = !iqm.poses.is_empty() && !model.bones().is_empty();
        if has_frames {
            assert_eq!(model.frames().len(), iqm.frames.len() + 1, "{name}");
            let anims: Vec<_> = iqm.anims.iter().filter(|a| a.num_frames > 0).collect();
            if anims.is_empty() && !iqm.frames.is_empty() {
                assert_eq!(
                    model.animations().len(),
                    1,
                    "{name}: one scene of every frame"
                );
                assert_eq!(model.animations()[0].name.to_string_lossy(), "base");
            } else {
                assert_eq!(model.animations().len(), anims.len(), "{name}");
            }
            for (s, a) in model.animations().iter().zip(&anims) {
                assert_eq!(s.name.to_string_lossy(), a.name, "{name}");
                assert_eq!(s.first_frame, a.first_frame + 1, "{name} {}", a.name);
                assert_eq!(s.frame_count, a.num_frames, "{name} {}", a.name);
                assert_eq!(s.looping, a.looping(), "{name} {}", a.name);
                if a.framerate > 0.0 {
                    assert_eq!(f64::from(s.fps), a.framerate, "{name} {}", a.name);
                } else {
                    assert_eq!(s.fps, 10.0, "{name} {}: FTE's rate", a.name);
                }
            }
        } else {
            assert!(model.frames().len() <= 1, "{name}");
        }
        if model.meshes().is_empty() {
            continue;
        }

        assert_eq!(model.meshes().len(), iqm.meshes.len(), "{name}");
        let size = size_of(&iqm);
        let map = file_vertices(&model, &iqm, name);
        let positions = iqm.positions.as_ref().unwrap();
        let weighted = |f: u32| {
            iqm.blend_weights
                .as_ref()
                .is_some_and(|w| w[f as usize].iter().any(|&x| x > 0.0))
        };
        for (m, mesh) in model.meshes().iter().enumerate() {
            let r = &iqm.meshes[m];
            assert_eq!(mesh.name().to_string_lossy(), r.name, "{name} mesh {m}");
            assert_eq!(
                mesh.shader().to_string_lossy(),
                r.material,
                "{name} mesh {m}"
            );
            if let (Some(ours), Some(theirs)) = (mesh.texcoords(), &iqm.texcoords) {
                for (v, &f) in map[m].iter().enumerate() {
                    let t = theirs[f as usize];
                    assert_eq!([ours[v][0] as f64, ours[v][1] as f64], t, "{name} {m} {v}");
                }
            }
        }

        // The bind pose gives back the stored positions.
        let bind = model.skeleton().bind_pose().to_vec();
        for (m, files) in map.iter().enumerate() {
            let got = sweep::skin(&model, m, &bind, 0).positions;
            for (v, &f) in files.iter().enumerate() {
                let d = diff(positions[f as usize], got[v]);
                assert!(d <= 1e-5 * size, "{name} mesh {m} vertex {v}: {d}");
            }
        }

        // Every frame: the reference's skinning of the file, vertex by vertex. Vertices whose
        // weights are all 0 follow their first joint in ossa (as DarkPlaces' CPU path): the
        // reference leaves them in place, so they are compared at the bind pose only.
        if !has_frames || iqm.joints.is_empty() {
            continue;
        }
        let mut worst = 0.0f64;
        for f in 0..iqm.frames.len() {
            let reference = iqm_ref::skin(&iqm, Some(f)).unwrap();
            let bones = sweep::pose(&model, &[sweep::blend(f as u32 + 1, 1.0)], None);
            for (m, files) in map.iter().enumerate() {
                let got = sweep::skin(&model, m, &bones, 0).positions;
                for (v, &file) in files.iter().enumerate() {
                    if !weighted(file) {
                        continue;
                    }
                    worst = worst.max(diff(reference[file as usize], got[v]) / size);
                }
            }
            checked_frames += 1;
        }
        println!(
            "{name}: worst skinned difference {worst:.2e} of the size over {} frames",
            iqm.frames.len()
        );
        assert!(worst <= 1e-5, "{name}: {worst}");
    }
    if !files.is_empty() {
        assert!(checked_frames > 2000, "{checked_frames} frames");
    }
}

#[test]
fn quirks_load_with_the_warning_that_names_them_and_strict_refuses_them() {
    let files = corpus_iqms("quirks_load_with_the_warning_that_names_them_and_strict_refuses_them");
    // What each file's warnings say; a file not listed has none that strict mode refuses.
    let quirks: &[(&str, &[&str])] = &[
        ("ksdk_bush.iqm", &["use 16 vertices of other meshes"]),
        ("ksdk_v_knife.iqm", &["vertices of other meshes"]),
        (
            "rev_giraffe_mesh.iqm",
            &["use 1012 vertices of other meshes"],
        ),
        (
            "rea_drone.iqm",
            &["1868 vertices have blend weights summing to 0"],
        ),
        (
            "rea_turret_sphere.iqm",
            &["140 vertices have blend weights summing to 0"],
        ),
        ("jgp_lamp_standing.iqm", &["blend weights summing to 0"]),
        ("rea_player_mine_pose.iqm", &["blend weights summing to 0"]),
        ("nuc_logo.iqm", &["meshes at 0xad, vertex arrays at 0xc5"]),
        (
            "nuc_player_animations_vvm.iqm",
            &[
                "not at a multiple of 4",
                "54 (smdimport)",
                "keep their rest pose",
            ],
        ),
        ("rea_player_dead.iqm", &["poses at 0x82", "frame rate 0"]),
    ];
    for (name, bytes) in &files {
        if name == "asp_InvalidMeshOffset.iqm" {
            continue;
        }
        let model = load(bytes, name, false).unwrap();
        let warnings: Vec<String> = model.warnings().iter().map(|w| w.to_string()).collect();
        let warnings = warnings.join("\n");
        let strict = load(bytes, name, true);
        match quirks.iter().find(|(n, _)| n == name) {
            Some((_, said)) => {
                for s in *said {
                    assert!(warnings.contains(s), "{name}: {s:?} not in\n{warnings}");
                }
                let e = strict
                    .err()
                    .unwrap_or_else(|| panic!("{name}: strict loads"));
                assert_eq!(e.code(), ErrorCode::Malformed, "{name}: {e}");
            }
            None => {
                strict.unwrap_or_else(|e| panic!("{name}: strict refuses: {e}\n{warnings}"));
            }
        }
    }
}

#[test]
fn fte_events_become_the_scenes_events() {
    let files = corpus_iqms("fte_events_become_the_scenes_events");
    let Some((name, bytes)) = files.iter().find(|(n, _)| n == "nuc_v_bat_vvm.iqm") else {
        return;
    };
    let iqm = iqm_ref::parse(bytes).unwrap();
    let ext = iqm
        .extensions
        .iter()
        .find(|e| e.name == "FTE_EVENT")
        .unwrap();
    let model = load(bytes, name, false).unwrap();
    let events = model.events();
    assert_eq!(events.len() * 16, ext.data.len());
    for chunk in ext.data.chunks_exact(16) {
        let word = |k: usize| u32::from_le_bytes(chunk[k..k + 4].try_into().unwrap());
        let (anim, time, code) = (word(0), f32::from_bits(word(4)), word(8));
        let data_at = word(12) as usize;
        let text = &iqm.text[data_at..];
        let value = String::from_utf8_lossy(&text[..text.iter().position(|&b| b == 0).unwrap()]);
        assert!(
            events.iter().any(|e| e.animation == anim
                && e.time == time
                && e.key.to_string_lossy() == code.to_string()
                && e.value.to_string_lossy() == value),
            "{name}: event of anim {anim} at {time} ({code} {value}) missing"
        );
    }
}

#[test]
fn an_animation_only_file_has_its_first_frame_for_a_rest_pose() {
    let files = corpus_iqms("an_animation_only_file_has_its_first_frame_for_a_rest_pose");
    let Some((name, bytes)) = files.iter().find(|(n, _)| n == "raylib_guyanim.iqm") else {
        return;
    };
    let model = load(bytes, name, false).unwrap();
    assert_eq!((model.bones().len(), model.frames().len()), (14, 123));
    assert!(
        model
            .warnings()
            .iter()
            .any(|w| w.to_string().contains("animation-only"))
    );
    let bind = model.skeleton().frame_poses(0).unwrap().to_vec();
    let first = model.skeleton().frame_poses(1).unwrap().to_vec();
    assert_eq!(bind, first);
    let names: Vec<_> = model
        .animations()
        .iter()
        .map(|a| (a.name.to_string_lossy(), a.first_frame, a.frame_count))
        .collect();
    assert_eq!(
        names,
        [("jump".to_owned(), 1, 61), ("dance".to_owned(), 62, 61)]
    );
}

#[test]
fn a_file_saved_unchanged_is_its_own_bytes_where_its_layout_is_the_specs() {
    let files =
        corpus_iqms("a_file_saved_unchanged_is_its_own_bytes_where_its_layout_is_the_specs");
    let mut same = 0;
    for (name, bytes) in &files {
        let Ok(iqm) = iqm_ref::parse(bytes) else {
            continue;
        };
        let model = load(bytes, name, false).unwrap();
        let saved = model.save(Format::Iqm).unwrap();
        if iqm_ref::laid_out_as_spec(&iqm) {
            assert!(saved == *bytes, "{name}: saved differently");
            same += 1;
        } else {
            // Written anew, aligned, and read by the reference reader as the same model.
            assert_ne!(saved, *bytes, "{name}");
            let again = iqm_ref::parse(&saved).unwrap();
            assert!(
                iqm_ref::laid_out_as_spec(&again),
                "{name}: {:?}",
                iqm_ref::layout_problems(&again)
            );
            assert_eq!(again.joints.len(), model.bones().len(), "{name}");
            assert_eq!(again.triangles.len(), iqm.triangles.len(), "{name}");
        }
        // A model that may have changed is written from what it holds, not from the file.
        let rebuilt = Model::from_parts(model.to_parts()).unwrap();
        assert!(rebuilt.source_bytes().is_none());
    }
    if !files.is_empty() {
        assert!(same >= 20, "{same} files saved as their own bytes");
    }
}
