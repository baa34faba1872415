//! The densest files of the mesh formats that have no writer for models dense in one thing:
//! Sims SKN and BMF, Sims MSH and MM2 `.mod`, built by hand with every record as short as the
//! format lets it be (one-character numbers, one-byte names, indices 0), and each file dense in
//! one kind of record: vertices, faces, bone bindings, blends, names. And DPM files dense in
//! what the library's models dense in vertices, frames or bones are not: meshes, palette sets.
#![allow(dead_code)]

use ossa::{Bone, Format, Frame, Influence, Mat3x4, MeshParts, Model, ModelParts, Name};

/// About how many bytes each file is made to hold.
pub const SIZE: usize = 1 << 20;

/// What an SKN or BMF holds: `bones` one-letter bone names, `faces` faces `0 0 0`, one binding
/// of the real vertices and blends and `bindings` empty ones more, `real` real vertices, and
/// `blends` blends of vertex 0 at weight 0, each with its blend vertex.
#[derive(Clone, Copy)]
pub struct Sims {
    pub bones: usize,
    pub faces: usize,
    pub bindings: usize,
    pub real: usize,
    pub blends: usize,
}

impl Sims {
    /// One of each: a face on the one real vertex, which the one binding holds.
    pub const ONE: Sims = Sims {
        bones: 1,
        faces: 1,
        bindings: 0,
        real: 1,
        blends: 0,
    };

    pub fn skn(self) -> Vec<u8> {
        let mut t = String::from("s\nx\n");
        let line = |t: &mut String, count: usize, record: &str| {
            t.push_str(&format!("{count}\n"));
            for _ in 0..count {
                t.push_str(record);
            }
        };
        line(&mut t, self.bones, "a\n");
        line(&mut t, self.faces, "0 0 0\n");
        t.push_str(&format!(
            "{}\n0 0 {} 0 {}\n",
            self.bindings + 1,
            self.real,
            self.blends
        ));
        for _ in 0..self.bindings {
            t.push_str("0 0 0 0 0\n");
        }
        line(&mut t, self.real, "0 0\n");
        line(&mut t, self.blends, "0 0\n");
        line(&mut t, self.real + self.blends, "0 0 0 0 0 0\n");
        t.into_bytes()
    }

    pub fn bmf(self) -> Vec<u8> {
        let mut b = vec![1, b's', 1, b'x'];
        let u32s = |b: &mut Vec<u8>, values: &[u32]| {
            for v in values {
                b.extend_from_slice(&v.to_le_bytes());
            }
        };
        u32s(&mut b, &[self.bones as u32]);
        for _ in 0..self.bones {
            b.extend_from_slice(&[1, b'a']);
        }
        u32s(&mut b, &[self.faces as u32]);
        b.resize(b.len() + 12 * self.faces, 0);
        u32s(
            &mut b,
            &[
                self.bindings as u32 + 1,
                0,
                0,
                self.real as u32,
                0,
                self.blends as u32,
            ],
        );
        b.resize(b.len() + 20 * self.bindings, 0);
        u32s(&mut b, &[self.real as u32]);
        b.resize(b.len() + 8 * self.real, 0);
        u32s(&mut b, &[self.blends as u32]);
        b.resize(b.len() + 8 * self.blends, 0);
        u32s(&mut b, &[(self.real + self.blends) as u32]);
        b.resize(b.len() + 24 * (self.real + self.blends), 0);
        b
    }
}

/// What an MSH holds: `positions`, `texcoords` and `vertices` all zero, `faces` `0 0 0`.
pub fn msh(positions: usize, texcoords: usize, faces: usize, vertices: usize) -> Vec<u8> {
    let mut b = b"\xb2\xb0\xb0\xb0".to_vec();
    for (count, size) in [(positions, 12), (texcoords, 8), (faces, 16), (vertices, 24)] {
        b.extend_from_slice(&(count as u32).to_le_bytes());
        b.extend_from_slice(&(size as u32).to_le_bytes());
        b.resize(b.len() + count * size, 0);
    }
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    b.push(b'x');
    b
}

/// What a `.mod` holds: `positions` `v 0 0 0` records, `corners` `adj 0 0 0 0 0`, `faces`
/// `tri 0 0 0` (all in one material), `materials` empty materials more, and `bones` bones in
/// `mtxv` (the first holds every position). With `adjuncts`, each material says how many of
/// the corners are its own (`adjuncts:`); without, a material holds the corners its faces use.
#[derive(Clone, Copy)]
pub struct Mod {
    pub positions: usize,
    pub corners: usize,
    pub faces: usize,
    pub materials: usize,
    pub bones: usize,
    pub adjuncts: bool,
}

impl Mod {
    pub const ONE: Mod = Mod {
        positions: 1,
        corners: 1,
        faces: 1,
        materials: 0,
        bones: 1,
        adjuncts: true,
    };

    pub fn text(self) -> Vec<u8> {
        let mut t = format!("version: 1.09\nmatrices: {}\n", self.bones);
        let material = |t: &mut String, corners: usize, faces: usize| {
            t.push_str("mtl a {\n");
            if self.adjuncts {
                t.push_str(&format!("adjuncts: {corners}\n"));
            }
            t.push_str(&format!("primitives: {faces}\n}}\n"));
        };
        material(&mut t, self.corners, self.faces);
        for _ in 0..self.materials {
            material(&mut t, 0, 0);
        }
        t.push_str(&"v 0 0 0\n".repeat(self.positions));
        t.push_str(&"adj 0 0 0 0 0\n".repeat(self.corners));
        t.push_str(&"tri 0 0 0\n".repeat(self.faces));
        t.push_str(&format!("mtxv {}", self.positions));
        t.push_str(&" 0".repeat(self.bones - 1));
        t.push('\n');
        t.into_bytes()
    }
}

/// How many records of `each` bytes fill about [`SIZE`] bytes: one more than a power of two,
/// so that a list that doubles as it grows ends with room for twice them.
fn fill(each: usize) -> usize {
    (SIZE / each).next_power_of_two() / 2 + 1
}

/// What a file is dense in, the bytes of one record (in SKN, then in BMF), and how a file of
/// `n` of them is set.
type Dense<T, const N: usize> = (&'static str, [usize; N], fn(&mut T, usize));

/// Every dense file, by format, with what it is dense in.
pub fn files() -> Vec<(Format, String, Vec<u8>)> {
    let mut out = Vec::new();
    let sims: [Dense<Sims, 2>; 5] = [
        ("real vertices", [16, 32], |s, n| s.real = n),
        ("faces", [6, 12], |s, n| s.faces = n),
        ("bindings", [10, 20], |s, n| s.bindings = n),
        ("blends", [16, 32], |s, n| s.blends = n),
        ("bone names", [2, 2], |s, n| s.bones = n),
    ];
    for (what, [text, binary], set) in sims {
        let dense = |each| {
            let mut s = Sims::ONE;
            set(&mut s, fill(each));
            s
        };
        out.push((Format::SimsSkn, format!("hand: {what}"), dense(text).skn()));
        out.push((
            Format::SimsBmf,
            format!("hand: {what}"),
            dense(binary).bmf(),
        ));
    }
    for (what, bytes) in [
        ("vertices", msh(1, 1, 1, fill(24))),
        ("faces", msh(1, 1, fill(16), 1)),
        ("positions", msh(fill(12), 1, 1, 1)),
        ("texture coordinates", msh(1, fill(8), 1, 1)),
    ] {
        out.push((Format::SimsMsh, format!("hand: {what}"), bytes));
    }
    let mods: [Dense<Mod, 1>; 5] = [
        ("corners", [14], |m, n| m.corners = n),
        ("positions", [8], |m, n| m.positions = n),
        ("faces", [10], |m, n| m.faces = n),
        ("materials", [23], |m, n| {
            m.materials = n;
            m.adjuncts = false;
        }),
        ("bones", [2], |m, n| m.bones = n),
    ];
    for (what, [each], set) in mods {
        let mut m = Mod::ONE;
        set(&mut m, fill(each));
        out.push((Format::Mm2Mod, format!("hand: {what}"), m.text()));
    }
    out
}

/// A DPM model of `bones` bones in a chain, at rest, one frame.
fn dpm_parts(bones: usize) -> ModelParts {
    let mut parts = ModelParts::new(Format::Dpm);
    parts.bones = (0..bones)
        .map(|b| Bone {
            name: Name::from(format!("b{b}").as_str()),
            parent: b as i32 - 1,
            flags: 0,
        })
        .collect();
    parts.frames = vec![Frame::named("f")];
    parts.poses = vec![Mat3x4::IDENTITY; bones].into();
    parts
}

/// A mesh of `vertices` vertices, each of `influences(v)`, and one triangle when it has three
/// vertices.
fn dpm_mesh(vertices: usize, influences: impl Fn(usize) -> Vec<Influence>) -> MeshParts {
    let mut starts = vec![0u32];
    let mut all = Vec::new();
    for v in 0..vertices {
        all.extend(influences(v));
        starts.push(all.len() as u32);
    }
    MeshParts {
        name: Name::from("m"),
        shader: Name::from("s"),
        influence_start: starts,
        influences: all,
        indices: if vertices >= 3 {
            vec![0, 1, 2]
        } else {
            Vec::new()
        },
        texcoords: Some(vec![[0.0; 2]; vertices]),
        ..MeshParts::default()
    }
}

/// `origin` on `bone`, of weight `weight`.
fn influence(bone: u32, weight: f32, origin: [f32; 3]) -> Influence {
    Influence {
        origin: origin.map(|x| x * weight),
        weight,
        normal: [0.0, 0.0, weight],
        bone,
    }
}

/// DPM files dense in what makes a model's meshes cost most: meshes without vertices (a
/// 56-byte header each), vertices of two influences whose weights no other vertex has (each a
/// palette set of its own), and small meshes each on another bone of many.
pub fn dpm_files() -> Vec<(String, Vec<u8>)> {
    let mut empty = dpm_parts(1);
    empty.meshes = (0..10_000).map(|_| dpm_mesh(0, |_| Vec::new())).collect();
    let mut sets = dpm_parts(2);
    let n = 20_000;
    sets.meshes = vec![dpm_mesh(n, |v| {
        let w = (v + 1) as f32 / (n + 2) as f32;
        let p = [1.0 + (v % 7) as f32, 2.0, 3.0];
        vec![influence(0, w, p), influence(1, 1.0 - w, p)]
    })];
    let mut spread = dpm_parts(2000);
    spread.meshes = (0..2000)
        .map(|m| dpm_mesh(3, |_| vec![influence(m as u32, 1.0, [0.0; 3])]))
        .collect();
    [
        ("hand: empty meshes", empty),
        ("hand: a palette set a vertex", sets),
        ("hand: a mesh a bone", spread),
    ]
    .into_iter()
    .map(|(what, parts)| {
        let model = Model::from_parts(parts).expect("a valid model");
        let bytes = ossa::dpm::write(&model).expect("a DPM");
        (what.to_owned(), bytes)
    })
    .collect()
}
