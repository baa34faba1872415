//! The command line: what each subcommand takes, and how a bad one is reported.
//!
//! Option values that need checking (`--format`, `--to`, `--scale`, `--max-influences`) are
//! taken as text and checked after parsing, so that their messages say what a valid value is
//! in the words the commands use elsewhere.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, Parser, Subcommand};

use ossa::{Format, LoadOptions};

/// The commands in one screen: printed after every usage error.
pub const USAGE: &str = "usage:
  ossa                      demo: build a rigged model in code, load, pose and skin it
  ossa info FILE [--frames] [--json]
                            summary of a model: counts, bounds, bone tree, meshes, animations
  ossa validate FILE...     every problem in a model file (exit status 1 when any)
  ossa validate FILE [--skeleton FILE] [--suit NAME] [--skills FILE...] [--search DIR]
                            every problem of a Sims character across its files
  ossa validate --engine NAME [--player] FILE...
                            what darkplaces, fte, qfusion or warfork refuses or gets wrong in it
                            (exit status 1 when the engine refuses it)
  ossa convert INPUT -o OUTPUT [convert options]
  ossa convert INPUT... -o DIR --to NAME [convert options]
                            write models in another format (glTF or one ossa reads)
  ossa render MODEL -o OUT.png [render options]
  ossa render MODEL... -o DIR [--thumbnail N]
                            draw a posed model (or a sheet of its animation) as PNG
  ossa bench [--quick] [FILE...]
                            load, pose and skinning times
`ossa COMMAND --help` lists a command's options";

#[derive(Parser)]
#[command(
    name = "ossa",
    version,
    about = "Look inside, validate, convert, draw and measure skeletal models of older game \
             engines (DPM, SKM/SKP, Sims CMX/BCF/SKN/BMF/MSH/CFP, MM2 SKEL/MOD, DMF, glTF)",
    after_help = "Without a command, ossa runs the demo: a rig built in code, loaded, posed and \
                  skinned.\nExit status: 0 done, 1 the model or a file failed (the message \
                  names its OSSA_ERR_* code), 2 a usage error."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Build a rigged model in code, load, pose and skin it (what `ossa` alone runs)
    Demo,
    /// Summary of a model: format, counts, bounds, bone tree, meshes, animations, warnings
    #[command(
        long_about = "Summary of a model: format, counts (bones, meshes, vertices, triangles, \
                      frames, animations), bounds, the bones as a tree, one line per mesh, \
                      texture, material and animation, and the warnings.\n\n\
                      Sims character files list their suits (each skin's bone and mesh) and \
                      skills (motions, frames, duration, the CFP they read); a .cfp file is \
                      described by its value count and the skills beside it that read it."
    )]
    Info(InfoArgs),
    /// Every problem in a model file (exit status 1 when any); with --engine, what that
    /// engine's loader would refuse or silently get wrong
    #[command(
        long_about = "Every problem in a model file: each rule of its format it breaks, and \
                      what the default mode tolerates (exit status 1 when any problem). The \
                      files beside it are read as loading reads them: a Sims skill whose \
                      numbers (its CFP, or a 1998 file's .bin) are not beside its file is a \
                      problem naming the skill, the files and the directory.\n\n\
                      With --skeleton, --suit, --skills or --search: FILE is a Sims character \
                      (a skeleton, a suit file, or both) and every file it refers to is \
                      checked, file by file: each file's own problems; a suit or mesh not \
                      found (and where it was looked for); a suit for the adult skeleton on \
                      the child's or the other way round; a mesh bound, or blending vertices, \
                      to bones the skeleton lacks; a texture not found, not read by the game, \
                      of sides that are not powers of two or (BMP) not 8 bits a pixel; a skill \
                      moving bones the skeleton lacks or whose numbers are missing or fewer \
                      than its motions read; a CMX and its BCF beside it that hold different \
                      things (exit status 1 when any problem).\n\n\
                      With --engine NAME (darkplaces or xonotic, fte, qfusion, warfork): what \
                      that engine's loader would refuse (`refuses`), load and silently get \
                      wrong (`misreads`), or what is worth knowing (`note`), one line a rule, \
                      each naming its rule id (docs/engines.md gives each rule's source in the \
                      engine), the structure and index and the byte offset. Warfork also checks \
                      a player model (a file named tris.iqm, or --player): the animation.cfg \
                      beside it, read as Warfork reads it. Exit status 1 when the engine would \
                      refuse a file."
    )]
    Validate(ValidateArgs),
    /// Write a model in another format: glTF, or one ossa reads
    #[command(
        long_about = "Write a model in another format: glTF (.glb, .gltf) or one ossa reads \
                      (.dpm .skm .skp .skn .bmf .msh .cmx .bcf .skel .mod .dmf); the format is \
                      OUTPUT's extension or --to.\n\n\
                      Several inputs, directories (their model files) or quoted patterns (* \
                      and ? in the last part) are each written as DIR/STEM.EXT with -o DIR \
                      --to NAME; a failing input is reported, the others still convert, and \
                      the exit status is 1.\n\n\
                      Into DPM, SKM, SKP, DMF and MM2 (.skel, .mod) the model is written as \
                      those formats ask of a saver: bones no vertex uses removed (attachments, \
                      bones named tag_... and the ancestors of kept bones stay), triangles ordered for the vertex \
                      cache, vertices and then bones numbered by first use; the line says what \
                      changed. Its own format included: `ossa convert a.dpm -o b.dpm` \
                      optimises; --keep-order writes the model as loaded. The same input gives \
                      the same bones whatever the target, so an .skm and its .skp (or a .mod \
                      and its .skel) converted with the same options fit together.\n\n\
                      What the target cannot hold is refused, naming the first thing that does \
                      not fit (OSSA_ERR_UNSUPPORTED or OSSA_ERR_LIMIT); --max-influences and \
                      --bake-scale change the model so that it fits, and the line says what \
                      they changed."
    )]
    Convert(ConvertArgs),
    /// Draw a model, posed and skinned, into a PNG: one picture, a sheet of an animation's
    /// frames, or a thumbnail of each model of a directory
    #[command(
        long_about = "Draw a model, posed and skinned by ossa, into a PNG with a software \
                      rasteriser (no GPU, no window): filled with a depth buffer, lit from the \
                      camera, back faces darker, textured where its textures are found beside \
                      it. The camera frames the shown pose by itself, with the format's up axis \
                      up. The same input gives the same bytes.\n\n\
                      The pose is frame 0 (the bind or rest pose) unless --frame, --blend or \
                      --scene (with --time) says otherwise. --sheet draws a grid of frames \
                      across the scene (every scene, one row each, without --scene), each \
                      cell labelled.\n\n\
                      Several inputs, directories or quoted patterns are drawn into -o DIR as \
                      STEM.png, --thumbnail N pixels square (default 256), one worker per \
                      core; a failing input is reported, the others still drawn, and the exit \
                      status is 1."
    )]
    Render(RenderArgs),
    /// Load, pose and skinning times beside memcpy and a C baseline
    #[command(
        long_about = "Load, pose and skinning times beside memcpy and a C baseline. Without \
                      FILE: the corpus's largest models ($OSSA_CORPUS), else a built-in \
                      100k-vertex rig. A file that cannot be loaded is an error (exit status \
                      1)."
    )]
    Bench(BenchArgs),
}

/// How the input is read; for `info`, `validate` and `convert`.
#[derive(Args)]
pub struct LoadArgs {
    /// Reject what the default mode tolerates
    #[arg(long)]
    pub strict: bool,
    /// The input's format: dpm, skm, skp, sims-skn, sims-bmf, sims-cmx, sims-bcf, mm2-skel,
    /// mm2-mod, dmf, dmf-json (default: detect)
    #[arg(long, value_name = "NAME")]
    pub format: Option<String>,
    /// glTF input: sample its animations at F frames a second, 0.01 to 1000 (default: the keys'
    /// own rate where they are evenly spaced, else 30)
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    pub fps: Option<String>,
}

impl LoadArgs {
    pub fn options(&self) -> Result<LoadOptions<'static>, String> {
        let mut options = LoadOptions {
            strict: self.strict,
            ..LoadOptions::default()
        };
        if let Some(name) = &self.format {
            options.format = cli_format(name).ok_or_else(|| format!("unknown format {name}"))?;
        }
        if let Some(text) = &self.fps {
            options.sample_fps = text
                .parse::<f32>()
                .ok()
                .filter(|f| (0.01..=1000.0).contains(f))
                .ok_or_else(|| format!("--fps needs a number from 0.01 to 1000, not {text}"))?;
        }
        Ok(options)
    }
}

#[derive(Args)]
pub struct ValidateArgs {
    /// The model files
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<String>,
    /// Check against an engine's loader: darkplaces (xonotic), fte, qfusion, warfork
    #[arg(long, value_name = "NAME")]
    pub engine: Option<String>,
    /// --engine warfork: check each file as a player model (as one named tris.iqm is), with
    /// the animation.cfg beside it
    #[arg(long)]
    pub player: bool,
    /// A Sims character: the skeleton its suit and skills go on (default: FILE's own)
    #[arg(long, value_name = "FILE")]
    pub skeleton: Option<String>,
    /// A Sims character: check suit NAME (FILE's, or NAME.cmx, NAME.cmx.bcf or NAME.bcf beside
    /// FILE or in a --search directory), each skin's mesh and its texture
    #[arg(long, value_name = "NAME")]
    pub suit: Option<String>,
    /// A Sims character: check the skills of these CMX/BCF files on the skeleton, each with its
    /// numbers beside it; the files run to the next option; repeatable
    #[arg(long, value_name = "FILE", num_args = 0.., action = clap::ArgAction::Append)]
    pub skills: Option<Vec<String>>,
    /// A Sims character: another directory for suit and mesh files (repeatable)
    #[arg(long, value_name = "DIR")]
    pub search: Vec<String>,
    #[command(flatten)]
    pub load: LoadArgs,
}

impl ValidateArgs {
    /// Whether a Sims character is checked across its files.
    pub fn character(&self) -> bool {
        self.skeleton.is_some()
            || self.suit.is_some()
            || self.skills.is_some()
            || !self.search.is_empty()
    }
}

#[derive(Args)]
pub struct InfoArgs {
    /// The model file (or a Sims .cfp)
    pub file: String,
    /// Also list every frame (name and bounds) and every animation event
    #[arg(long)]
    pub frames: bool,
    /// Print the same information as one JSON object
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub load: LoadArgs,
}

#[derive(Args)]
pub struct ConvertArgs {
    /// Model files, directories or quoted patterns
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,
    /// The output file; a directory for several inputs (made if missing)
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<String>,
    /// The output format: a --format name, glb, gltf, or an extension (skn, cmx, bcf, skel,
    /// mod); default: OUTPUT's extension
    #[arg(long, value_name = "NAME")]
    pub to: Option<String>,
    /// glTF: multiply positions and translations by F (default 1)
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    pub scale: Option<String>,
    /// glTF, DPM, SKM, SKP, DMF, MM2, IQM: keep the N strongest influences of a vertex, renormalised,
    /// and say what was dropped (default 0: all; a format that holds fewer refuses the model)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub max_influences: Option<String>,
    /// DPM, SKM, SKP, DMF, MM2: write bones, vertices and triangles in the model's order, and
    /// keep bones no vertex uses (default: the optimisations the formats ask of a saver)
    #[arg(long)]
    pub keep_order: bool,
    /// Number each mesh's vertices so that those of one influence set (the same bones and
    /// weights) are contiguous, in the order the triangles first use them; triangles keep their
    /// order. ossa, and an engine that skins on the CPU, then meet long runs of vertices under
    /// one matrix (OSSA_OPTIMIZE_SKIN_ORDER)
    #[arg(long)]
    pub skin_order: bool,
    /// MM2 .skel and .mod: move the rest pose's bone rotations and scales into the vertices and
    /// frames, so that the skeleton is offsets only (the skinned mesh is unchanged)
    #[arg(long)]
    pub bake_scale: bool,
    /// IQM: write what engine NAME loads (darkplaces or xonotic, fte, qfusion, warfork) and
    /// the sidecars it reads; refuse, naming the rule, what it would not load
    #[arg(long, value_name = "NAME")]
    pub engine: Option<String>,
    /// IQM: write the sidecars beside it: NAME.iqm.framegroups from the scenes and
    /// NAME.iqm_N.skin from the input's .skin files (DarkPlaces, FTE, Xonotic; written anyway
    /// with --engine darkplaces or fte), animation.cfg with --engine qfusion or warfork
    #[arg(long)]
    pub sidecars: bool,
    /// --engine qfusion or warfork: the output is a player model (as one named tris.iqm is):
    /// animation.cfg is written beside it
    #[arg(long)]
    pub player: bool,
    /// --engine qfusion or warfork, a player model: the player config its anims come from
    /// (Warfork's layout, or the Warsow 0.5 SDK's, put in Warfork's order); default: the
    /// animation.cfg beside INPUT, else one made from the scenes
    #[arg(long, value_name = "FILE")]
    pub animation_cfg: Option<String>,
    #[command(flatten)]
    pub parts: PartsArgs,
    #[command(flatten)]
    pub load: LoadArgs,
}

#[derive(Args)]
pub struct RenderArgs {
    /// Model files, directories or quoted patterns
    #[arg(value_name = "MODEL")]
    pub inputs: Vec<String>,
    /// Draw the rig the demo builds in code instead of a file
    #[arg(long)]
    pub demo: bool,
    /// The PNG to write; a directory for several inputs (made if missing)
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<String>,
    /// The picture's size, or with --sheet each cell's (default 512x512; sheet cells 192x192)
    #[arg(long, value_name = "WxH")]
    pub size: Option<String>,
    /// Several inputs: each picture N pixels square (default 256)
    #[arg(long, value_name = "N")]
    pub thumbnail: Option<String>,
    /// three-quarter (default), front, side or top
    #[arg(long, value_name = "NAME")]
    pub view: Option<String>,
    /// Turn the camera about the up axis by DEG degrees (0 = front, 90 = the model's right side)
    #[arg(long, value_name = "DEG", allow_hyphen_values = true)]
    pub yaw: Option<String>,
    /// Raise the camera by DEG degrees (90 = from above)
    #[arg(long, value_name = "DEG", allow_hyphen_values = true)]
    pub pitch: Option<String>,
    /// The background: RRGGBB or RRGGBBAA in hex (a leading # allowed), or transparent
    #[arg(long, value_name = "COLOUR")]
    pub background: Option<String>,
    /// Draw the triangles' edges over the mesh
    #[arg(long)]
    pub wireframe: bool,
    /// Draw the skeleton over the mesh: joints as dots, lines to their parents
    #[arg(long)]
    pub bones: bool,
    /// Smooth the edges (4 samples a pixel)
    #[arg(long)]
    pub antialias: bool,
    /// Draw without textures
    #[arg(long)]
    pub no_textures: bool,
    /// Pose: the scene (animation) NAME or INDEX, at --time (default 0)
    #[arg(long, value_name = "NAME|INDEX")]
    pub scene: Option<String>,
    /// Pose: seconds into --scene
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
    pub time: Option<String>,
    /// Pose: frame N of the model
    #[arg(long, value_name = "N")]
    pub frame: Option<String>,
    /// Pose: frames F blended with weights W (at most 8), e.g. 3:0.75,4:0.25
    #[arg(long, value_name = "F:W,...")]
    pub blend: Option<String>,
    /// A grid of frames across --scene, or across every scene (one row each)
    #[arg(long)]
    pub sheet: bool,
    /// --sheet: cells a scene (default 8)
    #[arg(long, value_name = "N")]
    pub cells: Option<String>,
    #[command(flatten)]
    pub parts: PartsArgs,
    #[command(flatten)]
    pub load: LoadArgs,
}

/// The files that make one model with its input: for `convert` and `render`.
#[derive(Args)]
pub struct PartsArgs {
    /// Bind meshes waiting for a skeleton (SKM without its SKP beside it, Sims SKN/BMF, MM2
    /// .mod) to the skeleton in FILE
    #[arg(long, value_name = "FILE")]
    pub skeleton: Option<String>,
    /// Add the Sims skills in these CMX/BCF files, each CFP found beside its file; the files
    /// run to the next option; repeatable
    // Zero values accepted here so that a bare `--skills` gets this command's own message.
    #[arg(long, value_name = "FILE", num_args = 0.., action = clap::ArgAction::Append)]
    pub skills: Option<Vec<String>>,
    /// Add the scenes of these animation files (an animation-only IQM such as anim.iqm, or any
    /// model over the same bones), bones matched by name, or by number where the file names
    /// none; the files run to the next option; repeatable
    #[arg(long, value_name = "FILE", num_args = 0.., action = clap::ArgAction::Append)]
    pub anims: Option<Vec<String>>,
    /// Dress a Sims character in suit NAME: the skeleton is --skeleton's or INPUT's; the suit
    /// INPUT's, or NAME.cmx or NAME.bcf beside INPUT or in a --search directory, as is each
    /// skin's MESH.skn, MESH.bmf or MESH.msh
    #[arg(long, value_name = "NAME")]
    pub suit: Option<String>,
    /// Another directory for suit and mesh files (repeatable); a mesh's textures are looked for
    /// beside it, wherever it is found
    #[arg(long, value_name = "DIR")]
    pub search: Vec<String>,
}

#[derive(Args)]
pub struct BenchArgs {
    /// A short run: smaller warm-up and time budget per measurement
    #[arg(long)]
    pub quick: bool,
    /// Model files to measure; a word that names no file picks the default models whose name
    /// contains it
    #[arg(value_name = "FILE")]
    pub models: Vec<String>,
}

/// A format by its name in lower case, spaces as dashes ("sims-skn", "dmf-json").
pub fn cli_format(name: &str) -> Option<Format> {
    let wanted = name.to_ascii_lowercase();
    Format::ALL
        .into_iter()
        .find(|f| f.name().to_ascii_lowercase().replace(' ', "-") == wanted)
}

pub const OUTPUT_FORMATS: &str =
    "glb, gltf, dpm, skm, skp, iqm, skn, bmf, cmx, bcf, skel, mod, dmf, dmf-json";

/// A format to write: a `--format` name, `glb`, or an extension without its dot (`skn`).
pub fn output_format(name: &str) -> Option<Format> {
    let lower = name.to_ascii_lowercase();
    let format = match lower.as_str() {
        "glb" => Some(Format::Glb),
        _ => cli_format(&lower).or_else(|| Format::from_extension(&format!(".{lower}"))),
    };
    format.filter(|f| *f != Format::Auto)
}

/// Options only `convert` takes: named when another command is given one.
const CONVERT_OPTIONS: [&str; 14] = [
    "-o",
    "--output",
    "--to",
    "--scale",
    "--max-influences",
    "--keep-order",
    "--bake-scale",
    "--skeleton",
    "--skills",
    "--anims",
    "--suit",
    "--search",
    "--sidecars",
    "--animation-cfg",
];

/// The one-line message of a parse error, in the words of the rest of the command's messages
/// ("unknown option --x") rather than clap's, whose first line it is otherwise.
pub fn parse_error_message(e: &clap::Error) -> String {
    let invalid = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    match (e.kind(), invalid) {
        (ErrorKind::UnknownArgument, Some(arg)) if arg.starts_with('-') => {
            // The argument as given, without the `=value` clap keeps in it.
            let option = arg.split('=').next().unwrap_or(arg);
            if CONVERT_OPTIONS.contains(&option) {
                format!("unknown option {option} (convert's options go after `ossa convert`)")
            } else {
                format!("unknown option {option}")
            }
        }
        (ErrorKind::UnknownArgument, Some(arg)) => format!("unexpected argument {arg}"),
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_owned()
        }
    }
}
