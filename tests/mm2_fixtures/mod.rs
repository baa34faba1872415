//! Small MM2 files written by hand, line by line, from the Mm2kiwi pages and the Blender
//! addon's readers (never with ossa's writers): shared by the MM2 test binaries, each of which
//! uses a part of them.
#![allow(dead_code)]

#[path = "../load_options/mod.rs"]
mod load_options;
pub use load_options::{options, strict};

/// Lines joined with LF, ending with one.
pub fn text(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The example as the page prints it: `NumBones 3`, and four bones.
pub const SEED: [&str; 14] = [
    "NumBones 3",
    "bone root {",
    "   offset 0.000570 1.109821 -0.000000",
    "   bone spine {",
    "      offset 0.000000 0.034733 -0.000000",
    "      bone neck {",
    "         offset 0.000000 0.329534 -0.000000",
    "         bone head {",
    "            offset 0.000000 0.107686 -0.000000",
    "         }",
    "      }",
    "   }",
    "}",
    "",
];

pub fn seed(eol: &str) -> String {
    SEED.join(eol)
}

/// Two bones: hips at (0, 1, 0), chest at hips + (0, 0.5, 0.25) = (0, 1.5, 0.25). Tabs, a
/// brace against a name, a blank line and an unknown keyword (skipped with a warning).
pub const DOLL_SKEL: [&str; 9] = [
    "NumBones 2",
    "",
    "bone hips{",
    "\toffset 0 1 0",
    "\tbone chest {",
    "\t\tmirror chest",
    "\t\toffset 0 0.5 0.25",
    "\t}",
    "}",
];

/// Version 1.09 without packets (the woman model's layout). Positions 0 and 1 are the hips'
/// (`mtxv 2 2`), 2 and 3 the chest's; normal 0 the hips', 1 the chest's. Material `doll:legs`
/// owns corners 0..3 and primitive 0; `doll:torso` corners 3..7 and primitives 1 and 2. The
/// primitives index the whole corner list.
pub const DOLL_MOD: [&str; 44] = [
    "version: 1.09",
    "verts: 4",
    "normals: 2",
    "colors: 1",
    "tex1s: 4",
    "tex2s: 0",
    "tangents: 0",
    "materials: 2",
    "adjuncts: 7",
    "primitives: 3",
    "matrices: 2",
    "",
    "v\t0.5\t0\t0",
    "v\t-0.5\t0\t0",
    "v\t0\t0.25\t0",
    "v\t0\t0\t0.5",
    "n\t0\t0\t1",
    "n\t0\t1\t0",
    "c\t1\t1\t1\t1",
    "t1\t0\t0",
    "t1\t1\t0",
    "t1\t0\t1",
    "t1\t1\t1",
    "mtl doll:legs {",
    "\tadjuncts:\t3",
    "\tprimitives:\t1",
    "\ttextures:\t0",
    "\tillum:\tdiffuse",
    "}",
    "mtl doll:torso {",
    "\tadjuncts:\t4",
    "\tprimitives:\t2",
    "\ttexture: 0 \"torso skin\"",
    "}",
    "adj 0 0 0 0 0",
    "adj 1 0 0 1 0",
    "adj 2 1 0 2 0",
    "adj 0 0 0 0 0",
    "adj 2 1 0 2 0",
    "adj 3 1 0 3 0",
    "adj 1 0 0 1 0",
    "tri 0 1 2",
    "str 4 3 4 5 6",
    "stp 3 6 5 3",
];

pub const DOLL_RUNS: [&str; 2] = ["mtxv 2 2", "mtxn 1 1"];

pub fn doll_skel() -> String {
    text(&DOLL_SKEL)
}

pub fn doll_mod() -> String {
    text(&[&DOLL_MOD[..], &DOLL_RUNS[..]].concat())
}

/// The same doll with packets (the man model's layout): corners carry a sixth number, an index
/// into their packet's `mtx` bones; primitives index the packet's own corners.
pub const PACKET_MOD: [&str; 34] = [
    "version: 1.10",
    "verts: 4",
    "normals: 2",
    "colors: 1",
    "tex1s: 1",
    "tex2s: 0",
    "tangents: 0",
    "materials: 1",
    "adjuncts: 6",
    "primitives: 2",
    "matrices: 2",
    "reskins: 1",
    "v 0.5 0 0",
    "v -0.5 0 0",
    "v 0 0.25 0",
    "v 0 0 0.5",
    "n 0 0 1",
    "n 0 1 0",
    "c 1 1 1 1",
    "t1 0.25 0.75",
    "mtl doll:body {",
    "\tpackets: 2",
    "\tprimitives: 2",
    "\tattributes: 1",
    "\tfloat shininess: 0.5",
    "}",
    "packet 3 1 2 {",
    "\tadj 0 0 0 0 0 0",
    "\tadj 1 0 0 0 0 0",
    "\tadj 2 1 0 0 0 1",
    "\ttri 0 1 2",
    "\tmtx 0 1",
    "}",
    "packet 3 1 1 0 {",
];

pub const PACKET_TAIL: [&str; 7] = [
    "\tadj 3 1 0 0 0 0",
    "\tadj 2 1 0 0 0 0",
    "\tadj 3 1 0 0 0 0",
    "\ttri 2 1 0",
    "\tmtx 1",
    "}",
    "mtxv 2 2",
];

pub fn packet_mod() -> String {
    text(&[&PACKET_MOD[..], &PACKET_TAIL[..], &["mtxn 1 1"][..]].concat())
}

/// The doll's `.mod` bound to its `.skel`, loaded by ossa: a generated model for the checks
/// that take every format's models (glTF export and import).
pub fn doll() -> ossa::Model {
    let load = |text: String, format| ossa::Model::load(text.as_bytes(), &options(format)).unwrap();
    let mesh = load(doll_mod(), ossa::Format::Mm2Mod);
    let skeleton = load(doll_skel(), ossa::Format::Mm2Skel);
    ossa::Model::bind(&mesh, &skeleton).unwrap()
}
