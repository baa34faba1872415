//! The steps `ossa convert` takes between loading a model and writing it: the options that
//! change what the model holds (influences capped, MM2's rest pose baked, vertices in skin
//! order), then the savers' optimisations for the formats whose documents ask for them. Every
//! front end (the CLI, the WebAssembly package) converts through these, so that a model comes out
//! alike and what changed is said in the same words.

use crate::error::Result;
use crate::format::Format;
use crate::model::{BONE_ATTACHMENT, Bone, Model};
use crate::optimize::{OPTIMIZE_ALL, OPTIMIZE_SKIN_ORDER, OptimizeReport};

/// What a conversion may change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvertOptions {
    /// Keep each vertex's N strongest influences, scaled back to its whole weight (0: all).
    pub max_influences: usize,
    /// Write the model in its own order into the formats otherwise optimised.
    pub keep_order: bool,
    /// Number each mesh's vertices by influence set ([`OPTIMIZE_SKIN_ORDER`]).
    pub skin_order: bool,
    /// MM2: move rest-pose rotations and scales into the vertices ([`crate::mm2::bake_rest_pose`]).
    pub bake_scale: bool,
}

/// Whether saving as `format` optimises: bones no vertex uses removed, triangles ordered for
/// the vertex cache, vertices and bones numbered by first use, as the formats' documents ask of
/// a saver. SKP and `.skel` are the skeletons of SKM and `.mod` meshes, and are optimised alike
/// so that the two files of one input still fit together.
pub fn optimizes(format: Format) -> bool {
    matches!(
        format,
        Format::Dpm
            | Format::Skm
            | Format::Skp
            | Format::Dmf
            | Format::DmfJson
            | Format::Mm2Skel
            | Format::Mm2Mod
    )
}

/// The model with its vertices in skin order, and `skin order: N vertices renumbered`. Targets
/// that optimise take the skin order with their other orders instead ([`save`]).
pub fn skin_ordered(model: &Model) -> Result<(Model, String)> {
    let (ordered, report) = model.optimized(OPTIMIZE_SKIN_ORDER)?;
    let line = format!("skin order: {} vertices renumbered", report.vertices_moved);
    Ok((ordered, line))
}

/// The model with the options that change what it holds applied, influences capped, then the
/// rest pose baked (None: nothing to apply); and what each step changed, as `ossa convert`
/// prints it.
pub fn prepare(
    model: &Model,
    target: Format,
    options: &ConvertOptions,
) -> Result<(Option<Model>, Vec<String>)> {
    let mut changes = Vec::new();
    let mut changed: Option<Model> = None;
    if options.max_influences > 0 {
        let (capped, report) = model.with_max_influences(options.max_influences)?;
        if report.vertices > 0 {
            changes.push(report.describe());
        }
        changed = Some(capped);
    }
    if options.bake_scale {
        let now = changed.as_ref().unwrap_or(model);
        let (baked, report) = crate::format::mm2::bake_rest_pose(now)?;
        if report.bones > 0 {
            let bones = if report.bones == 1 { "bone" } else { "bones" };
            changes.push(format!(
                "rest pose baked: {} {bones} rotated or scaled at rest, now offsets (the \
                 skinned mesh is unchanged)",
                report.bones
            ));
        }
        changed = Some(baked);
    }
    // MM2 keeps its motions in files of their own: a .skel is the rest pose alone.
    let frames = changed.as_ref().unwrap_or(model).frames().len();
    if target == Format::Mm2Skel && frames > 1 {
        let more = frames - 1;
        let noun = if more == 1 { "frame" } else { "frames" };
        changes.push(format!(
            "{more} {noun} after the first not written (a .skel holds the rest pose)"
        ));
    }
    Ok((changed, changes))
}

/// `model` saved as `target`, optimised first where [`optimizes`] says so (unless
/// `keep_order`), and what optimising changed.
pub fn save(
    model: &Model,
    target: Format,
    options: &ConvertOptions,
) -> Result<(Vec<u8>, Option<String>)> {
    if !optimizes(target) || options.keep_order {
        return Ok((model.save(target)?, None));
    }
    let tagged = tags_as_attachments(model)?;
    let model = tagged.as_ref().unwrap_or(model);
    let skin = if options.skin_order {
        OPTIMIZE_SKIN_ORDER
    } else {
        0
    };
    let (optimized, report) = model.optimized(OPTIMIZE_ALL | skin)?;
    match optimized.save(target) {
        Ok(bytes) => Ok((bytes, describe_optimized(&report, target))),
        // What does not fit is named in the input's numbering of bones, meshes and vertices,
        // which the model before optimising has.
        Err(e) => Err(model.save(target).err().unwrap_or(e)),
    }
}

/// A model file's name without its directories and extension (`a/b/walker.cmx.bcf` ->
/// `walker`), which converted files are named after.
pub fn file_stem(path: &str) -> &str {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let bcf = ".cmx.bcf";
    let stem_len = if name.len() > bcf.len()
        && name
            .get(name.len() - bcf.len()..)
            .is_some_and(|e| e.eq_ignore_ascii_case(bcf))
    {
        name.len() - bcf.len()
    } else {
        name.rfind('.').filter(|&dot| dot > 0).unwrap_or(name.len())
    };
    name.get(..stem_len).unwrap_or(name)
}

/// `2 skills, their numbers in a2o-walk.cfp and a2o-idle.cfp`: what a Sims character file
/// written with its skills has beside it (None for no CFP).
pub fn describe_cfps(names: &[&str]) -> Option<String> {
    match names {
        [] => None,
        [one] => Some(format!("1 skill, its numbers in {one}")),
        _ => {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            Some(format!(
                "{} skills, their numbers in {}",
                names.len(),
                list(&names)
            ))
        }
    }
}

/// One file of a conversion's output: its name, in the directory the main output goes to, and
/// its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// What [`engine_files`] made.
#[derive(Clone, Debug, Default)]
pub struct EngineOutput {
    /// The IQM first, then its sidecars.
    pub files: Vec<OutputFile>,
    /// `IQM for DarkPlaces (Xonotic), 1234 bytes; x.iqm.framegroups (12 scenes); ...`: the
    /// files, as `ossa convert` prints them.
    pub line: String,
    /// What was changed to fit the engine.
    pub notes: Vec<String>,
    /// What the engine gets wrong in the written IQM (no refusals: those are errors).
    pub findings: Vec<crate::iqm::Finding>,
}

/// `model` written as the IQM `iqm_name` that `how.engine` loads, with the sidecars it reads
/// beside it: `NAME.framegroups` (DarkPlaces' syntax, which FTE reads too), `animation.cfg` for
/// a qfusion or Warfork player model, and for DarkPlaces and FTE one `NAME_K.skin` per variant
/// of `skins` (per variant, per mesh of the model, the texture it names; None for a mesh the
/// variant leaves alone), naming the meshes as the IQM does. Errors as
/// [`crate::iqm::write_for_engine`]'s, each naming the engine's rule.
pub fn engine_files(
    model: &Model,
    iqm_name: &str,
    how: &crate::iqm::EngineWrite,
    skins: &[Vec<Option<String>>],
) -> Result<EngineOutput> {
    use crate::iqm::Engine;
    let written = crate::iqm::write_for_engine(model, how)?;
    let mut line = match how.engine {
        Some(engine) => format!("IQM for {}, {} bytes", engine.title(), written.iqm.len()),
        None => format!("IQM, {} bytes", written.iqm.len()),
    };
    let mut files = vec![OutputFile {
        name: iqm_name.to_owned(),
        bytes: written.iqm,
    }];
    if let Some(text) = written.framegroups {
        let name = format!("{iqm_name}.framegroups");
        let n = text.lines().count();
        let scenes = if n == 1 { "scene" } else { "scenes" };
        line.push_str(&format!("; {name} ({n} {scenes})"));
        files.push(OutputFile {
            name,
            bytes: text.into_bytes(),
        });
    }
    if let Some(text) = written.animation_cfg {
        let name = crate::iqm::engines::ANIMATION_CFG;
        let n = (text.lines())
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .count();
        line.push_str(&format!("; {name} ({n} anims)"));
        files.push(OutputFile {
            name: name.to_owned(),
            bytes: text.into_bytes(),
        });
    }
    // qfusion and Warfork read their skins from the player's `.skin` files of another syntax.
    if !matches!(how.engine, Some(Engine::Qfusion | Engine::Warfork)) && !skins.is_empty() {
        let mut names = Vec::new();
        for (k, variant) in skins.iter().enumerate() {
            let mut text = String::new();
            for (mesh, texture) in model.meshes().iter().zip(variant) {
                if let Some(t) = texture {
                    let mesh = crate::iqm::written_mesh_name(mesh);
                    text.push_str(&format!("{mesh},{t}\n"));
                }
            }
            let name = format!("{iqm_name}_{k}.skin");
            names.push(name.clone());
            files.push(OutputFile {
                name,
                bytes: text.into_bytes(),
            });
        }
        let n = names.len();
        let noun = if n == 1 { "file" } else { "files" };
        line.push_str(&format!("; {n} .skin {noun} ({})", names.join(", ")));
    }
    Ok(EngineOutput {
        files,
        line,
        notes: written.notes,
        findings: written.findings,
    })
}

/// The model with every bone named `tag_...` flagged as an attachment, so that removing unused
/// bones keeps it: games find attachment points by name (DarkPlaces' `gettagindex`, MD3's tags),
/// and the files rarely set the flag (Xonotic's spiderbot sets it on none of its five `tag_`
/// bones). None: no bone to flag.
fn tags_as_attachments(model: &Model) -> Result<Option<Model>> {
    let is_tag = |b: &Bone| {
        b.flags & BONE_ATTACHMENT == 0
            && b.name.as_bytes().len() > 4
            && b.name.as_bytes()[..4].eq_ignore_ascii_case(b"tag_")
    };
    if !model.bones().iter().any(is_tag) {
        return Ok(None);
    }
    let mut parts = model.to_parts();
    for bone in &mut parts.bones {
        if is_tag(bone) {
            bone.flags |= BONE_ATTACHMENT;
        }
    }
    Model::from_parts(parts).map(Some)
}

/// `optimised: 3 unused bones removed, 12 bones, 840 vertices and 1210 triangles renumbered,
/// vertex cache misses 1.21 -> 0.68 a triangle`; None when nothing changed.
/// A skeleton's file (SKP, `.skel`) leaves the vertices and triangles out.
fn describe_optimized(r: &OptimizeReport, format: Format) -> Option<String> {
    let meshes = !matches!(format, Format::Skp | Format::Mm2Skel);
    let mut parts = Vec::new();
    let removed = r.bones_before.saturating_sub(r.bones_after);
    if removed > 0 {
        let bones = if removed == 1 { "bone" } else { "bones" };
        parts.push(format!("{removed} unused {bones} removed"));
    }
    let moved: Vec<String> = [
        (r.bones_moved, "bone", "bones"),
        (r.vertices_moved, "vertex", "vertices"),
        (r.triangles_moved, "triangle", "triangles"),
    ]
    .iter()
    .take(if meshes { 3 } else { 1 })
    .filter(|(n, _, _)| *n > 0)
    .map(|&(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
    .collect();
    if !moved.is_empty() {
        parts.push(format!("{} renumbered", list(&moved)));
    }
    if parts.is_empty() {
        return None;
    }
    if meshes && r.triangles_moved > 0 {
        parts.push(format!(
            "vertex cache misses {:.2} -> {:.2} a triangle",
            r.acmr_before, r.acmr_after
        ));
    }
    Some(format!("optimised: {}", parts.join(", ")))
}

/// `a`, `a and b`, `a, b and c`.
fn list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_lose_directories_and_extensions() {
        assert_eq!(file_stem("a/b/walker.cmx.bcf"), "walker");
        assert_eq!(file_stem("B001FAFIT_01.CMX.BCF"), "B001FAFIT_01");
        assert_eq!(file_stem("dir\\xon_zombie.dpm"), "xon_zombie");
        assert_eq!(file_stem("tris.iqm"), "tris");
        assert_eq!(file_stem(".hidden"), ".hidden");
        assert_eq!(file_stem("noext"), "noext");
        assert_eq!(file_stem("a.cmx.bcf/x.skn"), "x");
    }

    #[test]
    fn lists_read_as_english() {
        let items = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(list(&items(&[])), "");
        assert_eq!(list(&items(&["a"])), "a");
        assert_eq!(list(&items(&["a", "b"])), "a and b");
        assert_eq!(list(&items(&["a", "b", "c"])), "a, b and c");
    }

    #[test]
    fn what_optimising_changed_is_said_in_convert_words() {
        let report = OptimizeReport {
            bones_before: 20,
            bones_after: 17,
            triangles_moved: 1871,
            vertices_moved: 1416,
            bones_moved: 1,
            acmr_before: 1.021,
            acmr_after: 0.838,
        };
        assert_eq!(
            describe_optimized(&report, Format::Dpm).as_deref(),
            Some(
                "optimised: 3 unused bones removed, 1 bone, 1416 vertices and 1871 triangles \
                 renumbered, vertex cache misses 1.02 -> 0.84 a triangle"
            )
        );
        // A skeleton's file has no vertices or triangles to speak of.
        assert_eq!(
            describe_optimized(&report, Format::Skp).as_deref(),
            Some("optimised: 3 unused bones removed, 1 bone renumbered")
        );
        assert_eq!(
            describe_optimized(&OptimizeReport::default(), Format::Dpm),
            None
        );
    }

    #[test]
    fn only_the_formats_whose_documents_ask_are_optimised() {
        for f in [
            Format::Dpm,
            Format::Skm,
            Format::Skp,
            Format::Dmf,
            Format::Mm2Mod,
        ] {
            assert!(optimizes(f), "{f:?}");
        }
        for f in [Format::Iqm, Format::Glb, Format::SimsCmx, Format::SimsSkn] {
            assert!(!optimizes(f), "{f:?}");
        }
    }
}
