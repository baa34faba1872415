//! DPM behaviour on files made in code: TubeRig models through ossa's writer, and the hand-built
//! three-bone chain from tests/common, whose bytes do not come from ossa. No corpus needed.

// Index loops read better than zips when several parallel arrays are compared.
#![allow(clippy::needless_range_loop)]

mod common;

use common::*;
use ossa::synth::TubeRig;
use ossa::{
    ErrorCode, Format, Interleaved, LoadOptions, Mat3x4, Model, ModelParts, Name, SKIN_NORMALIZE,
    Strided,
};

fn load(bytes: &[u8]) -> ossa::Result<Model> {
    Model::load(bytes, &LoadOptions::default())
}

fn load_strict(bytes: &[u8]) -> ossa::Result<Model> {
    Model::load(
        bytes,
        &LoadOptions {
            strict: true,
            ..LoadOptions::default()
        },
    )
}

fn chain() -> (Vec<u8>, FxLayout) {
    chain_fixture().build()
}

/// Loads, expecting a failure with this code and offset; returns the message.
#[track_caller]
fn expect_err(bytes: &[u8], code: ErrorCode, offset: Option<usize>) -> String {
    match load(bytes) {
        Ok(_) => panic!("loaded, expected {code:?}"),
        Err(e) => {
            assert_eq!(e.code(), code, "{e}");
            if let Some(o) = offset {
                assert_eq!(e.offset(), Some(o as u64), "{e}");
            }
            e.detail().message.clone()
        }
    }
}

fn bits(m: &Mat3x4) -> [u32; 12] {
    m.m.map(f32::to_bits)
}

fn assert_close3(got: [f32; 3], want: [f32; 3], eps: f32, what: &str) {
    for k in 0..3 {
        assert!(
            (got[k] - want[k]).abs() <= eps,
            "{what}: got {got:?}, want {want:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Writer round trips
// ---------------------------------------------------------------------------------------------

fn rigs() -> Vec<TubeRig> {
    vec![
        TubeRig::default(),
        small_tube(),
        TubeRig {
            frames: 1,
            ..TubeRig::default()
        },
        TubeRig {
            bones: 1,
            frames: 3,
            ..TubeRig::default()
        },
        TubeRig {
            bones: 7,
            rings_per_bone: 3,
            sides: 5,
            frames: 6,
            bend: 1.2,
            ..TubeRig::default()
        },
    ]
}

#[test]
fn tube_rigs_round_trip_through_the_writer() {
    for rig in rigs() {
        let m = rig.build().unwrap();
        let bytes = ossa::dpm::write(&m).unwrap();
        assert_eq!(m.save(Format::Dpm).unwrap(), bytes);
        let l = load(&bytes).unwrap();
        let what = format!("{rig:?}");

        assert_eq!(l.bones(), m.bones(), "{what}");
        assert_eq!(l.frames().len(), m.frames().len(), "{what}");
        for (a, b) in l.frames().iter().zip(m.frames()) {
            assert_eq!(a.name, b.name, "{what}");
            assert_eq!(a.mins.map(f32::to_bits), b.mins.map(f32::to_bits), "{what}");
            assert_eq!(a.maxs.map(f32::to_bits), b.maxs.map(f32::to_bits), "{what}");
            assert_eq!(a.yaw_radius.to_bits(), b.yaw_radius.to_bits(), "{what}");
            assert_eq!(a.radius.to_bits(), b.radius.to_bits(), "{what}");
        }
        for f in 0..m.frames().len() {
            let (a, b) = (
                l.skeleton().frame_poses(f).unwrap(),
                m.skeleton().frame_poses(f).unwrap(),
            );
            assert_eq!(a.len(), rig.bones as usize);
            for (x, y) in a.iter().zip(b.iter()) {
                assert_eq!(bits(x), bits(y), "{what} frame {f}");
            }
        }
        assert_eq!(l.meshes().len(), 1);
        let (lm, mm) = (&l.meshes()[0], &m.meshes()[0]);
        assert_eq!(lm.shader(), mm.shader());
        assert_eq!(lm.shader().as_bytes(), b"textures/tube");
        assert_eq!(lm.vertex_count(), rig.vertex_count() as usize, "{what}");
        assert_eq!(lm.indices(), mm.indices(), "{what}");
        assert_eq!(lm.group_ids(), mm.group_ids(), "{what}");
        let (lt, mt) = (lm.texcoords().unwrap(), mm.texcoords().unwrap());
        assert_eq!(lt.len(), mt.len());
        for (a, b) in lt.iter().zip(mt) {
            assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "{what}");
        }
        for v in 0..mm.vertex_count() {
            let (a, b) = (lm.influences(v), mm.influences(v));
            assert_eq!(a.len(), b.len(), "{what} vertex {v}");
            for (x, y) in a.iter().zip(b) {
                assert_eq!(x.origin.map(f32::to_bits), y.origin.map(f32::to_bits));
                assert_eq!(x.weight.to_bits(), y.weight.to_bits());
                assert_eq!(x.normal.map(f32::to_bits), y.normal.map(f32::to_bits));
                assert_eq!(x.bone, y.bone);
            }
        }
        let (li, mi) = (l.info(), m.info());
        assert_eq!(
            (
                li.bone_count,
                li.frame_count,
                li.vertex_count,
                li.triangle_count
            ),
            (
                mi.bone_count,
                mi.frame_count,
                mi.vertex_count,
                mi.triangle_count
            )
        );
        assert_eq!(li.max_influences, mi.max_influences);

        // Written again, the loaded model gives the same bytes.
        assert_eq!(ossa::dpm::write(&l).unwrap(), bytes, "{what}");
    }
}

/// The writer's output read by the test's own reader: the layout follows FORMATS.md §2.1.
#[test]
fn the_writers_bytes_follow_the_format() {
    let rig = TubeRig::default();
    let m = rig.build().unwrap();
    let bytes = ossa::dpm::write(&m).unwrap();
    let raw = RawDpm::parse(&bytes).unwrap();
    assert_eq!(raw.file_type, 2);
    assert_eq!(raw.filesize as usize, bytes.len());
    assert_eq!(raw.bones.len(), 5);
    for (i, b) in raw.bones.iter().enumerate() {
        assert_eq!(b.name, format!("bone{i}").into_bytes());
        assert_eq!(b.parent, i as i32 - 1);
        assert_eq!(b.flags, 0);
    }
    assert_eq!(raw.frames[0].name, b"bind");
    assert_eq!(raw.frames[3].name, b"bend3");
    for f in 0..4u32 {
        for b in 0..5u32 {
            assert_eq!(
                raw.poses[f as usize][b as usize].map(f32::to_bits),
                rig.local_pose(f, b).m.map(f32::to_bits)
            );
        }
    }
    let mesh = &raw.meshes[0];
    assert_eq!(mesh.shader, b"textures/tube");
    assert_eq!(mesh.num_verts, rig.vertex_count());
    assert_eq!(&mesh.indices[..], m.meshes()[0].indices());
    // The ring at z = 0 is all bone 0, weight 1, at radius 2 around the axis.
    let v0 = &mesh.vertices[0];
    assert_eq!(v0.len(), 1);
    assert_eq!((v0[0].bone, v0[0].weight), (0, 1.0));
    assert_eq!(v0[0].origin, [2.0, 0.0, 0.0]);
    assert_eq!(v0[0].normal, [1.0, 0.0, 0.0]);

    // Every frame of the written file skins (ossa) as the reference formula says (test).
    let size = 50.0;
    for f in 0..4u32 {
        let abs = absolute(&raw.parents(), &raw.poses[f as usize]);
        let out = skin(&m, 0, &pose(&m, &[blend(f, 1.0)], None), 0);
        for (v, infl) in mesh.vertices.iter().enumerate() {
            let (p, n) = direct_skin(infl, &abs);
            assert!(
                max_abs_diff(p, out.positions[v]) <= 1e-5 * size,
                "frame {f}"
            );
            assert!(max_abs_diff(n, out.normals[v]) <= 1e-5, "frame {f}");
        }
    }
}

#[test]
fn the_writer_rejects_what_dpm_cannot_hold() {
    let empty = Model::from_parts(ModelParts::new(Format::Dpm)).unwrap();
    let e = ossa::dpm::write(&empty).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);

    let mut parts = small_tube().parts();
    parts.bones[1].name = Name::from("a_bone_name_of_thirty_three_bytes");
    assert_eq!(parts.bones[1].name.as_bytes().len(), 33);
    let m = Model::from_parts(parts).unwrap();
    let e = ossa::dpm::write(&m).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    assert!(e.detail().message.contains("bone 1"), "{e}");

    let e = small_tube()
        .build()
        .unwrap()
        .save(Format::Auto)
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported);
}

#[test]
fn the_hand_built_chain_survives_the_writer() {
    let (bytes, _) = chain();
    let m = load(&bytes).unwrap();
    let written = ossa::dpm::write(&m).unwrap();
    // ossa lays the file out in its own order, so compare values, not bytes.
    let raw = RawDpm::parse(&written).unwrap();
    let fx = chain_fixture();
    for (r, b) in raw.bones.iter().zip(&fx.bones) {
        assert_eq!((&r.name, r.parent, r.flags), (&b.name, b.parent, b.flags));
    }
    for (f, frame) in fx.frames.iter().enumerate() {
        assert_eq!(raw.frames[f].name, frame.name);
        assert_eq!(raw.frames[f].mins, frame.mins);
        for (got, want) in raw.poses[f].iter().zip(&frame.poses) {
            assert_eq!(got.map(f32::to_bits), want.map(f32::to_bits));
        }
    }
    let (rm, fm) = (&raw.meshes[0], &fx.meshes[0]);
    assert_eq!(rm.shader, fm.shader);
    assert_eq!(rm.indices, fm.indices);
    assert_eq!(rm.group_ids, fm.group_ids);
    assert_eq!(rm.texcoords, fm.texcoords);
    for (rv, fv) in rm.vertices.iter().zip(&fm.vertices) {
        assert_eq!(rv.len(), fv.len());
        for (a, b) in rv.iter().zip(fv) {
            assert_eq!(
                (a.origin, a.weight, a.normal, a.bone),
                (b.origin, b.weight, b.normal, b.bone)
            );
        }
    }
    assert_eq!(ossa::dpm::write(&load(&written).unwrap()).unwrap(), written);
}

// ---------------------------------------------------------------------------------------------
// The hand-built chain
// ---------------------------------------------------------------------------------------------

#[test]
fn the_hand_built_chain_loads_with_its_values() {
    let (bytes, _) = chain();
    let m = load(&bytes).unwrap();
    assert!(m.warnings().is_empty(), "{:?}", m.warnings());
    let info = m.info();
    assert_eq!(info.format, Format::Dpm);
    assert_eq!(
        (
            info.bone_count,
            info.mesh_count,
            info.frame_count,
            info.vertex_count,
            info.triangle_count,
            info.max_influences
        ),
        (3, 1, 3, 4, 2, 3)
    );
    let names: Vec<&[u8]> = m.bones().iter().map(|b| b.name.as_bytes()).collect();
    assert_eq!(names, [&b"root"[..], b"mid", b"tip"]);
    let parents: Vec<i32> = m.bones().iter().map(|b| b.parent).collect();
    assert_eq!(parents, [-1, 0, 1]);
    assert_eq!(m.bones()[2].flags, ossa::BONE_ATTACHMENT);
    assert_eq!(m.bones()[0].flags, 0);
    assert_eq!(m.find_bone("tip"), Some(2));
    assert_eq!(m.find_bone("Tip"), None);
    assert_eq!(m.find_frame("bend_b"), Some(2));
    assert_eq!(m.find_frame("bend"), None);

    let fr = &m.frames()[1];
    assert_eq!(fr.name.as_bytes(), b"bend_a");
    assert_eq!((fr.mins, fr.maxs), ([-2.0, -1.0, 0.0], [1.0, 2.0, 22.0]));
    assert_eq!((fr.yaw_radius, fr.radius), (2.5, 23.0));

    let fx = chain_fixture();
    for (f, frame) in fx.frames.iter().enumerate() {
        let poses = m.skeleton().frame_poses(f).unwrap();
        for (got, want) in poses.iter().zip(&frame.poses) {
            assert_eq!(bits(got), want.map(f32::to_bits), "frame {f}");
        }
    }

    let mesh = &m.meshes()[0];
    assert_eq!(mesh.shader().as_bytes(), b"models/chain/skin");
    assert_eq!(mesh.indices(), &[0, 1, 2, 0, 2, 3]);
    assert_eq!(mesh.group_ids(), Some(&[7u32, 9][..]));
    assert_eq!(
        mesh.texcoords().unwrap(),
        &[[0.0, 0.0], [0.5, 0.25], [1.0, 0.5], [0.25, 1.0]]
    );
    let counts: Vec<usize> = (0..4).map(|v| mesh.influences(v).len()).collect();
    assert_eq!(counts, [1, 2, 3, 1]);
    let v2 = mesh.influences(2);
    assert_eq!(v2[2].bone, 2);
    assert_eq!(v2[2].weight, 0.5);
    assert_eq!(v2[2].origin, [0.0, 0.5, -2.0]);
    assert_eq!(v2[1].normal, [0.0, 0.25, 0.0]);
    assert!(mesh.influences(4).is_empty());

    // The bounds are the bind mesh's.
    assert_eq!(m.bounds(), ([0.0, -1.0, 2.0], [1.0, 1.0, 22.0]));
}

/// The frame-name index is built by the first lookup: threads racing to make it all see the
/// same answers, and the model's heap counts it once it exists.
#[test]
fn first_frame_lookups_from_several_threads_agree() {
    let (bytes, _) = chain();
    let m = load(&bytes).unwrap();
    let before = m.heap_bytes();
    let names = ["bind", "bend_a", "bend_b", "bend", ""];
    let want = [Some(0), Some(1), Some(2), None, None];
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let m = &m;
                s.spawn(move || {
                    (0..names.len())
                        .map(|i| m.find_frame(names[(i + t) % names.len()]))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for (t, thread) in threads.into_iter().enumerate() {
            let got = thread.join().unwrap();
            for (i, g) in got.into_iter().enumerate() {
                assert_eq!(g, want[(i + t) % names.len()], "thread {t}");
            }
        }
    });
    assert!(m.heap_bytes() > before);
}

#[test]
fn the_hand_built_chain_skins_to_hand_computed_positions() {
    let (bytes, _) = chain();
    let m = load(&bytes).unwrap();

    // Frame 0: every vertex at the point it was built from.
    let bind = skin(&m, 0, &pose(&m, &[blend(0, 1.0)], None), 0);
    for v in 0..4 {
        assert_close3(bind.positions[v], CHAIN_BIND[v], 1e-6, "bind");
    }
    assert_close3(bind.normals[2], [0.0, 1.0, 0.0], 1e-6, "bind normal");

    // Frame 1: mid turns +90 degrees about x, (x, y, z) -> (x, -z, y), around its joint at z 10;
    // tip rides along to translation (0, -10, 10).
    //   v0 (root only):  (1, 0, 2)
    //   v1: root (0.5, 0, 4.5) + mid R(0.5, 0, -0.5) + 0.5 (0, 0, 10) = (1, 0.5, 9.5)
    //   v2: root (0, 0.25, 4) + mid [R(0, 0.25, 1.5) + 0.25 (0, 0, 10)] = (0, -1.5, 2.75)
    //       + tip [R(0, 0.5, -2) + 0.5 (0, -10, 10)] = (0, -3, 5.5)   -> (0, -4.25, 12.25)
    //   v3: tip R(0, -1, 2) + (0, -10, 10) = (0, -12, 9)
    let bent = pose(&m, &[blend(1, 1.0)], None);
    let out = skin(&m, 0, &bent, 0);
    let want = [
        [1.0, 0.0, 2.0],
        [1.0, 0.5, 9.5],
        [0.0, -4.25, 12.25],
        [0.0, -12.0, 9.0],
    ];
    for v in 0..4 {
        assert_close3(
            out.positions[v],
            want[v],
            1e-6,
            &format!("frame 1 vertex {v}"),
        );
    }
    // Normals: v1 0.5 x + R(0.5 x) = x; v2 0.25 y + R(0.75 y) = (0, 0.25, 0.75); v3 R(-y) = -z.
    let want_n = [
        [1.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 0.25, 0.75],
        [0.0, 0.0, -1.0],
    ];
    for v in 0..4 {
        assert_close3(
            out.normals[v],
            want_n[v],
            1e-6,
            &format!("frame 1 normal {v}"),
        );
    }
    let unit = skin(&m, 0, &bent, SKIN_NORMALIZE);
    let l = (0.25f32 * 0.25 + 0.75 * 0.75).sqrt();
    assert_close3(
        unit.normals[2],
        [0.0, 0.25 / l, 0.75 / l],
        1e-6,
        "unit normal",
    );

    // Frame 2: root moved to (4, 0, 0); mid turned 30 degrees about x at (0, 2, 10).
    // v0 = (5, 0, 2); tip: rotation R30, translation (4, 2 - 10 sin30, 10 + 10 cos30), and
    // v3 = R30 (0, -1, 2) + that = (4, -3 - cos30 - 2 sin30, 10 + 10 cos30 - sin30 + 2 cos30).
    let (s, c) = (0.5f32, 3f32.sqrt() / 2.0);
    let out = skin(&m, 0, &pose(&m, &[blend(2, 1.0)], None), 0);
    assert_close3(out.positions[0], [5.0, 0.0, 2.0], 1e-6, "frame 2 v0");
    assert_close3(
        out.positions[3],
        [4.0, -3.0 - c - 2.0 * s, 10.0 + 12.0 * c - s],
        1e-5,
        "frame 2 v3",
    );

    // A root matrix moves everything: a translation by (0, 0, 100) at frame 1.
    let root = Mat3x4::from_translation([0.0, 0.0, 100.0]);
    let lifted = skin(&m, 0, &pose(&m, &[blend(1, 1.0)], Some(&root)), 0);
    for v in 0..4 {
        let [x, y, z] = want[v];
        assert_close3(lifted.positions[v], [x, y, z + 100.0], 1e-5, "rooted");
    }

    // A range lands at the target's start; the rest of the target stays as it was.
    let mut buf = [-7.0f32; 9];
    let mut t = Strided::new(&mut buf, 3).unwrap();
    m.skin_mesh(0, &bent, 2, 2, 0, &mut t).unwrap();
    assert_eq!(&buf[..6], &[0.0, -4.25, 12.25, 0.0, -12.0, 9.0]);
    assert_eq!(&buf[6..], &[-7.0; 3]);

    // Strided: positions every 5 floats, normals every 4, in buffers of exactly the room
    // needed; the floats between vertices stay as they were.
    let mut pos = [9.0f32; 3 * 5 + 3];
    let mut nrm = [8.0f32; 3 * 4 + 3];
    let mut t = Strided::new(&mut pos, 5)
        .unwrap()
        .with_normals(&mut nrm, 4)
        .unwrap();
    m.skin_mesh(0, &bent, 0, 4, 0, &mut t).unwrap();
    for v in 0..4 {
        assert_eq!(&pos[5 * v..5 * v + 3], &want[v], "strided position {v}");
        assert_eq!(&nrm[4 * v..4 * v + 3], &want_n[v], "strided normal {v}");
    }
    for v in 0..3 {
        assert_eq!(&pos[5 * v + 3..5 * v + 5], &[9.0, 9.0]);
        assert_eq!(nrm[4 * v + 3], 8.0);
    }

    // Interleaved: 8 floats per vertex, normal at 0, position at 4.
    let mut inter = [0.5f32; 32];
    let mut t = Interleaved::new(&mut inter, 8, 4, Some(0)).unwrap();
    m.skin_mesh(0, &bent, 0, 4, 0, &mut t).unwrap();
    for v in 0..4 {
        assert_eq!(
            &inter[8 * v + 4..8 * v + 7],
            &want[v],
            "interleaved position {v}"
        );
        assert_eq!(
            &inter[8 * v..8 * v + 3],
            &want_n[v],
            "interleaved normal {v}"
        );
        assert_eq!(inter[8 * v + 3], 0.5);
        assert_eq!(inter[8 * v + 7], 0.5);
    }
}

#[test]
fn a_static_model_skins_the_same_with_and_without_the_fast_path() {
    // The chain with only its bind frame, and a one-frame tube: both are static models.
    let mut fx = chain_fixture();
    fx.frames.truncate(1);
    let chain = load(&fx.build().0).unwrap();
    let tube = TubeRig {
        frames: 1,
        ..TubeRig::default()
    };
    let tube = load(&ossa::dpm::write(&tube.build().unwrap()).unwrap()).unwrap();
    for m in [&chain, &tube] {
        let bind = m.skeleton().bind_pose().to_vec();
        let fast = skin(m, 0, &bind, 0);
        // Concatenating frame 0 again gives bit-equal matrices, hence the same fast path.
        assert_eq!(pose(m, &[blend(0, 1.0)], None), bind);
        // A quarter turn about z as root forces the general path: (x, y, z) -> (-y, x, z).
        let root = Mat3x4 {
            m: [0.0, -1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
        };
        let turned = skin(m, 0, &pose(m, &[blend(0, 1.0)], Some(&root)), 0);
        // A translation of (0, 0, 0.5) too: every vertex's influences sum to 1.
        let lifted = skin(
            m,
            0,
            &pose(
                m,
                &[blend(0, 1.0)],
                Some(&Mat3x4::from_translation([0.0, 0.0, 0.5])),
            ),
            0,
        );
        for v in 0..fast.positions.len() {
            let [x, y, z] = fast.positions[v];
            assert_close3(turned.positions[v], [-y, x, z], 1e-5, "turned");
            assert_close3(lifted.positions[v], [x, y, z + 0.5], 1e-5, "lifted");
            let [x, y, z] = fast.normals[v];
            assert_close3(turned.normals[v], [-y, x, z], 1e-5, "turned normal");
        }
    }
    let fast = skin(&chain, 0, chain.skeleton().bind_pose(), 0);
    for v in 0..4 {
        assert_close3(fast.positions[v], CHAIN_BIND[v], 1e-6, "chain fast path");
    }
    // A range of the precomputed mesh lands at the target's start.
    let mut buf = [0.0f32; 6];
    let mut t = Strided::new(&mut buf, 3).unwrap();
    chain
        .skin_mesh(0, chain.skeleton().bind_pose(), 1, 2, 0, &mut t)
        .unwrap();
    assert_eq!(buf, [1.0, 0.0, 9.0, 0.0, 1.0, 16.0]);
    let unit = skin(&chain, 0, chain.skeleton().bind_pose(), SKIN_NORMALIZE);
    assert_close3(unit.normals[2], [0.0, 1.0, 0.0], 1e-6, "unit bind normal");
}

#[test]
fn a_32_byte_name_without_nul_loads_in_full() {
    let long = b"abcdefghijklmnopqrstuvwxyz012345".to_vec();
    assert_eq!(long.len(), 32);
    let mut fx = chain_fixture();
    fx.bones[1].name = long.clone();
    fx.frames[2].name = long.clone();
    fx.meshes[0].shader = long.clone();
    // Bytes after a NUL inside the field are not part of the name.
    fx.bones[0].name = b"ro\0ot".to_vec();
    let (bytes, _) = fx.build();
    let m = load(&bytes).unwrap();
    assert_eq!(m.bones()[1].name.as_bytes(), &long[..]);
    assert_eq!(m.bones()[1].name.as_bytes_with_nul().len(), 33);
    assert_eq!(m.frames()[2].name.as_bytes(), &long[..]);
    assert_eq!(m.meshes()[0].shader().as_bytes(), &long[..]);
    assert_eq!(m.bones()[0].name.as_bytes(), b"ro");
    assert_eq!(m.find_bone(&long), Some(1));
    assert_eq!(m.find_frame(&long), Some(2));
    // The writer keeps all 32 bytes.
    let again = load(&ossa::dpm::write(&m).unwrap()).unwrap();
    assert_eq!(again.bones()[1].name.as_bytes(), &long[..]);
    assert_eq!(again.meshes()[0].shader().as_bytes(), &long[..]);
}

#[test]
fn duplicate_names_find_the_first() {
    let mut fx = chain_fixture();
    fx.bones[2].name = b"root".to_vec();
    fx.frames[1].name = b"bind".to_vec();
    let m = load(&fx.build().0).unwrap();
    assert_eq!(m.find_bone("root"), Some(0));
    assert_eq!(m.find_bone("mid"), Some(1));
    assert_eq!(m.find_frame("bind"), Some(0));
    assert_eq!(m.find_frame("bend_b"), Some(2));
}

#[test]
fn zero_vertex_meshes_and_extra_roots_load() {
    // Attachment-only models (FORMATS.md §2.3) have meshes with nothing in them.
    let mut fx = chain_fixture();
    fx.meshes[0].vertices.clear();
    fx.meshes[0].texcoords.clear();
    fx.meshes[0].indices.clear();
    fx.meshes[0].group_ids.clear();
    fx.bones[2].parent = -1;
    let m = load(&fx.build().0).unwrap();
    assert_eq!(m.meshes()[0].vertex_count(), 0);
    assert_eq!(m.info().triangle_count, 0);
    assert_eq!(m.bones()[2].parent, -1);
    assert_eq!(m.bounds(), ([0.0; 3], [0.0; 3]));
    let bones = pose(&m, &[blend(1, 1.0)], None);
    // Tip is now a root: its own local pose, not carried by mid.
    assert_eq!(bones[2].translation(), [0.0, 0.0, 10.0]);
    // A root matrix carries every root.
    let root = Mat3x4::from_translation([1.0, 2.0, 3.0]);
    let rooted = pose(&m, &[blend(1, 1.0)], Some(&root));
    assert_eq!(rooted[0].translation(), [1.0, 2.0, 3.0]);
    assert_eq!(rooted[2].translation(), [1.0, 2.0, 13.0]);
    let mut buf: [f32; 0] = [];
    let mut t = Strided::new(&mut buf, 3).unwrap();
    m.skin_mesh(0, &bones, 0, 0, 0, &mut t).unwrap();
}

#[test]
fn one_model_poses_and_skins_on_many_threads_at_once() {
    let m = TubeRig::default().build().unwrap();
    let frames = m.frames().len() as u32;
    let alone: Vec<Vec<[f32; 3]>> = (0..frames)
        .map(|f| skin(&m, 0, &pose(&m, &[blend(f, 1.0)], None), 0).positions)
        .collect();
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let (m, alone) = (&m, &alone);
            s.spawn(move || {
                for i in 0..20 {
                    let f = (t + i) % frames;
                    let out = skin(m, 0, &pose(m, &[blend(f, 1.0)], None), 0);
                    assert_eq!(out.positions, alone[f as usize], "thread {t} frame {f}");
                }
            });
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Blending
// ---------------------------------------------------------------------------------------------

#[test]
fn half_way_between_two_turns_about_one_axis_is_the_mean_angle() {
    let (bytes, _) = chain();
    let m = load(&bytes).unwrap();
    let mut local = vec![Mat3x4::IDENTITY; 3];
    // mid: 90 degrees in frame 1, 30 degrees in frame 2, both about x -> 60 degrees.
    m.pose_frames_local(&[blend(1, 0.5), blend(2, 0.5)], &mut local)
        .unwrap();
    let (s, c) = (3f32.sqrt() / 2.0, 0.5f32);
    let want_mid = [1.0, 0.0, 0.0, 0.0, 0.0, c, -s, 1.0, 0.0, s, c, 10.0];
    for k in 0..12 {
        assert!(
            (local[1].m[k] - want_mid[k]).abs() < 1e-6,
            "mid element {k}: {:?}",
            local[1].m
        );
    }
    // Translations lerp: root (0,0,0) and (4,0,0) -> (2,0,0), rotation untouched.
    let want_root = tr(2.0, 0.0, 0.0);
    for k in 0..12 {
        assert!((local[0].m[k] - want_root[k]).abs() < 1e-6, "root {k}");
    }
    let want_tip = tr(0.0, 0.0, 10.0);
    for k in 0..12 {
        assert!((local[2].m[k] - want_tip[k]).abs() < 1e-6, "tip {k}");
    }

    // The model-space pose is the concatenation of the blended local poses.
    let mut concat = vec![Mat3x4::IDENTITY; 3];
    m.pose_concat(&local, None, &mut concat).unwrap();
    assert_eq!(pose(&m, &[blend(1, 0.5), blend(2, 0.5)], None), concat);

    // The order of the blend's entries does not matter.
    let mut swapped = vec![Mat3x4::IDENTITY; 3];
    m.pose_frames_local(&[blend(2, 0.5), blend(1, 0.5)], &mut swapped)
        .unwrap();
    for (a, b) in local.iter().zip(&swapped) {
        assert!(a.m.iter().zip(&b.m).all(|(x, y)| (x - y).abs() < 1e-6));
    }

    // Three quarters of the way to 90 degrees from 30: about 75 degrees (a normalised lerp
    // bends the angle by well under a degree over this span).
    m.pose_frames_local(&[blend(1, 0.75), blend(2, 0.25)], &mut local)
        .unwrap();
    let angle = local[1].m[9].atan2(local[1].m[5]).to_degrees();
    assert!((angle - 75.0).abs() < 1.0, "angle {angle}");
    assert!(
        (local[0].m[3] - 1.0).abs() < 1e-6,
        "root x {}",
        local[0].m[3]
    );
}

#[test]
fn blend_weights_are_normalised() {
    let (bytes, _) = chain();
    let m = load(&bytes).unwrap();
    let get = |b: &[ossa::FrameBlend]| {
        let mut out = vec![Mat3x4::IDENTITY; 3];
        m.pose_frames_local(b, &mut out).unwrap();
        out
    };
    // Weights that do not sum to 1 act as their shares; these shares are exact in binary.
    assert_eq!(
        get(&[blend(1, 2.0), blend(2, 2.0)]),
        get(&[blend(1, 0.5), blend(2, 0.5)])
    );
    assert_eq!(
        get(&[blend(1, 3.0), blend(2, 1.0)]),
        get(&[blend(1, 0.75), blend(2, 0.25)])
    );
    assert_eq!(
        get(&[blend(1, 0.1), blend(2, 0.1)]),
        get(&[blend(1, 0.5), blend(2, 0.5)])
    );
    // One frame at any weight is that frame, bit for bit.
    let alone = get(&[blend(2, 1e-3)]);
    let file = m.skeleton().frame_poses(2).unwrap();
    assert_eq!(&alone[..], &file[..]);
    // Eight entries (the most) of one frame are that frame.
    let eight = get(&[blend(1, 1.0); ossa::MAX_BLENDS]);
    for (a, b) in eight
        .iter()
        .zip(m.skeleton().frame_poses(1).unwrap().iter())
    {
        assert!(a.m.iter().zip(&b.m).all(|(x, y)| (x - y).abs() < 1e-6));
    }
}

#[test]
fn blending_takes_the_short_way_round() {
    // mid at +170 and -170 degrees about x: the short way between them passes through 180
    // degrees, not through 0 (the quaternions must be brought into one hemisphere).
    let mut fx = chain_fixture();
    let a = 170f32.to_radians();
    fx.frames[1].poses[1] = rot_x(a, [0.0, 0.0, 10.0]);
    fx.frames[2].poses[1] = rot_x(-a, [0.0, 0.0, 10.0]);
    let m = load(&fx.build().0).unwrap();
    let mut local = vec![Mat3x4::IDENTITY; 3];
    m.pose_frames_local(&[blend(1, 0.5), blend(2, 0.5)], &mut local)
        .unwrap();
    let want = [
        1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 10.0,
    ];
    for k in 0..12 {
        assert!(
            (local[1].m[k] - want[k]).abs() < 1e-5,
            "element {k}: {:?}",
            local[1].m
        );
    }
}

#[test]
fn scale_blends_linearly_and_mirrors_survive() {
    let mut fx = chain_fixture();
    // Root scaled by 2 (old dpmodel files baked a scale into the root, FORMATS.md §2.4) in
    // frame 1, by 1 in frame 2; mid mirrored in x in both.
    fx.frames[1].poses[0] = [2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0];
    fx.frames[2].poses[0] = IDENT;
    let mirror = [-1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 10.0];
    fx.frames[1].poses[1] = mirror;
    fx.frames[2].poses[1] = mirror;
    let m = load(&fx.build().0).unwrap();
    let mut local = vec![Mat3x4::IDENTITY; 3];
    m.pose_frames_local(&[blend(1, 0.5), blend(2, 0.5)], &mut local)
        .unwrap();
    let want_root = [1.5, 0.0, 0.0, 0.0, 0.0, 1.5, 0.0, 0.0, 0.0, 0.0, 1.5, 0.0];
    for k in 0..12 {
        assert!(
            (local[0].m[k] - want_root[k]).abs() < 1e-6,
            "root {:?}",
            local[0].m
        );
        assert!(
            (local[1].m[k] - mirror[k]).abs() < 1e-6,
            "mid {:?}",
            local[1].m
        );
    }
    // The scaled root carries its children: tip sits at 1.5 * (0, 0, 20).
    let bones = pose(&m, &[blend(1, 0.5), blend(2, 0.5)], None);
    assert_close3(bones[2].translation(), [0.0, 0.0, 30.0], 1e-5, "tip");
}

#[test]
fn blending_keeps_large_and_small_finite_scales() {
    // 1e7 is about the largest scale mid may have: it carries tip to 1e8, within the 1e9 every
    // model keeps to. Beyond that the file is refused (tests/finite.rs).
    let mut fx = chain_fixture();
    fx.frames[1].poses[1] = [
        1e30, 0.0, 0.0, 0.0, 0.0, 1e30, 0.0, 0.0, 0.0, 0.0, 1e30, 10.0,
    ];
    expect_err(&fx.build().0, ErrorCode::Limit, None);
    for s in [1e7f32, 1e-30] {
        let mut fx = chain_fixture();
        fx.frames[1].poses[1] = [s, 0.0, 0.0, 0.0, 0.0, s, 0.0, 0.0, 0.0, 0.0, s, 10.0];
        let m = load(&fx.build().0).unwrap();
        let mut local = vec![Mat3x4::IDENTITY; 3];
        // The same frame twice: the blend is that frame.
        m.pose_frames_local(&[blend(1, 0.5), blend(1, 0.5)], &mut local)
            .unwrap();
        for (k, &want) in fx.frames[1].poses[1].iter().enumerate() {
            let got = local[1].m[k];
            assert!(
                (got - want).abs() <= 1e-5 * want.abs().max(s),
                "scale {s}: element {k} is {got}, want {want}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Load errors
// ---------------------------------------------------------------------------------------------

#[test]
fn a_wrong_id_is_an_unknown_format() {
    let (mut bytes, _) = chain();
    bytes[4] = b'p';
    expect_err(&bytes, ErrorCode::UnknownFormat, None);
    // Named as DPM, it is still not one.
    let e = Model::load(
        &bytes,
        &LoadOptions {
            format: Format::Dpm,
            ..LoadOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::UnknownFormat);
    assert_eq!(e.offset(), Some(0));
    // All 16 bytes count, the NUL included.
    let (mut bytes, _) = chain();
    bytes[15] = b'!';
    expect_err(&bytes, ErrorCode::UnknownFormat, None);
}

#[test]
fn types_other_than_2_are_unsupported() {
    for ty in [0, 1, 3, 0x0200_0000] {
        let (mut bytes, _) = chain();
        set_u32(&mut bytes, 16, ty);
        expect_err(&bytes, ErrorCode::Unsupported, Some(16));
    }
}

#[test]
fn parents_must_be_earlier_bones_or_minus_1() {
    for (bone, parent) in [
        (0, 0),
        (1, 1),
        (1, 2),
        (2, 5),
        (2, -2),
        (1, i32::MIN),
        (0, i32::MAX),
    ] {
        let (mut bytes, l) = chain();
        set_i32(&mut bytes, l.bone(bone) + 32, parent);
        let msg = expect_err(&bytes, ErrorCode::Malformed, Some(l.bone(bone) + 32));
        assert!(msg.contains(&format!("bone {bone}")), "{msg}");
    }
}

#[test]
fn influence_bones_must_exist() {
    for bone in [3, 255, u32::MAX] {
        let (mut bytes, l) = chain();
        let at = l.influence(0, 2, 2, 7);
        set_u32(&mut bytes, at, bone);
        let msg = expect_err(&bytes, ErrorCode::Malformed, Some(at));
        assert!(msg.contains("vertex 2"), "{msg}");
    }
}

#[test]
fn triangle_indices_must_exist() {
    for (i, index) in [(4, 4), (0, u32::MAX), (5, 0x8000_0000)] {
        let (mut bytes, l) = chain();
        let at = l.meshes[0].indices + 4 * i;
        set_u32(&mut bytes, at, index);
        let msg = expect_err(&bytes, ErrorCode::Malformed, Some(at));
        assert!(msg.contains(&format!("triangle {}", i / 3)), "{msg}");
    }
}

#[test]
fn zero_frames_or_bones_are_malformed() {
    let (mut bytes, _) = chain();
    set_u32(&mut bytes, 64, 0);
    expect_err(&bytes, ErrorCode::Malformed, Some(64));
    let (mut bytes, _) = chain();
    set_u32(&mut bytes, 56, 0);
    expect_err(&bytes, ErrorCode::Malformed, Some(56));
}

#[test]
fn nan_and_infinity_are_malformed_at_their_byte() {
    let (_, l) = chain();
    let places = [
        ("pose", l.pose(1, 2, 5)),
        ("pose translation", l.pose(0, 0, 11)),
        ("texcoord", l.meshes[0].texcoords + 8 + 4),
        ("influence normal", l.influence(0, 2, 1, 5)),
        ("influence weight", l.influence(0, 1, 0, 3)),
        ("influence origin", l.influence(0, 3, 0, 0)),
        ("header bounds", 28),
        ("frame bounds", l.frame_header(2) + 60),
    ];
    for (what, at) in places {
        for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let (mut bytes, _) = chain();
            set_f32(&mut bytes, at, v);
            let e = load(&bytes).unwrap_err();
            assert_eq!(e.code(), ErrorCode::Malformed, "{what} {v}: {e}");
            assert_eq!(e.offset(), Some(at as u64), "{what} {v}: {e}");
        }
    }
}

#[test]
fn influence_sums_slightly_off_warn_and_far_off_fail() {
    let (_, l) = chain();
    let at = l.influence(0, 1, 0, 3);
    let vertex = l.meshes[0].vertices[1] as u64;
    for w in [0.505f32, 0.495] {
        let (mut bytes, _) = chain();
        set_f32(&mut bytes, at, w);
        let m = load(&bytes).unwrap();
        assert_eq!(m.warnings().len(), 1, "{:?}", m.warnings());
        let warning = m.warnings()[0].to_string();
        assert!(warning.contains("mesh 0"), "{warning}");
        assert!(warning.contains("vertex 1"), "{warning}");
        let e = load_strict(&bytes).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
        assert_eq!(e.offset(), Some(vertex), "{e}");
    }
    for w in [0.55f32, 0.45, 0.0, -0.5] {
        let (mut bytes, _) = chain();
        set_f32(&mut bytes, at, w);
        for e in [load(&bytes).unwrap_err(), load_strict(&bytes).unwrap_err()] {
            assert_eq!(e.code(), ErrorCode::Malformed, "{w}: {e}");
            assert_eq!(e.offset(), Some(vertex), "{w}: {e}");
        }
    }
    // The untouched file is clean in strict mode too.
    let (bytes, _) = chain();
    assert!(load_strict(&bytes).unwrap().warnings().is_empty());
}

#[test]
fn a_wrong_filesize_is_tolerated_but_not_in_strict_mode() {
    let (mut bytes, l) = chain();
    set_u32(&mut bytes, 20, l.len as u32 + 4);
    let m = load(&bytes).unwrap();
    assert_eq!(m.warnings().len(), 1);
    let e = load_strict(&bytes).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert_eq!(e.offset(), Some(20));
}

#[test]
fn structures_sharing_bytes_are_malformed() {
    let (_, l) = chain();
    let mh = l.mesh_header(0);
    // (field to patch, new value, byte the error points at)
    let cases = [
        // group ids onto the indices
        (mh + 52, l.meshes[0].indices as u32, l.meshes[0].indices),
        // frame 0's poses onto the header (and the bone table)
        (l.frame_header(0) + 64, 0, 0),
        // frame 1's poses onto frame 0's
        (l.frame_header(1) + 64, l.poses[0] as u32, l.poses[0]),
        // texcoords onto the last vertex
        (
            mh + 44,
            l.meshes[0].vertices[3] as u32,
            l.meshes[0].vertices[3],
        ),
        // the mesh table back onto the last bone (its counts then read as 0 from the shader
        // name's padding, so nothing else moves)
        (72, l.ofs_meshes as u32 - 8, l.ofs_meshes - 8),
    ];
    for (field, value, at) in cases {
        let (mut bytes, _) = chain();
        set_u32(&mut bytes, field, value);
        let msg = expect_err(&bytes, ErrorCode::Malformed, Some(at));
        assert!(msg.contains("overlaps"), "patch at {field}: {msg}");
    }
}

#[test]
fn a_tiny_memory_ceiling_is_a_limit() {
    let (bytes, _) = chain();
    for max_bytes in [1, 16, 256] {
        let e = Model::load(
            &bytes,
            &LoadOptions {
                max_bytes,
                ..LoadOptions::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Limit, "{max_bytes}: {e}");
    }
    let ok = LoadOptions {
        max_bytes: 1 << 20,
        ..LoadOptions::default()
    };
    assert_eq!(Model::load(&bytes, &ok).unwrap().info().vertex_count, 4);
}

#[test]
fn validate_reports_every_problem_with_its_offset() {
    let (mut bytes, l) = chain();
    let a = l.influence(0, 1, 1, 7);
    let b = l.influence(0, 3, 0, 7);
    let c = l.meshes[0].indices + 8;
    set_u32(&mut bytes, a, 9);
    set_u32(&mut bytes, b, 200);
    set_u32(&mut bytes, c, 77);
    let report = ossa::validate(&bytes, &LoadOptions::default());
    assert!(report.model.is_none());
    assert_eq!(report.more_problems, 0);
    assert_eq!(report.problems.len(), 3, "{:?}", report.problems);
    assert!(
        report
            .problems
            .iter()
            .all(|e| e.code() == ErrorCode::Malformed)
    );
    let mut offsets: Vec<u64> = report.problems.iter().filter_map(|e| e.offset()).collect();
    offsets.sort_unstable();
    let mut want = vec![a as u64, b as u64, c as u64];
    want.sort_unstable();
    assert_eq!(offsets, want);
    // Loading stops at the first of them.
    assert_eq!(load(&bytes).unwrap_err().code(), ErrorCode::Malformed);

    // A clean file: no problems, a model.
    let (bytes, _) = chain();
    let report = ossa::validate(&bytes, &LoadOptions::default());
    assert!(report.problems.is_empty());
    assert_eq!(report.model.unwrap().info().vertex_count, 4);

    // Problems of different kinds, and a warning.
    let (mut bytes, l) = chain();
    set_i32(&mut bytes, l.bone(2) + 32, 7);
    set_f32(&mut bytes, l.pose(2, 1, 0), f32::NAN);
    set_f32(&mut bytes, l.influence(0, 1, 0, 3), 0.505);
    let report = ossa::validate(&bytes, &LoadOptions::default());
    let mut offsets: Vec<u64> = report.problems.iter().filter_map(|e| e.offset()).collect();
    offsets.sort_unstable();
    assert_eq!(offsets, [(l.bone(2) + 32) as u64, l.pose(2, 1, 0) as u64]);
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);

    // Data that ends early ends the walk with one structural problem.
    let (bytes, l) = chain();
    let report = ossa::validate(&bytes[..l.len - 10], &LoadOptions::default());
    assert!(report.model.is_none());
    assert_eq!(report.problems.len(), 1);
    assert_eq!(report.problems[0].code(), ErrorCode::Truncated);
}

#[test]
fn validate_reports_problems_in_file_order() {
    // The fixture puts poses before mesh data, and indices before vertices.
    let (mut bytes, l) = chain();
    set_u32(&mut bytes, l.influence(0, 1, 1, 7), 9);
    set_u32(&mut bytes, l.meshes[0].indices + 8, 77);
    set_f32(&mut bytes, l.pose(0, 0, 0), f32::NAN);
    let report = ossa::validate(&bytes, &LoadOptions::default());
    let offsets: Vec<u64> = report.problems.iter().filter_map(|e| e.offset()).collect();
    let want = [
        l.pose(0, 0, 0),
        l.meshes[0].indices + 8,
        l.influence(0, 1, 1, 7),
    ];
    assert_eq!(offsets, want.map(|o| o as u64));
}

#[test]
fn validate_counts_problems_past_its_record_limit() {
    // 1100 triangles whose every corner is out of range: 3300 problems, 1000 recorded.
    let mut fx = chain_fixture();
    fx.meshes[0].indices = vec![4; 3300];
    fx.meshes[0].group_ids = vec![0; 1100];
    let (bytes, l) = fx.build();
    let report = ossa::validate(&bytes, &LoadOptions::default());
    assert_eq!(report.problems.len(), 1000);
    assert_eq!(report.more_problems, 2300);
    assert_eq!(
        report.problems[0].offset(),
        Some(l.meshes[0].indices as u64)
    );
    assert_eq!(
        report.problems[999].offset(),
        Some((l.meshes[0].indices + 4 * 999) as u64)
    );
}

#[test]
fn load_options_choose_the_format_and_name_the_file() {
    let (mut bytes, l) = chain();
    // The name is the base name of the path given.
    set_i32(&mut bytes, l.bone(1) + 32, 3);
    let e = Model::load(
        &bytes,
        &LoadOptions {
            name: Some("models/chain.dpm".into()),
            ..LoadOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.detail().file.as_deref(), Some("chain.dpm"));
    assert!(e.to_string().starts_with("chain.dpm: "), "{e}");
    assert!(
        e.to_string()
            .ends_with(&format!("at byte {:#x}", l.bone(1) + 32)),
        "{e}"
    );

    // A DPM forced as SKM is no SKM: the SKM reader finds no SKM1 id.
    let (bytes, _) = chain();
    let e = Model::load(
        &bytes,
        &LoadOptions {
            format: Format::Skm,
            ..LoadOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::UnknownFormat);
    assert_eq!(e.offset(), Some(0));
    // No magic and no known extension: unknown.
    let e = Model::load(b"hello", &LoadOptions::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::UnknownFormat);
    // A .dpm name makes it a DPM, which these bytes are not.
    let e = Model::load(
        b"hello",
        &LoadOptions {
            name: Some("x.DPM".into()),
            ..LoadOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::UnknownFormat);
    assert_eq!(e.offset(), Some(0));
    assert_eq!(ossa::format::detect(&bytes, None), Some(Format::Dpm));
}

// ---------------------------------------------------------------------------------------------
// Argument errors
// ---------------------------------------------------------------------------------------------

#[test]
fn pose_argument_errors_leave_the_output_untouched() {
    let (bytes, _) = chain();
    let m = load(&bytes).unwrap();
    let sentinel = Mat3x4 { m: [7.0; 12] };
    let ok = [blend(0, 1.0)];
    let nine = [blend(0, 1.0); 9];
    let bad_blends: [&[ossa::FrameBlend]; 9] = [
        &[],
        &nine,
        &[blend(0, 0.0)],
        &[blend(0, -1.0)],
        &[blend(0, f32::NAN)],
        &[blend(0, f32::INFINITY)],
        &[blend(1, 1.0), blend(2, -0.0)],
        &[blend(3, 1.0)],
        &[blend(0, 1.0), blend(u32::MAX, 1.0)],
    ];
    for b in bad_blends {
        let mut out = vec![sentinel; 3];
        let e = m.pose_frames(b, None, &mut out).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{b:?}");
        assert_eq!(out, vec![sentinel; 3], "{b:?}");
        let e = m.pose_frames_local(b, &mut out).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{b:?}");
        assert_eq!(out, vec![sentinel; 3], "{b:?}");
    }
    for n in [0, 2, 4] {
        let mut out = vec![sentinel; n];
        let e = m.pose_frames(&ok, None, &mut out).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(out, vec![sentinel; n]);
        let e = m.pose_frames_local(&ok, &mut out).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let local = vec![Mat3x4::IDENTITY; n];
        let mut out3 = vec![sentinel; 3];
        let e = m.pose_concat(&local, None, &mut out3).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(out3, vec![sentinel; 3]);
    }
}

#[test]
fn skin_argument_errors_leave_the_target_untouched() {
    let (bytes, _) = chain();
    let m = load(&bytes).unwrap();
    let bones = pose(&m, &[blend(1, 1.0)], None);
    let try_skin =
        |mesh: usize, bones: &[Mat3x4], first: usize, count: usize, flags: u32, len: usize| {
            let mut pos = vec![-3.0f32; len];
            let mut nrm = vec![-4.0f32; len];
            let r = {
                let mut t = Strided::new(&mut pos, 3)
                    .unwrap()
                    .with_normals(&mut nrm, 3)
                    .unwrap();
                m.skin_mesh(mesh, bones, first, count, flags, &mut t)
            };
            let e = r.expect_err("skin_mesh should fail");
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
            assert!(pos.iter().all(|&x| x == -3.0), "positions written: {e}");
            assert!(nrm.iter().all(|&x| x == -4.0), "normals written: {e}");
        };
    try_skin(1, &bones, 0, 4, 0, 12); // no mesh 1
    try_skin(0, &bones[..2], 0, 4, 0, 12); // too few bone matrices
    try_skin(0, &[bones.clone(), bones.clone()].concat(), 0, 4, 0, 12);
    try_skin(0, &bones, 3, 2, 0, 12); // past the last vertex
    try_skin(0, &bones, 5, 0, 0, 12); // starts past the end
    try_skin(0, &bones, usize::MAX, 2, 0, 12); // overflows
    try_skin(0, &bones, 0, 4, 0, 11); // room for 3 vertices only
    try_skin(0, &bones, 0, 4, 0x10, 12); // unknown flag

    // Normals shorter than positions limit the capacity too.
    let mut pos = vec![-3.0f32; 12];
    let mut nrm = vec![-4.0f32; 6];
    let mut t = Strided::new(&mut pos, 3)
        .unwrap()
        .with_normals(&mut nrm, 3)
        .unwrap();
    let e = m.skin_mesh(0, &bones, 0, 3, 0, &mut t).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(pos.iter().all(|&x| x == -3.0));

    let mut buf = [0.0f32; 16];
    assert_eq!(
        Strided::new(&mut buf, 2).err().map(|e| e.code()),
        Some(ErrorCode::InvalidArgument)
    );
    assert_eq!(
        Interleaved::new(&mut buf, 6, 0, Some(2))
            .err()
            .map(|e| e.code()),
        Some(ErrorCode::InvalidArgument)
    );
    assert_eq!(
        Interleaved::new(&mut buf, 5, 3, None)
            .err()
            .map(|e| e.code()),
        Some(ErrorCode::InvalidArgument)
    );
}

#[test]
fn frames_whose_pose_tables_are_out_of_file_order_keep_their_own_poses() {
    // Frames 0 and 2 swap tables: no two frames' poses follow one another any more, so each is
    // decoded on its own, and frame 0 gets what the file stores for frame 2, and back.
    let (mut bytes, l) = chain();
    set_u32(&mut bytes, l.frame_header(0) + 64, l.poses[2] as u32);
    set_u32(&mut bytes, l.frame_header(2) + 64, l.poses[0] as u32);
    let m = load(&bytes).unwrap();
    let fx = chain_fixture();
    for (f, stored) in [(0, 2), (1, 1), (2, 0)] {
        let poses = m.skeleton().frame_poses(f).unwrap();
        assert_eq!(poses.len(), fx.frames[stored].poses.len());
        for (got, want) in poses.iter().zip(&fx.frames[stored].poses) {
            assert_eq!(bits(got), want.map(f32::to_bits), "frame {f}");
        }
    }
    // A NaN in the table frame 2 now reads is reported at its byte, for frame 2.
    set_f32(&mut bytes, l.pose(0, 1, 4), f32::NAN);
    let e = load(&bytes).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert_eq!(e.offset(), Some(l.pose(0, 1, 4) as u64), "{e}");
    assert!(e.to_string().contains("frame 2 ("), "{e}");
    assert!(e.to_string().contains("bone 1: pose element 4"), "{e}");
}
