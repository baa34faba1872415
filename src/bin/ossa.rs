//! `ossa`: look inside a model, validate it, measure how fast it loads, poses and skins, or
//! (with no arguments) watch a built-in rig being loaded, posed and skinned.

use std::io::Write;
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
  ossa bench [--quick] [FILE...]
                            load, pose and skinning times beside memcpy and a C baseline;
                            default: the corpus's largest models, else a built-in 100k-vertex rig
options (before FILE):
  --strict                  reject what the default mode tolerates
  --format NAME             dpm, skm, skp, sims-skn, sims-bmf, sims-cmx, sims-bcf,
                            mm2-skel, mm2-mod, dmf, dmf-json (default: detect)";

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
    file: Option<String>,
    options: LoadOptions<'static>,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mut args = Args {
        command: it.next().unwrap_or_else(|| "demo".to_owned()),
        file: None,
        options: LoadOptions::default(),
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--strict" => args.options.strict = true,
            "--format" => {
                let name = it.next().ok_or("--format needs a name")?;
                args.options.format =
                    cli_format(&name).ok_or_else(|| format!("unknown format {name}"))?;
            }
            _ if args.file.is_none() => args.file = Some(a),
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
    let result = match (args.command.as_str(), &args.file) {
        ("demo", _) => demo(),
        ("info", Some(file)) => info(file, &args.options),
        ("validate", Some(file)) => validate(file, &args.options),
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
