//! The Sims 1 meshes, SKN (text) and BMF (binary): every corpus SKN against a reader written
//! here from FORMATS §4 (not ossa's), small files written by hand line by line and byte by byte,
//! round trips through both writers, binding to a skeleton built in code and skinning at its
//! bind pose, and hostile input (truncations, non-numbers, huge counts, stray bytes, NaN, broken
//! rules), which must end in a clean error with the right code and line or byte, never a panic,
//! and within a memory budget.

mod corpus;

use corpus::corpus_dir;

mod load_options;
use load_options::{options, strict};
use ossa::{
    Bone, BoneSlots, ErrorCode, Format, Frame, FrameBlend, Influence, LoadOptions, Mat3x4, Model,
    ModelParts, Name, Strided, sims_mesh, validate,
};

mod counting_alloc;
mod sims_ref;

use counting_alloc::{budget, peak_of};
use sims_ref::RefSkn;

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

// ---------------------------------------------------------------------------------------------
// Loading helpers
// ---------------------------------------------------------------------------------------------

fn load(data: &[u8], format: Format) -> ossa::Result<Model> {
    let (r, peak) = peak_of(|| Model::load(data, &options(format)));
    assert!(
        peak <= budget(data.len()),
        "{peak} bytes of heap for {} bytes",
        data.len()
    );
    r
}

fn skn(text: &str) -> ossa::Result<Model> {
    load(text.as_bytes(), Format::SimsSkn)
}

/// The error of data that must not load, with its code checked.
fn fails(r: ossa::Result<Model>, code: ErrorCode, what: &str) -> ossa::Error {
    match r {
        Ok(_) => panic!("{what}: loaded"),
        Err(e) => {
            assert_eq!(e.code(), code, "{what}: {e}");
            e
        }
    }
}

fn fails_on_line(text: &str, code: ErrorCode, line: u32, what: &str) -> ossa::Error {
    let e = fails(skn(text), code, what);
    assert_eq!(e.line(), Some(line), "{what}: {e}");
    assert_eq!(e.offset(), None, "{what}: {e}");
    e
}

fn fails_at(data: &[u8], code: ErrorCode, offset: usize, what: &str) -> ossa::Error {
    let e = fails(load(data, Format::SimsBmf), code, what);
    assert_eq!(e.offset(), Some(offset as u64), "{what}: {e}");
    e
}

/// Everything a mesh model holds, for comparing two loads.
fn same_model(a: &Model, b: &Model, what: &str) {
    let (pa, pb) = (a.to_parts(), b.to_parts());
    assert_eq!(pa.unbound, pb.unbound, "{what}: bone slots");
    assert_eq!(pa.up_axis, pb.up_axis, "{what}");
    assert_eq!(pa.handedness, pb.handedness, "{what}");
    assert_eq!(pa.bones, pb.bones, "{what}");
    assert_eq!(pa.meshes.len(), pb.meshes.len(), "{what}");
    for (ma, mb) in pa.meshes.iter().zip(&pb.meshes) {
        assert_eq!(ma.name, mb.name, "{what}: name");
        assert_eq!(ma.shader, mb.shader, "{what}: shader");
        assert_eq!(ma.influence_start, mb.influence_start, "{what}: starts");
        assert_eq!(ma.indices, mb.indices, "{what}: indices");
        assert_eq!(ma.texcoords, mb.texcoords, "{what}: texcoords");
        assert_eq!(ma.group_ids, mb.group_ids, "{what}: group ids");
        for (v, (ia, ib)) in ma.influences.iter().zip(&mb.influences).enumerate() {
            assert_eq!(ia, ib, "{what}: influence {v}");
        }
        assert_eq!(ma.influences.len(), mb.influences.len(), "{what}");
    }
}

// ---------------------------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------------------------

/// Every corpus SKN with its bytes, or None (after saying so) when the corpus is absent.
fn corpus_skns(test: &str) -> Option<Vec<(String, Vec<u8>)>> {
    let dir = corpus_dir().join("sims");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("corpus not found at {}; skipping {test}", dir.display());
        return None;
    };
    let mut files: Vec<(String, Vec<u8>)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("skn")))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .skn in {}", dir.display());
    Some(files)
}

#[test]
fn every_corpus_skn_loads_as_the_reference_reads_it() {
    let Some(files) = corpus_skns("every_corpus_skn_loads_as_the_reference_reads_it") else {
        return;
    };
    let (mut min_w, mut max_w, mut blends) = (u32::MAX, 0u32, 0usize);
    for (name, bytes) in &files {
        let text = std::str::from_utf8(bytes).unwrap();
        let r = RefSkn::parse(text);
        let opts = LoadOptions {
            name: Some(name.clone()),
            ..LoadOptions::default()
        };
        let model = Model::load(bytes, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        Model::load(bytes, &strict(Format::SimsSkn)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(model.format(), Format::SimsSkn, "{name}");
        assert_eq!((model.up_axis(), model.handedness()), (1, -1), "{name}");
        assert!(
            model.warnings().is_empty(),
            "{name}: {:?}",
            model.warnings()
        );
        assert!(
            model.bones().is_empty() && model.frames().is_empty(),
            "{name}"
        );
        let names: Vec<Name> = r.bones.iter().map(|b| Name::from(b.as_str())).collect();
        assert_eq!(model.unbound(), Some(&BoneSlots::ByName(names)), "{name}");

        let [mesh] = model.meshes() else {
            panic!("{name}: not one mesh")
        };
        assert_eq!(mesh.name().to_string(), r.name, "{name}");
        let shader = if r.texture == "x" { "" } else { &r.texture };
        assert_eq!(mesh.shader().to_string(), shader, "{name}");
        assert_eq!(mesh.triangle_count(), r.faces.len(), "{name}");
        assert_eq!(mesh.indices(), r.faces.concat(), "{name}");
        assert_eq!(mesh.vertex_count(), r.uvs.len(), "{name}");
        assert_eq!(mesh.texcoords(), Some(&r.uvs[..]), "{name}");
        let blended = (0..mesh.vertex_count())
            .filter(|&v| mesh.influences(v).len() == 2)
            .count();
        assert_eq!(blended, r.blends.len(), "{name}: blended vertices");
        for (v, expected) in r.influences().iter().enumerate() {
            assert_eq!(mesh.influences(v), &expected[..], "{name}: vertex {v}");
        }

        // What FORMATS §4 says of the corpus.
        let real = r.uvs.len();
        let mut targets: Vec<usize> = r.blends.iter().map(|b| b.0).collect();
        assert!(targets.iter().all(|&t| t < real), "{name}: blend target");
        targets.sort();
        targets.dedup();
        assert_eq!(
            targets.len(),
            r.blends.len(),
            "{name}: a target with two blends"
        );
        for &(_, w) in &r.blends {
            min_w = min_w.min(w);
            max_w = max_w.max(w);
        }
        blends += r.blends.len();
        for (j, b) in r.bindings.iter().enumerate() {
            assert_eq!(b[0], j as i64, "{name}: binding {j} names its own bone");
            if b[4] == 0 {
                assert_eq!(b[3], -1, "{name}: binding {j}: empty blend range start");
            }
        }
        println!(
            "{name}: {} bones, {} faces, {} real vertices, {} blends",
            r.bones.len(),
            r.faces.len(),
            real,
            r.blends.len()
        );
    }
    println!(
        "{} files, {blends} blends, raw weights {min_w}..{max_w}",
        files.len()
    );
    // FORMATS §4.4 gives 3577..28086 (0.11..0.86); 3577 is the lowest weight of
    // b009faskn_01, but NUChd_01 has two blends of weight 3385 (its lines 977 and 978).
    assert_eq!((min_w, max_w), (3385, 28086), "the corpus's weight range");
    assert!(
        (0.103..0.104).contains(&(min_w as f32 / 32768.0))
            && (0.857..0.858).contains(&(max_w as f32 / 32768.0))
    );
    assert_eq!(blends, 473, "FORMATS §4.5's blend count");
}

/// The lines of a file, CRLF or LF.
fn lines_of(bytes: &[u8]) -> Vec<String> {
    let text = std::str::from_utf8(bytes).unwrap();
    text.lines().map(str::to_owned).collect()
}

#[test]
fn corpus_skns_round_trip_through_both_writers() {
    let Some(files) = corpus_skns("corpus_skns_round_trip_through_both_writers") else {
        return;
    };
    for (name, bytes) in &files {
        let model = load(bytes, Format::SimsSkn).unwrap();
        let written = sims_mesh::write_skn(&model).unwrap();
        assert_eq!(model.save(Format::SimsSkn).unwrap(), written, "{name}");
        let again = load(&written, Format::SimsSkn).unwrap_or_else(|e| panic!("{name}: {e}"));
        same_model(&model, &again, &format!("{name} via SKN"));

        let bmf = sims_mesh::write_bmf(&model).unwrap();
        let from_bmf = load(&bmf, Format::SimsBmf).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(from_bmf.format(), Format::SimsBmf);
        same_model(&model, &from_bmf, &format!("{name} via BMF"));
        assert_eq!(
            sims_mesh::write_skn(&from_bmf).unwrap(),
            written,
            "{name}: SKN -> BMF -> SKN"
        );

        // The text itself: every line is CRLF; what the model does not keep is the order of the
        // blends (the writer groups them by bone in target order, which the retail exporter did
        // not) and the blend vertices' normals (written as zero). Everything else is byte-exact.
        assert!(!written.windows(2).any(|w| w[1] == b'\n' && w[0] != b'\r'));
        let r = RefSkn::parse(std::str::from_utf8(bytes).unwrap());
        let (old, new) = (lines_of(bytes), lines_of(&written));
        assert_eq!(old.len(), new.len(), "{name}: line count");
        let blends_line = 2 + 1 + r.bones.len() + 1 + r.faces.len() + 1 + r.bindings.len() + 1;
        let blends_line = blends_line + r.uvs.len();
        let vectors_line = blends_line + 1 + r.blends.len();
        let real_end = vectors_line + 1 + r.uvs.len();
        assert_eq!(
            old[..blends_line],
            new[..blends_line],
            "{name}: up to the blends"
        );
        assert_eq!(
            old[vectors_line..real_end],
            new[vectors_line..real_end],
            "{name}: real vertices"
        );
        // Blend k: target, weight, and its vertex's position, keyed by target.
        let blend_set = |lines: &[String]| {
            let mut set: Vec<(String, String)> = (0..r.blends.len())
                .map(|k| {
                    let vector = &lines[real_end + k];
                    let position: Vec<&str> = vector.split(' ').take(3).collect();
                    (lines[blends_line + 1 + k].clone(), position.join(" "))
                })
                .collect();
            set.sort();
            set
        };
        assert_eq!(blend_set(&old), blend_set(&new), "{name}: blends");
        for line in &new[real_end..] {
            assert!(line.ends_with(" 0 0 0"), "{name}: blend normal {line}");
        }
        if r.blends.is_empty() && bytes.contains(&b'\r') {
            assert_eq!(&written, bytes, "{name}: byte-exact");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Small files written by hand
// ---------------------------------------------------------------------------------------------

/// Line numbers of the small SKN below.
const L_BONE_COUNT: u32 = 3;
const L_FACE_COUNT: u32 = 7;
const L_FACES: u32 = 8;
const L_BINDING_COUNT: u32 = 11;
const L_BINDINGS: u32 = 12;
const L_UVS: u32 = 16;
const L_BLEND_COUNT: u32 = 22;
const L_BLENDS: u32 = 23;
const L_VECTOR_COUNT: u32 = 25;
const L_VECTORS: u32 = 26;
const SMALL_LINES: usize = 33;

/// Three bones, six real vertices, two blends. Binding 1 is bone 2's and binding 2 bone 1's,
/// so a binding's bone index, not its place, says which bone it is. Blend 0 (bone 1's) pulls
/// vertex 1 (bone 0's) half way; blend 1 (bone 2's) pulls vertex 4 (bone 1's) a quarter.
fn small_lines() -> Vec<&'static str> {
    vec![
        "test-mesh",
        "x",
        "3",
        "Pelvis",
        "spine",
        "HEAD",
        "3",
        "0 1 2",
        "2 3 4",
        "3 4 5",
        "3",
        "0 0 3 -1 0",
        "2 5 1 1 1",
        "1 3 2 0 1",
        "6",
        "0 0",
        "1 0",
        "0 1",
        "0.5 0.5",
        "0.25 0.75",
        "1 1",
        "2",
        "1 16384",
        "4 8192",
        "8",
        "0 0 0 0 0 1",
        "1 0 0 0 1 0",
        "0 1 0 1 0 0",
        "0.5 0.25 -1 0 0 -1",
        "2 -1 0.125 0 1 0",
        "-0.75 0 3 1 0 0",
        "1.5 0.5 -0.25 0 0 1",
        "0.25 1 2 0 1 0",
    ]
}

fn small_skn() -> String {
    let lines = small_lines();
    assert_eq!(lines.len(), SMALL_LINES);
    lines.iter().map(|l| format!("{l}\r\n")).collect()
}

/// `small_skn` with line `n` (1-based) replaced.
fn with_line(n: u32, text: &str) -> String {
    let mut lines = small_lines();
    lines[n as usize - 1] = text;
    lines.iter().map(|l| format!("{l}\r\n")).collect()
}

fn inf(origin: [f32; 3], weight: f32, normal: [f32; 3], bone: u32) -> Influence {
    Influence {
        origin,
        weight,
        normal,
        bone,
    }
}

/// The influences of the small mesh, worked out by hand.
fn small_influences() -> Vec<Vec<Influence>> {
    vec![
        vec![inf([0.0, 0.0, 0.0], 1.0, [0.0, 0.0, 1.0], 0)],
        vec![
            inf([0.5, 0.0, 0.0], 0.5, [0.0, 1.0, 0.0], 0),
            inf([0.75, 0.25, -0.125], 0.5, [0.0; 3], 1),
        ],
        vec![inf([0.0, 1.0, 0.0], 1.0, [1.0, 0.0, 0.0], 0)],
        vec![inf([0.5, 0.25, -1.0], 1.0, [0.0, 0.0, -1.0], 1)],
        vec![
            inf([1.5, -0.75, 0.09375], 0.75, [0.0, 1.0, 0.0], 1),
            inf([0.0625, 0.25, 0.5], 0.25, [0.0; 3], 2),
        ],
        vec![inf([-0.75, 0.0, 3.0], 1.0, [1.0, 0.0, 0.0], 2)],
    ]
}

fn check_small(model: &Model, format: Format) {
    assert_eq!(model.format(), format);
    assert_eq!((model.up_axis(), model.handedness()), (1, -1));
    assert_eq!(
        model.unbound(),
        Some(&BoneSlots::ByName(vec![
            Name::from("Pelvis"),
            Name::from("spine"),
            Name::from("HEAD")
        ]))
    );
    let mesh = &model.meshes()[0];
    assert_eq!(model.meshes().len(), 1);
    assert_eq!(mesh.name().as_bytes(), b"test-mesh");
    assert!(mesh.shader().is_empty());
    assert_eq!(mesh.indices(), [0, 1, 2, 2, 3, 4, 3, 4, 5]);
    assert_eq!(
        mesh.texcoords().unwrap(),
        [
            [0.0, 0.0],
            [1.0, 0.0],
            [0.0, 1.0],
            [0.5, 0.5],
            [0.25, 0.75],
            [1.0, 1.0]
        ]
    );
    assert_eq!(mesh.vertex_count(), 6);
    for (v, expected) in small_influences().iter().enumerate() {
        assert_eq!(mesh.influences(v), &expected[..], "vertex {v}");
    }
    assert!(model.warnings().is_empty(), "{:?}", model.warnings());
}

#[test]
fn a_hand_written_skn_loads_with_the_expected_influences() {
    check_small(&skn(&small_skn()).unwrap(), Format::SimsSkn);
    // LF, tabs and runs of spaces, a name line that is just `name`, blank lines at the end.
    let loose: String = small_lines()
        .iter()
        .enumerate()
        .map(|(i, l)| match i {
            0 => "name\n".to_owned(),
            _ => format!("  {}\t\n", l.replace(' ', " \t  ")),
        })
        .collect::<String>()
        + "\n  \n\t\n";
    let model = skn(&loose).unwrap();
    assert_eq!(model.meshes()[0].name().as_bytes(), b"name");
    let mut expected = skn(&small_skn()).unwrap().to_parts();
    expected.meshes[0].name = Name::from("name");
    same_model(&Model::from_parts(expected).unwrap(), &model, "loose");
    // Found by extension.
    let opts = LoadOptions {
        name: Some("dir/Mesh.SKN".into()),
        ..LoadOptions::default()
    };
    assert_eq!(
        Model::load(small_skn().as_bytes(), &opts).unwrap().format(),
        Format::SimsSkn
    );
    // A texture other than `x` is the shader.
    let textured = skn(&with_line(2, "headtex_01")).unwrap();
    assert_eq!(textured.meshes()[0].shader().as_bytes(), b"headtex_01");
}

/// The small mesh as BMF, byte by byte, with the offset of each section.
struct SmallBmf {
    bytes: Vec<u8>,
    bone_count: usize,
    face_count: usize,
    faces: usize,
    binding_count: usize,
    bindings: usize,
    uvs: usize,
    blends: usize,
    vector_count: usize,
    vectors: usize,
}

fn small_bmf() -> SmallBmf {
    let mut b = Vec::new();
    let pascal = |b: &mut Vec<u8>, s: &str| {
        b.push(s.len() as u8);
        b.extend_from_slice(s.as_bytes());
    };
    let u32s = |b: &mut Vec<u8>, v: &[u32]| v.iter().for_each(|x| b.extend(x.to_le_bytes()));
    let f32s = |b: &mut Vec<u8>, v: &[f32]| v.iter().for_each(|x| b.extend(x.to_le_bytes()));
    pascal(&mut b, "test-mesh");
    pascal(&mut b, "x");
    let bone_count = b.len();
    u32s(&mut b, &[3]);
    for s in ["Pelvis", "spine", "HEAD"] {
        pascal(&mut b, s);
    }
    let face_count = b.len();
    u32s(&mut b, &[3]);
    let faces = b.len();
    u32s(&mut b, &[0, 1, 2, 2, 3, 4, 3, 4, 5]);
    let binding_count = b.len();
    u32s(&mut b, &[3]);
    let bindings = b.len();
    u32s(
        &mut b,
        &[0, 0, 3, u32::MAX, 0, 2, 5, 1, 1, 1, 1, 3, 2, 0, 1],
    );
    u32s(&mut b, &[6]);
    let uvs = b.len();
    f32s(
        &mut b,
        &[0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.5, 0.5, 0.25, 0.75, 1.0, 1.0],
    );
    u32s(&mut b, &[2]);
    let blends = b.len();
    // Weight first, then the target.
    u32s(&mut b, &[16384, 1, 8192, 4]);
    let vector_count = b.len();
    u32s(&mut b, &[8]);
    let vectors = b.len();
    #[rustfmt::skip]
    f32s(&mut b, &[
        0.0, 0.0, 0.0, 0.0, 0.0, 1.0,
        1.0, 0.0, 0.0, 0.0, 1.0, 0.0,
        0.0, 1.0, 0.0, 1.0, 0.0, 0.0,
        0.5, 0.25, -1.0, 0.0, 0.0, -1.0,
        2.0, -1.0, 0.125, 0.0, 1.0, 0.0,
        -0.75, 0.0, 3.0, 1.0, 0.0, 0.0,
        1.5, 0.5, -0.25, 0.0, 0.0, 1.0,
        0.25, 1.0, 2.0, 0.0, 1.0, 0.0,
    ]);
    assert_eq!(b.len(), vectors + 8 * 24);
    SmallBmf {
        bytes: b,
        bone_count,
        face_count,
        faces,
        binding_count,
        bindings,
        uvs,
        blends,
        vector_count,
        vectors,
    }
}

fn set_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn a_hand_written_bmf_loads_with_the_expected_influences() {
    let bmf = small_bmf();
    check_small(&load(&bmf.bytes, Format::SimsBmf).unwrap(), Format::SimsBmf);
    let opts = LoadOptions {
        name: Some("Mesh.bmf".into()),
        ..LoadOptions::default()
    };
    assert_eq!(
        Model::load(&bmf.bytes, &opts).unwrap().format(),
        Format::SimsBmf
    );
    // A name byte above 127 (Windows-1252) is kept as it is.
    let mut b = bmf.bytes.clone();
    b[1] = 0xe9;
    let model = load(&b, Format::SimsBmf).unwrap();
    assert_eq!(model.meshes()[0].name().as_bytes()[0], 0xe9);
}

#[test]
fn the_small_mesh_round_trips_and_writes_what_was_written_by_hand() {
    let model = skn(&small_skn()).unwrap();
    // The writer puts bindings in bone order and writes the blend vertices' normals, which the
    // model does not keep, as zero.
    let mut lines = small_lines();
    lines.swap(L_BINDINGS as usize, L_BINDINGS as usize + 1);
    lines[SMALL_LINES - 2] = "1.5 0.5 -0.25 0 0 0";
    lines[SMALL_LINES - 1] = "0.25 1 2 0 0 0";
    let expected: String = lines.iter().map(|l| format!("{l}\r\n")).collect();
    assert_eq!(
        String::from_utf8(sims_mesh::write_skn(&model).unwrap()).unwrap(),
        expected
    );
    let bmf = small_bmf();
    let mut expected = bmf.bytes.clone();
    let (one, two) = (bmf.bindings + 20, bmf.bindings + 40);
    let b1: Vec<u8> = expected[one..one + 20].to_vec();
    let b2: Vec<u8> = expected[two..two + 20].to_vec();
    expected[one..one + 20].copy_from_slice(&b2);
    expected[two..two + 20].copy_from_slice(&b1);
    for k in 6..8 {
        let at = bmf.vectors + k * 24 + 12;
        expected[at..at + 12].fill(0);
    }
    assert_eq!(sims_mesh::write_bmf(&model).unwrap(), expected);
    let from_bmf = load(&sims_mesh::write_bmf(&model).unwrap(), Format::SimsBmf).unwrap();
    check_small(&from_bmf, Format::SimsBmf);
}

// ---------------------------------------------------------------------------------------------
// Binding and skinning
// ---------------------------------------------------------------------------------------------

/// A rotation by `angle` about axis `axis` (0, 1, 2) with translation `t`, as rows of a 3x4.
fn rot(axis: usize, angle: f32, t: [f32; 3]) -> Mat3x4 {
    let (s, c) = angle.sin_cos();
    let r = match axis {
        0 => [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
        1 => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
        _ => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
    };
    Mat3x4 {
        m: [
            r[0][0], r[0][1], r[0][2], t[0], r[1][0], r[1][1], r[1][2], t[1], r[2][0], r[2][1],
            r[2][2], t[2],
        ],
    }
}

/// Matrices in f64: `a * b` and `a * p`.
fn mul64(a: &[f64; 12], b: &[f64; 12]) -> [f64; 12] {
    let mut o = [0.0; 12];
    for r in 0..3 {
        for c in 0..4 {
            let mut v = if c == 3 { a[r * 4 + 3] } else { 0.0 };
            for k in 0..3 {
                v += a[r * 4 + k] * b[k * 4 + c];
            }
            o[r * 4 + c] = v;
        }
    }
    o
}

fn apply64(m: &[f64; 12], p: [f32; 3], w: f64) -> [f64; 3] {
    let p = p.map(|x| x as f64);
    [0, 1, 2]
        .map(|r| m[r * 4] * p[0] + m[r * 4 + 1] * p[1] + m[r * 4 + 2] * p[2] + w * m[r * 4 + 3])
}

/// A skeleton built in code whose bone names differ from the mesh's in case and order, with an
/// extra bone the mesh does not use.
fn skeleton() -> (Model, Vec<[f64; 12]>) {
    let mut parts = ModelParts::new(Format::SimsCmx);
    for (name, parent) in [("PELVIS", -1), ("SPINE", 0), ("L_ARM", 1), ("head", 1)] {
        parts.bones.push(Bone {
            name: Name::from(name),
            parent,
            flags: 0,
        });
    }
    parts.frames.push(Frame::named("rest"));
    parts.poses = vec![
        rot(1, 0.3, [0.1, 3.0, -0.2]),
        rot(2, -0.7, [0.0, 0.5, 0.05]),
        rot(0, 1.1, [0.4, 0.2, 0.0]),
        rot(0, 0.4, [0.0, 0.9, 0.1]),
    ]
    .into();
    let local: Vec<[f64; 12]> = parts
        .poses
        .to_matrices()
        .iter()
        .map(|p| p.m.map(|x| x as f64))
        .collect();
    let mut abs = local.clone();
    for (i, b) in parts.bones.iter().enumerate() {
        if b.parent >= 0 {
            abs[i] = mul64(&abs[b.parent as usize], &local[i]);
        }
    }
    (Model::from_parts(parts).unwrap(), abs)
}

#[test]
fn a_bound_skn_skins_its_blends_as_a_lerp_of_two_bones() {
    let (skeleton, abs) = skeleton();
    let mesh = skn(&small_skn()).unwrap();
    let bound = Model::bind(&mesh, &skeleton).unwrap();
    assert!(bound.unbound().is_none() && bound.shares_skeleton(&skeleton));

    let mut bones = vec![Mat3x4::IDENTITY; 4];
    bound
        .pose_frames(
            &[FrameBlend {
                frame: 0,
                weight: 1.0,
            }],
            None,
            &mut bones,
        )
        .unwrap();
    let mut positions = vec![0.0f32; 18];
    let mut normals = vec![0.0f32; 18];
    let mut target = Strided::new(&mut positions, 3)
        .unwrap()
        .with_normals(&mut normals, 3)
        .unwrap();
    bound.skin_mesh(0, &bones, 0, 6, 0, &mut target).unwrap();

    // Mesh slot -> skeleton bone: Pelvis -> PELVIS, spine -> SPINE, HEAD -> head.
    let a = |slot: usize| &abs[[0, 1, 3][slot]];
    let r = RefSkn::parse(&small_skn());
    let mut blend_of = [None; 6];
    for (k, &(t, w)) in r.blends.iter().enumerate() {
        blend_of[t] = Some((k, w as f64 / 32768.0));
    }
    // Real vertex v's bone slot and blend k's, from the bindings.
    let real_slot = [0, 0, 0, 1, 1, 2];
    let blend_slot = [1, 2];
    for v in 0..6 {
        let p = [0, 1, 2].map(|i| r.vectors[v][i]);
        let n = [3, 4, 5].map(|i| r.vectors[v][i]);
        let m = a(real_slot[v]);
        let expected = match blend_of[v] {
            None => apply64(m, p, 1.0),
            Some((k, w)) => {
                let q = [0, 1, 2].map(|i| r.vectors[6 + k][i]);
                let pa = apply64(m, p, 1.0);
                let pb = apply64(a(blend_slot[k]), q, 1.0);
                [0, 1, 2].map(|i| (1.0 - w) * pa[i] + w * pb[i])
            }
        };
        let normal = apply64(m, n, 0.0);
        for i in 0..3 {
            let got = positions[v * 3 + i] as f64;
            assert!(
                (got - expected[i]).abs() < 1e-5,
                "vertex {v}: {got} vs {expected:?}"
            );
            let got = normals[v * 3 + i] as f64;
            assert!(
                (got - normal[i]).abs() < 1e-5,
                "vertex {v} normal: {got} vs {normal:?}"
            );
        }
    }

    // A bound model saves with the skeleton's names of the bones it uses, and binds again.
    let saved = sims_mesh::write_skn(&bound).unwrap();
    let again = skn(std::str::from_utf8(&saved).unwrap()).unwrap();
    assert_eq!(
        again.unbound(),
        Some(&BoneSlots::ByName(vec![
            Name::from("PELVIS"),
            Name::from("SPINE"),
            Name::from("head")
        ]))
    );
    let rebound = Model::bind(&again, &skeleton).unwrap();
    let mut positions2 = vec![0.0f32; 18];
    let mut target = Strided::new(&mut positions2, 3).unwrap();
    rebound.skin_mesh(0, &bones, 0, 6, 0, &mut target).unwrap();
    assert_eq!(positions, positions2);

    // A bone the skeleton lacks.
    let missing = skn(&with_line(5, "TAIL")).unwrap();
    let e = Model::bind(&missing, &skeleton).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert!(e.to_string().contains("TAIL"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Writer limits
// ---------------------------------------------------------------------------------------------

#[test]
fn the_writers_refuse_what_a_sims_mesh_cannot_hold() {
    let model = skn(&small_skn()).unwrap();
    let base = model.to_parts();
    let unsupported = |parts: ModelParts, what: &str| {
        let m = Model::from_parts(parts).unwrap();
        for r in [sims_mesh::write_skn(&m), sims_mesh::write_bmf(&m)] {
            let e = r.unwrap_err();
            assert_eq!(e.code(), ErrorCode::Unsupported, "{what}: {e}");
        }
    };

    // Bone 0's vertices are 0..3; giving vertex 4 (influences 5 and 6) to bone 0 splits its run.
    let mut p = base.clone();
    p.meshes[0].influences[5].bone = 0;
    unsupported(p, "non-contiguous bone");
    let mut p = base.clone();
    p.meshes.push(p.meshes[0].clone());
    unsupported(p, "two meshes");
    let mut p = base.clone();
    p.unbound = Some(BoneSlots::ByIndex(3));
    unsupported(p, "bones by index");
    let mut p = base.clone();
    p.meshes[0].influences[0].weight = 0.5;
    unsupported(p, "weight of a single influence");
    let mut p = base.clone();
    p.meshes[0].influences[2].normal = [0.0, 1.0, 0.0];
    unsupported(p, "normal on a blend");
    let mut p = base.clone();
    p.meshes[0].influences[2].weight = 0.6;
    unsupported(p, "weights not summing to 1");

    let e = sims_mesh::write_skn(
        &Model::from_parts({
            let mut p = base.clone();
            p.meshes[0].name = Name::from("two\nlines");
            p
        })
        .unwrap(),
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported, "{e}");
    let e = sims_mesh::write_bmf(
        &Model::from_parts({
            let mut p = base.clone();
            p.meshes[0].shader = Name::from("t".repeat(300).as_str());
            p
        })
        .unwrap(),
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
}

#[test]
fn weights_from_other_sources_are_rounded_to_the_format_s_steps() {
    let mut p = skn(&small_skn()).unwrap().to_parts();
    // Vertex 1: weights 0.7 and 0.3 with points chosen freely.
    p.meshes[0].influences[1].weight = 0.7;
    p.meshes[0].influences[2].weight = 0.3;
    let model = Model::from_parts(p).unwrap();
    let again = skn(std::str::from_utf8(&sims_mesh::write_skn(&model).unwrap()).unwrap()).unwrap();
    let raw = (0.3f32 * 32768.0).round();
    let infl = again.meshes()[0].influences(1);
    assert_eq!(infl[1].weight, raw / 32768.0);
    assert_eq!(infl[0].weight, (32768.0 - raw) / 32768.0);
    assert!((infl[0].origin[0] - 0.5).abs() < 1e-6, "{infl:?}");
}

// ---------------------------------------------------------------------------------------------
// Hostile input
// ---------------------------------------------------------------------------------------------

#[test]
fn every_skn_truncation_by_lines_fails_at_the_missing_line() {
    let text = small_skn();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for n in 0..SMALL_LINES {
        let prefix: String = lines[..n].concat();
        let e = fails(skn(&prefix), ErrorCode::Truncated, &format!("{n} lines"));
        let line = e.line().unwrap_or_else(|| panic!("{n} lines: {e}"));
        assert!(line as usize <= n + 1, "{n} lines: {e}");
    }
}

#[test]
fn every_skn_truncation_by_bytes_fails_cleanly_or_only_shortens_the_last_number() {
    let text = small_skn();
    let last_line = text.trim_end().rfind('\n').unwrap() + 1;
    for len in 0..text.len() {
        let prefix = &text[..len];
        match skn(prefix) {
            Ok(model) => {
                assert!(len > last_line, "{len} bytes loaded");
                assert_eq!(model.meshes()[0].vertex_count(), 6);
            }
            Err(e) => {
                assert!(
                    matches!(e.code(), ErrorCode::Truncated | ErrorCode::Malformed),
                    "{len} bytes: {e}"
                );
                // The prefix's lines, and the one after them that it lacks.
                let lines = prefix.matches('\n').count() as u32 + 2;
                assert!(e.line().is_some_and(|l| l <= lines), "{len} bytes: {e}");
            }
        }
    }
}

#[test]
fn every_bmf_truncation_fails_as_truncated_within_the_data() {
    let bmf = small_bmf().bytes;
    for len in 0..bmf.len() {
        let e = fails(
            load(&bmf[..len], Format::SimsBmf),
            ErrorCode::Truncated,
            "cut",
        );
        assert!(
            e.offset().is_some_and(|o| o <= len as u64),
            "{len} bytes: {e}"
        );
    }
}

#[test]
fn non_numbers_are_malformed_on_their_line() {
    // The bone count is the first line that tells an SKN; until it reads, the file may be any
    // text, and what is there is not shown.
    let e = fails_on_line(
        &with_line(L_BONE_COUNT, "three"),
        ErrorCode::Malformed,
        L_BONE_COUNT,
        "three",
    );
    assert!(
        e.to_string()
            .ends_with("the bone names count: expected a whole number; this is no Sims SKN text")
    );
    for (line, text, found) in [
        (L_FACE_COUNT, "-3", "-3"),
        (L_FACES, "0 1 a", "a"),
        (L_FACES + 1, "0 1", "0 1"),
        (L_FACES + 2, "0 1 2 3", "0 1 2 3"),
        (L_BINDINGS, "0 0 3 -1 0.0", "0.0"),
        (L_UVS, "0.5x 0", "0.5x"),
        (L_UVS + 1, "1,5 0", "1,5"),
        (L_BLENDS, "1 0.5", "0.5"),
        (L_VECTORS + 3, "1 2 3 4 5 6e", "6e"),
        (L_VECTORS + 4, "1 2 3 4 5 \u{0}", "\\0"),
        (L_VECTOR_COUNT, "", ""),
    ] {
        let e = fails_on_line(&with_line(line, text), ErrorCode::Malformed, line, text);
        let msg = e.to_string();
        assert!(msg.contains("expected"), "{text}: {msg}");
        assert!(msg.contains(&format!("`{found}")), "{text}: {msg}");
    }
    // A count too large for 32 bits is not a count.
    fails_on_line(
        &with_line(L_FACE_COUNT, "99999999999"),
        ErrorCode::Malformed,
        L_FACE_COUNT,
        "huge",
    );
}

#[test]
fn huge_counts_fail_fast_without_allocating() {
    for line in [
        L_BONE_COUNT,
        L_FACE_COUNT,
        L_BINDING_COUNT,
        15,
        L_BLEND_COUNT,
    ] {
        let text = with_line(line, "4000000000");
        let (r, peak) = peak_of(|| Model::load(text.as_bytes(), &options(Format::SimsSkn)));
        let e = fails(r, ErrorCode::Truncated, "huge count");
        assert_eq!(e.line(), Some(line), "{e}");
        assert!(e.to_string().contains("4000000000"), "{e}");
        assert!(peak < 16 << 10, "line {line}: {peak} bytes of heap");
    }
    // 4 000 000 000 faces in a 100-byte file.
    let mut tiny = "a\nx\n0\n4000000000\n0 1 2\n".to_owned();
    tiny.push_str(&"0 0 0\n".repeat(12));
    assert!(tiny.len() <= 100);
    let (r, peak) = peak_of(|| Model::load(tiny.as_bytes(), &options(Format::SimsSkn)));
    assert_eq!(fails(r, ErrorCode::Truncated, "tiny").line(), Some(4));
    assert!(peak < 16 << 10, "{peak} bytes of heap");

    let bmf = small_bmf();
    for at in [
        bmf.bone_count,
        bmf.face_count,
        bmf.binding_count,
        bmf.uvs - 4,
        bmf.blends - 4,
    ] {
        for count in [4_000_000_000u32, u32::MAX] {
            let mut b = bmf.bytes.clone();
            set_u32(&mut b, at, count);
            let (r, peak) = peak_of(|| Model::load(&b, &options(Format::SimsBmf)));
            let e = fails(r, ErrorCode::Truncated, "huge BMF count");
            assert_eq!(e.offset(), Some(at as u64 + 4), "{e}");
            assert!(peak < 16 << 10, "byte {at}: {peak} bytes of heap");
        }
    }
    // The vector count must be the uv count plus the blend count.
    let mut b = bmf.bytes.clone();
    set_u32(&mut b, bmf.vector_count, u32::MAX);
    fails_at(&b, ErrorCode::Malformed, bmf.vector_count, "vector count");
    fails_on_line(
        &with_line(L_VECTOR_COUNT, "9"),
        ErrorCode::Malformed,
        L_VECTOR_COUNT,
        "vector count",
    );
    // A limit set by the caller.
    let opts = LoadOptions {
        format: Format::SimsSkn,
        max_bytes: 256,
        ..LoadOptions::default()
    };
    let e = Model::load(small_skn().as_bytes(), &opts).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    assert!(e.line().is_some(), "{e}");
}

#[test]
fn stray_bytes_are_reported_where_they_are() {
    let text = small_skn() + "junk\r\n";
    fails_on_line(&text, ErrorCode::Malformed, SMALL_LINES as u32 + 1, "junk");
    let text = small_skn() + "\r\n\r\n0\r\n";
    fails_on_line(&text, ErrorCode::Malformed, SMALL_LINES as u32 + 3, "late");
    // A blank line inside a section is a record with no fields.
    let text = small_skn().replacen("0 1 2\r\n", "\r\n0 1 2\r\n", 1);
    fails_on_line(&text, ErrorCode::Malformed, L_FACES, "blank");

    let bmf = small_bmf();
    let mut b = bmf.bytes.clone();
    b.extend_from_slice(b"\0\0");
    let e = fails_at(&b, ErrorCode::Malformed, bmf.bytes.len(), "trailing");
    assert!(e.to_string().contains("2 bytes"), "{e}");
    // A byte slipped in shifts everything after it.
    let mut b = bmf.bytes.clone();
    b.insert(bmf.faces, 7);
    assert!(load(&b, Format::SimsBmf).is_err());
    // A NUL inside a name.
    let mut b = bmf.bytes.clone();
    b[3] = 0;
    fails_at(&b, ErrorCode::Malformed, 0, "NUL in a name");
    let e = fails_on_line(&with_line(4, "Pel\0vis"), ErrorCode::Malformed, 4, "NUL");
    assert!(e.to_string().contains("NUL"), "{e}");
    fails_on_line(
        &with_line(5, ""),
        ErrorCode::Malformed,
        5,
        "empty bone name",
    );
}

#[test]
fn nan_and_infinity_are_malformed_at_their_place() {
    for (line, text) in [
        (L_UVS + 2, "nan 0"),
        (L_VECTORS, "0 0 inf 0 0 1"),
        (L_VECTORS + 7, "0.25 1 2 0 NaN 0"),
        (L_VECTORS + 1, "1e39 0 0 0 1 0"),
    ] {
        let e = fails_on_line(&with_line(line, text), ErrorCode::Malformed, line, text);
        assert!(e.to_string().contains("not a finite number"), "{e}");
    }
    let bmf = small_bmf();
    for at in [bmf.uvs + 4, bmf.vectors + 8, bmf.vectors + 7 * 24 + 20] {
        let mut b = bmf.bytes.clone();
        set_u32(&mut b, at, f32::NAN.to_bits());
        fails_at(&b, ErrorCode::Malformed, at, "NaN");
    }
}

#[test]
fn broken_rules_are_malformed_at_their_place() {
    // The line changed, its text, the line the problem is reported on (an overlap at the later
    // binding, a gap at the binding count), and what the message says.
    for (line, text, at, says) in [
        (L_BINDINGS, "3 0 3 -1 0", L_BINDINGS, "bone 3 out of range"),
        (
            L_BINDINGS + 1,
            "2 4 2 1 1",
            L_BINDINGS + 2,
            "real vertices 3..5 overlap binding 1 at real vertex 4",
        ),
        (L_BINDINGS + 1, "2 5 2 1 1", L_BINDINGS + 1, "do not fit"),
        (L_BINDINGS + 1, "2 -1 1 1 1", L_BINDINGS + 1, "do not fit"),
        (
            L_BINDINGS + 2,
            "1 3 2 0 2",
            L_BINDINGS + 2,
            "overlap binding 1 at blend 1",
        ),
        (L_BINDINGS + 2, "1 3 2 0 -1", L_BINDINGS + 2, "do not fit"),
        (
            L_BINDINGS,
            "0 0 2 -1 0",
            L_BINDING_COUNT,
            "1 of the 6 real vertices belong to no binding (the first is real vertex 2)",
        ),
        (L_FACES + 1, "2 3 6", L_FACES + 1, "vertex 6 out of range"),
        (L_FACES + 1, "2 -1 4", L_FACES + 1, "vertex -1 out of range"),
        (
            L_BLENDS,
            "6 16384",
            L_BLENDS,
            "target vertex 6 out of range",
        ),
        (L_BLENDS, "1 32769", L_BLENDS, "weight 32769"),
        (L_BLENDS + 1, "4 -1", L_BLENDS + 1, "weight -1"),
    ] {
        let e = fails_on_line(&with_line(line, text), ErrorCode::Malformed, at, text);
        assert!(e.to_string().contains(says), "{text}: {e}");
    }
    // Weights 0 and 1 are the ends of the range.
    for w in ["0", "32768"] {
        let line = format!("1 {w}");
        let model = skn(&with_line(L_BLENDS, &line)).unwrap();
        let infl = model.meshes()[0].influences(1);
        assert_eq!(infl.len(), 2, "{w}");
        assert_eq!(infl[1].weight, if w == "0" { 0.0 } else { 1.0 });
        same_model(
            &model,
            &skn(std::str::from_utf8(&sims_mesh::write_skn(&model).unwrap()).unwrap()).unwrap(),
            w,
        );
    }

    let bmf = small_bmf();
    let mut b = bmf.bytes.clone();
    set_u32(&mut b, bmf.bindings + 20, 7);
    fails_at(&b, ErrorCode::Malformed, bmf.bindings + 20, "bone index");
    let mut b = bmf.bytes.clone();
    // Binding 1 (read first) keeps blend 0; binding 2 also claims it.
    set_u32(&mut b, bmf.bindings + 20 + 12, 0);
    fails_at(
        &b,
        ErrorCode::Malformed,
        bmf.bindings + 40 + 12,
        "blend overlap",
    );
    let mut b = bmf.bytes.clone();
    set_u32(&mut b, bmf.faces + 16, 6);
    fails_at(&b, ErrorCode::Malformed, bmf.faces + 16, "face corner");
    let mut b = bmf.bytes.clone();
    set_u32(&mut b, bmf.blends + 8, 40000);
    fails_at(&b, ErrorCode::Malformed, bmf.blends + 8, "weight");
    let mut b = bmf.bytes.clone();
    set_u32(&mut b, bmf.blends + 12, 9);
    fails_at(&b, ErrorCode::Malformed, bmf.blends + 12, "target");
    let mut b = bmf.bytes.clone();
    set_u32(&mut b, bmf.bindings + 8, 2);
    fails_at(&b, ErrorCode::Malformed, bmf.binding_count, "gap");
}

#[test]
fn a_vertex_pulled_by_two_blends_takes_the_last_or_fails_in_strict_mode() {
    // Blend 1 now pulls vertex 1 too.
    let text = with_line(L_BLENDS + 1, "1 8192");
    let model = skn(&text).unwrap();
    assert_eq!(model.warnings().len(), 1);
    let warning = model.warnings()[0].to_string();
    assert!(
        warning.contains("1 blends") && warning.contains("vertex 1"),
        "{warning}"
    );
    let mesh = &model.meshes()[0];
    assert_eq!(
        mesh.influences(1),
        [
            inf([0.75, 0.0, 0.0], 0.75, [0.0, 1.0, 0.0], 0),
            inf([0.0625, 0.25, 0.5], 0.25, [0.0; 3], 2),
        ]
    );
    assert_eq!(mesh.influences(4).len(), 1);

    let e = Model::load(text.as_bytes(), &strict(Format::SimsSkn)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert_eq!(e.line(), Some(L_BLENDS + 1), "{e}");

    let bmf = small_bmf();
    let mut b = bmf.bytes.clone();
    set_u32(&mut b, bmf.blends + 12, 1);
    assert_eq!(load(&b, Format::SimsBmf).unwrap().warnings().len(), 1);
    let e = Model::load(&b, &strict(Format::SimsBmf)).unwrap_err();
    assert_eq!(e.offset(), Some(bmf.blends as u64 + 12), "{e}");
}

#[test]
fn validation_reports_every_problem_in_file_order() {
    let mut lines = small_lines();
    lines[L_FACES as usize] = "2 3 9";
    lines[L_BLENDS as usize - 1] = "1 99999";
    lines[L_UVS as usize] = "nan 0";
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let report = validate(text.as_bytes(), &options(Format::SimsSkn));
    assert!(report.model.is_none());
    let lines: Vec<Option<u32>> = report.problems.iter().map(|p| p.line()).collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(report.problems.len(), 3, "{:?}", report.problems);
    assert_eq!(
        sorted,
        [Some(L_FACES + 1), Some(L_UVS + 1), Some(L_BLENDS)],
        "{:?}",
        report.problems
    );
    let clean = validate(small_skn().as_bytes(), &options(Format::SimsSkn));
    assert!(clean.problems.is_empty() && clean.model.is_some());
}

/// Every byte of the BMF and every character of the SKN changed a few ways: a model whose
/// invariants hold (debug builds check them again) or a clean error, never a panic.
#[test]
fn changed_bytes_never_panic() {
    let bmf = small_bmf().bytes;
    for at in 0..bmf.len() {
        for v in [0u8, 1, 0x7f, 0x80, 0xff] {
            let mut b = bmf.clone();
            b[at] = v;
            if let Ok(m) = load(&b, Format::SimsBmf) {
                let mesh = &m.meshes()[0];
                assert!(
                    mesh.indices()
                        .iter()
                        .all(|&i| (i as usize) < mesh.vertex_count())
                );
            }
        }
    }
    let text = small_skn().into_bytes();
    for at in 0..text.len() {
        for v in [b'9', b'-', b' ', b'\n', b'x', b'.', 0xff] {
            let mut b = text.clone();
            b[at] = v;
            if let Err(e) = load(&b, Format::SimsSkn) {
                assert!(e.line().is_some(), "byte {at} = {v}: {e}");
            }
        }
    }
}
