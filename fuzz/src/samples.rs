//! Small valid files of every format, made by ossa's own writers from models built in code: the
//! fuzzers' seed corpora (`examples/fuzz_seeds.rs`), the models the pose and skin fuzzer drives,
//! and what the hostile-input tests corrupt. Formats without a writer get hand-written files.
//!
//! Shared by the fuzz crate, the seed generator and `tests/hostile_all.rs`, which each include
//! this file; each uses a different part of it.
#![allow(dead_code)]

use ossa::format::cmx::{CharacterFile, Motion, Skill};
use ossa::format::{cfp, cmx};
use ossa::synth::TubeRig;
use ossa::{BoneSlots, Format, Influence, MeshParts, Model, ModelParts, Name, dpm, mm2, skm};

/// Writes a model as one format; it may refuse a model the format cannot hold.
pub type Writer = fn(&Model) -> ossa::Result<Vec<u8>>;

/// Every writer, one line per format that has one: each is tried on every sample model, and
/// each file it writes is a sample of its format.
pub const WRITERS: &[(Format, Writer)] = &[
    (Format::Dpm, ossa::dpm::write),
    (Format::Skm, ossa::skm::write_skm),
    (Format::Skp, ossa::skm::write_skp),
    (Format::SimsSkn, ossa::sims_mesh::write_skn),
    (Format::SimsBmf, ossa::sims_mesh::write_bmf),
    (Format::SimsMsh, ossa::sims_msh::write_msh),
    (Format::SimsCmx, ossa::cmx::write_cmx),
    (Format::SimsBcf, ossa::cmx::write_bcf),
    (Format::Mm2Skel, ossa::mm2::write_skel),
    (Format::Mm2Mod, ossa::mm2::write_mod),
    (Format::Dmf, ossa::dmf::write_binary),
    (Format::DmfJson, ossa::dmf::write_json),
    (Format::Iqm, write_iqm),
];

fn write_iqm(model: &Model) -> ossa::Result<Vec<u8>> {
    ossa::iqm::write(model, &ossa::iqm::WriteOptions::default())
}

/// A file of one format.
#[derive(Clone, Debug)]
pub struct Sample {
    pub format: Format,
    /// What it was made from: a sample model's name, `skill` for the skill file, or `hand` for
    /// a hand-written file.
    pub origin: &'static str,
    pub bytes: Vec<u8>,
}

/// A chain of `bones` bones with a tube around it, with `frames` frames (1: a static model).
pub fn tube(bones: u32, sides: u32, frames: u32) -> Model {
    TubeRig {
        bones,
        bone_length: 4.0,
        radius: 1.0,
        rings_per_bone: 1,
        sides,
        frames,
        bend: 0.5,
    }
    .build()
    .expect("a tube rig is a valid model")
}

/// A two-bone tube whose mesh has two skins of its own (one of two textures) and whose first
/// scene has an event: IQM writes them as FTE's `FTE_SKINS` and `FTE_EVENT`.
pub fn skinned_tube() -> Model {
    let mut parts = TubeRig {
        bones: 2,
        bone_length: 4.0,
        radius: 1.0,
        rings_per_bone: 1,
        sides: 3,
        frames: 2,
        bend: 0.5,
    }
    .parts();
    let frame = |material: &str| ossa::SkinFrame {
        material: material.into(),
        shader_text: Name::empty(),
    };
    parts.meshes[0].skins = vec![
        ossa::MeshSkin {
            frames: vec![frame("red")],
            interval: 0.0,
        },
        ossa::MeshSkin {
            frames: vec![frame("blue"), frame("glow")],
            interval: 0.5,
        },
    ];
    parts.events.push(ossa::model::AnimationEvent {
        animation: 0,
        time: 0.0,
        bone: -1,
        key: "7".into(),
        value: "hit".into(),
    });
    Model::from_parts(parts).expect("a tube rig is a valid model")
}

/// The tube's bone names, as Sims meshes name them.
fn tube_bone(i: u32) -> Name {
    Name::from(format!("bone{i}").as_str())
}

/// A Sims-style mesh waiting for a skeleton with bones `bone0`..`bone{bones-1}` (by name): a
/// triangle of rigid vertices on each bone, and on every bone but the first one vertex that a
/// blend pulls a quarter of the way towards a point on the bone before.
pub fn sims_mesh(bones: u32) -> Model {
    let mut influence_start = vec![0u32];
    let mut influences = Vec::new();
    let mut indices = Vec::new();
    let mut texcoords = Vec::new();
    for b in 0..bones {
        let first = (influence_start.len() - 1) as u32;
        for k in 0..3u32 {
            let point = [k as f32 * 0.5, 0.25 * b as f32, 1.0 - k as f32 * 0.25];
            let normal = [0.0, 0.0, 1.0];
            if k == 2 && b > 0 {
                let w = 0.25f32;
                influences.push(Influence {
                    origin: point.map(|x| x * (1.0 - w)),
                    weight: 1.0 - w,
                    normal,
                    bone: b,
                });
                influences.push(Influence {
                    origin: [0.5 * w, 3.0 * w, 0.0],
                    weight: w,
                    normal: [0.0; 3],
                    bone: b - 1,
                });
            } else {
                influences.push(Influence {
                    origin: point,
                    weight: 1.0,
                    normal,
                    bone: b,
                });
            }
            influence_start.push(influences.len() as u32);
            texcoords.push([k as f32 * 0.5, b as f32 / bones as f32]);
        }
        indices.extend_from_slice(&[first, first + 1, first + 2]);
    }
    let mut parts = ModelParts::new(Format::SimsSkn);
    parts.up_axis = 1;
    parts.handedness = -1;
    parts.unbound = Some(BoneSlots::ByName((0..bones).map(tube_bone).collect()));
    parts.meshes = vec![MeshParts {
        name: Name::from("xskin-fuzz-BODY"),
        shader: Name::from("x"),
        influence_start,
        influences,
        indices,
        texcoords: Some(texcoords),
        ..MeshParts::default()
    }];
    Model::from_parts(parts).expect("the Sims mesh is a valid model")
}

/// The animation (CFP file name) of [`skill_file`]'s skill.
pub const SKILL_ANIMATION: &str = "xskill-fuzz";

/// A character file with one looping skill on a tube skeleton: `bone1` turns over 4 frames and
/// `bone0` moves over 2, in 133 ms; its values are in `SKILL_ANIMATION.cfp` ([`skill_cfp`]).
pub fn skill_file() -> CharacterFile {
    let motion = |bone: &str, frames: u32, translation: bool| Motion {
        bone: Name::from(bone),
        frame_count: frames,
        duration: 133.0,
        has_translation: translation,
        has_rotation: !translation,
        translation_offset: if translation { 0 } else { -1 },
        rotation_offset: if translation { -1 } else { 0 },
        property_lists: Vec::new(),
        time_property_lists: Vec::new(),
    };
    CharacterFile {
        version: Some(300),
        skills: vec![Skill {
            name: Name::from("a2o-fuzz-loop"),
            animation: Name::from(SKILL_ANIMATION),
            duration: 133.0,
            distance: 0.0,
            moving: false,
            translation_count: 2,
            rotation_count: 4,
            motions: vec![motion("bone1", 4, false), motion("bone0", 2, true)],
        }],
        ..CharacterFile::default()
    }
}

/// The CFP of [`skill_file`]'s skill: exact (full floats and repeats), or with deltas.
pub fn skill_cfp(lossy: bool) -> Vec<u8> {
    let translations = [[0.0, 3.0, 0.0], [0.0, 3.25, 0.5]];
    let rotations: Vec<[f32; 4]> = (0..4)
        .map(|i| {
            let half = i as f32 * 0.1;
            [half.sin(), 0.0, 0.0, half.cos()]
        })
        .collect();
    cfp::encode_skill(&translations, &rotations, lossy.then_some(0.001))
}

/// [`skill_file`] as CMX text or, with `binary`, as a BCF.
pub fn skill_file_bytes(binary: bool) -> Vec<u8> {
    cmx::write_character(&skill_file(), binary).expect("the skill file is writable")
}

/// The models every writer is tried on, by name.
pub fn models() -> Vec<(&'static str, Model)> {
    vec![
        ("tube", tube(3, 3, 3)),
        // One bone: small enough that every writer's file of it stays under 1 KiB, and with
        // one influence per vertex, as Sims meshes have.
        ("small", tube(1, 3, 2)),
        ("static", tube(1, 3, 1)),
        ("sims", sims_mesh(3)),
        ("skins", skinned_tube()),
    ]
}

/// A filesystem that holds one file under every name.
pub struct OneFile(pub Vec<u8>);

impl ossa::io::FileSystem for OneFile {
    fn read(&self, _path: &str) -> ossa::Result<ossa::io::FileData<'_>> {
        Ok(Box::new(self.0.as_slice()))
    }
}

/// Every file the writers make of the sample models, then the hand-written ones.
pub fn samples() -> Vec<Sample> {
    let mut out = Vec::new();
    for (origin, model) in models() {
        for &(format, write) in WRITERS {
            if let Ok(bytes) = write(&model) {
                out.push(Sample {
                    format,
                    origin,
                    bytes,
                });
            }
        }
    }
    out.extend(hand_written());
    out
}

/// The samples of one format (all of them for [`Format::Auto`]).
pub fn samples_of(format: Format) -> Vec<Sample> {
    samples()
        .into_iter()
        .filter(|s| format == Format::Auto || s.format == format)
        .collect()
}

/// An MM2 pedestrian skeleton as the format's documentation shows it (FORMATS.md §5.1).
pub const MM2_SKEL: &str = "NumBones 4
bone root {
   offset 0.000570 1.109821 -0.000000
   bone spine {
      offset 0.000000 0.034733 -0.000000
      bone neck {
         offset 0.000000 0.329534 -0.000000
         bone head {
            offset 0.000000 0.107686 -0.000000
         }
      }
   }
}
";

/// An MM2 text mesh of one triangle per bone of [`MM2_SKEL`]'s first two bones (FORMATS.md §5.2).
pub const MM2_MOD: &str = "version: 1.09
verts: 6
normals: 1
colors: 0
tex1s: 3
tex2s: 0
tangents: 0
materials: 1
adjuncts: 6
primitives: 2
matrices: 4
v 0.000000 0.000000 0.000000
v 0.100000 0.000000 0.000000
v 0.000000 0.100000 0.000000
v 0.000000 0.000000 0.000000
v 0.100000 0.000000 0.000000
v 0.000000 0.100000 0.000000
n 0.000000 0.000000 1.000000
t1 0.000000 0.000000
t1 1.000000 0.000000
t1 0.000000 1.000000
mtl pedskin {
\tpackets: 1
\tprimitives: 2
\ttextures: 1
\ttexture: 0 \"pedtex\"
}
adj 0 0 0 0 0
adj 1 0 0 1 0
adj 2 0 0 2 0
adj 3 0 0 0 0
adj 4 0 0 1 0
adj 5 0 0 2 0
tri 0 1 2
tri 3 4 5
mtxv 3 3 0 0
mtxn 1 0 0 0
";

/// A DMF 1.5 JSON model (FORMATS.md §6.1): two bones, three vertices, one face, one animation,
/// with the specification's own spellings of `verterices` and `verex_color`.
pub const DMF_JSON: &str = r#"{"format":"DASH","version":"1.5","textures":[],
"materials":[{"name":"skin","id":0,"texture_id":-1}],
"verterices":[
 {"pos":[0,0,0],"skin_index":[0,-1,-1,-1],"skin_weight":[1,0,0,0]},
 {"pos":[1,0,0],"skin_index":[0,1,-1,-1],"skin_weight":[0.5,0.5,0,0]},
 {"pos":[0,1,0],"skin_index":[1,-1,-1,-1],"skin_weight":[1,0,0,0]}],
"faces":[{"material":0,"indices":[0,1,2],
 "verex_color":["rgba(255,255,255,1)","rgba(255,255,255,1)","rgba(255,255,255,1)"],
 "normals":[[0,0,1],[0,0,1],[0,0,1]],"diffuse_uv":[[0,0],[1,0],[0,1]]}],
"skeleton":[
 {"name":"root","id":0,"parent_id":-1,"matrix":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]},
 {"name":"tip","id":1,"parent_id":0,"matrix":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1]}],
"animations":[{"id":0,"name":"bend","fps":30,"duration":1.0,"tracks":[
 {"bone_id":1,"time":0,"rot":[0,0,0,1]},
 {"bone_id":1,"time":1,"pos":[0,1,0],"rot":[0,0,0.3826834,0.9238795],"scl":[1,1,1]}]}]}
"#;

/// A binary DMF 1.5 (FORMATS.md §6.1) of the same two bones and three vertices, one face, no
/// textures, materials or animations: the header, the attribute table, then each table.
pub fn dmf_binary() -> Vec<u8> {
    let mut vert = Vec::new();
    for (pos, bones, weights) in [
        (
            [0.0f32, 0.0, 0.0],
            [0i16, -1, -1, -1],
            [1.0f32, 0.0, 0.0, 0.0],
        ),
        ([1.0, 0.0, 0.0], [0, 1, -1, -1], [0.5, 0.5, 0.0, 0.0]),
        ([0.0, 1.0, 0.0], [1, -1, -1, -1], [1.0, 0.0, 0.0, 0.0]),
    ] {
        pos.iter().for_each(|x| vert.extend(x.to_le_bytes()));
        bones.iter().for_each(|x| vert.extend(x.to_le_bytes()));
        weights.iter().for_each(|x| vert.extend(x.to_le_bytes()));
    }
    let mut face = Vec::new();
    face.extend([0u8; 4]);
    [0u32, 1, 2]
        .iter()
        .for_each(|x| face.extend(x.to_le_bytes()));
    face.extend([0xFF; 12]);
    for _ in 0..3 {
        [0.0f32, 0.0, 1.0]
            .iter()
            .for_each(|x| face.extend(x.to_le_bytes()));
    }
    [0.0f32, 0.0, 1.0, 0.0, 0.0, 1.0]
        .iter()
        .for_each(|x| face.extend(x.to_le_bytes()));
    let mut bone = Vec::new();
    for (i, (name, parent, ty)) in [("root", -1i16, 0.0f32), ("tip", 0, 1.0)]
        .iter()
        .enumerate()
    {
        let mut field = [0u8; 32];
        field[..name.len()].copy_from_slice(name.as_bytes());
        bone.extend(field);
        bone.extend((i as i16).to_le_bytes());
        bone.extend(parent.to_le_bytes());
        bone.extend([0u8; 12]);
        let matrix = [
            1.0f32, 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., *ty, 0., 1.,
        ];
        matrix.iter().for_each(|x| bone.extend(x.to_le_bytes()));
    }
    let tables: [(&[u8; 4], &[u8], u32); 6] = [
        (b"tex\0", &[], 0),
        (b"mat\0", &[], 0),
        (b"vert", &vert, 3),
        (b"face", &face, 1),
        (b"bone", &bone, 2),
        (b"anim", &[], 0),
    ];
    let mut out = Vec::new();
    out.extend(b"DASH");
    out.extend(1u16.to_le_bytes());
    out.extend(5u16.to_le_bytes());
    out.extend(0x10u32.to_le_bytes());
    out.extend(6u32.to_le_bytes());
    let mut offset = 0x10 + 6 * 16;
    for (label, bytes, count) in tables {
        out.extend(label);
        out.extend(0u32.to_le_bytes());
        out.extend((offset as u32).to_le_bytes());
        out.extend(count.to_le_bytes());
        offset += bytes.len();
    }
    for (_, bytes, _) in tables {
        out.extend(bytes);
    }
    out
}

/// Files of the formats that have no writer yet, and a skill file in both encodings (skill
/// files load as character files too).
pub fn hand_written() -> Vec<Sample> {
    let sample = |format, origin, bytes: Vec<u8>| Sample {
        format,
        origin,
        bytes,
    };
    vec![
        sample(Format::Mm2Skel, "hand", MM2_SKEL.into()),
        sample(Format::Mm2Mod, "hand", MM2_MOD.into()),
        sample(Format::DmfJson, "hand", DMF_JSON.into()),
        sample(Format::Dmf, "hand", dmf_binary()),
        sample(Format::SimsCmx, "skill", skill_file_bytes(false)),
        sample(Format::SimsBcf, "skill", skill_file_bytes(true)),
    ]
}

/// Formats the meshes file of the bind target is read as, chosen by its first byte.
pub const MESH_FORMATS: [Format; 5] = [
    Format::Skm,
    Format::SimsSkn,
    Format::SimsBmf,
    Format::Mm2Mod,
    Format::Auto,
];

/// Formats the skeleton file of the bind target is read as, chosen by its second byte.
pub const SKELETON_FORMATS: [Format; 5] = [
    Format::Skp,
    Format::SimsCmx,
    Format::SimsBcf,
    Format::Mm2Skel,
    Format::Auto,
];

/// An input of the bind target: the meshes file read as `mesh_format`, the skeleton file as
/// `skeleton_format` (each one of the lists above).
pub fn bind_input(
    mesh_format: Format,
    meshes: &[u8],
    skeleton_format: Format,
    skeleton: &[u8],
) -> Vec<u8> {
    let index = |list: &[Format], f| list.iter().position(|&x| x == f).unwrap_or(list.len() - 1);
    let mut out = vec![
        index(&MESH_FORMATS, mesh_format) as u8,
        index(&SKELETON_FORMATS, skeleton_format) as u8,
    ];
    out.extend(join_two(meshes, skeleton));
    out
}

/// Two inputs in one, as the fuzzers that take two files read them: the first's length as a
/// little-endian u32, the first, then the second.
pub fn join_two(first: &[u8], second: &[u8]) -> Vec<u8> {
    let mut out = (first.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(first);
    out.extend_from_slice(second);
    out
}

/// The inverse of [`join_two`] for any bytes: a length past the end gives the first everything.
pub fn split_two(data: &[u8]) -> (&[u8], &[u8]) {
    let Some((len, rest)) = data.split_first_chunk::<4>() else {
        return (data, &[]);
    };
    let len = (u32::from_le_bytes(*len) as usize).min(rest.len());
    rest.split_at(len)
}

/// Inputs for the pose_skin target (`fuzz/src/pose_skin.rs` reads them) that make each of its
/// calls on each of its models with valid arguments.
pub fn pose_skin_seeds() -> Vec<Vec<u8>> {
    // The identity as the target reads matrix entries: (byte - 128) / 16.
    let identity = [144, 128, 128, 128, 128, 144, 128, 128, 128, 128, 144, 128];
    // pose: two blends (frame 0 weight 1, frame 1 weight 0.5), a root, the model's bone count
    let mut pose = vec![0, 2, 0, 64, 1, 32, 1];
    pose.extend(identity);
    pose.push(0);
    let calls: [&[u8]; 8] = [
        &pose,
        // pose, left local: frame 1
        &[1, 1, 1, 64, 0],
        // skin: mesh 0 from vertex 0 to its end, normalised, normals interleaved at 32 bytes
        &[2, 0, 0, 0, 200, 2, 5, 0, 0],
        // bind vertices: normals in a buffer of their own, both packed
        &[3, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0],
        // the blend 0.3 s into scene 0
        &[4, 0, 133],
        // gpu weights: four per vertex
        &[5, 0, 4, 0],
        // skinning matrices, then the inverse bind pose
        &[6, 0, 0],
        &[6, 0, 1],
    ];
    (0..5u8)
        .map(|model| {
            let mut seed = vec![model];
            calls.iter().for_each(|c| seed.extend_from_slice(c));
            seed
        })
        .collect()
}

/// The load_file target (`fuzz/src/load_file.rs`): the paths its entries may have: the models of [`LOAD_FILE_MODELS`] and the sidecars each engine
/// looks for beside them.
pub const LOAD_FILE_NAMES: [&str; 16] = [
    "m.dpm",
    "m.dpm.framegroups",
    "m.skm",
    "m.cfg",
    "m.skp",
    "models/p/tris.skp",
    "m_2.skm",
    "ped.mod",
    "ped.skel",
    "anims/c.cmx",
    "anims/xskill-fuzz.cfp",
    "anims/a.cfp",
    "sub/m.dpm",
    "sub/m.dpm.framegroups",
    "m_2.cfg",
    "sub/m.skp",
];

/// The model paths the flags choose from; the last two lie outside the filesystem.
pub const LOAD_FILE_MODELS: [&str; 8] = [
    "m.dpm",
    "m.skm",
    "m_2.skm",
    "ped.mod",
    "sub/m.dpm",
    "anims/c.cmx",
    "../m.dpm",
    "/m.dpm",
];

/// The memory limits the flags choose from (0: the library's default).
pub const LOAD_FILE_MAX_BYTES: [u64; 4] = [0, 1 << 16, 1 << 20, 16 << 20];

/// Inputs for the load_file target: each model path with the files a sample model of its format needs, each written by
/// ossa's own writers.
pub fn load_file_seeds() -> Vec<(String, Vec<u8>)> {
    let entry = |name: &str, bytes: &[u8]| {
        let index = LOAD_FILE_NAMES
            .iter()
            .position(|n| *n == name)
            .expect("a listed name") as u8;
        let mut out = vec![index];
        out.extend_from_slice(&(bytes.len().min(u16::MAX as usize) as u16).to_le_bytes());
        out.extend_from_slice(&bytes[..bytes.len().min(u16::MAX as usize)]);
        out
    };
    let link = |name: &str, to: &str| {
        let mut e = entry(name, to.as_bytes());
        e[0] |= 0x80;
        e
    };
    let model_flag = |path: &str| {
        (LOAD_FILE_MODELS
            .iter()
            .position(|p| *p == path)
            .expect("a model path") as u8)
            << 1
    };
    let tube = tube(3, 3, 3);
    let dpm = dpm::write(&tube).expect("DPM");
    let skm = skm::write_skm(&tube).expect("SKM");
    let skp = skm::write_skp(&tube).expect("SKP");
    let skel = mm2::write_skel(&tube).ok();
    let mm2_mod = mm2::write_mod(&tube).ok();
    let mut out = Vec::new();
    let mut seed = |name: &str, flags: u8, parts: Vec<Vec<u8>>| {
        let mut bytes = vec![flags];
        for p in parts {
            bytes.extend(p);
        }
        out.push((name.to_owned(), bytes));
    };
    let limit_1m = 2 << 4;
    seed(
        "dpm-framegroups",
        model_flag("m.dpm") | limit_1m,
        vec![
            entry("m.dpm", &dpm),
            entry(
                "m.dpm.framegroups",
                b"/* scenes */\n0 2 10 1 \"walk\" // comment\n2 1 5 0 die\n",
            ),
        ],
    );
    seed(
        "dpm-linked",
        model_flag("sub/m.dpm"),
        vec![
            entry("m.dpm", &dpm),
            link("sub/m.dpm", "m.dpm"),
            link("sub/m.dpm.framegroups", "sub/m.dpm.framegroups"),
        ],
    );
    seed(
        "skm-cfg-import",
        model_flag("m.skm"),
        vec![
            entry("m.skm", &skm),
            entry("m.cfg", b"import models/p/tris\n"),
            entry("models/p/tris.skp", &skp),
        ],
    );
    seed(
        "skm-lod",
        model_flag("m_2.skm") | 1,
        vec![
            entry("m_2.skm", &skm),
            link("m.skp", "sub/m.skp"),
            entry("sub/m.skp", &skp),
        ],
    );
    if let (Some(skel), Some(mm2_mod)) = (skel, mm2_mod) {
        seed(
            "mm2",
            model_flag("ped.mod"),
            vec![entry("ped.mod", &mm2_mod), entry("ped.skel", &skel)],
        );
    }
    seed(
        "skills",
        model_flag("anims/c.cmx") | 0x40,
        vec![
            entry("anims/c.cmx", &skill_file_bytes(false)),
            entry("anims/xskill-fuzz.cfp", &skill_cfp(false)),
            link("anims/a.cfp", "anims/xskill-fuzz.cfp"),
        ],
    );
    seed(
        "outside",
        model_flag("../m.dpm"),
        vec![entry("m.dpm", &dpm)],
    );
    out
}
