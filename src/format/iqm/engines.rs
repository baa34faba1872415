//! What each engine's IQM loader would refuse, or load and silently get wrong, checked on a
//! file's bytes: DarkPlaces (`model_alias.c` `Mod_INTERQUAKEMODEL_Load`), FTE
//! (`engine/common/com_mesh.c` `Mod_ParseIQMMeshModel`), qfusion and Warfork
//! (`source/ref_gl/r_skm.c` `Mod_LoadSkeletalModel`, the same loader), and Warfork's player
//! models (`source/cgame/cg_pmodels.cpp`). Each rule has a stable id (`qfusion.version`), a
//! [`Kind`] and the loader function it comes from; `docs/engines.md` lists them with the
//! commits they were read at.
//!
//! The check reads the file's raw structure, not ossa's model of it: the engines read the
//! bytes, and a file ossa repairs on load (a triangle reaching into another mesh, weights
//! summing to 0) is exactly what they get wrong. A file of another format is loaded by an
//! engine only by that format's own rules, where it has a loader for it: DPM in DarkPlaces and
//! FTE, glTF in FTE's models plugin ([`Kind::Note`]); any other format is refused.

use std::fmt;
use std::path::Path;

use byteorder::{ByteOrder, LittleEndian as Le};

use super::player::{self, MIN_FPS, REQUIRED_ANIMS};
use super::read::{
    ANIM_SIZE, ARRAY_SIZE, BLEND_INDEXES, BLEND_WEIGHTS, BOUNDS_SIZE, COLOR, CUSTOM,
    EXTENSION_SIZE, FLOAT, FORMAT_NAMES, H, HEADER_SIZE, Header, MAGIC, MESH_SIZE, NORMAL,
    POSITION, TANGENT, TEXCOORD, TRIANGLE_SIZE, V1, V2, component_size,
};
use crate::error::{Error, Result};
use crate::format::{Format, LoadOptions, ceiling, detect};
use crate::io::{FileSystem, read_contained_at_most};
use crate::sidecar::os_place;

/// An engine whose IQM loader ossa knows.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// DarkPlaces, and the games on it (Xonotic).
    DarkPlaces = 1,
    /// FTE QuakeWorld, and the games on it (Nuclide).
    Fte = 2,
    /// qfusion (Warsow 2).
    Qfusion = 3,
    /// Warfork: qfusion's loader, and its player models' `animation.cfg`.
    Warfork = 4,
}

impl Engine {
    pub const ALL: [Engine; 4] = [
        Engine::DarkPlaces,
        Engine::Fte,
        Engine::Qfusion,
        Engine::Warfork,
    ];

    /// The names an engine is given on the command line.
    pub const NAMES: &'static str = "darkplaces (xonotic), fte, qfusion, warfork";

    /// `darkplaces`, `fte`, `qfusion`, `warfork`: the rule ids' prefix.
    pub fn name(self) -> &'static str {
        match self {
            Engine::DarkPlaces => "darkplaces",
            Engine::Fte => "fte",
            Engine::Qfusion => "qfusion",
            Engine::Warfork => "warfork",
        }
    }

    /// The engine's own spelling, for messages.
    pub fn title(self) -> &'static str {
        match self {
            Engine::DarkPlaces => "DarkPlaces",
            Engine::Fte => "FTE",
            Engine::Qfusion => "qfusion",
            Engine::Warfork => "Warfork",
        }
    }

    /// An engine by its name, without case: also `dp` and `xonotic` (DarkPlaces), `fteqw`,
    /// `qf`, `wf`.
    pub fn from_name(name: &str) -> Option<Engine> {
        Some(match name.to_ascii_lowercase().as_str() {
            "darkplaces" | "dp" | "xonotic" => Engine::DarkPlaces,
            "fte" | "fteqw" => Engine::Fte,
            "qfusion" | "qf" => Engine::Qfusion,
            "warfork" | "wf" => Engine::Warfork,
            _ => return None,
        })
    }

    /// The engine numbered as the C header's `ossa_engine`.
    pub fn from_u32(v: u32) -> Option<Engine> {
        Engine::ALL.into_iter().find(|e| *e as u32 == v)
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Engine {
    type Err = Error;
    fn from_str(s: &str) -> Result<Engine> {
        Engine::from_name(s).ok_or_else(|| {
            Error::invalid_argument(format!("unknown engine {s}; one of {}", Engine::NAMES))
        })
    }
}

/// What an engine does with a file that breaks a rule.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The engine does not load the file: it says so and goes on without it, stops with an
    /// error, or reads or writes outside its buffers doing it.
    Refuses = 1,
    /// The engine loads the file and gets something silently wrong.
    Misreads = 2,
    /// Worth knowing, wrong in nothing on the machines the engines run on (x86).
    Note = 3,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Refuses => "refuses",
            Kind::Misreads => "misreads",
            Kind::Note => "note",
        }
    }

    pub fn from_u32(v: u32) -> Option<Kind> {
        [Kind::Refuses, Kind::Misreads, Kind::Note]
            .into_iter()
            .find(|k| *k as u32 == v)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One rule of one engine.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// `ENGINE.rule`; the rules of qfusion's loader (`qfusion.*`) are Warfork's too.
    pub id: &'static str,
    pub kind: Kind,
    /// What the engine does, in a line.
    pub summary: &'static str,
    /// The loader's source file and function.
    pub source: &'static str,
}

const DP_LOADER: &str = "model_alias.c Mod_INTERQUAKEMODEL_Load";
const FTE_LOADER: &str = "engine/common/com_mesh.c Mod_ParseIQMMeshModel";
const QF_LOADER: &str = "source/ref_gl/r_skm.c Mod_LoadSkeletalModel";
const WF_PLAYER: &str = "source/cgame/cg_pmodels.cpp CG_ParseAnimationScript";

macro_rules! rule {
    ($id:literal, $kind:ident, $source:expr, $summary:literal) => {
        Rule {
            id: $id,
            kind: Kind::$kind,
            summary: $summary,
            source: $source,
        }
    };
}

/// Every rule, engine by engine.
pub static RULES: &[Rule] = &[
    rule!(
        "darkplaces.format",
        Refuses,
        "model_shared.c (loader table)",
        "a format DarkPlaces has no loader for"
    ),
    rule!(
        "darkplaces.dpm",
        Note,
        "model_alias.c Mod_DARKPLACESMODEL_Load",
        "a DPM (whatever its name): loaded by its magic, by DPM's rules"
    ),
    rule!(
        "darkplaces.version",
        Refuses,
        DP_LOADER,
        "version other than 1 or 2"
    ),
    rule!(
        "darkplaces.offsets",
        Refuses,
        DP_LOADER,
        "a block (or the header) ends past the file: \"has invalid size or offset information\""
    ),
    rule!(
        "darkplaces.arrays",
        Refuses,
        DP_LOADER,
        "vertices without a float x3 position or float x2 texcoord array, or animated without \
         ubyte x4 blend indexes and weights: \"is missing vertex array data\""
    ),
    rule!(
        "darkplaces.array_format",
        Misreads,
        DP_LOADER,
        "a normal, tangent or colour array in another format than DarkPlaces reads: ignored"
    ),
    rule!(
        "darkplaces.joint_parent",
        Refuses,
        DP_LOADER,
        "a joint whose parent is not before it: Host_Error"
    ),
    rule!(
        "darkplaces.poses_overflow",
        Refuses,
        DP_LOADER,
        "more poses than joints in an animated file: writes past its pose buffer"
    ),
    rule!(
        "darkplaces.poses_count",
        Misreads,
        DP_LOADER,
        "fewer poses than joints in an animated file: frames land on the wrong bones"
    ),
    rule!(
        "darkplaces.scale",
        Misreads,
        DP_LOADER,
        "joint or pose scale ignored"
    ),
    rule!(
        "darkplaces.triangle_index",
        Misreads,
        "model_shared.c Mod_ValidateElements",
        "a triangle corner past the vertices: made vertex 0"
    ),
    rule!(
        "darkplaces.blend_index",
        Misreads,
        DP_LOADER,
        "a blend index past the joints: unchecked"
    ),
    rule!(
        "darkplaces.weights_zero",
        Misreads,
        "model_alias.c Mod_Skeletal_AddBlend",
        "blend weights summing to 0: rigid on index 0 (CPU), at the origin (GPU)"
    ),
    rule!(
        "darkplaces.framerate",
        Misreads,
        "prvm_cmds.c",
        "an anim's frame rate 0 or less: the scene holds its first frame"
    ),
    rule!(
        "darkplaces.framechannels",
        Misreads,
        DP_LOADER,
        "num_framechannels differs from the channels the poses' masks set: frames read shifted"
    ),
    rule!(
        "fte.format",
        Refuses,
        "engine/common/com_mesh.c Alias_Register",
        "a format FTE has no loader for"
    ),
    rule!(
        "fte.dpm",
        Note,
        "engine/common/com_mesh.c Mod_LoadDarkPlacesModel",
        "a DPM: loaded by DPM's rules"
    ),
    rule!(
        "fte.gltf",
        Note,
        "plugins/models/gltf.c",
        "glTF: loaded by FTE's models plugin"
    ),
    rule!(
        "fte.version",
        Refuses,
        FTE_LOADER,
        "version other than 1 or 2"
    ),
    rule!(
        "fte.filesize",
        Refuses,
        FTE_LOADER,
        "the header's filesize is not the file's size"
    ),
    rule!(
        "fte.offsets",
        Refuses,
        FTE_LOADER,
        "a block FTE reads ends past the file: no offset is checked"
    ),
    rule!(
        "fte.arrays",
        Refuses,
        FTE_LOADER,
        "vertices without a position or texcoord array: \"is missing vertex array data\""
    ),
    rule!(
        "fte.weights",
        Refuses,
        FTE_LOADER,
        "meshes with joints, anims or frames but no blend indexes or weights"
    ),
    rule!(
        "fte.bones",
        Refuses,
        "engine/common/com_mesh.c Mod_ParseIQMMeshModel (MAX_BONES)",
        "more than 256 joints or poses"
    ),
    rule!(
        "fte.poses",
        Refuses,
        FTE_LOADER,
        "joints and poses disagree: both present and different, a weighted mesh without \
         joints, frames without poses"
    ),
    rule!(
        "fte.joint_parent",
        Misreads,
        FTE_LOADER,
        "a joint whose parent is not before it: made a root (v2), read unchecked (v1)"
    ),
    rule!(
        "fte.mesh_range",
        Misreads,
        FTE_LOADER,
        "a triangle using another mesh's vertices: read from the next mesh's slice, or dropped"
    ),
    rule!(
        "fte.blend_index",
        Misreads,
        "engine/common/com_mesh.c IQM_ImportArray4Bone",
        "a blend index past the joints: made 0"
    ),
    rule!(
        "fte.weights_zero",
        Misreads,
        "engine/common/com_mesh.c Mod_CleanWeights",
        "blend weights summing to 0: all on index 0"
    ),
    rule!(
        "fte.framechannels",
        Misreads,
        FTE_LOADER,
        "num_framechannels differs from the channels the poses' masks set: poses not decoded"
    ),
    rule!(
        "fte.framerate",
        Misreads,
        FTE_LOADER,
        "an anim's frame rate 0 or less: 10 fps"
    ),
    rule!(
        "fte.quaternion",
        Misreads,
        "engine/common/mathlib.c GenMatrixPosQuat4Scale",
        "a rotation not of unit length: used as it is, scaling the bone"
    ),
    rule!(
        "fte.event_anim",
        Refuses,
        FTE_LOADER,
        "an FTE_EVENT for an anim the file lacks: written outside its anim list"
    ),
    rule!(
        "fte.unaligned",
        Note,
        FTE_LOADER,
        "offsets not at a multiple of 4: read through cast pointers (fine on x86)"
    ),
    rule!(
        "qfusion.format",
        Refuses,
        "source/ref_gl/r_model.c mod_supportedformats",
        "a format other than IQM (qfusion and Warfork load IQM only)"
    ),
    rule!(
        "qfusion.version",
        Refuses,
        QF_LOADER,
        "version other than 2"
    ),
    rule!(
        "qfusion.geometry",
        Refuses,
        QF_LOADER,
        "no triangles, fewer than 3 vertices, no vertex arrays or no meshes: \"has no geometry\""
    ),
    rule!(
        "qfusion.vertex_limit",
        Refuses,
        QF_LOADER,
        "65535 vertices or more: \"has too many vertices\""
    ),
    rule!(
        "qfusion.animations",
        Refuses,
        QF_LOADER,
        "no frames or no anims: \"has no animations\""
    ),
    rule!(
        "qfusion.poses",
        Refuses,
        QF_LOADER,
        "num_joints differs from num_poses: \"has an invalid number of poses\""
    ),
    rule!(
        "qfusion.bounds",
        Refuses,
        QF_LOADER,
        "no bounds: \"has no frame bounds\""
    ),
    rule!(
        "qfusion.offsets",
        Refuses,
        QF_LOADER,
        "a block ends past the header's filesize, or poses or the filesize past the file"
    ),
    rule!(
        "qfusion.arrays",
        Refuses,
        QF_LOADER,
        "no float x3 position, float x2 texcoord, 4 byte or int blend indexes or 4 ubyte or \
         float blend weights: \"is missing vertex array data\""
    ),
    rule!(
        "qfusion.normals",
        Refuses,
        QF_LOADER,
        "no float x3 normal array: normals copied from a NULL pointer"
    ),
    rule!(
        "qfusion.joint_parent",
        Refuses,
        QF_LOADER,
        "a joint whose parent is not before it"
    ),
    rule!(
        "qfusion.scale",
        Misreads,
        QF_LOADER,
        "joint or pose scale ignored"
    ),
    rule!(
        "qfusion.joint_rotation",
        Misreads,
        "source/gameshared/q_math.c DualQuat_FromQuat3AndVector",
        "a joint rotation whose w is above 0 or not of unit length: w taken from x, y, z"
    ),
    rule!(
        "qfusion.mesh_range",
        Misreads,
        QF_LOADER,
        "a triangle using another mesh's vertices: indexes past its mesh's buffer"
    ),
    rule!(
        "qfusion.blend_index",
        Misreads,
        QF_LOADER,
        "a blend index past the joints: unchecked"
    ),
    rule!(
        "qfusion.weights_zero",
        Misreads,
        "source/ref_gl/r_skm.c Mod_SkeletalModel_AddBlend",
        "blend weights summing to 0 (as bytes): rigid on index 0"
    ),
    rule!(
        "qfusion.framechannels",
        Misreads,
        QF_LOADER,
        "num_framechannels differs from the channels the poses' masks set: frames read shifted"
    ),
    rule!(
        "warfork.player_bones",
        Refuses,
        "source/cgame/cg_pmodels.cpp CG_LoadPlayerModel",
        "a player model without joints"
    ),
    rule!(
        "warfork.animation_cfg",
        Refuses,
        "source/cgame/cg_pmodels.cpp CG_LoadPlayerModel",
        "no animation.cfg beside tris.iqm, or an empty one"
    ),
    rule!(
        "warfork.animation_cfg_unchecked",
        Note,
        "source/cgame/cg_pmodels.cpp CG_LoadPlayerModel",
        "animation.cfg not read: no file access was given"
    ),
    rule!(
        "warfork.animation_cfg_count",
        Refuses,
        WF_PLAYER,
        "fewer than 49 anims of 4 numbers: \"Not enough animations\""
    ),
    rule!(
        "warfork.animation_cfg_syntax",
        Misreads,
        WF_PLAYER,
        "a keyword without its value: the rest of the file is not read"
    ),
    rule!(
        "warfork.animation_cfg_layout",
        Misreads,
        WF_PLAYER,
        "an anim whose 4 numbers are not on one line: every anim after it shifted"
    ),
    rule!(
        "warfork.animation_cfg_frames",
        Misreads,
        WF_PLAYER,
        "an anim's frames past the model's: clamped"
    ),
    rule!(
        "warfork.animation_cfg_fps",
        Misreads,
        WF_PLAYER,
        "an anim under 10 fps: played at 10"
    ),
    rule!(
        "warfork.animation_cfg_bone",
        Misreads,
        WF_PLAYER,
        "rotationbone, rootanim or tagmask naming no bone: ignored (tagmask: its line read as anims)"
    ),
    rule!(
        "warfork.player_anims",
        Misreads,
        WF_PLAYER,
        "IQM anims animation.cfg does not play: a player model plays animation.cfg alone"
    ),
];

/// The rule of `id`.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// The rules checked for `engine`: its own, and for Warfork qfusion's loader's.
pub fn rules(engine: Engine) -> impl Iterator<Item = &'static Rule> {
    RULES.iter().filter(move |r| {
        let prefix = r.id.split('.').next().unwrap_or_default();
        prefix == engine.name() || (engine == Engine::Warfork && prefix == "qfusion")
    })
}

/// One rule a file breaks.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub rule: &'static str,
    pub kind: Kind,
    /// The byte of the file where it is, where one is.
    pub offset: Option<u64>,
    /// The line of `animation.cfg`, for the player rules.
    pub line: Option<u32>,
    /// Which structure and index, what the engine does.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(offset) = self.offset {
            write!(f, " at byte {offset:#x}")?;
        }
        Ok(())
    }
}

/// A sidecar the check may need: Warfork's `animation.cfg`.
#[derive(Clone, Copy, Debug, Default)]
pub enum Sidecar<'a> {
    /// Not looked for (no file access).
    #[default]
    NotRead,
    /// Looked for and not there.
    Missing,
    Bytes(&'a [u8]),
}

/// What the check needs besides the file.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckOptions<'a> {
    /// The file's name or path: ossa finds the format by content, then by this name's
    /// extension, and a Warfork model named `tris.iqm` is a player model.
    pub name: Option<&'a str>,
    /// Check the file as a Warfork player model whatever its name.
    pub player: bool,
    /// `animation.cfg` beside the model, for a Warfork player model.
    pub animation_cfg: Sidecar<'a>,
    /// The file's format; `Auto`: found by content, then by `name`'s extension.
    pub format: Format,
}

impl CheckOptions<'_> {
    /// Whether `engine` loads the file as a player model: Warfork, `tris.iqm` or `player`.
    pub fn is_player(&self, engine: Engine) -> bool {
        engine == Engine::Warfork && (self.player || self.name.is_some_and(is_tris_iqm))
    }
}

/// Whether the last part of `path` is `tris.iqm`, as Warfork names a player model.
pub fn is_tris_iqm(path: &str) -> bool {
    path.rsplit(['/', '\\'])
        .next()
        .is_some_and(|n| n.eq_ignore_ascii_case("tris.iqm"))
}

/// Every rule of `engine` that `data` breaks, in the order the loader meets them. A file of
/// another format than IQM gets one finding: loaded by its own rules (DPM in DarkPlaces and
/// FTE, glTF in FTE), or refused. `UnknownFormat` when ossa does not know the data's format.
pub fn check(data: &[u8], engine: Engine, options: &CheckOptions) -> Result<Vec<Finding>> {
    let format = match options.format {
        Format::Auto => detect(data, options.name),
        f => Some(f),
    };
    let format = format.ok_or_else(|| {
        Error::unknown_format(
            "the data is none of the formats ossa knows (no known magic, no known extension)",
        )
    })?;
    let mut out = Out::default();
    if format != Format::Iqm {
        other_format(format, engine, &mut out);
        return Ok(out.findings);
    }
    let Some(raw) = Raw::new(data, engine, &mut out) else {
        return Ok(out.findings);
    };
    match engine {
        Engine::DarkPlaces => darkplaces(&raw, &mut out),
        Engine::Fte => fte(&raw, &mut out),
        Engine::Qfusion => qfusion(&raw, &mut out),
        Engine::Warfork => {
            qfusion(&raw, &mut out);
            if options.is_player(engine) {
                player_rules(&raw, options.animation_cfg, &mut out);
            }
        }
    }
    Ok(out.findings)
}

/// The name of Warfork's player config beside a model.
pub const ANIMATION_CFG: &str = "animation.cfg";

/// [`check`] with the sidecars read as ossa's loader reads them: `animation.cfg` through
/// `options.io` beside `options.name`; without `io` it is not read (a Note says so).
pub fn check_with(
    data: &[u8],
    engine: Engine,
    player: bool,
    options: &LoadOptions,
) -> Result<Vec<Finding>> {
    let name = options.name.as_deref();
    let mut check_options = CheckOptions {
        name,
        player,
        animation_cfg: Sidecar::NotRead,
        format: options.format,
    };
    if !check_options.is_player(engine) {
        return check(data, engine, &check_options);
    }
    let Some(fs) = options.io else {
        return check(data, engine, &check_options);
    };
    let sidecars = crate::sidecar::Sidecars::beside(fs, name.unwrap_or_default())?;
    let path = format!("{}{ANIMATION_CFG}", sidecars.dir);
    let cfg = read_cfg(fs, &path, options, data.len())?;
    check_options.animation_cfg = match &cfg {
        Some(bytes) => Sidecar::Bytes(bytes),
        None => Sidecar::Missing,
    };
    check(data, engine, &check_options)
}

/// [`check`] of a file, its `animation.cfg` read beside it: through `options.io` when given
/// (`path` is then one of its), else from the OS filesystem inside `options.base_dir` (default:
/// the file's directory), as [`crate::Model::load_file`] reads a model and its sidecars.
pub fn check_file(
    path: &Path,
    engine: Engine,
    player: bool,
    options: &LoadOptions,
) -> Result<Vec<Finding>> {
    let max = ceiling(options.max_bytes, u64::MAX);
    if let Some(fs) = options.io {
        let name = path.to_string_lossy().replace('\\', "/");
        let data = read_contained_at_most(fs, &name, max)?;
        let mut options = options.clone();
        options.name.get_or_insert(name);
        return check_with(data.as_ref().as_ref(), engine, player, &options);
    }
    let shown = options
        .name
        .clone()
        .unwrap_or_else(|| path.to_string_lossy().into_owned());
    let place = os_place(path, options.base_dir.as_deref())?;
    let data = place.read_file(max)?;
    let check_options = CheckOptions {
        name: Some(&shown),
        player,
        animation_cfg: Sidecar::NotRead,
        format: options.format,
    };
    if !check_options.is_player(engine) {
        return check(&data, engine, &check_options);
    }
    let cfg = read_cfg(
        &place.fs,
        &format!("{}{ANIMATION_CFG}", place.dir),
        options,
        data.len(),
    )?;
    check(
        &data,
        engine,
        &CheckOptions {
            animation_cfg: match &cfg {
                Some(bytes) => Sidecar::Bytes(bytes),
                None => Sidecar::Missing,
            },
            ..check_options
        },
    )
}

/// `animation.cfg` at `path`, None when it is not there; within the load's memory limit.
fn read_cfg(
    fs: &dyn FileSystem,
    path: &str,
    options: &LoadOptions,
    model_bytes: usize,
) -> Result<Option<Vec<u8>>> {
    let room = options.max_bytes_for(model_bytes);
    match read_contained_at_most(fs, path, room) {
        Ok(data) => Ok(Some(data.as_ref().as_ref().to_vec())),
        Err(Error::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

// ---------------------------------------------------------------------------------------------
// Findings.

#[derive(Default)]
struct Out {
    findings: Vec<Finding>,
}

impl Out {
    fn add(&mut self, id: &'static str, offset: Option<u64>, message: String) {
        let kind = rule(id).map_or(Kind::Misreads, |r| r.kind);
        debug_assert!(rule(id).is_some(), "rule {id} is not in RULES");
        self.findings.push(Finding {
            rule: id,
            kind,
            offset,
            line: None,
            message,
        });
    }

    fn add_line(&mut self, id: &'static str, line: u32, message: String) {
        self.add(id, None, format!("{ANIMATION_CFG} line {line}: {message}"));
        if let Some(f) = self.findings.last_mut() {
            f.line = Some(line);
        }
    }
}

/// `1 vertex`, `3 vertices`.
fn count(n: u64, one: &str, many: &str) -> String {
    crate::error::amount(n, one, many)
}

/// A format other than IQM.
fn other_format(format: Format, engine: Engine, out: &mut Out) {
    let name = format.name();
    match (engine, format) {
        (Engine::DarkPlaces, Format::Dpm) => out.add(
            "darkplaces.dpm",
            Some(0),
            "a DPM file: DarkPlaces picks its loader by the magic (model_shared.c), whatever \
             the name, and loads it as DPM (Mod_DARKPLACESMODEL_Load); the IQM rules do not \
             apply"
                .to_owned(),
        ),
        (Engine::DarkPlaces, _) => out.add(
            "darkplaces.format",
            None,
            format!("a {name} file: DarkPlaces has no loader for {name}"),
        ),
        (Engine::Fte, Format::Dpm) => out.add(
            "fte.dpm",
            Some(0),
            "a DPM file: FTE loads it as DPM (Mod_LoadDarkPlacesModel); the IQM rules do not \
             apply"
                .to_owned(),
        ),
        (Engine::Fte, Format::Glb | Format::Gltf) => out.add(
            "fte.gltf",
            None,
            format!(
                "a {name} file: FTE loads glTF through its models plugin (plugins/models/gltf.c), \
                 not by the IQM rules"
            ),
        ),
        (Engine::Fte, _) => out.add(
            "fte.format",
            None,
            format!("a {name} file: FTE has no loader for {name}"),
        ),
        (Engine::Qfusion | Engine::Warfork, Format::Skm | Format::Skp) => out.add(
            "qfusion.format",
            Some(0),
            format!(
                "a {name} file: qfusion and Warfork load IQM only, SKM support was removed; the \
                 qfusion of Warsow 0.5 loaded SKM and SKP (Mod_LoadSkeletalModel of its r_skm.c): \
                 convert it with --engine {}",
                engine.name()
            ),
        ),
        (Engine::Qfusion | Engine::Warfork, _) => out.add(
            "qfusion.format",
            None,
            format!("a {name} file: qfusion and Warfork load IQM only"),
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// The raw layout.

/// Vertex array type names, for messages.
fn array_type(kind: u32) -> &'static str {
    match kind {
        POSITION => "position",
        TEXCOORD => "texcoord",
        NORMAL => "normal",
        TANGENT => "tangent",
        BLEND_INDEXES => "blend indexes",
        BLEND_WEIGHTS => "blend weights",
        COLOR => "color",
        k if k >= CUSTOM => "custom",
        _ => "reserved",
    }
}

fn format_name(format: u32) -> &'static str {
    FORMAT_NAMES
        .get(format as usize)
        .copied()
        .unwrap_or("unknown")
}

// The component formats, numbered as the spec does.
const BYTE: u32 = 0;
const UBYTE: u32 = 1;
const INT: u32 = 4;
const UINT: u32 = 5;

struct Array {
    index: usize,
    /// Where its record is.
    at: u64,
    kind: u32,
    format: u32,
    size: u32,
    offset: u32,
}

impl Array {
    /// Its data's length for `nv` vertices; None for a format of no known size.
    fn len(&self, nv: u32) -> Option<u64> {
        component_size(self.format).map(|c| {
            u64::from(nv)
                .saturating_mul(u64::from(self.size))
                .saturating_mul(c)
        })
    }

    /// Whether its data ends at or before `end`.
    fn within(&self, nv: u32, end: u64) -> bool {
        self.len(nv)
            .is_some_and(|l| u64::from(self.offset).saturating_add(l) <= end)
    }

    fn is(&self, kind: u32, format: u32, size: u32) -> bool {
        self.kind == kind && self.format == format && self.size == size
    }

    fn describe(&self) -> String {
        format!(
            "vertex array {} ({} in {} x{})",
            self.index,
            array_type(self.kind),
            format_name(self.format),
            self.size
        )
    }
}

struct Mesh {
    index: usize,
    at: u64,
    first_vertex: u32,
    num_vertexes: u32,
    first_triangle: u32,
    num_triangles: u32,
}

struct Joint {
    index: usize,
    at: u64,
    name: u32,
    parent: i32,
    /// x, y, z and (version 2) w.
    rotate: [f32; 4],
    scale: [f32; 3],
}

struct Pose {
    index: usize,
    at: u64,
    /// The mask with version 1's bits moved to version 2's places.
    mask: u32,
    /// The bits of its channels the engines read (0-9; version 1 has no 6).
    bits: u32,
    /// Channels in version 2's places: translation, rotation x y z w, scale.
    offset: [f32; 10],
    scale: [f32; 10],
}

impl Pose {
    /// The range channel `c` takes: offset, offset + 65535 scale where its bit is set.
    fn range(&self, c: usize) -> (f64, f64) {
        let o = f64::from(self.offset.get(c).copied().unwrap_or(0.0));
        let s = f64::from(self.scale.get(c).copied().unwrap_or(0.0));
        let top = if self.mask & 1u32.wrapping_shl(c as u32) != 0 {
            o + 65535.0 * s
        } else {
            o
        };
        (o.min(top), o.max(top))
    }

    /// FTE's tools write 1e16 in the channels of a joint an animation does not move: such a
    /// pose is the rest pose, for FTE and for ossa.
    fn wild(&self) -> bool {
        (0..10).any(|c| {
            let (lo, hi) = self.range(c);
            !(lo.abs() < 1e9 && hi.abs() < 1e9)
        })
    }
}

struct Anim {
    index: usize,
    at: u64,
    name: u32,
    first: u32,
    count: u32,
    fps: f32,
}

/// A file's header and tables, read where they lie inside the data.
struct Raw<'a> {
    data: &'a [u8],
    h: Header,
    v1: bool,
}

impl<'a> Raw<'a> {
    /// The header; None (with the engine's finding) when the data is no IQM of a version the
    /// engine reads, or shorter than a header.
    fn new(data: &'a [u8], engine: Engine, out: &mut Out) -> Option<Raw<'a>> {
        let e = engine.title();
        let version_rule = match engine {
            Engine::DarkPlaces => "darkplaces.version",
            Engine::Fte => "fte.version",
            Engine::Qfusion | Engine::Warfork => "qfusion.version",
        };
        if !data.starts_with(MAGIC) {
            out.add(
                version_rule,
                Some(0),
                format!(
                    "the file does not start with \"INTERQUAKEMODEL\\0\": {e} does not read it"
                ),
            );
            return None;
        }
        let Some(h) = Header::of(data) else {
            let id = match engine {
                Engine::DarkPlaces => "darkplaces.offsets",
                Engine::Fte => "fte.offsets",
                Engine::Qfusion | Engine::Warfork => "qfusion.offsets",
            };
            out.add(
                id,
                Some(0),
                format!(
                    "header: {} bytes, the file has {}: {e} reads past the file",
                    HEADER_SIZE,
                    data.len()
                ),
            );
            return None;
        };
        let version = h.get(H::Version);
        let accepted: &[u32] = match engine {
            Engine::DarkPlaces | Engine::Fte => &[1, 2],
            Engine::Qfusion | Engine::Warfork => &[2],
        };
        if !accepted.contains(&version) {
            let which = if accepted.len() == 2 {
                "versions 1 and 2"
            } else {
                "version 2 only"
            };
            out.add(
                version_rule,
                Some(Header::at(H::Version)),
                format!("header: version {version}; {e} loads {which}"),
            );
            return None;
        }
        Some(Raw {
            data,
            h,
            v1: version == 1,
        })
    }

    fn get(&self, f: H) -> u32 {
        self.h.get(f)
    }

    fn end(&self) -> u64 {
        self.data.len() as u64
    }

    fn u32_at(&self, at: u64) -> Option<u32> {
        let at = usize::try_from(at).ok()?;
        self.data.get(at..at.checked_add(4)?).map(Le::read_u32)
    }

    fn f32_at(&self, at: u64) -> Option<f32> {
        self.u32_at(at).map(f32::from_bits)
    }

    fn u16_at(&self, at: u64) -> Option<u16> {
        let at = usize::try_from(at).ok()?;
        self.data.get(at..at.checked_add(2)?).map(Le::read_u16)
    }

    fn joint_size(&self) -> u64 {
        if self.v1 { V1.joint } else { V2.joint }
    }

    fn pose_size(&self) -> u64 {
        if self.v1 { V1.pose } else { V2.pose }
    }

    /// The records of a table that lie whole inside the file: index and byte offset.
    fn records(&self, ofs: u32, count: u32, size: u64) -> impl Iterator<Item = (usize, u64)> {
        let end = self.end();
        (0..count as usize)
            .map(move |k| {
                (
                    k,
                    u64::from(ofs).saturating_add((k as u64).saturating_mul(size)),
                )
            })
            .take_while(move |(_, at)| at.saturating_add(size) <= end)
    }

    /// The name at `offset` of the text block, for messages; empty where there is none.
    fn name(&self, offset: u32) -> String {
        let text = self.get(H::OfsText) as usize;
        let len = self.get(H::NumText) as usize;
        let block = self
            .data
            .get(text..text.saturating_add(len).min(self.data.len()))
            .unwrap_or_default();
        let rest = block.get(offset as usize..).unwrap_or_default();
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        String::from_utf8_lossy(rest.get(..end).unwrap_or_default()).into_owned()
    }

    /// The records of a table of 32-bit fields, each made by `make` from its index, its byte
    /// offset and a reader of the field `k` bytes into it (0 past the file).
    fn table<T>(
        &self,
        ofs: H,
        num: H,
        size: u64,
        make: impl Fn(usize, u64, &dyn Fn(u64) -> u32) -> T,
    ) -> Vec<T> {
        self.records(self.get(ofs), self.get(num), size)
            .map(|(index, at)| {
                make(index, at, &|k| {
                    self.u32_at(at.saturating_add(k)).unwrap_or(0)
                })
            })
            .collect()
    }

    fn arrays(&self) -> Vec<Array> {
        self.table(
            H::OfsVertexArrays,
            H::NumVertexArrays,
            ARRAY_SIZE,
            |index, at, w| Array {
                index,
                at,
                kind: w(0),
                format: w(8),
                size: w(12),
                offset: w(16),
            },
        )
    }

    fn meshes(&self) -> Vec<Mesh> {
        self.table(H::OfsMeshes, H::NumMeshes, MESH_SIZE, |index, at, w| Mesh {
            index,
            at,
            first_vertex: w(8),
            num_vertexes: w(12),
            first_triangle: w(16),
            num_triangles: w(20),
        })
    }

    fn joints(&self) -> Vec<Joint> {
        self.table(
            H::OfsJoints,
            H::NumJoints,
            self.joint_size(),
            |index, at, w| {
                let f = |k: u64| f32::from_bits(w(k));
                let (rotate, scale) = if self.v1 {
                    ([f(20), f(24), f(28), f32::NAN], [f(32), f(36), f(40)])
                } else {
                    ([f(20), f(24), f(28), f(32)], [f(36), f(40), f(44)])
                };
                Joint {
                    index,
                    at,
                    name: w(0),
                    parent: w(4) as i32,
                    rotate,
                    scale,
                }
            },
        )
    }

    fn poses(&self) -> Vec<Pose> {
        let size = self.pose_size();
        let channels: u64 = if self.v1 { 9 } else { 10 };
        self.records(self.get(H::OfsPoses), self.get(H::NumPoses), size)
            .map(|(index, at)| {
                let stored = self.u32_at(at.saturating_add(4)).unwrap_or(0);
                let (mask, bits) = if self.v1 {
                    (
                        (stored & 0x3f) | ((stored & 0x1c0) << 1),
                        (stored & 0x1ff).count_ones(),
                    )
                } else {
                    (stored & 0x3ff, (stored & 0x3ff).count_ones())
                };
                let mut offset = [0.0f32; 10];
                let mut scale = [0.0f32; 10];
                for c in 0..channels {
                    let slot = if self.v1 && c >= 6 {
                        c.saturating_add(1)
                    } else {
                        c
                    } as usize;
                    let o = self.f32_at(at.saturating_add(8).saturating_add(c.saturating_mul(4)));
                    let s = self.f32_at(
                        at.saturating_add(8)
                            .saturating_add(channels.saturating_mul(4))
                            .saturating_add(c.saturating_mul(4)),
                    );
                    if let (Some(os), Some(ss)) = (offset.get_mut(slot), scale.get_mut(slot)) {
                        *os = o.unwrap_or(0.0);
                        *ss = s.unwrap_or(0.0);
                    }
                }
                if self.v1
                    && let Some(w) = offset.get_mut(6)
                {
                    // w is derived: it stays in [-1, 0].
                    *w = -1.0;
                }
                Pose {
                    index,
                    at,
                    mask,
                    bits,
                    offset,
                    scale,
                }
            })
            .collect()
    }

    fn anims(&self) -> Vec<Anim> {
        self.table(H::OfsAnims, H::NumAnims, ANIM_SIZE, |index, at, w| Anim {
            index,
            at,
            name: w(0),
            first: w(4),
            count: w(8),
            fps: f32::from_bits(w(12)),
        })
    }

    /// Triangle `t`'s corners and where they are.
    fn triangle(&self, t: u64) -> Option<([u32; 3], u64)> {
        let at =
            u64::from(self.get(H::OfsTriangles)).saturating_add(t.saturating_mul(TRIANGLE_SIZE));
        Some((
            [
                self.u32_at(at)?,
                self.u32_at(at.saturating_add(4))?,
                self.u32_at(at.saturating_add(8))?,
            ],
            at,
        ))
    }

    /// Component `c` of vertex `v` of an array, as stored (not normalised).
    fn value(&self, a: &Array, v: u64, c: u64) -> Option<f64> {
        let size = component_size(a.format)?;
        let at = u64::from(a.offset).saturating_add(
            v.saturating_mul(u64::from(a.size))
                .saturating_add(c)
                .saturating_mul(size),
        );
        let i = usize::try_from(at).ok()?;
        let b = self.data.get(i..i.checked_add(size as usize)?)?;
        Some(match a.format {
            BYTE => f64::from(b.first().copied().unwrap_or(0) as i8),
            UBYTE => f64::from(b.first().copied().unwrap_or(0)),
            2 => f64::from(Le::read_i16(b)),
            3 => f64::from(Le::read_u16(b)),
            INT => f64::from(Le::read_i32(b)),
            UINT => f64::from(Le::read_u32(b)),
            6 => f64::from(half(Le::read_u16(b))),
            FLOAT => f64::from(Le::read_f32(b)),
            _ => Le::read_f64(b),
        })
    }

    /// Where vertex `v` of an array starts.
    fn vertex_at(&self, a: &Array, v: u64) -> u64 {
        let size = component_size(a.format).unwrap_or(1);
        u64::from(a.offset).saturating_add(v.saturating_mul(u64::from(a.size)).saturating_mul(size))
    }

    /// The channels the poses' masks set, all of them read per frame (bits 0-9).
    fn mask_channels(&self, poses: &[Pose]) -> u64 {
        poses.iter().map(|p| u64::from(p.bits)).sum()
    }

    /// The offsets not at a multiple of 4: field and value.
    fn unaligned(&self) -> Vec<(H, &'static str, u32)> {
        self.h.unaligned()
    }
}

fn half(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let frac = f32::from(bits & 0x3ff);
    match exp {
        0 => sign * frac * (2.0f32).powi(-24),
        31 if frac == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        e => sign * (1.0 + frac / 1024.0) * (2.0f32).powi(e.saturating_sub(15)),
    }
}

/// A table: its name, its offset field, its record count and size.
struct Block {
    what: &'static str,
    field: H,
    count: u64,
    size: u64,
}

impl Block {
    fn new(what: &'static str, field: H, count: u32, size: u64) -> Block {
        Block {
            what,
            field,
            count: u64::from(count),
            size,
        }
    }

    fn end(&self, raw: &Raw) -> u64 {
        u64::from(raw.get(self.field)).saturating_add(self.count.saturating_mul(self.size))
    }
}

/// The first block ending past `limit`, as a finding of `id`.
fn past(
    raw: &Raw,
    blocks: &[Block],
    limit: u64,
    limit_name: &str,
    then: &str,
    id: &'static str,
    out: &mut Out,
) {
    if let Some(b) = blocks.iter().find(|b| b.end(raw) > limit) {
        out.add(
            id,
            Some(Header::at(b.field)),
            format!(
                "{} ({} of {} bytes at {:#x}) end at byte {}, past {limit_name} ({limit} bytes): {then}",
                b.what,
                b.count,
                b.size,
                raw.get(b.field),
                b.end(raw)
            ),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Checks shared by several engines.

/// The first joint whose parent is not before it, as a sentence that counts them all (`joint 3
/// (arm): parent 5 is not an earlier joint (1 such joint)`), with its index and where its parent
/// is stored.
fn bad_parent(raw: &Raw, joints: &[Joint]) -> Option<(String, usize, u64)> {
    let bad: Vec<&Joint> = joints
        .iter()
        .filter(|j| i64::from(j.parent) >= j.index as i64)
        .collect();
    bad.first().map(|j| {
        (
            format!(
                "joint {} ({}): parent {} is not an earlier joint ({})",
                j.index,
                raw.name(j.name),
                j.parent,
                count(bad.len() as u64, "such joint", "such joints")
            ),
            j.index,
            j.at.saturating_add(4),
        )
    })
}

/// A joint or pose whose scale is not 1, as a sentence, with where it is.
fn scaled(raw: &Raw, joints: &[Joint], poses: &[Pose]) -> Option<(String, u64)> {
    const EPS: f64 = 1e-3;
    let scale_at: u64 = if raw.v1 { 32 } else { 36 };
    let joints_scaled: Vec<&Joint> = joints
        .iter()
        .filter(|j| {
            j.scale
                .iter()
                .any(|&s| s.is_finite() && (f64::from(s) - 1.0).abs() > EPS)
        })
        .collect();
    let poses_scaled: Vec<&Pose> = poses
        .iter()
        .filter(|p| !p.wild())
        .filter(|p| {
            (7..10).any(|c| {
                let (lo, hi) = p.range(c);
                (lo - 1.0).abs() > EPS || (hi - 1.0).abs() > EPS
            })
        })
        .collect();
    if let Some(j) = joints_scaled.first() {
        let name = raw.name(j.name);
        let more = count(joints_scaled.len() as u64, "joint", "joints");
        return Some((
            format!(
                "joint {} ({name}): scale ({}, {}, {}) ({more} scaled, {} of the poses)",
                j.index,
                j.scale[0],
                j.scale[1],
                j.scale[2],
                poses_scaled.len()
            ),
            j.at.saturating_add(scale_at),
        ));
    }
    poses_scaled.first().map(|p| {
        let (lo, hi) = (7..10)
            .map(|c| p.range(c))
            .fold((f64::MAX, f64::MIN), |acc, r| {
                (acc.0.min(r.0), acc.1.max(r.1))
            });
        (
            format!(
                "pose {}: scale from {lo:.4} to {hi:.4} over the frames ({} scaled)",
                p.index,
                count(poses_scaled.len() as u64, "pose", "poses")
            ),
            p.at,
        )
    })
}

/// Triangles that use vertices outside their mesh's range.
struct Reach {
    mesh: usize,
    mesh_name: String,
    triangle: u64,
    corner: usize,
    vertex: u32,
    first_vertex: u32,
    num_vertexes: u32,
    at: u64,
    above: u64,
    below: u64,
}

fn mesh_reach(raw: &Raw, meshes: &[Mesh]) -> Option<Reach> {
    let mut found: Option<Reach> = None;
    let (mut above, mut below) = (0u64, 0u64);
    let tris = u64::from(raw.get(H::NumTriangles));
    // Meshes may claim the same triangles; a hostile file of many such meshes is read up to
    // a few times its triangles.
    let mut budget = (raw.end() / TRIANGLE_SIZE)
        .saturating_mul(4)
        .saturating_add(1 << 20);
    for m in meshes {
        let first = u64::from(m.first_triangle);
        let last = first.saturating_add(u64::from(m.num_triangles)).min(tris);
        for t in first..last {
            budget = budget.saturating_sub(1);
            if budget == 0 {
                break;
            }
            let Some((corners, at)) = raw.triangle(t) else {
                break;
            };
            for (k, &v) in corners.iter().enumerate() {
                let over = u64::from(v)
                    >= u64::from(m.first_vertex).saturating_add(u64::from(m.num_vertexes));
                let under = v < m.first_vertex;
                if !(over || under) {
                    continue;
                }
                if over {
                    above = above.saturating_add(1);
                } else {
                    below = below.saturating_add(1);
                }
                if found.is_none() {
                    found = Some(Reach {
                        mesh: m.index,
                        mesh_name: raw.name(raw.u32_at(m.at).unwrap_or(0)),
                        triangle: t,
                        corner: k,
                        vertex: v,
                        first_vertex: m.first_vertex,
                        num_vertexes: m.num_vertexes,
                        at: at.saturating_add((k as u64).saturating_mul(4)),
                        above: 0,
                        below: 0,
                    });
                }
            }
        }
    }
    found.map(|r| Reach { above, below, ..r })
}

impl Reach {
    fn head(&self) -> String {
        format!(
            "mesh {} ({}) triangle {} corner {}: vertex {}, outside the mesh's vertices {}..{} \
             ({} corners above their mesh's range, {} below)",
            self.mesh,
            self.mesh_name,
            self.triangle,
            self.corner,
            self.vertex,
            self.first_vertex,
            u64::from(self.first_vertex).saturating_add(u64::from(self.num_vertexes)),
            self.above,
            self.below
        )
    }
}

/// Blend indexes past a limit, and weights summing to 0.
#[derive(Default)]
struct BlendFacts {
    bad: Option<(u64, u64, f64, u64)>,
    bad_count: u64,
    zero: Option<(u64, u64)>,
    zero_count: u64,
}

/// `weight` turns a stored weight into what the engine sums (QF truncates floats to bytes).
fn blend_facts(
    raw: &Raw,
    indexes: &Array,
    weights: &Array,
    limit: u32,
    weight: impl Fn(&Array, f64) -> f64,
) -> BlendFacts {
    let mut f = BlendFacts::default();
    let nv = u64::from(raw.get(H::NumVertexes));
    let end = raw.end();
    if indexes.size == 0
        || weights.size == 0
        || !indexes.within(raw.get(H::NumVertexes), end)
        || !weights.within(raw.get(H::NumVertexes), end)
    {
        return f;
    }
    let slots = |a: &Array| u64::from(a.size.min(4));
    for v in 0..nv {
        for c in 0..slots(indexes) {
            let Some(i) = raw.value(indexes, v, c) else {
                break;
            };
            // A slot of weight 0 is not used; its index does not matter.
            let w = raw.value(weights, v, c).map_or(0.0, |w| weight(weights, w));
            if w != 0.0 && !(i >= 0.0 && i < f64::from(limit)) {
                f.bad_count = f.bad_count.saturating_add(1);
                if f.bad.is_none() {
                    let at = raw.vertex_at(indexes, v).saturating_add(
                        c.saturating_mul(component_size(indexes.format).unwrap_or(1)),
                    );
                    f.bad = Some((v, c, i, at));
                }
            }
        }
        let sum: f64 = (0..slots(weights))
            .map(|c| raw.value(weights, v, c).map_or(0.0, |w| weight(weights, w)))
            .sum();
        if sum == 0.0 {
            f.zero_count = f.zero_count.saturating_add(1);
            if f.zero.is_none() {
                f.zero = Some((v, raw.vertex_at(weights, v)));
            }
        }
    }
    f
}

/// How an engine's blend findings read.
struct BlendRules {
    engine: &'static str,
    index_id: &'static str,
    zero_id: &'static str,
    index_then: &'static str,
    zero_then: &'static str,
}

fn report_blends(f: &BlendFacts, limit: u32, r: &BlendRules, out: &mut Out) {
    let BlendRules {
        engine,
        index_id,
        zero_id,
        index_then,
        zero_then,
    } = r;
    if let Some((v, slot, i, at)) = f.bad {
        out.add(
            index_id,
            Some(at),
            format!(
                "vertex {v} slot {slot}: blend index {i} past the {limit} joints ({}): {engine} \
                 {index_then}",
                count(f.bad_count, "such slot", "such slots")
            ),
        );
    }
    if let Some((v, at)) = f.zero {
        out.add(
            zero_id,
            Some(at),
            format!(
                "vertex {v}: blend weights sum to 0 ({}): {engine} {zero_then}",
                count(f.zero_count, "such vertex", "such vertices")
            ),
        );
    }
}

/// num_framechannels against the channels the poses' masks set.
fn framechannels(raw: &Raw, poses: &[Pose], id: &'static str, then: &str, out: &mut Out) {
    let nf = raw.get(H::NumFrames);
    if nf == 0 || poses.is_empty() {
        return;
    }
    let stored = raw.mask_channels(poses);
    let header = u64::from(raw.get(H::NumFrameChannels));
    if stored != header {
        out.add(
            id,
            Some(Header::at(H::NumFrameChannels)),
            format!(
                "header: num_framechannels is {header}, the poses' channel masks set {stored}: {then}"
            ),
        );
    }
}

/// Anims whose frame rate is 0 or less (or not a number).
fn framerate(raw: &Raw, anims: &[Anim], id: &'static str, then: &str, out: &mut Out) {
    let bad: Vec<&Anim> = anims
        .iter()
        .filter(|a| a.fps.is_nan() || a.fps <= 0.0)
        .collect();
    if let Some(a) = bad.first() {
        out.add(
            id,
            Some(a.at.saturating_add(12)),
            format!(
                "anim {} ({}): frame rate {} ({}): {then}",
                a.index,
                raw.name(a.name),
                a.fps,
                count(bad.len() as u64, "such anim", "such anims")
            ),
        );
    }
}

/// A sentence on what an array the engine needs is missing: the arrays of its type there are.
fn missing_array(raw: &Raw, arrays: &[Array], kind: u32, wanted: &str, end: u64) -> (String, u64) {
    let nv = raw.get(H::NumVertexes);
    match arrays.iter().rfind(|a| a.kind == kind) {
        Some(a) if !a.within(nv, end) => (
            format!("{}: its data runs past the file", a.describe()),
            a.at,
        ),
        Some(a) => (format!("{}, not {wanted}", a.describe()), a.at),
        None => (
            format!("no {} array", array_type(kind)),
            Header::at(H::NumVertexArrays),
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// DarkPlaces: model_alias.c Mod_INTERQUAKEMODEL_Load.

fn darkplaces(raw: &Raw, out: &mut Out) {
    let nv = raw.get(H::NumVertexes);
    let nf = raw.get(H::NumFrames);
    let nj = raw.get(H::NumJoints);
    let np = raw.get(H::NumPoses);
    let end = raw.end();
    let mut blocks = vec![
        Block::new("joints", H::OfsJoints, nj, raw.joint_size()),
        Block::new("poses", H::OfsPoses, np, raw.pose_size()),
        Block::new("text", H::OfsText, raw.get(H::NumText), 1),
        Block::new("meshes", H::OfsMeshes, raw.get(H::NumMeshes), MESH_SIZE),
        Block::new(
            "vertex arrays",
            H::OfsVertexArrays,
            raw.get(H::NumVertexArrays),
            ARRAY_SIZE,
        ),
        Block::new(
            "triangles",
            H::OfsTriangles,
            raw.get(H::NumTriangles),
            TRIANGLE_SIZE,
        ),
    ];
    if raw.get(H::OfsAdjacency) != 0 {
        blocks.push(Block::new(
            "adjacency",
            H::OfsAdjacency,
            raw.get(H::NumTriangles),
            TRIANGLE_SIZE,
        ));
    }
    blocks.push(Block::new(
        "anims",
        H::OfsAnims,
        raw.get(H::NumAnims),
        ANIM_SIZE,
    ));
    blocks.push(Block {
        what: "frames",
        field: H::OfsFrames,
        count: u64::from(nf).saturating_mul(u64::from(raw.get(H::NumFrameChannels))),
        size: 2,
    });
    if raw.get(H::OfsBounds) != 0 {
        blocks.push(Block::new("bounds", H::OfsBounds, nf, BOUNDS_SIZE));
    }
    blocks.push(Block::new(
        "comment",
        H::OfsComment,
        raw.get(H::NumComment),
        1,
    ));
    past(
        raw,
        &blocks,
        end,
        "the end of the file",
        "DarkPlaces says \"has invalid size or offset information\" and does not load it",
        "darkplaces.offsets",
        out,
    );

    // Arrays: float and ubyte only, each whole inside the file; the last of a type is used.
    let arrays = raw.arrays();
    let usable = |a: &&Array| matches!(a.format, FLOAT | UBYTE) && a.within(nv, end);
    let find = |kind: u32, format: u32, size: u32| {
        arrays
            .iter()
            .filter(usable)
            .rfind(|a| a.is(kind, format, size))
    };
    let animated = nf > 0 || raw.get(H::NumAnims) > 0;
    let indexes = find(BLEND_INDEXES, UBYTE, 4);
    let weights = find(BLEND_WEIGHTS, UBYTE, 4);
    if nv > 0 {
        let mut needs = vec![
            (POSITION, FLOAT, 3u32, "float x3"),
            (TEXCOORD, FLOAT, 2, "float x2"),
        ];
        if animated {
            needs.push((BLEND_INDEXES, UBYTE, 4, "ubyte x4"));
            needs.push((BLEND_WEIGHTS, UBYTE, 4, "ubyte x4"));
        }
        if let Some(&(kind, _, _, wanted)) =
            needs.iter().find(|(k, f, s, _)| find(*k, *f, *s).is_none())
        {
            let (what, at) = missing_array(raw, &arrays, kind, wanted, end);
            let why = if matches!(kind, BLEND_INDEXES | BLEND_WEIGHTS) {
                " (the file has frames or anims)"
            } else {
                ""
            };
            out.add(
                "darkplaces.arrays",
                Some(at),
                format!(
                    "{what}{why}: DarkPlaces reads float and ubyte arrays only, says \"is missing \
                     vertex array data\" and does not load it"
                ),
            );
        }
        for (kind, ok, then) in [
            (
                NORMAL,
                &[(FLOAT, 3u32)][..],
                "computes its own normals from the triangles",
            ),
            (TANGENT, &[(FLOAT, 4)][..], "computes its own tangents"),
            (
                COLOR,
                &[(FLOAT, 4), (UBYTE, 4)][..],
                "draws no vertex colours",
            ),
        ] {
            let read = ok.iter().any(|&(f, s)| find(kind, f, s).is_some());
            let other = arrays.iter().rfind(|a| a.kind == kind);
            if let (false, Some(a)) = (read, other) {
                let why = if a.within(nv, end) || !matches!(a.format, FLOAT | UBYTE) {
                    "DarkPlaces does not read that format"
                } else {
                    "its data runs past the file"
                };
                out.add(
                    "darkplaces.array_format",
                    Some(a.at),
                    format!("{}: {why}, ignores it and {then}", a.describe()),
                );
            }
        }
    }

    let joints = raw.joints();
    if let Some((what, j, at)) = bad_parent(raw, &joints) {
        out.add(
            "darkplaces.joint_parent",
            Some(at),
            format!("{what}: DarkPlaces stops with Host_Error \"bone[{j}].parent >= {j}\""),
        );
    }
    if nf > 0 && np > nj {
        out.add(
            "darkplaces.poses_overflow",
            Some(Header::at(H::NumPoses)),
            format!(
                "header: {np} poses for {nj} joints and {nf} frames: DarkPlaces keeps {nj} poses \
                 a frame and decodes {np}, writing past its pose buffer"
            ),
        );
    } else if nf > 0 && np < nj {
        out.add(
            "darkplaces.poses_count",
            Some(Header::at(H::NumPoses)),
            format!(
                "header: {np} poses for {nj} joints and {nf} frames: DarkPlaces decodes {np} \
                 poses a frame into frames of {nj}: every frame after the first lands shifted, \
                 and the last joints are not set"
            ),
        );
    }
    let poses = raw.poses();
    if let Some((what, at)) = scaled(raw, &joints, &poses) {
        out.add(
            "darkplaces.scale",
            Some(at),
            format!("{what}: DarkPlaces ignores scale"),
        );
    }
    let tris = u64::from(raw.get(H::NumTriangles));
    let bad: Vec<(u64, usize, u32, u64)> = (0..tris)
        .map_while(|t| raw.triangle(t).map(|c| (t, c)))
        .flat_map(|(t, (c, at))| {
            c.into_iter()
                .enumerate()
                .filter(|(_, v)| *v >= nv)
                .map(move |(k, v)| (t, k, v, at.saturating_add((k as u64).saturating_mul(4))))
                .collect::<Vec<_>>()
        })
        .collect();
    if let Some(&(t, k, v, at)) = bad.first() {
        out.add(
            "darkplaces.triangle_index",
            Some(at),
            format!(
                "triangle {t} corner {k}: vertex {v} past the file's {nv} ({}): DarkPlaces makes \
                 it vertex 0 with a warning",
                count(bad.len() as u64, "such corner", "such corners")
            ),
        );
    }
    if let (Some(i), Some(w)) = (indexes, weights) {
        let f = blend_facts(raw, i, w, nj, |_, w| w);
        report_blends(
            &f,
            nj,
            &BlendRules {
                engine: "DarkPlaces",
                index_id: "darkplaces.blend_index",
                zero_id: "darkplaces.weights_zero",
                index_then: "does not check it and reads whatever lies past its bone matrices",
                zero_then: "skins them rigidly on their first index on the CPU and puts them \
                            at the origin on the GPU",
            },
            out,
        );
    }
    framerate(
        raw,
        &raw.anims(),
        "darkplaces.framerate",
        "DarkPlaces keeps it and the scene holds its first frame",
        out,
    );
    framechannels(
        raw,
        &poses,
        "darkplaces.framechannels",
        "DarkPlaces reads the masks' channels one after the other, so its frames are not the \
         file's",
        out,
    );
}

// ---------------------------------------------------------------------------------------------
// FTE: engine/common/com_mesh.c Mod_ParseIQMMeshModel.

fn fte(raw: &Raw, out: &mut Out) {
    let nv = raw.get(H::NumVertexes);
    let nm = raw.get(H::NumMeshes);
    let nf = raw.get(H::NumFrames);
    let na = raw.get(H::NumAnims);
    let nj = raw.get(H::NumJoints);
    let np = raw.get(H::NumPoses);
    let end = raw.end();
    let filesize = raw.get(H::Filesize);
    if u64::from(filesize) != end {
        out.add(
            "fte.filesize",
            Some(Header::at(H::Filesize)),
            format!(
                "header: filesize {filesize}, the file has {end} bytes: FTE says \"size ({filesize} \
                 != {end})\" and does not load it"
            ),
        );
    }
    let arrays = raw.arrays();
    // The last array of each type is used, in any format; one at offset 0 counts as none.
    let last = |kind: u32| {
        arrays
            .iter()
            .rfind(|a| a.kind == kind && (kind != TANGENT || a.is(TANGENT, FLOAT, 4)))
            .filter(|a| a.offset != 0)
    };
    let position = last(POSITION);
    let texcoord = last(TEXCOORD);
    let indexes = last(BLEND_INDEXES);
    let weights = last(BLEND_WEIGHTS);
    let noweights = nm == 0 || indexes.is_none() || weights.is_none();
    let stored_frames = raw
        .mask_channels(&raw.poses())
        .saturating_mul(u64::from(nf));
    let mut blocks = vec![
        Block::new(
            "vertex arrays",
            H::OfsVertexArrays,
            raw.get(H::NumVertexArrays),
            ARRAY_SIZE,
        ),
        Block::new("text", H::OfsText, raw.get(H::NumText), 1),
        Block::new("meshes", H::OfsMeshes, nm, MESH_SIZE),
        Block::new(
            "triangles",
            H::OfsTriangles,
            raw.get(H::NumTriangles),
            TRIANGLE_SIZE,
        ),
        Block::new("joints", H::OfsJoints, nj, raw.joint_size()),
        Block::new("poses", H::OfsPoses, np, raw.pose_size()),
        Block::new("anims", H::OfsAnims, na, ANIM_SIZE),
        Block {
            what: "frames",
            field: H::OfsFrames,
            count: stored_frames,
            size: 2,
        },
    ];
    if raw.get(H::OfsBounds) != 0 {
        blocks.push(Block::new("bounds", H::OfsBounds, nf, BOUNDS_SIZE));
    }
    let before = out.findings.len();
    past(
        raw,
        &blocks,
        end,
        "the end of the file",
        "FTE checks no offset and reads past its buffer",
        "fte.offsets",
        out,
    );
    if out.findings.len() == before {
        let used = [position, texcoord, last(NORMAL), last(TANGENT), last(COLOR)]
            .into_iter()
            .chain(if noweights {
                [None, None]
            } else {
                [indexes, weights]
            });
        if let Some(a) = used
            .flatten()
            .find(|a| component_size(a.format).is_some() && !a.within(nv, end))
        {
            out.add(
                "fte.offsets",
                Some(a.at),
                format!(
                    "{}: its data ends past the file: FTE checks no offset and reads past its \
                     buffer",
                    a.describe()
                ),
            );
        }
    }
    if nv > 0 && (position.is_none() || texcoord.is_none()) {
        let kind = if position.is_none() {
            POSITION
        } else {
            TEXCOORD
        };
        let (what, at) = match arrays.iter().rfind(|a| a.kind == kind) {
            Some(a) => (format!("{} has its data at offset 0", a.describe()), a.at),
            None => (
                format!("no {} array", array_type(kind)),
                Header::at(H::NumVertexArrays),
            ),
        };
        out.add(
            "fte.arrays",
            Some(at),
            format!(
                "{what} for {nv} vertices: FTE says \"is missing vertex array data\" and does not \
                 load it"
            ),
        );
    }
    if nm > 0 && noweights && (nf > 0 || na > 0 || nj > 0) {
        let missing = if indexes.is_none() {
            "blend indexes"
        } else {
            "blend weights"
        };
        out.add(
            "fte.weights",
            Some(Header::at(H::NumVertexArrays)),
            format!(
                "no {missing} array, with {} and {}: FTE says \"animated IQM lacks bone weights\" \
                 and does not load it",
                count(u64::from(nj), "joint", "joints"),
                count(u64::from(nf), "frame", "frames")
            ),
        );
    }
    if nj > 256 || np > 256 {
        let (what, n, field) = if nj > 256 {
            ("joints", nj, H::NumJoints)
        } else {
            ("poses", np, H::NumPoses)
        };
        out.add(
            "fte.bones",
            Some(Header::at(field)),
            format!("header: {n} {what}: FTE loads at most 256 (MAX_BONES) and refuses the file"),
        );
    }
    if nj > 0 && np > 0 && nj != np {
        out.add(
            "fte.poses",
            Some(Header::at(H::NumPoses)),
            format!("header: {np} poses for {nj} joints: FTE says \"mismatched joints\" and does not load it"),
        );
    } else if nm > 0 && !noweights && nj == 0 {
        out.add(
            "fte.poses",
            Some(Header::at(H::NumJoints)),
            "header: weighted meshes and no joints: FTE says \"mesh IQM has no joints\" and does \
             not load it"
                .to_owned(),
        );
    } else if nf > 0 && np == 0 {
        out.add(
            "fte.poses",
            Some(Header::at(H::NumPoses)),
            format!("header: {nf} frames and no poses: FTE says \"animated IQM has no poses\" and does not load it"),
        );
    }

    let joints = raw.joints();
    if let Some((what, _, at)) = bad_parent(raw, &joints) {
        let then = if raw.v1 {
            "FTE does not check it (version 1) and builds the joint on a matrix not yet made"
        } else {
            "FTE makes it a root without a word"
        };
        out.add("fte.joint_parent", Some(at), format!("{what}: {then}"));
    }
    let meshes = raw.meshes();
    if let Some(r) = mesh_reach(raw, &meshes) {
        out.add(
            "fte.mesh_range",
            Some(r.at),
            format!(
                "{}: FTE counts a mesh's indices from its first vertex, so one above the range \
                 reads the next mesh's vertices, and a triangle with one below is dropped",
                r.head()
            ),
        );
    }
    if let (false, Some(i), Some(w)) = (noweights, indexes, weights) {
        let limit = nj.min(256);
        // FTE reads weights as floats, bytes and shorts made 0..1.
        let f = blend_facts(raw, i, w, limit, |_, w| w);
        report_blends(
            &f,
            limit,
            &BlendRules {
                engine: "FTE",
                index_id: "fte.blend_index",
                zero_id: "fte.weights_zero",
                index_then: "makes it index 0 (\"Invalid bone indexes\")",
                zero_then: "puts all the weight on their first index",
            },
            out,
        );
    }
    let poses = raw.poses();
    framechannels(
        raw,
        &poses,
        "fte.framechannels",
        if raw.v1 {
            "FTE reads the masks' channels one after the other and warns afterwards"
        } else {
            "FTE warns and does not decode the poses: every frame is the rest pose"
        },
        out,
    );
    framerate(
        raw,
        &raw.anims(),
        "fte.framerate",
        "FTE plays it at 10 frames a second",
        out,
    );
    fte_quaternions(raw, &joints, &poses, out);
    fte_events(raw, out);
    let odd = raw.unaligned();
    if let Some((field, _, _)) = odd.first() {
        let list: Vec<String> = odd
            .iter()
            .map(|(_, what, v)| format!("{what} at {v:#x}"))
            .collect();
        out.add(
            "fte.unaligned",
            Some(Header::at(*field)),
            format!(
                "header: offsets not at a multiple of 4 ({}): FTE reads the tables through cast \
                 pointers, which x86 allows; a CPU that needs aligned reads faults",
                list.join(", ")
            ),
        );
    }
}

/// FTE builds matrices from the stored rotations as they are: one not of unit length scales
/// (or shrinks) its bone.
fn fte_quaternions(raw: &Raw, joints: &[Joint], poses: &[Pose], out: &mut Out) {
    const EPS: f64 = 1e-3;
    let len = |q: [f64; 4]| q.iter().map(|c| c * c).sum::<f64>().sqrt();
    if !raw.v1
        && let Some(j) = joints.iter().find(|j| {
            let l = len(j.rotate.map(f64::from));
            l.is_finite() && (l - 1.0).abs() > EPS
        })
    {
        out.add(
            "fte.quaternion",
            Some(j.at.saturating_add(20)),
            format!(
                "joint {} ({}): rotation {:?} has length {:.4}: FTE uses it as it is, scaling the \
                 bone",
                j.index,
                raw.name(j.name),
                j.rotate,
                len(j.rotate.map(f64::from))
            ),
        );
        return;
    }
    let nf = u64::from(raw.get(H::NumFrames));
    let nfc = u64::from(raw.get(H::NumFrameChannels));
    if raw.v1 || poses.is_empty() || raw.mask_channels(poses) != nfc {
        return;
    }
    let base = u64::from(raw.get(H::OfsFrames));
    // Frames without channels are all alike: one is enough.
    let frames = if nfc == 0 { nf.min(1) } else { nf };
    for f in 0..frames {
        let mut next = base.saturating_add(f.saturating_mul(nfc).saturating_mul(2));
        for p in poses {
            let mut v = p.offset.map(f64::from);
            for (c, x) in v.iter_mut().enumerate() {
                if p.mask & 1u32.wrapping_shl(c as u32) != 0 {
                    let Some(raw_value) = raw.u16_at(next) else {
                        return;
                    };
                    next = next.saturating_add(2);
                    *x += f64::from(raw_value) * f64::from(p.scale.get(c).copied().unwrap_or(0.0));
                }
            }
            if p.wild() {
                continue;
            }
            let l = len([v[3], v[4], v[5], v[6]]);
            if l.is_finite() && (l - 1.0).abs() > EPS {
                out.add(
                    "fte.quaternion",
                    Some(p.at.saturating_add(20)),
                    format!(
                        "frame {f} pose {}: rotation of length {l:.4}: FTE uses it as it is, \
                         scaling the bone",
                        p.index
                    ),
                );
                return;
            }
        }
    }
}

/// FTE_EVENT records name their anim by index, which FTE does not check (`IQM_FindExtension`
/// walks the list as FTE does).
fn fte_events(raw: &Raw, out: &mut Out) {
    let na = raw.get(H::NumAnims);
    let end = raw.end();
    let num_text = raw.get(H::NumText);
    let mut at = u64::from(raw.get(H::OfsExtensions));
    for _ in 0..raw.get(H::NumExtensions) {
        if at.saturating_add(EXTENSION_SIZE) > end {
            return;
        }
        let w = |k: u64| raw.u32_at(at.saturating_add(k)).unwrap_or(0);
        let (name, size, ofs, next) = (w(0), w(4), w(8), w(12));
        if name > num_text || u64::from(ofs).saturating_add(u64::from(size)) > end {
            return;
        }
        if raw.name(name).eq_ignore_ascii_case("FTE_EVENT") && size.is_multiple_of(16) {
            for k in 0..u64::from(size / 16) {
                let rec = u64::from(ofs).saturating_add(k.saturating_mul(16));
                let anim = raw.u32_at(rec).unwrap_or(0);
                if anim >= na {
                    out.add(
                        "fte.event_anim",
                        Some(rec),
                        format!(
                            "FTE_EVENT {k}: anim {anim}, and the file has {na}: FTE links the \
                             event into an anim past its list, writing outside it"
                        ),
                    );
                    return;
                }
            }
            return;
        }
        at = u64::from(next);
    }
}

// ---------------------------------------------------------------------------------------------
// qfusion and Warfork: source/ref_gl/r_skm.c Mod_LoadSkeletalModel.

fn qfusion(raw: &Raw, out: &mut Out) {
    let nv = raw.get(H::NumVertexes);
    let nt = raw.get(H::NumTriangles);
    let nva = raw.get(H::NumVertexArrays);
    let nm = raw.get(H::NumMeshes);
    let nf = raw.get(H::NumFrames);
    let na = raw.get(H::NumAnims);
    let nj = raw.get(H::NumJoints);
    let np = raw.get(H::NumPoses);
    let end = raw.end();
    const QF: &str = "qfusion and Warfork";
    if nt < 1 || nv < 3 || nva < 1 || nm < 1 {
        let (what, field) = if nm < 1 {
            ("no meshes".to_owned(), H::NumMeshes)
        } else if nt < 1 {
            ("no triangles".to_owned(), H::NumTriangles)
        } else if nv < 3 {
            (count(u64::from(nv), "vertex", "vertices"), H::NumVertexes)
        } else {
            ("no vertex arrays".to_owned(), H::NumVertexArrays)
        };
        out.add(
            "qfusion.geometry",
            Some(Header::at(field)),
            format!("header: {what}: {QF} say \"has no geometry\" and do not load it"),
        );
    }
    if nv >= 65535 {
        out.add(
            "qfusion.vertex_limit",
            Some(Header::at(H::NumVertexes)),
            format!(
                "header: {nv} vertices: {QF} load fewer than 65535 (\"has too many vertices\")"
            ),
        );
    }
    if nf < 1 || na < 1 {
        let (what, field) = if nf < 1 {
            ("no frames", H::NumFrames)
        } else {
            ("no anims", H::NumAnims)
        };
        out.add(
            "qfusion.animations",
            Some(Header::at(field)),
            format!("header: {what}: {QF} say \"has no animations\" and do not load it (a static model needs its bind pose as a one-frame anim)"),
        );
    }
    if nj != np {
        out.add(
            "qfusion.poses",
            Some(Header::at(H::NumPoses)),
            format!(
                "header: {np} poses for {nj} joints: {QF} say \"has an invalid number of poses\" \
                 and do not load it"
            ),
        );
    }
    if raw.get(H::OfsBounds) == 0 {
        out.add(
            "qfusion.bounds",
            Some(Header::at(H::OfsBounds)),
            format!("header: no bounds (ofs_bounds 0): {QF} say \"has no frame bounds\" and do not load it"),
        );
    }
    let filesize = u64::from(raw.get(H::Filesize));
    let before = out.findings.len();
    if filesize > end {
        out.add(
            "qfusion.offsets",
            Some(Header::at(H::Filesize)),
            format!(
                "header: filesize {filesize}, the file has {end} bytes: {QF} check the blocks \
                 against the header's size and read past the file"
            ),
        );
    } else {
        let blocks = [
            Block::new("text", H::OfsText, raw.get(H::NumText), 1),
            Block::new("vertex arrays", H::OfsVertexArrays, nva, ARRAY_SIZE),
            Block::new("joints", H::OfsJoints, nj, V2.joint),
            Block {
                what: "frames",
                field: H::OfsFrames,
                count: u64::from(nf).saturating_mul(u64::from(raw.get(H::NumFrameChannels))),
                size: 2,
            },
            Block::new("triangles", H::OfsTriangles, nt, TRIANGLE_SIZE),
            Block::new("meshes", H::OfsMeshes, nm, MESH_SIZE),
            Block::new("bounds", H::OfsBounds, nf, BOUNDS_SIZE),
        ];
        past(
            raw,
            &blocks,
            filesize,
            "the header's filesize",
            "qfusion and Warfork say \"has invalid size or offset information\" and do not load it",
            "qfusion.offsets",
            out,
        );
    }
    if out.findings.len() == before {
        past(
            raw,
            &[Block::new("poses", H::OfsPoses, np, V2.pose)],
            end,
            "the end of the file",
            "qfusion and Warfork do not check the poses and read past the file",
            "qfusion.offsets",
            out,
        );
    }

    // Arrays: float, int, uint, byte and ubyte formats, each whole inside the header's size;
    // the last of a type is used.
    let arrays = raw.arrays();
    let limit = filesize.min(end);
    let usable =
        |a: &&Array| matches!(a.format, FLOAT | INT | UINT | BYTE | UBYTE) && a.within(nv, limit);
    let find = |kind: u32, ok: &[(u32, u32)]| {
        arrays
            .iter()
            .filter(usable)
            .rfind(|a| ok.iter().any(|&(f, s)| a.is(kind, f, s)))
    };
    let position = find(POSITION, &[(FLOAT, 3)]);
    let texcoord = find(TEXCOORD, &[(FLOAT, 2)]);
    let indexes = find(BLEND_INDEXES, &[(BYTE, 4), (UBYTE, 4), (INT, 4), (UINT, 4)]);
    let weights = find(BLEND_WEIGHTS, &[(UBYTE, 4), (FLOAT, 4)]);
    let needs = [
        (POSITION, position.is_none(), "float x3"),
        (TEXCOORD, texcoord.is_none(), "float x2"),
        (
            BLEND_INDEXES,
            indexes.is_none(),
            "4 byte, ubyte, int or uint",
        ),
        (BLEND_WEIGHTS, weights.is_none(), "4 ubyte or float"),
    ];
    if let Some(&(kind, _, wanted)) = needs.iter().find(|n| n.1) {
        let (what, at) = missing_array(raw, &arrays, kind, wanted, limit);
        out.add(
            "qfusion.arrays",
            Some(at),
            format!("{what}: {QF} say \"is missing vertex array data\" and do not load it"),
        );
    }
    if find(NORMAL, &[(FLOAT, 3)]).is_none() {
        let (what, at) = missing_array(raw, &arrays, NORMAL, "float x3", limit);
        out.add(
            "qfusion.normals",
            Some(at),
            format!(
                "{what}: {QF} copy the normals from a NULL pointer without checking, and crash"
            ),
        );
    }

    let joints = raw.joints();
    if let Some((what, j, at)) = bad_parent(raw, &joints) {
        out.add(
            "qfusion.joint_parent",
            Some(at),
            format!("{what}: {QF} say \"bone[{j}].parent >= {j}\" and do not load it"),
        );
    }
    let poses = raw.poses();
    if let Some((what, at)) = scaled(raw, &joints, &poses) {
        out.add(
            "qfusion.scale",
            Some(at),
            format!("{what}: {QF} ignore scale"),
        );
    }
    let turned: Vec<&Joint> = joints.iter().filter(|j| turned_by_w(j.rotate)).collect();
    if let Some(j) = turned.first() {
        out.add(
            "qfusion.joint_rotation",
            Some(j.at.saturating_add(32)),
            format!(
                "joint {} ({}): rotation {:?} ({}): {QF} take w as -sqrt(1 - x^2 - y^2 - z^2), \
                 which is another rotation unless w <= 0 and the rotation is of unit length",
                j.index,
                raw.name(j.name),
                j.rotate,
                count(turned.len() as u64, "such joint", "such joints")
            ),
        );
    }
    let meshes = raw.meshes();
    if let Some(r) = mesh_reach(raw, &meshes) {
        out.add(
            "qfusion.mesh_range",
            Some(r.at),
            format!(
                "{}: {QF} count a mesh's indices from its first vertex into a buffer of the \
                 mesh's own vertices, and read past it",
                r.head()
            ),
        );
    }
    if let (Some(i), Some(w)) = (indexes, weights) {
        // Float weights become bytes by truncation.
        let f = blend_facts(raw, i, w, nj, |a, w| {
            if a.format == FLOAT {
                (w * 255.0).clamp(0.0, 255.0).trunc()
            } else {
                w
            }
        });
        report_blends(
            &f,
            nj,
            &BlendRules {
                engine: QF,
                index_id: "qfusion.blend_index",
                zero_id: "qfusion.weights_zero",
                index_then: "do not check it and read whatever lies past the bone matrices",
                zero_then: "skin them rigidly on their first index",
            },
            out,
        );
    }
    framechannels(
        raw,
        &poses,
        "qfusion.framechannels",
        "qfusion and Warfork read the masks' channels one after the other, so their frames are \
         not the file's",
        out,
    );
}

/// Whether qfusion's reading of a joint's rotation, (x, y, z) with w = -sqrt(1 - x^2 - y^2 -
/// z^2), turns the bone by more than a milliradian from the stored rotation, or is not of unit
/// length (x, y, z longer than 1).
fn turned_by_w(rotate: [f32; 4]) -> bool {
    let [x, y, z, w] = rotate.map(f64::from);
    let stored = (x * x + y * y + z * z + w * w).sqrt();
    if !(stored.is_finite() && stored > 0.0) {
        return false;
    }
    let xyz = x * x + y * y + z * z;
    if xyz > 1.0 + 1e-3 {
        return true;
    }
    let derived = -(1.0 - xyz).max(0.0).sqrt();
    let read = (xyz + derived * derived).sqrt();
    let dot = ((x * x + y * y + z * z + w * derived) / (stored * read))
        .abs()
        .min(1.0);
    2.0 * dot.acos() > 1e-3
}

/// Warfork's player model rules: `tris.iqm` with `animation.cfg` beside it.
fn player_rules(raw: &Raw, cfg: Sidecar, out: &mut Out) {
    let joints = raw.joints();
    if joints.is_empty() {
        out.add(
            "warfork.player_bones",
            Some(Header::at(H::NumJoints)),
            "header: no joints: Warfork takes only skeletal models as player models".to_owned(),
        );
    }
    let text = match cfg {
        Sidecar::NotRead => {
            out.add(
                "warfork.animation_cfg_unchecked",
                None,
                format!(
                    "{ANIMATION_CFG} beside the player model was not read (no file access was \
                     given): its rules are not checked"
                ),
            );
            return;
        }
        Sidecar::Missing => {
            out.add(
                "warfork.animation_cfg",
                None,
                format!(
                    "no {ANIMATION_CFG} beside the player model: Warfork says \"Couldn't find \
                     animation script\" and drops the model"
                ),
            );
            return;
        }
        Sidecar::Bytes([]) => {
            out.add(
                "warfork.animation_cfg",
                None,
                format!("{ANIMATION_CFG} is empty: Warfork says \"Couldn't load animation script\" and drops the model"),
            );
            return;
        }
        Sidecar::Bytes(b) => b,
    };
    let bones: Vec<String> = joints.iter().map(|j| raw.name(j.name)).collect();
    let read = player::read_as_warfork(text, &bones);
    if let Some((line, why)) = &read.stopped {
        out.add_line(
            "warfork.animation_cfg_syntax",
            *line,
            format!("{why}: Warfork stops reading the file there"),
        );
    }
    if read.anims.len() < REQUIRED_ANIMS {
        out.add_line(
            "warfork.animation_cfg_count",
            read.last_line.max(1),
            format!(
                "{} of 4 numbers read, Warfork needs {REQUIRED_ANIMS}: it says \"Not enough \
                 animations({})\" and drops the model",
                count(read.anims.len() as u64, "anim", "anims"),
                read.anims.len().saturating_add(1)
            ),
        );
    }
    let names = |k: usize| player::WARFORK_ANIMS.get(k).copied().unwrap_or("?");
    if let Some((k, a)) = read
        .anims
        .iter()
        .enumerate()
        .find(|(_, a)| a.lines.iter().any(|&l| l != a.lines[0]))
    {
        let first = a.lines.iter().min().copied().unwrap_or(0);
        let last = a.lines.iter().max().copied().unwrap_or(0);
        out.add_line(
            "warfork.animation_cfg_layout",
            last,
            format!(
                "anim {} ({}) takes its numbers {:?} from lines {first} to {last}: Warfork reads \
                 4 numbers an anim wherever they are, so this anim and every one after it are \
                 shifted (a line of 3 numbers and an `FPS` line are the Warsow 0.5 SDK's layout)",
                k.saturating_add(1),
                names(k),
                a.values
            ),
        );
    }
    let nf = i64::from(raw.get(H::NumFrames));
    let outside: Vec<(usize, &player::ReadAnim)> = read
        .anims
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            a.values
                .iter()
                .take(2)
                .any(|&v| i64::from(v) < 0 || i64::from(v) >= nf)
        })
        .collect();
    if let Some((k, a)) = outside.first() {
        out.add_line(
            "warfork.animation_cfg_frames",
            a.lines[0],
            format!(
                "anim {} ({}): frames {} to {}, the model has {nf} ({}): Warfork clamps them to \
                 0..{}",
                k.saturating_add(1),
                names(*k),
                a.values[0],
                a.values[1],
                count(outside.len() as u64, "such anim", "such anims"),
                nf.saturating_sub(1).max(0)
            ),
        );
    }
    let slow: Vec<(usize, &player::ReadAnim)> = read
        .anims
        .iter()
        .enumerate()
        .filter(|(_, a)| a.values[3] < MIN_FPS)
        .collect();
    if let Some((k, a)) = slow.first() {
        out.add_line(
            "warfork.animation_cfg_fps",
            a.lines[3],
            format!(
                "anim {} ({}): {} frames a second ({}): Warfork plays it at {MIN_FPS}",
                k.saturating_add(1),
                names(*k),
                a.values[3],
                count(slow.len() as u64, "such anim", "such anims")
            ),
        );
    }
    if let Some((line, keyword, bone)) = read.unknown_bones.first() {
        let then = if keyword.eq_ignore_ascii_case("tagmask") {
            "Warfork skips the tag, and reads the rest of the line as anim numbers"
        } else {
            "Warfork ignores the line"
        };
        out.add_line(
            "warfork.animation_cfg_bone",
            *line,
            format!(
                "`{keyword}` names bone \"{bone}\", which the model lacks (bones are matched \
                 without case; {} such lines): {then}",
                read.unknown_bones.len()
            ),
        );
    }
    let played: Vec<(i64, i64)> = read
        .anims
        .iter()
        .map(|a| (i64::from(a.values[0]), i64::from(a.values[1])))
        .collect();
    let unplayed: Vec<Anim> = raw
        .anims()
        .into_iter()
        .filter(|a| {
            let first = i64::from(a.first);
            let last = first.saturating_add(i64::from(a.count)).saturating_sub(1);
            a.count > 0 && !played.contains(&(first, last))
        })
        .collect();
    if let Some(a) = unplayed.first() {
        out.add(
            "warfork.player_anims",
            Some(a.at),
            format!(
                "anim {} ({}): frames {} to {} are no anim of {ANIMATION_CFG} ({} of {}): \
                 Warfork plays a player model by {ANIMATION_CFG} alone and never reads its IQM \
                 anims",
                a.index,
                raw.name(a.name),
                a.first,
                i64::from(a.first)
                    .saturating_add(i64::from(a.count))
                    .saturating_sub(1),
                unplayed.len(),
                count(u64::from(raw.get(H::NumAnims)), "anim", "anims")
            ),
        );
    }
}
