//! The 1998 prototype of The Sims: `.msh` meshes. Every corpus file loads, with the bone its
//! name gives, binds to its suit's skeleton and saves back byte for byte; small files built here
//! byte by byte reach every error path, each with its code and byte offset; every truncation
//! and single-bit flip of a file ends in a clean error or a sound model, never a panic, and
//! within a memory budget.

mod corpus;
mod counting_alloc;
mod load_options;
mod sweep;

use corpus::{corpus_subdir, files_ending};
use counting_alloc::{budget, peak_of};
use load_options::{options, strict};
use ossa::{BoneSlots, ErrorCode, Format, LoadOptions, Model, Name, sims_mesh, sims_msh, validate};
use sweep::{CLEAN, XorShift, flip_bits, flip_positions};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Options for a `.msh` named `name`, default mode.
fn named(name: &str) -> LoadOptions<'static> {
    LoadOptions {
        name: Some(name.into()),
        ..options(Format::SimsMsh)
    }
}

fn load_as(data: &[u8], options: &LoadOptions) -> ossa::Result<Model> {
    let (r, peak) = peak_of(|| Model::load(data, options));
    assert!(
        peak <= budget(data.len()),
        "{peak} bytes of heap for {} bytes",
        data.len()
    );
    r
}

fn load(data: &[u8]) -> ossa::Result<Model> {
    load_as(data, &named("xskin-test-HEAD-FACE.msh"))
}

/// The error of data that must not load, with its code and byte offset checked.
fn fails_at(data: &[u8], code: ErrorCode, offset: usize, what: &str) -> ossa::Error {
    match load(data) {
        Ok(_) => panic!("{what}: loaded"),
        Err(e) => {
            assert_eq!(e.code(), code, "{what}: {e}");
            assert_eq!(e.offset(), Some(offset as u64), "{what}: {e}");
            e
        }
    }
}

fn has(e: &ossa::Error, text: &str) {
    assert!(e.to_string().contains(text), "`{e}` lacks `{text}`");
}

/// A `.msh` file's tables, written byte by byte here (not by ossa's writer).
#[derive(Clone)]
struct Fixture {
    positions: Vec<[f32; 3]>,
    texcoords: Vec<[f32; 2]>,
    faces: Vec<[u32; 4]>,
    /// Position, texcoord, normal bits x y z, last word.
    vertices: Vec<[u32; 6]>,
    name: Vec<u8>,
}

/// Where each part of [`Fixture::bytes`] lies.
struct Offsets {
    /// Each table's count; its record size follows 4 bytes on, its records 8 bytes on.
    tables: [usize; 5],
}

impl Offsets {
    fn records(&self, table: usize) -> usize {
        self.tables[table] + 8
    }
}

const SIZES: [usize; 4] = [12, 8, 16, 24];

impl Fixture {
    /// A square of two triangles and a degenerate one: four vertices on four positions and
    /// three texture coordinates (the last two vertices share one), and unused words of all
    /// sorts.
    fn square() -> Fixture {
        let n = [0.0f32, 0.0, -1.0].map(f32::to_bits);
        Fixture {
            positions: vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [1.0, 1.0, 0.0],
                [0.0, 1.0, 0.0],
            ],
            texcoords: vec![[0.0, 0.0], [1.0, 0.0], [0.5, 1.0]],
            faces: vec![[0, 1, 2, 0], [0, 2, 3, 0], [1, 1, 2, 0]],
            vertices: vec![
                [0, 0, n[0], n[1], n[2], 0xdead_beef],
                [1, 1, n[0], n[1], n[2], 0],
                [2, 2, n[0], n[1], n[2], 0xffff_0000],
                [3, 2, n[0], n[1], n[2], 7],
            ],
            name: b"samcalf".to_vec(),
        }
    }

    fn bytes(&self) -> (Vec<u8>, Offsets) {
        let mut out = vec![0xb2, 0xb0, 0xb0, 0xb0];
        let mut tables = [0usize; 5];
        let mut header = |out: &mut Vec<u8>, t: usize, count: usize, size: usize| {
            tables[t] = out.len();
            out.extend_from_slice(&(count as u32).to_le_bytes());
            out.extend_from_slice(&(size as u32).to_le_bytes());
        };
        header(&mut out, 0, self.positions.len(), 12);
        for x in self.positions.iter().flatten() {
            out.extend_from_slice(&x.to_le_bytes());
        }
        header(&mut out, 1, self.texcoords.len(), 8);
        for x in self.texcoords.iter().flatten() {
            out.extend_from_slice(&x.to_le_bytes());
        }
        header(&mut out, 2, self.faces.len(), 16);
        for x in self.faces.iter().flatten() {
            out.extend_from_slice(&x.to_le_bytes());
        }
        header(&mut out, 3, self.vertices.len(), 24);
        for x in self.vertices.iter().flatten() {
            out.extend_from_slice(&x.to_le_bytes());
        }
        header(&mut out, 4, 1, self.name.len());
        out.extend_from_slice(&self.name);
        (out, Offsets { tables })
    }
}

fn set_u32(d: &mut [u8], at: usize, v: u32) {
    d[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

// ---------------------------------------------------------------------------------------------
// A small file
// ---------------------------------------------------------------------------------------------

#[test]
fn a_small_file_loads_as_one_mesh_on_the_bone_its_name_gives() {
    let (bytes, _) = Fixture::square().bytes();
    let model = load(&bytes).unwrap();
    assert_eq!(model.format(), Format::SimsMsh);
    assert!(model.warnings().is_empty(), "{:?}", model.warnings());
    assert_eq!(
        model.unbound(),
        Some(&BoneSlots::ByName(vec![Name::from("HEAD")]))
    );
    let mesh = &model.meshes()[0];
    assert_eq!(mesh.name(), &Name::from("xskin-test-HEAD-FACE"));
    assert_eq!(mesh.shader(), &Name::from("samcalf"));
    assert_eq!(mesh.vertex_count(), 4);
    assert_eq!(mesh.indices(), &[0, 1, 2, 0, 2, 3, 1, 1, 2]);
    assert_eq!(
        mesh.texcoords().unwrap(),
        &[[0.0, 0.0], [1.0, 0.0], [0.5, 1.0], [0.5, 1.0]]
    );
    for v in 0..4 {
        let [i] = mesh.influences(v) else {
            panic!("vertex {v}: not one influence")
        };
        assert_eq!(i.weight, 1.0);
        assert_eq!(i.bone, 0);
        assert_eq!(i.normal, [0.0, 0.0, -1.0]);
    }
    assert_eq!(mesh.influences(2)[0].origin, [1.0, 1.0, 0.0]);
    let layout = mesh.msh().unwrap();
    assert_eq!((layout.positions, layout.texcoords), (4, 3));
    assert_eq!(layout.vertices[3], [3, 2, 7]);
    assert_eq!(layout.faces, [0, 0, 0]);
    assert_eq!(sims_msh::write_msh(&model).unwrap(), bytes);
    // Auto-detected by the magic, with or without a name.
    for name in [
        None,
        Some("a.bin".to_string()),
        Some("xskin-a-HEAD-B.msh".into()),
    ] {
        let o = LoadOptions {
            name,
            ..LoadOptions::default()
        };
        assert_eq!(Model::load(&bytes, &o).unwrap().format(), Format::SimsMsh);
    }
    assert_eq!(Format::from_extension("X.MSH"), Some(Format::SimsMsh));
    assert_eq!(Format::SimsMsh.name(), "Sims MSH");
    assert_eq!(Format::from_u32(14), Some(Format::SimsMsh));
    assert_eq!(model.save(Format::SimsMsh).unwrap(), bytes);
}

#[test]
fn without_a_bone_in_the_name_a_warning_says_so_and_binding_fails() {
    let (bytes, _) = Fixture::square().bytes();
    for name in [None, Some("square.msh")] {
        let o = LoadOptions {
            name: name.map(Into::into),
            ..options(Format::SimsMsh)
        };
        let model = load_as(&bytes, &o).unwrap();
        assert_eq!(model.warnings().len(), 1, "{:?}", model.warnings());
        assert!(
            model.warnings()[0]
                .to_string()
                .contains("a .msh names its bone only there"),
            "{:?}",
            model.warnings()
        );
        assert_eq!(
            model.unbound(),
            Some(&BoneSlots::ByName(vec![Name::empty()]))
        );
        let skeleton = Model::load(CMX.as_bytes(), &options(Format::SimsCmx)).unwrap();
        let e = Model::bind(&model, &skeleton).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound, "{e}");
        has(&e, "has no name to look for in the skeleton");
    }
}

/// A Sims skeleton of two bones, ROOT and HEAD.
const CMX: &str = "version 200\n1\npair\n2\nROOT\nNULL\n| 0 3 0 |\n| 0 0 0 1 |\n1\n1\nHEAD\nROOT\n\
                   | 0 1 0 |\n| 0 0.7071068 0 0.7071068 |\n0\n1\n0\n0\n";

#[test]
fn a_bound_mesh_follows_its_bone() {
    let (bytes, _) = Fixture::square().bytes();
    let skeleton = Model::load(CMX.as_bytes(), &options(Format::SimsCmx)).unwrap();
    let model = Model::bind(&load(&bytes).unwrap(), &skeleton).unwrap();
    assert_eq!(model.format(), Format::SimsMsh);
    let head = model.find_bone("HEAD").unwrap();
    let bones = sweep::pose(&model, &[sweep::blend(0, 1.0)], None);
    let out = sweep::skin(&model, 0, &bones, 0);
    for (v, p) in out.positions.iter().enumerate() {
        let local = model.meshes()[0].influences(v)[0].origin;
        let want = bones[head as usize].transform_point(local);
        for k in 0..3 {
            assert!((p[k] - want[k]).abs() < 1e-6, "vertex {v}: {p:?} {want:?}");
        }
    }
    // A bound mesh saves the same bytes: the layout stays with it.
    assert_eq!(sims_msh::write_msh(&model).unwrap(), bytes);
}

// ---------------------------------------------------------------------------------------------
// Writing other models
// ---------------------------------------------------------------------------------------------

/// A Sims skin: one bone, one triangle of three vertices, no blends.
const SKN: &str = "tri\r\nskin\r\n1\r\nHEAD\r\n1\r\n0 1 2\r\n1\r\n0 0 3 -1 0\r\n3\r\n0 0\r\n\
                   1 0\r\n0 1\r\n0\r\n3\r\n0 0 0 0 0 1\r\n1 0 0 0 0 1\r\n0 1 0 0 0 1\r\n";

#[test]
fn an_skn_of_one_bone_writes_one_entry_per_vertex() {
    let skn = Model::load(SKN.as_bytes(), &options(Format::SimsSkn)).unwrap();
    let bytes = sims_msh::write_msh(&skn).unwrap();
    let expected = Fixture {
        positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        texcoords: vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]],
        faces: vec![[0, 1, 2, 0]],
        vertices: (0..3).map(|v| [v, v, 0, 0, 1.0f32.to_bits(), 0]).collect(),
        name: b"skin".to_vec(),
    };
    assert_eq!(bytes, expected.bytes().0);
    let back = load(&bytes).unwrap();
    assert_eq!(back.meshes()[0].texcoords(), skn.meshes()[0].texcoords());
    assert_eq!(
        back.meshes()[0].all_influences(),
        skn.meshes()[0].all_influences()
    );
    // No texture: "x", as the other Sims meshes say it, and read back as none.
    let untextured = SKN.replace("\r\nskin\r\n", "\r\nx\r\n");
    let skn = Model::load(untextured.as_bytes(), &options(Format::SimsSkn)).unwrap();
    let bytes = sims_msh::write_msh(&skn).unwrap();
    assert!(bytes.ends_with(b"\x01\0\0\0\x01\0\0\0x"));
    assert!(load(&bytes).unwrap().meshes()[0].shader().is_empty());
}

#[test]
fn models_a_msh_cannot_hold_are_refused() {
    // Blends: two influences on a vertex.
    let blended = "tri\r\nx\r\n2\r\nA\r\nB\r\n1\r\n0 1 2\r\n2\r\n0 0 3 -1 0\r\n1 0 0 0 1\r\n3\r\n\
                   0 0\r\n1 0\r\n0 1\r\n1\r\n2 8192\r\n4\r\n0 0 0 0 0 1\r\n1 0 0 0 0 1\r\n\
                   0 1 0 0 0 1\r\n0 0 0 0 0 1\r\n";
    let m = Model::load(blended.as_bytes(), &options(Format::SimsSkn)).unwrap();
    let e = sims_msh::write_msh(&m).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported, "{e}");
    has(
        &e,
        "vertex 2 has 2 influences; a .msh vertex follows exactly one bone",
    );
    // Two bones, one influence each.
    let two = "tri\r\nx\r\n2\r\nA\r\nB\r\n1\r\n0 1 2\r\n2\r\n0 0 2 -1 0\r\n1 2 1 -1 0\r\n3\r\n\
               0 0\r\n1 0\r\n0 1\r\n0\r\n3\r\n0 0 0 0 0 1\r\n1 0 0 0 0 1\r\n0 1 0 0 0 1\r\n";
    let m = Model::load(two.as_bytes(), &options(Format::SimsSkn)).unwrap();
    let e = sims_msh::write_msh(&m).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported, "{e}");
    has(&e, "vertex 2 follows bone 1 where vertex 0 follows bone 0");
    // Several meshes, and the many-bone tube rig.
    let rig = ossa::synth::TubeRig::with_vertices(100).build().unwrap();
    let e = sims_msh::write_msh(&rig).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported, "{e}");
    // A texture name a .msh cannot hold.
    let long = SKN.replace("\r\nskin\r\n", &format!("\r\n{}\r\n", "t".repeat(256)));
    let m = Model::load(long.as_bytes(), &options(Format::SimsSkn)).unwrap();
    let e = sims_msh::write_msh(&m).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported, "{e}");
    has(&e, "printable ASCII of 1 to 255 bytes");
}

// ---------------------------------------------------------------------------------------------
// Broken files
// ---------------------------------------------------------------------------------------------

#[test]
fn a_wrong_magic_is_no_msh() {
    let (mut bytes, _) = Fixture::square().bytes();
    bytes[3] = 0;
    let e = fails_at(&bytes, ErrorCode::UnknownFormat, 0, "magic");
    has(&e, "not a Sims .msh's b2 b0 b0 b0");
    assert_eq!(
        load(&[]).unwrap_err().code(),
        ErrorCode::Truncated,
        "empty data"
    );
}

#[test]
fn each_record_size_must_be_the_formats() {
    let names = ["positions", "texture coordinates", "faces", "vertices"];
    for t in 0..4 {
        let (mut bytes, at) = Fixture::square().bytes();
        set_u32(&mut bytes, at.tables[t] + 4, SIZES[t] as u32 + 4);
        let e = fails_at(&bytes, ErrorCode::Malformed, at.tables[t] + 4, names[t]);
        has(
            &e,
            &format!(
                "the {} table's record size is {}, not {}",
                names[t],
                SIZES[t] + 4,
                SIZES[t]
            ),
        );
    }
}

#[test]
fn counts_past_the_data_are_truncated_before_allocating() {
    for (t, size) in SIZES.into_iter().enumerate() {
        let (bytes, at) = Fixture::square().bytes();
        let fits = (bytes.len() - at.records(t)) / size;
        for count in [fits as u32 + 1, 0x1000_0000, u32::MAX] {
            let mut bytes = bytes.clone();
            set_u32(&mut bytes, at.tables[t], count);
            let e = fails_at(&bytes, ErrorCode::Truncated, at.records(t), "count");
            has(&e, &format!("{count} "));
            has(&e, &format!("count at byte {:#x}", at.tables[t]));
        }
    }
}

#[test]
fn the_memory_limit_is_checked_per_table() {
    let mut f = Fixture::square();
    let n = f.vertices[0];
    f.vertices = (0..1000).map(|_| n).collect();
    let (bytes, at) = f.bytes();
    let o = LoadOptions {
        max_bytes: 10_000,
        ..named("xskin-a-HEAD-B.msh")
    };
    let e = Model::load(&bytes, &o).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    assert_eq!(e.offset(), Some(at.tables[3] as u64), "{e}");
    has(&e, "limit of 10000 bytes");
}

#[test]
fn indices_out_of_range_name_the_record_and_byte() {
    let (bytes, at) = Fixture::square().bytes();
    let cases = [
        // (byte, value, message)
        (
            at.records(3) + 24,
            4,
            "vertex 1: position: 4 out of range (the file has 4)",
        ),
        (
            at.records(3) + 2 * 24 + 4,
            3,
            "vertex 2: texture coordinate: 3 out of range (the file has 3)",
        ),
        (
            at.records(2) + 16 + 8,
            4,
            "face 1 corner 2: vertex: 4 out of range (the file has 4)",
        ),
        (
            at.records(2) + 2 * 16,
            u32::MAX,
            "face 2 corner 0: vertex: 4294967295 out of range",
        ),
    ];
    for (byte, value, message) in cases {
        let mut b = bytes.clone();
        set_u32(&mut b, byte, value);
        let e = fails_at(&b, ErrorCode::Malformed, byte, message);
        has(&e, message);
    }
}

#[test]
fn numbers_that_are_not_finite_are_malformed() {
    let (bytes, at) = Fixture::square().bytes();
    let cases = [
        (
            at.records(0) + 12 + 4,
            "position 1: NaN is not a finite number",
        ),
        (
            at.records(1) + 8,
            "texture coordinate 1: NaN is not a finite number",
        ),
    ];
    for (byte, message) in cases {
        for bits in [f32::NAN.to_bits(), f32::INFINITY.to_bits()] {
            let mut b = bytes.clone();
            set_u32(&mut b, byte, bits);
            let e = fails_at(&b, ErrorCode::Malformed, byte, message);
            if bits == f32::NAN.to_bits() {
                has(&e, message);
            }
        }
    }
}

#[test]
fn normals_that_are_not_numbers_read_as_zero_with_a_warning_and_write_back() {
    let (bytes, at) = Fixture::square().bytes();
    let mut b = bytes.clone();
    let normal = at.records(3) + 24 + 8;
    for k in 0..3 {
        set_u32(&mut b, normal + 4 * k, 0xffc0_0000);
    }
    let model = load(&b).unwrap();
    assert_eq!(model.warnings().len(), 1, "{:?}", model.warnings());
    let warning = model.warnings()[0].to_string();
    assert!(
        warning.contains(
            "1 vertex has a normal that is not a finite number (the first is vertex 1: NaN)"
        ),
        "{warning}"
    );
    assert!(
        warning.contains(&format!("at byte {normal:#x}")),
        "{warning}"
    );
    assert_eq!(model.meshes()[0].influences(1)[0].normal, [0.0; 3]);
    assert_eq!(sims_msh::write_msh(&model).unwrap(), b);
    let o = LoadOptions {
        strict: true,
        ..named("xskin-a-HEAD-B.msh")
    };
    let e = Model::load(&b, &o).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert_eq!(e.offset(), Some(normal as u64), "{e}");
}

#[test]
fn the_texture_name_is_one_printable_record_of_1_to_255_bytes() {
    let (bytes, at) = Fixture::square().bytes();
    let name = at.tables[4];
    let mut b = bytes.clone();
    set_u32(&mut b, name, 2);
    let e = fails_at(&b, ErrorCode::Malformed, name, "two names");
    has(&e, "the texture name table holds 2 records, not 1");
    for len in [0u32, 256] {
        let mut b = bytes.clone();
        set_u32(&mut b, name + 4, len);
        let e = fails_at(&b, ErrorCode::Malformed, name + 4, "length");
        has(
            &e,
            &format!("the texture name is {len} bytes long, not 1 to 255"),
        );
    }
    let mut b = bytes.clone();
    set_u32(&mut b, name + 4, 8);
    fails_at(&b, ErrorCode::Truncated, name + 8, "a name past the end");
    for byte in [0u8, b'\n', 0x7f, 0xb0] {
        let mut b = bytes.clone();
        b[name + 8 + 2] = byte;
        let e = fails_at(&b, ErrorCode::Malformed, name + 10, "a byte");
        has(
            &e,
            &format!("holds byte {byte:#04x}, which is not printable ASCII"),
        );
    }
    // 255 bytes is the most; a space is printable.
    let mut f = Fixture::square();
    f.name = [b"a b".as_slice(), &[b'c'; 252]].concat();
    let (b, _) = f.bytes();
    assert_eq!(
        load(&b).unwrap().meshes()[0].shader().as_bytes(),
        &f.name[..]
    );
}

#[test]
fn bytes_after_the_texture_name_are_malformed() {
    let (mut bytes, _) = Fixture::square().bytes();
    let end = bytes.len();
    bytes.extend_from_slice(&[0, 0, 0]);
    let e = fails_at(&bytes, ErrorCode::Malformed, end, "trailing");
    has(&e, "3 bytes after the texture name");
    // Validation reports it and the rest.
    let mut b = bytes.clone();
    let (_, at) = Fixture::square().bytes();
    set_u32(&mut b, at.records(3), 9);
    let report = validate(&b, &named("xskin-a-HEAD-B.msh"));
    assert_eq!(report.problems.len(), 2, "{:?}", report.problems);
    assert!(report.model.is_none());
}

#[test]
fn unused_table_entries_are_a_warning_and_strictly_an_error() {
    let mut f = Fixture::square();
    f.positions.push([9.0, 9.0, 9.0]);
    let (bytes, at) = f.bytes();
    let model = load(&bytes).unwrap();
    assert_eq!(model.warnings().len(), 1, "{:?}", model.warnings());
    assert!(
        model.warnings()[0]
            .to_string()
            .contains("1 position of the 5 positions no vertex uses")
    );
    // Written back with zeros where the unused entry was.
    let mut zeroed = bytes.clone();
    let p4 = at.records(0) + 4 * 12;
    zeroed[p4..p4 + 12].fill(0);
    assert_eq!(sims_msh::write_msh(&model).unwrap(), zeroed);
    let o = LoadOptions {
        strict: true,
        ..named("xskin-a-HEAD-B.msh")
    };
    let e = Model::load(&bytes, &o).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert_eq!(e.offset(), Some(p4 as u64), "{e}");
    let _ = strict(Format::SimsMsh);
}

// ---------------------------------------------------------------------------------------------
// Sweeps
// ---------------------------------------------------------------------------------------------

/// A model that loaded keeps its promises: indices in range, finite numbers.
fn sound(model: &Model, what: &str) {
    let mesh = &model.meshes()[0];
    let vc = mesh.vertex_count();
    assert!(mesh.indices().iter().all(|&i| (i as usize) < vc), "{what}");
    for i in mesh.all_influences() {
        assert!(
            i.origin.iter().chain(&i.normal).all(|x| x.is_finite()),
            "{what}"
        );
    }
    assert!(
        mesh.texcoords()
            .unwrap()
            .iter()
            .flatten()
            .all(|x| x.is_finite()),
        "{what}"
    );
}

fn sweep_file(bytes: &[u8], name: &str) {
    let o = named(name);
    for len in 0..bytes.len() {
        let e = load_as(&bytes[..len], &o).expect_err("a prefix loaded");
        assert_eq!(e.code(), ErrorCode::Truncated, "{name} cut at {len}: {e}");
        assert!(
            e.offset().is_some_and(|at| at <= len as u64),
            "{name} cut at {len}: {e}"
        );
    }
    let mut rng = XorShift::new(0x3514);
    let positions = flip_positions(bytes.len(), &mut rng, 512);
    let tally = flip_bits(bytes, positions, |b, what| match load_as(b, &o) {
        Ok(m) => {
            sound(&m, what);
            // What loads without a warning saves again as it was read.
            let again = sims_msh::write_msh(&m).unwrap();
            if m.warnings().is_empty() {
                assert_eq!(again, b, "{name} {what}");
            }
            true
        }
        Err(e) => {
            assert!(CLEAN.contains(&e.code()), "{name} {what}: {e}");
            // The model's own range check (values beyond 1e9) names no byte; the reader's do.
            assert!(
                e.offset().is_some() || e.code() == ErrorCode::Limit,
                "{name} {what}: {e}"
            );
            false
        }
    });
    assert!(tally.loaded > 0 && tally.failed > 0, "{name}: {tally:?}");
}

#[test]
fn every_truncation_and_bit_flip_ends_cleanly() {
    let (bytes, _) = Fixture::square().bytes();
    sweep_file(&bytes, "xskin-a-HEAD-B.msh");
    let Some(dir) = corpus_subdir(
        "sims/proto1998",
        "every_truncation_and_bit_flip_ends_cleanly",
    ) else {
        return;
    };
    let name = "xskin-colonel-R_ARM1-SHOULDERL.msh";
    let bytes = std::fs::read(dir.join(name)).unwrap();
    sweep_file(&bytes, name);
}

// ---------------------------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------------------------

/// The one corpus file with normals that are not numbers (NaN in all three components).
const NOZZLE: &str = "xskin-suit-extinguisher-R_HAND-SUIT-EXTINGUISHER-NOZZLE.msh";

#[test]
fn every_corpus_file_loads_and_saves_byte_for_byte() {
    let Some(dir) = corpus_subdir(
        "sims/proto1998",
        "every_corpus_file_loads_and_saves_byte_for_byte",
    ) else {
        return;
    };
    let names = files_ending(&dir, &[".msh"]);
    assert_eq!(names.len(), 272);
    let (mut vertices, mut faces) = (0, 0);
    for name in &names {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let model = load_as(&bytes, &named(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        if name == NOZZLE {
            assert_eq!(model.warnings().len(), 1, "{name}");
            let w = model.warnings()[0].to_string();
            assert!(
                w.contains("7 vertices have a normal that is not a finite number"),
                "{w}"
            );
        } else {
            assert!(
                model.warnings().is_empty(),
                "{name}: {:?}",
                model.warnings()
            );
        }
        let auto = Model::load_file(dir.join(name), &LoadOptions::default()).unwrap();
        assert_eq!(auto.format(), Format::SimsMsh, "{name}");
        assert_eq!(auto.unbound(), model.unbound(), "{name}");
        let mesh = &model.meshes()[0];
        vertices += mesh.vertex_count();
        faces += mesh.triangle_count();
        assert_eq!(
            sims_msh::write_msh(&model).unwrap(),
            bytes,
            "{name}: not written back byte for byte"
        );
    }
    assert_eq!((vertices, faces), (5196, 7051));

    let name = "xskin-colonel-R_ARM1-SHOULDERL.msh";
    let model = Model::load_file(dir.join(name), &LoadOptions::default()).unwrap();
    let mesh = &model.meshes()[0];
    assert_eq!(
        model.unbound(),
        Some(&BoneSlots::ByName(vec![Name::from("R_ARM1")]))
    );
    assert_eq!(mesh.shader(), &Name::from("CshoulderEz1"));
    assert_eq!((mesh.vertex_count(), mesh.triangle_count()), (16, 25));
    assert_eq!(&mesh.indices()[..3], &[1, 0, 2]);
    let first = mesh.influences(0)[0];
    assert_eq!(first.origin, [0.031136764, 0.023489663, -0.19351974]);
    assert_eq!(first.normal, [-0.3439622, -0.032622173, -0.93841666]);
    assert_eq!(mesh.texcoords().unwrap()[0], [0.37134928, 0.17508817]);
    let layout = mesh.msh().unwrap();
    assert_eq!((layout.positions, layout.texcoords), (16, 16));
}

/// The suits' skins pair a bone with each mesh; the mesh's file name gives that same bone.
#[test]
fn each_file_name_gives_the_bone_its_suit_lists() {
    let Some(dir) = corpus_subdir(
        "sims/proto1998",
        "each_file_name_gives_the_bone_its_suit_lists",
    ) else {
        return;
    };
    let names = files_ending(&dir, &[".msh"]);
    let mut listed = std::collections::BTreeSet::new();
    for suit_file in files_ending(&dir, &[".cmx"]) {
        let file = ossa::format::cmx::parse(&std::fs::read(dir.join(&suit_file)).unwrap()).unwrap();
        let skins = file.suits.iter().flat_map(|s| &s.skins);
        for (bone, mesh) in skins.map(|k| (k.bone.to_string(), k.name.to_string())) {
            let file = format!("{mesh}.msh");
            let Some(name) = names.iter().find(|n| n.eq_ignore_ascii_case(&file)) else {
                continue;
            };
            listed.insert(name.clone());
            assert_eq!(
                sims_msh::bone_of_file_name(name),
                Some(bone.as_str()),
                "{suit_file}: {name}"
            );
        }
    }
    assert_eq!(listed.len(), 262);
    // The other ten name a bone of the skeleton too.
    let skeleton = Model::load_file(dir.join("colonelsuit.CMX"), &LoadOptions::default()).unwrap();
    for name in names.iter().filter(|n| !listed.contains(*n)) {
        let bone = sims_msh::bone_of_file_name(name).unwrap();
        assert!(skeleton.find_bone(bone).is_some(), "{name}: {bone}");
    }
}

/// The colonel's 29 meshes bound to his suit file's skeleton and skinned at rest: feet at y = 0,
/// the head on top.
#[test]
fn the_colonel_stands_on_the_floor() {
    let Some(dir) = corpus_subdir("sims/proto1998", "the_colonel_stands_on_the_floor") else {
        return;
    };
    let skeleton = Model::load_file(dir.join("colonelsuit.CMX"), &LoadOptions::default()).unwrap();
    let (mut low, mut high) = (f32::MAX, f32::MIN);
    let mut head_low = f32::MAX;
    let names: Vec<String> = files_ending(&dir, &[".msh"])
        .into_iter()
        .filter(|n| n.starts_with("xskin-colonel-"))
        .collect();
    assert_eq!(names.len(), 29);
    for name in &names {
        let mesh = Model::load_file(dir.join(name), &LoadOptions::default()).unwrap();
        let model = Model::bind(&mesh, &skeleton).unwrap_or_else(|e| panic!("{name}: {e}"));
        let bones = sweep::pose(&model, &[sweep::blend(0, 1.0)], None);
        let out = sweep::skin(&model, 0, &bones, 0);
        for p in &out.positions {
            low = low.min(p[1]);
            high = high.max(p[1]);
            if name.contains("-HEAD-") {
                head_low = head_low.min(p[1]);
            }
        }
    }
    eprintln!("colonel: y from {low} to {high}, head from {head_low}");
    assert!(low.abs() < 0.05, "lowest point at y = {low}");
    assert!(head_low > 0.8 * high, "head from {head_low}, top {high}");
}

// Keep the SKN/BMF module in view: its texture name convention ("x") is shared.
#[test]
fn an_untextured_bmf_converts_to_msh_and_back() {
    let skn = Model::load(SKN.as_bytes(), &options(Format::SimsSkn)).unwrap();
    let bmf = sims_mesh::write_bmf(&skn).unwrap();
    let from_bmf = Model::load(&bmf, &options(Format::SimsBmf)).unwrap();
    let msh = sims_msh::write_msh(&from_bmf).unwrap();
    let back = load(&msh).unwrap();
    assert_eq!(back.meshes()[0].shader(), &Name::from("skin"));
}

/// A mesh's texture is `Textures/NAME.png` beside it, as the prototype keeps them; names that
/// differ from the file's only in case find it, as on the game's filesystem.
#[cfg(feature = "gltf")]
#[test]
fn the_colonels_textures_are_found_in_textures_beside_the_meshes() {
    let Some(dir) = corpus_subdir(
        "sims/proto1998",
        "the_colonels_textures_are_found_in_textures_beside_the_meshes",
    ) else {
        return;
    };
    let names: Vec<String> = files_ending(&dir, &[".msh"])
        .into_iter()
        .filter(|n| n.starts_with("xskin-colonel-"))
        .collect();
    let mut found = 0;
    for name in &names {
        let path = dir.join(name);
        let model = Model::load_file(&path, &LoadOptions::default()).unwrap();
        let textures = ossa::textures::find_textures_beside(&model, &path, None, 0).unwrap();
        if let Some(i) = textures.mesh_images[0] {
            let image = &textures.images[i];
            assert_eq!(
                image.path.rsplit('/').nth(1),
                Some("Textures"),
                "{name}: {}",
                image.path
            );
            assert!(image.png.starts_with(b"\x89PNG"), "{name}");
            found += 1;
        } else {
            eprintln!("{name}: {:?}", textures.warnings);
        }
    }
    eprintln!("colonel: {found} of {} textures found", names.len());
    // Two name `CheadE`, found as `CHeadE.png` (the game's filesystem ignored case); the last
    // names `CneckF`, and only `CneckE.png` exists.
    assert_eq!(found, 28);
}

/// The optimiser's new vertex and triangle order carries the file's layout along: the mesh it
/// makes saves as a `.msh` that loads back as that same mesh, each vertex with its own words.
#[test]
fn the_layout_follows_the_optimisers_order() {
    use ossa::optimize::{OPTIMIZE_TRIANGLE_ORDER, OPTIMIZE_VERTEX_ORDER};
    let mut f = Fixture::square();
    // Vertex 3 first used last: the order changes.
    f.faces = vec![[3, 2, 0, 0], [0, 1, 2, 5], [1, 1, 2, 6]];
    let (bytes, _) = f.bytes();
    let model = load(&bytes).unwrap();
    let (optimized, report) = model
        .optimized(OPTIMIZE_TRIANGLE_ORDER | OPTIMIZE_VERTEX_ORDER)
        .unwrap();
    assert!(report.vertices_moved > 0, "{report:?}");
    let back = load(&sims_msh::write_msh(&optimized).unwrap()).unwrap();
    let (a, b) = (&optimized.meshes()[0], &back.meshes()[0]);
    assert_eq!(a.indices(), b.indices());
    assert_eq!(a.texcoords(), b.texcoords());
    assert_eq!(a.all_influences(), b.all_influences());
    assert_eq!(a.msh(), b.msh());
    // Each vertex keeps its last word, each face its own.
    let words: Vec<u32> = (0..4)
        .map(|v| {
            let origin = a.influences(v)[0].origin;
            let old = (0..4)
                .find(|&o| model.meshes()[0].influences(o)[0].origin == origin)
                .unwrap();
            assert_eq!(a.msh().unwrap().vertices[v][2], f.vertices[old][5]);
            a.msh().unwrap().vertices[v][2]
        })
        .collect();
    assert_eq!(words.len(), 4);
    let mut faces = a.msh().unwrap().faces.clone();
    faces.sort();
    assert_eq!(faces, [0, 5, 6]);
}
