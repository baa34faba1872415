//! Texture lookups: images made here with the `image` crate, models written beside them, and
//! what `find_textures` makes of them, down to the pixels; hostile names and sizes; the real
//! Xonotic zombie's `.skin` files.
#![cfg(feature = "gltf")]

#[path = "corpus/mod.rs"]
mod corpus;
mod counting_alloc;
mod memory_fs;
mod sims_fixtures;

use std::collections::HashMap;
use std::io::Cursor;
use std::path::PathBuf;

use image::{ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use memory_fs::MemoryFs;
use ossa::io::DirFileSystem;
use ossa::textures::{MAX_SKIN_FILES, ModelTextures, VariantTexture, find_textures};
use ossa::{
    Bone, Format, Frame, Influence, LoadOptions, Mat3x4, Material, MeshParts, Model, ModelParts,
    Name, Texture,
};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

const NO_LIMIT: u64 = u64::MAX;

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

/// 4x2 pixels, every channel different, alpha too.
fn tga_pixels() -> RgbaImage {
    RgbaImage::from_fn(4, 2, |x, y| {
        Rgba([
            (x * 60 + y) as u8,
            (200 - x * 40) as u8,
            (y * 100 + 7) as u8,
            (255 - x * 30 - y * 50) as u8,
        ])
    })
}

/// 3x3 (rows padded in a BMP).
fn bmp_pixels() -> RgbImage {
    RgbImage::from_fn(3, 3, |x, y| {
        Rgb([(x * 80) as u8, (y * 90) as u8, (x * y * 20 + 5) as u8])
    })
}

fn png_pixels() -> RgbaImage {
    RgbaImage::from_fn(2, 3, |x, y| {
        Rgba([(x * 100) as u8, (y * 70) as u8, 33, 128])
    })
}

fn jpeg_pixels() -> RgbImage {
    RgbImage::from_fn(8, 8, |x, y| Rgb([(x * 30) as u8, (y * 30) as u8, 90]))
}

fn encode(image: impl Into<image::DynamicImage>, format: ImageFormat) -> Vec<u8> {
    let mut out = Vec::new();
    image
        .into()
        .write_to(Cursor::new(&mut out), format)
        .unwrap();
    out
}

fn tga() -> Vec<u8> {
    encode(tga_pixels(), ImageFormat::Tga)
}
fn bmp() -> Vec<u8> {
    encode(bmp_pixels(), ImageFormat::Bmp)
}
fn png() -> Vec<u8> {
    encode(png_pixels(), ImageFormat::Png)
}
fn jpeg() -> Vec<u8> {
    encode(jpeg_pixels(), ImageFormat::Jpeg)
}

/// The pixels of a PNG `find_textures` handed out, as RGBA.
fn png_rgba(png: &[u8]) -> RgbaImage {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    image::load_from_memory_with_format(png, ImageFormat::Png)
        .unwrap()
        .to_rgba8()
}

/// A one-triangle mesh.
fn triangle(name: &str, shader: &str) -> MeshParts {
    MeshParts {
        name: name.into(),
        shader: shader.into(),
        influence_start: vec![0, 1, 2, 3],
        influences: (0..3)
            .map(|i| Influence {
                origin: [i as f32, (i % 2) as f32, 0.0],
                weight: 1.0,
                normal: [0.0, 0.0, 1.0],
                bone: 0,
            })
            .collect(),
        indices: vec![0, 1, 2],
        texcoords: Some(vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]),
        ..MeshParts::default()
    }
}

fn one_bone(format: Format, meshes: Vec<MeshParts>) -> ModelParts {
    let mut parts = ModelParts::new(format);
    parts.bones.push(Bone {
        name: "root".into(),
        parent: -1,
        flags: 0,
    });
    parts.frames.push(Frame::named("rest"));
    parts.poses = vec![Mat3x4::IDENTITY].into();
    parts.meshes = meshes;
    parts
}

/// A DPM whose meshes have these shaders, written and read back as a file would be.
fn dpm(shaders: &[&str]) -> Model {
    let meshes = shaders.iter().map(|s| triangle("", s)).collect();
    let bytes = Model::from_parts(one_bone(Format::Dpm, meshes))
        .unwrap()
        .save(Format::Dpm)
        .unwrap();
    let model = Model::load(&bytes, &LoadOptions::default()).unwrap();
    assert_eq!(model.format(), Format::Dpm);
    let got: Vec<String> = model
        .meshes()
        .iter()
        .map(|m| m.shader().to_string())
        .collect();
    assert_eq!(got, shaders);
    model
}

/// A Sims SKN of one triangle on bone ROOT, drawn with `texture`.
fn skn(texture: &str) -> Model {
    let text = [
        "body-mesh",
        texture,
        "1",
        "ROOT",
        "1",
        "0 1 2",
        "1",
        "0 0 3 -1 0",
        "3",
        "0 0",
        "1 0",
        "0 1",
        "0",
        "3",
        "0 0 0 0 0 1",
        "1 0 0 0 0 1",
        "0 1 0 0 0 1",
    ]
    .map(|l| format!("{l}\r\n"))
    .concat();
    let options = LoadOptions {
        format: Format::SimsSkn,
        ..LoadOptions::default()
    };
    Model::load(text.as_bytes(), &options).unwrap()
}

/// How often each path was asked for.
fn asked_counts(fs: &MemoryFs) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for p in fs.asked() {
        *counts.entry(p).or_insert(0) += 1;
    }
    counts
}

fn warned(t: &ModelTextures, parts: &[&str]) -> bool {
    t.warnings
        .iter()
        .any(|w| parts.iter().all(|p| w.contains(p)))
}

/// A directory of its own under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("ossa-textures-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn write(&self, rel: &str, bytes: &[u8]) {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------------------------------
// DPM and SKM: shaders
// ---------------------------------------------------------------------------------------------

/// The model `models/m/test.dpm` and its images, one rule each.
fn game_files() -> MemoryFs {
    let mut fs = MemoryFs::default();
    // Beside the model, under the shader's last component; the PNG of the same name comes
    // after the TGA.
    fs.add("models/m/body.tga", tga());
    fs.add("models/m/body.png", png());
    // In textures/ beside the model, as .jpeg.
    fs.add("models/m/textures/face.jpeg", jpeg());
    // Only at the shader's own path from the root.
    fs.add("gfx/decal/eye.png", png());
    fs.add("models/m/textures/body_alt.png", png());
    fs
}

#[test]
fn each_dpm_mesh_gets_the_image_the_lookup_order_finds_first() {
    let fs = game_files();
    let model = dpm(&[
        "models/monsters/body",
        "face",
        "gfx/decal/eye",
        "body.tga",
        "missing",
        "",
    ]);
    let t = find_textures(&model, Some((&fs, "models/m/test.dpm")), NO_LIMIT);

    let found: Vec<(&str, &str, u32, u32)> = t
        .images
        .iter()
        .map(|i| (i.name.as_str(), i.path.as_str(), i.width, i.height))
        .collect();
    assert_eq!(
        found,
        [
            ("models/monsters/body", "models/m/body.tga", 4, 2),
            ("face", "models/m/textures/face.jpeg", 8, 8),
            ("gfx/decal/eye", "gfx/decal/eye.png", 2, 3),
        ]
    );
    // Mesh 3 names the same file another way: the same image, not a second one.
    assert_eq!(
        t.mesh_images,
        [Some(0), Some(1), Some(2), Some(0), None, None]
    );

    // TGA: the PNG holds exactly its pixels, alpha too.
    assert_eq!(png_rgba(&t.images[0].png), tga_pixels());
    // JPEG: exactly the pixels the JPEG decodes to (no second lossy step).
    let jpeg_decoded = image::load_from_memory_with_format(&jpeg(), ImageFormat::Jpeg)
        .unwrap()
        .to_rgb8();
    let back = image::load_from_memory_with_format(&t.images[1].png, ImageFormat::Png)
        .unwrap()
        .to_rgb8();
    assert_eq!(back, jpeg_decoded);
    // PNG: the file itself.
    assert_eq!(t.images[2].png, png());
    assert_eq!(png_rgba(&t.images[2].png), png_pixels());

    // The missing one is a warning naming the files tried; the empty shader is none.
    assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
    assert!(
        warned(
            &t,
            &[
                "mesh 4",
                "\"missing\"",
                "models/m/missing.tga",
                "models/m/textures/missing.jpeg",
                "missing.png"
            ]
        ),
        "{:?}",
        t.warnings
    );
    // Each file read once, though two meshes use body.tga; body.png never, the TGA coming first.
    let counts = asked_counts(&fs);
    assert!(counts.values().all(|&n| n == 1), "{counts:?}");
    assert_eq!(counts.get("models/m/body.tga"), Some(&1));
    assert!(!counts.contains_key("models/m/body.png"), "{counts:?}");
    assert!(t.variants.is_empty());
}

#[test]
fn textures_are_found_on_the_os_filesystem_too() {
    let dir = TempDir::new("os");
    dir.write("models/m/body.tga", &tga());
    dir.write("models/m/textures/face.png", &png());
    let fs = DirFileSystem::new(&dir.0);
    let model = dpm(&["body", "face"]);
    let t = find_textures(&model, Some((&fs, "models/m/test.dpm")), NO_LIMIT);
    assert_eq!(t.mesh_images, [Some(0), Some(1)], "{:?}", t.warnings);
    assert_eq!(t.images[1].path, "models/m/textures/face.png");
    assert_eq!(png_rgba(&t.images[0].png), tga_pixels());
    assert_eq!(t.images[1].png, png());
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn without_a_filesystem_named_textures_are_a_warning() {
    let model = dpm(&["body", "face", "body"]);
    let t = find_textures(&model, None, NO_LIMIT);
    assert_eq!(t.mesh_images, [None, None, None]);
    assert!(t.images.is_empty());
    assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
    assert!(warned(&t, &["no filesystem", "\"body\"", "\"face\""]));
}

// ---------------------------------------------------------------------------------------------
// .skin variants
// ---------------------------------------------------------------------------------------------

#[test]
fn skin_files_are_variants_mapping_meshes_to_images() {
    let mut fs = game_files();
    fs.add("models/m/test.dpm_0.skin", b"body,body\nface,face".to_vec());
    fs.add(
        "models/m/test.dpm_1.skin",
        b"// alien\r\nbody,body_alt\r\n\r\nreplace face gfx/decal/eye\r\ntag_head,\r\n".to_vec(),
    );
    fs.add(
        "models/m/test.dpm_2.skin",
        b"face,\nthis is not a line\nnomesh,body\n".to_vec(),
    );
    // After the first gap: not read.
    fs.add("models/m/test.dpm_4.skin", b"body,face\n".to_vec());
    // DPM meshes have no names: the skin lines name their shaders.
    let model = dpm(&["body", "face"]);
    let t = find_textures(&model, Some((&fs, "models/m/test.dpm")), NO_LIMIT);

    let image_of = |path: &str| t.images.iter().position(|i| i.path == path);
    let body = image_of("models/m/body.tga");
    let face = image_of("models/m/textures/face.jpeg");
    let alt = image_of("models/m/textures/body_alt.png");
    let eye = image_of("gfx/decal/eye.png");
    assert!(body.is_some() && face.is_some() && alt.is_some() && eye.is_some());
    assert_eq!(t.mesh_images, [body, face]);
    let vt = |name: &str, image| {
        Some(VariantTexture {
            name: name.to_owned(),
            image,
        })
    };
    let variants: Vec<(&str, &[Option<VariantTexture>])> = t
        .variants
        .iter()
        .map(|v| (v.name.as_str(), v.meshes.as_slice()))
        .collect();
    assert_eq!(
        variants,
        [
            ("test.dpm_0", &[vt("body", body), vt("face", face)][..]),
            (
                "test.dpm_1",
                &[vt("body_alt", alt), vt("gfx/decal/eye", eye)][..]
            ),
            ("test.dpm_2", &[None, vt("", None)][..]),
        ]
    );
    assert_eq!(t.images[alt.unwrap()].png, png());

    assert!(
        warned(
            &t,
            &["models/m/test.dpm_2.skin line 2", "this is not a line"]
        ),
        "{:?}",
        t.warnings
    );
    assert!(
        warned(
            &t,
            &[
                "models/m/test.dpm_2.skin line 3",
                "no mesh named \"nomesh\""
            ]
        ),
        "{:?}",
        t.warnings
    );
    assert_eq!(t.warnings.len(), 2, "{:?}", t.warnings);
    let counts = asked_counts(&fs);
    assert!(counts.values().all(|&n| n == 1), "{counts:?}");
    assert!(counts.contains_key("models/m/test.dpm_3.skin"));
    assert!(!counts.contains_key("models/m/test.dpm_4.skin"));
}

#[test]
fn skm_skin_lines_name_meshes_by_their_names() {
    let mut fs = game_files();
    fs.add("players/tris.skm_0.skin", b"head,face\n".to_vec());
    fs.add("players/textures/face.png", png());
    let meshes = vec![triangle("torso", "body"), triangle("head", "helmet")];
    let model = Model::from_parts(one_bone(Format::Skm, meshes)).unwrap();
    let t = find_textures(&model, Some((&fs, "players/tris.skm")), NO_LIMIT);
    assert_eq!(t.variants.len(), 1);
    let face = t
        .images
        .iter()
        .position(|i| i.path == "players/textures/face.png");
    assert!(face.is_some(), "{:?}", t.images);
    assert_eq!(
        t.variants[0].meshes,
        [
            None,
            Some(VariantTexture {
                name: "face".into(),
                image: face
            })
        ]
    );
}

#[test]
fn at_most_64_skin_files_are_read() {
    let mut fs = game_files();
    for n in 0..=MAX_SKIN_FILES + 1 {
        fs.add(
            &format!("models/m/test.dpm_{n}.skin"),
            b"body,body\n".to_vec(),
        );
    }
    let model = dpm(&["body"]);
    let t = find_textures(&model, Some((&fs, "models/m/test.dpm")), NO_LIMIT);
    assert_eq!(t.variants.len(), 64);
    assert_eq!(t.variants[63].name, "test.dpm_63");
    assert!(t.variants.iter().all(|v| v.meshes
        == [Some(VariantTexture {
            name: "body".into(),
            image: Some(0)
        })]));
    assert_eq!(t.images.len(), 1);
    assert!(
        warned(&t, &["models/m/test.dpm_64.skin", "more than 64"]),
        "{:?}",
        t.warnings
    );
    assert!(!fs.asked().iter().any(|p| p.ends_with("_65.skin")));
    assert_eq!(asked_counts(&fs).get("models/m/body.tga"), Some(&1));
}

// ---------------------------------------------------------------------------------------------
// Hostile names and sizes
// ---------------------------------------------------------------------------------------------

#[test]
fn names_that_leave_the_filesystem_are_never_read() {
    let mut fs = game_files();
    fs.add("x.tga", tga());
    fs.add("models/m/x.tga", tga());
    fs.add(
        "models/m/test.dpm_0.skin",
        b"body,../../etc/passwd\nreplace face /etc/shadow\n".to_vec(),
    );
    let hostile = ["../x", "/etc/x", "a\\..\\x", "C:/x", "models/../../x"];
    let mut shaders = hostile.to_vec();
    shaders.push("face");
    shaders.push("body");
    let model = dpm(&shaders);
    let t = find_textures(&model, Some((&fs, "models/m/test.dpm")), NO_LIMIT);

    for p in fs.asked() {
        assert!(
            !p.contains("..") && !p.starts_with('/') && !p.contains('\\') && !p.contains(':'),
            "asked for {p}"
        );
        assert!(!p.contains("etc") && !p.contains("x."), "asked for {p}");
    }
    assert_eq!(&t.mesh_images[..5], [None; 5]);
    assert!(t.mesh_images[5].is_some() && t.mesh_images[6].is_some());
    for (k, name) in hostile.iter().enumerate() {
        assert!(
            warned(
                &t,
                &[&format!("mesh {k}"), &format!("{name:?}"), "not looked for"]
            ),
            "{name}: {:?}",
            t.warnings
        );
    }
    assert!(warned(
        &t,
        &["line 1", "../../etc/passwd", "not looked for"]
    ));
    assert!(warned(&t, &["line 2", "/etc/shadow", "not looked for"]));
    // Meshes 5 and 6 are `face` and `body`: listed, with no image.
    let listed: Vec<_> = t.variants[0]
        .meshes
        .iter()
        .map(|m| m.as_ref().map(|m| m.image))
        .collect();
    assert_eq!(
        listed,
        [None, None, None, None, None, Some(None), Some(None)]
    );

    // A model whose own path leaves: nothing beside it, and a warning.
    fs.forget();
    let t = find_textures(&model, Some((&fs, "../models/m/test.dpm")), NO_LIMIT);
    assert!(
        warned(&t, &["\"../models/m/test.dpm\"", "not inside"]),
        "{:?}",
        t.warnings
    );
    assert!(t.variants.is_empty());
    assert!(
        fs.asked()
            .iter()
            .all(|p| !p.contains("..") && !p.ends_with(".skin"))
    );
}

/// A PNG chunk with its CRC.
fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut covered = kind.to_vec();
    covered.extend_from_slice(data);
    out.extend_from_slice(&crc32(&covered).to_be_bytes());
    out
}

/// A PNG whose header declares `w`x`h` RGBA pixels, with almost no data.
fn png_declaring(w: u32, h: u32) -> Vec<u8> {
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(chunk(b"IHDR", &ihdr));
    out.extend(chunk(
        b"IDAT",
        &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    ));
    out.extend(chunk(b"IEND", &[]));
    out
}

/// A TGA whose header declares `w`x`h` 32-bit pixels, with 16 bytes of data.
fn tga_declaring(w: u16, h: u16) -> Vec<u8> {
    let mut out = vec![0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    out.extend_from_slice(&w.to_le_bytes());
    out.extend_from_slice(&h.to_le_bytes());
    out.extend_from_slice(&[32, 8]);
    out.extend_from_slice(&[0x55; 16]);
    out
}

#[test]
fn an_image_declaring_30000_squared_pixels_is_refused_without_allocating_them() {
    // 30000 x 30000 RGBA would be 3.6 GB.
    let mut fs = MemoryFs::default();
    fs.add("big.tga", tga_declaring(30_000, 30_000));
    fs.add("huge.png", png_declaring(30_000, 30_000));
    let model = dpm(&["big", "huge"]);
    let limit = 1 << 20;
    let (t, peak) = counting_alloc::peak_of(|| find_textures(&model, Some((&fs, "m.dpm")), limit));
    assert_eq!(t.mesh_images, [None, None]);
    assert!(t.images.is_empty());
    for file in ["big.tga", "huge.png"] {
        assert!(
            warned(
                &t,
                &[
                    file,
                    "declares 30000x30000 pixels",
                    "3600000000 bytes",
                    "memory limit"
                ]
            ),
            "{file}: {:?}",
            t.warnings
        );
    }
    let read: usize = ["big.tga", "huge.png"]
        .map(|f| fs.files[f].len())
        .iter()
        .sum();
    assert!(peak < counting_alloc::budget(read), "{peak} bytes of heap");

    // No limit given (0) is loading's default of 1 GiB, which refuses it too.
    let (t, peak) = counting_alloc::peak_of(|| find_textures(&model, Some((&fs, "m.dpm")), 0));
    assert_eq!(t.mesh_images, [None, None]);
    let left = (1u64 << 30) - fs.files["big.tga"].len() as u64;
    assert!(
        warned(&t, &["big.tga", &format!("more than the {left} bytes")]),
        "{:?}",
        t.warnings
    );
    assert!(peak < counting_alloc::budget(read), "{peak} bytes of heap");
}

#[test]
fn the_limit_counts_file_bytes_and_decoded_rgba_and_warns_when_over() {
    let mut fs = MemoryFs::default();
    fs.add("body.tga", tga());
    fs.add("face.png", png());
    let model = dpm(&["body", "face"]);
    // Exactly the TGA's bytes and its 4x2 RGBA pixels: the TGA fits, nothing is left for the PNG.
    let exact = tga().len() as u64 + 4 * 2 * 4;
    let t = find_textures(&model, Some((&fs, "m.dpm")), exact);
    assert_eq!(t.mesh_images, [Some(0), None], "{:?}", t.warnings);
    assert!(
        warned(
            &t,
            &[
                "face.png",
                &format!("holds {} bytes", png().len()),
                "memory limit"
            ]
        ),
        "{:?}",
        t.warnings
    );
    // One byte less: the TGA's pixels do not fit either, refused on its header.
    let t = find_textures(&model, Some((&fs, "m.dpm")), exact - 1);
    assert_eq!(t.mesh_images, [None, None]);
    assert!(
        warned(
            &t,
            &[
                "body.tga",
                "declares 4x2 pixels (32 bytes decoded)",
                "31 bytes"
            ]
        ),
        "{:?}",
        t.warnings
    );
}

#[test]
fn undecodable_images_are_warnings_and_the_next_candidate_is_tried() {
    let mut fs = MemoryFs::default();
    fs.add("body.tga", b"not a targa at all".to_vec());
    fs.add("body.png", png());
    fs.add("face.png", b"\x89PNG\r\n\x1a\ntruncated".to_vec());
    let model = dpm(&["body", "face"]);
    let t = find_textures(&model, Some((&fs, "m.dpm")), NO_LIMIT);
    assert_eq!(t.mesh_images, [Some(0), None]);
    assert_eq!(t.images[0].path, "body.png");
    assert!(
        warned(&t, &["body.tga", "cannot be decoded"]),
        "{:?}",
        t.warnings
    );
    assert!(
        warned(&t, &["face.png", "cannot be decoded"]),
        "{:?}",
        t.warnings
    );
    assert!(
        warned(&t, &["mesh 1", "\"face\"", "no usable image"]),
        "{:?}",
        t.warnings
    );
}

// ---------------------------------------------------------------------------------------------
// The Sims
// ---------------------------------------------------------------------------------------------

#[test]
fn sims_textures_are_bmp_first_then_lower_case_then_in_textures() {
    let dir = TempDir::new("sims");
    // Lower case beside the model, as a BMP; a PNG of the name as given comes after any BMP.
    dir.write("sims/b001skin.bmp", &bmp());
    dir.write("sims/B001Skin.png", &png());
    // The prototype's folder, name as given.
    dir.write("sims/Textures/DuChin.png", &png());
    let fs = DirFileSystem::new(&dir.0);
    let load = |texture: &str| {
        let model = skn(texture);
        find_textures(&model, Some((&fs, "sims/xskin-body.skn")), NO_LIMIT)
    };

    let t = load("B001Skin");
    assert_eq!(t.mesh_images, [Some(0)]);
    assert_eq!(t.images[0].path, "sims/B001Skin.png");
    let t = load("B001SKIN");
    assert_eq!(t.mesh_images, [Some(0)], "{:?}", t.warnings);
    assert_eq!(t.images[0].path, "sims/b001skin.bmp");
    assert_eq!(
        png_rgba(&t.images[0].png),
        image::DynamicImage::from(bmp_pixels()).to_rgba8()
    );
    let t = load("DuChin");
    assert_eq!(t.images[0].path, "sims/Textures/DuChin.png");
    assert_eq!(t.images[0].png, png());
    let t = load("nothing");
    assert_eq!(t.mesh_images, [None]);
    assert!(
        warned(&t, &["sims/nothing.bmp", "sims/Textures/nothing.jpg"]),
        "{:?}",
        t.warnings
    );
    // "x" is the files' "no texture": nothing looked for, nothing said.
    assert!(skn("x").meshes()[0].shader().is_empty());
    let t = load("x");
    assert_eq!(
        (t.mesh_images.as_slice(), t.warnings.len()),
        ([None].as_slice(), 0)
    );

    // Bound to a skeleton the meshes keep their format, and their lookups.
    let skeleton = Model::load(
        sims_fixtures::TINY_SKELETON.as_bytes(),
        &LoadOptions {
            format: Format::SimsCmx,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    let bound = Model::bind(&skn("DuChin"), &skeleton).unwrap();
    let t = find_textures(&bound, Some((&fs, "sims/xskin-body.skn")), NO_LIMIT);
    assert_eq!(t.images[0].path, "sims/Textures/DuChin.png");
}

// ---------------------------------------------------------------------------------------------
// MM2
// ---------------------------------------------------------------------------------------------

#[test]
fn mm2_textures_only_in_tex_are_one_warning() {
    let mut fs = MemoryFs::default();
    fs.add("anim/road.tex", vec![1; 64]);
    fs.add("anim/rail.tex", vec![1; 64]);
    fs.add("anim/sign.tex", vec![1; 64]);
    fs.add("anim/textures/sign.tga", tga());
    let meshes = vec![
        triangle("road_m", "road"),
        triangle("sign_m", "sign"),
        // A material without a texture gives its own name.
        triangle("glass", "glass"),
        triangle("rail_m", "rail"),
        triangle("lamp_m", "lamp"),
    ];
    let model = Model::from_parts(one_bone(Format::Mm2Mod, meshes)).unwrap();
    let t = find_textures(&model, Some((&fs, "anim/car.mod")), NO_LIMIT);
    assert_eq!(t.mesh_images, [None, Some(0), None, None, None]);
    assert_eq!(t.images[0].path, "anim/textures/sign.tga");
    assert_eq!(t.warnings.len(), 2, "{:?}", t.warnings);
    assert!(
        warned(&t, &[".tex", "\"road\", \"rail\""]),
        "{:?}",
        t.warnings
    );
    assert!(warned(&t, &["mesh 4", "anim/lamp.tga"]), "{:?}", t.warnings);
    // The .tex files are looked at, not read.
    assert!(t.variants.is_empty());
}

// ---------------------------------------------------------------------------------------------
// DMF
// ---------------------------------------------------------------------------------------------

/// A DMF (saved and loaded back) with these textures and one material per entry of
/// `material_textures`; a mesh for each material, then one with none. DMF keeps a mesh per
/// material, so the loaded meshes are in that order.
fn dmf_with(textures: Vec<Texture>, material_textures: &[Option<u32>]) -> Model {
    let mut meshes: Vec<MeshParts> = (0..material_textures.len())
        .map(|i| MeshParts {
            material: Some(i as u32),
            ..triangle(&format!("m{i}"), "")
        })
        .collect();
    meshes.push(triangle("plain", ""));
    let mut parts = one_bone(Format::Dmf, meshes);
    parts.materials = material_textures
        .iter()
        .enumerate()
        .map(|(i, &texture)| Material {
            id: i as i16,
            name: Name::from(format!("mat{i}").as_str()),
            texture,
            diffuse: [1.0; 4],
            ..Material::default()
        })
        .collect();
    parts.textures = textures;
    let bytes = Model::from_parts(parts).unwrap().save(Format::Dmf).unwrap();
    let model = Model::load(
        &bytes,
        &LoadOptions {
            format: Format::Dmf,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    let textures: Vec<Option<u32>> = model
        .meshes()
        .iter()
        .map(|m| {
            m.material()
                .and_then(|i| model.materials()[i as usize].texture)
        })
        .collect();
    let mut expected = material_textures.to_vec();
    expected.push(None);
    assert_eq!(textures, expected);
    model
}

fn texture(name: &str, image: Vec<u8>, width: u16, height: u16) -> Texture {
    Texture {
        id: 0,
        name: name.into(),
        width,
        height,
        image,
        ..Texture::default()
    }
}

#[test]
fn a_dmf_texture_comes_back_byte_for_byte() {
    let model = dmf_with(
        vec![
            texture("skin", png(), 2, 3),
            texture("cloth", tga_png_wrong_size(), 5, 5),
        ],
        // Two materials share texture 0: it is checked once.
        &[Some(0), Some(0), Some(1)],
    );
    let t = find_textures(&model, None, NO_LIMIT);
    assert_eq!(t.mesh_images, [Some(0), Some(0), Some(1), None]);
    assert_eq!(t.images.len(), 2);
    assert_eq!(t.images[0].png, png());
    assert_eq!(
        (
            t.images[0].name.as_str(),
            t.images[0].path.as_str(),
            t.images[0].width,
            t.images[0].height
        ),
        ("skin", "", 2, 3)
    );
    // A header that disagrees with the model's numbers: a warning; the image is still the file's.
    assert_eq!((t.images[1].width, t.images[1].height), (4, 2));
    assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
    assert!(
        warned(&t, &["texture 1", "\"cloth\"", "4x2", "5x5"]),
        "{:?}",
        t.warnings
    );

    // A texture that is no image is a warning, and the mesh goes without.
    let model = dmf_with(
        vec![texture("bad", b"\x89PNG\r\n\x1a\nxx".to_vec(), 1, 1)],
        &[Some(0)],
    );
    let t = find_textures(&model, None, NO_LIMIT);
    assert_eq!(t.mesh_images, [None, None]);
    assert!(
        warned(&t, &["texture 0", "\"bad\"", "cannot be decoded"]),
        "{:?}",
        t.warnings
    );
}

/// The 4x2 TGA pixels as a PNG.
fn tga_png_wrong_size() -> Vec<u8> {
    encode(tga_pixels(), ImageFormat::Png)
}

// ---------------------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------------------

#[test]
fn xon_zombie_skin_files_are_four_variants() {
    let Some(dir) = corpus::corpus_subdir("dpm", "xon_zombie_skin_files_are_four_variants") else {
        return;
    };
    let bytes = std::fs::read(dir.join("xon_zombie.dpm")).unwrap();
    let model = Model::load(&bytes, &LoadOptions::default()).unwrap();
    let shaders: Vec<String> = model
        .meshes()
        .iter()
        .map(|m| m.shader().to_string())
        .collect();
    assert_eq!(shaders, ["bloodyskull", "meat"]);
    let fs = DirFileSystem::new(&dir);
    let t = find_textures(&model, Some((&fs, "xon_zombie.dpm")), 64 << 20);
    let got: Vec<(&str, Vec<&str>)> = t
        .variants
        .iter()
        .map(|v| {
            let names = v
                .meshes
                .iter()
                .map(|m| m.as_ref().map_or("-", |m| m.name.as_str()))
                .collect();
            (v.name.as_str(), names)
        })
        .collect();
    assert_eq!(
        got,
        [
            ("xon_zombie.dpm_0", vec!["bloodyskull", "meat"]),
            ("xon_zombie.dpm_1", vec!["bloodyskull_alien", "meat_alien"]),
            ("xon_zombie.dpm_2", vec!["bloodyskull_robot", "meat_robot"]),
            ("xon_zombie.dpm_3", vec!["cleanskull", "meat"]),
        ]
    );
    // The corpus keeps models, not their images: each texture a warning naming the files tried.
    assert!(t.images.is_empty());
    for name in [
        "bloodyskull",
        "bloodyskull_alien",
        "bloodyskull_robot",
        "cleanskull",
        "meat",
        "meat_alien",
        "meat_robot",
    ] {
        assert!(
            warned(
                &t,
                &[
                    &format!("texture {name:?}: no image found"),
                    &format!("{name}.tga")
                ]
            ),
            "{name}: {:?}",
            t.warnings
        );
    }
    assert_eq!(t.warnings.len(), 7, "{:?}", t.warnings);
}

// ---------------------------------------------------------------------------------------------
// IQM: .skin files matched by mesh name, and the skins the file carries (FTE_SKINS)
// ---------------------------------------------------------------------------------------------

/// An IQM of two named meshes drawn with `body` and `face`; mesh `head` carries two skins of its
/// own (the second of two textures), mesh `torso` none. Written and read back as a file would be.
fn iqm_with_skins() -> Model {
    let frame = |material: &str| ossa::SkinFrame {
        material: material.into(),
        shader_text: Name::empty(),
    };
    let mut head = triangle("head", "face");
    head.skins = vec![
        ossa::MeshSkin {
            frames: vec![frame("body_alt")],
            interval: 0.0,
        },
        ossa::MeshSkin {
            frames: vec![frame("gfx/decal/eye"), frame("body")],
            interval: 0.5,
        },
    ];
    let parts = one_bone(Format::Iqm, vec![triangle("torso", "body"), head]);
    let bytes = Model::from_parts(parts).unwrap().save(Format::Iqm).unwrap();
    Model::load(&bytes, &LoadOptions::default()).unwrap()
}

#[test]
fn iqm_skin_files_match_mesh_names_and_the_files_own_skins_follow() {
    let model = iqm_with_skins();
    assert_eq!(model.meshes()[1].skins().len(), 2);
    let mut fs = game_files();
    // DarkPlaces matches an IQM's .skin lines against its mesh names, not its materials.
    fs.add(
        "models/m/test.iqm_0.skin",
        b"head,body\nface,eye\n".to_vec(),
    );
    let t = find_textures(&model, Some((&fs, "models/m/test.iqm")), NO_LIMIT);

    let image_of = |path: &str| t.images.iter().position(|i| i.path == path);
    let (body, face) = (
        image_of("models/m/body.tga"),
        image_of("models/m/textures/face.jpeg"),
    );
    let (alt, eye) = (
        image_of("models/m/textures/body_alt.png"),
        image_of("gfx/decal/eye.png"),
    );
    assert!(body.is_some() && face.is_some() && alt.is_some() && eye.is_some());
    assert_eq!(t.mesh_images, [body, face]);
    let vt = |name: &str, image| {
        Some(VariantTexture {
            name: name.to_owned(),
            image,
        })
    };
    let variants: Vec<(&str, &[Option<VariantTexture>])> = t
        .variants
        .iter()
        .map(|v| (v.name.as_str(), v.meshes.as_slice()))
        .collect();
    assert_eq!(
        variants,
        [
            ("test.iqm_0", &[None, vt("body", body)][..]),
            ("skin 0", &[None, vt("body_alt", alt)][..]),
            ("skin 1", &[None, vt("gfx/decal/eye", eye)][..]),
        ]
    );
    assert!(
        warned(
            &t,
            &["models/m/test.iqm_0.skin line 2", "no mesh named \"face\""]
        ),
        "{:?}",
        t.warnings
    );
}
