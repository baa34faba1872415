//! The software renderer on models built here, where the right picture is known, and on the
//! corpus, where the silhouette must match the projected bounds of ossa's own skinning.

mod common;

use ossa::render::{
    self, BACK_FACE, BONE_LINE, Camera, Image, JOINT, MAX_SIDE, RenderOptions, SheetCell, SheetRow,
    View, WIRE,
};
use ossa::{
    Bone, ErrorCode, Format, Frame, Influence, LoadOptions, Mat3x4, MeshParts, Model, ModelParts,
    Name,
};

const BG: [u8; 4] = [1, 2, 3, 0];

/// An axis-aligned box, `lo` to `hi`, on `bone` (whose bind pose is the identity), each face
/// its own four vertices wound counter-clockwise seen from outside.
fn box_mesh(lo: [f32; 3], hi: [f32; 3], bone: u32, color: Option<[u8; 4]>) -> MeshParts {
    let mut influence_start = vec![0u32];
    let mut influences = Vec::new();
    let mut indices = Vec::new();
    let mid = [0, 1, 2].map(|k| (lo[k] + hi[k]) * 0.5);
    let half = [0, 1, 2].map(|k| (hi[k] - lo[k]) * 0.5);
    for k in 0..3 {
        for s in [1.0f32, -1.0] {
            // u x v = s e_k: the face's outward normal.
            let (mut u, mut v) = ((k + 1) % 3, (k + 2) % 3);
            if s < 0.0 {
                std::mem::swap(&mut u, &mut v);
            }
            let mut normal = [0.0f32; 3];
            normal[k] = s;
            let base = influences.len() as u32;
            for (a, b) in [(-1.0f32, -1.0f32), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let mut p = mid;
                p[k] += s * half[k];
                p[u] += a * half[u];
                p[v] += b * half[v];
                influences.push(Influence {
                    origin: p,
                    weight: 1.0,
                    normal,
                    bone,
                });
                influence_start.push(influences.len() as u32);
            }
            indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    let n = influences.len();
    MeshParts {
        name: Name::from("box"),
        influence_start,
        influences,
        indices,
        colors: color.map(|c| vec![c; n]),
        ..MeshParts::default()
    }
}

/// A model of `format`'s axes with `bones` bones (bone i > 0 a child of i - 1, every bind pose
/// the identity) and these meshes.
fn model(format: Format, bones: u32, meshes: Vec<MeshParts>) -> Model {
    let mut parts = ModelParts::new(format);
    if format == Format::SimsSkn {
        parts.up_axis = 1;
        parts.handedness = -1;
    }
    parts.bones = (0..bones)
        .map(|i| Bone {
            name: Name::from(format!("b{i}").as_str()),
            parent: i as i32 - 1,
            flags: 0,
        })
        .collect();
    parts.frames = vec![Frame::named("rest")];
    parts.poses = vec![Mat3x4::IDENTITY; bones as usize].into();
    parts.meshes = meshes;
    Model::from_parts(parts).unwrap()
}

fn cube() -> Model {
    model(Format::Dpm, 1, vec![box_mesh([-0.5; 3], [0.5; 3], 0, None)])
}

fn front(size: u32) -> RenderOptions {
    RenderOptions {
        width: size,
        height: size,
        view: View::Front,
        background: BG,
        ..RenderOptions::default()
    }
}

fn draw(model: &Model, poses: &[Mat3x4], options: &RenderOptions) -> Image {
    let mut rgba = vec![0u8; options.width as usize * options.height as usize * 4];
    render::render(model, poses, &[], options, &mut rgba).unwrap();
    Image {
        width: options.width,
        height: options.height,
        rgba,
    }
}

fn pixel(image: &Image, x: i64, y: i64) -> [u8; 4] {
    if !(0..image.width as i64).contains(&x) || !(0..image.height as i64).contains(&y) {
        return BG;
    }
    let at = (y as usize * image.width as usize + x as usize) * 4;
    image.rgba[at..at + 4].try_into().unwrap()
}

fn covered(image: &Image, x: i64, y: i64) -> bool {
    pixel(image, x, y) != BG
}

/// The pixel a model-space point lands in.
fn at(camera: &Camera, p: [f32; 3]) -> (i64, i64) {
    let s = camera.project(p);
    (s[0].floor() as i64, s[1].floor() as i64)
}

/// Columns and rows of the non-background pixels: (x0, y0, x1, y1), inclusive.
fn silhouette(image: &Image) -> Option<(i64, i64, i64, i64)> {
    let mut b: Option<(i64, i64, i64, i64)> = None;
    for y in 0..image.height as i64 {
        for x in 0..image.width as i64 {
            if covered(image, x, y) {
                b = Some(match b {
                    None => (x, y, x, y),
                    Some((x0, y0, x1, y1)) => (x0.min(x), y0.min(y), x1.max(x), y1.max(y)),
                });
            }
        }
    }
    b
}

/// Whether the centre of any pixel in column `x` (`axis` 0) or row `x` (`axis` 1) lies inside
/// one of the screen triangles: an independent point-in-triangle test in f64.
fn line_touched(tris: &[[[f32; 3]; 3]], axis: usize, x: i64, size: [i64; 2]) -> bool {
    let c = x as f64 + 0.5;
    tris.iter().any(|t| {
        let t = t.map(|v| [v[0] as f64, v[1] as f64]);
        let lo = t
            .iter()
            .map(|v| v[1 - axis])
            .fold(f64::INFINITY, f64::min)
            .floor() as i64;
        let hi = t
            .iter()
            .map(|v| v[1 - axis])
            .fold(f64::NEG_INFINITY, f64::max)
            .ceil() as i64;
        (lo.max(0)..hi.min(size[1 - axis])).any(|o| {
            let mut p = [0.0; 2];
            p[axis] = c;
            p[1 - axis] = o as f64 + 0.5;
            let e = |a: [f64; 2], b: [f64; 2]| {
                (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
            };
            let w = [e(t[1], t[2]), e(t[2], t[0]), e(t[0], t[1])];
            let area = w[0] + w[1] + w[2];
            // Inside, give or take a thousandth of a pixel's worth of area.
            let slack = 1e-3 * area.abs().sqrt();
            w.iter().all(|v| v * area.signum() >= -slack) && area != 0.0
        })
    })
}

fn shaded(c: [f32; 3]) -> [u8; 4] {
    let [r, g, b] = c.map(|v| (v * 255.0 + 0.5) as u8);
    [r, g, b, 255]
}

#[test]
fn unit_cube_from_the_front_covers_the_expected_square() {
    // 100 px with a 5% margin each side: the unit extent spans 90 px, centred, so pixels 5 to 94
    // in both directions.
    let m = cube();
    let image = draw(&m, m.skeleton().bind_pose(), &front(100));
    let camera = render::frame(&m, m.skeleton().bind_pose(), &front(100)).unwrap();
    assert_eq!(camera.scale, 90.0);
    let (x0, y0, x1, y1) = silhouette(&image).unwrap();
    for (got, want) in [(x0, 5), (y0, 5), (x1, 94), (y1, 94)] {
        assert!((got - want).abs() <= 1, "{:?}", (x0, y0, x1, y1));
    }
    for y in 6..94 {
        for x in 6..94 {
            assert!(covered(&image, x, y), "hole at {x},{y}");
        }
    }
    // The front face looks at the camera and the light: full white, not the back-face tint.
    assert_eq!(pixel(&image, 30, 60), [255, 255, 255, 255]);
}

#[test]
fn the_models_left_is_on_the_pictures_right_in_both_handednesses() {
    // A small marker box on the model's left: +Y for Quake's formats, -X for the Sims'.
    for (format, left, front_axis) in [
        (Format::Dpm, [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]),
        (Format::SimsSkn, [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
    ] {
        let at_left = |s: f32| [0, 1, 2].map(|k| left[k] * 1.5 + s * 0.2);
        let m = model(
            format,
            1,
            vec![
                box_mesh([-0.5; 3], [0.5; 3], 0, None),
                box_mesh(at_left(-1.0), at_left(1.0), 0, Some([0, 0, 255, 255])),
            ],
        );
        let options = front(100);
        let image = draw(&m, m.skeleton().bind_pose(), &options);
        let camera = render::frame(&m, m.skeleton().bind_pose(), &options).unwrap();
        assert_eq!(camera.toward, front_axis, "{format:?}");
        let (x, y) = at(&camera, [left[0] * 1.5, left[1] * 1.5, left[2] * 1.5]);
        assert!(x > 50, "{format:?}: the left marker is at x {x}");
        // Its face toward the viewer is a front face: blue, lit fully.
        assert_eq!(pixel(&image, x, y), [0, 0, 255, 255], "{format:?}");
        // The cube's centre shows its front face, white, in the mirrored frame too.
        assert_eq!(pixel(&image, 30, 50), [255, 255, 255, 255], "{format:?}");
    }
}

#[test]
fn a_bone_rotated_ninety_degrees_moves_its_box() {
    // A body on bone 0 and an arm along +Y (the model's left) on bone 1; turning bone 1 a
    // quarter about +X (the front) raises the arm to +Z (up).
    let m = model(
        Format::Dpm,
        2,
        vec![
            box_mesh([-0.5; 3], [0.5; 3], 0, None),
            box_mesh(
                [-0.1, 0.5, -0.1],
                [0.1, 2.0, 0.1],
                1,
                Some([0, 255, 0, 255]),
            ),
        ],
    );
    let rest = m.skeleton().bind_pose().to_vec();
    let quarter = glam::Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
    let raised = vec![
        Mat3x4::IDENTITY,
        Mat3x4::from_rotation_translation(quarter, [0.0; 3]),
    ];
    let options = front(120);
    let arm_out = [0.0, 1.5, 0.0];
    let arm_up = [0.0, 0.0, 1.5];
    for (poses, shown, empty) in [(&rest, arm_out, arm_up), (&raised, arm_up, arm_out)] {
        let image = draw(&m, poses, &options);
        let camera = render::frame(&m, poses, &options).unwrap();
        let (x, y) = at(&camera, shown);
        assert_eq!(pixel(&image, x, y), [0, 255, 0, 255]);
        let (x, y) = at(&camera, empty);
        assert!(!covered(&image, x, y), "the arm is still at {empty:?}");
    }
    // The framing follows the pose: wide at rest, tall raised.
    let (ax0, ay0, ax1, ay1) = silhouette(&draw(&m, &rest, &options)).unwrap();
    let (bx0, by0, bx1, by1) = silhouette(&draw(&m, &raised, &options)).unwrap();
    assert!(ax1 - ax0 > ay1 - ay0 && by1 - by0 > bx1 - bx0);
}

#[test]
fn reversed_winding_shows_the_back_face_colour() {
    let mut mesh = box_mesh([-0.5; 3], [0.5; 3], 0, None);
    for t in mesh.indices.chunks_exact_mut(3) {
        t.swap(1, 2);
    }
    let m = model(Format::Dpm, 1, vec![mesh]);
    let image = draw(&m, m.skeleton().bind_pose(), &front(64));
    // The face nearest the camera is now a back face: tinted, lit from the side it shows.
    assert_eq!(pixel(&image, 20, 40), shaded(BACK_FACE));
    assert_ne!(pixel(&image, 20, 40), [255, 255, 255, 255]);
}

#[test]
fn the_depth_buffer_hides_the_far_box() {
    // A red box 2 units in front of (+X) a larger green one; both orders of drawing.
    let red = box_mesh(
        [1.5, -0.5, -0.5],
        [2.5, 0.5, 0.5],
        0,
        Some([255, 0, 0, 255]),
    );
    let green = box_mesh(
        [-3.0, -1.0, -1.0],
        [-1.0, 1.0, 1.0],
        0,
        Some([0, 255, 0, 255]),
    );
    for meshes in [vec![red.clone(), green.clone()], vec![green, red]] {
        let m = model(Format::Dpm, 1, meshes);
        let image = draw(&m, m.skeleton().bind_pose(), &front(100));
        assert_eq!(pixel(&image, 50, 50), [255, 0, 0, 255]);
        // Outside the red box, the green one shows.
        assert_eq!(pixel(&image, 15, 50), [0, 255, 0, 255]);
    }
}

#[test]
fn the_same_input_gives_the_same_bytes() {
    let m = ossa::synth::TubeRig::default().build().unwrap();
    let mut poses = vec![Mat3x4::IDENTITY; m.bones().len()];
    m.pose_frames(
        &[ossa::FrameBlend {
            frame: 1,
            weight: 1.0,
        }],
        None,
        &mut poses,
    )
    .unwrap();
    for options in [
        RenderOptions::default(),
        RenderOptions {
            antialias: true,
            wireframe: true,
            bones: true,
            yaw_degrees: Some(-33.3),
            pitch_degrees: Some(12.5),
            ..RenderOptions::default()
        },
    ] {
        let a = draw(&m, &poses, &options);
        let b = draw(&m, &poses, &options);
        assert_eq!(a, b);
        assert!(a.rgba.chunks_exact(4).any(|p| p != options.background));
    }
}

#[test]
fn wireframe_draws_the_edges_and_keeps_the_faces() {
    let m = cube();
    let plain = draw(&m, m.skeleton().bind_pose(), &front(100));
    let wired = draw(
        &m,
        m.skeleton().bind_pose(),
        &RenderOptions {
            wireframe: true,
            ..front(100)
        },
    );
    // The front face's diagonal runs through the centre; its outline along the frame's edges.
    // Pixel (49, 50)'s centre lies on the diagonal x + y = 100.
    assert_eq!(pixel(&plain, 49, 50), [255, 255, 255, 255]);
    assert_eq!(pixel(&wired, 49, 50), WIRE);
    assert_eq!(pixel(&wired, 5, 50), WIRE);
    assert_eq!(pixel(&wired, 50, 94), WIRE);
    // Away from every edge the face is as before.
    assert_eq!(pixel(&wired, 30, 60), pixel(&plain, 30, 60));
    assert_eq!(silhouette(&wired), silhouette(&plain));
}

#[test]
fn bones_are_drawn_over_the_mesh() {
    let mut parts = ModelParts::new(Format::Dpm);
    parts.bones = vec![
        Bone {
            name: Name::from("root"),
            parent: -1,
            flags: 0,
        },
        Bone {
            name: Name::from("tip"),
            parent: 0,
            flags: 0,
        },
    ];
    parts.frames = vec![Frame::named("rest")];
    parts.poses = vec![
        Mat3x4::from_translation([0.0, -0.4, -0.4]),
        Mat3x4::from_translation([0.0, 0.8, 0.8]),
    ]
    .into();
    // The box's vertices in each bone's own space: bone 0 sits at (0, -0.4, -0.4).
    let mut mesh = box_mesh([-0.5, -0.1, -0.1], [0.5, 0.9, 0.9], 0, None);
    mesh.influences.iter_mut().for_each(|i| i.bone = 0);
    parts.meshes = vec![mesh];
    let m = Model::from_parts(parts).unwrap();
    let poses = m.skeleton().bind_pose().to_vec();
    let options = RenderOptions {
        bones: true,
        ..front(100)
    };
    let image = draw(&m, &poses, &options);
    let plain = draw(&m, &poses, &front(100));
    let camera = render::frame(&m, &poses, &options).unwrap();
    for p in [[0.0, -0.4, -0.4], [0.0, 0.4, 0.4]] {
        let (x, y) = at(&camera, p);
        assert_eq!(pixel(&image, x, y), JOINT, "joint at {p:?}");
        assert_eq!(pixel(&plain, x, y), [255, 255, 255, 255]);
    }
    // Halfway, the line (within a pixel of where the point projects, which may be a corner).
    let (x, y) = at(&camera, [0.0, 0.0, 0.0]);
    let around = [(0, 0), (-1, 0), (0, -1), (-1, -1), (1, 0), (0, 1)];
    assert!(
        around
            .iter()
            .any(|(dx, dy)| pixel(&image, x + dx, y + dy) == BONE_LINE)
    );
    assert!(
        around
            .iter()
            .all(|(dx, dy)| pixel(&plain, x + dx, y + dy) != BONE_LINE)
    );
}

#[test]
fn draw_text_sets_the_glyph_pixels() {
    let mut image = Image {
        width: 10,
        height: 10,
        rgba: vec![0; 400],
    };
    render::draw_text(&mut image, 1, 1, "L", [255; 4]);
    // 'L': the left column, rows 0 to 6, and the bottom row, columns 0 to 4.
    for y in 0..10 {
        for x in 0..10 {
            let want = (x == 1 && (1..=7).contains(&y)) || (y == 7 && (1..=5).contains(&x));
            assert_eq!(pixel(&image, x, y) == [255; 4], want, "{x},{y}");
        }
    }
    // Clipped at every side, and anything outside ASCII is a '?', not a panic.
    render::draw_text(&mut image, -3, 8, "é\u{1}\n~", [9; 4]);
    render::draw_text(&mut image, i32::MAX, i32::MIN, "x", [9; 4]);
}

#[test]
fn bad_sizes_and_poses_are_refused() {
    let m = cube();
    let poses = m.skeleton().bind_pose();
    let try_size = |w: u32, h: u32, antialias: bool| {
        let options = RenderOptions {
            width: w,
            height: h,
            antialias,
            ..RenderOptions::default()
        };
        let mut out = vec![];
        render::render(&m, poses, &[], &options, &mut out)
            .unwrap_err()
            .code()
    };
    assert_eq!(try_size(0, 10, false), ErrorCode::InvalidArgument);
    assert_eq!(try_size(10, 0, false), ErrorCode::InvalidArgument);
    assert_eq!(try_size(MAX_SIDE + 1, 1, false), ErrorCode::Limit);
    assert_eq!(try_size(8192, 8193, false), ErrorCode::Limit);
    assert_eq!(try_size(4097, 4096, true), ErrorCode::Limit);
    // The right size but the wrong buffer.
    let options = front(16);
    let mut short = vec![0u8; 16 * 16 * 4 - 1];
    let e = render::render(&m, poses, &[], &options, &mut short).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    let mut out = vec![0u8; 16 * 16 * 4];
    let e = render::render(&m, &[], &[], &options, &mut out).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    let nan = [Mat3x4 { m: [f32::NAN; 12] }];
    let e = render::render(&m, &nan, &[], &options, &mut out).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    let e = render::render_sheet(&m, &[], &[], &options).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
}

#[test]
fn empty_and_degenerate_models_give_the_background() {
    let empty = model(Format::Dpm, 1, vec![]);
    let image = draw(&empty, empty.skeleton().bind_pose(), &front(32));
    assert!(image.rgba.chunks_exact(4).all(|p| p == BG));
    // Every vertex at one point: framed, nothing to fill, no panic.
    let point = model(
        Format::Dpm,
        1,
        vec![box_mesh([0.25; 3], [0.25; 3], 0, None)],
    );
    for options in [front(32), RenderOptions::default()] {
        let options = RenderOptions {
            wireframe: true,
            bones: true,
            antialias: true,
            ..options
        };
        let mut out = vec![0u8; (options.width * options.height * 4) as usize];
        render::render(
            &point,
            point.skeleton().bind_pose(),
            &[],
            &options,
            &mut out,
        )
        .unwrap();
    }
    // A textured mesh with a texture of the wrong size is drawn untextured, not refused.
    let pixels = [0u8; 3];
    let bad = Some(render::TextureView {
        width: 4,
        height: 4,
        rgba: &pixels,
    });
    let m = cube();
    let mut out = vec![0u8; 32 * 32 * 4];
    render::render(&m, m.skeleton().bind_pose(), &[bad], &front(32), &mut out).unwrap();
}

#[test]
fn a_sheet_shares_one_camera_and_labels_its_cells() {
    let m = model(
        Format::Dpm,
        2,
        vec![
            box_mesh([-0.5; 3], [0.5; 3], 0, None),
            box_mesh([-0.1, 0.5, -0.1], [0.1, 2.0, 0.1], 1, None),
        ],
    );
    let rest = m.skeleton().bind_pose().to_vec();
    let quarter = glam::Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
    let raised = vec![
        Mat3x4::IDENTITY,
        Mat3x4::from_rotation_translation(quarter, [0.0; 3]),
    ];
    let cell = front(64);
    let rows = [
        SheetRow {
            cells: vec![
                SheetCell {
                    poses: rest.clone(),
                    label: "rest".into(),
                },
                SheetCell {
                    poses: raised.clone(),
                    label: "up".into(),
                },
            ],
        },
        SheetRow {
            cells: vec![SheetCell {
                poses: rest.clone(),
                label: String::new(),
            }],
        },
    ];
    let sheet = render::render_sheet(&m, &rows, &[], &cell).unwrap();
    assert_eq!((sheet.width, sheet.height), (128, 128));
    // The body stays put from cell to cell: one framing.
    let cell_image = |cx: u32, cy: u32| {
        let mut rgba = Vec::new();
        for y in 0..64 {
            let from = (((cy * 64 + y) * 128 + cx * 64) * 4) as usize;
            rgba.extend_from_slice(&sheet.rgba[from..from + 64 * 4]);
        }
        Image {
            width: 64,
            height: 64,
            rgba,
        }
    };
    let (a, b, empty) = (cell_image(0, 0), cell_image(1, 0), cell_image(1, 1));
    let body_centre = {
        let mut camera = Camera::oriented(&m, View::Front, None, None);
        let skinned_rest = render::skin(&m, &rest).unwrap();
        let skinned_up = render::skin(&m, &raised).unwrap();
        camera.fit(skinned_rest.points().chain(skinned_up.points()), 64, 64);
        at(&camera, [0.0, 0.0, 0.0])
    };
    assert_eq!(
        pixel(&a, body_centre.0, body_centre.1),
        [255, 255, 255, 255]
    );
    assert_eq!(
        pixel(&b, body_centre.0, body_centre.1),
        [255, 255, 255, 255]
    );
    assert!(empty.rgba.chunks_exact(4).all(|p| p == BG));
    // The label: glyph rows 56 to 62 from the left edge of the cell, in the label colour.
    let labelled =
        |img: &Image| (56..63).any(|y| (2..8).any(|x| pixel(img, x, y) == [232, 232, 232, 255]));
    assert!(labelled(&a) && labelled(&b));
    assert!(!labelled(&cell_image(0, 1)));
}

/// Corpus models: they render, and the silhouette is where ossa's own skinned vertices project.
#[test]
fn corpus_silhouettes_match_the_projected_bounds() {
    let root = common::corpus_dir();
    if !root.is_dir() {
        eprintln!("corpus not found at {}; skipping", root.display());
        return;
    }
    let mut paths = Vec::new();
    if let Some(dir) = common::corpus_subdir("dpm", "corpus silhouettes") {
        let mut found: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("dpm")))
            .collect();
        found.sort();
        paths.extend(found);
    }
    let mut sims_bound = Vec::new();
    let skeleton = root.join("sims/so_adult-skeleton.cmx");
    for skin in [
        "so_xskin-b001mafit_01-PELVIS-BODY.skn",
        "so_xskin-c005ma_hipster-HEAD-HEAD.skn",
    ] {
        let loaded = Model::load_file(&skeleton, &LoadOptions::default()).and_then(|s| {
            let mesh = Model::load_file(root.join("sims").join(skin), &LoadOptions::default())?;
            Model::bind(&mesh, &s)
        });
        match loaded {
            Ok(m) => sims_bound.push((root.join("sims").join(skin), m)),
            Err(e) => eprintln!("{skin} on the adult skeleton: {e}; not rendered"),
        }
    }
    for (kind, names) in [
        (
            "skm",
            &["wsw05sdk_monada_tris.skm", "wsw05sdk_testbox_tris.skm"][..],
        ),
        (
            "gltf/blender/roundtrip/03_skinned_cylinder",
            &["03_skinned_cylinder.gltf"][..],
        ),
    ] {
        for n in names {
            let p = root.join(kind).join(n);
            if p.is_file() {
                paths.push(p);
            }
        }
    }
    let (mut checked, mut thin) = (0, 0);
    let loaded = paths.iter().map(|p| {
        let m = Model::load_file(p, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        (p.clone(), m)
    });
    for (path, m) in loaded.chain(sims_bound) {
        let path = &path;
        let name = path.display().to_string();
        assert!(m.unbound().is_none(), "{name}");
        let poses = m.skeleton().bind_pose().to_vec();
        for view in [View::ThreeQuarter, View::Front, View::Top] {
            let options = RenderOptions {
                width: 160,
                height: 120,
                view,
                background: BG,
                ..RenderOptions::default()
            };
            let image = draw(&m, &poses, &options);
            let camera = render::frame(&m, &poses, &options).unwrap();
            let skinned = render::skin(&m, &poses).unwrap();
            // The vertices some triangle uses, projected.
            let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
            let mut tris = Vec::new();
            for (mesh, positions) in m.meshes().iter().zip(&skinned.positions) {
                for t in mesh.indices().chunks_exact(3) {
                    let t = [0, 1, 2].map(|c| camera.project(positions[t[c] as usize]));
                    for s in t {
                        for k in 0..2 {
                            lo[k] = lo[k].min(s[k]);
                            hi[k] = hi[k].max(s[k]);
                        }
                    }
                    tris.push(t);
                }
            }
            let Some((x0, y0, x1, y1)) = silhouette(&image) else {
                assert!(lo[0] > hi[0], "{name} {view:?}: nothing drawn");
                continue;
            };
            // Pixel i is covered when its centre i + 0.5 is inside.
            let expect = [
                (lo[0] - 0.5).ceil() as i64,
                (lo[1] - 0.5).ceil() as i64,
                (hi[0] - 0.5).floor() as i64,
                (hi[1] - 0.5).floor() as i64,
            ];
            for (k, (got, want)) in [x0, y0, x1, y1].into_iter().zip(expect).enumerate() {
                if (got - want).abs() <= 1 {
                    continue;
                }
                // Farther in than a pixel: only where a spike too thin to hold a pixel centre
                // reaches out, which the columns or rows in between must show.
                let axis = k % 2;
                let gap = if k < 2 { want..got } else { got + 1..want + 1 };
                for line in gap {
                    assert!(
                        !line_touched(&tris, axis, line, [160, 120]),
                        "{name} {view:?}: silhouette {:?}, projected bounds {expect:?}; \
                         {} {line} holds a pixel centre inside a triangle",
                        (x0, y0, x1, y1),
                        ["column", "row"][axis]
                    );
                }
                thin += 1;
            }
            checked += 1;
        }
        // With the textures found beside it, it renders too.
        let found = ossa::textures::find_textures_beside(&m, path, None, 0).unwrap_or_default();
        let textures = render::decode_textures(&m, &found);
        let mut out = vec![0u8; 96 * 96 * 4];
        let options = RenderOptions {
            width: 96,
            height: 96,
            antialias: true,
            wireframe: true,
            bones: true,
            ..RenderOptions::default()
        };
        render::render(&m, &poses, &textures.views(), &options, &mut out)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    eprintln!(
        "{checked} corpus renders checked; {thin} bounds reached by spikes thinner than a pixel"
    );
    assert!(
        thin * 20 <= checked * 4,
        "too many silhouettes short of their bounds"
    );
}

/// FNV-1a, to pin a picture's bytes in a line.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn a_pinned_picture_is_the_same_on_every_machine() {
    // Everything at once, at an angle that is no multiple of 90 degrees: a machine whose
    // arithmetic differs (a fused multiply-add, a platform sine) changes these bytes.
    let m = ossa::synth::TubeRig::default().build().unwrap();
    let mut poses = vec![Mat3x4::IDENTITY; m.bones().len()];
    m.pose_frames(
        &[ossa::FrameBlend {
            frame: 2,
            weight: 1.0,
        }],
        None,
        &mut poses,
    )
    .unwrap();
    let options = RenderOptions {
        width: 96,
        height: 80,
        antialias: true,
        wireframe: true,
        bones: true,
        yaw_degrees: Some(-33.3),
        pitch_degrees: Some(12.5),
        ..RenderOptions::default()
    };
    let image = draw(&m, &poses, &options);
    let hash = fnv(&image.rgba);
    assert_eq!(
        hash, 0xea90_d86f_dd54_7ff7,
        "the picture's bytes changed: {hash:#x}"
    );
}

#[test]
fn side_and_top_views_put_the_front_right_and_down() {
    // A marker on the front (+X for Quake's formats, +Z for the Sims'): the side view looks at
    // the model's right side, its front to the picture's right; the top view looks down, its
    // front at the bottom.
    for (format, front_axis) in [
        (Format::Dpm, [1.0f32, 0.0, 0.0]),
        (Format::SimsSkn, [0.0, 0.0, 1.0]),
    ] {
        let marker = |s: f32| [0, 1, 2].map(|k| front_axis[k] * 1.5 + s * 0.2);
        let m = model(
            format,
            1,
            vec![
                box_mesh([-0.5; 3], [0.5; 3], 0, None),
                box_mesh(marker(-1.0), marker(1.0), 0, Some([0, 0, 255, 255])),
            ],
        );
        for view in [View::Side, View::Top] {
            let options = RenderOptions { view, ..front(100) };
            let image = draw(&m, m.skeleton().bind_pose(), &options);
            let camera = render::frame(&m, m.skeleton().bind_pose(), &options).unwrap();
            let (x, y) = at(&camera, front_axis.map(|v| v * 1.5));
            match view {
                View::Side => assert!(x > 60 && (45..55).contains(&y), "{format:?}: {x},{y}"),
                _ => assert!(y > 60 && (45..55).contains(&x), "{format:?}: {x},{y}"),
            }
            assert_eq!(pixel(&image, x, y), [0, 0, 255, 255], "{format:?} {view:?}");
        }
    }
}

/// Found by the render fuzz target: an SKM without its SKP whose one mesh has no vertices was
/// drawn (as the background), where any other model waiting for its skeleton is refused.
#[test]
fn meshes_waiting_for_a_skeleton_are_refused_even_when_empty() {
    let mut parts = ossa::synth::TubeRig::default().parts();
    parts.meshes.truncate(1);
    let mesh = &mut parts.meshes[0];
    mesh.influence_start = vec![0];
    mesh.influences.clear();
    mesh.indices.clear();
    mesh.texcoords = Some(Vec::new());
    mesh.group_ids = None;
    let bytes = Model::from_parts(parts).unwrap().save(Format::Skm).unwrap();
    let alone = Model::load(&bytes, &LoadOptions::default()).unwrap();
    assert!(alone.unbound().is_some());
    assert_eq!(alone.meshes()[0].vertex_count(), 0);
    let mut out = vec![0u8; 16 * 16 * 4];
    let poses = vec![Mat3x4::IDENTITY; alone.bones().len()];
    let e = render::render(&alone, &poses, &[], &front(16), &mut out).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.to_string().contains("wait for a skeleton"), "{e}");
}

/// Drawing costs at most a bounded number of pixel visits: boxes stacked on one place, each
/// covering most of the picture, draw while they cover it up to 256 times over, and beyond that
/// the render is refused with `Limit` naming the mesh, instead of taking triangles x pixels.
/// (100,000 full-picture triangles in a 100 KB file once took a minute to draw.)
#[test]
fn a_picture_of_too_many_large_triangles_is_refused_not_drawn_for_minutes() {
    let stack = |n: usize| {
        let boxes = (0..n)
            .map(|_| box_mesh([-0.5; 3], [0.5; 3], 0, None))
            .collect();
        model(Format::Dpm, 1, boxes)
    };
    let options = front(64);
    let mut out = vec![0u8; 64 * 64 * 4];
    let few = stack(10);
    render::render(&few, few.skeleton().bind_pose(), &[], &options, &mut out).unwrap();
    let many = stack(400);
    let e =
        render::render(&many, many.skeleton().bind_pose(), &[], &options, &mut out).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    let message = e.to_string();
    assert!(
        message.contains("the triangles cover more than 256 times the picture's 4096 pixels")
            && message.contains("mesh "),
        "{message}"
    );
}
