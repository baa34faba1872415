//! What the JavaScript package does, in plain Rust: a model made from the files given (loaded,
//! dressed in a suit, bound to a skeleton, with skills and animations added, as `ossa convert`
//! and `ossa render` make one from their inputs), and what can be done with it. The wasm-bindgen
//! layer (`lib.rs`) only moves values across.

use std::cell::OnceCell;

use serde::Deserialize;
use serde_json::{Value, json};

use ossa::convert::OutputFile;
use ossa::format::gltf::ExportOptions;
use ossa::iqm::engines::ANIMATION_CFG;
use ossa::iqm::player::read_player_config;
use ossa::iqm::{Engine, EngineWrite};
use ossa::render::{MeshTextures, RenderOptions, View};
use ossa::textures::{ModelTextures, PartFile};
use ossa::{Error, Format, FrameBlend, Kernel, LoadOptions, Mat3x4, Model, Strided};

use crate::files::{Files, dir_of, normal_path};

/// The options of `load`, as JSON from JavaScript (camelCase; an unknown key is refused).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct LoadSettings {
    /// The model's format, as the CLI's `--format` names it (`dpm`, `sims-cmx`, ...), or
    /// `auto` (the default: detected).
    pub format: Option<String>,
    /// Reject what the default mode tolerates and repairs.
    pub strict: bool,
    /// The most memory one file's model may use, with the sidecars read for it; 0 = the
    /// library's default, which grows with the input (docs/rules.md).
    pub max_bytes: u64,
    /// Which skeleton of a Sims file that holds several, by name.
    pub skeleton_name: Option<String>,
    /// glTF input: sample animations at this rate, 0.01 to 1000; 0 = automatic.
    pub sample_fps: f32,
    /// The file (a path among the files) whose skeleton meshes that wait for one are bound to
    /// (an SKM's SKP, a Sims CMX or BCF, an MM2 `.skel`).
    pub skeleton: Option<String>,
    /// Dress a Sims character in this suit: the suit in the model's file, else `SUIT.cmx`,
    /// `SUIT.cmx.bcf` or `SUIT.bcf` among the files; each skin's mesh `MESH.skn`, `.bmf` or
    /// `.msh` among them.
    pub suit: Option<String>,
    /// Sims skill files (paths) whose skills are added, each CFP or `.bin` read beside its file.
    pub skills: Vec<String>,
    /// Animation files (paths) whose scenes are added (an animation-only IQM, or any model over
    /// the same bones).
    pub anims: Vec<String>,
}

/// A format by the CLI's names for it: the `--format` names (`DPM` as `dpm`, `Sims SKN` as
/// `sims-skn`), `glb`, or an extension without its dot (`skn`, `cmx`, `skel`).
pub fn format_by_name(name: &str) -> Option<Format> {
    let wanted = name.to_ascii_lowercase();
    if wanted == "glb" {
        return Some(Format::Glb);
    }
    Format::ALL
        .into_iter()
        .find(|f| f.name().to_ascii_lowercase().replace(' ', "-") == wanted)
        .or_else(|| Format::from_extension(&format!(".{wanted}")))
}

/// A loaded model and the files it was made from (its textures are read from them when asked).
pub struct Session {
    pub files: Files,
    /// The model's path among the files.
    pub name: String,
    pub model: Model,
    /// The model's warnings, then those of putting it together.
    pub warnings: Vec<String>,
    /// Per mesh of a dressed character, the path of the file its mesh was read from.
    pub mesh_files: Vec<Option<String>>,
    pub max_bytes: u64,
    found: OnceCell<ModelTextures>,
    decoded: OnceCell<MeshTextures>,
}

fn side_options<'a>(settings: &LoadSettings, files: &'a Files) -> LoadOptions<'a> {
    LoadOptions {
        strict: settings.strict,
        max_bytes: settings.max_bytes,
        io: Some(files),
        ..LoadOptions::default()
    }
}

/// A path the settings name, checked and made as the set keeps it.
fn path_in(files: &Files, path: &str, what: &str) -> Result<String, Error> {
    let normal = normal_path(path).ok_or_else(|| {
        Error::invalid_argument(format!(
            "{what} {path:?} is not a relative path inside the files given"
        ))
    })?;
    if files.get(&normal).is_none() {
        return Err(Error::not_found(format!(
            "{what} {path}: no such file among the files given"
        )));
    }
    Ok(normal)
}

impl Session {
    /// Loads `name` from `files` as the settings say.
    pub fn load(files: Files, name: &str, settings: &LoadSettings) -> Result<Session, Error> {
        let name = path_in(&files, name, "the model")?;
        let mut options = side_options(settings, &files);
        if let Some(format) = &settings.format {
            options.format = format_by_name(format)
                .ok_or_else(|| Error::invalid_argument(format!("unknown format {format}")))?;
        }
        if !(settings.sample_fps == 0.0 || (0.01..=1000.0).contains(&settings.sample_fps)) {
            return Err(Error::invalid_argument(format!(
                "sampleFps needs a number from 0.01 to 1000 (or 0), not {}",
                settings.sample_fps
            )));
        }
        options.sample_fps = settings.sample_fps;
        options.skeleton = settings.skeleton_name.clone();
        let side = side_options(settings, &files);
        let skeleton = match &settings.skeleton {
            Some(path) => {
                let path = path_in(&files, path, "the skeleton")?;
                Some(Model::load_file(&path, &side)?)
            }
            None => None,
        };
        let mut warnings = Vec::new();
        let (mut model, mesh_files) = match &settings.suit {
            Some(suit) => dress(&files, &name, suit, &options, skeleton.as_ref(), settings)?,
            None => (Model::load_file(&name, &options)?, Vec::new()),
        };
        if let Some(skeleton) = &skeleton
            && settings.suit.is_none()
        {
            if model.unbound().is_some() {
                model = Model::bind(&model, skeleton)?;
            } else {
                warnings.push(
                    "the skeleton was not used: the model has its skeleton already (in the file \
                     or beside it)"
                        .to_owned(),
                );
            }
        }
        if model.unbound().is_some() && !settings.skills.is_empty() {
            return Err(Error::invalid_argument(
                "the meshes wait for a skeleton: give the skeleton option a skeleton file \
                 before adding skills",
            ));
        }
        for skills in &settings.skills {
            let path = path_in(&files, skills, "the skill file")?;
            model = model.with_skills_file(&path, &side)?;
        }
        for anims in &settings.anims {
            let path = path_in(&files, anims, "the animation file")?;
            let label = path.as_str().into();
            let animations = Model::load_file(&path, &side).map_err(|e| e.in_file(&label))?;
            model = model
                .with_animations(&animations)
                .map_err(|e| e.in_file(&label))?;
        }
        let mut all: Vec<String> = model.warnings().iter().map(|w| w.to_string()).collect();
        all.append(&mut warnings);
        Ok(Session {
            name,
            model,
            warnings: all,
            mesh_files,
            max_bytes: settings.max_bytes,
            files,
            found: OnceCell::new(),
            decoded: OnceCell::new(),
        })
    }

    /// The images the meshes are drawn with, found among the files as `ossa convert` finds them
    /// beside the model (a dressed character's beside each mesh's file); read once.
    pub fn textures(&self) -> &ModelTextures {
        self.found.get_or_init(|| {
            let parts: Vec<Option<PartFile<'_>>> = (self.mesh_files.iter())
                .map(|f| {
                    f.as_deref().map(|path| PartFile {
                        fs: &self.files,
                        path,
                        shown: "",
                    })
                })
                .collect();
            ossa::textures::find_textures_of_parts(
                &self.model,
                Some((&self.files, &self.name)),
                &parts,
                self.max_bytes,
            )
        })
    }

    /// The textures decoded to RGBA, one per mesh where it has one.
    pub fn decoded(&self) -> &MeshTextures {
        self.decoded
            .get_or_init(|| ossa::render::decode_textures(&self.model, self.textures()))
    }

    /// What the model holds, for JavaScript (see `index.d.ts`, `ModelInfo`).
    pub fn describe(&self) -> Value {
        let m = &self.model;
        let i = m.info();
        let bones: Vec<Value> = (m.bones().iter())
            .map(|b| {
                json!({
                    "name": b.name.to_string(),
                    "parent": b.parent,
                    "attachment": b.flags & ossa::BONE_ATTACHMENT != 0,
                    "synthetic": b.flags & ossa::BONE_SYNTHETIC != 0,
                })
            })
            .collect();
        let meshes: Vec<Value> = (m.meshes().iter().enumerate())
            .map(|(k, mesh)| {
                json!({
                    "name": mesh.name().to_string(),
                    "shader": mesh.shader().to_string(),
                    "vertexCount": mesh.vertex_count(),
                    "triangleCount": mesh.triangle_count(),
                    "maxInfluences": mesh.max_influences(),
                    "hasTexcoords": mesh.texcoords().is_some(),
                    "hasColors": mesh.colors().is_some(),
                    "flipV": flips_v(m, k),
                    "file": self.mesh_files.get(k).cloned().flatten(),
                })
            })
            .collect();
        let scenes: Vec<Value> = (m.animations().iter().enumerate())
            .map(|(a, s)| {
                let events: Vec<Value> = (m.animation_events(a as u32).iter())
                    .map(|e| {
                        json!({
                            "time": num(e.time),
                            "key": e.key.to_string(),
                            "value": e.value.to_string(),
                            "bone": e.bone,
                        })
                    })
                    .collect();
                json!({
                    "name": s.name.to_string(),
                    "firstFrame": s.first_frame,
                    "frameCount": s.frame_count,
                    "fps": num(s.fps),
                    "looping": s.looping,
                    "moving": s.moving,
                    "distance": num(s.distance),
                    "duration": duration(s),
                    "events": events,
                })
            })
            .collect();
        let suits: Vec<Value> = (m.suits().iter())
            .map(|s| {
                let skins: Vec<Value> = (s.skins.iter())
                    .map(|k| json!({ "mesh": k.mesh.to_string(), "bone": k.bone.to_string() }))
                    .collect();
                json!({ "name": s.name.to_string(), "type": s.kind, "skins": skins })
            })
            .collect();
        let axis = ["x", "y", "z"].get(i.up_axis as usize).unwrap_or(&"?");
        let bounds = if m.unbound().is_some() {
            Value::Null
        } else {
            json!({ "min": i.mins.map(num), "max": i.maxs.map(num) })
        };
        json!({
            "name": self.name,
            "format": i.format.name(),
            "counts": {
                "bones": i.bone_count,
                "meshes": i.mesh_count,
                "vertices": i.vertex_count,
                "triangles": i.triangle_count,
                "frames": i.frame_count,
                "scenes": i.animation_count,
                "events": m.events().len(),
                "textures": m.textures().len(),
                "materials": m.materials().len(),
                "suits": m.suits().len(),
            },
            "maxInfluences": i.max_influences,
            "upAxis": axis,
            "handedness": if i.handedness > 0 { "right" } else { "left" },
            "bounds": bounds,
            "unbound": m.unbound().is_some(),
            "bones": bones,
            "meshes": meshes,
            "scenes": scenes,
            "suits": suits,
            "warnings": self.warnings,
        })
    }

    /// Model-space bone matrices (12 floats each, row-major 3x4) for a blend of frames.
    pub fn pose_frames(&self, frames: &[u32], weights: &[f32]) -> Result<Vec<f32>, Error> {
        if frames.len() != weights.len() {
            return Err(Error::invalid_argument(format!(
                "{} frames and {} weights given",
                frames.len(),
                weights.len()
            )));
        }
        let blends: Vec<FrameBlend> = (frames.iter().zip(weights))
            .map(|(&frame, &weight)| FrameBlend { frame, weight })
            .collect();
        let mut poses = vec![Mat3x4::IDENTITY; self.model.bones().len()];
        self.model.pose_frames(&blends, None, &mut poses)?;
        Ok(poses.iter().flat_map(|m| m.m).collect())
    }

    /// The frames (and weights) scene `scene` shows at `seconds`.
    pub fn scene_blend(&self, scene: u32, seconds: f64) -> Result<(Vec<u32>, Vec<f32>), Error> {
        let (blends, n) = self.model.animation_blend(scene as usize, seconds)?;
        let used = blends.get(..n).unwrap_or_default();
        Ok((
            used.iter().map(|b| b.frame).collect(),
            used.iter().map(|b| b.weight).collect(),
        ))
    }

    /// The pose of scene `scene` at `seconds`.
    pub fn pose_scene(&self, scene: u32, seconds: f64) -> Result<Vec<f32>, Error> {
        let (frames, weights) = self.scene_blend(scene, seconds)?;
        self.pose_frames(&frames, &weights)
    }

    /// Bone matrices from the flat floats JavaScript holds.
    pub fn matrices(&self, pose: &[f32]) -> Result<Vec<Mat3x4>, Error> {
        let bones = self.model.bones().len();
        if pose.len() != bones * 12 {
            return Err(Error::invalid_argument(format!(
                "{} floats given for the pose, the model's {bones} bones take {}",
                pose.len(),
                bones * 12
            )));
        }
        Ok(pose
            .chunks_exact(12)
            .map(|c| {
                let mut m = [0.0; 12];
                m.copy_from_slice(c);
                Mat3x4 { m }
            })
            .collect())
    }

    /// Skins every mesh at `pose` with `kernel` into `out`: per mesh, its positions then its
    /// normals, 3 floats a vertex each, meshes one after the other (`out` is resized to hold
    /// them).
    pub fn skin_all(
        &self,
        pose: &[f32],
        normalize: bool,
        kernel: Kernel,
        out: &mut Vec<f32>,
    ) -> Result<(), Error> {
        let bones = self.matrices(pose)?;
        let meshes = self.model.meshes();
        let total: usize = meshes.iter().map(|m| m.vertex_count() * 6).sum();
        out.resize(total, 0.0);
        let flags = if normalize { ossa::SKIN_NORMALIZE } else { 0 };
        let mut rest = out.as_mut_slice();
        for (i, mesh) in meshes.iter().enumerate() {
            let n = mesh.vertex_count();
            let (here, after) = rest.split_at_mut(n * 6);
            let (positions, normals) = here.split_at_mut(n * 3);
            let mut target = Strided::new(positions, 3)?.with_normals(normals, 3)?;
            (self.model).skin_mesh_with(kernel, i, &bones, 0, n, flags, &mut target)?;
            rest = after;
        }
        Ok(())
    }

    /// Skins mesh `mesh` at `pose` with `kernel` into packed positions and normals (3 floats a
    /// vertex each); `normals` empty for none. `normalize`: unit normals.
    pub fn skin_into(
        &self,
        mesh: u32,
        pose: &[f32],
        normalize: bool,
        kernel: Kernel,
        positions: &mut [f32],
        normals: &mut [f32],
    ) -> Result<(), Error> {
        let bones = self.matrices(pose)?;
        let mesh = mesh as usize;
        let count = (self.model.meshes().get(mesh)).map_or(0, |m| m.vertex_count());
        let want = count * 3;
        if positions.len() != want || !(normals.is_empty() || normals.len() == want) {
            return Err(Error::invalid_argument(format!(
                "mesh {mesh}'s {count} vertices take {want} floats of positions (and of normals, \
                 or none); {} and {} given",
                positions.len(),
                normals.len()
            )));
        }
        let flags = if normalize { ossa::SKIN_NORMALIZE } else { 0 };
        let target = Strided::new(positions, 3)?;
        if normals.is_empty() {
            let mut target = target;
            (self.model).skin_mesh_with(kernel, mesh, &bones, 0, count, flags, &mut target)
        } else {
            let mut target = target.with_normals(normals, 3)?;
            (self.model).skin_mesh_with(kernel, mesh, &bones, 0, count, flags, &mut target)
        }
    }

    /// Renders the model at `pose` (see [`RenderSettings`]) into RGBA8 pixels.
    pub fn render(&self, pose: &[f32], settings: &RenderSettings) -> Result<Vec<u8>, Error> {
        let bones = self.matrices(pose)?;
        let look = settings.options()?;
        let views = if settings.textures {
            self.decoded().views()
        } else {
            Vec::new()
        };
        let mut rgba = vec![0u8; look.width as usize * look.height as usize * 4];
        ossa::render::render(&self.model, &bones, &views, &look, &mut rgba)?;
        Ok(rgba)
    }

    /// The model written as `format` (see [`SaveSettings`]): the file, then the files written
    /// beside it (an engine's sidecars, a character's skills' CFPs), each with its name; and
    /// what changed on the way, as `ossa convert` says it.
    pub fn save_files(
        &self,
        format: &str,
        settings: &SaveSettings,
    ) -> Result<(Vec<OutputFile>, Vec<String>), Error> {
        let target = format_by_name(format)
            .filter(|f| *f != Format::Auto)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "unknown output format {format}; one of glb, gltf, dpm, skm, skp, iqm, skn, \
                     bmf, msh, cmx, bcf, skel, mod, dmf, dmf-json"
                ))
            })?;
        let stem = ossa::convert::file_stem(&self.name);
        let extension = match format.to_ascii_lowercase().as_str() {
            "dmf-json" => "dmf.json".to_owned(),
            other => other.to_owned(),
        };
        let engine = match &settings.engine {
            Some(name) => Some(Engine::from_name(name).ok_or_else(|| {
                Error::invalid_argument(format!("unknown engine {name}; one of {}", Engine::NAMES))
            })?),
            None => None,
        };
        let qf = matches!(engine, Some(Engine::Qfusion | Engine::Warfork));
        if target != Format::Iqm && (engine.is_some() || settings.sidecars || settings.player) {
            return Err(Error::invalid_argument(format!(
                "engine, sidecars and player are for IQM output, not {}",
                target.name()
            )));
        }
        if settings.player && !qf {
            return Err(Error::invalid_argument(
                "player is for the engines qfusion and warfork",
            ));
        }
        if let Format::Glb | Format::Gltf = target {
            let mut notes: Vec<String> = self.textures().warnings.clone();
            let export = self.model.export_gltf(&ExportOptions {
                binary: target == Format::Glb,
                scale: settings.scale.unwrap_or(1.0),
                max_influences: settings.max_influences,
                textures: Some(self.textures()),
                source_name: Some(self.file_name().to_owned()),
            })?;
            notes.push(export.exactness.describe());
            let name = format!("{stem}.{extension}");
            return Ok((vec![file(name, export.bytes)], notes));
        }
        if settings.scale.is_some() {
            return Err(Error::invalid_argument("scale is for glTF output"));
        }
        if target == Format::Iqm && (engine.is_some() || settings.sidecars) {
            return self.save_for_engine(engine, stem, settings);
        }
        let name = format!("{stem}.{extension}");
        crate::convert::save(&self.model, target, settings, name)
    }

    /// `save_files` of an IQM for `engine` (or the reference compiler's, with `.framegroups`).
    fn save_for_engine(
        &self,
        engine: Option<Engine>,
        stem: &str,
        settings: &SaveSettings,
    ) -> Result<(Vec<OutputFile>, Vec<String>), Error> {
        let options = crate::convert::options(settings);
        // As `ossa convert` does: the skin order first, then the options that change what the
        // model holds.
        let mut skin_note = None;
        let mut ordered = None;
        if settings.skin_order {
            let (model, note) = ossa::convert::skin_ordered(&self.model)?;
            ordered = Some(model);
            skin_note = Some(note);
        }
        let model = ordered.as_ref().unwrap_or(&self.model);
        let (prepared, mut notes) = ossa::convert::prepare(model, Format::Iqm, &options)?;
        let model = prepared.as_ref().unwrap_or(model);
        let qf = matches!(engine, Some(Engine::Qfusion | Engine::Warfork));
        let player = qf && (settings.player || stem.eq_ignore_ascii_case("tris"));
        // A player model's anims come from the animation.cfg beside it, when there is one.
        let config = match self
            .files
            .find_in(dir_of(&self.name), &[ANIMATION_CFG.to_owned()])
        {
            Some(path) if player => {
                let text = self.files.get(&path).unwrap_or_default();
                let shown: std::sync::Arc<str> = path.as_str().into();
                Some(read_player_config(text).map_err(|e| e.in_file(&shown))?)
            }
            _ => None,
        };
        let skins = if qf {
            Vec::new()
        } else {
            ossa::textures::variant_texture_names(&self.textures().variants)
        };
        let name = if player {
            "tris.iqm".to_owned()
        } else {
            format!("{stem}.iqm")
        };
        let set = ossa::convert::engine_files(
            model,
            &name,
            &EngineWrite {
                engine,
                player,
                player_config: config.as_ref(),
                sidecars: settings.sidecars,
            },
            &skins,
        )?;
        let mut said = vec![set.line];
        said.append(&mut notes);
        said.extend(set.notes);
        said.extend(skin_note);
        said.extend(
            set.findings
                .iter()
                .map(|f| format!("{} {}: {f}", f.kind, f.rule)),
        );
        Ok((set.files, said))
    }

    /// The model's file name, without its directories.
    pub fn file_name(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }
}

/// A number for JSON as short as Rust prints the f32 (`-10.5413`, not the f64 widening's
/// `-10.541299819946289`), as `ossa info --json` writes them; not finite: null.
fn num(v: f32) -> Value {
    (v.to_string().parse::<f64>().ok())
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// A scene's length in seconds: a looping scene's until it starts again, another's until its
/// last frame.
fn duration(scene: &ossa::Animation) -> f64 {
    let fps = f64::from(scene.fps);
    if scene.frame_count == 0 || fps <= 0.0 {
        return 0.0;
    }
    let frames = f64::from(scene.frame_count);
    if scene.looping {
        frames / fps
    } else {
        (frames - 1.0) / fps
    }
}

/// DMF textures marked `flip_y` have v running up the image; every other format's run down
/// (as the renderer and the glTF export take them).
fn flips_v(model: &Model, mesh: usize) -> bool {
    let texture = (model.meshes().get(mesh))
        .and_then(|m| m.material())
        .and_then(|m| model.materials().get(m as usize))
        .and_then(|m| m.texture)
        .and_then(|t| model.textures().get(t as usize));
    texture.is_some_and(|t| t.flip_y != 0)
}

/// The options of `render`, as JSON (camelCase; an unknown key is refused).
#[derive(Debug, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct RenderSettings {
    pub width: u32,
    pub height: u32,
    /// `three-quarter` (the default), `front`, `side` or `top`.
    pub view: String,
    pub yaw: Option<f32>,
    pub pitch: Option<f32>,
    /// Red, green, blue, alpha.
    pub background: [u8; 4],
    pub wireframe: bool,
    pub bones: bool,
    pub antialias: bool,
    /// Draw the meshes' textures, found among the files.
    pub textures: bool,
}

impl Default for RenderSettings {
    fn default() -> RenderSettings {
        let d = RenderOptions::default();
        RenderSettings {
            width: 512,
            height: 512,
            view: "three-quarter".to_owned(),
            yaw: None,
            pitch: None,
            background: d.background,
            wireframe: false,
            bones: false,
            antialias: false,
            textures: true,
        }
    }
}

impl RenderSettings {
    fn options(&self) -> Result<RenderOptions, Error> {
        let view = match self.view.as_str() {
            "three-quarter" => View::ThreeQuarter,
            "front" => View::Front,
            "side" => View::Side,
            "top" => View::Top,
            other => {
                return Err(Error::invalid_argument(format!(
                    "view needs front, side, top or three-quarter, not {other}"
                )));
            }
        };
        let finite = |what: &str, v: Option<f32>| match v {
            Some(d) if !d.is_finite() => Err(Error::invalid_argument(format!(
                "{what} needs a finite number of degrees, not {d}"
            ))),
            _ => Ok(v),
        };
        Ok(RenderOptions {
            width: self.width,
            height: self.height,
            view,
            yaw_degrees: finite("yaw", self.yaw)?,
            pitch_degrees: finite("pitch", self.pitch)?,
            background: self.background,
            wireframe: self.wireframe,
            bones: self.bones,
            antialias: self.antialias,
        })
    }
}

fn file(name: String, bytes: Vec<u8>) -> OutputFile {
    OutputFile { name, bytes }
}

/// The options of `save`, as `ossa convert` takes them (camelCase JSON; an unknown key is
/// refused).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveSettings {
    /// glTF: multiply positions and translations (default 1).
    pub scale: Option<f32>,
    /// Keep each vertex's N strongest influences, renormalised (0: all).
    pub max_influences: usize,
    /// DPM, SKM, SKP, DMF, MM2: write the model's order, keep unused bones.
    pub keep_order: bool,
    /// Number vertices by influence set.
    pub skin_order: bool,
    /// MM2: move rest-pose rotations and scales into the vertices.
    pub bake_scale: bool,
    /// IQM: write what this engine loads (`darkplaces` or `xonotic`, `fte`, `qfusion`,
    /// `warfork`), with the sidecars it reads beside the file.
    pub engine: Option<String>,
    /// IQM: the sidecars even where the engine does not need them (`.framegroups`, or
    /// `animation.cfg` for qfusion and Warfork).
    pub sidecars: bool,
    /// IQM for qfusion or Warfork: a player model, `tris.iqm` with its `animation.cfg` (the
    /// one among the files beside the model, when there is one).
    pub player: bool,
}

/// The character `name` (a Sims skeleton, a suit file, or both) wearing `suit`, as `ossa
/// convert --suit` dresses one: the suit from the file, else `SUIT.cmx`, `.cmx.bcf` or `.bcf`;
/// each skin's mesh `MESH.skn`, `.bmf` or `.msh`; each looked for (ASCII case ignored) in the
/// model's directory, then in the files' other directories in byte order. Also, per mesh, the
/// path its mesh was read from.
fn dress(
    files: &Files,
    name: &str,
    suit: &str,
    options: &LoadOptions,
    skeleton: Option<&Model>,
    settings: &LoadSettings,
) -> Result<(Model, Vec<Option<String>>), Error> {
    let loaded = Model::load_file(name, options)?;
    let own = dir_of(name).to_owned();
    let mut dirs = vec![own.clone()];
    dirs.extend(files.dirs().into_iter().filter(|d| *d != own));
    let find = |names: &[String]| dirs.iter().find_map(|d| files.find_in(d, names));
    let side = side_options(settings, files);
    let has_suit = |m: &Model| {
        (m.suits().iter()).any(|s| s.name.as_bytes().eq_ignore_ascii_case(suit.as_bytes()))
    };
    let suit_file = if has_suit(&loaded) {
        None
    } else {
        let names = [".cmx", ".cmx.bcf", ".bcf"].map(|e| format!("{suit}{e}"));
        let Some(found) = find(&names) else {
            let there: Vec<String> = loaded.suits().iter().map(|s| s.name.to_string()).collect();
            let has = if there.is_empty() {
                "no suits".to_owned()
            } else {
                format!("suits {}", there.join(", "))
            };
            return Err(Error::not_found(format!(
                "no suit named {suit}: the file has {has}, and none of {} is among the files given",
                names.join(", ")
            )));
        };
        Some(Model::load_file(&found, &side)?)
    };
    let skeleton = match skeleton {
        Some(s) => s,
        None if loaded.unbound().is_none() && !loaded.bones().is_empty() => &loaded,
        None => {
            return Err(Error::mismatch(
                "the file holds no skeleton to dress: give the skeleton option a skeleton file \
                 (adult-skeleton.cmx)",
            ));
        }
    };
    let suits = suit_file.as_ref().unwrap_or(&loaded).suits();
    let character = ossa::assemble::with_suits(skeleton, suits)?;
    let mut found_files: Vec<String> = Vec::new();
    let dressed = ossa::assemble::dress_parts(&character, suit, &mut |mesh: &str| {
        // The 1998 prototype's meshes are `.msh`, whose name gives their bone.
        let names = [".skn", ".bmf", ".msh"].map(|e| format!("{mesh}{e}"));
        match find(&names) {
            Some(found) => {
                found_files.push(found.clone());
                Model::load_file(&found, &side)
            }
            None => Err(Error::not_found(format!(
                "no {}, {} or {} among the files given",
                names[0], names[1], names[2]
            ))),
        }
    })?;
    let mesh_files = (dressed.mesh_skins.iter())
        .map(|&k| found_files.get(k).cloned())
        .collect();
    Ok((dressed.model, mesh_files))
}
