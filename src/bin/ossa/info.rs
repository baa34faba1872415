//! `ossa info`: a model's summary as text or JSON. A model file gives its counts, bounds, bone
//! tree, meshes, animations and warnings; a Sims character file its suits and skills too, which
//! the loaded model alone does not carry (skills play on a skeleton loaded elsewhere); a Sims
//! `.cfp`, no model at all, its values and the skills beside it that read them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ossa::{Format, LoadOptions, Model};
use serde_json::{Value, json};

use crate::cli::InfoArgs;
use crate::{read, v3};

pub fn info(args: &InfoArgs, options: &LoadOptions<'static>) -> Result<ExitCode, ossa::Error> {
    let file = args.file.as_str();
    if options.format == Format::Auto && has_extension(file, ".cfp") {
        return cfp_info(file, args.json);
    }
    if options.format == Format::Auto && has_extension(file, ".bin") {
        return bin_info(file, args.json);
    }
    // Through the path, so that sidecar files (skeletons, scene lists) are found beside it.
    let model = Model::load_file(file, options)?;
    let skills = if matches!(model.format(), Format::SimsCmx | Format::SimsBcf) {
        skills_of(file)?
    } else {
        Vec::new()
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        write_model_json(&mut out, file, &model, &skills, args.frames)
            .map_err(|e| ossa::Error::io(format!("writing the report: {e}"), Some(e)))?;
    } else {
        print_model(&mut out, file, &model, &skills, args.frames);
    }
    Ok(ExitCode::SUCCESS)
}

fn has_extension(file: &str, extension: &str) -> bool {
    file.to_ascii_lowercase().ends_with(extension)
}

/// A number for JSON as short as Rust prints the f32 (`-10.5413`, not the f64 widening's
/// `-10.541299819946289`); not finite: null.
fn num(v: f32) -> Value {
    v.to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

fn nums<const N: usize>(v: [f32; N]) -> Value {
    Value::Array(v.into_iter().map(num).collect())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

// ---------------------------------------------------------------------------------------------
// Bones as a tree
// ---------------------------------------------------------------------------------------------

/// How many levels `info` indents a bone under its parent; deeper bones say their depth.
const MAX_INDENT: usize = 32;

/// The bones in tree order, each with its depth: every root in index order, each followed by
/// its children (in index order) and theirs. A bone no root leads to (a parent loop, which a
/// loaded model should not have) follows at depth 0, so every bone is listed once.
fn bone_tree(bones: &[ossa::Bone]) -> Vec<(usize, usize)> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); bones.len()];
    let mut roots = Vec::new();
    for (b, bone) in bones.iter().enumerate() {
        match usize::try_from(bone.parent) {
            Ok(p) if p < bones.len() && p != b => children[p].push(b),
            _ => roots.push(b),
        }
    }
    let mut order = Vec::with_capacity(bones.len());
    let mut listed = vec![false; bones.len()];
    let mut visit = |start: usize, order: &mut Vec<(usize, usize)>| {
        // Depth-first without recursion: a deep chain cannot overflow the stack.
        let mut stack = vec![(start, 0usize)];
        while let Some((b, depth)) = stack.pop() {
            if std::mem::replace(&mut listed[b], true) {
                continue;
            }
            order.push((b, depth));
            stack.extend(children[b].iter().rev().map(|&c| (c, depth + 1)));
        }
    };
    for r in roots {
        visit(r, &mut order);
    }
    for b in 0..bones.len() {
        visit(b, &mut order);
    }
    order
}

/// The bounds `info` gives and what they are of.
enum Bounds {
    /// The bind pose's, as the model gives them.
    BindPose([f32; 3], [f32; 3]),
    /// Meshes that wait for a skeleton with every vertex on one bone (a `.msh`, an SKN of one
    /// bone): no bind pose, but the vertices' own positions, all in that bone's space.
    OwnPositions {
        mins: [f32; 3],
        maxs: [f32; 3],
        bone: String,
    },
    /// Meshes that wait for a skeleton on several bones: their vertices lie in as many spaces.
    Unbound { bones: usize },
}

impl Bounds {
    fn of(model: &Model) -> Bounds {
        let i = model.info();
        let Some(slots) = model.unbound() else {
            return Bounds::BindPose(i.mins, i.maxs);
        };
        let bones = slots.count();
        let used_one = (model.meshes().iter())
            .flat_map(|m| m.all_influences())
            .all(|f| f.bone == 0);
        if bones != 1 || !used_one {
            return Bounds::Unbound { bones };
        }
        let bone = match slots {
            ossa::BoneSlots::ByName(names) => names.first().map(|n| n.to_string()),
            ossa::BoneSlots::ByIndex(_) => None,
        };
        let (mut mins, mut maxs) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for mesh in model.meshes() {
            for v in 0..mesh.vertex_count() {
                // Skinning adds each influence's origin (weighted already) turned by its bone:
                // on the bone itself, their sum.
                let mut p = [0.0f32; 3];
                for f in mesh.influences(v) {
                    for (p, o) in p.iter_mut().zip(f.origin) {
                        *p += o;
                    }
                }
                for ((lo, hi), v) in mins.iter_mut().zip(&mut maxs).zip(p) {
                    *lo = lo.min(v);
                    *hi = hi.max(v);
                }
            }
        }
        Bounds::OwnPositions {
            mins,
            maxs,
            bone: bone.filter(|b| !b.is_empty()).unwrap_or_default(),
        }
    }

    /// The bone's space, as words: `bone HEAD's space`.
    fn space(bone: &str) -> String {
        if bone.is_empty() {
            "its one bone's space (unnamed)".to_owned()
        } else {
            format!("bone {bone}'s space")
        }
    }

    /// The line of `info`'s text.
    fn line(&self) -> String {
        match self {
            Bounds::BindPose(mins, maxs) => {
                format!("bind pose bounds {} .. {}", v3(*mins), v3(*maxs))
            }
            Bounds::OwnPositions { mins, maxs, bone } => format!(
                "bounds {} .. {} of its own vertex positions, in {} (it waits for a skeleton, \
                 so has no bind pose)",
                v3(*mins),
                v3(*maxs),
                Bounds::space(bone)
            ),
            Bounds::Unbound { bones } => format!(
                "no bounds: the meshes wait for a skeleton, and their vertices lie in the spaces \
                 of {}",
                plural(*bones, "bone", "bones")
            ),
        }
    }

    /// `info --json`'s `bounds`: `min`, `max` (null without bounds) and what they are `of`.
    fn json(&self) -> Value {
        match self {
            Bounds::BindPose(mins, maxs) => {
                json!({ "min": nums(*mins), "max": nums(*maxs), "of": "bind pose" })
            }
            Bounds::OwnPositions { mins, maxs, bone } => json!({
                "min": nums(*mins),
                "max": nums(*maxs),
                "of": format!("own vertex positions, in {}", Bounds::space(bone)),
            }),
            Bounds::Unbound { .. } => json!({
                "min": Value::Null,
                "max": Value::Null,
                "of": "none: the meshes wait for a skeleton",
            }),
        }
    }
}

fn bone_note(bone: &ossa::Bone) -> &'static str {
    if bone.flags & ossa::BONE_ATTACHMENT != 0 {
        "attachment"
    } else if bone.flags & ossa::BONE_SYNTHETIC != 0 {
        "added for vertices bound to no bone"
    } else {
        ""
    }
}

// ---------------------------------------------------------------------------------------------
// Sims skills
// ---------------------------------------------------------------------------------------------

/// One skill of a Sims character file, with what playing it on a skeleton gives.
struct SkillSummary {
    name: String,
    /// The CFP's name without `.cfp`.
    animation: String,
    motions: usize,
    /// The most frames a motion with translations or rotations has: the skill's frame count
    /// once played (`cmx::skill_frames`).
    frames: u32,
    duration_ms: f32,
    fps: f32,
    looping: bool,
    moving: bool,
    distance: f32,
    translations: u32,
    rotations: u32,
    values: u64,
    /// The CFP beside the file, when there.
    cfp: Option<PathBuf>,
    /// Where the numbers are: the CFP, else (a version 200 skill's) `ANIMATION.bin`; None when
    /// neither is beside the file.
    numbers: Option<String>,
    prototype: bool,
}

/// The rate the game plays a skill without a usable duration at (its 33.3 ms frame).
const DEFAULT_SKILL_FPS: f32 = 30.0;

impl SkillSummary {
    /// `prototype`: the skill is a version 200 file's, whose numbers may be a `.bin`.
    fn new(skill: &ossa::cmx::Skill, dir: &Path, prototype: bool) -> SkillSummary {
        let frames = skill
            .motions
            .iter()
            .filter(|m| m.has_translation || m.has_rotation)
            .map(|m| m.frame_count)
            .max()
            .unwrap_or(0);
        // As the library times a played skill: its frames spread over its duration.
        let fps = if skill.duration.is_finite() && skill.duration > 0.0 {
            (f64::from(frames) * 1000.0 / f64::from(skill.duration)) as f32
        } else {
            DEFAULT_SKILL_FPS
        };
        let name = skill.name.to_string();
        let animation = skill.animation.to_string();
        let cfp = find_beside(dir, &format!("{animation}.cfp"));
        let bin = format!("{animation}.bin");
        let numbers = match &cfp {
            Some(_) => Some(format!("{animation}.cfp")),
            None if prototype && find_beside(dir, &bin).is_some() => Some(bin),
            None => None,
        };
        SkillSummary {
            // Nothing in the files says whether a skill loops; Maxis names every looping one
            // `...loop`, and the library goes by that too.
            looping: name.to_ascii_lowercase().contains("loop"),
            cfp,
            numbers,
            prototype,
            name,
            animation,
            motions: skill.motions.len(),
            frames,
            duration_ms: skill.duration,
            fps: if fps.is_finite() && fps > 0.0 {
                fps
            } else {
                DEFAULT_SKILL_FPS
            },
            moving: skill.moving,
            distance: skill.distance,
            translations: skill.translation_count,
            rotations: skill.rotation_count,
            values: skill.value_count(),
        }
    }

    fn line(&self) -> String {
        let cfp = match &self.numbers {
            Some(file) => file.clone(),
            None if self.prototype => format!(
                "{0}.cfp or {0}.bin (neither beside the file: it plays without frames)",
                self.animation
            ),
            None => format!("{}.cfp (not beside the file)", self.animation),
        };
        format!(
            "{}: {}, {} over {:.3} s at {:.1} fps{}{}; {} values in {cfp}",
            self.name,
            plural(self.motions, "motion", "motions"),
            plural(self.frames as usize, "frame", "frames"),
            self.duration_ms / 1000.0,
            self.fps,
            if self.looping { ", looping" } else { "" },
            if self.moving {
                format!(", moves {}", self.distance)
            } else {
                String::new()
            },
            self.values
        )
    }

    fn json(&self) -> Value {
        json!({
            "name": self.name,
            "motions": self.motions,
            "frames": self.frames,
            "duration_ms": num(self.duration_ms),
            "fps": num(self.fps),
            "looping": self.looping,
            "moving": self.moving,
            "distance": num(self.distance),
            "cfp": format!("{}.cfp", self.animation),
            "cfp_found": self.cfp.is_some(),
            "numbers": self.numbers,
            "translations": self.translations,
            "rotations": self.rotations,
            "values": self.values,
        })
    }
}

/// The directory a file is in ("." for a bare name).
fn dir_of(file: &str) -> PathBuf {
    match Path::new(file).parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `name` (which may hold a folder) in `dir`, its last part matched ignoring ASCII case, as the
/// game's files are named on Windows.
fn find_beside(dir: &Path, name: &str) -> Option<PathBuf> {
    let wanted = dir.join(name);
    if wanted.is_file() {
        return Some(wanted);
    }
    let parent = wanted.parent()?;
    let last = wanted.file_name()?.to_string_lossy().into_owned();
    std::fs::read_dir(parent).ok()?.flatten().find_map(|e| {
        let path = e.path();
        (e.file_name().to_string_lossy().eq_ignore_ascii_case(&last) && path.is_file())
            .then_some(path)
    })
}

/// The skills of the Sims character file `file` (CMX or BCF).
fn skills_of(file: &str) -> Result<Vec<SkillSummary>, ossa::Error> {
    let character = ossa::cmx::parse(&read(file)?)?;
    let dir = dir_of(file);
    Ok(character
        .skills
        .iter()
        .map(|s| SkillSummary::new(s, &dir, character.version == Some(200)))
        .collect())
}

// ---------------------------------------------------------------------------------------------
// A model as text
// ---------------------------------------------------------------------------------------------

fn print_model(
    out: &mut impl Write,
    file: &str,
    model: &Model,
    skills: &[SkillSummary],
    all_frames: bool,
) {
    let i = model.info();
    say!(out, "{file}: {} model", i.format.name());
    let counts: Vec<String> = [
        (i.bone_count, "bone", "bones"),
        (i.mesh_count, "mesh", "meshes"),
        (i.vertex_count, "vertex", "vertices"),
        (i.triangle_count, "triangle", "triangles"),
        (i.frame_count, "frame", "frames"),
        (i.animation_count, "animation", "animations"),
    ]
    .into_iter()
    .map(|(n, one, many)| plural(n as usize, one, many))
    .collect();
    say!(out, "  {}", counts.join(", "));
    let extras: Vec<String> = [
        (model.textures().len(), "texture", "textures"),
        (model.materials().len(), "material", "materials"),
        (model.suits().len(), "suit", "suits"),
        (skills.len(), "skill", "skills"),
        (model.events().len(), "event", "events"),
    ]
    .into_iter()
    .filter(|(n, _, _)| *n > 0)
    .map(|(n, one, many)| plural(n, one, many))
    .collect();
    if !extras.is_empty() {
        say!(out, "  {}", extras.join(", "));
    }
    let axis = ["x", "y", "z"].get(i.up_axis as usize).unwrap_or(&"?");
    let hand = if i.handedness > 0 { "right" } else { "left" };
    // Without vertices there are no bounds or influences to speak of.
    if i.vertex_count > 0 {
        say!(
            out,
            "  {axis} up, {hand}-handed; up to {} per vertex",
            plural(i.max_influences as usize, "influence", "influences")
        );
        say!(out, "  {}", Bounds::of(model).line());
    } else {
        say!(out, "  {axis} up, {hand}-handed");
    }

    if !model.bones().is_empty() {
        say!(out, "bones (children indented under their parent):");
        for (b, depth) in bone_tree(model.bones()) {
            let bone = &model.bones()[b];
            let note = bone_note(bone);
            let note = if note.is_empty() {
                String::new()
            } else {
                format!(" ({note})")
            };
            // Indented up to MAX_INDENT levels, then the depth as a number: a chain of bones
            // would otherwise print text quadratic in its length.
            let indent = "  ".repeat(depth.min(MAX_INDENT));
            let deeper = if depth > MAX_INDENT {
                format!("[depth {depth}] ")
            } else {
                String::new()
            };
            say!(out, "  {b:4} {indent}{deeper}{}{note}", bone.name);
        }
    }
    if !model.meshes().is_empty() {
        say!(out, "meshes:");
        for (m, mesh) in model.meshes().iter().enumerate() {
            let shader = mesh.shader().to_string();
            let name = mesh.name().to_string();
            say!(
                out,
                "  {m:4} {}: {}, {}, up to {}{}{}",
                if name.is_empty() { "(no name)" } else { &name },
                plural(mesh.vertex_count(), "vertex", "vertices"),
                plural(mesh.triangle_count(), "triangle", "triangles"),
                plural(mesh.max_influences(), "influence", "influences"),
                if shader.is_empty() {
                    String::new()
                } else {
                    format!(", shader {shader}")
                },
                mesh.material()
                    .map_or(String::new(), |k| format!(", material {k}"))
            );
            for (k, skin) in mesh.skins().iter().enumerate() {
                let frames: Vec<String> =
                    skin.frames.iter().map(|f| f.material.to_string()).collect();
                let every = if frames.len() > 1 {
                    format!(" (one every {} s)", skin.interval)
                } else {
                    String::new()
                };
                say!(out, "         skin {k}: {}{every}", frames.join(", "));
            }
        }
    }
    if !model.textures().is_empty() {
        say!(out, "textures:");
        for (t, tex) in model.textures().iter().enumerate() {
            say!(
                out,
                "  {t:4} {}: {}x{}, {} bytes of image",
                tex.name,
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
            say!(out, "  {k:4} {}: {texture}", mat.name);
        }
    }
    if !model.suits().is_empty() {
        say!(out, "suits:");
        for (k, suit) in model.suits().iter().enumerate() {
            say!(
                out,
                "  {k:4} {}: type {}, {}, {}",
                suit.name,
                suit.kind,
                plural(suit.skins.len(), "skin", "skins"),
                plural(suit.properties.len(), "property", "properties")
            );
            for skin in &suit.skins {
                say!(
                    out,
                    "         mesh {} on bone {}, censor flags {}",
                    skin.mesh,
                    skin.bone,
                    skin.censor_flags
                );
            }
        }
    }
    if !skills.is_empty() {
        say!(out, "skills:");
        for (k, skill) in skills.iter().enumerate() {
            say!(out, "  {k:4} {}", skill.line());
        }
    }
    if !model.animations().is_empty() {
        say!(out, "animations:");
        let width = (model.animations().iter())
            .map(|a| a.name.to_string().chars().count())
            .max()
            .unwrap_or(0)
            .min(32);
        for (a, scene) in model.animations().iter().enumerate() {
            let events = model.animation_events(a as u32);
            let range = match scene.frame_count {
                0 => "no frames".to_owned(),
                1 => format!("frame {}", scene.first_frame),
                n => format!(
                    "frames {}-{} ({n})",
                    scene.first_frame,
                    u64::from(scene.first_frame) + u64::from(n) - 1
                ),
            };
            say!(
                out,
                "  {a:4} {:<width$} {range} at {} fps{}{}{}",
                scene.name.to_string(),
                scene.fps,
                if scene.looping { ", looping" } else { "" },
                if scene.moving {
                    format!(", moves {}", scene.distance)
                } else {
                    String::new()
                },
                if events.is_empty() {
                    String::new()
                } else {
                    format!(", {}", plural(events.len(), "event", "events"))
                }
            );
            if all_frames {
                for e in events {
                    say!(
                        out,
                        "         at {:.3} s: {} = {} ({})",
                        e.time,
                        e.key,
                        e.value,
                        event_bone(model, e.bone)
                    );
                }
            }
        }
    }
    if all_frames {
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
    } else if !model.frames().is_empty() {
        say!(
            out,
            "frames: {} (--frames lists them)",
            model.frames().len()
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
}

fn event_bone(model: &Model, bone: i32) -> String {
    usize::try_from(bone)
        .ok()
        .and_then(|b| model.bones().get(b))
        .map_or("no bone".to_owned(), |b| b.name.to_string())
}

// ---------------------------------------------------------------------------------------------
// A model as JSON
// ---------------------------------------------------------------------------------------------

fn list<'a>(items: impl Iterator<Item = Value> + 'a) -> Member<'a> {
    Member::List(Box::new(items))
}

/// One member of the model's JSON: a small value, or a list written an element at a time.
enum Member<'a> {
    Value(Value),
    List(Box<dyn Iterator<Item = Value> + 'a>),
}

/// The model as JSON, written as it is made: a model's lists (bones, frames, scenes) can be long,
/// and a document built whole first would hold many times the model (serde_json's values are
/// tens of bytes each). The text is what serde_json's pretty printer gives for the same document,
/// keys in order.
fn write_model_json(
    out: &mut impl Write,
    file: &str,
    model: &Model,
    skills: &[SkillSummary],
    all_frames: bool,
) -> std::io::Result<()> {
    let i = model.info();
    let axis = ["x", "y", "z"].get(i.up_axis as usize).unwrap_or(&"?");
    let tree = bone_tree(model.bones());
    let bones = tree.into_iter().map(|(b, depth)| {
        let bone = &model.bones()[b];
        json!({
            "index": b,
            "name": bone.name.to_string(),
            "parent": (bone.parent >= 0).then_some(bone.parent),
            "depth": depth,
            "attachment": bone.flags & ossa::BONE_ATTACHMENT != 0,
            "synthetic": bone.flags & ossa::BONE_SYNTHETIC != 0,
        })
    });
    let meshes = model.meshes().iter().map(|mesh| {
        json!({
            "name": mesh.name().to_string(),
            "shader": mesh.shader().to_string(),
            "vertices": mesh.vertex_count(),
            "triangles": mesh.triangle_count(),
            "max_influences": mesh.max_influences(),
            "material": mesh.material(),
            "skins": (mesh.skins().iter())
                .map(|k| json!({
                    "materials": k.frames.iter().map(|f| f.material.to_string()).collect::<Vec<_>>(),
                    "interval": num(k.interval),
                }))
                .collect::<Vec<_>>(),
        })
    });
    let animations = model.animations().iter().enumerate().map(|(a, scene)| {
        let events: Vec<Value> = (model.animation_events(a as u32).iter())
            .map(|e| {
                json!({
                    "time": num(e.time),
                    "key": e.key.to_string(),
                    "value": e.value.to_string(),
                    "bone": (e.bone >= 0).then_some(e.bone),
                })
            })
            .collect();
        json!({
            "name": scene.name.to_string(),
            "first_frame": scene.first_frame,
            "frame_count": scene.frame_count,
            "fps": num(scene.fps),
            "looping": scene.looping,
            "moving": scene.moving,
            "distance": num(scene.distance),
            "events": events,
        })
    });
    let textures = model.textures().iter().map(|t| {
        json!({
            "name": t.name.to_string(),
            "width": t.width,
            "height": t.height,
            "image_bytes": t.image.len(),
        })
    });
    let materials = (model.materials().iter())
        .map(|m| json!({ "name": m.name.to_string(), "texture": m.texture }));
    let suits = model.suits().iter().map(|s| {
        let skins: Vec<Value> = (s.skins.iter())
            .map(|k| {
                json!({
                    "mesh": k.mesh.to_string(),
                    "bone": k.bone.to_string(),
                    "censor_flags": k.censor_flags,
                })
            })
            .collect();
        json!({
            "name": s.name.to_string(),
            "type": s.kind,
            "properties": s.properties.len(),
            "skins": skins,
        })
    });
    let frames = model.frames().iter().map(|f| {
        json!({
            "name": f.name.to_string(),
            "min": nums(f.mins),
            "max": nums(f.maxs),
        })
    });
    let counts = json!({
        "bones": i.bone_count,
        "meshes": i.mesh_count,
        "vertices": i.vertex_count,
        "triangles": i.triangle_count,
        "frames": i.frame_count,
        "animations": i.animation_count,
        "events": model.events().len(),
        "textures": model.textures().len(),
        "materials": model.materials().len(),
        "suits": model.suits().len(),
        "skills": skills.len(),
        "warnings": model.warnings().len(),
    });
    // In key order, as serde_json's map keeps them.
    let mut members: Vec<(&str, Member)> = vec![
        ("animations", list(animations)),
        ("bones", list(bones)),
        ("bounds", Member::Value(Bounds::of(model).json())),
        ("counts", Member::Value(counts)),
        ("file", Member::Value(Value::from(file))),
        ("format", Member::Value(Value::from(i.format.name()))),
    ];
    if all_frames {
        members.push(("frames", list(frames)));
    }
    let hand = if i.handedness > 0 { "right" } else { "left" };
    members.extend([
        ("handedness", Member::Value(Value::from(hand))),
        ("materials", list(materials)),
        (
            "max_influences",
            Member::Value(Value::from(i.max_influences)),
        ),
        ("meshes", list(meshes)),
        ("skills", list(skills.iter().map(SkillSummary::json))),
        ("suits", list(suits)),
        ("textures", list(textures)),
        ("up_axis", Member::Value(Value::from(*axis))),
        (
            "warnings",
            list(model.warnings().iter().map(|w| Value::from(w.to_string()))),
        ),
    ]);

    // A value's pretty text, its lines after the first indented by `indent`.
    let pretty = |v: &Value, indent: &str| format!("{v:#}").replace('\n', &format!("\n{indent}"));
    writeln!(out, "{{")?;
    let last = members.len().saturating_sub(1);
    for (k, (key, member)) in members.into_iter().enumerate() {
        let comma = if k < last { "," } else { "" };
        match member {
            Member::Value(v) => {
                writeln!(out, "  {}: {}{comma}", Value::from(key), pretty(&v, "  "))?
            }
            Member::List(mut items) => match items.next() {
                None => writeln!(out, "  {}: []{comma}", Value::from(key))?,
                Some(first) => {
                    writeln!(out, "  {}: [", Value::from(key))?;
                    write!(out, "    {}", pretty(&first, "    "))?;
                    for item in items {
                        write!(out, ",\n    {}", pretty(&item, "    "))?;
                    }
                    writeln!(out, "\n  ]{comma}")?;
                }
            },
        }
    }
    writeln!(out, "}}")
}

// ---------------------------------------------------------------------------------------------
// Sims CFP
// ---------------------------------------------------------------------------------------------

/// The most bytes of a character file read when looking for the skills that read a CFP: the
/// game's are a few kilobytes; anything far larger is no skill file.
const MAX_SKILL_FILE_BYTES: u64 = 16 << 20;

/// A CFP holds only values: what they are is in the skills that name it, so the skills of the
/// character files beside it that do are listed with it.
fn cfp_info(file: &str, as_json: bool) -> Result<ExitCode, ossa::Error> {
    let bytes = read(file)?;
    let count = ossa::cfp::count_values(&bytes)?;
    let values = ossa::cfp::decode(&bytes, count)?;
    let range = value_range(values.iter().copied());
    let stem = stem_of(file, ".cfp");
    let readers = skills_reading(&dir_of(file), &stem);

    let mut out = std::io::stdout().lock();
    if as_json {
        let skills = readers_json(&readers, |_, _| {});
        let json = json!({
            "file": file,
            "format": "Sims CFP",
            "bytes": bytes.len(),
            "values": count,
            "min": range.map(|r| num(r.0)),
            "max": range.map(|r| num(r.1)),
            "skills": skills,
        });
        say!(out, "{json:#}");
        return Ok(ExitCode::SUCCESS);
    }
    say!(out, "{file}: Sims CFP (the values of skills' motions)");
    say!(out, "  {} bytes, {} values", bytes.len(), count);
    if let Some((lo, hi)) = range {
        say!(out, "  values from {lo} to {hi}");
    }
    say_readers(&mut out, &readers, &format!("{stem}.cfp"), |skill| {
        if skill.values == count as u64 {
            "all the values".to_owned()
        } else {
            format!("{} values, but the CFP holds {count}", skill.values)
        }
    });
    Ok(ExitCode::SUCCESS)
}

/// The lowest and highest of the finite `values`.
fn value_range(values: impl Iterator<Item = f32>) -> Option<(f32, f32)> {
    (values.filter(|v| v.is_finite())).fold(None, |r, v| match r {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// The file name of `file` without `extension`.
fn stem_of(file: &str, extension: &str) -> String {
    let name = Path::new(file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.get(..name.len().saturating_sub(extension.len()));
    stem.unwrap_or(&name).to_owned()
}

/// The skills reading a numbers file, for JSON: each with its character file, and what `add`
/// puts in.
fn readers_json(
    readers: &[(PathBuf, SkillSummary)],
    add: impl Fn(&SkillSummary, &mut Value),
) -> Vec<Value> {
    (readers.iter())
        .map(|(path, skill)| {
            let mut json = skill.json();
            json["file"] = Value::from(path.display().to_string());
            add(skill, &mut json);
            json
        })
        .collect()
}

/// The skills reading the numbers file `numbers`, a line each ending in how the file fits it.
fn say_readers(
    out: &mut impl Write,
    readers: &[(PathBuf, SkillSummary)],
    numbers: &str,
    fit: impl Fn(&SkillSummary) -> String,
) {
    if readers.is_empty() {
        say!(
            out,
            "  no character file beside it has a skill that reads {numbers}"
        );
        return;
    }
    say!(out, "skills reading it:");
    for (path, skill) in readers {
        say!(
            out,
            "  {} in {}: {}, {} over {:.3} s; {} translations, {} rotations: {}",
            skill.name,
            path.display(),
            plural(skill.motions, "motion", "motions"),
            plural(skill.frames as usize, "frame", "frames"),
            skill.duration_ms / 1000.0,
            skill.translations,
            skill.rotations,
            fit(skill)
        );
    }
}

/// A 1998 prototype's `.bin` holds only the numbers of a skill (floats, no header): what they are
/// is in the skill that names it, so the skills beside it that do are listed with it, and whether
/// the file has the size their counts give.
fn bin_info(file: &str, as_json: bool) -> Result<ExitCode, ossa::Error> {
    let bytes = read(file)?;
    let floats: Vec<f32> = (bytes.chunks_exact(4))
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let range = value_range(floats.iter().copied());
    let stem = stem_of(file, ".bin");
    let readers = skills_reading(&dir_of(file), &stem);
    let size = bytes.len() as u64;
    let need = |s: &SkillSummary| ossa::format::skill_bin::size_of(s.translations, s.rotations);

    let mut out = std::io::stdout().lock();
    if as_json {
        let skills = readers_json(&readers, |skill, json| {
            json["bytes_needed"] = Value::from(need(skill));
        });
        let json = json!({
            "file": file,
            "format": "Sims skill numbers (.bin)",
            "bytes": size,
            "min": range.map(|r| num(r.0)),
            "max": range.map(|r| num(r.1)),
            "skills": skills,
        });
        say!(out, "{json:#}");
        return Ok(ExitCode::SUCCESS);
    }
    say!(
        out,
        "{file}: Sims skill numbers (the 1998 prototype's uncompressed CFP)"
    );
    say!(out, "  {size} bytes, {} floats", floats.len());
    if let Some((lo, hi)) = range {
        say!(out, "  values from {lo} to {hi}");
    }
    say_readers(&mut out, &readers, &format!("{stem}.bin"), |skill| {
        if need(skill) == size {
            "exactly its size".to_owned()
        } else {
            format!("{} bytes, but the file holds {size}", need(skill))
        }
    });
    Ok(ExitCode::SUCCESS)
}

/// The skills of the character files (`.cmx`, `.bcf`) in `dir` whose animation is `stem`
/// (ASCII case ignored), in file name order. Files that do not parse are passed over: they are
/// not what is being described.
fn skills_reading(dir: &Path, stem: &str) -> Vec<(PathBuf, SkillSummary)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().to_ascii_lowercase();
            (name.ends_with(".cmx") || name.ends_with(".bcf"))
                && e.metadata()
                    .is_ok_and(|m| m.is_file() && m.len() <= MAX_SKILL_FILE_BYTES)
        })
        .map(|e| e.path())
        .collect();
    files.sort();
    let mut found = Vec::new();
    for path in files {
        let Ok(character) = std::fs::read(&path).map(|b| ossa::cmx::parse(&b)) else {
            continue;
        };
        let Ok(character) = character else {
            continue;
        };
        for skill in &character.skills {
            if skill
                .animation
                .as_bytes()
                .eq_ignore_ascii_case(stem.as_bytes())
            {
                let prototype = character.version == Some(200);
                found.push((path.clone(), SkillSummary::new(skill, dir, prototype)));
            }
        }
    }
    found
}
