//! qfusion / Warsow SKM + SKP: the corpus files against a reader written here from FORMATS.md §3
//! (little-endian, independent of ossa's), their bind meshes against the direct formula in f64,
//! winding, references, round trips, and DPM -> SKM + SKP -> bind.

mod corpus;

use corpus::corpus_dir;

use std::path::PathBuf;

use ossa::synth::TubeRig;
use ossa::{
    BoneSlots, ErrorCode, Format, FrameBlend, LoadOptions, Mat3x4, Model, ModelParts, Name, Poses,
    Strided, skm,
};

// ---------------------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------------------

fn corpus_file(rel: &str, test: &str) -> Option<Vec<u8>> {
    let path = corpus_dir().join(rel);
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(_) => {
            eprintln!("corpus not found at {}; skipping {test}", path.display());
            None
        }
    }
}

const MONADA_SKP: &str = "skm/wsw05sdk_monada_tris.skp";
const TESTBOX_SKP: &str = "skm/wsw05sdk_testbox_tris.skp";
/// Every corpus mesh file with the skeleton it binds to (the LODs share monada's).
const PAIRS: [(&str, &str); 4] = [
    ("skm/wsw05sdk_monada_tris.skm", MONADA_SKP),
    ("skm/wsw05sdk_monada_tris_2.skm", MONADA_SKP),
    ("skm/wsw05sdk_monada_tris_3.skm", MONADA_SKP),
    ("skm/wsw05sdk_testbox_tris.skm", TESTBOX_SKP),
];

fn load_named(bytes: &[u8], name: &str) -> Model {
    Model::load(
        bytes,
        &LoadOptions {
            name: Some(name.to_owned()),
            ..LoadOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Independent little-endian reader (FORMATS.md §3.1) and reference math in f64 (FORMATS §3.4):
// tests/skm_ref, shared with the glTF conversion checks
// ---------------------------------------------------------------------------------------------

#[path = "ref_math/mod.rs"]
mod ref_math;
mod skm_ref;
use skm_ref::{RawInfluence, V3, absolute, cross, direct_bind, dot, f64v, qmul, qnorm, qrot, sub};

fn le_u32(d: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(d[at..at + 4].try_into().unwrap())
}

fn le_f32(d: &[u8], at: usize) -> f32 {
    f32::from_bits(le_u32(d, at))
}

fn parse_skm(d: &[u8]) -> skm_ref::RawSkm {
    skm_ref::parse_skm(d).unwrap()
}

fn parse_skp(d: &[u8]) -> skm_ref::RawSkp {
    skm_ref::parse_skp(d).unwrap()
}

/// Share of triangles `(a, b, c)` whose `(b - a) x (c - a)` points along the corners' summed
/// normals.
fn front_share(indices: &[u32], p: &[V3], n: &[V3]) -> f64 {
    let tris = indices.len() / 3;
    let agree = indices
        .chunks(3)
        .filter(|t| {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| i as usize);
            let face = cross(sub(p[b], p[a]), sub(p[c], p[a]));
            let normal = [0, 1, 2].map(|k| n[a][k] + n[b][k] + n[c][k]);
            dot(face, normal) > 0.0
        })
        .count();
    agree as f64 / tris as f64
}

/// ossa's skinned mesh `mesh` at a pose blend of one frame: positions then normals.
fn skin(model: &Model, mesh: usize, frame: u32) -> (Vec<V3>, Vec<V3>) {
    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(&[FrameBlend { frame, weight: 1.0 }], None, &mut bones)
        .unwrap();
    let n = model.meshes()[mesh].vertex_count();
    let mut pos = vec![0.0f32; n * 3];
    let mut nor = vec![0.0f32; n * 3];
    let mut target = Strided::new(&mut pos, 3)
        .unwrap()
        .with_normals(&mut nor, 3)
        .unwrap();
    model.skin_mesh(mesh, &bones, 0, n, 0, &mut target).unwrap();
    let v = |b: &[f32]| {
        b.chunks(3)
            .map(|c| [c[0] as f64, c[1] as f64, c[2] as f64])
            .collect()
    };
    (v(&pos), v(&nor))
}

fn max_diff(a: &[V3], b: &[V3]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| (0..3).map(move |k| (x[k] - y[k]).abs()))
        .fold(0.0, f64::max)
}

/// The diagonal of the points' bounding box.
fn size_of(points: &[V3]) -> f64 {
    let mut lo = [f64::MAX; 3];
    let mut hi = [f64::MIN; 3];
    for p in points {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    dot(sub(hi, lo), sub(hi, lo)).sqrt()
}

// ---------------------------------------------------------------------------------------------
// Corpus tests
// ---------------------------------------------------------------------------------------------

#[test]
fn corpus_counts_names_and_parents() {
    let test = "corpus_counts_names_and_parents";
    let Some(skp_bytes) = corpus_file(MONADA_SKP, test) else {
        return;
    };
    let skp = load_named(&skp_bytes, "tris.skp");
    let raw = parse_skp(&skp_bytes);
    assert_eq!(skp.format(), Format::Skp);
    assert_eq!(skp.bones().len(), 27);
    assert_eq!(skp.frames().len(), 739);
    assert_eq!(skp.animations().len(), 739);
    assert!(skp.meshes().is_empty());
    assert!(skp.unbound().is_none());
    assert_eq!(skp.up_axis(), 2);
    assert_eq!(skp.handedness(), 1);
    assert!(skp.warnings().is_empty(), "{:?}", skp.warnings());
    for (b, (bone, (name, parent, flags))) in skp.bones().iter().zip(&raw.bones).enumerate() {
        assert_eq!(bone.name.as_bytes(), &name[..], "bone {b}");
        assert_eq!(bone.parent, *parent, "bone {b}");
        assert_eq!(bone.flags, *flags, "bone {b}");
    }
    assert_eq!(skp.bones()[0].name.as_bytes(), b"bip01");
    assert_eq!(skp.bones()[0].parent, -1);
    assert_eq!(skp.bones()[26].name.as_bytes(), b"bip01 r toe0");
    assert_eq!(skp.bones()[26].parent, 25);
    assert_eq!(skp.find_bone("bip01 head"), Some(6));
    for (f, (frame, name)) in skp.frames().iter().zip(&raw.frames).enumerate() {
        assert_eq!(frame.name.as_bytes(), &name[..], "frame {f}");
    }
    assert_eq!(skp.frames()[0].name.as_bytes(), b"monada_0");
    assert_eq!(skp.find_frame("anim_dash_right_16_15"), Some(738));
    let a = &skp.animations()[5];
    assert_eq!(
        (a.first_frame, a.frame_count, a.fps, a.looping),
        (5, 1, 10.0, true)
    );

    let Some(skm_bytes) = corpus_file(PAIRS[0].0, test) else {
        return;
    };
    let skm = load_named(&skm_bytes, "tris.skm");
    let raw = parse_skm(&skm_bytes);
    assert_eq!(skm.format(), Format::Skm);
    assert_eq!(skm.meshes().len(), 2);
    assert_eq!(skm.unbound(), Some(&BoneSlots::ByIndex(27)));
    assert!(skm.bones().is_empty() && skm.frames().is_empty());
    for (m, (mesh, r)) in skm.meshes().iter().zip(&raw.meshes).enumerate() {
        assert_eq!(mesh.name().as_bytes(), &r.name[..], "mesh {m}");
        assert_eq!(mesh.shader().as_bytes(), &r.shader[..], "mesh {m}");
        assert_eq!(mesh.vertex_count(), r.vertices.len(), "mesh {m}");
        assert_eq!(mesh.triangle_count() * 3, r.indices.len(), "mesh {m}");
        assert_eq!(mesh.texcoords(), Some(&r.texcoords[..]), "mesh {m}");
    }
    assert_eq!(skm.meshes()[0].shader().as_bytes(), b"monada_haut");
    assert_eq!(skm.meshes()[1].name().as_bytes(), b"1");
    // Influence sums in these files are off 1 by up to 1e-3: reported, not fatal.
    assert!(
        skm.warnings()
            .iter()
            .any(|w| w.to_string().contains("influence sums")),
        "{:?}",
        skm.warnings()
    );

    let Some(box_bytes) = corpus_file(TESTBOX_SKP, test) else {
        return;
    };
    let testbox = load_named(&box_bytes, "tris.skp");
    assert_eq!(testbox.bones().len(), 3);
    assert_eq!(testbox.frames().len(), 801);
    let parents: Vec<i32> = testbox.bones().iter().map(|b| b.parent).collect();
    assert_eq!(parents, [-1, 0, 1]);
}

#[test]
fn corpus_meshes_keep_influences_references_and_reverse_triangles() {
    let test = "corpus_meshes_keep_influences_references_and_reverse_triangles";
    for (skm_rel, _) in PAIRS {
        let Some(bytes) = corpus_file(skm_rel, test) else {
            return;
        };
        let model = load_named(&bytes, skm_rel);
        let raw = parse_skm(&bytes);
        assert_eq!(model.unbound(), Some(&BoneSlots::ByIndex(raw.num_bones)));
        let mut raw_max = 0;
        for (m, (mesh, r)) in model.meshes().iter().zip(&raw.meshes).enumerate() {
            for (v, infl) in r.vertices.iter().enumerate() {
                let got: Vec<_> = mesh
                    .influences(v)
                    .iter()
                    .map(|i| RawInfluence {
                        origin: i.origin,
                        weight: i.weight,
                        normal: i.normal,
                        bone: i.bone,
                    })
                    .collect();
                assert_eq!(&got, infl, "{skm_rel} mesh {m} vertex {v}");
                raw_max = raw_max.max(infl.len());
            }
            assert_eq!(
                mesh.references(),
                Some(&r.references[..]),
                "{skm_rel} mesh {m}"
            );
            let reversed: Vec<u32> = r
                .indices
                .chunks(3)
                .flat_map(|t| [t[0], t[2], t[1]])
                .collect();
            assert_eq!(mesh.indices(), &reversed[..], "{skm_rel} mesh {m}");
        }
        assert_eq!(model.info().max_influences as usize, raw_max, "{skm_rel}");
        eprintln!("{skm_rel}: at most {raw_max} influences per vertex");
    }
    // FORMATS §1.3: the LOD tris_2.skm has vertices with 5 influences.
    if let Some(bytes) = corpus_file(PAIRS[1].0, test) {
        let lod = load_named(&bytes, "tris_2.skm");
        assert_eq!(lod.info().max_influences, 5);
        // Monada's mesh 1 lists finger bones 12 and 18 without their parents (FORMATS §3.3).
        assert_eq!(
            lod.meshes()[1].references().unwrap(),
            [1, 2, 3, 4, 12, 18, 19, 20, 21, 22, 23, 24, 25, 26]
        );
    }
}

#[test]
fn corpus_bind_meshes_match_the_direct_formula() {
    let test = "corpus_bind_meshes_match_the_direct_formula";
    for (skm_rel, skp_rel) in PAIRS {
        let (Some(skm_bytes), Some(skp_bytes)) =
            (corpus_file(skm_rel, test), corpus_file(skp_rel, test))
        else {
            return;
        };
        let meshes = load_named(&skm_bytes, skm_rel);
        let skeleton = load_named(&skp_bytes, skp_rel);
        let bound = Model::bind(&meshes, &skeleton).unwrap();
        assert!(bound.shares_skeleton(&skeleton));
        assert_eq!(bound.format(), Format::Skm);
        let raw_skm = parse_skm(&skm_bytes);
        let raw_skp = parse_skp(&skp_bytes);
        let abs = absolute(&raw_skp, 0).unwrap();

        // The bind pose itself.
        for (b, (m, (q, t))) in bound.skeleton().bind_pose().iter().zip(&abs).enumerate() {
            let got = m.translation();
            for k in 0..3 {
                assert!((got[k] as f64 - t[k]).abs() < 1e-3, "{skp_rel} bone {b}");
            }
            let x = qrot(*q, [1.0, 0.0, 0.0]);
            let got = m.transform_vector([1.0, 0.0, 0.0]);
            for k in 0..3 {
                assert!((got[k] as f64 - x[k]).abs() < 1e-5, "{skp_rel} bone {b}");
            }
        }

        for (m, raw) in raw_skm.meshes.iter().enumerate() {
            let (p_ref, n_ref) = direct_bind(raw, &abs).unwrap();
            let (p, n) = skin(&bound, m, 0);
            let size = size_of(&p_ref);
            let dp = max_diff(&p, &p_ref);
            let dn = max_diff(&n, &n_ref);
            eprintln!(
                "{skm_rel} mesh {m}: size {size:.2}, bind positions within {dp:.2e}, normals within {dn:.2e}"
            );
            assert!(dp <= 1e-4 * size, "{skm_rel} mesh {m}: {dp} vs size {size}");
            assert!(dn <= 1e-4, "{skm_rel} mesh {m}: normals off by {dn}");

            // File order is clockwise-front (FORMATS §3.7); after ossa's reversal the front face
            // (b - a) x (c - a) agrees with the bind normals.
            let file_share = front_share(&raw.indices, &p_ref, &n_ref);
            let ossa_share = front_share(bound.meshes()[m].indices(), &p, &n);
            eprintln!(
                "{skm_rel} mesh {m}: front faces agree with normals on {:.1}% (file order {:.1}%)",
                100.0 * ossa_share,
                100.0 * file_share
            );
            assert!(ossa_share >= 0.95, "{skm_rel} mesh {m}: {ossa_share}");
            assert!(file_share <= 0.05, "{skm_rel} mesh {m}: {file_share}");
        }
    }
}

#[test]
fn corpus_lods_share_one_skeleton() {
    let test = "corpus_lods_share_one_skeleton";
    let Some(skp_bytes) = corpus_file(MONADA_SKP, test) else {
        return;
    };
    let skeleton = load_named(&skp_bytes, "tris.skp");
    let mut bound = Vec::new();
    for (skm_rel, skp_rel) in &PAIRS[..3] {
        assert_eq!(*skp_rel, MONADA_SKP);
        let Some(bytes) = corpus_file(skm_rel, test) else {
            return;
        };
        bound.push(Model::bind(&load_named(&bytes, skm_rel), &skeleton).unwrap());
    }
    assert!(bound[0].shares_skeleton(&bound[1]) && bound[1].shares_skeleton(&bound[2]));
    // Binding to a skeleton with another bone count is refused.
    if let Some(box_skp) = corpus_file(TESTBOX_SKP, test) {
        let other = load_named(&box_skp, "tris.skp");
        let meshes = load_named(&corpus_file(PAIRS[0].0, test).unwrap(), "tris.skm");
        let e = Model::bind(&meshes, &other).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Mismatch);
    }
}

#[test]
fn corpus_files_save_back() {
    let test = "corpus_files_save_back";
    for (skm_rel, _) in PAIRS {
        let Some(bytes) = corpus_file(skm_rel, test) else {
            return;
        };
        let model = load_named(&bytes, skm_rel);
        let saved = model.save(Format::Skm).unwrap();
        let first_difference = bytes.iter().zip(&saved).position(|(a, b)| a != b);
        assert_eq!(
            (saved.len(), first_difference),
            (bytes.len(), None),
            "{skm_rel} does not save back to its own bytes"
        );
    }
    for skp_rel in [MONADA_SKP, TESTBOX_SKP] {
        let Some(bytes) = corpus_file(skp_rel, test) else {
            return;
        };
        let model = load_named(&bytes, skp_rel);
        let saved = model.save(Format::Skp).unwrap();
        // Header, bones and frame headers come back byte for byte; each pose as the model keeps
        // it: the file's origin, and its quaternion made unit length at load.
        assert_eq!(saved.len(), bytes.len(), "{skp_rel}");
        // Frame 0's pose offset: where the poses start.
        let ofs_poses = le_u32(&bytes, le_u32(&bytes, 24) as usize + 64) as usize;
        assert_eq!(saved[..ofs_poses], bytes[..ofs_poses], "{skp_rel}");
        let (a, b) = (parse_skp(&bytes), parse_skp(&saved));
        let (mut exact, mut total, mut worst) = (0usize, 0usize, 0.0f64);
        for (fa, fb) in a.poses.iter().zip(&b.poses) {
            for ((qa, ta), (qb, tb)) in fa.iter().zip(fb) {
                total += 1;
                exact += usize::from(qa == qb && ta == tb);
                assert_eq!(ta, tb, "{skp_rel}: origins are stored as they are");
                let unit = qnorm(qa.map(f64::from)).map(|c| c as f32);
                assert_eq!(
                    qb.map(f32::to_bits),
                    unit.map(f32::to_bits),
                    "{skp_rel}: the quaternion made unit length"
                );
                let d = qmul(
                    qnorm(qa.map(|c| c as f64)),
                    [-qb[0], -qb[1], -qb[2], qb[3]].map(|c| c as f64),
                );
                // The same rotation: q_a q_b^-1 is +-identity, its vector part half the angle.
                worst = worst.max(2.0 * dot([d[0], d[1], d[2]], [d[0], d[1], d[2]]).sqrt());
            }
        }
        eprintln!(
            "{skp_rel}: {exact} of {total} poses saved back bit for bit; rotations within {worst:.1e} rad"
        );
        assert!(worst < 1e-6, "{skp_rel}: {worst}");
        // The small testbox comes back whole; in monada's, 90 of 19,953 quaternions were a
        // step from unit length in their low bits (when poses went through a 3x4 matrix, only
        // 70% came back bit for bit).
        if skp_rel == TESTBOX_SKP {
            assert_eq!(saved, bytes, "{skp_rel}");
        } else {
            assert!(exact * 100 >= total * 99, "{skp_rel}: {exact} of {total}");
        }
        // Loading the saved file gives the same poses.
        let again = load_named(&saved, skp_rel);
        for f in 0..model.frames().len() {
            let (pa, pb) = (
                model.skeleton().frame_poses(f).unwrap(),
                again.skeleton().frame_poses(f).unwrap(),
            );
            for (x, y) in pa.iter().zip(pb.iter()) {
                for k in 0..12 {
                    assert!((x.m[k] - y.m[k]).abs() < 1e-5, "{skp_rel} frame {f}");
                }
            }
        }
        assert_eq!(again.bones(), model.bones());
        assert_eq!(again.frames(), model.frames());
    }
}

#[test]
fn corpus_validates_clean() {
    let test = "corpus_validates_clean";
    for rel in PAIRS.iter().map(|p| p.0).chain([MONADA_SKP, TESTBOX_SKP]) {
        let Some(bytes) = corpus_file(rel, test) else {
            return;
        };
        let report = ossa::validate(
            &bytes,
            &LoadOptions {
                name: Some(rel.to_owned()),
                ..LoadOptions::default()
            },
        );
        assert!(report.problems.is_empty(), "{rel}: {:?}", report.problems);
        assert!(report.model.is_some(), "{rel}");
    }
}

#[test]
fn corpus_files_are_told_apart_without_a_name() {
    let test = "corpus_files_are_told_apart_without_a_name";
    for (rel, want) in [
        (PAIRS[0].0, Format::Skm),
        (PAIRS[3].0, Format::Skm),
        (MONADA_SKP, Format::Skp),
        (TESTBOX_SKP, Format::Skp),
    ] {
        let Some(bytes) = corpus_file(rel, test) else {
            return;
        };
        assert_eq!(ossa::format::detect(&bytes, None), Some(want), "{rel}");
        let m = Model::load(&bytes, &LoadOptions::default()).unwrap();
        assert_eq!(m.format(), want, "{rel}");
    }
}

// ---------------------------------------------------------------------------------------------
// Without the corpus: a tube rig, and DPM -> SKM + SKP
// ---------------------------------------------------------------------------------------------

fn small_tube() -> TubeRig {
    TubeRig {
        bones: 3,
        rings_per_bone: 2,
        sides: 4,
        frames: 3,
        ..TubeRig::default()
    }
}

fn load_as(bytes: &[u8], format: Format) -> ossa::Result<Model> {
    Model::load(
        bytes,
        &LoadOptions {
            format,
            ..LoadOptions::default()
        },
    )
}

/// A DPM model saved as SKM + SKP, loaded back and bound, has the DPM's bind mesh, frames and
/// triangles.
fn check_split(name: &str, dpm: &Model) {
    let skm_bytes = skm::write_skm(dpm).unwrap();
    let skp_bytes = skm::write_skp(dpm).unwrap();
    let meshes = load_as(&skm_bytes, Format::Skm).unwrap();
    let skeleton = load_as(&skp_bytes, Format::Skp).unwrap();
    let bound = Model::bind(&meshes, &skeleton).unwrap();
    assert_eq!(bound.bones().len(), dpm.bones().len(), "{name}");
    assert_eq!(bound.frames().len(), dpm.frames().len(), "{name}");
    for (a, b) in bound.bones().iter().zip(dpm.bones()) {
        assert_eq!(a, b, "{name}");
    }
    let size = {
        let (lo, hi) = dpm.bounds();
        dot(sub(f64v(hi), f64v(lo)), sub(f64v(hi), f64v(lo))).sqrt()
    }
    .max(1.0);
    let frames = dpm.frames().len() as u32;
    for m in 0..dpm.meshes().len() {
        assert_eq!(
            bound.meshes()[m].indices(),
            dpm.meshes()[m].indices(),
            "{name} mesh {m}"
        );
        assert_eq!(
            bound.meshes()[m].all_influences(),
            dpm.meshes()[m].all_influences(),
            "{name} mesh {m}"
        );
        // Frame 0 (the bind mesh) and a later frame, posed and skinned.
        for frame in [0, frames / 2, frames - 1] {
            let (pa, na) = skin(&bound, m, frame);
            let (pb, nb) = skin(dpm, m, frame);
            let (dp, dn) = (max_diff(&pa, &pb), max_diff(&na, &nb));
            assert!(
                dp <= 1e-5 * size && dn <= 1e-4,
                "{name} mesh {m} frame {frame}: positions off by {dp}, normals by {dn}"
            );
        }
    }
    let (lo, hi) = bound.bounds();
    let (dlo, dhi) = dpm.bounds();
    for k in 0..3 {
        assert!((lo[k] - dlo[k]).abs() as f64 <= 1e-5 * size, "{name}");
        assert!((hi[k] - dhi[k]).abs() as f64 <= 1e-5 * size, "{name}");
    }
}

#[test]
fn a_tube_split_into_skm_and_skp_binds_back_to_itself() {
    let tube = TubeRig::default().build().unwrap();
    check_split("tube", &tube);

    // Written from a DPM model, the SKM is laid out as the Warsow tools lay theirs out.
    let bytes = skm::write_skm(&tube).unwrap();
    assert_eq!(&bytes[..4], skm::MAGIC);
    assert_eq!(le_u32(&bytes, 8) as usize, bytes.len());
    assert_eq!(le_u32(&bytes, 20), 24);
    let raw = parse_skm(&bytes);
    assert_eq!(raw.num_bones, 5);
    // References: the sorted bones the influences use.
    assert_eq!(raw.meshes[0].references, [0, 1, 2, 3, 4]);
    assert_eq!(raw.meshes[0].name, b"tube");
    assert_eq!(raw.meshes[0].shader, b"textures/tube");
    // Triangles are stored clockwise-front: reversed from ossa's.
    let want: Vec<u32> = tube.meshes()[0]
        .indices()
        .chunks(3)
        .flat_map(|t| [t[0], t[2], t[1]])
        .collect();
    assert_eq!(raw.meshes[0].indices, want);

    let skp = skm::write_skp(&tube).unwrap();
    let raw = parse_skp(&skp);
    assert_eq!(le_u32(&skp, 8) as usize, skp.len());
    assert_eq!((le_u32(&skp, 20), le_u32(&skp, 24)), (28, 28 + 5 * 72));
    assert_eq!(raw.frames[0], b"bind");
    assert_eq!(raw.bones[2].1, 1);

    // Loaded back and saved again, both files come back byte for byte.
    let meshes = load_as(&bytes, Format::Skm).unwrap();
    assert_eq!(meshes.save(Format::Skm).unwrap(), bytes);
    let skeleton = load_as(&skp, Format::Skp).unwrap();
    assert_eq!(skeleton.save(Format::Skp).unwrap(), skp);
    // A bound model saves its meshes and its skeleton the same way.
    let bound = Model::bind(&meshes, &skeleton).unwrap();
    assert_eq!(bound.save(Format::Skm).unwrap(), bytes);
    assert_eq!(bound.save(Format::Skp).unwrap(), skp);
}

#[test]
fn corpus_dpms_split_into_skm_and_skp_bind_back() {
    let test = "corpus_dpms_split_into_skm_and_skp_bind_back";
    let dir = corpus_dir().join("dpm");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("corpus not found at {}; skipping {test}", dir.display());
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("dpm")))
        .collect();
    paths.sort();
    let (mut split, mut scaled) = (0, Vec::new());
    for path in &paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let dpm = Model::load_file(path, &LoadOptions::default()).unwrap();
        match skm::write_skp(&dpm) {
            Err(e) if e.code() == ErrorCode::Unsupported => {
                assert!(e.to_string().contains("scale"), "{name}: {e}");
                scaled.push(name);
                continue;
            }
            Err(e) if e.code() == ErrorCode::Limit => {
                eprintln!("{name}: {e}");
                continue;
            }
            r => {
                r.unwrap();
            }
        }
        check_split(&name, &dpm);
        split += 1;
    }
    eprintln!(
        "{split} corpus DPMs split into SKM + SKP and bound back; with scaled poses: {scaled:?}"
    );
    assert!(split > 0);
}

#[test]
fn the_writers_refuse_what_the_format_cannot_hold() {
    let parts = small_tube().parts();

    // A pose with scale.
    let mut p = parts.clone();
    let mut poses = p.poses.to_matrices();
    poses[3 + 1] = Mat3x4::from_rotation_translation_scale(
        glam::Quat::IDENTITY,
        [0.0, 0.0, 10.0],
        [1.0, 2.0, 1.0],
    );
    p.poses = poses.into();
    let m = Model::from_parts(p).unwrap();
    let e = skm::write_skp(&m).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported);
    let msg = e.to_string();
    assert!(msg.contains("frame 1") && msg.contains("bone 1"), "{msg}");
    // The meshes alone are still fine.
    skm::write_skm(&m).unwrap();

    // Names of 64 bytes have no room for qfusion's NUL.
    for (what, edit) in [
        ("bone 1", 0usize),
        ("frame 2", 1),
        ("mesh 0 shader", 2),
        ("mesh 0 name", 3),
    ] {
        let mut p = parts.clone();
        let long = Name::from("x".repeat(64).as_str());
        match edit {
            0 => p.bones[1].name = long,
            1 => p.frames[2].name = long,
            2 => p.meshes[0].shader = long,
            _ => p.meshes[0].name = long,
        }
        let m = Model::from_parts(p).unwrap();
        let e = if edit < 2 {
            skm::write_skp(&m).unwrap_err()
        } else {
            skm::write_skm(&m).unwrap_err()
        };
        assert_eq!(e.code(), ErrorCode::Limit, "{what}");
        assert!(e.to_string().contains(what), "{what}: {e}");
    }
    // 63 bytes fit.
    let mut p = parts.clone();
    p.bones[1].name = Name::from("y".repeat(63).as_str());
    let bytes = skm::write_skp(&Model::from_parts(p).unwrap()).unwrap();
    let back = load_as(&bytes, Format::Skp).unwrap();
    assert_eq!(back.bones()[1].name.as_bytes(), "y".repeat(63).as_bytes());

    // Meshes that name their bones, or that wait for a skeleton, have no SKP.
    let mut p = parts.clone();
    p.bones.clear();
    p.frames.clear();
    p.poses = Poses::default();
    p.animations.clear();
    p.unbound = Some(BoneSlots::ByName(vec![
        Name::from("bone0"),
        Name::from("bone1"),
        Name::from("bone2"),
    ]));
    let by_name = Model::from_parts(p.clone()).unwrap();
    assert_eq!(
        skm::write_skm(&by_name).unwrap_err().code(),
        ErrorCode::Unsupported
    );
    assert_eq!(
        skm::write_skp(&by_name).unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
    p.unbound = Some(BoneSlots::ByIndex(3));
    let by_index = Model::from_parts(p).unwrap();
    let bytes = skm::write_skm(&by_index).unwrap();
    assert_eq!(le_u32(&bytes, 12), 3);

    // No meshes, or no bones.
    let mut p = parts.clone();
    p.meshes.clear();
    let m = Model::from_parts(p).unwrap();
    assert_eq!(
        skm::write_skm(&m).unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
    skm::write_skp(&m).unwrap();
    let empty = Model::from_parts(ModelParts::new(Format::Skm)).unwrap();
    assert_eq!(
        skm::write_skp(&empty).unwrap_err().code(),
        ErrorCode::InvalidArgument
    );

    // More than 32 meshes, more than 256 bones.
    let mut p = parts.clone();
    p.meshes = vec![p.meshes[0].clone(); 33];
    let e = skm::write_skm(&Model::from_parts(p).unwrap()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    let big = TubeRig {
        bones: 257,
        rings_per_bone: 1,
        sides: 3,
        frames: 1,
        ..TubeRig::default()
    }
    .build()
    .unwrap();
    assert_eq!(skm::write_skp(&big).unwrap_err().code(), ErrorCode::Limit);
    assert_eq!(skm::write_skm(&big).unwrap_err().code(), ErrorCode::Limit);
}

#[test]
fn mirrored_poses_cannot_be_saved() {
    let mut p = small_tube().parts();
    let mut poses = p.poses.to_matrices();
    poses[0] =
        Mat3x4::from_rotation_translation_scale(glam::Quat::IDENTITY, [0.0; 3], [-1.0, 1.0, 1.0]);
    p.poses = poses.into();
    let m = Model::from_parts(p).unwrap();
    let e = skm::write_skp(&m).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported);
    assert!(e.to_string().contains("frame 0"), "{e}");
}

#[test]
fn names_and_extensions_pick_skm_or_skp() {
    let tube = small_tube().build().unwrap();
    let skm_bytes = skm::write_skm(&tube).unwrap();
    let skp_bytes = skm::write_skp(&tube).unwrap();
    use ossa::format::detect;
    assert_eq!(detect(&skm_bytes, None), Some(Format::Skm));
    assert_eq!(detect(&skp_bytes, None), Some(Format::Skp));
    assert_eq!(detect(&skp_bytes, Some("a/tris.SKP")), Some(Format::Skp));
    assert_eq!(detect(&skm_bytes, Some("tris.skm")), Some(Format::Skm));
    // A name's extension wins over the layout.
    assert_eq!(detect(&skp_bytes, Some("tris.skm")), Some(Format::Skm));
    assert_eq!(detect(&skm_bytes, Some("tris.skp")), Some(Format::Skp));
    assert_eq!(detect(&skp_bytes, Some("tris.bin")), Some(Format::Skp));
    // Too short to be an SKP: an SKM (whose reader then says what is wrong).
    assert_eq!(detect(b"SKM1", None), Some(Format::Skm));
    let e = Model::load(b"SKM1", &LoadOptions::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Truncated);

    // An SKP read as an SKM, or the other way round, fails cleanly.
    for (bytes, format) in [(&skp_bytes, Format::Skm), (&skm_bytes, Format::Skp)] {
        if let Err(e) = load_as(bytes, format) {
            assert!(
                matches!(
                    e.code(),
                    ErrorCode::Truncated | ErrorCode::Malformed | ErrorCode::Limit
                ),
                "{e}"
            );
        }
    }
}

/// A loaded SKP saves back to its own bytes, quaternion signs included: `-q` is the rotation of
/// `q`, so a pose that went through its matrix came back with the sign the conversion picks.
#[test]
fn skp_poses_save_back_with_their_own_signs() {
    let mut bytes = skm::write_skp(&small_tube().build().unwrap()).unwrap();
    let ofs_poses = le_u32(&bytes, le_u32(&bytes, 24) as usize + 64) as usize;
    // Frame 0, bone 0: its quaternion negated (the sign bits of four little-endian floats).
    for k in 0..4 {
        bytes[ofs_poses + 4 * k + 3] ^= 0x80;
    }
    let q0 = le_f32(&bytes, ofs_poses + 12);
    assert!(q0 < 0.0, "w is now negative: {q0}");
    let model = load_as(&bytes, Format::Skp).unwrap();
    assert_eq!(skm::write_skp(&model).unwrap(), bytes);
}

#[test]
fn skp_poses_stay_rotations_and_origins() {
    let test = "skp_poses_stay_rotations_and_origins";
    let mut files = vec![(
        "tube.skp".to_owned(),
        skm::write_skp(&small_tube().build().unwrap()).unwrap(),
    )];
    files.extend(corpus_file(MONADA_SKP, test).map(|b| (MONADA_SKP.to_owned(), b)));
    for (name, bytes) in &files {
        let model = load_named(bytes, name);
        let raw = parse_skp(bytes);
        let nb = raw.bones.len();
        let Poses::Rigid(rigid) = model.skeleton().poses() else {
            panic!("{name}: the poses were made matrices at load");
        };
        assert_eq!(rigid.len(), raw.frames.len() * nb, "{name}");
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for (f, frame) in raw.poses.iter().enumerate() {
            let matrices = model.skeleton().frame_poses(f).unwrap();
            for (b, (q, t)) in frame.iter().enumerate() {
                let what = format!("{name} frame {f} bone {b}");
                // The file's quaternion made unit length in f64, its origin as stored.
                let unit = qnorm(q.map(f64::from)).map(|c| c as f32);
                let r = &rigid[f * nb + b];
                assert_eq!(bits(&r.rotation), bits(&unit), "{what}");
                assert_eq!(bits(&r.translation), bits(t), "{what}");
                // Asked for, the matrix is the one the reader made when it kept matrices.
                let m = Mat3x4::from_rotation_translation(glam::Quat::from_array(unit), *t);
                assert_eq!(bits(&matrices[b].m), bits(&m.m), "{what}");
            }
        }
        if name == MONADA_SKP {
            // 739 frames of 27 bones at 28 bytes a pose, where matrices took 48: the model
            // takes 1.06 times the file's 610,908 bytes (it took 1.71).
            assert_eq!(std::mem::size_of_val(rigid.as_slice()), 739 * 27 * 28);
            assert_eq!(bytes.len(), 610_908);
            let heap = model.heap_bytes();
            assert!(heap > 610_908 && heap < 610_908 * 11 / 10, "{heap}");
        }
    }
}

#[test]
fn skp_blends_mix_their_own_quaternions() {
    let bytes = skm::write_skp(&small_tube().build().unwrap()).unwrap();
    let model = load_named(&bytes, "tube.skp");
    let Poses::Rigid(rigid) = model.skeleton().poses().clone() else {
        panic!("the poses were made matrices at load");
    };
    let nb = model.bones().len();
    let blend = [
        FrameBlend {
            frame: 1,
            weight: 0.25,
        },
        FrameBlend {
            frame: 2,
            weight: 0.75,
        },
    ];
    let mut out = vec![Mat3x4::IDENTITY; nb];
    model.pose_frames_local(&blend, &mut out).unwrap();
    for (b, got) in out.iter().enumerate() {
        // The stored rotations (the second turned to the first's hemisphere) summed with their
        // weights and made unit length, the origins mixed alike, and no scale: no matrix is
        // decomposed, so nothing is lost to it.
        let (r1, r2) = (&rigid[nb + b], &rigid[2 * nb + b]);
        let q1 = glam::Quat::from_array(r1.rotation);
        let q2 = glam::Quat::from_array(r2.rotation);
        let q2 = if q1.dot(q2) < 0.0 { -q2 } else { q2 };
        let sum = glam::Quat::from_xyzw(0.0, 0.0, 0.0, 0.0) + q1 * 0.25 + q2 * 0.75;
        let t: [f32; 3] =
            std::array::from_fn(|a| 0.0 + r1.translation[a] * 0.25 + r2.translation[a] * 0.75);
        let want = Mat3x4::from_rotation_translation_scale(sum / sum.length(), t, [1.0; 3]);
        assert_eq!(got, &want, "bone {b}");
    }
    // One frame alone is its stored poses, made matrices.
    model
        .pose_frames_local(
            &[FrameBlend {
                frame: 2,
                weight: 1.0,
            }],
            &mut out,
        )
        .unwrap();
    let frame2: Vec<Mat3x4> = rigid[2 * nb..3 * nb].iter().map(|r| r.matrix()).collect();
    assert_eq!(out, frame2);
}

/// The shared reader says where a cut file ends instead of panicking: every prefix of a
/// written SKM and SKP is an error (the last bytes of each are data it reads), and the whole
/// file reads.
#[test]
fn the_reference_reader_refuses_every_cut_file() {
    let tube = TubeRig::default().build().unwrap();
    let skm_bytes = skm::write_skm(&tube).unwrap();
    let skp_bytes = skm::write_skp(&tube).unwrap();
    for n in 0..skm_bytes.len() {
        let e = skm_ref::parse_skm(&skm_bytes[..n]).unwrap_err();
        assert!(
            e.contains("past the end") || e.contains("magic"),
            "{n}: {e}"
        );
    }
    for n in 0..skp_bytes.len() {
        let e = skm_ref::parse_skp(&skp_bytes[..n]).unwrap_err();
        assert!(
            e.contains("past the end") || e.contains("magic"),
            "{n}: {e}"
        );
    }
    assert_eq!(parse_skm(&skm_bytes).meshes.len(), 1);
    assert_eq!(parse_skp(&skp_bytes).frames.len(), tube.frames().len());
    // A parent after its child is refused by the pose math, not read out of range.
    let mut skp = parse_skp(&skp_bytes);
    skp.bones[1].1 = 3;
    assert!(
        absolute(&skp, 0)
            .unwrap_err()
            .contains("does not come before")
    );
}
