//! Saving as `ossa convert` saves, through the library's [`ossa::convert`] steps: the options
//! that change what the model holds first (influences capped, MM2's rest pose baked), then the
//! savers' optimisations for the formats whose specifications ask for them, unless `keepOrder`.

use ossa::convert::{ConvertOptions, OutputFile, optimizes};
use ossa::{Error, Format, Model};

use crate::session::SaveSettings;

/// The library's options of the page's.
pub fn options(settings: &SaveSettings) -> ConvertOptions {
    ConvertOptions {
        max_influences: settings.max_influences,
        keep_order: settings.keep_order,
        skin_order: settings.skin_order,
        bake_scale: settings.bake_scale,
    }
}

/// `model` saved as `target` into the file `name`, then the files written beside it (a Sims
/// character's skills' CFPs); and what changed on the way, in `ossa convert`'s words.
pub fn save(
    model: &Model,
    target: Format,
    settings: &SaveSettings,
    name: String,
) -> Result<(Vec<OutputFile>, Vec<String>), Error> {
    let optimized = optimizes(target);
    if !optimized && target != Format::Iqm && settings.max_influences > 0 {
        return Err(Error::invalid_argument(format!(
            "maxInfluences is for glTF, DPM, SKM, SKP, DMF, MM2 and IQM output, not {}",
            target.name()
        )));
    }
    if !optimized && settings.keep_order {
        return Err(Error::invalid_argument(format!(
            "keepOrder is for DPM, SKM, SKP, DMF and MM2 output, which are optimised otherwise; \
             {} is written in the model's order",
            target.name()
        )));
    }
    let options = options(settings);
    // Targets the savers optimise take the skin order with their other orders (after them);
    // the others take it here, and it is said last, as `ossa convert` says it.
    let mut skin_note = None;
    let mut ordered = None;
    let optimizes = optimized && !settings.keep_order;
    if settings.skin_order && !optimizes {
        let (model, note) = ossa::convert::skin_ordered(model)?;
        ordered = Some(model);
        skin_note = Some(note);
    }
    let model = ordered.as_ref().unwrap_or(model);
    let (prepared, mut changes) = ossa::convert::prepare(model, target, &options)?;
    let model = prepared.as_ref().unwrap_or(model);
    let mut beside = Vec::new();
    let (bytes, optimized) = if let Format::SimsCmx | Format::SimsBcf = target {
        // A character file's skills keep their numbers beside it, in CFPs, as `ossa convert`
        // writes them.
        let saved = ossa::cmx::write_with_skills(model, target == Format::SimsBcf)?;
        let names: Vec<&str> = saved.cfps.iter().map(|(n, _)| n.as_str()).collect();
        let said = ossa::convert::describe_cfps(&names);
        beside.extend((saved.cfps.into_iter()).map(|(name, bytes)| OutputFile { name, bytes }));
        (saved.bytes, said)
    } else {
        ossa::convert::save(model, target, &options)?
    };
    changes.extend(optimized);
    changes.extend(skin_note);
    let mut files = vec![OutputFile { name, bytes }];
    files.append(&mut beside);
    Ok((files, changes))
}
