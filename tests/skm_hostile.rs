//! Broken and hostile SKM and SKP input: every truncation, bit flips across the headers and
//! tables, absurd counts, overlapping and backward offsets, zero and non-unit quaternions, NaN.
//! Each must give a model whose invariants hold or a clean error with the right code and byte
//! offset, never a panic, and loading must not allocate much more than the input's size.

mod load_options;
use load_options::{options as opts, strict};
use ossa::synth::TubeRig;
use ossa::{BoneSlots, ErrorCode, Format, LoadOptions, Model, skm};

mod counting_alloc;
mod sweep;

use counting_alloc::{budget, peak_of};
use sweep::{CLEAN, XorShift, flip_bits, random_runs};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

// ---------------------------------------------------------------------------------------------
// Small generated files and byte surgery
// ---------------------------------------------------------------------------------------------

/// A 3-bone, 3-frame tube with two meshes, saved as SKM and SKP.
fn files() -> (Vec<u8>, Vec<u8>) {
    let mut parts = TubeRig {
        bones: 3,
        rings_per_bone: 1,
        sides: 3,
        frames: 3,
        ..TubeRig::default()
    }
    .parts();
    let mut second = parts.meshes[0].clone();
    second.name = "second".into();
    second.indices.truncate(9);
    second.group_ids = None;
    parts.meshes.push(second);
    let model = Model::from_parts(parts).unwrap();
    (
        skm::write_skm(&model).unwrap(),
        skm::write_skp(&model).unwrap(),
    )
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn set_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn set_f32(b: &mut [u8], at: usize, v: f32) {
    set_u32(b, at, v.to_bits());
}

/// Byte offsets of an SKM's structures, read from its (intact) headers.
struct SkmAt {
    mesh: [usize; 2],
    verts: [usize; 2],
    texcoords: [usize; 2],
    indices: [usize; 2],
    references: [usize; 2],
}

fn skm_at(b: &[u8]) -> SkmAt {
    let mesh = [24, 24 + 156];
    let field = |m: usize, at: usize| u32_at(b, mesh[m] + at) as usize;
    SkmAt {
        mesh,
        verts: [field(0, 140), field(1, 140)],
        texcoords: [field(0, 144), field(1, 144)],
        indices: [field(0, 148), field(1, 148)],
        references: [field(0, 152), field(1, 152)],
    }
}

/// Byte offsets of an SKP's structures.
struct SkpAt {
    bones: usize,
    frames: usize,
    /// Per frame, its first pose.
    poses: Vec<usize>,
}

fn skp_at(b: &[u8]) -> SkpAt {
    let frames = u32_at(b, 24) as usize;
    let nf = u32_at(b, 16) as usize;
    SkpAt {
        bones: u32_at(b, 20) as usize,
        frames,
        poses: (0..nf)
            .map(|f| u32_at(b, frames + 68 * f + 64) as usize)
            .collect(),
    }
}

/// The shared invariants, and that SKM meshes never wait for bones by name.
fn check_invariants(m: &Model, what: &str) {
    assert!(
        !matches!(m.unbound(), Some(BoneSlots::ByName(_))),
        "{what}: SKM meshes name no bones"
    );
    sweep::check_invariants(m, what);
}

/// Loads `bytes` in default, strict and validate mode: each gives a sound model or a clean
/// error whose offset lies inside the data (or at a declared offset past it), without a panic
/// and within the memory budget.
fn survive(bytes: &[u8], format: Format, what: &str) -> Option<ossa::Error> {
    let mut first = None;
    for options in [opts(format), strict(format)] {
        let (r, peak) = peak_of(|| Model::load(bytes, &options));
        assert!(peak <= budget(bytes.len()), "{what}: {peak} bytes of heap");
        match r {
            Ok(m) => check_invariants(&m, what),
            Err(e) => {
                assert!(CLEAN.contains(&e.code()), "{what}: {e}");
                first.get_or_insert(e);
            }
        }
    }
    let report = ossa::validate(bytes, &opts(format));
    if let Some(m) = &report.model {
        assert!(report.problems.is_empty(), "{what}");
        check_invariants(m, what);
    } else {
        assert!(
            !report.problems.is_empty(),
            "{what}: no model and no problem"
        );
    }
    for p in &report.problems {
        assert!(CLEAN.contains(&p.code()), "{what}: {p}");
    }
    first
}

fn expect(bytes: &[u8], format: Format, code: ErrorCode, offset: usize, what: &str) -> String {
    let e = Model::load(bytes, &opts(format)).unwrap_err();
    assert_eq!(e.code(), code, "{what}: {e}");
    assert_eq!(e.offset(), Some(offset as u64), "{what}: {e}");
    // Validation reports the same problem at the same byte.
    let report = ossa::validate(bytes, &opts(format));
    assert!(report.model.is_none(), "{what}");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.code() == code && p.offset() == Some(offset as u64)),
        "{what}: {:?}",
        report.problems
    );
    e.to_string()
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn the_generated_files_load() {
    let (skm_bytes, skp_bytes) = files();
    let meshes = Model::load(&skm_bytes, &opts(Format::Skm)).unwrap();
    let skeleton = Model::load(&skp_bytes, &opts(Format::Skp)).unwrap();
    assert!(meshes.warnings().is_empty() && skeleton.warnings().is_empty());
    assert_eq!(meshes.meshes().len(), 2);
    Model::bind(&meshes, &skeleton).unwrap();
}

#[test]
fn every_truncation_fails_cleanly() {
    let (skm_bytes, skp_bytes) = files();
    for (bytes, format) in [(&skm_bytes, Format::Skm), (&skp_bytes, Format::Skp)] {
        for n in 0..bytes.len() {
            let cut = &bytes[..n];
            let what = format!("{} cut at {n}", format.name());
            let e = survive(cut, format, &what).unwrap_or_else(|| panic!("{what} loaded"));
            assert_eq!(e.code(), ErrorCode::Truncated, "{what}: {e}");
            // The offset is where the structure that does not fit starts: inside the whole file.
            let at = e
                .offset()
                .unwrap_or_else(|| panic!("{what}: no offset: {e}"));
            assert!(at < bytes.len() as u64, "{what}: {e}");
            // Named, the data is found to be SKM1 data and fails the same way.
            let named = LoadOptions {
                name: Some(format!("x.{}", format.name().to_lowercase())),
                ..LoadOptions::default()
            };
            if n >= 4 {
                let e = Model::load(cut, &named).unwrap_err();
                assert_eq!(e.code(), ErrorCode::Truncated, "{what}: {e}");
            }
        }
    }
}

#[test]
fn bit_flips_in_headers_and_tables_fail_cleanly() {
    let (skm_bytes, skp_bytes) = files();
    let s = skm_at(&skm_bytes);
    let p = skp_at(&skp_bytes);
    // Every bit of the headers and tables, and of the first few records after them.
    let skm_end = s.verts[0] + 4 + 2 * 32;
    let skp_end = p.poses[0] + 2 * 28;
    for (bytes, format, end) in [
        (&skm_bytes, Format::Skm, skm_end),
        (&skp_bytes, Format::Skp, skp_end),
    ] {
        flip_bits(bytes, 0..end, |b, what| {
            survive(b, format, &format!("{} {what}", format.name())).is_none()
        });
        // And a stride through the rest.
        for byte in (end..bytes.len()).step_by(7) {
            let mut b = bytes.clone();
            b[byte] ^= 0x40;
            survive(&b, format, &format!("{} byte {byte}", format.name()));
        }
    }
}

#[test]
fn random_byte_runs_fail_cleanly() {
    let (skm_bytes, skp_bytes) = files();
    let mut rng = XorShift::new(0x2545_f491_4f6c_dd1d);
    for (bytes, format) in [(&skm_bytes, Format::Skm), (&skp_bytes, Format::Skp)] {
        // The id is left alone: changed, it is not SKM data at all.
        random_runs(bytes, &mut rng, 300, 4, |b, what| {
            survive(b, format, &format!("{} {what}", format.name())).is_none()
        });
    }
}

#[test]
fn skp_counts_over_the_limits() {
    let (_, skp_bytes) = files();
    let p = skp_at(&skp_bytes);
    for (at, value, code, what) in [
        (12, u32::MAX, ErrorCode::Limit, "bone count"),
        (12, 257, ErrorCode::Limit, "bone count"),
        (12, 0, ErrorCode::Malformed, "bone count"),
        (16, 65537, ErrorCode::Limit, "frame count"),
        (16, u32::MAX, ErrorCode::Limit, "frame count"),
        (16, 0, ErrorCode::Malformed, "frame count"),
        (8, (16 << 20) + 1, ErrorCode::Limit, "filesize"),
        (8, u32::MAX, ErrorCode::Limit, "filesize"),
    ] {
        let mut b = skp_bytes.clone();
        set_u32(&mut b, at, value);
        let msg = expect(&b, Format::Skp, code, at, &format!("{what} {value}"));
        assert!(msg.contains(what), "{msg}");
        survive(&b, Format::Skp, what);
    }
    // Within the limits but larger than the data: the table does not fit.
    let mut b = skp_bytes.clone();
    set_u32(&mut b, 16, 65536);
    expect(
        &b,
        Format::Skp,
        ErrorCode::Truncated,
        p.frames,
        "65536 frames",
    );
    let mut b = skp_bytes.clone();
    set_u32(&mut b, 12, 256);
    expect(&b, Format::Skp, ErrorCode::Truncated, p.bones, "256 bones");
}

#[test]
fn skm_counts_over_the_limits() {
    let (skm_bytes, _) = files();
    let s = skm_at(&skm_bytes);
    let m1 = s.mesh[1];
    for (at, value, code, what) in [
        (12, 257, ErrorCode::Limit, "bone count"),
        (12, u32::MAX, ErrorCode::Limit, "bone count"),
        (12, 0, ErrorCode::Malformed, "bone count"),
        (16, 33, ErrorCode::Limit, "mesh count"),
        (16, u32::MAX, ErrorCode::Limit, "mesh count"),
        (16, 0, ErrorCode::Malformed, "mesh count"),
        (8, (16 << 20) + 1, ErrorCode::Limit, "filesize"),
        (m1 + 128, 196609, ErrorCode::Limit, "mesh 1: vertex count"),
        (m1 + 128, u32::MAX, ErrorCode::Limit, "mesh 1: vertex count"),
        (m1 + 132, 65537, ErrorCode::Limit, "mesh 1: triangle count"),
        (
            m1 + 132,
            u32::MAX,
            ErrorCode::Limit,
            "mesh 1: triangle count",
        ),
        (m1 + 136, 257, ErrorCode::Limit, "mesh 1: reference count"),
    ] {
        let mut b = skm_bytes.clone();
        set_u32(&mut b, at, value);
        let msg = expect(&b, Format::Skm, code, at, &format!("{what} {value}"));
        assert!(msg.contains(what), "{msg}");
        survive(&b, Format::Skm, what);
    }
    // Within the limits but larger than the data.
    for (at, value, table_at) in [
        (m1 + 128, 196608, s.texcoords[1]),
        (m1 + 132, 65536, s.indices[1]),
        (m1 + 136, 256, s.references[1]),
    ] {
        let mut b = skm_bytes.clone();
        set_u32(&mut b, at, value);
        expect(
            &b,
            Format::Skm,
            ErrorCode::Truncated,
            table_at,
            "large count",
        );
    }
    // A vertex claiming more influences than the file holds.
    let mut b = skm_bytes.clone();
    set_u32(&mut b, s.verts[0], u32::MAX);
    let msg = expect(
        &b,
        Format::Skm,
        ErrorCode::Truncated,
        s.verts[0] + 4,
        "influence count",
    );
    assert!(msg.contains("mesh 0 vertex 0"), "{msg}");
}

#[test]
fn offsets_out_of_range_overlapping_or_backward() {
    let (skm_bytes, skp_bytes) = files();
    let s = skm_at(&skm_bytes);
    let p = skp_at(&skp_bytes);
    let len = |b: &[u8]| b.len();

    // SKP.
    // Frame headers read from the bone table find pose offsets in its bytes: the first
    // (bone 0's parent, -1) is past the end.
    let mut b = skp_bytes.clone();
    set_u32(&mut b, 24, p.bones as u32);
    let msg = expect(
        &b,
        Format::Skp,
        ErrorCode::Truncated,
        u32::MAX as usize,
        "frames on bones",
    );
    assert!(msg.contains("frame 0"), "{msg}");
    // Bones read from the header: bone 0's parent (file byte 64) is 0, which loading stops at;
    // validation goes on to the overlap.
    let mut b = skp_bytes.clone();
    set_u32(&mut b, 20, 0);
    let msg = expect(
        &b,
        Format::Skp,
        ErrorCode::Malformed,
        64,
        "bones on the header",
    );
    assert!(msg.contains("bone 0"), "{msg}");
    let report = ossa::validate(&b, &opts(Format::Skp));
    let first = &report.problems[0];
    assert_eq!(first.offset(), Some(0), "{:?}", report.problems);
    assert!(first.to_string().contains("overlaps header"), "{first}");
    let mut b = skp_bytes.clone();
    set_u32(&mut b, 20, u32::MAX);
    expect(
        &b,
        Format::Skp,
        ErrorCode::Truncated,
        u32::MAX as usize,
        "bones far away",
    );
    // Frame 1's poses are frame 0's.
    let mut b = skp_bytes.clone();
    set_u32(&mut b, p.frames + 68 + 64, p.poses[0] as u32);
    let msg = expect(
        &b,
        Format::Skp,
        ErrorCode::Malformed,
        p.poses[0],
        "shared poses",
    );
    assert!(
        msg.contains("frame 1 poses") || msg.contains("frame 0 poses"),
        "{msg}"
    );
    // Frame 2's poses point backward, into the bone table.
    let mut b = skp_bytes.clone();
    set_u32(&mut b, p.frames + 2 * 68 + 64, p.bones as u32 + 8);
    let msg = expect(
        &b,
        Format::Skp,
        ErrorCode::Malformed,
        p.bones + 8,
        "backward poses",
    );
    assert!(msg.contains("bone table"), "{msg}");
    // Poses past the end.
    let mut b = skp_bytes.clone();
    set_u32(&mut b, p.frames + 64, len(&skp_bytes) as u32 - 27);
    let at = len(&skp_bytes) - 27;
    expect(
        &b,
        Format::Skp,
        ErrorCode::Truncated,
        at,
        "poses past the end",
    );

    // SKM.
    let mut b = skm_bytes.clone();
    set_u32(&mut b, 20, 0);
    expect(
        &b,
        Format::Skm,
        ErrorCode::Malformed,
        0,
        "meshes on the header",
    );
    let mut b = skm_bytes.clone();
    set_u32(&mut b, s.mesh[0] + 148, s.texcoords[0] as u32);
    let msg = expect(
        &b,
        Format::Skm,
        ErrorCode::Malformed,
        s.texcoords[0],
        "indices on texcoords",
    );
    assert!(
        msg.contains("mesh 0 indices") && msg.contains("mesh 0 texcoords"),
        "{msg}"
    );
    let mut b = skm_bytes.clone();
    set_u32(&mut b, s.mesh[1] + 140, s.verts[0] as u32);
    let msg = expect(
        &b,
        Format::Skm,
        ErrorCode::Malformed,
        s.verts[0],
        "shared vertices",
    );
    assert!(msg.contains("vertices"), "{msg}");
    let mut b = skm_bytes.clone();
    set_u32(&mut b, s.mesh[1] + 152, s.mesh[0] as u32 + 100);
    let msg = expect(
        &b,
        Format::Skm,
        ErrorCode::Malformed,
        s.mesh[0] + 100,
        "references in the mesh table",
    );
    assert!(
        msg.contains("mesh table") && msg.contains("mesh 1 references"),
        "{msg}"
    );
    for field in [140, 144, 148, 152] {
        let mut b = skm_bytes.clone();
        set_u32(&mut b, s.mesh[1] + field, u32::MAX - 3);
        let e = Model::load(&b, &opts(Format::Skm)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Truncated, "field {field}: {e}");
        assert_eq!(e.offset(), Some(u32::MAX as u64 - 3), "field {field}: {e}");
        assert!(e.to_string().contains("mesh 1"), "{e}");
    }
}

#[test]
fn bad_quaternions_and_numbers() {
    let (skm_bytes, skp_bytes) = files();
    let s = skm_at(&skm_bytes);
    let p = skp_at(&skp_bytes);
    let pose = p.poses[1] + 28; // frame 1 bone 1

    // A zero quaternion has no rotation.
    let mut b = skp_bytes.clone();
    for k in 0..4 {
        set_f32(&mut b, pose + 4 * k, 0.0);
    }
    let msg = expect(
        &b,
        Format::Skp,
        ErrorCode::Malformed,
        pose,
        "zero quaternion",
    );
    assert!(
        msg.contains("frame 1") && msg.contains("bone 1") && msg.contains("zero"),
        "{msg}"
    );
    // Nor does one of subnormal components only... which still has a length, and normalises.
    let mut b = skp_bytes.clone();
    for k in 0..4 {
        set_f32(&mut b, pose + 4 * k, f32::from_bits(1));
    }
    let m = Model::load(&b, &opts(Format::Skp)).unwrap();
    assert!(
        m.warnings()
            .iter()
            .any(|w| w.to_string().contains("normalised"))
    );
    check_invariants(&m, "subnormal quaternion");

    // NaN and infinity, in every element of a pose.
    for k in 0..7 {
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut b = skp_bytes.clone();
            set_f32(&mut b, pose + 4 * k, bad);
            let msg = expect(
                &b,
                Format::Skp,
                ErrorCode::Malformed,
                pose + 4 * k,
                "NaN pose",
            );
            assert!(msg.contains("not a finite number"), "{msg}");
        }
    }
    // Huge but finite components: the length is computed without overflow.
    let mut b = skp_bytes.clone();
    for k in 0..4 {
        set_f32(&mut b, pose + 4 * k, f32::MAX);
    }
    let m = Model::load(&b, &opts(Format::Skp)).unwrap();
    check_invariants(&m, "huge quaternion");

    // NaN in an influence, in a texcoord.
    let infl = s.verts[0] + 4;
    for k in 0..7 {
        let mut b = skm_bytes.clone();
        set_f32(&mut b, infl + 4 * k, f32::NAN);
        expect(
            &b,
            Format::Skm,
            ErrorCode::Malformed,
            infl + 4 * k,
            "NaN influence",
        );
    }
    let mut b = skm_bytes.clone();
    set_f32(&mut b, s.texcoords[1] + 12, f32::INFINITY);
    let msg = expect(
        &b,
        Format::Skm,
        ErrorCode::Malformed,
        s.texcoords[1] + 12,
        "inf texcoord",
    );
    assert!(msg.contains("mesh 1 vertex 1"), "{msg}");
}

#[test]
fn non_unit_quaternions_are_normalised_and_reported() {
    let (_, skp_bytes) = files();
    let p = skp_at(&skp_bytes);
    let pose = p.poses[2] + 2 * 28; // frame 2 bone 2
    let clean = Model::load(&skp_bytes, &opts(Format::Skp)).unwrap();

    let mut b = skp_bytes.clone();
    for k in 0..4 {
        let v = f32::from_le_bytes(b[pose + 4 * k..pose + 4 * k + 4].try_into().unwrap());
        set_f32(&mut b, pose + 4 * k, 2.0 * v);
    }
    let m = Model::load(&b, &opts(Format::Skp)).unwrap();
    let w: Vec<String> = m.warnings().iter().map(|w| w.to_string()).collect();
    assert!(
        w.iter()
            .any(|w| w.contains("normalised") && w.contains("frame 2 bone 2")),
        "{w:?}"
    );
    let (a, c) = (
        m.skeleton().frame_poses(2).unwrap()[2],
        clean.skeleton().frame_poses(2).unwrap()[2],
    );
    for k in 0..12 {
        assert!((a.m[k] - c.m[k]).abs() < 1e-6, "{a:?} {c:?}");
    }
    let e = Model::load(&b, &strict(Format::Skp)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert_eq!(e.offset(), Some(pose as u64));

    // Off by less than 1e-3: normalised without a word.
    let mut b = skp_bytes.clone();
    for k in 0..4 {
        let v = f32::from_le_bytes(b[pose + 4 * k..pose + 4 * k + 4].try_into().unwrap());
        set_f32(&mut b, pose + 4 * k, 1.0005 * v);
    }
    let m = Model::load(&b, &strict(Format::Skp)).unwrap();
    assert!(m.warnings().is_empty());
}

#[test]
fn bones_indices_and_references_out_of_range() {
    let (skm_bytes, skp_bytes) = files();
    let s = skm_at(&skm_bytes);
    let p = skp_at(&skp_bytes);

    // A parent that is not an earlier bone.
    for parent in [2i32, 1, 5, -2, i32::MIN] {
        let mut b = skp_bytes.clone();
        set_u32(&mut b, p.bones + 72 + 64, parent as u32);
        let msg = expect(
            &b,
            Format::Skp,
            ErrorCode::Malformed,
            p.bones + 72 + 64,
            "parent",
        );
        assert!(msg.contains("bone 1") && msg.contains("parent"), "{msg}");
    }

    let infl = s.verts[1] + 4 + 28;
    let mut b = skm_bytes.clone();
    set_u32(&mut b, infl, 3);
    let msg = expect(&b, Format::Skm, ErrorCode::Malformed, infl, "bonenum");
    assert!(
        msg.contains("mesh 1 vertex 0 influence 0: bone 3 out of range"),
        "{msg}"
    );

    let ix = s.indices[0] + 5 * 4;
    let mut b = skm_bytes.clone();
    set_u32(&mut b, ix, 12);
    let msg = expect(&b, Format::Skm, ErrorCode::Malformed, ix, "index");
    assert!(
        msg.contains("mesh 0 triangle 1 corner 2: vertex 12"),
        "{msg}"
    );

    let rf = s.references[1] + 4;
    let mut b = skm_bytes.clone();
    set_u32(&mut b, rf, 3);
    let msg = expect(&b, Format::Skm, ErrorCode::Malformed, rf, "reference");
    assert!(msg.contains("mesh 1 reference 1"), "{msg}");

    // Influence sums: off by 5e-3 is reported, by 0.1 refused, and a vertex with no influences
    // (qfusion collapses it to the origin) refused.
    let weight = s.verts[0] + 4 + 12;
    let mut b = skm_bytes.clone();
    set_f32(&mut b, weight, 1.005);
    let m = Model::load(&b, &opts(Format::Skm)).unwrap();
    assert!(
        m.warnings()
            .iter()
            .any(|w| w.to_string().contains("influence sums"))
    );
    let e = Model::load(&b, &strict(Format::Skm)).unwrap_err();
    assert_eq!(e.offset(), Some(s.verts[0] as u64));
    set_f32(&mut b, weight, 1.1);
    expect(&b, Format::Skm, ErrorCode::Malformed, s.verts[0], "sum 1.1");
}

#[test]
fn ids_types_sizes_and_names() {
    let (skm_bytes, skp_bytes) = files();
    let p = skp_at(&skp_bytes);
    for (bytes, format) in [(&skm_bytes, Format::Skm), (&skp_bytes, Format::Skp)] {
        let mut b = bytes.clone();
        b[3] = b'2';
        expect(&b, format, ErrorCode::UnknownFormat, 0, "id");
        // Without a forced format, the bytes are nothing ossa knows.
        let e = Model::load(&b, &LoadOptions::default()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnknownFormat);
        let mut b = bytes.clone();
        set_u32(&mut b, 4, 3);
        expect(&b, format, ErrorCode::Unsupported, 4, "type");
        // A declared size that differs from the data's: reported, refused when strict.
        let mut b = bytes.clone();
        set_u32(&mut b, 8, bytes.len() as u32 + 1);
        let m = Model::load(&b, &opts(format)).unwrap();
        assert!(
            m.warnings()
                .iter()
                .any(|w| w.to_string().contains("filesize"))
        );
        let e = Model::load(&b, &strict(format)).unwrap_err();
        assert_eq!((e.code(), e.offset()), (ErrorCode::Malformed, Some(8)));
        // A memory ceiling below what the model needs.
        let e = Model::load(
            bytes,
            &LoadOptions {
                format,
                max_bytes: 64,
                ..LoadOptions::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Limit);
    }

    // A name with no NUL in its 64 bytes is kept whole and reported; saved again it is too
    // long for qfusion, which keeps 63 bytes.
    let mut b = skp_bytes.clone();
    b[p.bones + 72..p.bones + 72 + 64].fill(b'n');
    let m = Model::load(&b, &opts(Format::Skp)).unwrap();
    assert_eq!(m.bones()[1].name.as_bytes(), [b'n'; 64]);
    assert!(
        m.warnings()
            .iter()
            .any(|w| w.to_string().contains("bone 1"))
    );
    let e = Model::load(&b, &strict(Format::Skp)).unwrap_err();
    assert_eq!(e.offset(), Some(p.bones as u64 + 72));
    assert_eq!(skm::write_skp(&m).unwrap_err().code(), ErrorCode::Limit);
    let mut b = skm_bytes.clone();
    b[24 + 64..24 + 128].fill(b'm');
    let m = Model::load(&b, &opts(Format::Skm)).unwrap();
    assert_eq!(m.meshes()[0].name().as_bytes(), [b'm'; 64]);
    assert!(
        m.warnings()
            .iter()
            .any(|w| w.to_string().contains("mesh 0 name"))
    );
}

#[test]
fn validation_lists_every_problem_in_file_order() {
    let (_, skp_bytes) = files();
    let p = skp_at(&skp_bytes);
    let mut b = skp_bytes.clone();
    set_u32(&mut b, p.bones + 2 * 72 + 64, 7); // bone 2's parent
    for k in 0..4 {
        set_f32(&mut b, p.poses[1] + 4 * k, 0.0); // frame 1 bone 0: zero quaternion
    }
    set_f32(&mut b, p.poses[2] + 28 + 20, f32::NAN); // frame 2 bone 1: origin y
    let report = ossa::validate(&b, &opts(Format::Skp));
    assert!(report.model.is_none());
    let offsets: Vec<Option<u64>> = report.problems.iter().map(|e| e.offset()).collect();
    assert_eq!(
        offsets,
        [
            Some((p.bones + 2 * 72 + 64) as u64),
            Some(p.poses[1] as u64),
            Some((p.poses[2] + 28 + 20) as u64)
        ],
        "{:?}",
        report.problems
    );
}
