//! Every Sims mesh of the corpus bound to the skeleton of its age (adult or child, told by its
//! file name), posed at rest (frame 0, as is and under a root matrix) and with every joint
//! turned, and skinned, vertex by vertex against an independent computation: the mesh and the
//! skeleton read by `sims_ref` (not ossa's readers), the rest pose `T(t) R(q)^T` concatenated
//! down the parents and the blend lerp `(1 - w) A_real p_real + w A_blend p_blend` (w = raw /
//! 32768, the normal the real vertex's alone) in f64 (FORMATS §1 items 6-9, §4.3-4.5). Then what
//! real bodies must look like: feet on the floor, heads on top, hands at the sides, children
//! shorter, and every blend pulling its vertex towards its blend point. Each mesh is also checked
//! as a BMF (written by ossa, read back by the reference's own BMF reader), and a bone the
//! skeleton lacks must not be found, by name.

mod corpus;
mod sims_ref;
mod sweep;

use std::collections::BTreeMap;
use std::path::Path;

use corpus::{corpus_subdir, files_ending};
use ossa::{ErrorCode, LoadOptions, Mat3x4, Model, sims_mesh};
use sims_ref::{M3, RawBone, RefSkn, apply, joints, joints_turned, raw_skeleton};

// ---------------------------------------------------------------------------------------------
// Which skeleton a mesh goes on
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Age {
    Adult,
    Child,
}

impl Age {
    fn skeleton_file(self) -> &'static str {
        match self {
            Age::Adult => "so_adult-skeleton.cmx",
            Age::Child => "so_child-skeleton.cmx",
        }
    }
}

/// What a mesh is, from Maxis's naming of `xskin-<skin>-<bone>-<part>`: the skin's first letter
/// is the kind (b body, c head, h hand, n nude body, ...), then a three-character id, then gender
/// (m, f, u) and age (a, c) letters; bodies end in their body type (fat, fit, skn for adults, chd
/// for children). Hands are `h` + gender + side (l, r, a) + shape (o, c, p) and have no age: they
/// hang from a hand bone and go on either skeleton.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Body,
    Head,
    Hand,
}

/// The kind of a corpus mesh and the skeletons it goes on, or why its name fits no rule (which
/// fails the test: no file is skipped unnoticed).
fn classify(file: &str) -> Result<(Kind, Vec<Age>), String> {
    let lower = file.to_ascii_lowercase();
    let Some((_, rest)) = lower.split_once("xskin-") else {
        return Err(format!("{file}: not an xskin- mesh name"));
    };
    let [skin, _bone, _part] = rest.split('-').collect::<Vec<_>>()[..] else {
        return Err(format!("{file}: not xskin-<skin>-<bone>-<part>"));
    };
    let code = skin.split('_').next().unwrap_or_default().as_bytes();
    let age_letter = |c: u8| match c {
        b'a' => Ok(Age::Adult),
        b'c' => Ok(Age::Child),
        _ => Err(format!("{file}: age letter {:?}", c as char)),
    };
    match code {
        [b'h', g, side, shape]
            if b"mfu".contains(g) && b"lra".contains(side) && b"ocp".contains(shape) =>
        {
            Ok((Kind::Hand, vec![Age::Adult, Age::Child]))
        }
        [b'c', _, _, _, g, age] if b"mfu".contains(g) => Ok((Kind::Head, vec![age_letter(*age)?])),
        _ => {
            let age = match code.get(code.len().saturating_sub(3)..) {
                Some(b"fat" | b"fit" | b"skn") => Age::Adult,
                Some(b"chd") => Age::Child,
                _ => {
                    return Err(format!(
                        "{file}: no body type (fat, fit, skn, chd) ends `{skin}`"
                    ));
                }
            };
            // A body with the whole code (b001mafit) must say the same age twice.
            if let [b'b', _, _, _, g, a, _, _, _] = code
                && (!b"mfu".contains(g) || age_letter(*a)? != age)
            {
                return Err(format!(
                    "{file}: `{skin}` has gender and age letters {:?}{:?} that do not fit its body type",
                    *g as char, *a as char
                ));
            }
            Ok((Kind::Body, vec![age]))
        }
    }
}

#[test]
fn names_classify_as_maxis_names_them() {
    let cases = [
        ("so_xskin-b001mafit_01-PELVIS-BODY.skn", Kind::Body, "A"),
        (
            "olt_xskin-B899FAFit_eliseSSX-PELVIS-MBODY.skn",
            Kind::Body,
            "A",
        ),
        ("so_xskin-b009faskn_01-PELVIS-BODY.skn", Kind::Body, "A"),
        ("xskin-b002fcchd_01-PELVIS-BODY.bmf", Kind::Body, "C"),
        ("so_xskin-NUChd_01-PELVIS-BODYU.skn", Kind::Body, "C"),
        ("so_xskin-C003MA_RomanCrew-HEAD-HEAD.skn", Kind::Head, "A"),
        ("so_xskin-c004mc_nerd-HEAD-NERDSPECS.skn", Kind::Head, "C"),
        ("so_xskin-hulc-L_HAND-FISTCL.skn", Kind::Hand, "AC"),
        ("so_xskin-hurp-R_HAND-POINTCR.skn", Kind::Hand, "AC"),
    ];
    for (file, kind, ages) in cases {
        let (k, a) = classify(file).unwrap();
        let letters: String = a
            .iter()
            .map(|a| if *a == Age::Adult { 'A' } else { 'C' })
            .collect();
        assert_eq!((k, letters.as_str()), (kind, ages), "{file}");
    }
    for bad in [
        "xskin-b001mcfit_01-PELVIS-BODY.skn",
        "xskin-c001mx_a-HEAD-HEAD.skn",
        "xskin-zzz-PELVIS-BODY.skn",
        "xskin-hulc-L_HAND.skn",
        "body.skn",
    ] {
        assert!(classify(bad).is_err(), "{bad}");
    }
}

// ---------------------------------------------------------------------------------------------
// The reference
// ---------------------------------------------------------------------------------------------

/// How much each bone turns about its x axis in the turned pose: every joint bends, by a
/// different angle, so that every blend between two bones pulls across a gap.
fn turn(bone: usize) -> f64 {
    0.3 * (bone as f64 * 0.7 + 0.4).sin()
}

fn turn_about_x(angle: f64) -> M3 {
    let (s, c) = angle.sin_cos();
    [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]
}

/// A skeleton as the reference reads it.
struct RefSkeleton {
    bones: Vec<RawBone>,
}

impl RefSkeleton {
    /// The bone a mesh names, as the game finds it: by name, ignoring ASCII case.
    fn find(&self, name: &str) -> usize {
        self.bones
            .iter()
            .position(|b| b.name.eq_ignore_ascii_case(name))
            .unwrap_or_else(|| panic!("the skeleton has no bone {name}"))
    }

    /// Joint rotations and positions at rest, or in the turned pose.
    fn joints(&self, turned: bool) -> Vec<(M3, [f64; 3])> {
        if turned {
            joints_turned(&self.bones, |b| turn_about_x(turn(b)))
        } else {
            joints(&self.bones)
        }
    }
}

/// The skinned mesh the reference expects, and each blend's two points.
struct Expected {
    positions: Vec<[f64; 3]>,
    normals: Vec<[f64; 3]>,
    blends: Vec<Blend>,
}

struct Blend {
    target: usize,
    weight: f64,
    /// Where the target is without its blend, and the blend vertex.
    unblended: [f64; 3],
    point: [f64; 3],
    /// Whether the blend vertex hangs from the target's own bone.
    own_bone: bool,
}

/// FORMATS §4.4-4.5: a real vertex at `A_bone p` with normal `R_bone n`; a blended one at
/// `(1 - w) A_real p + w A_blend q`, normal unchanged.
fn expected(mesh: &RefSkn, skeleton: &RefSkeleton, joints: &[(M3, [f64; 3])]) -> Expected {
    let bones: Vec<usize> = mesh.bones.iter().map(|name| skeleton.find(name)).collect();
    let joint: Vec<(M3, [f64; 3])> = bones.iter().map(|&b| joints[b]).collect();
    let point = |slot: usize, v: [f32; 6]| {
        let (r, t) = joint[slot];
        let p = apply(r, [v[0], v[1], v[2]].map(f64::from));
        [0, 1, 2].map(|i| p[i] + t[i])
    };
    let (real_bone, blend_bone) = mesh.owners();
    let real = mesh.uvs.len();
    let mut positions = Vec::with_capacity(real);
    let mut normals = Vec::with_capacity(real);
    for (v, &slot) in real_bone.iter().enumerate() {
        let vector = mesh.vectors[v];
        positions.push(point(slot, vector));
        normals.push(apply(
            joint[slot].0,
            [vector[3], vector[4], vector[5]].map(f64::from),
        ));
    }
    let mut blends = Vec::with_capacity(mesh.blends.len());
    let mut pulled = vec![false; real];
    for (k, &(target, raw)) in mesh.blends.iter().enumerate() {
        // No corpus vertex has two blends (FORMATS §4.5), so the order they apply in is moot.
        assert!(!pulled[target], "vertex {target} has two blends");
        pulled[target] = true;
        let weight = raw as f64 / 32768.0;
        let unblended = positions[target];
        let point = point(blend_bone[k], mesh.vectors[real + k]);
        positions[target] = [0, 1, 2].map(|i| (1.0 - weight) * unblended[i] + weight * point[i]);
        blends.push(Blend {
            target,
            weight,
            unblended,
            point,
            own_bone: bones[real_bone[target]] == bones[blend_bone[k]],
        });
    }
    Expected {
        positions,
        normals,
        blends,
    }
}

// ---------------------------------------------------------------------------------------------
// ossa
// ---------------------------------------------------------------------------------------------

/// The model's frame 0 (its rest pose), concatenated under `root`.
fn rest_pose(model: &Model, root: Option<&Mat3x4>) -> Vec<Mat3x4> {
    sweep::pose(model, &[sweep::blend(0, 1.0)], root)
}

/// The turned pose: each bone's local rest pose followed by its turn about x.
fn turned_pose(model: &Model) -> Vec<Mat3x4> {
    let local: Vec<Mat3x4> = model
        .skeleton()
        .frame_poses(0)
        .unwrap()
        .iter()
        .enumerate()
        .map(|(b, l)| {
            let (s, c) = (turn(b) as f32).sin_cos();
            let x = Mat3x4 {
                m: [1.0, 0.0, 0.0, 0.0, 0.0, c, -s, 0.0, 0.0, s, c, 0.0],
            };
            l.mul(&x)
        })
        .collect();
    let mut bones = vec![Mat3x4::IDENTITY; local.len()];
    model.pose_concat(&local, None, &mut bones).unwrap();
    bones
}

/// Every vertex of the model's one mesh skinned with `bones`: positions and normals.
fn skin(model: &Model, bones: &[Mat3x4]) -> (Vec<[f64; 3]>, Vec<[f64; 3]>) {
    let out = sweep::skin(model, 0, bones, 0);
    let widen = |v: Vec<[f32; 3]>| v.into_iter().map(|p| p.map(f64::from)).collect();
    (widen(out.positions), widen(out.normals))
}

// ---------------------------------------------------------------------------------------------
// Comparing
// ---------------------------------------------------------------------------------------------

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    (0..3).map(|i| (a[i] - b[i]).powi(2)).sum::<f64>().sqrt()
}

/// The largest errors of positions (relative to `size`) and normals (relative to their length,
/// at least 1) of skinned output against the reference moved by `shift`; each must be within
/// 1e-5.
fn compare(
    what: &str,
    (positions, normals): &(Vec<[f64; 3]>, Vec<[f64; 3]>),
    want: &Expected,
    shift: [f64; 3],
    size: f64,
) -> (f64, f64) {
    assert_eq!(positions.len(), want.positions.len(), "{what}");
    let (mut position_error, mut normal_error) = (0.0f64, 0.0f64);
    for (v, (p, n)) in want.positions.iter().zip(&want.normals).enumerate() {
        let p = [0, 1, 2].map(|i| p[i] + shift[i]);
        let e = distance(positions[v], p) / size;
        assert!(
            e <= 1e-5,
            "{what}: vertex {v} at {:?}, want {p:?}",
            positions[v]
        );
        position_error = position_error.max(e);
        let e = distance(normals[v], *n) / distance(*n, [0.0; 3]).max(1.0);
        assert!(
            e <= 1e-5,
            "{what}: vertex {v} normal {:?}, want {n:?}",
            normals[v]
        );
        normal_error = normal_error.max(e);
    }
    (position_error, normal_error)
}

/// Checks that every blend pulls its skinned target towards its blend point, by the factor
/// `1 - w` of the gap; returns the blends that had a gap to pull across (a gap within
/// `tolerance` leaves nothing to measure, and the target must stay where it is).
fn blends_pull(what: &str, positions: &[[f64; 3]], want: &Expected, tolerance: f64) -> Vec<usize> {
    let mut pulled = Vec::new();
    for (k, b) in want.blends.iter().enumerate() {
        assert!(b.weight > 0.0, "{what}: blend {k} has weight {}", b.weight);
        let gap = distance(b.unblended, b.point);
        let now = distance(positions[b.target], b.point);
        if gap <= tolerance {
            assert!(
                now <= 2.0 * tolerance,
                "{what}: blend {k} moves vertex {} {now} off a blend point it sat on",
                b.target
            );
            continue;
        }
        assert!(
            now < gap && (now - (1.0 - b.weight) * gap).abs() <= tolerance,
            "{what}: blend {k} leaves vertex {} {now} from its blend point, {gap} unblended",
            b.target
        );
        pulled.push(k);
    }
    pulled
}

// ---------------------------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------------------------

/// Every mesh file of the corpus (SKN, and BMF should one be added), sorted.
fn mesh_files(dir: &Path) -> Vec<String> {
    files_ending(dir, &[".skn", ".bmf"])
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn load(bytes: &[u8], name: &str) -> Model {
    let options = LoadOptions {
        name: Some(name.to_owned()),
        ..LoadOptions::default()
    };
    Model::load(bytes, &options).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Both skeletons, as ossa loads them and as the reference reads them.
fn skeletons(dir: &Path) -> BTreeMap<Age, (Model, RefSkeleton)> {
    [Age::Adult, Age::Child]
        .into_iter()
        .map(|age| {
            let file = age.skeleton_file();
            let bytes = read(dir, file);
            let reference = RefSkeleton {
                bones: raw_skeleton(&bytes),
            };
            (age, (load(&bytes, file), reference))
        })
        .collect()
}

/// A mesh file's reference reading: SKN text, or BMF bytes.
fn reference_mesh(name: &str, bytes: &[u8]) -> RefSkn {
    if name.to_ascii_lowercase().ends_with(".bmf") {
        RefSkn::parse_bmf(bytes)
    } else {
        RefSkn::parse(std::str::from_utf8(bytes).unwrap())
    }
}

/// What one mesh on one skeleton gave.
#[derive(Debug)]
struct Checked {
    vertices: usize,
    /// Lowest and highest y at rest.
    y: (f64, f64),
    blends: usize,
    /// Blends with a gap to pull across, at rest and turned.
    pulled: (usize, usize),
    /// Largest position error (relative to the size) and normal error over the three poses.
    error: (f64, f64),
}

/// Binds the mesh file `name` to `age`'s skeleton, poses it at rest (as is, and under a root
/// matrix) and turned, skins it, and checks every vertex against the reference.
fn check_mesh(
    name: &str,
    bytes: &[u8],
    age: Age,
    (skeleton, reference): &(Model, RefSkeleton),
) -> Checked {
    let what = format!("{name} on the {age:?} skeleton");
    let bound = Model::bind(&load(bytes, name), skeleton).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(bound.shares_skeleton(skeleton), "{what}");
    let mesh = reference_mesh(name, bytes);
    let [m] = bound.meshes() else {
        panic!("{what}: not one mesh")
    };
    assert_eq!(m.vertex_count(), mesh.uvs.len(), "{what}: vertex count");
    assert_eq!(m.indices(), mesh.faces.concat(), "{what}: triangles");

    let rest = expected(&mesh, reference, &reference.joints(false));
    let turned = expected(&mesh, reference, &reference.joints(true));
    // Tolerances scale with the model: 1e-5 of its bounding box's diagonal at rest.
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for p in &rest.positions {
        for i in 0..3 {
            lo[i] = lo[i].min(p[i]);
            hi[i] = hi[i].max(p[i]);
        }
    }
    let size = distance(lo, hi);
    let tolerance = 1e-5 * size;

    // Frame 0 as is (a one-frame model skins from its precomputed mesh), under a root matrix
    // (the general skinning path), and turned at every joint.
    let at_rest = skin(&bound, &rest_pose(&bound, None));
    let shift = [0.5, -0.25, 2.0];
    let root = Mat3x4::from_translation(shift.map(|x| x as f32));
    let moved = skin(&bound, &rest_pose(&bound, Some(&root)));
    let bent = skin(&bound, &turned_pose(&bound));
    let mut error = (0.0f64, 0.0f64);
    for (pose, out, want, shift) in [
        ("rest", &at_rest, &rest, [0.0; 3]),
        ("rest under a root", &moved, &rest, shift),
        ("turned", &bent, &turned, [0.0; 3]),
    ] {
        let (p, n) = compare(&format!("{what}, {pose}"), out, want, shift, size);
        error = (error.0.max(p), error.1.max(n));
    }
    let pulled_at_rest = blends_pull(&format!("{what}, rest"), &at_rest.0, &rest, tolerance);
    let pulled_turned = blends_pull(&format!("{what}, turned"), &bent.0, &turned, tolerance);
    // Blends that sit on their blend point at rest (seams: the same point given in two bones'
    // spaces) part from it once the joints turn; only a blend onto its own bone never does.
    for (k, b) in turned.blends.iter().enumerate() {
        if !pulled_turned.contains(&k) {
            assert!(b.own_bone, "{what}: blend {k} has no gap even when turned");
        }
    }
    let pulled = (pulled_at_rest.len(), pulled_turned.len());
    Checked {
        vertices: mesh.uvs.len(),
        y: (lo[1], hi[1]),
        blends: rest.blends.len(),
        pulled,
        error,
    }
}

#[test]
fn every_corpus_mesh_skins_as_the_reference_computes() {
    let Some(dir) = corpus_subdir("sims", "every_corpus_mesh_skins_as_the_reference_computes")
    else {
        return;
    };
    let skeletons = skeletons(&dir);
    let files = mesh_files(&dir);
    assert!(!files.is_empty(), "no mesh in {}", dir.display());
    let mut seen: BTreeMap<(Kind, Age), Vec<(String, Checked)>> = BTreeMap::new();
    for name in &files {
        let (kind, ages) = classify(name).unwrap_or_else(|e| panic!("{e}"));
        let bytes = read(&dir, name);
        for age in ages {
            let c = check_mesh(name, &bytes, age, &skeletons[&age]);
            println!(
                "{name}: {kind:?} on the {age:?} skeleton, {} vertices, {} blends ({} pull at \
                 rest, {} turned), y {:.3}..{:.3}, max error {:.1e} of the size, normals {:.1e}",
                c.vertices, c.blends, c.pulled.0, c.pulled.1, c.y.0, c.y.1, c.error.0, c.error.1
            );
            // The same mesh as a BMF, written by ossa and read by the reference's BMF reader.
            let bmf = sims_mesh::write_bmf(&load(&bytes, name)).unwrap();
            let twin = check_mesh(&format!("{name}.bmf"), &bmf, age, &skeletons[&age]);
            assert_eq!(
                (twin.vertices, twin.pulled),
                (c.vertices, c.pulled),
                "{name} as BMF"
            );
            seen.entry((kind, age)).or_default().push((name.clone(), c));
        }
    }

    // What the bodies look like: feet on the floor, heads on top, hands at mid height, and
    // children shorter than adults (which also says each mesh went on the right skeleton).
    let of = |kind: Kind, age: Age| -> &[(String, Checked)] {
        seen.get(&(kind, age)).map_or(&[], Vec::as_slice)
    };
    for age in [Age::Adult, Age::Child] {
        assert!(
            !of(Kind::Body, age).is_empty() && !of(Kind::Head, age).is_empty(),
            "the corpus has {age:?} bodies and heads"
        );
        for (body, b) in of(Kind::Body, age) {
            let (floor, top) = b.y;
            assert!(floor.abs() < 0.02, "{body}: the feet at y = {floor}");
            let height = top - floor;
            for (head, h) in of(Kind::Head, age) {
                assert!(
                    h.y.0 > floor + 0.9 * height && h.y.1 > top,
                    "{head} at y {:?} is not on top of {body} at {:?}",
                    h.y,
                    b.y
                );
            }
            for (hand, h) in of(Kind::Hand, age) {
                assert!(
                    h.y.0 > floor + 0.35 * height && h.y.1 < floor + 0.65 * height,
                    "{hand} at y {:?} does not hang at the side of {body} at {:?}",
                    h.y,
                    b.y
                );
            }
            if age == Age::Child {
                for (adult, a) in of(Kind::Body, Age::Adult) {
                    assert!(top < 0.85 * a.y.1, "{body} is not shorter than {adult}");
                }
            }
        }
    }
    let checks: usize = seen.values().map(Vec::len).sum();
    println!(
        "{} mesh files, {checks} mesh and skeleton pairs, each also as a BMF",
        files.len()
    );
}

/// A mesh's text with its bone names (the lines after the bone count) changed by `rename`.
fn renamed(text: &str, rename: impl Fn(usize, &str) -> String) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let count: usize = lines[2].trim().parse().unwrap();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        match i.checked_sub(3).filter(|&b| b < count) {
            Some(b) => out.push_str(&rename(b, line.trim())),
            None => out.push_str(line),
        }
        out.push_str("\r\n");
    }
    out
}

#[test]
fn bones_bind_by_name_ignoring_case_and_a_missing_one_is_not_found() {
    let Some(dir) = corpus_subdir(
        "sims",
        "bones_bind_by_name_ignoring_case_and_a_missing_one_is_not_found",
    ) else {
        return;
    };
    let skeletons = skeletons(&dir);
    // Text is renamed line by line; a BMF would be the same bytes behind the same binding.
    let skns = mesh_files(&dir)
        .into_iter()
        .filter(|n| n.to_ascii_lowercase().ends_with(".skn"));
    for name in skns {
        let (_, ages) = classify(&name).unwrap_or_else(|e| panic!("{e}"));
        let (skeleton, _) = &skeletons[&ages[0]];
        let bytes = read(&dir, &name);
        let text = std::str::from_utf8(&bytes).unwrap();
        let original = Model::bind(&load(&bytes, &name), skeleton).unwrap();
        let bones = rest_pose(&original, None);

        // Names in lower case find the same bones, so the mesh skins the same.
        let lower = renamed(text, |_, n| n.to_ascii_lowercase());
        let bound = Model::bind(&load(lower.as_bytes(), &name), skeleton).unwrap();
        assert_eq!(skin(&bound, &bones), skin(&original, &bones), "{name}");

        // The last bone renamed to one the skeleton lacks.
        let count = reference_mesh(&name, &bytes).bones.len();
        let missing = renamed(text, |b, n| {
            if b + 1 == count {
                format!("{n}_EXTRA")
            } else {
                n.to_owned()
            }
        });
        let meshes = load(missing.as_bytes(), &name);
        let e = Model::bind(&meshes, skeleton).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound, "{name}: {e}");
        let bone = reference_mesh(&name, missing.as_bytes()).bones[count - 1].clone();
        assert!(
            bone.ends_with("_EXTRA") && e.to_string().contains(&bone),
            "{name}: {e}"
        );
    }
}
