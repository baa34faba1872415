//! DashGL DMF 1.5, binary and JSON, against fixtures built here from the specification byte by
//! byte and character by character (never through ossa's writers), with the expected model
//! worked out by hand: two bones, four vertices, three faces in two materials, a texture, and
//! an animation whose tracks use every channel flag. Then the rules and their errors, the
//! writers and round trips.

use std::f32::consts::FRAC_1_SQRT_2;

mod load_options;
use load_options::{options as opts, strict};
use ossa::{
    BONE_SYNTHETIC, ErrorCode, Format, FrameBlend, KEY_POSITION, KEY_ROTATION, KEY_SCALE,
    LoadOptions, Mat3x4, Model, Strided, dmf, dpm,
};

// ---------------------------------------------------------------------------------------------
// The binary fixture
// ---------------------------------------------------------------------------------------------

/// Where the fixture's structures start (the layout of section 2.3: tables in attribute order,
/// then tracks, then the image).
const TEX: usize = 0x70;
const MAT: usize = 0xb0;
const VERT: usize = 0x190;
const FACE: usize = 0x220;
const BONE: usize = 0x328;
const ANIM: usize = 0x408;
const TRACKS: usize = 0x438;
const IMAGE: usize = 0x528;
const END: usize = 0x538;

/// Sixteen bytes that start like a PNG file: the signature, then the IHDR chunk's length and type.
const PNG: &[u8; 16] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUg==";

const H: f32 = FRAC_1_SQRT_2;

struct Out(Vec<u8>);

impl Out {
    fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn i16(&mut self, v: i16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn f32s(&mut self, v: &[f32]) -> &mut Self {
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
        self
    }
    fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.0.extend_from_slice(v);
        self
    }
    fn name(&mut self, s: &str) -> &mut Self {
        let mut field = [0u8; 32];
        field[..s.len()].copy_from_slice(s.as_bytes());
        self.bytes(&field)
    }
    fn zeros(&mut self, n: usize) -> &mut Self {
        self.0.resize(self.0.len() + n, 0);
        self
    }
    fn at(&self, offset: usize) {
        assert_eq!(self.0.len(), offset, "fixture layout");
    }
}

const WHITE: [u8; 4] = [255, 255, 255, 255];
const RED: [u8; 4] = [255, 0, 0, 255];

/// One face: material, corners, colours, normals (all +z) and texcoords.
fn face(o: &mut Out, material: u16, idx: [u32; 3], colours: [[u8; 4]; 3], uvs: [[f32; 2]; 3]) {
    o.u16(material).u16(0).u32(idx[0]).u32(idx[1]).u32(idx[2]);
    for c in colours {
        o.bytes(&c);
    }
    o.f32s(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0]);
    o.f32s(&uvs.concat());
}

fn track(
    o: &mut Out,
    bone: i16,
    flags: i16,
    time: f32,
    pos: [f32; 3],
    rot: [f32; 4],
    scl: [f32; 3],
) {
    o.i16(bone)
        .i16(flags)
        .f32s(&[time])
        .f32s(&pos)
        .f32s(&rot)
        .f32s(&scl);
}

/// The fixture model as binary DMF 1.5.
fn binary_fixture() -> Vec<u8> {
    let mut o = Out(Vec::new());
    // Header: magic, version 1.5, attribute table at 0x10, 6 attributes.
    o.bytes(b"DASH").u16(1).u16(5).u32(0x10).u32(6);
    // Attribute table: label, flags, offset, count.
    for (label, offset, count) in [
        (b"tex\0", TEX, 1),
        (b"mat\0", MAT, 2),
        (b"vert", VERT, 4),
        (b"face", FACE, 3),
        (b"bone", BONE, 2),
        (b"anim", ANIM, 1),
    ] {
        o.bytes(label).u32(0).u32(offset as u32).u32(count);
    }
    o.at(TEX);
    // Texture 0: flip_y 1, 2x2, wrap_s repeat (2), wrap_t clamp (0).
    o.name("skin.png").i16(0).u16(1).u32(IMAGE as u32).u32(16);
    o.u16(2).u16(2).u16(2).u16(0).zeros(12);
    o.at(MAT);
    // Material 0 "skin": texture 0, blending on (additive, src alpha, one minus src alpha),
    // skinning, phong, double-sided, vertex colours, alpha.
    o.name("skin").i16(0).i16(0);
    for f in [1u16, 1, 4, 5, 1, 2, 2, 0, 0, 1, 1, 0] {
        o.u16(f);
    }
    o.f32s(&[0.5])
        .f32s(&[1.0, 0.5, 0.25, 1.0])
        .f32s(&[0.0, 0.0, 0.0, 1.0]);
    o.f32s(&[0.5, 0.5, 0.5, 30.0]);
    // Material 1 "cloth": no texture, vertex colours only.
    o.name("cloth").i16(1).i16(-1);
    for f in [0u16, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0] {
        o.u16(f);
    }
    o.f32s(&[0.0]).f32s(&[0.25, 0.25, 1.0, 1.0]).zeros(32);
    o.at(VERT);
    // Vertices in model space at the bind pose.
    for (pos, index, weight) in [
        ([0.0, 0.0, 0.0], [0i16, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]),
        ([1.0, 1.0, 0.0], [1, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]),
        ([2.0, 1.0, 0.0], [0, 1, 0, 0], [0.5, 0.5, 0.0, 0.0]),
        ([1.0, 2.0, 0.0], [1, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]),
    ] {
        o.f32s(&pos);
        for i in index {
            o.i16(i);
        }
        o.f32s(&weight);
    }
    o.at(FACE);
    face(
        &mut o,
        0,
        [0, 1, 2],
        [WHITE; 3],
        [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]],
    );
    face(
        &mut o,
        1,
        [0, 2, 3],
        [RED, WHITE, WHITE],
        [[0.0, 0.0], [1.0, 1.0], [0.0, 1.0]],
    );
    face(
        &mut o,
        1,
        [2, 1, 3],
        [WHITE; 3],
        [[1.0, 1.0], [0.5, 0.0], [0.0, 1.0]],
    );
    o.at(BONE);
    // Bone 0 "root": up 1 along y. Bone 1 "arm": 1 along x from its parent, turned 90 degrees
    // about z. Column-major: translation in elements 12, 13, 14.
    o.name("root").i16(0).i16(-1).zeros(12);
    o.f32s(&[
        1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0,
    ]);
    o.name("arm").i16(1).i16(0).zeros(12);
    o.f32s(&[
        0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0,
    ]);
    o.at(ANIM);
    // Animation 0 "wave": 10 fps, 0.5 s, 5 tracks.
    o.name("wave")
        .i16(0)
        .u16(10)
        .u32(TRACKS as u32)
        .u32(5)
        .f32s(&[0.5]);
    o.at(TRACKS);
    let z3 = [0.0; 3];
    let z4 = [0.0; 4];
    track(&mut o, 0, 1, 0.0, [0.0, 1.0, 0.0], z4, z3);
    track(&mut o, 0, 1, 0.5, [0.0, 2.0, 0.0], z4, z3);
    track(&mut o, 1, 2, 0.0, z3, [0.0, 0.0, 0.0, 1.0], z3);
    track(&mut o, 1, 6, 0.4, z3, [0.0, 0.0, H, H], [2.0, 2.0, 2.0]);
    track(&mut o, 1, 4, 0.0, z3, z4, [1.0, 1.0, 1.0]);
    o.at(IMAGE);
    o.bytes(PNG);
    o.at(END);
    o.0
}

// ---------------------------------------------------------------------------------------------
// The JSON fixture: the same model as the spec's JSON sections write it, with its own
// misspelled keys ("verterices", "verex_color") and its example colour strings.
// ---------------------------------------------------------------------------------------------

fn json_fixture() -> String {
    format!(
        r#"{{
  "format" : "DASH",
  "version" : "1.5",
  "textures" : [
    {{ "id" : 0, "name" : "skin.png", "flip_y" : 1, "img" : "data:image/png;base64,{PNG_BASE64}",
       "width" : 2, "height" : 2, "wrap_s" : "repeat", "wrap_t" : "clamp" }}
  ],
  "materials" : [
    {{ "id" : 0, "name" : "skin", "texture" : 0, "use_blending" : true, "blend_equation" : "add",
       "blend_src" : "src_alpha", "blend_dst" : "one_minus_src_alpha", "skinning" : true,
       "shader_type" : "phong", "face_side" : "double", "shadow_side" : "front",
       "ignore_lights" : false, "vertex_color" : true, "use_alpha" : 1, "skip_render" : false,
       "alpha_test" : 0.5, "diffuse" : [1.0, 0.5, 0.25, 1.0], "emissive" : [0, 0, 0, 1],
       "specular" : [0.5, 0.5, 0.5, 30] }},
    {{ "id" : 1, "name" : "cloth", "texture" : -1, "use_blending" : false,
       "blend_equation" : "norm", "blend_src" : "zero", "blend_dst" : "zero", "skinning" : false,
       "shader_type" : "basic", "face_side" : "front", "shadow_side" : "front",
       "ignore_lights" : false, "vertex_color" : true, "use_alpha" : false, "skip_render" : false,
       "alpha_test" : 0, "diffuse" : [0.25, 0.25, 1, 1], "emissive" : [0, 0, 0, 0],
       "specular" : [0, 0, 0, 0] }}
  ],
  "verterices" : [
    {{ "pos" : [0, 0, 0], "skin_index" : [0, 0, 0, 0], "skin_weight" : [1, 0, 0, 0] }},
    {{ "pos" : [1, 1, 0], "skin_index" : [1, 0, 0, 0], "skin_weight" : [1, 0, 0, 0] }},
    {{ "pos" : [2, 1, 0], "skin_index" : [0, 1, 0, 0], "skin_weight" : [0.5, 0.5, 0, 0] }},
    {{ "pos" : [1, 2, 0], "skin_index" : [1, 0, 0, 0], "skin_weight" : [1, 0, 0, 0] }}
  ],
  "faces" : [
    {{ "material" : 0, "indices" : [0, 1, 2],
       "verex_color" : ["rgba('255, 255, 255, 1.0)", "rgba('255, 255, 255, 1.0)", "rgba('255, 255, 255, 1.0)"],
       "normals" : [[0, 0, 1], [0, 0, 1], [0, 0, 1]], "diffuse_uv" : [[0, 0], [1, 0], [1, 1]] }},
    {{ "material" : 1, "indices" : [0, 2, 3],
       "verex_color" : ["rgba(255, 0, 0, 1.0)", "rgba(255, 255, 255, 1.0)", "rgba(255, 255, 255, 1)"],
       "normals" : [[0, 0, 1], [0, 0, 1], [0, 0, 1]], "diffuse_uv" : [[0, 0], [1, 1], [0, 1]] }},
    {{ "material" : 1, "indices" : [2, 1, 3],
       "verex_color" : ["rgba(255, 255, 255, 1.0)", "rgba(255, 255, 255, 1.0)", "rgba(255, 255, 255, 1.0)"],
       "normals" : [[0, 0, 1], [0, 0, 1], [0, 0, 1]], "diffuse_uv" : [[1, 1], [0.5, 0], [0, 1]] }}
  ],
  "skeleton" : [
    {{ "name" : "root", "id" : 0, "parent_id" : -1,
       "matrix" : [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1] }},
    {{ "name" : "arm", "id" : 1, "parent_id" : 0,
       "matrix" : [0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1] }}
  ],
  "animations" : [
    {{ "id" : 0, "name" : "wave", "fps" : 10, "duration" : 0.5, "tracks" : [
      {{ "bone_id" : 0, "time" : 0, "pos" : [0, 1, 0] }},
      {{ "bone_id" : 0, "time" : 0.5, "pos" : [0, 2, 0] }},
      {{ "bone_id" : 1, "time" : 0, "rot" : [0, 0, 0, 1] }},
      {{ "bone_id" : 1, "time" : 0.4, "rot" : [0, 0, {H}, {H}], "scl" : [2, 2, 2] }},
      {{ "bone_id" : 1, "time" : 0, "scl" : [1, 1, 1] }}
    ] }}
  ]
}}
"#
    )
}

/// The same JSON with the keys spelled correctly.
fn json_fixture_spelled() -> String {
    json_fixture()
        .replace("\"verterices\"", "\"vertices\"")
        .replace("\"verex_color\"", "\"vertex_color\"")
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn load(bytes: &[u8], format: Format) -> Model {
    Model::load(bytes, &opts(format)).unwrap_or_else(|e| panic!("{}: {e}", format.name()))
}

fn close(a: [f32; 3], b: [f32; 3], eps: f32) -> bool {
    a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= eps)
}

/// Mesh `mesh` skinned at a single frame.
fn skinned(model: &Model, mesh: usize, frame: u32) -> (Vec<[f32; 3]>, Vec<[f32; 3]>) {
    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(&[FrameBlend { frame, weight: 1.0 }], None, &mut bones)
        .unwrap();
    let n = model.meshes()[mesh].vertex_count();
    let mut p = vec![[0.0f32; 3]; n];
    let mut q = vec![[0.0f32; 3]; n];
    let mut target = Strided::new(p.as_flattened_mut(), 3)
        .unwrap()
        .with_normals(q.as_flattened_mut(), 3)
        .unwrap();
    model.skin_mesh(mesh, &bones, 0, n, 0, &mut target).unwrap();
    (p, q)
}

fn set_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn set_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn set_f32(b: &mut [u8], at: usize, v: f32) {
    set_u32(b, at, v.to_bits());
}

/// Loading fails with `code` at byte `offset`, and the message holds every one of `words`.
fn fails_at(bytes: &[u8], code: ErrorCode, offset: usize, words: &[&str]) -> String {
    let e = Model::load(bytes, &opts(Format::Dmf)).unwrap_err();
    assert_eq!(e.code(), code, "{e}");
    assert_eq!(e.offset(), Some(offset as u64), "{e}");
    let text = e.to_string();
    for w in words {
        assert!(text.contains(w), "{text:?} lacks {w:?}");
    }
    text
}

/// Loading the JSON fails with `code` on `line`, and the message holds every one of `words`.
fn json_fails(text: &str, code: ErrorCode, line: u32, words: &[&str]) -> String {
    let e = Model::load(text.as_bytes(), &opts(Format::DmfJson)).unwrap_err();
    assert_eq!(e.code(), code, "{e}");
    assert_eq!(e.line(), Some(line), "{e}");
    let msg = e.to_string();
    for w in words {
        assert!(msg.contains(w), "{msg:?} lacks {w:?}");
    }
    msg
}

/// The 1-based line of the first occurrence of `needle` in `text`.
fn line_of(text: &str, needle: &str) -> u32 {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in the text"));
    text[..at].matches('\n').count() as u32 + 1
}

// ---------------------------------------------------------------------------------------------
// What the fixture means, worked out by hand
// ---------------------------------------------------------------------------------------------

fn check_fixture_model(m: &Model, what: &str) {
    assert!(m.warnings().is_empty(), "{what}: {:?}", m.warnings());
    assert_eq!((m.up_axis(), m.handedness()), (1, 1), "{what}");
    // Bones and the bind pose: root at (0, 1, 0); arm at (1, 1, 0), turned 90 degrees about z.
    let names: Vec<String> = m.bones().iter().map(|b| b.name.to_string()).collect();
    assert_eq!(names, ["root", "arm"], "{what}");
    assert_eq!(
        (m.bones()[0].parent, m.bones()[1].parent),
        (-1, 0),
        "{what}"
    );
    let bind = m.skeleton().bind_pose();
    assert_eq!(bind[0].translation(), [0.0, 1.0, 0.0], "{what}");
    assert_eq!(bind[1].translation(), [1.0, 1.0, 0.0], "{what}");
    assert_eq!(
        bind[1].transform_vector([1.0, 0.0, 0.0]),
        [0.0, 1.0, 0.0],
        "{what}"
    );

    // Texture and materials, every field.
    let t = &m.textures()[0];
    assert_eq!(m.textures().len(), 1, "{what}");
    assert_eq!(t.name.to_string(), "skin.png");
    assert_eq!((t.id, t.width, t.height), (0, 2, 2));
    assert_eq!((t.flip_y, t.wrap_s, t.wrap_t), (1, 2, 0));
    assert_eq!(t.image, PNG);
    let [skin, cloth] = m.materials() else {
        panic!("{what}: {} materials", m.materials().len())
    };
    assert_eq!(
        (skin.name.to_string(), skin.id, skin.texture),
        ("skin".into(), 0, Some(0))
    );
    assert_eq!(
        [
            skin.use_blending,
            skin.blend_equation,
            skin.blend_src,
            skin.blend_dst,
            skin.skinning,
            skin.shader_type,
            skin.face_side,
            skin.shadow_side,
            skin.ignore_lights,
            skin.vertex_color,
            skin.use_alpha,
            skin.skip_render
        ],
        [1, 1, 4, 5, 1, 2, 2, 0, 0, 1, 1, 0],
        "{what}"
    );
    assert_eq!(skin.alpha_test, 0.5);
    assert_eq!(skin.diffuse, [1.0, 0.5, 0.25, 1.0]);
    assert_eq!(skin.emissive, [0.0, 0.0, 0.0, 1.0]);
    assert_eq!(skin.specular, [0.5, 0.5, 0.5, 30.0]);
    assert_eq!(
        (cloth.name.to_string(), cloth.id, cloth.texture),
        ("cloth".into(), 1, None)
    );
    assert_eq!((cloth.vertex_color, cloth.use_blending), (1, 0));
    assert_eq!(cloth.diffuse, [0.25, 0.25, 1.0, 1.0]);

    // One mesh per material, in material order; corners with their own texcoord or colour
    // split a vertex.
    let [m0, m1] = m.meshes() else {
        panic!("{what}: {} meshes", m.meshes().len())
    };
    assert_eq!(
        (m0.shader().to_string(), m0.material()),
        ("skin".into(), Some(0))
    );
    assert_eq!(
        (m1.shader().to_string(), m1.material()),
        ("cloth".into(), Some(1))
    );
    assert_eq!(m0.indices(), [0, 1, 2], "{what}");
    assert_eq!(m0.colors().unwrap(), [WHITE; 3], "{what}");
    assert_eq!(
        m0.texcoords().unwrap(),
        [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]
    );
    assert_eq!(
        m0.bind_positions().unwrap(),
        [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [2.0, 1.0, 0.0]]
    );
    // Face 2's corners on vertices 2 and 3 repeat face 1's, so they are shared; its corner on
    // vertex 1 is the mesh's own (face 0 is another material's).
    assert_eq!(m1.indices(), [0, 1, 2, 1, 3, 2], "{what}");
    assert_eq!(
        m1.texcoords().unwrap(),
        [[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.0]]
    );
    assert_eq!(m1.colors().unwrap(), [RED, WHITE, WHITE, WHITE]);
    assert_eq!(
        m1.bind_positions().unwrap(),
        [
            [0.0, 0.0, 0.0],
            [2.0, 1.0, 0.0],
            [1.0, 2.0, 0.0],
            [1.0, 1.0, 0.0]
        ]
    );
    assert_eq!(m1.bind_normals().unwrap(), [[0.0, 0.0, 1.0]; 4]);

    // Influences in bone space: vertex 2 (2, 1, 0) is half root, half arm.
    let inf = m1.influences(1);
    assert_eq!(inf.len(), 2, "{what}");
    assert_eq!((inf[0].bone, inf[0].weight), (0, 0.5));
    assert!(close(inf[0].origin, [1.0, 0.0, 0.0], 1e-6), "{:?}", inf[0]);
    assert_eq!((inf[1].bone, inf[1].weight), (1, 0.5));
    assert!(close(inf[1].origin, [0.0, -0.5, 0.0], 1e-6), "{:?}", inf[1]);

    // Frames: the bind pose, then 0.5 s at 10 fps is frames at 0, 0.1, ... 0.5 s.
    let frames: Vec<String> = m.frames().iter().map(|f| f.name.to_string()).collect();
    assert_eq!(
        frames,
        [
            "bind", "wave 0", "wave 1", "wave 2", "wave 3", "wave 4", "wave 5"
        ],
        "{what}"
    );
    let a = &m.animations()[0];
    assert_eq!(a.name.to_string(), "wave");
    assert_eq!(
        (a.first_frame, a.frame_count, a.fps, a.looping),
        (1, 6, 10.0, false)
    );
    let keys = &m.keyframes()[0];
    assert_eq!((keys.animation, keys.id, keys.duration), (0, 0, 0.5));
    let flags: Vec<u16> = keys.keys.iter().map(|k| k.flags).collect();
    assert_eq!(
        flags,
        [
            KEY_POSITION,
            KEY_POSITION,
            KEY_ROTATION,
            KEY_ROTATION | KEY_SCALE,
            KEY_SCALE
        ]
    );

    // The bind pose skins to the file's positions.
    let (p, n) = skinned(m, 1, 0);
    let want = [
        [0.0, 0.0, 0.0],
        [2.0, 1.0, 0.0],
        [1.0, 2.0, 0.0],
        [1.0, 1.0, 0.0],
    ];
    for (got, want) in p.iter().zip(&want) {
        assert!(close(*got, *want, 1e-6), "{what}: bind {got:?} vs {want:?}");
    }
    assert!(n.iter().all(|n| close(*n, [0.0, 0.0, 1.0], 1e-6)), "{n:?}");

    // "wave 2", 0.2 s: the root is 40% of the way from y 1 to y 2; the arm's rotation is half
    // way from none to 90 degrees (45) and its scale half way from 1 to 2 (keys at 0 and 0.4 s);
    // its position has no keys and stays (1, 0, 0).
    let c = 1.5 * H;
    let want = [
        [0.0, 0.4, 0.0],
        [(2.0 + 1.0 + c) / 2.0, (1.4 + 1.4 - c) / 2.0, 0.0],
        [1.0 + c, 1.4 + c, 0.0],
        [1.0, 1.4, 0.0],
    ];
    let (p, n) = skinned(m, 1, 3);
    for (got, want) in p.iter().zip(&want) {
        assert!(
            close(*got, *want, 1e-5),
            "{what}: wave 2 {got:?} vs {want:?}"
        );
    }
    // Rotation about z keeps the normal on z; the arm's scale 1.5 lengthens it.
    assert!(close(n[2], [0.0, 0.0, 1.5], 1e-5), "{n:?}");
    // After its last key (0.4 s) the arm holds it: at 0.5 s, 90 degrees and scale 2.
    let local = m.skeleton().frame_poses(6).unwrap();
    assert!(close(
        local[1].transform_vector([1.0, 0.0, 0.0]),
        [0.0, 2.0, 0.0],
        1e-6
    ));
    assert_eq!(local[0].translation(), [0.0, 2.0, 0.0]);
}

// ---------------------------------------------------------------------------------------------
// Tests: the fixtures
// ---------------------------------------------------------------------------------------------

#[test]
fn binary_fixture_loads_as_worked_out() {
    let bytes = binary_fixture();
    assert_eq!(ossa::format::detect(&bytes, None), Some(Format::Dmf));
    let m = load(&bytes, Format::Auto);
    assert_eq!(m.format(), Format::Dmf);
    check_fixture_model(&m, "binary");
    // Strict mode finds nothing to refuse.
    Model::load(&bytes, &strict(Format::Dmf)).unwrap();
}

#[test]
fn json_fixture_with_the_specs_spellings_loads_as_worked_out() {
    let text = json_fixture();
    assert_eq!(
        ossa::format::detect(text.as_bytes(), None),
        Some(Format::DmfJson)
    );
    let m = load(text.as_bytes(), Format::Auto);
    assert_eq!(m.format(), Format::DmfJson);
    check_fixture_model(&m, "json (spec spellings)");
    Model::load(text.as_bytes(), &strict(Format::DmfJson)).unwrap();
}

#[test]
fn json_fixture_with_correct_spellings_loads_as_worked_out() {
    let text = json_fixture_spelled();
    // A `.dmf` without the binary magic is JSON.
    let named = LoadOptions {
        name: Some("model.dmf".into()),
        ..LoadOptions::default()
    };
    let m = Model::load(text.as_bytes(), &named).unwrap();
    check_fixture_model(&m, "json (correct spellings)");
}

#[test]
fn both_forms_give_one_model() {
    let bin = load(&binary_fixture(), Format::Dmf);
    let json = load(json_fixture().as_bytes(), Format::DmfJson);
    assert_eq!(
        dmf::write_binary(&bin).unwrap(),
        dmf::write_binary(&json).unwrap()
    );
    for f in 0..bin.frames().len() {
        assert_eq!(
            bin.skeleton().frame_poses(f),
            json.skeleton().frame_poses(f),
            "frame {f}"
        );
    }
}

#[test]
fn a_vertex_corner_colour_alpha_rounds_to_its_byte() {
    let text = json_fixture().replacen("rgba(255, 0, 0, 1.0)", "rgba(255, 0, 0, 0.5)", 1);
    let m = load(text.as_bytes(), Format::DmfJson);
    assert_eq!(m.meshes()[1].colors().unwrap()[0], [255, 0, 0, 128]);
}

// ---------------------------------------------------------------------------------------------
// Tests: the writers and round trips
// ---------------------------------------------------------------------------------------------

#[test]
fn binary_writes_back_byte_for_byte() {
    let bytes = binary_fixture();
    let m = load(&bytes, Format::Dmf);
    assert_eq!(dmf::write_binary(&m).unwrap(), bytes);
    assert_eq!(m.save(Format::Dmf).unwrap(), bytes);
}

#[test]
fn binary_to_json_to_binary_keeps_every_byte() {
    let bytes = binary_fixture();
    let json = dmf::write_json(&load(&bytes, Format::Dmf)).unwrap();
    let again = load(&json, Format::DmfJson);
    check_fixture_model(&again, "binary -> json");
    assert_eq!(dmf::write_binary(&again).unwrap(), bytes);
    // And JSON written again is the same text.
    assert_eq!(dmf::write_json(&again).unwrap(), json);
    let text = String::from_utf8(json).unwrap();
    assert!(text.contains("\"vertices\"") && text.contains("\"vertex_color\""));
    assert!(text.contains(&format!("data:image/png;base64,{PNG_BASE64}")));
    assert!(text.contains("\"wrap_s\": \"repeat\""));
    assert!(text.contains("\"blend_dst\": \"one_minus_src_alpha\""));
}

#[test]
fn json_written_from_the_hand_written_file_keeps_the_model() {
    let m = load(json_fixture().as_bytes(), Format::DmfJson);
    let text = m.save(Format::DmfJson).unwrap();
    check_fixture_model(&load(&text, Format::DmfJson), "json -> json");
}

#[test]
fn odd_floats_survive_json() {
    // Bits a decimal printer could lose: the smallest subnormal, the largest float, negative
    // zero, a value with 9 significant digits.
    let mut bytes = binary_fixture();
    for (k, v) in [1.0e-45f32, f32::MAX, -0.0, 0.123_456_79]
        .iter()
        .enumerate()
    {
        set_f32(&mut bytes, FACE + 64 + 4 * k, *v);
    }
    let m = load(&bytes, Format::Dmf);
    let json = dmf::write_json(&m).unwrap();
    assert_eq!(
        dmf::write_binary(&load(&json, Format::DmfJson)).unwrap(),
        bytes
    );
}

#[test]
fn a_dpm_saves_as_dmf_and_poses_the_same() {
    let rig = ossa::synth::TubeRig {
        bones: 3,
        frames: 3,
        ..ossa::synth::TubeRig::default()
    };
    let model = rig.build().unwrap();
    let dpm_model = load(&dpm::write(&model).unwrap(), Format::Dpm);
    for format in [Format::Dmf, Format::DmfJson] {
        let bytes = dpm_model.save(format).unwrap();
        let back = load(&bytes, format);
        // A DPM scene per frame: each becomes an animation of one frame after the bind pose.
        assert_eq!(back.animations().len(), 3);
        assert_eq!(back.frames().len(), 4);
        // Vertices are numbered anew, triangles keep their order: compare triangle corners.
        let (old_ix, new_ix) = (dpm_model.meshes()[0].indices(), back.meshes()[0].indices());
        assert_eq!(old_ix.len(), new_ix.len());
        for (a, scene) in back.animations().iter().enumerate() {
            assert_eq!((scene.frame_count, scene.fps), (1, 10.0));
            let (want, _) = skinned(&dpm_model, 0, a as u32);
            let (got, _) = skinned(&back, 0, scene.first_frame);
            for (&g, &w) in new_ix.iter().zip(old_ix) {
                let (g, w) = (got[g as usize], want[w as usize]);
                assert!(
                    close(g, w, 1e-4),
                    "{} frame {a}: {g:?} vs {w:?}",
                    format.name()
                );
            }
        }
        // Saved again, the DMF is the same.
        assert_eq!(back.save(format).unwrap(), bytes, "{}", format.name());
    }
}

#[test]
fn more_than_four_influences_do_not_fit() {
    let mut parts = ossa::synth::TubeRig::default().parts();
    let mesh = &mut parts.meshes[0];
    // Give vertex 0 five equal influences.
    let extra: Vec<_> = (0..5)
        .map(|b| ossa::Influence {
            origin: [0.0; 3],
            weight: 0.2,
            normal: [0.0; 3],
            bone: b,
        })
        .collect();
    let old = (mesh.influence_start[1] - mesh.influence_start[0]) as usize;
    mesh.influences.splice(0..old, extra);
    for s in mesh.influence_start.iter_mut().skip(1) {
        *s = *s + 5 - old as u32;
    }
    let model = Model::from_parts(parts).unwrap();
    let e = dmf::write_binary(&model).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported);
    assert!(e.to_string().contains("vertex 0 has 5 influences"), "{e}");
}

/// Linear blend skinning moves one point per vertex: influences that put a vertex at two
/// points (as a Sims blend vertex does) do not fit.
#[test]
fn influences_apart_do_not_fit() {
    let mut parts = ossa::synth::TubeRig::default().parts();
    let mesh = &mut parts.meshes[0];
    let v = (0..mesh.influence_start.len() - 1)
        .find(|&v| mesh.influence_start[v + 1] - mesh.influence_start[v] == 2)
        .unwrap();
    let k = mesh.influence_start[v] as usize;
    mesh.influences[k].origin[0] += 0.5 * mesh.influences[k].weight;
    let model = Model::from_parts(parts).unwrap();
    let e = dmf::write_binary(&model).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported);
    assert!(
        e.to_string().contains(&format!(
            "vertex {v}: its influences put it at points 0.5 apart"
        )),
        "{e}"
    );
}

#[test]
fn an_optimised_model_saves_and_loads() {
    // Mesh 1's triangles swapped, so that first use numbers its vertices 1, 3, 2, 0.
    let mut parts = load(&binary_fixture(), Format::Dmf).to_parts();
    parts.meshes[1].indices = vec![1, 3, 2, 0, 1, 2];
    let m = Model::from_parts(parts).unwrap();
    let (o, report) = m.optimized(ossa::optimize::OPTIMIZE_ALL).unwrap();
    assert!(report.vertices_moved > 0);
    let back = load(&o.save(Format::Dmf).unwrap(), Format::Dmf);
    assert_eq!(back.meshes().len(), 2);
    // Renumbered vertices keep their colours, texcoords and bind positions.
    let corner = |model: &Model, mesh: usize| {
        let me = &model.meshes()[mesh];
        let mut v: Vec<_> = (0..me.vertex_count())
            .map(|i| {
                (
                    me.colors().unwrap()[i],
                    me.texcoords().unwrap()[i].map(f32::to_bits),
                    me.bind_positions().unwrap()[i].map(f32::to_bits),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert!(o.meshes()[1].colors().unwrap() != m.meshes()[1].colors().unwrap());
    assert_eq!(corner(&o, 1), corner(&m, 1));
    let (want, _) = skinned(&m, 1, 3);
    let (got, _) = skinned(&back, 1, 3);
    let mut want: Vec<_> = want.iter().map(|p| p.map(f32::to_bits)).collect();
    let mut got: Vec<_> = got.iter().map(|p| p.map(f32::to_bits)).collect();
    want.sort();
    got.sort();
    assert_eq!(got, want);
}

// ---------------------------------------------------------------------------------------------
// Tests: what the spec leaves to the reader
// ---------------------------------------------------------------------------------------------

/// The vertex section's own examples: `skin_index: [4, 0, 0, 0] skin_weight: [1.0f, 0.0f, 0.0f,
/// 0.0f]` is all bone 4; `[4, 5, 0, 0]` with `[0.75f, 0.25f, 0.0f, 0.0f]` is 75% bone 4 and 25%
/// bone 5. Six bones in a chain, each 1 along x from its parent.
#[test]
fn the_specs_vertex_examples() {
    let bone = |i: i32| {
        format!(
            r#"{{"name": "bone_00{i}", "id": {i}, "parent_id": {}, "matrix": [1,0,0,0, 0,1,0,0, 0,0,1,0, {},0,0,1]}}"#,
            i - 1,
            if i == 0 { 0 } else { 1 }
        )
    };
    let bones: Vec<String> = (0..6).map(bone).collect();
    let text = format!(
        r#"{{"format": "DASH", "version": "1.5", "materials": [{{"name": "material_000"}}],
  "verterices": [
    {{"pos": [4, 1, 0], "skin_index": [4, 0, 0, 0], "skin_weight": [1.0, 0.0, 0.0, 0.0]}},
    {{"pos": [4, 2, 0], "skin_index": [4, 5, 0, 0], "skin_weight": [0.75, 0.25, 0.0, 0.0]}},
    {{"pos": [5, 1, 0], "skin_index": [5, 0, 0, 0], "skin_weight": [1.0, 0.0, 0.0, 0.0]}}],
  "faces": [{{"material": 0, "indices": [0, 1, 2]}}],
  "skeleton": [{}]}}"#,
        bones.join(",\n    ")
    );
    let m = load(text.as_bytes(), Format::DmfJson);
    assert_eq!(m.bones().len(), 6);
    assert_eq!(m.bones()[5].name.to_string(), "bone_005");
    let mesh = &m.meshes()[0];
    let one = mesh.influences(0);
    assert_eq!(one.len(), 1);
    assert_eq!(
        (one[0].bone, one[0].weight, one[0].origin),
        (4, 1.0, [0.0, 1.0, 0.0])
    );
    let two = mesh.influences(1);
    assert_eq!(two.len(), 2);
    assert_eq!((two[0].bone, two[0].weight), (4, 0.75));
    assert_eq!((two[1].bone, two[1].weight), (5, 0.25));
    // In bone space: (0, 2, 0) from bone 4 at x 4 and (-1, 2, 0) from bone 5 at x 5, weighted.
    assert_eq!(two[0].origin, [0.0, 1.5, 0.0]);
    assert_eq!(two[1].origin, [-0.25, 0.5, 0.0]);
}

/// A model without bones: every vertex is bound to a bone the loader adds, which stays at the
/// origin; written again, the file has no bones.
#[test]
fn a_model_without_bones_gets_a_root_that_is_not_written() {
    let text = r#"{"format": "DASH", "version": "1.5",
      "materials": [{"name": "m"}],
      "vertices": [{"pos": [1, 2, 3]}, {"pos": [4, 5, 6]}, {"pos": [7, 8, 9]}],
      "faces": [{"material": 0, "indices": [0, 1, 2]}]}"#;
    let m = load(text.as_bytes(), Format::DmfJson);
    assert_eq!(m.bones().len(), 1);
    assert_eq!(m.bones()[0].flags, BONE_SYNTHETIC);
    assert_eq!(m.frames().len(), 1);
    let (p, _) = skinned(&m, 0, 0);
    assert_eq!(p, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]);
    let bytes = dmf::write_binary(&m).unwrap();
    // The bone table (attribute 4) is empty; the vertices' skins are zero.
    assert_eq!(u32::from_le_bytes(bytes[0x5c..0x60].try_into().unwrap()), 0);
    let back = load(&bytes, Format::Dmf);
    assert_eq!(back.bones().len(), 1);
    assert_eq!(dmf::write_binary(&back).unwrap(), bytes);
}

/// Index -1 is the spec's "bind pose": that share of the vertex stays where the file puts it.
/// A vertex with no weight at all stays wholly.
#[test]
fn unweighted_shares_stay_in_the_bind_pose() {
    let mut bytes = binary_fixture();
    // Vertex 3 (1, 2, 0): half arm, half "bind pose".
    set_u16(&mut bytes, VERT + 3 * 36 + 14, (-1i16) as u16);
    set_f32(&mut bytes, VERT + 3 * 36 + 20, 0.5);
    set_f32(&mut bytes, VERT + 3 * 36 + 24, 0.5);
    // Vertex 0 (0, 0, 0): no weight.
    set_f32(&mut bytes, VERT + 20, 0.0);
    let m = load(&bytes, Format::Dmf);
    assert_eq!(m.bones().len(), 3);
    assert_eq!(
        (m.bones()[2].flags, m.bones()[2].parent),
        (BONE_SYNTHETIC, -1)
    );
    let (p, _) = skinned(&m, 1, 3);
    let c = 1.5 * H;
    assert!(close(p[0], [0.0, 0.0, 0.0], 1e-6), "{:?}", p[0]);
    let arm = [1.0 + c, 1.4 + c, 0.0];
    assert!(
        close(
            p[2],
            [(arm[0] + 1.0) / 2.0, (arm[1] + 2.0) / 2.0, 0.0],
            1e-5
        ),
        "{:?}",
        p[2]
    );
    // Saved and loaded again, the model is the same: the added bone is not written.
    let again = load(&dmf::write_binary(&m).unwrap(), Format::Dmf);
    assert_eq!(again.bones().len(), 3);
    assert_eq!(skinned(&again, 1, 3).0, p);
}

#[test]
fn a_vertex_no_face_uses_is_left_out_with_a_warning() {
    let text = json_fixture_spelled().replace(
        r#"{ "pos" : [1, 2, 0], "skin_index" : [1, 0, 0, 0], "skin_weight" : [1, 0, 0, 0] }"#,
        r#"{ "pos" : [1, 2, 0], "skin_index" : [1, 0, 0, 0], "skin_weight" : [1, 0, 0, 0] },
    { "pos" : [9, 9, 9] }"#,
    );
    let m = load(text.as_bytes(), Format::DmfJson);
    assert_eq!(m.warnings().len(), 1);
    assert!(
        m.warnings()[0]
            .to_string()
            .contains("1 of the file's 5 vertices is used by no face and left out"),
        "{:?}",
        m.warnings()
    );
}

/// A material no face uses is kept with the others (so face and mesh material indices keep
/// pointing at the file's materials) but makes no mesh: "each material with faces becomes a
/// mesh, in material order". Here the faceless material sits between two that have faces, and
/// the faces come in the file in reverse material order.
#[test]
fn a_material_without_faces_is_kept_and_makes_no_mesh() {
    let text = r#"{"format": "DASH", "version": "1.5",
      "materials": [{"id": 0, "name": "a"}, {"id": 1, "name": "b"}, {"id": 2, "name": "c"}],
      "vertices": [{"pos": [0, 0, 0]}, {"pos": [1, 0, 0]}, {"pos": [0, 1, 0]}, {"pos": [1, 1, 0]}],
      "faces": [{"material": 2, "indices": [1, 3, 2]}, {"material": 0, "indices": [0, 1, 2]}]}"#;
    let check = |m: &Model, what: &str| {
        assert!(m.warnings().is_empty(), "{what}: {:?}", m.warnings());
        let names: Vec<String> = m.materials().iter().map(|x| x.name.to_string()).collect();
        assert_eq!(names, ["a", "b", "c"], "{what}");
        let ids: Vec<i16> = m.materials().iter().map(|x| x.id).collect();
        assert_eq!(ids, [0, 1, 2], "{what}");
        let [first, second] = m.meshes() else {
            panic!("{what}: {} meshes", m.meshes().len())
        };
        assert_eq!(
            (first.shader().to_string(), first.material()),
            ("a".into(), Some(0)),
            "{what}"
        );
        assert_eq!(
            (second.shader().to_string(), second.material()),
            ("c".into(), Some(2)),
            "{what}"
        );
        // Each mesh has its own face's corners, in the face's order.
        assert_eq!(first.indices(), [0, 1, 2], "{what}");
        assert_eq!(
            first.bind_positions().unwrap(),
            [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            "{what}"
        );
        assert_eq!(second.indices(), [0, 1, 2], "{what}");
        assert_eq!(
            second.bind_positions().unwrap(),
            [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
            "{what}"
        );
        assert_eq!(
            m.meshes().iter().map(|x| x.material()).collect::<Vec<_>>(),
            [Some(0), Some(2)],
            "{what}"
        );
    };
    let m = load(text.as_bytes(), Format::DmfJson);
    check(&m, "JSON");
    // Written and read again, the faceless material is still there and still makes no mesh.
    let binary = dmf::write_binary(&m).unwrap();
    check(&load(&binary, Format::Dmf), "written as binary");
    let json = dmf::write_json(&m).unwrap();
    check(&load(&json, Format::DmfJson), "written as JSON");

    // The binary fixture with face 0 moved from "skin" to "cloth": "skin" (material 0) keeps
    // every field but has no mesh; the one mesh is material 1's, with all three faces. Corners
    // repeat a vertex with the same texcoord and colour only at vertex 2 (faces 0 and 1) and
    // vertices 2 and 3 (faces 1 and 2).
    let mut bytes = binary_fixture();
    set_u16(&mut bytes, FACE, 1);
    let m = load(&bytes, Format::Dmf);
    assert!(m.warnings().is_empty(), "{:?}", m.warnings());
    let [skin, cloth] = m.materials() else {
        panic!("{} materials", m.materials().len())
    };
    assert_eq!(
        (skin.name.to_string(), skin.texture, skin.alpha_test),
        ("skin".into(), Some(0), 0.5)
    );
    assert_eq!(cloth.name.to_string(), "cloth");
    let [mesh] = m.meshes() else {
        panic!("{} meshes", m.meshes().len())
    };
    assert_eq!(
        (mesh.shader().to_string(), mesh.material()),
        ("cloth".into(), Some(1))
    );
    assert_eq!(mesh.indices(), [0, 1, 2, 3, 2, 4, 2, 5, 4]);
    assert_eq!(
        mesh.bind_positions().unwrap(),
        [
            [0.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [2.0, 1.0, 0.0],
            [0.0, 0.0, 0.0],
            [1.0, 2.0, 0.0],
            [1.0, 1.0, 0.0]
        ]
    );
    assert_eq!(
        mesh.colors().unwrap(),
        [WHITE, WHITE, WHITE, RED, WHITE, WHITE]
    );
}

#[test]
fn weight_sums_a_little_off_warn_and_strict_refuses() {
    let mut bytes = binary_fixture();
    set_f32(&mut bytes, VERT + 2 * 36 + 24, 0.505);
    let m = load(&bytes, Format::Dmf);
    assert_eq!(m.warnings().len(), 1);
    assert!(
        m.warnings()[0].to_string().contains("worst sums to 1.005"),
        "{:?}",
        m.warnings()
    );
    let e = Model::load(&bytes, &strict(Format::Dmf)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert_eq!(e.offset(), Some((VERT + 2 * 36) as u64));
    // Off by more than 1e-2: refused in every mode.
    set_f32(&mut bytes, VERT + 2 * 36 + 24, 0.6);
    fails_at(
        &bytes,
        ErrorCode::Malformed,
        VERT + 2 * 36,
        &["vertex 2", "sum to 1.1"],
    );
}

// ---------------------------------------------------------------------------------------------
// Tests: errors, binary
// ---------------------------------------------------------------------------------------------

#[test]
fn bad_magic_and_other_versions() {
    let mut b = binary_fixture();
    b[3] = b'X';
    fails_at(&b, ErrorCode::UnknownFormat, 0, &["magic", "DASH"]);
    let mut b = binary_fixture();
    set_u16(&mut b, 6, 4);
    fails_at(&b, ErrorCode::Unsupported, 4, &["version 1.4", "1.5"]);
    let mut b = binary_fixture();
    set_u16(&mut b, 4, 2);
    set_u16(&mut b, 6, 0);
    fails_at(&b, ErrorCode::Unsupported, 4, &["version 2.0"]);
    let mut b = binary_fixture();
    set_u32(&mut b, 12, 7);
    fails_at(&b, ErrorCode::Malformed, 12, &["attribute count 7"]);
    let mut b = binary_fixture();
    b[0x30..0x34].copy_from_slice(b"VERT");
    fails_at(&b, ErrorCode::Malformed, 0x30, &["attribute 2", "\"vert\""]);
    // Shorter than its header.
    fails_at(
        &binary_fixture()[..10],
        ErrorCode::Truncated,
        0,
        &["header"],
    );
}

#[test]
fn table_entries_outside_the_file() {
    // Face count too large for the file.
    let mut b = binary_fixture();
    set_u32(&mut b, 0x4c, 1000);
    fails_at(
        &b,
        ErrorCode::Truncated,
        FACE,
        &["face table", "1000 records of 88 bytes"],
    );
    // A count whose bytes overflow 32 bits.
    let mut b = binary_fixture();
    set_u32(&mut b, 0x3c, u32::MAX);
    let e = Model::load(&b, &opts(Format::Dmf)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Truncated, "{e}");
    // An offset past the end.
    let mut b = binary_fixture();
    set_u32(&mut b, 0x58, 0xffff_fff0);
    fails_at(&b, ErrorCode::Truncated, 0xffff_fff0, &["bone table"]);
    // An animation's tracks and a texture's image past the end.
    let mut b = binary_fixture();
    set_u32(&mut b, ANIM + 0x28, 6);
    fails_at(&b, ErrorCode::Truncated, TRACKS, &["animation 0 tracks"]);
    let mut b = binary_fixture();
    set_u32(&mut b, TEX + 0x28, 17);
    fails_at(&b, ErrorCode::Truncated, IMAGE, &["texture 0 image"]);
    // Structures that share bytes.
    let mut b = binary_fixture();
    set_u32(&mut b, TEX + 0x24, 8);
    fails_at(
        &b,
        ErrorCode::Malformed,
        8,
        &["texture 0 image", "overlaps", "header"],
    );
    let mut b = binary_fixture();
    set_u32(&mut b, 0x38, FACE as u32 - 36);
    fails_at(
        &b,
        ErrorCode::Malformed,
        FACE,
        &["overlaps", "vertex table"],
    );
}

#[test]
fn bone_rules() {
    let bone = |i: usize| BONE + i * 0x70;
    let mut b = binary_fixture();
    set_u16(&mut b, bone(1) + 0x20, 5);
    fails_at(
        &b,
        ErrorCode::Malformed,
        bone(1) + 0x20,
        &["bone 1 id", "id 5 does not match"],
    );
    let mut b = binary_fixture();
    set_u16(&mut b, bone(0) + 0x22, 1);
    fails_at(
        &b,
        ErrorCode::Malformed,
        bone(0) + 0x22,
        &["bone 0 parent_id", "parent 1 does not come before"],
    );
    let mut b = binary_fixture();
    set_u16(&mut b, bone(1) + 0x22, 1);
    fails_at(&b, ErrorCode::Malformed, bone(1) + 0x22, &["parent 1"]);
    let mut b = binary_fixture();
    set_u16(&mut b, bone(1) + 0x22, (-2i16) as u16);
    fails_at(
        &b,
        ErrorCode::Malformed,
        bone(1) + 0x22,
        &["parent -2 is neither"],
    );
    let mut b = binary_fixture();
    b[bone(1)..bone(1) + 4].copy_from_slice(b"root");
    fails_at(
        &b,
        ErrorCode::Malformed,
        bone(1),
        &["bone 1 name", "bone 0's too"],
    );
    let mut b = binary_fixture();
    b[bone(1)..bone(1) + 3].fill(0);
    fails_at(&b, ErrorCode::Malformed, bone(1), &["name is empty"]);
    let mut b = binary_fixture();
    b[bone(1)..bone(1) + 32].fill(b'a');
    fails_at(&b, ErrorCode::Malformed, bone(1), &["32 bytes", "31"]);
    // Not affine; not finite.
    let mut b = binary_fixture();
    set_f32(&mut b, bone(1) + 0x30 + 3 * 4, 0.5);
    fails_at(
        &b,
        ErrorCode::Malformed,
        bone(1) + 0x3c,
        &["not affine", "(0.5, 0, 0, 1)"],
    );
    let mut b = binary_fixture();
    set_f32(&mut b, bone(0) + 0x30 + 13 * 4, f32::NAN);
    fails_at(
        &b,
        ErrorCode::Malformed,
        bone(0) + 0x64,
        &["matrix[13]", "NaN"],
    );
    // A bind pose that cannot be inverted, with vertices weighted to it.
    let mut b = binary_fixture();
    for k in 0..3 {
        set_f32(&mut b, bone(1) + 0x30 + k * 4, 0.0);
    }
    fails_at(
        &b,
        ErrorCode::Malformed,
        VERT + 36 + 12,
        &["vertex 1 skin_index[0]", "cannot be inverted"],
    );
}

#[test]
fn vertex_and_face_rules() {
    let vert = |v: usize| VERT + v * 36;
    let mut b = binary_fixture();
    set_f32(&mut b, vert(2) + 24, -0.5);
    fails_at(
        &b,
        ErrorCode::Malformed,
        vert(2) + 24,
        &["vertex 2 skin_weight[1]", "-0.5 is negative"],
    );
    let mut b = binary_fixture();
    set_f32(&mut b, vert(2) + 20, f32::INFINITY);
    fails_at(
        &b,
        ErrorCode::Malformed,
        vert(2) + 20,
        &["skin_weight[0]", "inf"],
    );
    let mut b = binary_fixture();
    set_u16(&mut b, vert(0) + 12, 7);
    fails_at(
        &b,
        ErrorCode::Malformed,
        vert(0) + 12,
        &["vertex 0 skin_index[0]", "7 is neither a bone"],
    );
    let mut b = binary_fixture();
    set_f32(&mut b, vert(1) + 4, f32::NAN);
    fails_at(&b, ErrorCode::Malformed, vert(1) + 4, &["vertex 1 pos[1]"]);
    let face = |f: usize| FACE + f * 88;
    let mut b = binary_fixture();
    set_u32(&mut b, face(1) + 12, 9);
    fails_at(
        &b,
        ErrorCode::Malformed,
        face(1) + 12,
        &["face 1 indices[2]", "vertex 9 out of range", "4 vertices"],
    );
    let mut b = binary_fixture();
    set_u16(&mut b, face(2), 2);
    fails_at(
        &b,
        ErrorCode::Malformed,
        face(2),
        &["face 2 material", "material 2 out of range"],
    );
    let mut b = binary_fixture();
    set_f32(&mut b, face(0) + 40 + 8, f32::NAN);
    fails_at(
        &b,
        ErrorCode::Malformed,
        face(0) + 40,
        &["face 0 normals[1]"],
    );
    let mut b = binary_fixture();
    set_u16(&mut b, MAT + 0x70 + 0x22, 3);
    fails_at(
        &b,
        ErrorCode::Malformed,
        MAT + 0x92,
        &["material 1 texture", "texture 3 is neither"],
    );
    let mut b = binary_fixture();
    set_f32(&mut b, MAT + 0x40 + 8, f32::NAN);
    fails_at(
        &b,
        ErrorCode::Malformed,
        MAT + 0x48,
        &["material 0 diffuse[2]"],
    );
}

#[test]
fn animation_rules() {
    let track = |k: usize| TRACKS + k * 48;
    let mut b = binary_fixture();
    set_u16(&mut b, track(3), 2);
    fails_at(
        &b,
        ErrorCode::Malformed,
        track(3),
        &["animation 0 tracks[3].bone_id", "bone 2 out of range"],
    );
    let mut b = binary_fixture();
    set_u16(&mut b, track(0) + 2, 0);
    fails_at(
        &b,
        ErrorCode::Malformed,
        track(0) + 2,
        &["tracks[0]", "no channel"],
    );
    let mut b = binary_fixture();
    set_u16(&mut b, track(0) + 2, 9);
    fails_at(&b, ErrorCode::Malformed, track(0) + 2, &["flags 9"]);
    let mut b = binary_fixture();
    set_f32(&mut b, track(1) + 4, -1.0);
    fails_at(
        &b,
        ErrorCode::Malformed,
        track(1) + 4,
        &["tracks[1].time", "time -1"],
    );
    let mut b = binary_fixture();
    for k in 0..4 {
        set_f32(&mut b, track(2) + 20 + 4 * k, 0.0);
    }
    fails_at(
        &b,
        ErrorCode::Malformed,
        track(2) + 20,
        &["tracks[2].rot", "zero quaternion"],
    );
    // Values in channels the flags leave out are not read.
    let mut b = binary_fixture();
    set_f32(&mut b, track(0) + 20, f32::NAN);
    load(&b, Format::Dmf);
    let mut b = binary_fixture();
    set_u16(&mut b, ANIM + 0x22, 0);
    fails_at(
        &b,
        ErrorCode::Malformed,
        ANIM + 0x22,
        &["animation 0 fps", "fps is 0"],
    );
    let mut b = binary_fixture();
    set_f32(&mut b, ANIM + 0x2c, -0.5);
    fails_at(
        &b,
        ErrorCode::Malformed,
        ANIM + 0x2c,
        &["animation 0 duration"],
    );
    // Far more frames than a model holds.
    let mut b = binary_fixture();
    set_f32(&mut b, ANIM + 0x2c, 1.0e6);
    let e = Model::load(&b, &opts(Format::Dmf)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    assert!(e.to_string().contains("frames"), "{e}");
}

#[test]
fn the_memory_limit_is_kept() {
    let limited = LoadOptions {
        format: Format::Dmf,
        max_bytes: 2000,
        ..LoadOptions::default()
    };
    let e = Model::load(&binary_fixture(), &limited).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    let limited = LoadOptions {
        format: Format::DmfJson,
        max_bytes: 2000,
        ..LoadOptions::default()
    };
    let e = Model::load(json_fixture().as_bytes(), &limited).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
}

#[test]
fn a_png_signature_is_expected() {
    let mut b = binary_fixture();
    b[IMAGE] = b'X';
    let m = load(&b, Format::Dmf);
    assert!(
        m.warnings()[0]
            .to_string()
            .contains("texture 0 img: image is not a PNG")
    );
    let e = Model::load(&b, &strict(Format::Dmf)).unwrap_err();
    assert_eq!(
        (e.code(), e.offset()),
        (ErrorCode::Malformed, Some((TEX + 0x24) as u64))
    );
}

#[test]
fn validation_lists_every_problem() {
    let mut b = binary_fixture();
    set_u16(&mut b, BONE + 0x70 + 0x20, 5);
    set_f32(&mut b, VERT + 2 * 36 + 24, -0.5);
    set_u32(&mut b, FACE + 88 + 12, 9);
    let report = ossa::validate(&b, &opts(Format::Dmf));
    assert!(report.model.is_none());
    let at: Vec<u64> = report.problems.iter().filter_map(|p| p.offset()).collect();
    assert_eq!(
        at,
        [
            (VERT + 2 * 36) as u64,
            (VERT + 2 * 36 + 24) as u64,
            (FACE + 88 + 12) as u64,
            (BONE + 0x70 + 0x20) as u64
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Tests: errors, JSON
// ---------------------------------------------------------------------------------------------

#[test]
fn json_rule_errors_name_the_path_and_line() {
    let text = json_fixture().replacen("\"parent_id\" : 0", "\"parent_id\" : 1", 1);
    let line = line_of(&text, "\"parent_id\" : 1");
    let msg = json_fails(
        &text,
        ErrorCode::Malformed,
        line,
        &["skeleton[1].parent_id: parent 1"],
    );
    assert!(
        msg.starts_with(&format!("line {line}: skeleton[1].parent_id:")),
        "{msg}"
    );

    let text = json_fixture().replacen("\"id\" : 1, \"parent_id\"", "\"id\" : 4, \"parent_id\"", 1);
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "\"id\" : 4"),
        &["skeleton[1].id: id 4"],
    );

    let text = json_fixture().replacen("[0.5, 0.5, 0, 0]", "[1.5, -0.5, 0, 0]", 1);
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "[1.5, -0.5"),
        &["verterices[2].skin_weight[1]", "negative"],
    );

    let text = json_fixture().replacen("\"indices\" : [0, 2, 3]", "\"indices\" : [0, 2, 30]", 1);
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "[0, 2, 30]"),
        &["faces[1].indices[2]", "vertex 30 out of range"],
    );

    let text = json_fixture().replacen(
        "\"bone_id\" : 1, \"time\" : 0.4",
        "\"bone_id\" : 7, \"time\" : 0.4",
        1,
    );
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "\"bone_id\" : 7"),
        &["animations[0].tracks[3].bone_id"],
    );
}

#[test]
fn json_format_and_version() {
    let text = json_fixture().replacen("\"DASH\"", "\"DASX\"", 1);
    json_fails(&text, ErrorCode::UnknownFormat, 2, &["\"DASH\""]);
    let text = json_fixture().replacen("\"1.5\"", "\"1.4\"", 1);
    json_fails(&text, ErrorCode::Unsupported, 3, &["version 1.4"]);
    let text = json_fixture().replacen("\"1.5\"", "1.5", 1);
    load(text.as_bytes(), Format::DmfJson);
    // No version: read as 1.5 with a warning; strict refuses.
    let text = json_fixture().replacen("\"version\" : \"1.5\",", "", 1);
    let m = load(text.as_bytes(), Format::DmfJson);
    assert!(m.warnings()[0].to_string().contains("no \"version\""));
    assert!(Model::load(text.as_bytes(), &strict(Format::DmfJson)).is_err());
    // Not an object at all.
    json_fails("[1, 2]", ErrorCode::UnknownFormat, 1, &["an array"]);
}

#[test]
fn json_structure_errors() {
    let base = json_fixture();
    // A missing key.
    let text = base.replacen("\"indices\" : [0, 2, 3],", "", 1);
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "\"material\" : 1,"),
        &["faces[1]: the key \"indices\" is missing"],
    );
    // A wrong type.
    let text = base.replacen("\"matrix\" : [1, 0", "\"matrix\" : \"x\", \"m\" : [1, 0", 1);
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "\"x\""),
        &["skeleton[0].matrix: expected an array, found a string"],
    );
    // A number too large for a float.
    let text = base.replacen("\"pos\" : [2, 1, 0]", "\"pos\" : [2e39, 1, 0]", 1);
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "2e39"),
        &["verterices[2].pos[0]", "2e39 does not fit a 32-bit float"],
    );
    // A whole number out of range.
    let text = base.replacen("\"fps\" : 10", "\"fps\" : 70000", 1);
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "70000"),
        &["animations[0].fps", "0 to 65535"],
    );
    // Both spellings.
    let text = base.replacen(
        "\"verterices\" : [",
        "\"vertices\" : [], \"verterices\" : [",
        1,
    );
    json_fails(
        &text,
        ErrorCode::Malformed,
        1,
        &["both \"verterices\" and \"vertices\""],
    );
    // Bad base64.
    let text = base.replacen(PNG_BASE64, "iVBORw0KGgo*AAANSUhEUg==", 1);
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "\"img\""),
        &["textures[0].img", "base64 character 11"],
    );
    let text = base.replacen("data:image/png;base64,", "data:image/jpeg;base64,", 1);
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "\"img\""),
        &["data:image/png;base64"],
    );
    // A bad colour and an unknown enum name.
    let text = base.replacen("rgba(255, 0, 0, 1.0)", "rgba(256, 0, 0, 1.0)", 1);
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "256"),
        &["faces[1].verex_color[0]"],
    );
    let text = base.replacen("\"phong\"", "\"toon\"", 1);
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "toon"),
        &[
            "materials[0].shader_type",
            "\"toon\" is not one of basic, lambert, phong",
        ],
    );
    // JSON syntax: a stray byte, a duplicate key, deep nesting.
    let text = base.replacen("\"faces\" : [", "\"faces\" : [ @", 1);
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "@"),
        &["JSON", "`@`"],
    );
    let text = base.replacen(
        "\"name\" : \"arm\",",
        "\"name\" : \"arm\", \"name\" : \"arm\",",
        1,
    );
    json_fails(
        &text,
        ErrorCode::Malformed,
        line_of(&text, "\"name\" : \"arm\", \"name\""),
        &["key \"name\" appears twice"],
    );
    let deep = format!(
        "{{\"format\": \"DASH\", \"x\": {}{}}}",
        "[".repeat(100),
        "]".repeat(100)
    );
    let e = Model::load(deep.as_bytes(), &opts(Format::DmfJson)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
}

#[test]
fn json_unknown_keys_warn_and_strict_refuses() {
    let text = json_fixture().replacen("\"fps\" : 10,", "\"fps\" : 10, \"loop\" : true,", 1);
    let m = load(text.as_bytes(), Format::DmfJson);
    assert!(
        m.warnings()[0].to_string().contains("animations[0].loop"),
        "{:?}",
        m.warnings()
    );
    let e = Model::load(text.as_bytes(), &strict(Format::DmfJson)).unwrap_err();
    assert_eq!(e.line(), Some(line_of(&text, "\"loop\"")));
}

// ---------------------------------------------------------------------------------------------
// Tests: real models saved as DMF
// ---------------------------------------------------------------------------------------------

#[path = "corpus/mod.rs"]
mod corpus;

/// Every corpus DPM that DMF can hold (at most 4 influences per vertex, bone names DMF keeps)
/// saves as binary and JSON DMF and poses the same in every scene checked; the others are
/// refused cleanly.
#[test]
fn corpus_dpms_save_as_dmf() {
    let Some(dir) = corpus::corpus_subdir("dpm", "corpus_dpms_save_as_dmf") else {
        return;
    };
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dpm"))
        .collect();
    paths.sort();
    let (mut saved, mut refused) = (0, 0);
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let dpm_model = load(&std::fs::read(&path).unwrap(), Format::Dpm);
        let bytes = match dpm_model.save(Format::Dmf) {
            Ok(b) => b,
            Err(e) => {
                assert!(
                    matches!(e.code(), ErrorCode::Unsupported | ErrorCode::Limit),
                    "{name}: {e}"
                );
                eprintln!("{name}: not saved as DMF: {e}");
                refused += 1;
                continue;
            }
        };
        saved += 1;
        let json = dpm_model.save(Format::DmfJson).unwrap();
        let (lo, hi) = dpm_model.bounds();
        let size = lo.iter().chain(&hi).fold(1.0f32, |a, x| a.max(x.abs()));
        for (back, form) in [
            (load(&bytes, Format::Dmf), "binary"),
            (load(&json, Format::DmfJson), "json"),
        ] {
            let scenes = back.animations();
            assert_eq!(scenes.len(), dpm_model.animations().len(), "{name}");
            let step = (scenes.len() / 8).max(1);
            for (a, scene) in scenes.iter().enumerate().step_by(step) {
                let frame = dpm_model.animations()[a].first_frame;
                for m in 0..back.meshes().len() {
                    let (old_ix, new_ix) =
                        (dpm_model.meshes()[m].indices(), back.meshes()[m].indices());
                    let (want, _) = skinned(&dpm_model, m, frame);
                    let (got, _) = skinned(&back, m, scene.first_frame);
                    for (&g, &w) in new_ix.iter().zip(old_ix) {
                        let (g, w) = (got[g as usize], want[w as usize]);
                        assert!(
                            close(g, w, 1e-4 * size),
                            "{name} {form} scene {a} mesh {m}: {g:?} vs {w:?}"
                        );
                    }
                }
            }
        }
    }
    eprintln!(
        "corpus DPMs: {saved} saved as DMF, {refused} refused (more than 4 influences or names DMF cannot hold)"
    );
    assert!(saved > 0);
}

// ---------------------------------------------------------------------------------------------
// The independent reader (tests/dmf_ref) on the fixture
// ---------------------------------------------------------------------------------------------

mod dmf_ref;
#[path = "ref_math/mod.rs"]
mod ref_math;

/// The reader the glTF conversion checks use, written from the spec without ossa's code, reads
/// the hand-built fixture as the tests above work it out: so what it says of a converted file
/// can be trusted.
#[test]
fn the_independent_reader_reads_the_fixture_as_worked_out() {
    use dmf_ref::{IDENTITY4, RawDmf, inverse, point, vector};
    let d = RawDmf::parse(&binary_fixture()).unwrap();
    assert_eq!((d.major, d.minor), (1, 5));
    // Texture and materials.
    assert_eq!(d.textures.len(), 1);
    let t = &d.textures[0];
    assert_eq!(
        (t.name.as_slice(), t.id, t.flip_y),
        (&b"skin.png"[..], 0, 1)
    );
    assert_eq!((t.width, t.height, t.wrap_s, t.wrap_t), (2, 2, 2, 0));
    assert_eq!(t.image, PNG);
    let names: Vec<&[u8]> = d.materials.iter().map(|m| m.name.as_slice()).collect();
    assert_eq!(names, [&b"skin"[..], b"cloth"]);
    assert_eq!((d.materials[0].texture, d.materials[1].texture), (0, -1));
    assert_eq!(d.materials[0].flags, [1, 1, 4, 5, 1, 2, 2, 0, 0, 1, 1, 0]);
    assert_eq!(d.materials[0].alpha_test, 0.5);
    assert_eq!(d.materials[0].diffuse, [1.0, 0.5, 0.25, 1.0]);
    assert_eq!(d.materials[0].specular, [0.5, 0.5, 0.5, 30.0]);
    assert_eq!(d.materials[1].diffuse, [0.25, 0.25, 1.0, 1.0]);
    // Vertices, faces.
    let pos: Vec<[f32; 3]> = d.vertices.iter().map(|v| v.pos).collect();
    assert_eq!(
        pos,
        [
            [0.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [2.0, 1.0, 0.0],
            [1.0, 2.0, 0.0]
        ]
    );
    assert_eq!(d.vertices[2].skin_index, [0, 1, 0, 0]);
    assert_eq!(d.vertices[2].skin_weight, [0.5, 0.5, 0.0, 0.0]);
    let faces: Vec<(u16, [u32; 3])> = d.faces.iter().map(|f| (f.material, f.indices)).collect();
    assert_eq!(faces, [(0, [0, 1, 2]), (1, [0, 2, 3]), (1, [2, 1, 3])]);
    assert_eq!(d.faces[1].colors, [RED, WHITE, WHITE]);
    assert_eq!(d.faces[2].uvs, [[1.0, 1.0], [0.5, 0.0], [0.0, 1.0]]);
    assert!(d.faces.iter().all(|f| f.normals == [[0.0, 0.0, 1.0]; 3]));
    // Bones and the bind pose: root at (0, 1, 0); arm at (1, 1, 0), turned 90 degrees about z.
    let bones: Vec<(&[u8], i16)> = d
        .bones
        .iter()
        .map(|b| (b.name.as_slice(), b.parent))
        .collect();
    assert_eq!(bones, [(&b"root"[..], -1), (b"arm", 0)]);
    let bind = d.bind().unwrap();
    assert_eq!(point(&bind[0], [0.0; 3]), [0.0, 1.0, 0.0]);
    assert_eq!(point(&bind[1], [0.0; 3]), [1.0, 1.0, 0.0]);
    assert_eq!(vector(&bind[1], [1.0, 0.0, 0.0]), [0.0, 1.0, 0.0]);
    // Influences in bone space: vertex 2 (2, 1, 0) is half root, half arm.
    let inv: Vec<_> = bind.iter().map(|m| inverse(m).unwrap()).collect();
    assert_eq!(inverse(&IDENTITY4), Some(IDENTITY4));
    let p2 = [2.0, 1.0, 0.0];
    assert_eq!(point(&inv[0], p2).map(|x| x * 0.5), [1.0, 0.0, 0.0]);
    let arm = point(&inv[1], p2).map(|x| x * 0.5);
    assert!(
        (0..3).all(|k| (arm[k] - [0.0, -0.5, 0.0][k]).abs() < 1e-12),
        "{arm:?}"
    );
    // The animation and its tracks.
    let a = &d.animations[0];
    assert_eq!(
        (a.name.as_slice(), a.id, a.fps, a.duration),
        (&b"wave"[..], 0, 10, 0.5)
    );
    let flags: Vec<i16> = a.tracks.iter().map(|t| t.flags).collect();
    assert_eq!(flags, [1, 1, 2, 6, 4]);
    assert_eq!(a.tracks[3].rot, [0.0, 0.0, H, H]);
    // The bind pose skins to the file's positions.
    let at_bind = d.skin_all(None).unwrap();
    for (got, want) in at_bind.iter().zip(&pos) {
        assert!(
            (0..3).all(|k| (got[k] - f64::from(want[k])).abs() < 1e-12),
            "{got:?}"
        );
    }
    // 0.2 s ("wave 2"): as worked out above (there for mesh 1's order, the file's 0, 2, 3, 1).
    let c = 1.5 * f64::from(H);
    let want = [
        [0.0, 0.4, 0.0],
        [1.0, 1.4, 0.0],
        [(2.0 + 1.0 + c) / 2.0, (1.4 + 1.4 - c) / 2.0, 0.0],
        [1.0 + c, 1.4 + c, 0.0],
    ];
    let got = d.skin_all(Some((0, 0.2))).unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert!((0..3).all(|k| (g[k] - w[k]).abs() < 1e-6), "{g:?} vs {w:?}");
    }
    // The arm's scale 1.5 lengthens vertex 3's normal; rotation about z keeps it on z.
    let local = d.local_at(0, 0.2).unwrap();
    let posed = dmf_ref::absolute(&d.parents(), &local).unwrap();
    let n = d.skin_normal(3, [0.0, 0.0, 1.0], &posed, &inv).unwrap();
    assert!(
        (0..3).all(|k| (n[k] - [0.0, 0.0, 1.5][k]).abs() < 1e-6),
        "{n:?}"
    );
    // After its last key (0.4 s) the arm holds it: at 0.5 s, 90 degrees and scale 2; the root
    // is at its last position key.
    let local = d.local_at(0, 0.5).unwrap();
    let x = vector(&local[1], [1.0, 0.0, 0.0]);
    assert!(
        (0..3).all(|k| (x[k] - [0.0, 2.0, 0.0][k]).abs() < 1e-6),
        "{x:?}"
    );
    assert_eq!(point(&local[0], [0.0; 3]), [0.0, 2.0, 0.0]);
    // And it agrees with ossa's skinning of the same file at every frame.
    let m = load(&binary_fixture(), Format::Dmf);
    for f in 0..m.frames().len() as u32 {
        let ours = if f == 0 {
            d.skin_all(None).unwrap()
        } else {
            d.skin_all(Some((0, f64::from(f - 1) / 10.0))).unwrap()
        };
        let (p, _) = skinned(&m, 1, f);
        // Mesh 1's vertices are the file's 0, 2, 3 and 1.
        for (i, v) in [0usize, 2, 3, 1].into_iter().enumerate() {
            let d = (0..3)
                .map(|k| (ours[v][k] - f64::from(p[i][k])).abs())
                .fold(0.0, f64::max);
            assert!(
                d < 1e-5,
                "frame {f} vertex {v}: {:?} vs {:?}",
                ours[v],
                p[i]
            );
        }
    }
}

/// The independent reader says where a cut file ends instead of panicking: every prefix of the
/// fixture is an error (the image is its last bytes).
#[test]
fn the_independent_reader_refuses_every_cut_fixture() {
    let bytes = binary_fixture();
    for n in 0..bytes.len() {
        let e = dmf_ref::RawDmf::parse(&bytes[..n]).unwrap_err();
        assert!(
            e.contains("past the end") || e.contains("magic"),
            "{n}: {e}"
        );
    }
    // A track table that claims more tracks than the file holds is refused before any is read.
    let mut big = bytes.clone();
    set_u32(&mut big, ANIM + 0x28, u32::MAX);
    let e = dmf_ref::RawDmf::parse(&big).unwrap_err();
    assert!(e.contains("past the end"), "{e}");
}
