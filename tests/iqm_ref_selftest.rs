//! The reference IQM reader of `tests/iqm_ref` checked on its own: the corpus files' counts,
//! names and values (taken from the files with a separate struct dump, not from this reader),
//! bind-pose and animated skinning against the stored positions and bounds, files cut short,
//! and two small files built here byte by byte (version 2 in odd component formats, and the
//! same model as version 1) with every check's error.

mod corpus;
mod iqm_ref;
mod ref_math;

use iqm_ref::{Iqm, parse};

// ---------------------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------------------

/// Every `*.iqm` of the corpus with its bytes, or nothing after saying `test` skips.
fn corpus_files(test: &str) -> Vec<(String, Vec<u8>)> {
    let Some(dir) = corpus::corpus_subdir("iqm", test) else {
        return Vec::new();
    };
    corpus::files_ending(&dir, &[".iqm"])
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap_or_else(|e| panic!("{n}: {e}"));
            (n, bytes)
        })
        .collect()
}

fn corpus_model(name: &str, test: &str) -> Option<Iqm> {
    let dir = corpus::corpus_subdir("iqm", test)?;
    let bytes = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    Some(parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// Per file: joints, meshes, vertexes, triangles, poses, frames, framechannels, anims, and
/// whether it has bounds.
const COUNTS: &[(&str, [u32; 8], bool)] = &[
    (
        "asp_mrfixit.iqm",
        [75, 2, 1861, 2988, 75, 101, 333, 1],
        true,
    ),
    ("jgp_armchair.iqm", [1, 3, 257, 185, 1, 151, 0, 15], true),
    (
        "jgp_lamp_standing.iqm",
        [2, 5, 359, 308, 2, 151, 1, 15],
        true,
    ),
    ("jgw_muzzleflash.iqm", [6, 1, 4, 2, 0, 0, 0, 0], false),
    ("jgw_pistol.iqm", [6, 1, 1419, 1432, 6, 194, 33, 13], true),
    ("ksdk_bush.iqm", [1, 2, 32, 16, 0, 0, 0, 0], false),
    ("ksdk_v_knife.iqm", [1, 4, 16824, 5608, 0, 0, 0, 0], false),
    ("lg_box.iqm", [0, 1, 30, 14, 0, 0, 0, 0], false),
    ("lg_v_chovel.iqm", [1, 1, 722, 366, 1, 22, 9, 2], true),
    (
        "lsz_mrfixit.iqm",
        [75, 2, 1861, 2988, 75, 101, 333, 1],
        true,
    ),
    ("nuc_logo.iqm", [1, 1, 8733, 5223, 1, 0, 0, 0], false),
    (
        "nuc_player_animations_vvm.iqm",
        [55, 1, 3, 1, 55, 1314, 240, 46],
        true,
    ),
    (
        "nuc_v_bat_vvm.iqm",
        [51, 2, 1723, 2412, 51, 443, 261, 23],
        true,
    ),
    ("raylib_guy.iqm", [14, 1, 240, 120, 14, 122, 69, 2], true),
    ("raylib_guyanim.iqm", [0, 0, 0, 0, 14, 122, 69, 2], false),
    (
        "rea_RE_Player_male.iqm",
        [78, 1, 3110, 5006, 0, 0, 0, 0],
        false,
    ),
    ("rea_drone.iqm", [3, 2, 6806, 6542, 0, 0, 0, 0], false),
    ("rea_hud_hands.iqm", [31, 1, 5416, 9856, 0, 0, 0, 0], false),
    (
        "rea_player_boost_forward.iqm",
        [0, 0, 0, 0, 78, 24, 526, 1],
        false,
    ),
    ("rea_player_dead.iqm", [0, 0, 0, 0, 78, 2, 0, 1], false),
    (
        "rea_player_mine_pose.iqm",
        [78, 2, 240, 120, 78, 2, 0, 1],
        true,
    ),
    (
        "rea_player_reload_pistol.iqm",
        [0, 0, 3110, 0, 78, 22, 380, 1],
        false,
    ),
    (
        "rea_turret_sphere.iqm",
        [3, 1, 3758, 3436, 3, 4, 0, 1],
        true,
    ),
    ("rev_giraffe_anim_idle.iqm", [0, 0, 0, 0, 1, 2, 0, 1], false),
    (
        "rev_giraffe_mesh.iqm",
        [1, 2, 2024, 3324, 0, 0, 0, 0],
        false,
    ),
    (
        "rev_rat_left_female_idle.iqm",
        [8, 1, 448, 459, 8, 51, 43, 1],
        false,
    ),
    ("rev_wings1_mesh.iqm", [26, 1, 796, 574, 0, 0, 0, 0], false),
    (
        "rew_plasma_gun_reload.iqm",
        [0, 0, 0, 0, 12, 55, 55, 1],
        false,
    ),
];

/// The files whose `ofs_*` are not all multiples of 4 (FORMATS.md §9.6), with those fields.
const MISALIGNED: &[(&str, &[&str])] = &[
    ("nuc_logo.iqm", &["ofs_meshes", "ofs_vertexarrays"]),
    (
        "nuc_player_animations_vvm.iqm",
        &["ofs_meshes", "ofs_vertexarrays"],
    ),
    ("rea_player_dead.iqm", &["ofs_poses", "ofs_anims"]),
];

#[test]
fn corpus_counts_match_a_separate_dump() {
    let files = corpus_files("corpus_counts_match_a_separate_dump");
    if files.is_empty() {
        return;
    }
    // Every file but the one made to be refused reads.
    for (name, bytes) in &files {
        if name != "asp_InvalidMeshOffset.iqm" {
            parse(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    for &(name, c, has_bounds) in COUNTS {
        let (_, bytes) = (files.iter())
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name}: not in the corpus"));
        let iqm = parse(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = [
            iqm.joints.len(),
            iqm.meshes.len(),
            iqm.num_vertexes,
            iqm.triangles.len(),
            iqm.poses.len(),
            iqm.frames.len(),
            iqm.header.num_framechannels as usize,
            iqm.anims.len(),
        ];
        assert_eq!(got, c.map(|x| x as usize), "{name}");
        assert_eq!(iqm.version, 2, "{name}");
        assert_eq!(iqm.bounds.is_some(), has_bounds, "{name}");
        if let Some(b) = &iqm.bounds {
            assert_eq!(b.len(), iqm.frames.len(), "{name}");
        }
        assert!(
            iqm.frames.iter().all(|f| f.len() == iqm.poses.len()),
            "{name}"
        );
        assert!(iqm.extent <= bytes.len(), "{name}");
        // The meshes' triangle ranges lie in the whole array.
        for m in 0..iqm.meshes.len() {
            let t = iqm_ref::mesh_triangles(&iqm, m);
            assert_eq!(t.len(), iqm.meshes[m].num_triangles as usize, "{name}");
        }
        // Rotations come out unit length.
        for q in (iqm.joints.iter().map(|j| j.rotate))
            .chain(iqm.frames.iter().flatten().map(|p| p.rotate))
        {
            assert!((ref_math::qdot(q, q) - 1.0).abs() < 1e-12, "{name}: {q:?}");
        }
    }
}

#[test]
fn corpus_invalid_mesh_offset_is_refused() {
    let test = "corpus_invalid_mesh_offset_is_refused";
    let Some(dir) = corpus::corpus_subdir("iqm", test) else {
        return;
    };
    let bytes = std::fs::read(dir.join("asp_InvalidMeshOffset.iqm")).unwrap();
    let err = parse(&bytes).unwrap_err();
    assert!(err.contains("meshes"), "{err}");
}

#[test]
fn corpus_mrfixit_reads_as_dumped() {
    let test = "corpus_mrfixit_reads_as_dumped";
    let Some(iqm) = corpus_model("lsz_mrfixit.iqm", test) else {
        return;
    };
    assert_eq!(
        (iqm.joints.len(), iqm.meshes.len(), iqm.num_vertexes),
        (75, 2, 1861)
    );
    assert_eq!((iqm.triangles.len(), iqm.frames.len()), (2988, 101));
    let names: Vec<(&str, &str)> = (iqm.meshes.iter())
        .map(|m| (m.name.as_str(), m.material.as_str()))
        .collect();
    assert_eq!(names, [("Body", "Body.tga"), ("Head", "Head.tga")]);
    let ranges: Vec<[u32; 4]> = (iqm.meshes.iter())
        .map(|m| {
            [
                m.first_vertex,
                m.num_vertexes,
                m.first_triangle,
                m.num_triangles,
            ]
        })
        .collect();
    assert_eq!(ranges, [[0, 1476, 0, 2386], [1476, 385, 2386, 602]]);
    assert_eq!(iqm_ref::mesh_triangles(&iqm, 1).len(), 602);
    assert_eq!(iqm_ref::mesh_triangles(&iqm, 1)[601], [1766, 1839, 1860]);
    assert_eq!(iqm.triangles[0], [0, 1, 2]);

    assert_eq!(iqm.anims.len(), 1);
    let idle = &iqm.anims[0];
    assert_eq!(
        (idle.name.as_str(), idle.first_frame, idle.num_frames),
        ("idle", 0, 101)
    );
    assert_eq!(idle.framerate, 24.0);
    assert!(!idle.looping());

    let heads: Vec<(&str, i32)> = (iqm.joints.iter().take(3))
        .map(|j| (j.name.as_str(), j.parent))
        .collect();
    assert_eq!(heads, [("Root", -1), ("SpineTwist", 0), ("Torso", 0)]);
    let parents: Vec<i32> = iqm.joints.iter().take(8).map(|j| j.parent).collect();
    assert_eq!(parents, [-1, 0, 0, 2, 2, 0, 5, 6]);
    let pose_parents: Vec<i32> = iqm.poses.iter().map(|p| p.parent).collect();
    let joint_parents: Vec<i32> = iqm.joints.iter().map(|j| j.parent).collect();
    assert_eq!(pose_parents, joint_parents);
    let j74 = &iqm.joints[74];
    assert_eq!(j74.parent, -1);
    assert_eq!(
        j74.translate,
        [-0.3366459906101227, -1.590710997581482, 5.196054935455322]
    );
    assert_eq!(j74.rotate, [0.0, 0.0, 1.0, 0.0]);

    // Vertex data: six arrays, all in the standard formats; no colors.
    let kinds: Vec<(u32, u32, u32)> = (iqm.vertex_arrays.iter())
        .map(|v| (v.kind, v.format, v.size))
        .collect();
    assert_eq!(
        kinds,
        [
            (0, 7, 3),
            (1, 7, 2),
            (2, 7, 3),
            (3, 7, 4),
            (4, 1, 4),
            (5, 1, 4)
        ]
    );
    let pos = iqm.positions.as_ref().unwrap();
    assert_eq!(
        pos[0],
        [
            -0.17871899902820587,
            -0.8571900129318237,
            4.3136138916015625
        ]
    );
    assert_eq!(
        pos[1860],
        [0.7791686058044434, 0.3777939975261688, 7.051767349243164]
    );
    assert!(iqm.colors.is_none());
    assert_eq!(iqm.blend_indexes.as_ref().unwrap()[0], [6, 5, 0, 0]);
    assert_eq!(
        iqm.blend_weights.as_ref().unwrap()[0],
        [128.0 / 255.0, 127.0 / 255.0, 0.0, 0.0]
    );
    assert_eq!(iqm.adjacency.as_ref().map(Vec::len), Some(2988));
    assert!(iqm.extensions.is_empty() && iqm.comment.is_empty());

    // Decoded channels, against a separate decode: frame 50 pose 7 (mask 0x67: translation,
    // rotation x, y), frame 100 pose 74 (mask 0x78: rotation x, y, z, w).
    let p = iqm.frames[50][7];
    assert_eq!(iqm.poses[7].mask, 103);
    assert_close(
        p.translate,
        [2.6432716431099834, 0.3722587100637611, 0.09714273922145367],
        1e-12,
    );
    assert_close4(p.rotate, [0.0, 0.0, 0.0, -1.0], 1e-12);
    assert_eq!(p.scale, [1.0; 3]);
    let p = iqm.frames[100][74];
    assert_eq!(iqm.poses[74].mask, 120);
    assert_close(
        p.translate,
        [-0.3366459906101227, -1.590710997581482, 5.108039855957031],
        1e-12,
    );
    assert_close4(
        p.rotate,
        [
            -4.570586494811219e-06,
            0.0,
            0.9999999394313497,
            -0.0003480178254507428,
        ],
        1e-12,
    );

    let b = iqm.bounds.as_ref().unwrap();
    assert_eq!(
        b[0].bbmin,
        [
            -1.2075155973434448,
            -2.9829654693603516,
            -0.005795156117528677
        ]
    );
    assert_eq!(
        b[0].bbmax,
        [1.7118618488311768, 3.524038076400757, 7.8357696533203125]
    );
    assert_eq!(
        (b[0].xyradius, b[0].radius),
        (3.5249762535095215, 7.8907976150512695)
    );
    assert_eq!(b[100].bbmax[1], 3.548771858215332);

    let step = iqm_ref::quantisation_step(&iqm);
    assert!(step > 0.0 && step < 1e-3, "{step}");
    assert!(
        iqm_ref::laid_out_as_spec(&iqm),
        "{:?}",
        iqm_ref::layout_problems(&iqm)
    );
}

#[test]
fn corpus_other_values_read_as_dumped() {
    let test = "corpus_other_values_read_as_dumped";
    // One joint with a uniform scale of 64; nine channels, frame 10 against a separate decode.
    if let Some(iqm) = corpus_model("lg_v_chovel.iqm", test) {
        assert_eq!(iqm.joints[0].scale, [64.0; 3]);
        assert_eq!(iqm.poses[0].mask, 767);
        let p = iqm.frames[10][0];
        assert_close(
            p.translate,
            [57.42512512207031, -53.62528422079049, -87.4418400907889],
            1e-12,
        );
        assert_close4(
            p.rotate,
            [
                0.07921541706933585,
                0.3454322904846634,
                0.3908540548689344,
                -0.8494907640354676,
            ],
            1e-12,
        );
        assert_close(p.scale, [64.00000000023283, 64.0, 64.00000000023283], 1e-12);
        let names: Vec<&str> = iqm.anims.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["idle", "swing"]);
    }
    // The mesh file's poses and frames, byte for byte the animation file's.
    if let (Some(guy), Some(anim)) = (
        corpus_model("raylib_guy.iqm", test),
        corpus_model("raylib_guyanim.iqm", test),
    ) {
        assert_eq!(guy.poses, anim.poses);
        assert_eq!(guy.frames, anim.frames);
        assert!(anim.joints.is_empty() && anim.positions.is_none());
        let names: Vec<(&str, u32, u32)> = (anim.anims.iter())
            .map(|a| (a.name.as_str(), a.first_frame, a.num_frames))
            .collect();
        assert_eq!(names, [("jump", 0, 61), ("dance", 61, 61)]);
        // Poses without joints have no parents to pose by.
        assert!(iqm_ref::frame_matrices(&anim, 0).is_err());
        assert!(iqm_ref::frame_matrices(&guy, 121).is_ok());
        assert!(iqm_ref::frame_matrices(&guy, 122).is_err());
        let p = guy.frames[70][5];
        assert_close(
            p.translate,
            [
                1.5191167128045246e-08,
                3.3000006675792974,
                8.416241568682398e-10,
            ],
            1e-12,
        );
        assert_close4(
            p.rotate,
            [
                0.5000000004082467,
                -0.5000000714534261,
                -0.500000005697868,
                -0.4999999224404482,
            ],
            1e-12,
        );
    }
    // FTE's extensions: a linked list with the nodes before their data.
    for (name, want) in [
        ("nuc_logo.iqm", &[("FTE_MESH", 28)][..]),
        (
            "nuc_player_animations_vvm.iqm",
            &[("FTE_MESH", 28), ("FTE_EVENT", 32)],
        ),
        ("nuc_v_bat_vvm.iqm", &[("FTE_MESH", 56), ("FTE_EVENT", 64)]),
    ] {
        if let Some(iqm) = corpus_model(name, test) {
            let got: Vec<(&str, usize)> = (iqm.extensions.iter())
                .map(|e| (e.name.as_str(), e.data.len()))
                .collect();
            assert_eq!(got, want, "{name}");
            // FTE_MESH is 28 bytes a mesh.
            assert_eq!(
                iqm.extensions[0].data.len(),
                28 * iqm.meshes.len(),
                "{name}"
            );
        }
    }
    // A custom-free file with a color array (the only one in the corpus).
    if let Some(iqm) = corpus_model("rev_wings1_mesh.iqm", test) {
        let colors = iqm.colors.as_ref().unwrap();
        assert_eq!(colors.len(), 796);
        assert!(colors.iter().flatten().all(|c| (0.0..=1.0).contains(c)));
        assert!(iqm.joints.iter().all(|j| j.parent == -1));
    }
    // Vertices counted with no arrays to hold them.
    if let Some(iqm) = corpus_model("rea_player_reload_pistol.iqm", test) {
        assert_eq!(iqm.num_vertexes, 3110);
        assert!(iqm.vertex_arrays.is_empty() && iqm.positions.is_none());
        assert!(iqm_ref::skin(&iqm, None).is_err());
    }
    // No frame channels: every frame decodes to the poses' constants.
    if let Some(iqm) = corpus_model("rea_player_dead.iqm", test) {
        assert_eq!(iqm.header.ofs_frames, 0);
        assert_eq!(iqm.frames[0], iqm.frames[1]);
        assert_eq!(iqm.anims[0].framerate, 0.0);
    }
}

#[test]
fn corpus_layout_flags_only_the_misaligned_files() {
    for (name, bytes) in &corpus_files("corpus_layout_flags_only_the_misaligned_files") {
        let Ok(iqm) = parse(bytes) else {
            continue;
        };
        let problems = iqm_ref::layout_problems(&iqm);
        match MISALIGNED.iter().find(|(n, _)| n == name) {
            None => assert!(problems.is_empty(), "{name}: {problems:?}"),
            Some((_, fields)) => {
                assert!(!iqm_ref::laid_out_as_spec(&iqm), "{name}");
                let flagged: Vec<&str> = (problems.iter())
                    .filter_map(|p| p.split(' ').next())
                    .filter(|f| f.starts_with("ofs_"))
                    .collect();
                assert_eq!(&flagged, fields, "{name}: {problems:?}");
            }
        }
    }
}

#[test]
fn corpus_bind_pose_skin_returns_the_stored_positions() {
    for (name, bytes) in &corpus_files("corpus_bind_pose_skin_returns_the_stored_positions") {
        let Ok(iqm) = parse(bytes) else {
            continue;
        };
        let Some(stored) = &iqm.positions else {
            continue;
        };
        let skinned = iqm_ref::skin(&iqm, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(skinned.len(), stored.len(), "{name}");
        for (v, (s, p)) in skinned.iter().zip(stored).enumerate() {
            let tol = 1e-9 * (1.0 + p.iter().map(|c| c.abs()).fold(0.0, f64::max));
            for k in 0..3 {
                assert!(
                    (s[k] - p[k]).abs() <= tol,
                    "{name} vertex {v}: {s:?} vs {p:?}"
                );
            }
        }
    }
}

/// Every frame's skinned positions against the stored bounds: each inside the box widened by
/// `slack`, the box's faces touched to within `slack`, and the radius (from the origin) within
/// `radius_slack`.
fn check_bounds(name: &str, iqm: &Iqm, slack: f64, radius_slack: f64) {
    let bounds = iqm.bounds.as_ref().unwrap();
    assert_eq!(bounds.len(), iqm.frames.len(), "{name}");
    for (f, b) in bounds.iter().enumerate() {
        let posed = iqm_ref::skin(iqm, Some(f)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(posed.len(), iqm.num_vertexes, "{name}");
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        let mut r2 = 0.0f64;
        for p in &posed {
            assert!(p.iter().all(|c| c.is_finite()), "{name} frame {f}: {p:?}");
            for k in 0..3 {
                assert!(
                    p[k] >= b.bbmin[k] - slack && p[k] <= b.bbmax[k] + slack,
                    "{name} frame {f}: {p:?} outside {b:?}"
                );
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
            r2 = r2.max(p.iter().map(|c| c * c).sum());
        }
        for k in 0..3 {
            assert!(
                lo[k] - b.bbmin[k] <= slack,
                "{name} frame {f}: {lo:?} {b:?}"
            );
            assert!(
                b.bbmax[k] - hi[k] <= slack,
                "{name} frame {f}: {hi:?} {b:?}"
            );
        }
        assert!(
            (r2.sqrt() - b.radius).abs() <= radius_slack,
            "{name} frame {f}: {b:?}"
        );
    }
}

/// The largest `|w - derived_w(x, y, z)|` over the stored (decoded, not normalised) rotations
/// whose x, y or z channel varies and whose `|w|` is within 0.001..0.05 (where a derived w is
/// most sensitive to the others' quantisation), with their count.
fn derived_w_residual(iqm: &Iqm) -> (f64, usize) {
    let mut worst = 0.0f64;
    let mut n = 0;
    for f in 0..iqm.frames.len() {
        let raw = iqm_ref::pose_channels(iqm, f).unwrap();
        for (pose, v) in iqm.poses.iter().zip(&raw) {
            let (x, y, z, w) = (v[3], v[4], v[5], v[6]);
            if pose.mask & 0x38 != 0 && (0.001..0.05).contains(&w.abs()) {
                worst = worst.max((w - iqm_ref::derived_w(x, y, z)).abs());
                n += 1;
            }
        }
    }
    (worst, n)
}

#[test]
fn corpus_mrfixit_frames_stay_inside_the_stored_bounds() {
    let test = "corpus_mrfixit_frames_stay_inside_the_stored_bounds";
    let Some(iqm) = corpus_model("lsz_mrfixit.iqm", test) else {
        return;
    };
    // Not to 1e-3: the skinned box is up to 7.95e-3 off the stored one (frame 26 in y at a
    // left finger vertex, frame 71 in z at the left foot) while the translation step is 2e-5.
    // The rotations carry version 1's jitter (iqm.txt: version 2 stores w "to minimize
    // animation jitter"): every stored w is -sqrt(1 - x² - y² - z²) of the quantised x, y, z to
    // 1e-5, even where |w| is small and a w quantised on its own (the rat's, the pistol's)
    // differs from that by more than 1e-3: the w `upgrade.cpp` derives when it turns a v1 file
    // into v2 (FORMATS.md §9.2). At |w| ≈ 0.007 (HandGoal.L at frame 26, Shin.L at frame 71) a
    // half step of x, y, z (~1.5e-5) moves w by ~2e-3, a few 1e-3 at the vertices below, while
    // the compiler computed the bounds from the rotations before quantisation (§9.5). The
    // radius, set by the head, holds to 1e-4.
    let (residual, n) = derived_w_residual(&iqm);
    assert!(n >= 300 && residual < 1e-5, "{n} {residual}");
    check_bounds("lsz_mrfixit.iqm", &iqm, 1e-2, 1e-4);
    for name in ["rev_rat_left_female_idle.iqm", "jgw_pistol.iqm"] {
        if let Some(other) = corpus_model(name, test) {
            let (residual, n) = derived_w_residual(&other);
            assert!(n >= 20 && residual > 1e-3, "{name}: {n} {residual}");
        }
    }
    // A file compiled as version 2, weights summing to 255: to 1e-3.
    if let Some(guy) = corpus_model("raylib_guy.iqm", test) {
        check_bounds("raylib_guy.iqm", &guy, 1e-3, 1e-3);
    }
}

#[test]
fn corpus_bounds_put_unweighted_vertices_at_the_origin() {
    // Where a vertex's weights are all 0, [`iqm_ref::skin`] leaves it in place; the tools that
    // wrote these files placed it at the origin for the bounds (as the SDK demo and
    // DarkPlaces' GPU path would draw it, FORMATS.md §9.6). With that, their boxes match.
    let test = "corpus_bounds_put_unweighted_vertices_at_the_origin";
    for (name, unweighted) in [
        ("jgp_lamp_standing.iqm", 355),
        ("rea_turret_sphere.iqm", 140),
        ("rea_player_mine_pose.iqm", 240),
    ] {
        let Some(iqm) = corpus_model(name, test) else {
            return;
        };
        let weights = iqm.blend_weights.as_ref().unwrap();
        let zero: Vec<bool> = (weights.iter())
            .map(|w| w.iter().all(|&x| x == 0.0))
            .collect();
        assert_eq!(zero.iter().filter(|&&z| z).count(), unweighted, "{name}");
        let mut rigid_fits = true;
        for (f, b) in iqm.bounds.as_ref().unwrap().iter().enumerate() {
            let posed = iqm_ref::skin(&iqm, Some(f)).unwrap();
            let boxed = |at_origin: bool| {
                let mut lo = [f64::INFINITY; 3];
                let mut hi = [f64::NEG_INFINITY; 3];
                for (p, &z) in posed.iter().zip(&zero) {
                    let p = if z && at_origin { [0.0; 3] } else { *p };
                    for k in 0..3 {
                        lo[k] = lo[k].min(p[k]);
                        hi[k] = hi[k].max(p[k]);
                    }
                }
                (0..3)
                    .map(|k| (lo[k] - b.bbmin[k]).abs().max((hi[k] - b.bbmax[k]).abs()))
                    .fold(0.0, f64::max)
            };
            assert!(boxed(true) < 1e-5, "{name} frame {f}: {}", boxed(true));
            rigid_fits &= boxed(false) < 1e-3;
        }
        assert!(!rigid_fits, "{name}");
    }
}

/// A small deterministic generator for the cut lengths.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn corpus_files_cut_short_are_errors() {
    for (name, bytes) in &corpus_files("corpus_files_cut_short_are_errors") {
        let full = parse(bytes).ok();
        let mut state = 0x9e37_79b9_7f4a_7c15 ^ bytes.len() as u64;
        for _ in 0..20 {
            let cut = (next(&mut state) % bytes.len() as u64) as usize;
            let short = &bytes[..cut];
            assert!(parse(short).is_err(), "{name} cut at {cut}");
            // With `filesize` saying the cut length, what is lost must still be noticed: any
            // cut below the end of the furthest block.
            if cut >= 24 {
                let mut patched = short.to_vec();
                patched[20..24].copy_from_slice(&(cut as u32).to_le_bytes());
                let got = parse(&patched);
                match &full {
                    Some(iqm) if cut >= iqm.extent => assert!(got.is_ok(), "{name} cut at {cut}"),
                    _ => assert!(got.is_err(), "{name} cut at {cut}"),
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Files built here: two joints, three vertices, one triangle, two frames
// ---------------------------------------------------------------------------------------------

const H: f64 = std::f64::consts::FRAC_1_SQRT_2;

fn u16s(d: &mut Vec<u8>, v: &[u16]) {
    v.iter().for_each(|x| d.extend_from_slice(&x.to_le_bytes()));
}

fn u32s(d: &mut Vec<u8>, v: &[u32]) {
    v.iter().for_each(|x| d.extend_from_slice(&x.to_le_bytes()));
}

fn f32s(d: &mut Vec<u8>, v: &[f64]) {
    v.iter()
        .for_each(|x| d.extend_from_slice(&(*x as f32).to_le_bytes()));
}

fn put(d: &mut [u8], at: usize, v: u32) {
    d[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Pads to `align` and returns where the next block starts.
fn start(d: &mut Vec<u8>, align: usize) -> u32 {
    while !d.len().is_multiple_of(align) {
        d.push(0);
    }
    d.len() as u32
}

/// Header field offsets.
const FILESIZE: usize = 20;
const NUM_TEXT: usize = 28;
const NUM_VERTEXES: usize = 48;
const NUM_FRAMECHANNELS: usize = 96;
const NUM_EXTENSIONS: usize = 116;

/// Where the fixture's pieces are, for the tests that spoil them.
struct Fixture {
    bytes: Vec<u8>,
    meshes: usize,
    vertexarrays: usize,
    triangles: usize,
    joints: usize,
    poses: usize,
    anims: usize,
    extension: usize,
}

/// The model as version 2 (positions in double, texcoords in half, normals in short, weights
/// in ushort, colors in byte) or version 1 (all standard formats; joints with rotate x, y, z
/// and nine-channel poses).
///
/// Joint 0 `root` at (1, 0, 0); joint 1 `tip` under it at (0, 2, 0) turned 90° about z. Pose 0
/// varies its translation x (1 + 0.5 u) and rotation z (0.25 u): frame 0 is the bind pose,
/// frame 1 moves x to 3 and turns -60° about z (q = (0, 0, 0.5, -sqrt 0.75)). Pose 1 is joint
/// 1's constant transform. Vertex 0 has no weights, vertex 1 is all `tip`'s, vertex 2 half
/// each.
fn fixture(version: u32) -> Fixture {
    let v2 = version == 2;
    let mut d = Vec::new();
    d.extend_from_slice(b"INTERQUAKEMODEL\0");
    u32s(&mut d, &[version]);
    d.resize(124, 0);

    // Text: "" root tip m mat a
    let text = b"\0root\0tip\0m\0mat\0a\0";
    let ofs = start(&mut d, 4);
    d.extend_from_slice(text);
    put(&mut d, 28, text.len() as u32);
    put(&mut d, 32, ofs);

    let meshes = start(&mut d, 4) as usize;
    u32s(&mut d, &[10, 12, 0, 3, 0, 1]);
    put(&mut d, 36, 1);
    put(&mut d, 40, meshes as u32);

    // Vertex arrays: descriptors first, patched once the data is placed.
    let vertexarrays = start(&mut d, 4) as usize;
    d.resize(vertexarrays + 6 * 20, 0);
    put(&mut d, 44, 6);
    put(&mut d, 48, 3);
    put(&mut d, 52, vertexarrays as u32);
    let positions: [[f64; 3]; 3] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let formats: [(u32, u32, u32); 6] = if v2 {
        [
            (0, 8, 3),
            (1, 6, 2),
            (2, 2, 3),
            (4, 1, 4),
            (5, 3, 4),
            (6, 0, 4),
        ]
    } else {
        [
            (0, 7, 3),
            (1, 7, 2),
            (2, 7, 3),
            (4, 1, 4),
            (5, 1, 4),
            (6, 1, 4),
        ]
    };
    for (i, &(kind, format, size)) in formats.iter().enumerate() {
        let align = iqm_ref::format_size(format).unwrap().max(4);
        let at = start(&mut d, align);
        match (kind, v2) {
            (0, true) => positions
                .iter()
                .flatten()
                .for_each(|x| d.extend_from_slice(&x.to_le_bytes())),
            (0, false) => f32s(&mut d, positions.as_flattened()),
            // 0.5, 0.25 | 1, -2 | 65504 (the largest half), 2^-24 (the smallest)
            (1, true) => u16s(&mut d, &[0x3800, 0x3400, 0x3c00, 0xc000, 0x7bff, 0x0001]),
            (1, false) => f32s(&mut d, &[0.5, 0.25, 1.0, -2.0, 65504.0, 2f64.powi(-24)]),
            (2, true) => u16s(&mut d, &[0, 0, 1, 0, 0xffff, 0, 7, 0, 0]),
            (2, false) => f32s(&mut d, &[0.0, 0.0, 1.0, 0.0, -1.0, 0.0, 7.0, 0.0, 0.0]),
            (4, _) => d.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0]),
            (5, true) => u16s(&mut d, &[0, 0, 0, 0, 65535, 0, 0, 0, 32768, 32767, 0, 0]),
            (5, false) => d.extend_from_slice(&[0, 0, 0, 0, 255, 0, 0, 0, 128, 127, 0, 0]),
            (6, true) => d.extend_from_slice(&[127, 0, 0x81, 127, 0, 0, 0, 0, 0, 0, 0, 0]),
            _ => d.extend_from_slice(&[255, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0, 0]),
        }
        let row = vertexarrays + 20 * i;
        for (k, v) in [kind, 0, format, size, at].into_iter().enumerate() {
            put(&mut d, row + 4 * k, v);
        }
    }

    let triangles = start(&mut d, 4) as usize;
    u32s(&mut d, &[0, 1, 2]);
    put(&mut d, 56, 1);
    put(&mut d, 60, triangles as u32);

    // Joints.
    let joints = start(&mut d, 4) as usize;
    let w0 = if v2 { 1.0 } else { -1.0 };
    for (name, parent, t, q) in [
        (1u32, -1i32, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0, w0]),
        (6, 0, [0.0, 2.0, 0.0], [0.0, 0.0, -H, -H]),
    ] {
        u32s(&mut d, &[name, parent as u32]);
        f32s(&mut d, &t);
        f32s(&mut d, if v2 { &q[..] } else { &q[..3] });
        f32s(&mut d, &[1.0; 3]);
    }
    put(&mut d, 68, 2);
    put(&mut d, 72, joints as u32);

    // Poses: pose 0 varies channels 0 (t.x) and 5 (q.z); v2 keeps w constant at -sqrt(0.75),
    // v1 derives it.
    let poses = start(&mut d, 4) as usize;
    let w = -(0.75f64).sqrt();
    let (offsets, scales): ([&[f64]; 2], [&[f64]; 2]) = if v2 {
        (
            [
                &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, w, 1.0, 1.0, 1.0],
                &[0.0, 2.0, 0.0, 0.0, 0.0, -H, -H, 1.0, 1.0, 1.0],
            ],
            [
                &[0.5, 0.0, 0.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 0.0],
                &[0.0; 10],
            ],
        )
    } else {
        (
            [
                &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
                &[0.0, 2.0, 0.0, 0.0, 0.0, -H, 1.0, 1.0, 1.0],
            ],
            [&[0.5, 0.0, 0.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.0], &[0.0; 9]],
        )
    };
    for (p, parent) in [-1i32, 0].into_iter().enumerate() {
        let mask = if p == 0 { 0x21 } else { 0 };
        u32s(&mut d, &[parent as u32, mask]);
        f32s(&mut d, offsets[p]);
        f32s(&mut d, scales[p]);
    }
    put(&mut d, 76, 2);
    put(&mut d, 80, poses as u32);

    let anims = start(&mut d, 4) as usize;
    u32s(&mut d, &[16, 0, 2]);
    f32s(&mut d, &[24.0]);
    u32s(&mut d, &[1]);
    put(&mut d, 84, 1);
    put(&mut d, 88, anims as u32);

    // Frames: (t.x, q.z) per frame.
    let frames = start(&mut d, 4);
    u16s(&mut d, &[0, 0, 4, 2]);
    put(&mut d, 92, 2);
    put(&mut d, 96, 2);
    put(&mut d, 100, frames);

    let bounds = start(&mut d, 4);
    f32s(&mut d, &[0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]);
    f32s(&mut d, &[2.0, 0.0, 0.0, 3.5, 1.5, 0.0, 3.75, 3.75]);
    put(&mut d, 104, bounds);

    let comment = start(&mut d, 4);
    d.extend_from_slice(b"hi\0");
    put(&mut d, 108, 3);
    put(&mut d, 112, comment);

    let extension = start(&mut d, 4) as usize;
    u32s(&mut d, &[16, 4, extension as u32 + 16, 0]);
    d.extend_from_slice(&[1, 2, 3, 4]);
    put(&mut d, 116, 1);
    put(&mut d, 120, extension as u32);

    let len = d.len() as u32;
    put(&mut d, 20, len);
    Fixture {
        bytes: d,
        meshes,
        vertexarrays,
        triangles,
        joints,
        poses,
        anims,
        extension,
    }
}

fn assert_close(a: [f64; 3], b: [f64; 3], tol: f64) {
    assert!((0..3).all(|k| (a[k] - b[k]).abs() <= tol), "{a:?} vs {b:?}");
}

fn assert_close4(a: [f64; 4], b: [f64; 4], tol: f64) {
    assert!((0..4).all(|k| (a[k] - b[k]).abs() <= tol), "{a:?} vs {b:?}");
}

#[test]
fn built_files_read_in_both_versions() {
    for version in [2, 1] {
        let f = fixture(version);
        let iqm = parse(&f.bytes).unwrap_or_else(|e| panic!("v{version}: {e}"));
        assert_eq!(iqm.version, version);
        assert!(
            iqm_ref::laid_out_as_spec(&iqm),
            "{:?}",
            iqm_ref::layout_problems(&iqm)
        );
        assert_eq!(iqm.extent, f.bytes.len());
        assert_eq!(iqm.meshes[0].name, "m");
        assert_eq!(iqm.meshes[0].material, "mat");
        assert_eq!(
            iqm.positions.as_ref().unwrap(),
            &[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
        );
        assert_eq!(
            iqm.texcoords.as_ref().unwrap(),
            &[[0.5, 0.25], [1.0, -2.0], [65504.0, 2f64.powi(-24)]]
        );
        let normals = iqm.normals.as_ref().unwrap();
        assert_eq!(normals[..2], [[0.0, 0.0, 1.0], [0.0, -1.0, 0.0]]);
        assert_eq!(normals[2], [7.0, 0.0, 0.0]);
        assert!(iqm.tangents.is_none());
        assert_eq!(
            iqm.blend_indexes.as_ref().unwrap(),
            &[[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]]
        );
        let weights = iqm.blend_weights.as_ref().unwrap();
        assert_eq!(weights[1], [1.0, 0.0, 0.0, 0.0]);
        assert!((weights[2][0] + weights[2][1] - 1.0).abs() < 1e-15);
        let blue = if version == 2 { -1.0 } else { 0.0 };
        assert_eq!(iqm.colors.as_ref().unwrap()[0], [1.0, 0.0, blue, 1.0]);
        assert_eq!(iqm.triangles, [[0, 1, 2]]);
        assert_eq!(iqm_ref::mesh_triangles(&iqm, 0), &[[0, 1, 2]]);
        assert!(iqm.adjacency.is_none());

        let names: Vec<(&str, i32)> = iqm
            .joints
            .iter()
            .map(|j| (j.name.as_str(), j.parent))
            .collect();
        assert_eq!(names, [("root", -1), ("tip", 0)]);
        assert_close4(iqm.joints[1].rotate, [0.0, 0.0, -H, -H], 1e-7);
        assert_eq!(iqm.poses[0].mask, 0x21);
        assert_eq!(iqm.poses[0].offset.len(), if version == 2 { 10 } else { 9 });

        // Frame 0 is the bind pose; frame 1 moves pose 0 to x = 3 and turns it.
        let (f0, f1) = (iqm.frames[0][0], iqm.frames[1][0]);
        assert_close(f0.translate, [1.0, 0.0, 0.0], 0.0);
        assert_close4(f0.rotate, [0.0, 0.0, 0.0, -1.0], 1e-15);
        assert_close(f1.translate, [3.0, 0.0, 0.0], 0.0);
        assert_close4(f1.rotate, [0.0, 0.0, 0.5, -(0.75f64).sqrt()], 1e-7);
        assert_close4(iqm.frames[1][1].rotate, [0.0, 0.0, -H, -H], 1e-7);
        assert_eq!(iqm_ref::quantisation_step(&iqm), 0.5);

        let a = &iqm.anims[0];
        assert_eq!((a.name.as_str(), a.first_frame, a.num_frames), ("a", 0, 2));
        assert_eq!(a.framerate, 24.0);
        assert!(a.looping());
        let b = iqm.bounds.as_ref().unwrap();
        assert_eq!(b[1].bbmax, [3.5, 1.5, 0.0]);
        assert_eq!((b[1].xyradius, b[1].radius), (3.75, 3.75));
        assert_eq!(iqm.comment, b"hi\0");
        assert_eq!(iqm.extensions.len(), 1);
        assert_eq!(iqm.extensions[0].name, "a");
        assert_eq!(iqm.extensions[0].data, [1, 2, 3, 4]);

        // Bind pose: joint 1 at (1, 2, 0) turned 90° about z.
        let bind = iqm_ref::bind_matrices(&iqm);
        let tip = iqm_ref::transform(&bind[1], [1.0, 0.0, 0.0]);
        assert_close(tip, [1.0, 3.0, 0.0], 1e-7);
        assert_close(
            iqm_ref::transform(&bind[1], [0.0; 3]),
            [1.0, 2.0, 0.0],
            1e-7,
        );
        let f0m = iqm_ref::frame_matrices(&iqm, 0).unwrap();
        for (a, b) in f0m.iter().zip(&bind) {
            for r in 0..3 {
                assert_close4(a[r], b[r], 1e-7);
            }
        }
        assert!(iqm_ref::frame_matrices(&iqm, 2).is_err());

        // Skinning: the bind pose and frame 0 give the positions back; at frame 1 everything
        // weighted follows joint 0 (joint 1 keeps its bind transform under it): x moved to 3,
        // turned -60° about z around it. Vertex 0 has no weights and stays.
        let stored = iqm.positions.clone().unwrap();
        for frame in [None, Some(0)] {
            for (s, p) in iqm_ref::skin(&iqm, frame).unwrap().iter().zip(&stored) {
                assert_close(*s, *p, 1e-7);
            }
        }
        let (c, s) = (0.5, -(0.75f64).sqrt());
        let moved = |p: [f64; 3]| {
            let (x, y) = (p[0] - 1.0, p[1]);
            [3.0 + c * x - s * y, s * x + c * y, p[2]]
        };
        let posed = iqm_ref::skin(&iqm, Some(1)).unwrap();
        assert_eq!(posed[0], [0.0, 0.0, 0.0]);
        assert_close(posed[1], moved(stored[1]), 1e-6);
        assert_close(posed[2], moved(stored[2]), 1e-6);
        assert_close(
            posed[2],
            [
                3.0 + 0.5 * (3f64.sqrt() - 1.0),
                0.5 * (3f64.sqrt() + 1.0),
                0.0,
            ],
            1e-6,
        );
    }
}

#[test]
fn built_files_spoiled_are_errors_that_say_where() {
    let f = fixture(2);
    let spoil = |at: usize, v: u32, needle: &str| {
        let mut d = f.bytes.clone();
        put(&mut d, at, v);
        let err = parse(&d).expect_err(needle);
        assert!(err.contains(needle), "{needle}: {err}");
    };
    spoil(16, 3, "version 3");
    spoil(FILESIZE, f.bytes.len() as u32 + 4, "filesize");
    spoil(NUM_TEXT, 1000, "text");
    spoil(NUM_TEXT, 17, "unterminated");
    spoil(f.meshes, 18, "string offset 18");
    spoil(f.meshes + 12, 4, "mesh 0: vertices 0..4");
    spoil(f.meshes + 20, 2, "mesh 0: triangles 0..2");
    spoil(NUM_VERTEXES, 100, "run past the end");
    spoil(f.vertexarrays + 8, 9, "format 9");
    spoil(f.vertexarrays + 12, 4, "4 components, not 3");
    spoil(f.vertexarrays + 20, 0, "a second array of type 0");
    spoil(f.vertexarrays + 16, 60, "inside the header");
    spoil(f.triangles + 8, 3, "triangle 0: vertex 3");
    spoil(f.joints + 4, 0, "joint 0: parent 0");
    spoil(f.joints + 48 + 4, 1, "joint 1: parent 1");
    spoil(f.poses + 88, 5, "pose 1: parent 5");
    spoil(f.poses + 4, 0x421, "bits past channel 9");
    spoil(f.poses + 4, 0x23, "masks set 3 bits");
    spoil(NUM_FRAMECHANNELS, 3, "num_framechannels 3");
    spoil(f.anims + 8, 3, "anim 0: frames 0..3");
    spoil(NUM_EXTENSIONS, 2, "ends after 1 of 2");
    spoil(f.extension + 4, 1000, "extension 0 data");

    // Blend indexes: joint 2 of two.
    let mut d = f.bytes.clone();
    let at =
        u32::from_le_bytes(d[f.vertexarrays + 3 * 20 + 16..][..4].try_into().unwrap()) as usize;
    d[at + 4] = 2;
    let err = parse(&d).unwrap_err();
    assert!(err.contains("vertex 1: blend index 2"), "{err}");

    // A loop in the extension list, and a rotation with no direction.
    let mut d = f.bytes.clone();
    put(&mut d, NUM_EXTENSIONS, 2);
    put(&mut d, f.extension + 12, f.extension as u32);
    assert!(parse(&d).unwrap_err().contains("loops"));
    let mut d = f.bytes.clone();
    for k in 0..4 {
        put(&mut d, f.joints + 20 + 4 * k, 0);
    }
    assert!(parse(&d).unwrap_err().contains("joint 0: rotation"));

    // No magic, no header.
    assert!(parse(b"INTERQUAKEMODEL").is_err());
    assert!(parse(&f.bytes[..100]).unwrap_err().contains("header"));
    let mut d = f.bytes.clone();
    d[0] = b'i';
    assert!(parse(&d).unwrap_err().contains("magic"));
}

#[test]
fn built_files_cut_anywhere_are_errors() {
    for version in [2, 1] {
        let f = fixture(version);
        for cut in 0..f.bytes.len() {
            assert!(parse(&f.bytes[..cut]).is_err(), "v{version} cut at {cut}");
            if cut >= 24 {
                let mut d = f.bytes[..cut].to_vec();
                put(&mut d, FILESIZE, cut as u32);
                assert!(
                    parse(&d).is_err(),
                    "v{version} cut at {cut}, filesize patched"
                );
            }
        }
    }
}

#[test]
fn half_floats_decode() {
    use iqm_ref::half_to_f64;
    assert_eq!(half_to_f64(0x3c00), 1.0);
    assert_eq!(half_to_f64(0xc000), -2.0);
    assert_eq!(half_to_f64(0x7bff), 65504.0);
    assert_eq!(half_to_f64(0x0400), 2f64.powi(-14));
    assert_eq!(half_to_f64(0x03ff), 1023.0 * 2f64.powi(-24));
    assert_eq!(half_to_f64(0x8000), 0.0);
    assert!(half_to_f64(0x8000).is_sign_negative());
    assert_eq!(half_to_f64(0x7c00), f64::INFINITY);
    assert!(half_to_f64(0x7e00).is_nan());
    assert_eq!(iqm_ref::derived_w(0.0, 0.0, 0.6), -0.8);
    assert_eq!(iqm_ref::derived_w(1.0, 1.0, 0.0), -0.0);
}
