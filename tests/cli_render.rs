//! `ossa render`, run as the built binary: the PNG it writes (size, background, determinism),
//! poses and sheets, thumbnails of a directory with a failing file among them, usage errors, and
//! the 1998 prototype's colonel standing, textured.

#![cfg(feature = "cli")]

mod cli_support;
mod corpus;
mod sims_fixtures;

use cli_support::{TempDir, corpus, ossa, ossa_peak, tube_dpm};

/// The picture's size and RGBA pixels.
fn read_png(path: &std::path::Path) -> (u32, u32, Vec<u8>) {
    let image = image::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_rgba8();
    (image.width(), image.height(), image.into_raw())
}

fn pixel(rgba: &[u8], width: u32, x: u32, y: u32) -> [u8; 4] {
    let at = ((y * width + x) * 4) as usize;
    rgba[at..at + 4].try_into().unwrap()
}

/// The bounding box (x0, y0, x1, y1 inclusive) of the pixels that are not `background`.
fn silhouette(rgba: &[u8], width: u32, background: [u8; 4]) -> Option<(u32, u32, u32, u32)> {
    let mut bounds: Option<(u32, u32, u32, u32)> = None;
    for (k, p) in rgba.chunks_exact(4).enumerate() {
        if p != background {
            let (x, y) = (k as u32 % width, k as u32 / width);
            bounds = Some(match bounds {
                None => (x, y, x, y),
                Some((a, b, c, d)) => (a.min(x), b.min(y), c.max(x), d.max(y)),
            });
        }
    }
    bounds
}

#[test]
fn the_demo_rig_is_drawn_at_the_size_asked_on_the_background_asked() {
    let dir = TempDir::new("render", "demo");
    let run = ossa(
        &dir,
        &[
            "render",
            "--demo",
            "--size",
            "320x200",
            "--background",
            "#102030",
            "-o",
            "a.png",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.line("a.png:").contains("320x200"), "{}", run.stdout);
    assert!(run.stdout.contains("320 triangles"), "{}", run.stdout);
    let (w, h, rgba) = read_png(&dir.path("a.png"));
    assert_eq!((w, h), (320, 200));
    let background = [0x10, 0x20, 0x30, 0xff];
    for (x, y) in [(0, 0), (319, 0), (0, 199), (319, 199)] {
        assert_eq!(pixel(&rgba, w, x, y), background, "corner ({x}, {y})");
    }
    // The tube fills the frame (with a margin): it reaches past a third of each side's length
    // and leaves the edges free.
    let (x0, y0, x1, y1) = silhouette(&rgba, w, background).expect("something is drawn");
    assert!(
        x0 > 0 && y0 > 0 && x1 < w - 1 && y1 < h - 1,
        "{x0} {y0} {x1} {y1}"
    );
    assert!(x1 - x0 > w / 3 || y1 - y0 > h / 3, "{x0} {y0} {x1} {y1}");

    // The same input gives the same bytes.
    let again = ossa(
        &dir,
        &[
            "render",
            "--demo",
            "--size",
            "320x200",
            "--background",
            "102030",
            "-o",
            "b.png",
        ],
    );
    assert_eq!(again.code, 0);
    assert_eq!(
        std::fs::read(dir.path("a.png")).unwrap(),
        std::fs::read(dir.path("b.png")).unwrap()
    );

    // Transparent is alpha 0 around the model.
    let run = ossa(
        &dir,
        &[
            "render",
            "--demo",
            "--background",
            "transparent",
            "-o",
            "t.png",
        ],
    );
    assert_eq!(run.code, 0);
    let (w, _, rgba) = read_png(&dir.path("t.png"));
    assert_eq!(pixel(&rgba, w, 0, 0)[3], 0);
}

#[test]
fn poses_change_the_picture_and_a_sheet_has_a_cell_a_frame() {
    let dir = TempDir::new("render", "poses");
    let draw = |name: &str, extra: &[&str]| {
        let mut args = vec!["render", "--demo", "--size", "96x96", "-o", name];
        args.extend_from_slice(extra);
        let run = ossa(&dir, &args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        std::fs::read(dir.path(name)).unwrap()
    };
    let rest = draw("rest.png", &[]);
    let frame0 = draw("frame0.png", &["--frame", "0"]);
    let bent = draw("bent.png", &["--frame", "2"]);
    let scene = draw("scene.png", &["--scene", "wave", "--time", "0.2"]);
    let by_index = draw("index.png", &["--scene", "0", "--time", "0.2"]);
    let blend = draw("blend.png", &["--blend", "2:1"]);
    assert_eq!(rest, frame0, "the default pose is frame 0");
    assert_ne!(rest, bent);
    // The wave runs at 10 frames a second: 0.2 s is frame 2.
    assert_eq!(scene, bent);
    assert_eq!(by_index, bent);
    assert_eq!(blend, bent);
    // The views are angles: side is a quarter turn toward the model's right, level.
    let side = draw("side.png", &["--view", "side"]);
    let turned = draw("turned.png", &["--yaw", "90", "--pitch", "0"]);
    assert_eq!(side, turned);
    assert_ne!(side, rest);

    // The wave has 4 frames, fewer than 8 cells: one cell each, in one row.
    let run = ossa(
        &dir,
        &[
            "render", "--demo", "--sheet", "--size", "100x80", "-o", "s.png",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("a sheet of 4 cells"), "{}", run.stdout);
    let (w, h, _) = read_png(&dir.path("s.png"));
    assert_eq!((w, h), (400, 80));
    // Two cells a scene, wrapped at eight: still one row.
    let run = ossa(
        &dir,
        &[
            "render", "--demo", "--sheet", "--cells", "2", "--size", "50x40", "-o", "s2.png",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (w, h, _) = read_png(&dir.path("s2.png"));
    assert_eq!((w, h), (100, 40));

    // A scene that is not there is the model's failure, naming the scenes it has.
    let run = ossa(
        &dir,
        &["render", "--demo", "--scene", "walk", "-o", "x.png"],
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("OSSA_ERR_NOT_FOUND") && run.stderr.contains("wave"),
        "{}",
        run.stderr
    );
    let run = ossa(&dir, &["render", "--demo", "--frame", "9", "-o", "x.png"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!dir.path("x.png").exists());
}

#[test]
fn usage_errors_say_what_is_wrong() {
    let dir = TempDir::new("render", "usage");
    for (args, says) in [
        (&["render", "--demo"][..], "-o OUTPUT"),
        (&["render", "-o", "a.png"][..], "needs a model file"),
        (
            &[
                "render", "--demo", "--frame", "1", "--blend", "0:1", "-o", "a.png",
            ][..],
            "one of --frame",
        ),
        (
            &["render", "--demo", "--time", "1", "-o", "a.png"][..],
            "--time needs --scene",
        ),
        (
            &["render", "--demo", "--size", "0x5", "-o", "a.png"][..],
            "--size needs",
        ),
        (
            &["render", "--demo", "--size", "9000x5", "-o", "a.png"][..],
            "--size needs",
        ),
        (
            &["render", "--demo", "--view", "diagonal", "-o", "a.png"][..],
            "--view needs",
        ),
        (
            &["render", "--demo", "--background", "red", "-o", "a.png"][..],
            "--background needs",
        ),
        (
            &["render", "--demo", "--sheet", "--frame", "1", "-o", "a.png"][..],
            "--sheet",
        ),
        (
            &["render", "--demo", "--cells", "3", "-o", "a.png"][..],
            "--cells is for --sheet",
        ),
        (
            &["render", "--demo", "--blend", "1:x", "-o", "a.png"][..],
            "--blend needs",
        ),
        (
            &["render", "--demo", "--yaw", "left", "-o", "a.png"][..],
            "--yaw needs",
        ),
    ] {
        let run = ossa(&dir, args);
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
    assert!(dir.listing(".").is_empty(), "nothing is written");
}

#[test]
fn a_directory_gives_a_thumbnail_a_model_and_says_which_failed() {
    let dir = TempDir::new("render", "thumbnails");
    dir.write("in/tube.dpm", tube_dpm(4));
    let rig = ossa::synth::TubeRig::default().build().unwrap();
    dir.write("in/tube_dmf.dmf", rig.save(ossa::Format::Dmf).unwrap());
    dir.write("in/broken.dpm", b"DARKPLACESMODEL\0 not really");
    dir.write("in/notes.txt", b"not a model");
    let run = ossa(&dir, &["render", "in", "-o", "out", "--thumbnail", "64"]);
    assert_eq!(run.code, 1, "one input failed");
    assert!(run.stderr.contains("broken.dpm"), "{}", run.stderr);
    assert!(
        run.stdout.contains("drew 2 of 3 inputs into out; 1 failed"),
        "{}",
        run.stdout
    );
    assert_eq!(dir.listing("out"), ["tube.png", "tube_dmf.png"]);
    for name in ["out/tube.png", "out/tube_dmf.png"] {
        let (w, h, rgba) = read_png(&dir.path(name));
        assert_eq!((w, h), (64, 64), "{name}");
        let corner = pixel(&rgba, w, 0, 0);
        assert!(
            silhouette(&rgba, w, corner).is_some(),
            "{name}: something is drawn"
        );
    }
    // Several inputs need a directory, not a PNG name.
    let run = ossa(
        &dir,
        &["render", "in/tube.dpm", "in/tube_dmf.dmf", "-o", "x.png"],
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("give -o DIR"), "{}", run.stderr);
}

/// The 1998 prototype's colonel, dressed from his `.msh` parts: a person standing, textured.
#[test]
fn the_1998_colonel_stands_textured() {
    let Some(sims) = corpus("sims/proto1998") else {
        return;
    };
    let dir = TempDir::new("render", "colonel");
    let suit = sims.join("colonelsuit.CMX");
    let run = ossa(
        &dir,
        &[
            "render",
            suit.to_str().unwrap(),
            "--suit",
            "colonel",
            "--view",
            "front",
            "--size",
            "200x300",
            "-o",
            "colonel.png",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("21 meshes"), "{}", run.stdout);
    assert!(run.stdout.contains("textured"), "{}", run.stdout);
    let (w, _, rgba) = read_png(&dir.path("colonel.png"));
    let background = pixel(&rgba, w, 0, 0);
    let (x0, y0, x1, y1) = silhouette(&rgba, w, background).unwrap();
    let (width, height) = (x1 - x0 + 1, y1 - y0 + 1);
    // Standing: far taller than wide (arms at his sides), seen from the front.
    assert!(height > 2 * width, "{width} x {height}");
    // Textured: many colours, not one shaded material.
    let mut colours: Vec<[u8; 4]> = rgba
        .chunks_exact(4)
        .map(|p| p.try_into().unwrap())
        .filter(|p| *p != background)
        .collect();
    colours.sort();
    colours.dedup();
    assert!(colours.len() > 500, "{} colours", colours.len());
}

/// Ross's suit on the colonel's skeleton without its toes: the toe parts hang on `L_TOE0` and
/// `R_TOE0`, which it lacks. They are not drawn, and each is a warning naming the suit, the skin,
/// the mesh and the bone; the other 19 parts are.
#[test]
fn a_suit_part_on_a_bone_the_skeleton_lacks_is_left_out_with_a_warning() {
    let Some(proto) = corpus("sims/proto1998") else {
        return;
    };
    let dir = TempDir::new("render", "toeless");
    dir.write("toeless.cmx", sims_fixtures::toeless_colonel(&proto));
    let run = ossa(
        &dir,
        &[
            "render",
            "toeless.cmx",
            "--suit",
            "rossnud",
            "--search",
            proto.to_str().unwrap(),
            "--no-textures",
            "-o",
            "ross.png",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(", 19 meshes,"), "{}", run.stdout);
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(
        warnings,
        [
            "ossa: warning: suit rossnud skin 16 (mesh xskin-rossnud-R_TOE0-TOEL on bone R_TOE0): \
             the skeleton has no bone named \"R_TOE0\": the part is left out",
            "ossa: warning: suit rossnud skin 20 (mesh xskin-rossnud-L_TOE0-TOER on bone L_TOE0): \
             the skeleton has no bone named \"L_TOE0\": the part is left out",
        ]
    );
}

/// A sheet of many cells holds one cell's skinned vertices at a time: a model of 51,200
/// vertices and 800 one-frame scenes drawn as 800 small cells peaks near a one-picture render of it, not
/// at 800 times its vertices (once 2.3 GB for a 1.5 MB DPM).
#[test]
fn a_sheet_of_many_cells_skins_one_cell_at_a_time() {
    // Smaller in debug builds, where skinning is many times slower.
    let (rings, frames) = if cfg!(debug_assertions) {
        (25, 200)
    } else {
        (100, 800)
    };
    let rig = ossa::synth::TubeRig {
        bones: 4,
        rings_per_bone: rings,
        sides: 128,
        frames,
        ..ossa::synth::TubeRig::default()
    };
    let model = rig.build().unwrap();
    let vertices: usize = model.meshes().iter().map(|m| m.vertex_count()).sum();
    assert!(vertices > 500 * rings as usize, "{vertices}");
    let dir = TempDir::new("cli-render", "big-sheet");
    dir.write("big.dpm", ossa::dpm::write(&model).unwrap());
    let out = dir.path("out.txt");
    let (code, one) = ossa_peak(&dir.0, &["render", "big.dpm", "-o", "one.png"], &out);
    assert_eq!(code, 0, "{}", std::fs::read_to_string(&out).unwrap());
    let args = [
        "render",
        "big.dpm",
        "--sheet",
        "--cells",
        "8",
        "--size",
        "8x8",
        "-o",
        "sheet.png",
    ];
    let (code, sheet) = ossa_peak(&dir.0, &args, &out);
    let said = std::fs::read_to_string(&out).unwrap();
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains(&format!("a sheet of {frames} cells")),
        "{said}"
    );
    eprintln!("peak RSS: one picture {one}, {frames} cells {sheet}");
    // 800 cells' skinned vertices would be 800 x 51,200 x 24 bytes, about 1 GB (in debug, 200 x
    // 12,800 x 24, about 60 MB).
    assert!(sheet < one + (16 << 20), "{sheet} against {one}");
}

/// Meshes that share one image share its decoded pixels: twenty meshes drawn with one 2048²
/// PNG hold it once, not twenty times (forty meshes on a 4096² image once took 2.6 GB).
#[cfg(feature = "gltf")]
#[test]
fn meshes_sharing_an_image_share_its_pixels() {
    let dir = TempDir::new("cli-render", "shared-texture");
    let side = 2048;
    let image = image::RgbaImage::from_fn(side, side, |x, y| {
        image::Rgba([(x % 256) as u8, (y % 256) as u8, 128, 255])
    });
    let mut png = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    dir.write("skin.png", &png);

    let mut parts = ossa::ModelParts::new(ossa::Format::Dpm);
    parts.bones.push(ossa::Bone {
        name: "root".into(),
        parent: -1,
        flags: 0,
    });
    parts.frames.push(ossa::Frame::named("rest"));
    parts.poses = vec![ossa::Mat3x4::IDENTITY].into();
    parts.meshes = (0..20)
        .map(|m| ossa::MeshParts {
            shader: "skin".into(),
            influence_start: vec![0, 1, 2, 3],
            influences: (0..3)
                .map(|i| ossa::Influence {
                    origin: [m as f32 + i as f32, (i % 2) as f32, 0.0],
                    weight: 1.0,
                    normal: [0.0, 0.0, 1.0],
                    bone: 0,
                })
                .collect(),
            indices: vec![0, 1, 2],
            texcoords: Some(vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]),
            ..ossa::MeshParts::default()
        })
        .collect();
    let model = ossa::Model::from_parts(parts).unwrap();
    dir.write("many.dpm", ossa::dpm::write(&model).unwrap());
    let out = dir.path("out.txt");
    let (code, peak) = ossa_peak(&dir.0, &["render", "many.dpm", "-o", "x.png"], &out);
    let said = std::fs::read_to_string(&out).unwrap();
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("20 meshes, 20 triangles, 20 textured"),
        "{said}"
    );
    eprintln!("peak RSS {peak}: {said}");
    // One decoded copy is 16 MiB; twenty would be 320 MiB.
    assert!(peak < 128 << 20, "peak RSS {peak}");
}
