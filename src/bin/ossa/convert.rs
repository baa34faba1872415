//! `ossa convert`: one model into another format, or many into a directory.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ossa::convert::ConvertOptions;
use ossa::iqm::engines::{ANIMATION_CFG, is_tris_iqm};
use ossa::iqm::player::{PlayerConfig, read_player_config};
use ossa::iqm::{Engine, EngineWrite};
use ossa::{Format, LoadOptions, Model};

use crate::cli::{ConvertArgs, OUTPUT_FORMATS, output_format};
use crate::inputs::{
    Progress, Sources, end_batch, gather, is_pattern, load_skeleton, model_stem, report_one,
    start_batch,
};
use crate::{error_line, usage_error};

/// The option values of `ossa convert`, checked.
struct Settings {
    options: LoadOptions<'static>,
    to: Option<Format>,
    scale: Option<f32>,
    max_influences: Option<usize>,
    keep_order: bool,
    skin_order: bool,
    bake_scale: bool,
    engine: Option<Engine>,
    sidecars: bool,
    player: bool,
    animation_cfg: Option<PathBuf>,
}

impl Settings {
    /// The values checked in the order the options' meanings depend on nothing else: each
    /// message names the option and what it needs.
    fn from_args(args: &ConvertArgs) -> Result<Settings, String> {
        let options = args.load.options()?;
        let to =
            match &args.to {
                Some(name) => Some(output_format(name).ok_or_else(|| {
                    format!("unknown output format {name}; one of {OUTPUT_FORMATS}")
                })?),
                None => None,
            };
        let scale = match &args.scale {
            Some(text) => match text.parse::<f32>() {
                Ok(f) if f.is_finite() && f > 0.0 => Some(f),
                _ => return Err(format!("--scale needs a number above 0, not {text}")),
            },
            None => None,
        };
        let max_influences = match &args.max_influences {
            Some(text) => Some(
                text.parse()
                    .map_err(|_| format!("--max-influences needs a count (0 = all), not {text}"))?,
            ),
            None => None,
        };
        if args.parts.skills.as_ref().is_some_and(Vec::is_empty) {
            return Err("--skills needs a file".to_owned());
        }
        if args.parts.anims.as_ref().is_some_and(Vec::is_empty) {
            return Err("--anims needs a file".to_owned());
        }
        let engine = match &args.engine {
            Some(name) => Some(
                Engine::from_name(name)
                    .ok_or_else(|| format!("unknown engine {name}; one of {}", Engine::NAMES))?,
            ),
            None => None,
        };
        let qf = matches!(engine, Some(Engine::Qfusion | Engine::Warfork));
        if args.player && !qf {
            return Err("--player is for --engine qfusion or warfork".to_owned());
        }
        if args.animation_cfg.is_some() && !qf {
            return Err("--animation-cfg is for --engine qfusion or warfork".to_owned());
        }
        Ok(Settings {
            options,
            to,
            scale,
            max_influences,
            keep_order: args.keep_order,
            skin_order: args.skin_order,
            bake_scale: args.bake_scale,
            engine,
            sidecars: args.sidecars,
            player: args.player,
            animation_cfg: args.animation_cfg.as_ref().map(PathBuf::from),
        })
    }
}

/// Everything one conversion needs besides its input and output paths.
// Without glTF export, nothing reads the glTF options.
#[cfg_attr(not(feature = "gltf"), allow(dead_code))]
struct Job<'a> {
    target: Format,
    scale: f32,
    /// --max-influences, --keep-order, --skin-order, --bake-scale.
    convert: ConvertOptions,
    /// IQM for an engine, with its sidecars.
    engine: Option<Engine>,
    sidecars: bool,
    player: bool,
    animation_cfg: Option<&'a Path>,
    sources: Sources<'a>,
}

/// What a conversion that worked has to say.
struct Converted {
    line: String,
    warnings: Vec<String>,
}

/// `ossa convert`: one input into a file (or an existing directory), or many into a directory.
pub fn convert(args: &ConvertArgs) -> ExitCode {
    let settings = match Settings::from_args(args) {
        Ok(s) => s,
        Err(message) => return usage_error(&message),
    };
    let c = &settings;
    if args.inputs.is_empty() {
        return usage_error("convert needs an input file");
    }
    let Some(output) = args.output.as_deref() else {
        return usage_error("convert needs -o OUTPUT");
    };
    let many = args.inputs.len() > 1
        || args
            .inputs
            .iter()
            .any(|f| Path::new(f).is_dir() || is_pattern(f));
    let into_directory = many || Path::new(output).is_dir();
    if many && !Path::new(output).is_dir() && Format::from_extension(output).is_some() {
        return usage_error(&format!(
            "several inputs are written into a directory, and {output} names a file: give -o DIR"
        ));
    }
    let target = match c.to {
        Some(f) => f,
        None if into_directory => {
            return usage_error(&format!(
                "writing into the directory {output} needs --to NAME ({OUTPUT_FORMATS})"
            ));
        }
        None => match Format::from_extension(output) {
            Some(f) => f,
            None => {
                return usage_error(&format!(
                    "cannot tell the output format from {output}'s extension: give --to NAME \
                     ({OUTPUT_FORMATS})"
                ));
            }
        },
    };
    let gltf = matches!(target, Format::Glb | Format::Gltf);
    if !gltf && c.scale.is_some() {
        return usage_error(&format!(
            "--scale is for glTF output, not {}",
            target.name()
        ));
    }
    if !gltf
        && !ossa::convert::optimizes(target)
        && target != Format::Iqm
        && c.max_influences.is_some()
    {
        return usage_error(&format!(
            "--max-influences is for glTF, DPM, SKM, SKP, DMF, MM2 and IQM output, not {}",
            target.name()
        ));
    }
    if !ossa::convert::optimizes(target) && c.keep_order {
        return usage_error(&format!(
            "--keep-order is for DPM, SKM, SKP, DMF and MM2 output, which are optimised \
             otherwise; {} is written in the model's order",
            target.name()
        ));
    }
    if c.keep_order && c.skin_order {
        return usage_error("--keep-order and --skin-order ask for two orders: give one");
    }
    if !matches!(target, Format::Mm2Skel | Format::Mm2Mod) && c.bake_scale {
        return usage_error(&format!(
            "--bake-scale is for MM2 output (.skel, .mod), not {}",
            target.name()
        ));
    }
    if many && args.parts.suit.is_some() {
        return usage_error("--suit dresses one character: give one input");
    }
    if target != Format::Iqm && (c.engine.is_some() || c.sidecars) {
        let option = if c.engine.is_some() {
            "--engine"
        } else {
            "--sidecars"
        };
        return usage_error(&format!(
            "{option} writes IQM (-o OUT.iqm or --to iqm), not {}",
            target.name()
        ));
    }
    if many && c.animation_cfg.is_some() {
        return usage_error("--animation-cfg is one model's player config: give one input");
    }
    let skeleton = match load_skeleton(args.parts.skeleton.as_deref(), &c.options) {
        Ok(skeleton) => skeleton,
        Err(code) => return code,
    };
    let job = Job {
        target,
        scale: c.scale.unwrap_or(1.0),
        convert: ConvertOptions {
            max_influences: c.max_influences.unwrap_or(0),
            keep_order: c.keep_order,
            skin_order: c.skin_order,
            bake_scale: c.bake_scale,
        },
        engine: c.engine,
        sidecars: c.sidecars,
        player: c.player,
        animation_cfg: c.animation_cfg.as_deref(),
        sources: Sources::of(&args.parts, &c.options, skeleton.as_ref()),
    };
    if many {
        return convert_many(&args.inputs, Path::new(output), &job);
    }
    let input = Path::new(&args.inputs[0]);
    let output = if into_directory {
        Path::new(output).join(output_name(input, target))
    } else {
        PathBuf::from(output)
    };
    let result = convert_one(input, &output, &job).map(|done| (done.line, done.warnings));
    report_one(&input.display().to_string(), result)
}

/// Loads `input` (or dresses it in the suit), binds it, adds skills, and writes `output`.
fn convert_one(input: &Path, output: &Path, job: &Job) -> Result<Converted, ossa::Error> {
    // Only the mesh formats that name or number their bones keep meshes without a skeleton.
    let keeps_unbound = matches!(
        job.target,
        Format::Skm | Format::SimsSkn | Format::SimsBmf | Format::SimsMsh | Format::Mm2Mod
    );
    let mut gathered = gather(input, &job.sources, keeps_unbound)?;
    let shown = output.display();
    // Targets the savers optimise take the skin order with their other orders (after them);
    // the others take it here.
    let mut skin_note = None;
    let optimizes = ossa::convert::optimizes(job.target) && !job.convert.keep_order;
    if job.convert.skin_order && !optimizes {
        let (ordered, note) = ossa::convert::skin_ordered(&gathered.model)?;
        gathered.model = ordered;
        skin_note = Some(note);
    }
    if job.target == Format::Iqm && (job.engine.is_some() || job.sidecars) {
        let (model, warnings) = (gathered.model, gathered.warnings);
        return convert_for_engine(input, output, model, warnings, job).map(|mut done| {
            if let Some(note) = skin_note {
                done.line = format!("{}; {note}", done.line);
            }
            done
        });
    }
    let mut warnings = gathered.warnings.clone();
    let (bytes, line) = match job.target {
        #[cfg(feature = "gltf")]
        Format::Glb | Format::Gltf => {
            // Textures beside the input (and its .skin files), a dressed character's beside
            // each mesh's file, read within its directory and the load's memory limit; one that
            // cannot be used is a warning.
            let model = &gathered.model;
            let name = input
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let textures = gathered.textures(input, job.sources.options.max_bytes)?;
            warnings.extend(textures.warnings.iter().map(|w| format!("{name}: {w}")));
            let export = model.export_gltf(&ossa::format::gltf::ExportOptions {
                binary: job.target == Format::Glb,
                scale: job.scale,
                max_influences: job.convert.max_influences,
                textures: Some(&textures),
                source_name: Some(name),
            })?;
            let line = format!("{shown}: {}", export.exactness.describe());
            (export.bytes, line)
        }
        format => {
            let (prepared, mut changes) =
                ossa::convert::prepare(&gathered.model, format, &job.convert)?;
            let model = prepared.as_ref().unwrap_or(&gathered.model);
            let (bytes, optimized) = if let Format::SimsCmx | Format::SimsBcf = format {
                // A character file's skills need their numbers beside it, in CFPs.
                let binary = format == Format::SimsBcf;
                let saved = ossa::cmx::write_with_skills(model, binary)?;
                (saved.bytes, write_cfps(output, &saved.cfps)?)
            } else {
                ossa::convert::save(model, format, &job.convert)?
            };
            changes.extend(optimized);
            let mut line = format!("{shown}: {}, {} bytes", format.name(), bytes.len());
            for change in changes {
                line.push_str("; ");
                line.push_str(&change);
            }
            (bytes, line)
        }
    };
    std::fs::write(output, &bytes)
        .map_err(|e| ossa::Error::io(format!("{shown}: cannot write: {e}"), Some(e)))?;
    let line = match skin_note {
        Some(note) => format!("{line}; {note}"),
        None => line,
    };
    Ok(Converted { line, warnings })
}

/// `convert --engine NAME` (or `--sidecars`): the IQM the engine loads and the sidecars it
/// reads beside it, all checked before any is written; a file the engine would refuse is not
/// written, and the error names the rule.
fn convert_for_engine(
    input: &Path,
    output: &Path,
    model: Model,
    mut warnings: Vec<String>,
    job: &Job,
) -> Result<Converted, ossa::Error> {
    let shown = output.display().to_string();
    let (prepared, mut changes) = ossa::convert::prepare(&model, job.target, &job.convert)?;
    let model = prepared.unwrap_or(model);
    let qf = matches!(job.engine, Some(Engine::Qfusion | Engine::Warfork));
    let player = qf && (job.player || is_tris_iqm(&output.to_string_lossy()));
    let config = if player {
        player_config(input, job)?
    } else {
        None
    };
    #[cfg(feature = "gltf")]
    let skins = if qf {
        Vec::new()
    } else {
        skin_variants(input, &model, job, &mut warnings)?
    };
    #[cfg(not(feature = "gltf"))]
    let skins = Vec::new();
    let iqm_name = output
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let set = ossa::convert::engine_files(
        &model,
        &iqm_name,
        &EngineWrite {
            engine: job.engine,
            player,
            player_config: config.as_ref(),
            sidecars: job.sidecars,
        },
        &skins,
    )?;
    // The IQM's own line names it by the path given; the sidecars go beside it.
    let line = set.line;
    let mut line = format!("{shown}: {line}");
    let dir = output.parent().unwrap_or(Path::new(""));
    let written: Vec<(PathBuf, Vec<u8>)> = (set.files.into_iter().enumerate())
        .map(|(k, f)| {
            let path = if k == 0 {
                output.to_path_buf()
            } else {
                dir.join(&f.name)
            };
            (path, f.bytes)
        })
        .collect();
    changes.extend(set.notes);
    for change in changes {
        line.push_str("; ");
        line.push_str(&change);
    }
    warnings.extend(
        set.findings
            .iter()
            .map(|f| format!("{shown}: {} {}: {f}", f.kind, f.rule)),
    );
    let mut done: Vec<&Path> = Vec::new();
    for (path, bytes) in &written {
        if let Err(e) = std::fs::write(path, bytes) {
            // A set half written is no set: what was written of it goes.
            for p in done {
                let _ = std::fs::remove_file(p);
            }
            return Err(ossa::Error::io(
                format!("{}: cannot write: {e}", path.display()),
                Some(e),
            ));
        }
        done.push(path);
    }
    Ok(Converted { line, warnings })
}

/// The `.skin` files beside `input` (DarkPlaces' `MODEL_N.skin`): per file, per mesh, the
/// texture it names, for [`ossa::convert::engine_files`] to write again beside the IQM.
#[cfg(feature = "gltf")]
fn skin_variants(
    input: &Path,
    model: &Model,
    job: &Job,
    warnings: &mut Vec<String>,
) -> Result<Vec<Vec<Option<String>>>, ossa::Error> {
    let (variants, found) =
        ossa::textures::skin_files_beside(model, input, None, job.sources.options.max_bytes)?;
    let name = input.file_name().unwrap_or_default().to_string_lossy();
    warnings.extend(found.iter().map(|w| format!("{name}: {w}")));
    Ok(ossa::textures::variant_texture_names(&variants))
}

/// The player config a player model's anims come from: --animation-cfg, else `animation.cfg`
/// beside the input; None without either.
fn player_config(input: &Path, job: &Job) -> Result<Option<PlayerConfig>, ossa::Error> {
    let beside = input.with_file_name(ANIMATION_CFG);
    let path = match job.animation_cfg {
        Some(path) => path.to_path_buf(),
        None if beside.is_file() => beside,
        None => return Ok(None),
    };
    let shown = path.display().to_string();
    let text = std::fs::read(&path).map_err(|e| {
        let message = format!("{shown}: cannot read: {e}");
        if e.kind() == std::io::ErrorKind::NotFound {
            ossa::Error::not_found(message)
        } else {
            ossa::Error::io(message, Some(e))
        }
    })?;
    read_player_config(&text)
        .map(Some)
        .map_err(|e| e.in_file(&std::sync::Arc::from(shown.as_str())))
}

/// Writes each skill's CFP beside `output`, and says which: `2 skills, their numbers in
/// a2o-walk.cfp and a2o-idle.cfp`; None for none.
fn write_cfps(output: &Path, cfps: &[(String, Vec<u8>)]) -> Result<Option<String>, ossa::Error> {
    let dir = output.parent().unwrap_or(Path::new(""));
    for (name, bytes) in cfps {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|e| {
            ossa::Error::io(format!("{}: cannot write: {e}", path.display()), Some(e))
        })?;
    }
    let names: Vec<&str> = cfps.iter().map(|(n, _)| n.as_str()).collect();
    Ok(ossa::convert::describe_cfps(&names))
}

/// The output's file name for `input` written as `target`: its stem and the target's extension.
fn output_name(input: &Path, target: Format) -> String {
    format!("{}.{}", model_stem(input), extension(target))
}

fn extension(format: Format) -> &'static str {
    match format {
        Format::Dpm => "dpm",
        Format::Skm => "skm",
        Format::Skp => "skp",
        Format::SimsSkn => "skn",
        Format::SimsBmf => "bmf",
        Format::SimsMsh => "msh",
        Format::SimsCmx => "cmx",
        Format::SimsBcf => "bcf",
        Format::Mm2Skel => "skel",
        Format::Mm2Mod => "mod",
        Format::Dmf | Format::DmfJson => "dmf",
        Format::Glb => "glb",
        Format::Gltf => "gltf",
        Format::Iqm => "iqm",
        Format::Auto => "out",
    }
}

fn convert_many(args: &[String], dir: &Path, job: &Job) -> ExitCode {
    let Some((inputs, unmatched)) = start_batch(args, false, dir) else {
        return ExitCode::FAILURE;
    };
    let mut failures = unmatched;
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
    let total = inputs.len() + unmatched;
    end_batch(dir, ("converted", "file"), converted, total, failures)
}
