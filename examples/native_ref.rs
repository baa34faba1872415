//! The native side of the WebAssembly package's tests (`web/test/`): a model loaded by the library built for this
//! machine from the OS filesystem (its own route for sidecars, not the package's in-memory
//! files), posed and skinned with the machine's fastest kernel, and drawn; printed as JSON for
//! `test/*.test.mjs` to hold the WebAssembly build against.
//!
//! native_ref DIR MODEL [--suit NAME] [--skills FILE]... [--anims FILE]... [--skeleton FILE]
//!            [--pose SCENE:SECONDS]... [--frame N]... [--render WIDTHxHEIGHT:OUT.rgba]
//!            [--bench ROUNDS]
//!
//! Paths are relative to DIR, which is all the model may read. `--render` draws the first pose
//! (frame 0 without one) as `ossa render` does, textures found beside the files, into raw RGBA.
//! `--bench` times, over ROUNDS rounds each, loading the model file (with its sidecars) and
//! skinning every mesh at the first pose with the portable kernel, and prints the medians in
//! nanoseconds (`bench.mjs` holds the WebAssembly build's times against them).

use std::path::{Path, PathBuf};

use ossa::render::RenderOptions;
use ossa::{FrameBlend, LoadOptions, Mat3x4, Model, Strided};

struct Args {
    dir: PathBuf,
    model: String,
    suit: Option<String>,
    skills: Vec<String>,
    anims: Vec<String>,
    skeleton: Option<String>,
    poses: Vec<Pose>,
    render: Option<(u32, u32, PathBuf)>,
    bench: Option<usize>,
}

enum Pose {
    Scene(usize, f64),
    Frame(u32),
}

fn args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let usage = || "usage: native_ref DIR MODEL [options]".to_owned();
    let mut a = Args {
        dir: PathBuf::from(it.next().ok_or_else(usage)?),
        model: it.next().ok_or_else(usage)?,
        suit: None,
        skills: Vec::new(),
        anims: Vec::new(),
        skeleton: None,
        poses: Vec::new(),
        render: None,
        bench: None,
    };
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--suit" => a.suit = Some(value),
            "--skills" => a.skills.push(value),
            "--anims" => a.anims.push(value),
            "--skeleton" => a.skeleton = Some(value),
            "--pose" => {
                let (s, t) = value.split_once(':').ok_or("--pose needs SCENE:SECONDS")?;
                let scene = s.parse().map_err(|_| "--pose: a scene number")?;
                let time = t.parse().map_err(|_| "--pose: seconds")?;
                a.poses.push(Pose::Scene(scene, time));
            }
            "--frame" => a
                .poses
                .push(Pose::Frame(value.parse().map_err(|_| "--frame: N")?)),
            "--render" => {
                let (size, out) = value.split_once(':').ok_or("--render WxH:OUT")?;
                let (w, h) = size.split_once('x').ok_or("--render WxH:OUT")?;
                let w = w.parse().map_err(|_| "--render: width")?;
                let h = h.parse().map_err(|_| "--render: height")?;
                a.render = Some((w, h, PathBuf::from(out)));
            }
            "--bench" => a.bench = Some(value.parse().map_err(|_| "--bench: ROUNDS")?),
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(a)
}

/// Files of the directory are read inside it, sidecars too.
fn options(dir: &Path) -> LoadOptions<'static> {
    LoadOptions {
        base_dir: Some(dir.to_path_buf()),
        ..LoadOptions::default()
    }
}

/// The file of `dir` named one of `names`, ASCII case ignored (the game ran on Windows).
fn find(dir: &Path, names: &[String]) -> Option<String> {
    let mut entries: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    names.iter().find_map(|n| {
        (entries.iter())
            .find(|e| e.eq_ignore_ascii_case(n))
            .cloned()
    })
}

/// The character wearing `suit`, its meshes found in `dir`; and each mesh's file.
fn dress(dir: &Path, model: &Model, suit: &str) -> ossa::Result<(Model, Vec<Option<PathBuf>>)> {
    let has = |m: &Model| {
        m.suits()
            .iter()
            .any(|s| s.name.to_string().eq_ignore_ascii_case(suit))
    };
    let suit_file = if has(model) {
        None
    } else {
        let names = [".cmx", ".cmx.bcf", ".bcf"].map(|e| format!("{suit}{e}"));
        let found = find(dir, &names).ok_or_else(|| ossa::Error::not_found("no suit file"))?;
        Some(Model::load_file(dir.join(found), &options(dir))?)
    };
    let suits = suit_file.as_ref().unwrap_or(model).suits();
    let character = ossa::assemble::with_suits(model, suits)?;
    let mut files = Vec::new();
    let dressed = ossa::assemble::dress_parts(&character, suit, &mut |mesh: &str| {
        let names = [".skn", ".bmf", ".msh"].map(|e| format!("{mesh}{e}"));
        let found = find(dir, &names).ok_or_else(|| ossa::Error::not_found(mesh.to_owned()))?;
        files.push(dir.join(&found));
        Model::load_file(dir.join(found), &options(dir))
    })?;
    let parts = dressed
        .mesh_skins
        .iter()
        .map(|&k| files.get(k).cloned())
        .collect();
    Ok((dressed.model, parts))
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn names<'a>(items: impl Iterator<Item = String> + 'a) -> String {
    let items: Vec<String> = items.map(|s| json_str(&s)).collect();
    format!("[{}]", items.join(","))
}

fn run() -> Result<(), String> {
    let a = args()?;
    let fail = |e: ossa::Error| format!("{}: {e}", e.code().name());
    let path = a.dir.join(&a.model);
    let opts = options(&a.dir);
    let mut model = Model::load_file(&path, &opts).map_err(fail)?;
    let mut parts = Vec::new();
    if let Some(suit) = &a.suit {
        (model, parts) = dress(&a.dir, &model, suit).map_err(fail)?;
    }
    if let Some(skeleton) = &a.skeleton {
        let skeleton = Model::load_file(a.dir.join(skeleton), &opts).map_err(fail)?;
        model = Model::bind(&model, &skeleton).map_err(fail)?;
    }
    for skills in &a.skills {
        model = model
            .with_skills_file(a.dir.join(skills), &opts)
            .map_err(fail)?;
    }
    for anims in &a.anims {
        let anims = Model::load_file(a.dir.join(anims), &opts).map_err(fail)?;
        model = model.with_animations(&anims).map_err(fail)?;
    }
    let mut poses_json = Vec::new();
    let mut first_pose = None;
    for pose in &a.poses {
        let blends: Vec<FrameBlend> = match *pose {
            Pose::Scene(scene, time) => {
                let (b, n) = model.animation_blend(scene, time).map_err(fail)?;
                b[..n].to_vec()
            }
            Pose::Frame(frame) => vec![FrameBlend { frame, weight: 1.0 }],
        };
        let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
        model.pose_frames(&blends, None, &mut bones).map_err(fail)?;
        let mut meshes = Vec::new();
        for (m, mesh) in model.meshes().iter().enumerate() {
            let n = mesh.vertex_count();
            let mut positions = vec![0.0f32; n * 3];
            let mut normals = vec![0.0f32; n * 3];
            let mut target = Strided::new(&mut positions, 3)
                .and_then(|t| t.with_normals(&mut normals, 3))
                .map_err(fail)?;
            model
                .skin_mesh(m, &bones, 0, n, ossa::SKIN_NORMALIZE, &mut target)
                .map_err(fail)?;
            let floats = |v: &[f32]| {
                let s: Vec<String> = v.iter().map(|f| f.to_string()).collect();
                format!("[{}]", s.join(","))
            };
            meshes.push(format!(
                "{{\"positions\":{},\"normals\":{}}}",
                floats(&positions),
                floats(&normals)
            ));
        }
        let flat: Vec<String> = bones
            .iter()
            .flat_map(|b| b.m)
            .map(|f| f.to_string())
            .collect();
        poses_json.push(format!(
            "{{\"bones\":[{}],\"meshes\":[{}]}}",
            flat.join(","),
            meshes.join(",")
        ));
        first_pose.get_or_insert(bones);
    }
    if let Some((width, height, out)) = &a.render {
        let bones = match first_pose.clone() {
            Some(b) => b,
            None => {
                let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
                let rest = [FrameBlend {
                    frame: 0,
                    weight: 1.0,
                }];
                model.pose_frames(&rest, None, &mut bones).map_err(fail)?;
                bones
            }
        };
        let found = ossa::textures::find_textures_beside_parts(&model, &path, None, &parts, 0)
            .map_err(fail)?;
        let decoded = ossa::render::decode_textures(&model, &found);
        let look = RenderOptions {
            width: *width,
            height: *height,
            ..RenderOptions::default()
        };
        let mut rgba = vec![0u8; *width as usize * *height as usize * 4];
        ossa::render::render(&model, &bones, &decoded.views(), &look, &mut rgba).map_err(fail)?;
        std::fs::write(out, &rgba).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    if let Some(rounds) = a.bench {
        let bones = first_pose.clone().unwrap_or_else(|| {
            let mut b = vec![Mat3x4::IDENTITY; model.bones().len()];
            let rest = [FrameBlend {
                frame: 0,
                weight: 1.0,
            }];
            let _ = model.pose_frames(&rest, None, &mut b);
            b
        });
        let (load, skin) = bench(&path, &opts, &model, &bones, rounds).map_err(fail)?;
        println!("{{\"load_ns\":{load},\"skin_ns\":{skin}}}");
        return Ok(());
    }
    let i = model.info();
    println!(
        "{{\"format\":{},\"counts\":{{\"bones\":{},\"meshes\":{},\"vertices\":{},\"triangles\":{},\"frames\":{},\"scenes\":{}}},\"bounds\":{{\"min\":[{},{},{}],\"max\":[{},{},{}]}},\"bones\":{},\"meshes\":{},\"scenes\":{},\"warnings\":{},\"poses\":[{}]}}",
        json_str(i.format.name()),
        i.bone_count,
        i.mesh_count,
        i.vertex_count,
        i.triangle_count,
        i.frame_count,
        i.animation_count,
        i.mins[0],
        i.mins[1],
        i.mins[2],
        i.maxs[0],
        i.maxs[1],
        i.maxs[2],
        names(model.bones().iter().map(|b| b.name.to_string())),
        names(model.meshes().iter().map(|m| m.name().to_string())),
        names(model.animations().iter().map(|s| s.name.to_string())),
        names(model.warnings().iter().map(|w| w.to_string())),
        poses_json.join(",")
    );
    Ok(())
}

/// The median times of loading `path` and of skinning every mesh of `model` at `bones` with the
/// portable kernel, in nanoseconds.
fn bench(
    path: &Path,
    opts: &LoadOptions,
    model: &Model,
    bones: &[Mat3x4],
    rounds: usize,
) -> ossa::Result<(u128, u128)> {
    let median = |mut v: Vec<u128>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    let mut loads = Vec::new();
    for _ in 0..rounds.max(1) {
        let t = std::time::Instant::now();
        std::hint::black_box(Model::load_file(path, opts)?);
        loads.push(t.elapsed().as_nanos());
    }
    let mut buffers: Vec<(Vec<f32>, Vec<f32>)> = (model.meshes().iter())
        .map(|m| {
            (
                vec![0.0; m.vertex_count() * 3],
                vec![0.0; m.vertex_count() * 3],
            )
        })
        .collect();
    let mut skins = Vec::new();
    for _ in 0..rounds.max(1) {
        let t = std::time::Instant::now();
        for (m, (p, n)) in buffers.iter_mut().enumerate() {
            let count = p.len() / 3;
            let mut target = Strided::new(p, 3)?.with_normals(n, 3)?;
            model.skin_mesh_with(
                ossa::Kernel::Portable,
                m,
                bones,
                0,
                count,
                ossa::SKIN_NORMALIZE,
                &mut target,
            )?;
        }
        skins.push(t.elapsed().as_nanos());
        std::hint::black_box(&buffers);
    }
    Ok((median(loads), median(skins)))
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("native_ref: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
