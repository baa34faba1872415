//! `ossa`: look inside a model, validate it, convert it (to glTF or another format it reads,
//! one file or many), measure how fast it loads, poses and skins, or (with no arguments) watch
//! a built-in rig being loaded, posed and skinned.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use ossa::synth::TubeRig;
use ossa::{Format, FrameBlend, LoadOptions, Mat3x4, Model, Strided};

// The measuring code `cargo bench` runs, so that both print the same tables.
#[path = "../../benches/measure/mod.rs"]
mod measure;

const USAGE: &str = "usage:
  ossa                      demo: build a rigged model in code, load, pose and skin it
  ossa info FILE            counts, bones, meshes, frames, bounds and warnings of a model
  ossa validate FILE        every problem in a model file (exit status 1 when any)
  ossa convert INPUT -o OUTPUT [convert options]
                            write the model in the format OUTPUT's extension names: .glb
                            .gltf .dpm .skm .skp .skn .bmf .cmx .bcf .skel .mod .dmf
  ossa convert INPUT... -o DIR --to NAME [convert options]
                            several files, directories (their model files: .dpm .skm .skn
                            .bmf .cmx .bcf .skel .mod .dmf) or quoted patterns (* and ? in the
                            last part), each written as DIR/STEM.EXT; a failing input is
                            reported, the others still convert, and the exit status is 1
  ossa bench [--quick] [FILE...]
                            load, pose and skinning times beside memcpy and a C baseline;
                            default: the corpus's largest models, else a built-in 100k-vertex rig
options:
  --strict                  reject what the default mode tolerates
  --format NAME             the input's format: dpm, skm, skp, sims-skn, sims-bmf, sims-cmx,
                            sims-bcf, mm2-skel, mm2-mod, dmf, dmf-json (default: detect)
convert options:
  -o, --output PATH         the output file; a directory for several inputs (made if missing)
  --to NAME                 the output format: a --format name, glb, gltf, or an extension
                            (skn, cmx, bcf, skel, mod); default: OUTPUT's extension
  --scale F                 glTF: multiply positions and translations by F (default 1)
  --max-influences N        glTF: keep the N strongest influences of a vertex (default 0: all)
  --skeleton FILE           bind meshes waiting for a skeleton (SKM without its SKP beside it,
                            Sims SKN/BMF, MM2 .mod) to the skeleton in FILE
  --skills FILE...          add the Sims skills in these CMX/BCF files, each CFP found beside
                            its file; the files run to the next option; repeatable
  --suit NAME               dress a Sims character in suit NAME: the skeleton is --skeleton's
                            or INPUT's; the suit INPUT's, or NAME.cmx or NAME.bcf beside INPUT
                            or in a --search directory, as is each skin's MESH.skn or MESH.bmf
  --search DIR              another directory for suit and mesh files (repeatable)";

/// Prints a line, ignoring a closed pipe (`ossa info big.dpm | head` must not panic).
macro_rules! say {
    ($out:expr) => {
        let _ = writeln!($out);
    };
    ($out:expr, $($arg:tt)*) => {
        let _ = writeln!($out, $($arg)*);
    };
}

struct Args {
    command: String,
    files: Vec<String>,
    options: LoadOptions<'static>,
    convert: ConvertArgs,
}

/// What `ossa convert` takes beyond the inputs and the load options.
#[derive(Default)]
struct ConvertArgs {
    output: Option<String>,
    to: Option<Format>,
    scale: Option<f32>,
    max_influences: Option<usize>,
    skeleton: Option<String>,
    skills: Vec<String>,
    suit: Option<String>,
    search: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1).peekable();
    let mut args = Args {
        command: it.next().unwrap_or_else(|| "demo".to_owned()),
        files: Vec::new(),
        options: LoadOptions::default(),
        convert: ConvertArgs::default(),
    };
    let converting = args.command == "convert";
    while let Some(a) = it.next() {
        let mut value = |what: &str| it.next().ok_or_else(|| format!("{a} needs {what}"));
        let c = &mut args.convert;
        match a.as_str() {
            "--strict" => args.options.strict = true,
            "--format" => {
                let name = value("a name")?;
                args.options.format =
                    cli_format(&name).ok_or_else(|| format!("unknown format {name}"))?;
            }
            "-o" | "--output" if converting => c.output = Some(value("a path")?),
            "--to" if converting => {
                let name = value("a format name")?;
                c.to = Some(output_format(&name).ok_or_else(|| {
                    format!("unknown output format {name}; one of {OUTPUT_FORMATS}")
                })?);
            }
            "--scale" if converting => {
                let text = value("a number")?;
                match text.parse::<f32>() {
                    Ok(f) if f.is_finite() && f > 0.0 => c.scale = Some(f),
                    _ => return Err(format!("--scale needs a number above 0, not {text}")),
                }
            }
            "--max-influences" if converting => {
                let text = value("a count")?;
                c.max_influences = Some(text.parse().map_err(|_| {
                    format!("--max-influences needs a count (0 = all), not {text}")
                })?);
            }
            "--skeleton" if converting => c.skeleton = Some(value("a file")?),
            "--suit" if converting => c.suit = Some(value("a suit name")?),
            "--search" if converting => c.search.push(value("a directory")?),
            "--skills" if converting => {
                let before = c.skills.len();
                while let Some(file) = it.next_if(|f| !f.starts_with('-')) {
                    c.skills.push(file);
                }
                if c.skills.len() == before {
                    return Err("--skills needs a file".to_owned());
                }
            }
            _ if a.starts_with('-') && a.len() > 1 => {
                return Err(if converting {
                    format!("unknown option {a}")
                } else {
                    format!("unknown option {a} (convert's options go after `ossa convert`)")
                });
            }
            _ if converting || args.files.is_empty() => args.files.push(a),
            _ => return Err(format!("unexpected argument {a}")),
        }
    }
    Ok(args)
}

/// A format by its name in lower case, spaces as dashes ("sims-skn", "dmf-json").
fn cli_format(name: &str) -> Option<Format> {
    let wanted = name.to_ascii_lowercase();
    Format::ALL
        .into_iter()
        .find(|f| f.name().to_ascii_lowercase().replace(' ', "-") == wanted)
}

const OUTPUT_FORMATS: &str =
    "glb, gltf, dpm, skm, skp, skn, bmf, cmx, bcf, skel, mod, dmf, dmf-json";

/// A format to write: a `--format` name, `glb`, or an extension without its dot (`skn`).
fn output_format(name: &str) -> Option<Format> {
    let lower = name.to_ascii_lowercase();
    let format = match lower.as_str() {
        "glb" => Some(Format::Glb),
        _ => cli_format(&lower).or_else(|| Format::from_extension(&format!(".{lower}"))),
    };
    format.filter(|f| *f != Format::Auto)
}

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("bench") {
        return measure::main(std::env::args().skip(2), "ossa bench", false);
    }
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("ossa: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = match (args.command.as_str(), args.files.first()) {
        ("demo", _) => demo(),
        ("info", Some(file)) => info(file, &args.options),
        ("validate", Some(file)) => validate(file, &args.options),
        ("convert", _) => return convert(&args),
        ("help" | "--help" | "-h", _) => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            eprintln!("{USAGE}");
            Ok(ExitCode::from(2))
        }
    };
    result.unwrap_or_else(|e| {
        eprintln!("ossa: {e}");
        ExitCode::FAILURE
    })
}

fn named(file: &str, options: &LoadOptions<'static>) -> LoadOptions<'static> {
    LoadOptions {
        name: Some(file.to_owned()),
        ..options.clone()
    }
}

fn read(file: &str) -> Result<Vec<u8>, ossa::Error> {
    std::fs::read(file).map_err(|e| {
        let what = format!("{file}: cannot read: {e}");
        if e.kind() == std::io::ErrorKind::NotFound {
            ossa::Error::not_found(what)
        } else {
            ossa::Error::io(what, Some(e))
        }
    })
}

fn v3(v: [f32; 3]) -> String {
    format!("({:.4}, {:.4}, {:.4})", v[0], v[1], v[2])
}

fn info(file: &str, options: &LoadOptions<'static>) -> Result<ExitCode, ossa::Error> {
    let mut out = std::io::stdout().lock();
    // Through the path, so that sidecar files (skeletons, scene lists) are found beside it.
    let model = Model::load_file(file, options)?;
    let i = model.info();
    say!(out, "{file}: {} model", i.format.name());
    say!(
        out,
        "  {} bones, {} meshes, {} frames, {} animations, {} vertices, {} triangles, up to {} influences per vertex",
        i.bone_count,
        i.mesh_count,
        i.frame_count,
        i.animation_count,
        i.vertex_count,
        i.triangle_count,
        i.max_influences
    );
    let axis = ["x", "y", "z"].get(i.up_axis as usize).unwrap_or(&"?");
    let hand = if i.handedness > 0 { "right" } else { "left" };
    say!(
        out,
        "  {axis} up, {hand}-handed; bind pose bounds {} .. {}",
        v3(i.mins),
        v3(i.maxs)
    );
    say!(out, "bones:");
    for (b, bone) in model.bones().iter().enumerate() {
        let parent = match model.bones().get(bone.parent.max(0) as usize) {
            Some(p) if bone.parent >= 0 => format!("parent {} ({})", bone.parent, p.name),
            _ => "root".to_owned(),
        };
        let attach = if bone.flags & ossa::BONE_ATTACHMENT != 0 {
            ", attachment"
        } else if bone.flags & ossa::BONE_SYNTHETIC != 0 {
            ", added for vertices bound to no bone"
        } else {
            ""
        };
        say!(
            out,
            "  {b:4} {:<32} {parent}{attach}",
            bone.name.to_string()
        );
    }
    say!(out, "meshes:");
    for (m, mesh) in model.meshes().iter().enumerate() {
        say!(
            out,
            "  {m:4} {:?} shader {:?}: {} vertices, {} triangles, up to {} influences{}",
            mesh.name().to_string(),
            mesh.shader().to_string(),
            mesh.vertex_count(),
            mesh.triangle_count(),
            mesh.max_influences(),
            mesh.material()
                .map_or(String::new(), |k| format!(", material {k}"))
        );
    }
    if !model.textures().is_empty() {
        say!(out, "textures:");
        for (t, tex) in model.textures().iter().enumerate() {
            say!(
                out,
                "  {t:4} {:<32} {}x{}, {} bytes of image",
                tex.name.to_string(),
                tex.width,
                tex.height,
                tex.image.len()
            );
        }
    }
    if !model.materials().is_empty() {
        say!(out, "materials:");
        for (k, mat) in model.materials().iter().enumerate() {
            let texture = mat
                .texture
                .map_or("no texture".to_owned(), |t| format!("texture {t}"));
            say!(out, "  {k:4} {:<32} {texture}", mat.name.to_string());
        }
    }
    if !model.suits().is_empty() {
        say!(out, "suits:");
        for (k, suit) in model.suits().iter().enumerate() {
            say!(
                out,
                "  {k:4} {:<32} type {}, {} skins, {} properties",
                suit.name.to_string(),
                suit.kind,
                suit.skins.len(),
                suit.properties.len()
            );
            for skin in &suit.skins {
                say!(
                    out,
                    "         {:<32} on {}, censor flags {}",
                    skin.mesh.to_string(),
                    skin.bone,
                    skin.censor_flags
                );
            }
        }
    }
    say!(out, "animations:");
    for (a, scene) in model.animations().iter().enumerate() {
        say!(
            out,
            "  {a:4} {:<32} frames {}..{} at {} fps{}{}",
            scene.name.to_string(),
            scene.first_frame,
            scene.first_frame + scene.frame_count,
            scene.fps,
            if scene.looping { ", looping" } else { "" },
            if scene.moving {
                format!(", moves {}", scene.distance)
            } else {
                String::new()
            }
        );
        for e in model.animation_events(a as u32) {
            let bone = (model.bones().get(e.bone as usize))
                .map_or("no bone".to_owned(), |b| b.name.to_string());
            say!(
                out,
                "         at {:.3} s: {} = {} ({bone})",
                e.time,
                e.key,
                e.value
            );
        }
    }
    say!(out, "frames:");
    for (f, frame) in model.frames().iter().enumerate() {
        say!(
            out,
            "  {f:4} {:<32} bounds {} .. {}",
            frame.name.to_string(),
            v3(frame.mins),
            v3(frame.maxs)
        );
    }
    if model.warnings().is_empty() {
        say!(out, "warnings: none");
    } else {
        say!(out, "warnings:");
        for w in model.warnings() {
            say!(out, "  {w}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn validate(file: &str, options: &LoadOptions<'static>) -> Result<ExitCode, ossa::Error> {
    let mut out = std::io::stdout().lock();
    let report = ossa::validate(&read(file)?, &named(file, options));
    for w in &report.warnings {
        say!(out, "warning: {w}");
    }
    for p in &report.problems {
        say!(out, "error ({}): {p}", p.code().name());
    }
    if report.more_problems > 0 {
        say!(out, "... and {} more problems", report.more_problems);
    }
    let total = report.problems.len() + report.more_problems;
    if total == 0 {
        say!(out, "{file}: valid ({} warnings)", report.warnings.len());
        Ok(ExitCode::SUCCESS)
    } else {
        say!(
            out,
            "{file}: {total} problems, {} warnings",
            report.warnings.len()
        );
        Ok(ExitCode::FAILURE)
    }
}

/// Runs `f` repeatedly for about `budget_ms` and returns the best time of one run in nanoseconds.
fn best_ns(budget_ms: u128, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut best = f64::MAX;
    let mut runs = 0;
    while runs < 3 || start.elapsed().as_millis() < budget_ms {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_nanos() as f64);
        runs += 1;
    }
    best
}

fn demo() -> Result<ExitCode, ossa::Error> {
    let mut out = std::io::stdout().lock();
    let rig = TubeRig::default();
    say!(
        out,
        "ossa {}: a demo on a rig built in code",
        env!("CARGO_PKG_VERSION")
    );
    let bytes = ossa::dpm::write(&rig.build()?)?;
    say!(
        out,
        "built a {}-bone tube with {} vertices and {} frames, written as a {}-byte DPM",
        rig.bones,
        rig.vertex_count(),
        rig.frames,
        bytes.len()
    );

    let options = LoadOptions {
        name: Some("demo.dpm".to_owned()),
        ..LoadOptions::default()
    };
    let model = Model::load(&bytes, &options)?;
    let i = model.info();
    say!(
        out,
        "loaded demo.dpm: {} bones, {} meshes, {} frames, {} vertices, {} triangles, up to {} influences per vertex",
        i.bone_count,
        i.mesh_count,
        i.frame_count,
        i.vertex_count,
        i.triangle_count,
        i.max_influences
    );
    say!(out, "bind pose bounds {} .. {}", v3(i.mins), v3(i.maxs));
    let tip = model.find_bone("bone4").unwrap_or(0);

    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    let mesh = model
        .meshes()
        .first()
        .ok_or_else(|| ossa::Error::invalid_argument("demo model has no mesh"))?;
    let n = mesh.vertex_count();
    let mut positions = vec![0.0f32; n * 3];
    let mut normals = vec![0.0f32; n * 3];
    for (label, blend) in [
        (
            "frame 0 (bind)",
            vec![FrameBlend {
                frame: 0,
                weight: 1.0,
            }],
        ),
        (
            "frame 2",
            vec![FrameBlend {
                frame: 2,
                weight: 1.0,
            }],
        ),
        (
            "frames 1 and 3 at 30/70",
            vec![
                FrameBlend {
                    frame: 1,
                    weight: 0.3,
                },
                FrameBlend {
                    frame: 3,
                    weight: 0.7,
                },
            ],
        ),
    ] {
        model.pose_frames(&blend, None, &mut bones)?;
        let mut target = Strided::new(&mut positions, 3)?.with_normals(&mut normals, 3)?;
        model.skin_mesh(0, &bones, 0, n, ossa::SKIN_NORMALIZE, &mut target)?;
        let t = bones
            .get(tip as usize)
            .map(|m| m.translation())
            .unwrap_or_default();
        let last = positions.len() - 3;
        let top = [positions[last], positions[last + 1], positions[last + 2]];
        say!(
            out,
            "posed {label}: bone4 joint at {}, last vertex at {}",
            v3(t),
            v3(top)
        );
    }

    let blend = [
        FrameBlend {
            frame: 1,
            weight: 0.5,
        },
        FrameBlend {
            frame: 2,
            weight: 0.5,
        },
    ];
    let load_ns = best_ns(200, || {
        std::hint::black_box(Model::load(&bytes, &options).ok());
    });
    let pose_ns = best_ns(200, || {
        model.pose_frames(&blend, None, &mut bones).ok();
    });
    let skin_ns = best_ns(200, || {
        if let Ok(mut target) =
            Strided::new(&mut positions, 3).and_then(|t| t.with_normals(&mut normals, 3))
        {
            model.skin_mesh(0, &bones, 0, n, 0, &mut target).ok();
        }
    });
    say!(
        out,
        "timing (best of repeated runs): load {:.1} us, pose {:.1} ns per bone, skin {:.2} ns per vertex",
        load_ns / 1e3,
        pose_ns / bones.len() as f64,
        skin_ns / n as f64
    );
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------------------------------------
// convert
// ---------------------------------------------------------------------------------------------

/// Everything one conversion needs besides its input and output paths.
// Without glTF export, nothing reads the glTF options.
#[cfg_attr(not(feature = "gltf"), allow(dead_code))]
struct Job<'a> {
    options: &'a LoadOptions<'static>,
    target: Format,
    scale: f32,
    max_influences: usize,
    skeleton: Option<&'a Model>,
    skills: &'a [String],
    suit: Option<&'a str>,
    search: &'a [String],
}

/// What a conversion that worked has to say.
struct Converted {
    line: String,
    warnings: Vec<String>,
}

fn convert(args: &Args) -> ExitCode {
    let usage_error = |message: String| {
        eprintln!("ossa: {message}\n{USAGE}");
        ExitCode::from(2)
    };
    let c = &args.convert;
    if args.files.is_empty() {
        return usage_error("convert needs an input file".to_owned());
    }
    let Some(output) = c.output.as_deref() else {
        return usage_error("convert needs -o OUTPUT".to_owned());
    };
    let many = args.files.len() > 1
        || args
            .files
            .iter()
            .any(|f| Path::new(f).is_dir() || is_pattern(f));
    let into_directory = many || Path::new(output).is_dir();
    if many && !Path::new(output).is_dir() && Format::from_extension(output).is_some() {
        return usage_error(format!(
            "several inputs are written into a directory, and {output} names a file: give -o DIR"
        ));
    }
    let target = match c.to {
        Some(f) => f,
        None if into_directory => {
            return usage_error(format!(
                "writing into the directory {output} needs --to NAME ({OUTPUT_FORMATS})"
            ));
        }
        None => match Format::from_extension(output) {
            Some(f) => f,
            None => {
                return usage_error(format!(
                    "cannot tell the output format from {output}'s extension: give --to NAME \
                     ({OUTPUT_FORMATS})"
                ));
            }
        },
    };
    let gltf = matches!(target, Format::Glb | Format::Gltf);
    if !gltf && (c.scale.is_some() || c.max_influences.is_some()) {
        return usage_error(format!(
            "--scale and --max-influences are for glTF output, not {}",
            target.name()
        ));
    }
    if many && c.suit.is_some() {
        return usage_error("--suit dresses one character: give one input".to_owned());
    }
    let skeleton = match &c.skeleton {
        Some(file) => match Model::load_file(file, &side_options(&args.options)) {
            Ok(model) => Some(model),
            Err(e) => {
                report_error(file, &e);
                return ExitCode::FAILURE;
            }
        },
        None => None,
    };
    let job = Job {
        options: &args.options,
        target,
        scale: c.scale.unwrap_or(1.0),
        max_influences: c.max_influences.unwrap_or(0),
        skeleton: skeleton.as_ref(),
        skills: &c.skills,
        suit: c.suit.as_deref(),
        search: &c.search,
    };
    if many {
        return convert_many(&args.files, Path::new(output), &job);
    }
    let input = Path::new(&args.files[0]);
    let output = if into_directory {
        Path::new(output).join(output_name(input, target))
    } else {
        PathBuf::from(output)
    };
    let shown = input.display().to_string();
    match convert_one(input, &output, &job) {
        Ok(done) => {
            for w in &done.warnings {
                eprintln!("ossa: warning: {w}");
            }
            say!(std::io::stdout().lock(), "{}", done.line);
            ExitCode::SUCCESS
        }
        Err(e) => {
            report_error(&shown, &e);
            ExitCode::FAILURE
        }
    }
}

/// Options for the files that come with an input (skeleton, suit, meshes, skills): strictness
/// as the input's, their format always detected, as `--format` names the input's alone.
fn side_options(options: &LoadOptions<'static>) -> LoadOptions<'static> {
    LoadOptions {
        strict: options.strict,
        ..LoadOptions::default()
    }
}

/// `ossa: FILE: OSSA_ERR_X: message`, the message naming another file only when the problem is
/// in one (a skeleton, a CFP), as the error itself names FILE already.
fn error_line(file: &str, e: &ossa::Error) -> String {
    let detail = e.detail();
    let file_name = Path::new(file)
        .file_name()
        .map_or_else(|| file.to_owned(), |n| n.to_string_lossy().into_owned());
    let same_file = detail
        .file
        .as_deref()
        .is_none_or(|f| f == file || f == file_name);
    let message = if same_file {
        ossa::Detail {
            file: None,
            ..detail.clone()
        }
        .to_string()
    } else {
        detail.to_string()
    };
    format!("ossa: {file}: {}: {message}", e.code().name())
}

fn report_error(file: &str, e: &ossa::Error) {
    eprintln!("{}", error_line(file, e));
}

/// Loads `input` (or dresses it in the suit), binds it, adds skills, and writes `output`.
fn convert_one(input: &Path, output: &Path, job: &Job) -> Result<Converted, ossa::Error> {
    let mut warnings = Vec::new();
    let mut model = match job.suit {
        Some(suit) => dress(input, suit, job)?,
        None => Model::load_file(input, job.options)?,
    };
    if let Some(skeleton) = job.skeleton
        && job.suit.is_none()
    {
        if model.unbound().is_some() {
            model = Model::bind(&model, skeleton)?;
        } else {
            warnings.push(
                "--skeleton not used: the model has its skeleton already (in the file or beside it)"
                    .to_owned(),
            );
        }
    }
    // Only the mesh formats that name or number their bones keep meshes without a skeleton.
    let keeps_unbound = matches!(
        job.target,
        Format::Skm | Format::SimsSkn | Format::SimsBmf | Format::Mm2Mod
    );
    if model.unbound().is_some() && (!keeps_unbound || !job.skills.is_empty()) {
        let which = match model.format() {
            Format::Skm => "its SKP",
            Format::Mm2Mod => "its .skel",
            Format::SimsSkn | Format::SimsBmf => "a Sims CMX or BCF skeleton (adult-skeleton.cmx)",
            _ => "a skeleton file",
        };
        return Err(ossa::Error::invalid_argument(format!(
            "the meshes wait for a skeleton: give --skeleton FILE with {which}"
        )));
    }
    for skills in job.skills {
        model = model.with_skills_file(skills, &side_options(job.options))?;
    }
    warnings.extend(model.warnings().iter().map(|w| w.to_string()));
    let shown = output.display();
    let (bytes, line) = match job.target {
        #[cfg(feature = "gltf")]
        Format::Glb | Format::Gltf => {
            // Textures beside the input (and its .skin files), read within its directory and
            // the load's memory limit; one that cannot be used is a warning.
            let name = input
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let textures =
                ossa::textures::find_textures_beside(&model, input, None, job.options.max_bytes)?;
            warnings.extend(textures.warnings.iter().map(|w| format!("{name}: {w}")));
            let export = model.export_gltf(&ossa::format::gltf::ExportOptions {
                binary: job.target == Format::Glb,
                scale: job.scale,
                max_influences: job.max_influences,
                textures: Some(&textures),
                source_name: Some(name),
            })?;
            let line = format!("{shown}: {}", export.exactness.describe());
            (export.bytes, line)
        }
        format => {
            let bytes = model.save(format)?;
            let line = format!("{shown}: {}, {} bytes", format.name(), bytes.len());
            (bytes, line)
        }
    };
    std::fs::write(output, &bytes)
        .map_err(|e| ossa::Error::io(format!("{shown}: cannot write: {e}"), Some(e)))?;
    Ok(Converted { line, warnings })
}

/// The character `input` (a Sims skeleton, a suit file, or both) wearing `suit`, its meshes
/// found beside `input` or in the search directories.
fn dress(input: &Path, suit: &str, job: &Job) -> Result<Model, ossa::Error> {
    let loaded = Model::load_file(input, job.options)?;
    let mut dirs = vec![input.parent().map_or_else(
        || PathBuf::from("."),
        |p| {
            if p.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                p.to_path_buf()
            }
        },
    )];
    dirs.extend(job.search.iter().map(PathBuf::from));
    let side = side_options(job.options);
    let has_suit = |m: &Model| {
        m.suits()
            .iter()
            .any(|s| s.name.as_bytes().eq_ignore_ascii_case(suit.as_bytes()))
    };
    // The game keeps each suit in a file of its name; the skeleton holds none.
    let suit_file = if has_suit(&loaded) {
        None
    } else {
        let names = [".cmx", ".cmx.bcf", ".bcf"].map(|e| format!("{suit}{e}"));
        let Some(path) = find_file(&dirs, &names) else {
            let there: Vec<String> = loaded.suits().iter().map(|s| s.name.to_string()).collect();
            let has = if there.is_empty() {
                "no suits".to_owned()
            } else {
                format!("suits {}", there.join(", "))
            };
            return Err(ossa::Error::not_found(format!(
                "no suit named {suit}: the file has {has}, and none of {} is in {}",
                names.join(", "),
                shown_dirs(&dirs)
            )));
        };
        Some(Model::load_file(&path, &side)?)
    };
    let skeleton = match job.skeleton {
        Some(s) => s,
        None if loaded.unbound().is_none() && !loaded.bones().is_empty() => &loaded,
        None => {
            return Err(ossa::Error::mismatch(
                "the file holds no skeleton to dress: give --skeleton FILE (adult-skeleton.cmx)",
            ));
        }
    };
    let suits = suit_file.as_ref().unwrap_or(&loaded).suits();
    let character = ossa::assemble::with_suits(skeleton, suits)?;
    ossa::assemble::dress(&character, suit, &mut |mesh: &str| {
        let names = [".skn", ".bmf"].map(|e| format!("{mesh}{e}"));
        match find_file(&dirs, &names) {
            Some(path) => Model::load_file(&path, &side),
            None => Err(ossa::Error::not_found(format!(
                "no {} or {} in {}",
                names[0],
                names[1],
                shown_dirs(&dirs)
            ))),
        }
    })
}

fn shown_dirs(dirs: &[PathBuf]) -> String {
    let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    shown.join(", ")
}

/// The first of `names` (ASCII case ignored, as the game's files are named on Windows) in the
/// first directory that holds one.
fn find_file(dirs: &[PathBuf], names: &[String]) -> Option<PathBuf> {
    dirs.iter().find_map(|dir| {
        let entries: Vec<std::fs::DirEntry> = std::fs::read_dir(dir).ok()?.flatten().collect();
        names.iter().find_map(|name| {
            entries
                .iter()
                .find(|e| e.file_name().to_string_lossy().eq_ignore_ascii_case(name))
                .map(|e| e.path())
        })
    })
}

/// The output's file name for `input` written as `target`: its name without the model
/// extension (both parts of `.cmx.bcf`), and the target's.
fn output_name(input: &Path, target: Format) -> String {
    let name = input
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let lower = name.to_ascii_lowercase();
    let stem_len = if lower.ends_with(".cmx.bcf") {
        name.len() - ".cmx.bcf".len()
    } else {
        name.rfind('.').filter(|&dot| dot > 0).unwrap_or(name.len())
    };
    let stem = name.get(..stem_len).unwrap_or(&name);
    format!("{stem}.{}", extension(target))
}

fn extension(format: Format) -> &'static str {
    match format {
        Format::Dpm => "dpm",
        Format::Skm => "skm",
        Format::Skp => "skp",
        Format::SimsSkn => "skn",
        Format::SimsBmf => "bmf",
        Format::SimsCmx => "cmx",
        Format::SimsBcf => "bcf",
        Format::Mm2Skel => "skel",
        Format::Mm2Mod => "mod",
        Format::Dmf | Format::DmfJson => "dmf",
        Format::Glb => "glb",
        Format::Gltf => "gltf",
        Format::Auto => "out",
    }
}

/// A path whose last part holds `*` or `?` and that names no file: a pattern the shell left.
fn is_pattern(arg: &str) -> bool {
    let path = Path::new(arg);
    let last = path.file_name().map(|n| n.to_string_lossy().into_owned());
    last.is_some_and(|n| n.contains(['*', '?'])) && !path.exists()
}

/// Whether `name` matches `pattern`: `*` any run of characters, `?` one; a leading dot only
/// when the pattern starts with one, as shells do.
fn glob_match(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Backtracking to the last star: linear in practice, quadratic at worst.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A file a directory or pattern gives: one ossa reads as a model (not SKP skeletons, CFP
/// skill data or other sidecars, which go with their models).
fn is_model_file(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let format = name.as_deref().and_then(Format::from_extension);
    path.is_file() && format.is_some_and(|f| !matches!(f, Format::Skp | Format::Glb | Format::Gltf))
}

/// The files the arguments name, in order (each directory's and pattern's sorted), each once;
/// and for each directory or pattern that gives none, why.
fn expand_inputs(args: &[String]) -> (Vec<PathBuf>, Vec<(String, ossa::Error)>) {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut failed = Vec::new();
    for arg in args {
        let path = Path::new(arg);
        let found: Vec<PathBuf> = if path.is_dir() {
            listed(path, |_| true)
        } else if is_pattern(arg) {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            let pattern = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let found = listed(parent.unwrap_or(Path::new(".")), |name| {
                glob_match(&pattern, name)
            });
            // `*.dpm` gives `x.dpm`, as the shell would, not `./x.dpm`.
            match parent {
                Some(_) => found,
                None => found
                    .into_iter()
                    .map(|p| p.file_name().map_or(p.clone(), PathBuf::from))
                    .collect(),
            }
        } else {
            // A named file is converted whatever it is; loading says what is wrong with it.
            vec![path.to_path_buf()]
        };
        if found.is_empty() {
            let place = if path.is_dir() {
                "the directory holds"
            } else {
                "the pattern matches"
            };
            failed.push((
                arg.clone(),
                ossa::Error::not_found(format!(
                    "{place} no model file (.dpm .skm .skn .bmf .cmx .bcf .skel .mod .dmf)"
                )),
            ));
        }
        for f in found {
            if seen.insert(f.clone()) {
                files.push(f);
            }
        }
    }
    (files, failed)
}

/// The model files of `dir` whose names pass `keep`, sorted.
fn listed(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| keep(&n.to_string_lossy())))
        .filter(|p| is_model_file(p))
        .collect();
    files.sort();
    files
}

/// Where batch conversion says how it goes: a bar redrawn on a terminal, else a line a file.
struct Progress {
    total: usize,
    /// Stderr is a terminal: draw the bar there.
    bar: bool,
    /// Per-file lines go to stdout, unless stdout is the terminal the bar is on.
    lines: bool,
    /// Characters the bar on screen takes, to blank it before a line is printed over it.
    drawn: usize,
}

impl Progress {
    fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal();
        Progress {
            total,
            bar,
            lines: !(bar && std::io::stdout().is_terminal()),
            drawn: 0,
        }
    }

    /// Redraws the bar: `done` files finished, `name` the one under way.
    fn show(&mut self, done: usize, name: &str) {
        if !self.bar {
            return;
        }
        const WIDTH: usize = 30;
        let filled = (done * WIDTH).checked_div(self.total).unwrap_or(WIDTH);
        let head = if filled < WIDTH { ">" } else { "" };
        let empty = WIDTH - filled - head.len();
        // The name's end, which tells files apart, within one terminal line.
        let chars: Vec<char> = name.chars().collect();
        let short: String = chars[chars.len().saturating_sub(40)..].iter().collect();
        let text = format!(
            "[{}{head}{}] {done}/{} {short}",
            "=".repeat(filled),
            " ".repeat(empty),
            self.total
        );
        self.clear();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{text}");
        let _ = err.flush();
        self.drawn = text.chars().count();
    }

    fn clear(&mut self) {
        if self.drawn > 0 {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\r", " ".repeat(self.drawn));
            let _ = err.flush();
            self.drawn = 0;
        }
    }

    /// A line on stderr (an error, a warning), below the bar.
    fn note(&mut self, line: &str) {
        self.clear();
        eprintln!("{line}");
    }

    /// A converted file's line, on stdout unless the bar has the terminal.
    fn done(&mut self, line: &str) {
        if self.lines {
            self.clear();
            say!(std::io::stdout().lock(), "{line}");
        }
    }
}

fn convert_many(args: &[String], dir: &Path, job: &Job) -> ExitCode {
    let (inputs, unmatched) = expand_inputs(args);
    let mut failures = unmatched.len();
    for (arg, e) in &unmatched {
        report_error(arg, e);
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        let e = ossa::Error::io(format!("cannot make the directory: {e}"), Some(e));
        report_error(&dir.display().to_string(), &e);
        return ExitCode::FAILURE;
    }
    let mut progress = Progress::new(inputs.len());
    let mut written: std::collections::HashMap<PathBuf, PathBuf> = Default::default();
    for (k, input) in inputs.iter().enumerate() {
        let shown = input.display().to_string();
        progress.show(k, &shown);
        let output = dir.join(output_name(input, job.target));
        // Two inputs of one stem (a.dpm, a.skm) would write one file: the second is refused.
        let result = match written.get(&output) {
            Some(first) => Err(ossa::Error::invalid_argument(format!(
                "{} is written from {} already",
                output.display(),
                first.display()
            ))),
            None => convert_one(input, &output, job),
        };
        match result {
            Ok(converted) => {
                written.insert(output, input.clone());
                for w in &converted.warnings {
                    progress.note(&format!("ossa: warning: {w}"));
                }
                progress.done(&format!("{shown} -> {}", converted.line));
            }
            Err(e) => {
                failures += 1;
                progress.note(&error_line(&shown, &e));
            }
        }
    }
    progress.clear();
    let converted = written.len();
    let total = inputs.len() + unmatched.len();
    let mut out = std::io::stdout().lock();
    if failures == 0 {
        let files = if converted == 1 { "file" } else { "files" };
        say!(out, "converted {converted} {files} into {}", dir.display());
        ExitCode::SUCCESS
    } else {
        say!(
            out,
            "converted {converted} of {total} inputs into {}; {failures} failed",
            dir.display()
        );
        ExitCode::FAILURE
    }
}
