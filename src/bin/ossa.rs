//! `ossa`: look inside a model, validate it, convert it (to glTF or another format it reads,
//! one file or many), measure how fast it loads, poses and skins, or (with no arguments) watch
//! a built-in rig being loaded, posed and skinned.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use clap::error::ErrorKind;
use ossa::iqm::{Engine, Kind};
use ossa::synth::TubeRig;
use ossa::{FrameBlend, LoadOptions, Mat3x4, Model, Strided};

/// Prints a line, ignoring a closed pipe (`ossa info big.dpm | head` must not panic).
macro_rules! say {
    ($out:expr) => {
        let _ = writeln!($out);
    };
    ($out:expr, $($arg:tt)*) => {
        let _ = writeln!($out, $($arg)*);
    };
}

// The crate root looks for modules beside it (src/bin/), where cargo would take each file for
// a binary of its own: the modules live in src/bin/ossa/ instead.
#[path = "ossa/cli.rs"]
mod cli;
#[path = "ossa/convert.rs"]
mod convert;
#[path = "ossa/info.rs"]
mod info;
#[path = "ossa/inputs.rs"]
mod inputs;
#[path = "ossa/render.rs"]
mod render;

// The measuring code `cargo bench` runs, so that both print the same tables.
#[path = "../../benches/measure/mod.rs"]
mod measure;

use cli::{Cli, Command, USAGE};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            // Help and version on stdout, exit status 0, as clap prints them.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => return usage_error(&cli::parse_error_message(&e)),
    };
    let result = match cli.command {
        None | Some(Command::Demo) => demo().map_err(|e| (String::new(), e)),
        Some(Command::Info(args)) => match args.load.options() {
            Ok(options) => info::info(&args, &options).map_err(|e| (args.file.clone(), e)),
            Err(message) => return usage_error(&message),
        },
        Some(Command::Validate(args)) => return validate_files(&args),
        Some(Command::Convert(args)) => return convert::convert(&args),
        Some(Command::Render(args)) => return render::render(&args),
        Some(Command::Bench(args)) => {
            let mut measure_args: Vec<String> = Vec::new();
            if args.quick {
                measure_args.push("--quick".to_owned());
            }
            measure_args.extend(args.models);
            return measure::main(measure_args.into_iter(), "ossa bench", false);
        }
    };
    result.unwrap_or_else(|(file, e)| {
        if file.is_empty() {
            eprintln!("ossa: {}: {}", e.code().name(), e);
        } else {
            report_error(&file, &e);
        }
        ExitCode::FAILURE
    })
}

/// `ossa: MESSAGE`, the commands, and exit status 2.
fn usage_error(message: &str) -> ExitCode {
    eprintln!("ossa: {message}\n{USAGE}");
    ExitCode::from(2)
}

fn read(file: &str) -> Result<Vec<u8>, ossa::Error> {
    std::fs::read(file).map_err(|e| {
        // The error line names the file already.
        let what = format!("cannot read: {e}");
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

/// `ossa validate`: each file against its format's rules, or with --engine against the
/// engine's; exit status 1 when any file fails.
fn validate_files(args: &cli::ValidateArgs) -> ExitCode {
    let options = match args.load.options() {
        Ok(options) => options,
        Err(message) => return usage_error(&message),
    };
    let engine = match args.engine.as_deref().map(Engine::from_name) {
        None => None,
        Some(Some(engine)) => Some(engine),
        Some(None) => {
            return usage_error(&format!(
                "unknown engine {}; one of {}",
                args.engine.as_deref().unwrap_or_default(),
                Engine::NAMES
            ));
        }
    };
    if args.player && engine != Some(Engine::Warfork) {
        return usage_error("--player is for --engine warfork");
    }
    if args.character() {
        if engine.is_some() {
            return usage_error("--engine checks model files, not a Sims character");
        }
        let [file] = args.files.as_slice() else {
            return usage_error("a Sims character is checked from one FILE (its skeleton or suit)");
        };
        if args.skills.as_ref().is_some_and(Vec::is_empty) {
            return usage_error("--skills needs at least one FILE");
        }
        return match validate_character(file, args, &options) {
            Ok(code) => code,
            Err(e) => {
                report_error(file, &e);
                ExitCode::FAILURE
            }
        };
    }
    let mut status = ExitCode::SUCCESS;
    for file in &args.files {
        let result = match engine {
            Some(engine) => validate_engine(file, engine, args.player, &options),
            None => validate(file, &options),
        };
        match result {
            Ok(code) if code == ExitCode::SUCCESS => {}
            Ok(code) => status = code,
            Err(e) => {
                report_error(file, &e);
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}

/// `ossa validate --engine NAME FILE`: one line a rule the file breaks, then what the engine
/// does with it; exit status 1 when it refuses it.
fn validate_engine(
    file: &str,
    engine: Engine,
    player: bool,
    options: &LoadOptions<'static>,
) -> Result<ExitCode, ossa::Error> {
    let findings = ossa::iqm::engines::check_file(Path::new(file), engine, player, options)?;
    let mut out = std::io::stdout().lock();
    for f in &findings {
        say!(out, "{file}: {} {}: {f}", f.kind, f.rule);
    }
    let tally = |kind: Kind| findings.iter().filter(|f| f.kind == kind).count();
    let (refusals, misreads, notes) = (
        tally(Kind::Refuses),
        tally(Kind::Misreads),
        tally(Kind::Note),
    );
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let rest = format!(
        "{}, {}",
        plural(misreads, "misread", "misreads"),
        plural(notes, "note", "notes")
    );
    if refusals > 0 {
        say!(
            out,
            "{file}: {} would refuse it ({}; {rest})",
            engine.title(),
            plural(refusals, "rule", "rules")
        );
        Ok(ExitCode::FAILURE)
    } else {
        say!(out, "{file}: {} loads it ({rest})", engine.title());
        Ok(ExitCode::SUCCESS)
    }
}

fn validate(file: &str, options: &LoadOptions<'static>) -> Result<ExitCode, ossa::Error> {
    let mut out = std::io::stdout().lock();
    // Through the path, so that the files beside it (a skill's CFP) are checked too.
    let report = ossa::validate_file(Path::new(file), options)?;
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

/// `ossa validate FILE --skeleton --suit --skills --search`: every problem of the character,
/// file by file; exit status 1 when any.
fn validate_character(
    file: &str,
    args: &cli::ValidateArgs,
    options: &LoadOptions<'static>,
) -> Result<ExitCode, ossa::Error> {
    let check = ossa::character::CharacterCheck {
        skeleton: args.skeleton.as_ref().map(Into::into),
        suit: args.suit.clone(),
        skills: (args.skills.iter().flatten()).map(Into::into).collect(),
        search: args.search.iter().map(Into::into).collect(),
    };
    let report = ossa::character::check_character(Path::new(file), &check, options)?;
    let mut out = std::io::stdout().lock();
    for f in &report.files {
        for w in &f.warnings {
            say!(out, "warning: {w}");
        }
        for p in &f.problems {
            say!(out, "error ({}): {p}", p.code().name());
        }
        if f.more_problems > 0 {
            say!(out, "... and {} more problems", f.more_problems);
        }
        let total = f.problems.len() + f.more_problems;
        let shown = f.file.display();
        if total == 0 {
            say!(out, "{shown}: valid ({} warnings)", f.warnings.len());
        } else {
            say!(
                out,
                "{shown}: {total} problems, {} warnings",
                f.warnings.len()
            );
        }
    }
    let total = report.problem_count();
    let failing = (report.files.iter())
        .filter(|f| !f.problems.is_empty() || f.more_problems > 0)
        .count();
    if total == 0 {
        say!(
            out,
            "{file}: the character is valid ({} files)",
            report.files.len()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        say!(
            out,
            "{file}: the character has {total} problems in {failing} of {} files",
            report.files.len()
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
    // A message about reading the file starts with its path (perhaps as `./FILE`), which the
    // line gives already.
    let bare = |path: &str| path.strip_prefix("./").unwrap_or(path).to_owned();
    let message = match message.split_once(": ") {
        Some((head, rest)) if bare(head) == bare(file) => rest.to_owned(),
        _ => message,
    };
    format!("ossa: {file}: {}: {message}", e.code().name())
}

fn report_error(file: &str, e: &ossa::Error) {
    eprintln!("{}", error_line(file, e));
}
