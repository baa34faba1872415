//! Hand-made Sims files shared by the skill, suit, link and CLI tests: a three-bone skeleton
//! (ROOT, CHEST, HEAD) and a skill that nods its head, with its CFP; a two-bone skeleton with a
//! suit, and the one-triangle mesh on HEAD that the suit names.
#![allow(dead_code)]

use ossa::cfp;
use ossa::io::FileSystem;
use ossa::{Format, FrameBlend, LoadOptions, Mat3x4, Model};

/// [`TINY_SKELETON`] loaded.
pub fn tiny_skeleton() -> Model {
    Model::load(
        TINY_SKELETON.as_bytes(),
        &LoadOptions {
            format: Format::SimsCmx,
            ..LoadOptions::default()
        },
    )
    .unwrap()
}

/// Options that read sidecars through `fs`.
pub fn through(fs: &dyn FileSystem) -> LoadOptions<'_> {
    LoadOptions {
        io: Some(fs),
        ..LoadOptions::default()
    }
}

/// Model-space bones of `model` at `frame`.
pub fn frame_pose(model: &Model, frame: u32) -> Vec<Mat3x4> {
    let mut out = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(&[FrameBlend { frame, weight: 1.0 }], None, &mut out)
        .unwrap();
    out
}

/// A version 300 CMX: a three-bone skeleton (ROOT, CHEST, HEAD), no skills.
pub const TINY_SKELETON: &str = "// Character File. Copyright 1997, Maxis Inc.
version 300
1
tiny
3
ROOT
NULL
0
| 0 3 0 |
| 0 0 0 1 |
1
1
0
0
0
CHEST
ROOT
0
| 0 1 0 |
| 0 0 0 1 |
0
1
1
0
0
HEAD
CHEST
0
| 0 1 0 |
| 0 0.7071068 0 0.7071068 |
0
1
1
0
0
0
0
";

/// A skill file with one skill, `NAME` playing `ANIMATION`.cfp: HEAD turns for 4 frames while
/// BONE (CHEST) moves for 2, over 133 ms.
pub const NOD: &str = "// Character File. Copyright 1997, Maxis Inc.
version 300
0
0
1
NAME
ANIMATION
133
0
0
2
4
2
HEAD
4
133
0
1
-1
0
0
0
BONE
2
133
1
0
0
-1
0
0
";

pub fn nod(name: &str, animation: &str, bone: &str) -> String {
    NOD.replace("NAME", name)
        .replace("ANIMATION", animation)
        .replace("BONE", bone)
}

/// The nod skill's CFP: CHEST translations (2), HEAD rotations (4, turning about y).
pub fn nod_cfp() -> Vec<u8> {
    let t = [[0.0, 1.0, 0.0], [0.0, 1.2, 0.1]];
    let r: Vec<[f32; 4]> = (0..4)
        .map(|i| {
            let a = i as f32 * 0.2;
            [0.0, a.sin(), 0.0, a.cos()]
        })
        .collect();
    cfp::encode_skill(&t, &r, None)
}

/// A two-bone skeleton (ROOT at y 3, HEAD 2 above it) and one suit, `head-only`, with the
/// mesh `head-mesh` on HEAD, in one file.
pub const SKELETON_AND_SUIT: &str = "// Character File. Copyright 1997, Maxis Inc.
version 300
1
small
2
ROOT
NULL
0
| 0 3 0 |
| 0 0 0 1 |
1
1
0
0
0
HEAD
ROOT
0
| 0 2 0 |
| 0 0 0 1 |
0
1
1
0
0
1
head-only
0
0
1
HEAD
head-mesh
0
0
0
";

/// A mesh of one triangle on HEAD, in HEAD's space.
pub const HEAD_SKN: &str = "head-mesh
x
1
HEAD
1
0 1 2
1
0 0 3 -1 0
3
0 0
1 0
0 1
0
3
0 0 0 0 0 1
1 0 0 0 0 1
0 1 0 0 0 1
";

/// The 1998 colonel's 25-bone skeleton (`colonelsuit.CMX` in `proto1998`, the corpus directory)
/// without its six toe bones (`L_TOE0`, `L_TOE01`, `L_TOE02` and the right ones), as version 200
/// text: a skeleton some suits' parts need bones of that it lacks. Each bone is six lines.
pub fn toeless_colonel(proto1998: &std::path::Path) -> Vec<u8> {
    let data = std::fs::read(proto1998.join("colonelsuit.CMX")).unwrap();
    let text = String::from_utf8(data).unwrap();
    let lines: Vec<&str> = text.split("\r\n").collect();
    assert_eq!(lines[3..5], ["adult", "25"]);
    let end = 5 + 25 * 6;
    let kept: Vec<&[&str]> = (lines[5..end].chunks(6))
        .filter(|b| !b[0].starts_with("L_TOE") && !b[0].starts_with("R_TOE"))
        .collect();
    assert_eq!(kept.len(), 19);
    let count = kept.len().to_string();
    let mut out: Vec<&str> = lines[..4].to_vec();
    out.push(&count);
    out.extend(kept.into_iter().flatten());
    out.extend(&lines[end..]);
    out.join("\r\n").into_bytes()
}
