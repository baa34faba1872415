//! `ossa render`: a model drawn, posed and skinned, into a PNG; a sheet of its animation; or a
//! thumbnail of each of many models.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use ossa::render::{Image, MeshTextures, RenderOptions, SheetCell, SheetRow, View};
use ossa::{FrameBlend, LoadOptions, MAX_BLENDS, Mat3x4, Model};

use crate::cli::RenderArgs;
use crate::inputs::{
    Gathered, Progress, Sources, end_batch, gather, is_pattern, load_skeleton, model_stem,
    report_one, start_batch,
};
use crate::{error_line, usage_error};

/// The largest picture or cell side the command draws.
const MAX_SIDE: u32 = 8192;
/// Cells of a sheet's row before it wraps.
const SHEET_COLUMNS: usize = 8;

/// Which pose to draw.
#[derive(Clone, Debug, PartialEq)]
enum Pose {
    /// Frame 0: the bind or rest pose.
    First,
    Frame(u32),
    Blend(Vec<FrameBlend>),
    /// A scene by name or index, at a time in seconds.
    Scene(String, f64),
}

/// The option values of `ossa render`, checked.
struct Settings {
    options: LoadOptions<'static>,
    look: RenderOptions,
    pose: Pose,
    /// Draw a sheet: the scene (None = every scene) and the cells a scene.
    sheet: Option<(Option<String>, usize)>,
    textures: bool,
}

fn number<T: std::str::FromStr>(option: &str, text: &str, what: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{option} needs {what}, not {text}"))
}

/// `WxH`, each side 1 to [`MAX_SIDE`].
fn size(option: &str, text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("{option} needs WIDTHxHEIGHT, each 1 to {MAX_SIDE} (512x512), not {text}");
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h) = (
        w.parse::<u32>().map_err(|_| bad())?,
        h.parse::<u32>().map_err(|_| bad())?,
    );
    if !(1..=MAX_SIDE).contains(&w) || !(1..=MAX_SIDE).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}

/// `RRGGBB`, `RRGGBBAA` (a `#` before either allowed) or `transparent`.
fn colour(text: &str) -> Result<[u8; 4], String> {
    if text.eq_ignore_ascii_case("transparent") {
        return Ok([0, 0, 0, 0]);
    }
    let hex = text.strip_prefix('#').unwrap_or(text);
    let bad = || format!("--background needs RRGGBB, RRGGBBAA or transparent, not {text}");
    if !matches!(hex.len(), 6 | 8) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let mut rgba = [255u8; 4];
    for (k, slot) in rgba.iter_mut().enumerate().take(hex.len() / 2) {
        let pair = hex.get(2 * k..2 * k + 2).ok_or_else(bad)?;
        *slot = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
    }
    Ok(rgba)
}

/// Degrees: a finite number.
fn degrees(option: &str, text: &Option<String>) -> Result<Option<f32>, String> {
    match text {
        Some(t) => match t.parse::<f32>() {
            Ok(d) if d.is_finite() => Ok(Some(d)),
            _ => Err(format!("{option} needs a number of degrees, not {t}")),
        },
        None => Ok(None),
    }
}

/// `F:W,F:W`: 1 to [`MAX_BLENDS`] frames with their weights.
fn blend(text: &str) -> Result<Vec<FrameBlend>, String> {
    let bad =
        || format!("--blend needs FRAME:WEIGHT pairs split by commas (3:0.75,4:0.25), not {text}");
    let pairs: Vec<&str> = text.split(',').collect();
    if pairs.len() > MAX_BLENDS {
        return Err(format!(
            "--blend takes at most {MAX_BLENDS} frames, not {}",
            pairs.len()
        ));
    }
    pairs
        .iter()
        .map(|pair| {
            let (f, w) = pair.split_once(':').ok_or_else(bad)?;
            let frame = f.trim().parse::<u32>().map_err(|_| bad())?;
            let weight = w.trim().parse::<f32>().map_err(|_| bad())?;
            if !weight.is_finite() {
                return Err(bad());
            }
            Ok(FrameBlend { frame, weight })
        })
        .collect()
}

impl Settings {
    fn from_args(args: &RenderArgs, many: bool) -> Result<Settings, String> {
        let options = args.load.options()?;
        let poses_given = [
            args.frame.is_some(),
            args.blend.is_some(),
            args.scene.is_some(),
        ];
        if poses_given.iter().filter(|&&g| g).count() > 1 {
            return Err("give one of --frame, --blend and --scene".to_owned());
        }
        if args.time.is_some() && args.scene.is_none() {
            return Err("--time needs --scene".to_owned());
        }
        if args.sheet && (args.frame.is_some() || args.blend.is_some() || args.time.is_some()) {
            return Err(
                "--sheet draws a scene's frames: --frame, --blend and --time are for \
                        one picture"
                    .to_owned(),
            );
        }
        if args.cells.is_some() && !args.sheet {
            return Err("--cells is for --sheet".to_owned());
        }
        if args.thumbnail.is_some() && args.size.is_some() {
            return Err("give --size or --thumbnail, not both".to_owned());
        }
        let pose = if let Some(f) = &args.frame {
            Pose::Frame(number("--frame", f, "a frame number")?)
        } else if let Some(b) = &args.blend {
            Pose::Blend(blend(b)?)
        } else if let Some(scene) = &args.scene {
            let time = match &args.time {
                Some(t) => match t.parse::<f64>() {
                    Ok(s) if s.is_finite() => s,
                    _ => return Err(format!("--time needs a number of seconds, not {t}")),
                },
                None => 0.0,
            };
            Pose::Scene(scene.clone(), time)
        } else {
            Pose::First
        };
        let (width, height) = match (&args.size, &args.thumbnail) {
            (Some(s), _) => size("--size", s)?,
            (None, Some(n)) => {
                let n: u32 = number("--thumbnail", n, &format!("a size from 1 to {MAX_SIDE}"))?;
                if !(1..=MAX_SIDE).contains(&n) {
                    return Err(format!(
                        "--thumbnail needs a size from 1 to {MAX_SIDE}, not {n}"
                    ));
                }
                (n, n)
            }
            (None, None) if many => (256, 256),
            (None, None) if args.sheet => (192, 192),
            (None, None) => (512, 512),
        };
        let view = match args.view.as_deref() {
            None | Some("three-quarter") => View::ThreeQuarter,
            Some("front") => View::Front,
            Some("side") => View::Side,
            Some("top") => View::Top,
            Some(other) => {
                return Err(format!(
                    "--view needs front, side, top or three-quarter, not {other}"
                ));
            }
        };
        let look = RenderOptions {
            width,
            height,
            view,
            yaw_degrees: degrees("--yaw", &args.yaw)?,
            pitch_degrees: degrees("--pitch", &args.pitch)?,
            background: match &args.background {
                Some(text) => colour(text)?,
                None => RenderOptions::default().background,
            },
            wireframe: args.wireframe,
            bones: args.bones,
            antialias: args.antialias,
        };
        let sheet = if args.sheet {
            let cells = match &args.cells {
                Some(text) => {
                    let n: usize = number("--cells", text, "a count from 1 to 64")?;
                    if !(1..=64).contains(&n) {
                        return Err(format!("--cells needs a count from 1 to 64, not {n}"));
                    }
                    n
                }
                None => SHEET_COLUMNS,
            };
            Some((args.scene.clone(), cells))
        } else {
            None
        };
        Ok(Settings {
            options,
            look,
            pose,
            sheet,
            textures: !args.no_textures,
        })
    }
}

/// `ossa render`.
pub fn render(args: &RenderArgs) -> ExitCode {
    let many = args.inputs.len() > 1
        || args
            .inputs
            .iter()
            .any(|f| Path::new(f).is_dir() || is_pattern(f));
    let settings = match Settings::from_args(args, many) {
        Ok(s) => s,
        Err(message) => return usage_error(&message),
    };
    if args.demo && !args.inputs.is_empty() {
        return usage_error("--demo draws the built-in rig: give no MODEL with it");
    }
    if !args.demo && args.inputs.is_empty() {
        return usage_error("render needs a model file (or --demo)");
    }
    let Some(output) = args.output.as_deref() else {
        return usage_error("render needs -o OUTPUT");
    };
    if many && args.parts.suit.is_some() {
        return usage_error("--suit dresses one character: give one input");
    }
    if !many && Path::new(output).is_dir() {
        return usage_error(&format!(
            "{output} is a directory: one model is drawn into a file (-o NAME.png)"
        ));
    }
    if many && output.to_ascii_lowercase().ends_with(".png") && !Path::new(output).is_dir() {
        return usage_error(&format!(
            "several inputs are drawn into a directory, and {output} names a file: give -o DIR"
        ));
    }
    if args.parts.skills.as_ref().is_some_and(Vec::is_empty) {
        return usage_error("--skills needs a file");
    }
    if args.parts.anims.as_ref().is_some_and(Vec::is_empty) {
        return usage_error("--anims needs a file");
    }
    let skeleton = match load_skeleton(args.parts.skeleton.as_deref(), &settings.options) {
        Ok(skeleton) => skeleton,
        Err(code) => return code,
    };
    if many {
        return render_many(args, Path::new(output), skeleton.as_ref());
    }
    let sources = Sources::of(&args.parts, &settings.options, skeleton.as_ref());
    let (shown, drawn) = if args.demo {
        (
            "demo".to_owned(),
            demo_model().and_then(|m| draw(&m, None, &settings)),
        )
    } else {
        let input = Path::new(&args.inputs[0]);
        (
            input.display().to_string(),
            draw_file(input, &settings, &sources),
        )
    };
    let result = drawn.and_then(|d| {
        write_png(Path::new(output), &d.image)?;
        Ok((format!("{output}: {}", d.line), d.warnings))
    });
    report_one(&shown, result)
}

/// A picture made, what to say of it, and the warnings on the way.
struct Drawn {
    image: Image,
    line: String,
    warnings: Vec<String>,
}

/// The rig the demo builds: a bending tube with its scene, `wave`.
fn demo_model() -> Result<Model, ossa::Error> {
    ossa::synth::TubeRig::default().build()
}

/// `input` with its parts, drawn, its textures found beside it.
fn draw_file(input: &Path, settings: &Settings, sources: &Sources) -> Result<Drawn, ossa::Error> {
    let gathered = gather(input, sources, false)?;
    let mut warnings = gathered.warnings.clone();
    let mut drawn = draw(&gathered.model, Some((input, &gathered)), settings)?;
    warnings.append(&mut drawn.warnings);
    drawn.warnings = warnings;
    Ok(drawn)
}

/// The model drawn as the settings say; `file`: the input, and what was gathered of it, whose
/// textures are looked for beside it (a dressed character's beside each mesh's file).
fn draw(
    model: &Model,
    file: Option<(&Path, &Gathered)>,
    settings: &Settings,
) -> Result<Drawn, ossa::Error> {
    let mut warnings = Vec::new();
    let textures = match file {
        Some((path, gathered)) if settings.textures => {
            textures_of(gathered, path, settings, &mut warnings)?
        }
        _ => MeshTextures::default(),
    };
    let textures = textures.views();
    let textured = textures.iter().filter(|t| t.is_some()).count();
    let look = &settings.look;
    let (image, what) = match &settings.sheet {
        Some((scene, cells)) => {
            let rows = sheet_rows(model, scene.as_deref(), *cells)?;
            let count: usize = rows.iter().map(|r| r.cells.len()).sum();
            let image = ossa::render::render_sheet(model, &rows, &textures, look)?;
            let cells = if count == 1 { "cell" } else { "cells" };
            (image, format!("a sheet of {count} {cells}"))
        }
        None => {
            let (blends, what) = blends_for(model, &settings.pose)?;
            let poses = posed(model, &blends)?;
            let mut rgba = vec![0u8; look.width as usize * look.height as usize * 4];
            ossa::render::render(model, &poses, &textures, look, &mut rgba)?;
            let image = Image {
                width: look.width,
                height: look.height,
                rgba,
            };
            (image, what)
        }
    };
    let triangles: usize = model.meshes().iter().map(|m| m.triangle_count()).sum();
    let meshes = model.meshes().len();
    let mut line = format!(
        "{}x{}, {what}, {meshes} {}, {triangles} {}",
        image.width,
        image.height,
        if meshes == 1 { "mesh" } else { "meshes" },
        if triangles == 1 {
            "triangle"
        } else {
            "triangles"
        }
    );
    if textured > 0 {
        line.push_str(&format!(", {textured} textured"));
    }
    Ok(Drawn {
        image,
        line,
        warnings,
    })
}

/// The model's textures, found beside `path` (a dressed character's beside each mesh's file)
/// and decoded, one a mesh; what could not be had goes to `warnings`.
#[cfg(feature = "gltf")]
fn textures_of(
    gathered: &Gathered,
    path: &Path,
    settings: &Settings,
    warnings: &mut Vec<String>,
) -> Result<MeshTextures, ossa::Error> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let found = gathered.textures(path, settings.options.max_bytes)?;
    warnings.extend(found.warnings.iter().map(|w| format!("{name}: {w}")));
    Ok(ossa::render::decode_textures(&gathered.model, &found))
}

/// Without the glTF feature there is no image decoder: meshes are drawn untextured.
#[cfg(not(feature = "gltf"))]
fn textures_of(
    _gathered: &Gathered,
    _path: &Path,
    _settings: &Settings,
    _warnings: &mut Vec<String>,
) -> Result<MeshTextures, ossa::Error> {
    Ok(MeshTextures::default())
}

/// A scene's index by its name (ASCII case ignored) or its number.
fn scene_index(model: &Model, scene: &str) -> Result<usize, ossa::Error> {
    let scenes = model.animations();
    let by_name = scenes
        .iter()
        .position(|a| a.name.as_bytes().eq_ignore_ascii_case(scene.as_bytes()));
    by_name
        .or_else(|| scene.parse::<usize>().ok().filter(|&i| i < scenes.len()))
        .ok_or_else(|| {
            let names: Vec<String> = scenes.iter().map(|a| a.name.to_string()).collect();
            let has = if names.is_empty() {
                "no scenes".to_owned()
            } else {
                format!("scenes {}", names.join(", "))
            };
            ossa::Error::not_found(format!("no scene {scene}: the model has {has}"))
        })
}

/// The frames to blend for the pose, and the pose in words.
fn blends_for(model: &Model, pose: &Pose) -> Result<(Vec<FrameBlend>, String), ossa::Error> {
    Ok(match pose {
        Pose::First => (
            vec![FrameBlend {
                frame: 0,
                weight: 1.0,
            }],
            "frame 0".to_owned(),
        ),
        Pose::Frame(f) => (
            vec![FrameBlend {
                frame: *f,
                weight: 1.0,
            }],
            format!("frame {f}"),
        ),
        Pose::Blend(b) => (b.clone(), "a blend of frames".to_owned()),
        Pose::Scene(scene, time) => {
            let index = scene_index(model, scene)?;
            let (blends, n) = model.animation_blend(index, *time)?;
            let name = &model.animations()[index].name;
            (blends[..n].to_vec(), format!("{name} at {time} s"))
        }
    })
}

/// Model-space bone matrices for the blend.
fn posed(model: &Model, blends: &[FrameBlend]) -> Result<Vec<Mat3x4>, ossa::Error> {
    let mut poses = vec![Mat3x4::IDENTITY; model.bones().len()];
    model.pose_frames(blends, None, &mut poses)?;
    Ok(poses)
}

/// A sheet's rows: `cells` times evenly across each scene (the one named, else every scene
/// with frames), wrapped at [`SHEET_COLUMNS`]. A model without scenes shows its frames.
fn sheet_rows(
    model: &Model,
    scene: Option<&str>,
    cells: usize,
) -> Result<Vec<SheetRow>, ossa::Error> {
    let scenes: Vec<usize> = match scene {
        Some(s) => {
            let index = scene_index(model, s)?;
            if model.animations()[index].frame_count == 0 {
                return Err(ossa::Error::invalid_argument(format!(
                    "scene {s} has no frames to draw"
                )));
            }
            vec![index]
        }
        None => (0..model.animations().len())
            .filter(|&i| model.animations()[i].frame_count > 0)
            .collect(),
    };
    let mut rows = Vec::new();
    for index in scenes {
        let a = &model.animations()[index];
        let mut row = Vec::new();
        for time in sheet_times(a, cells) {
            let (blends, n) = model.animation_blend(index, time)?;
            row.push(SheetCell {
                poses: posed(model, &blends[..n])?,
                label: format!("{} {time:.2}s", a.name),
            });
        }
        push_wrapped(&mut rows, row);
    }
    if rows.is_empty() {
        let frames = model.frames().len().min(cells);
        let mut row = Vec::new();
        for f in 0..frames {
            let frame = f as u32;
            row.push(SheetCell {
                poses: posed(model, &[FrameBlend { frame, weight: 1.0 }])?,
                label: format!("frame {f}"),
            });
        }
        push_wrapped(&mut rows, row);
    }
    Ok(rows)
}

/// The times of a scene's cells: each frame's when it has no more than `cells`, else `cells`
/// times evenly across it. A looping scene's last cell stops short of the loop's end, which is
/// its start again; another scene's is its last frame.
fn sheet_times(scene: &ossa::Animation, cells: usize) -> Vec<f64> {
    let frames = scene.frame_count as usize;
    // Loading keeps a scene's rate above 0; a rate of 0 would put every frame at one time.
    let fps = f64::from(scene.fps).max(f64::MIN_POSITIVE);
    if frames <= cells {
        return (0..frames).map(|f| f as f64 / fps).collect();
    }
    let (span, steps) = if scene.looping {
        (frames as f64 / fps, cells as f64)
    } else {
        ((frames as f64 - 1.0) / fps, (cells as f64 - 1.0).max(1.0))
    };
    (0..cells).map(|k| span * k as f64 / steps).collect()
}

/// `cells` as rows of at most [`SHEET_COLUMNS`].
fn push_wrapped(rows: &mut Vec<SheetRow>, cells: Vec<SheetCell>) {
    let mut cells = cells.into_iter().peekable();
    while cells.peek().is_some() {
        rows.push(SheetRow {
            cells: cells.by_ref().take(SHEET_COLUMNS).collect(),
        });
    }
}

/// Writes the picture as an 8-bit RGBA PNG.
fn write_png(path: &Path, image: &Image) -> Result<(), ossa::Error> {
    let shown = path.display();
    let mut bytes = Vec::new();
    let encoder = image::codecs::png::PngEncoder::new(&mut bytes);
    image::ImageEncoder::write_image(
        encoder,
        &image.rgba,
        image.width,
        image.height,
        image::ExtendedColorType::Rgba8,
    )
    .map_err(|e| ossa::Error::invalid_argument(format!("{shown}: cannot encode the PNG: {e}")))?;
    std::fs::write(path, &bytes)
        .map_err(|e| ossa::Error::io(format!("{shown}: cannot write: {e}"), Some(e)))
}

/// `DIR/STEM.png` for each input, drawn by one worker a core.
fn render_many(args: &RenderArgs, dir: &Path, skeleton: Option<&Model>) -> ExitCode {
    let Some((inputs, unmatched)) = start_batch(&args.inputs, true, dir) else {
        return ExitCode::FAILURE;
    };
    let mut failures = unmatched;
    // Two inputs of one stem (a.dpm, a.skm) would write one file: the second is refused.
    let mut outputs: Vec<Result<PathBuf, String>> = Vec::new();
    let mut first_of: std::collections::HashMap<PathBuf, &Path> = Default::default();
    for input in &inputs {
        let output = dir.join(png_name(input));
        outputs.push(match first_of.get(&output) {
            Some(first) => Err(format!(
                "{} is drawn from {} already",
                output.display(),
                first.display()
            )),
            None => {
                first_of.insert(output.clone(), input);
                Ok(output)
            }
        });
    }
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(inputs.len().max(1));
    let next = AtomicUsize::new(0);
    let (send, receive) = mpsc::channel();
    let mut progress = Progress::new(inputs.len());
    let mut written = 0usize;
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let send = send.clone();
            let (next, inputs, outputs) = (&next, &inputs, &outputs);
            scope.spawn(move || {
                // Each worker its own options: a caller's filesystem in them need not be shared
                // between threads. They were checked before the workers started.
                let Ok(settings) = Settings::from_args(args, true) else {
                    return;
                };
                let settings = &settings;
                // --suit is refused with several inputs: each is a model of its own.
                let sources = Sources::of(&args.parts, &settings.options, skeleton);
                let sources = &sources;
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(input) = inputs.get(k) else { break };
                    let result = match &outputs[k] {
                        Ok(output) => draw_file(input, settings, sources)
                            .and_then(|d| write_png(output, &d.image).map(|()| (output, d))),
                        Err(message) => Err(ossa::Error::invalid_argument(message.clone())),
                    };
                    let line = result.map(|(output, d)| {
                        let line =
                            format!("{} -> {}: {}", input.display(), output.display(), d.line);
                        (line, d.warnings)
                    });
                    if send.send((k, line)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        for (done, (k, result)) in receive.iter().enumerate() {
            let shown = inputs[k].display().to_string();
            match result {
                Ok((line, warnings)) => {
                    written += 1;
                    for w in &warnings {
                        progress.note(&format!("ossa: warning: {w}"));
                    }
                    progress.done(&line);
                }
                Err(e) => {
                    failures += 1;
                    progress.note(&error_line(&shown, &e));
                }
            }
            let under_way = inputs.get(done + 1).map(|p| p.display().to_string());
            progress.show(done + 1, under_way.as_deref().unwrap_or_default());
        }
    });
    progress.clear();
    let total = inputs.len() + unmatched;
    end_batch(dir, ("drew", "picture"), written, total, failures)
}

/// `STEM.png` for `input`.
fn png_name(input: &Path) -> String {
    format!("{}.png", model_stem(input))
}
